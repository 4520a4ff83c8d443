"""The tests' instance-group builder (tests/support/groups.py): what each default gives and
that a call's props win, ``None`` included."""

from __future__ import annotations

from hyperpod_constructs import DeepHealthCheck, HyperPodInstanceType, InstanceGroup
from tests.support.groups import BOTH_CHECKS, CPU, GPU, Groups, controller_spec


def test_the_defaults_are_a_gpu_compute_group_with_both_checks() -> None:
    groups = Groups()
    controller, compute = groups.controller(), groups.compute()
    assert (controller.name, controller.instance_type) == ("controller", CPU)
    assert (compute.name, compute.instance_type, compute.instance_count) == ("gpu", GPU, 4)
    assert compute.partition == "gpu"
    assert tuple(compute.deep_health_checks or ()) == BOTH_CHECKS
    assert compute.min_instance_count is None
    assert groups.login().instance_type == CPU


def test_positional_counts_and_props_override_the_defaults() -> None:
    cpu = HyperPodInstanceType.ML_C5_4XLARGE
    groups = Groups(compute_type=cpu, instance_count=2, partition=None, deep_health_checks=())
    gated = groups.compute("a", 4, 2)
    assert (gated.instance_count, gated.min_instance_count, gated.partition) == (4, 2, "a")
    assert not gated.deep_health_checks
    assert groups.compute("b").instance_count == 2
    stress = (DeepHealthCheck.INSTANCE_STRESS,)
    assert tuple(Groups().compute(deep_health_checks=stress).deep_health_checks or ()) == stress
    # instance_count=None is passed (the group is sized from min_accelerators), not the default.
    sized = Groups().compute(instance_count=None, min_accelerators=16)
    direct = InstanceGroup.compute(
        "gpu", instance_type=GPU, instance_count=None, min_accelerators=16, partition="gpu"
    )
    assert sized.instance_count == direct.instance_count != 4


def test_the_simulated_controller_is_one_instance() -> None:
    spec = controller_spec()
    assert (spec.name, spec.node_type, spec.instance_type) == (
        "controller",
        "Controller",
        "ml.m5.12xlarge",
    )
