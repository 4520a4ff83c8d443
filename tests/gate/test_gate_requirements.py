"""The gate waits for what the template really carries (escape
hatches and aspects included), and it works on an imported cluster given its requirements."""

from __future__ import annotations

import json
from typing import Any

import jsii
import pytest
from aws_cdk import Aspects, IAspect, Stack
from constructs import IConstruct

from hyperpod_constructs import (
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    MinCountGate,
    MinCountGateOptions,
    NodeProvisioningMode,
)
from hyperpod_constructs._runtime.hyperpod_gate.contract import RESOURCE_TYPE
from hyperpod_constructs.gate import Requirement
from tests.conftest import new_app
from tests.support import gate_defaults
from tests.support.world import gate_of_template

CLUSTER_ARN = "arn:aws:sagemaker:us-east-1:123456789012:cluster/abcd12345678"


def cluster_stack(
    gpu_min: int = 2, gpu_target: int = 12, cpu_count: int = 4, **props: Any
) -> tuple[Any, Stack, HyperPodSlurmCluster]:
    app = new_app()
    stack = Stack(app, "Train")
    cluster = HyperPodSlurmCluster(
        stack,
        "Cluster",
        cluster_name="train",
        **props,
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=HyperPodInstanceType.ML_M5_XLARGE),
            InstanceGroup.compute(
                "gpu",
                instance_type=HyperPodInstanceType.ML_P5_48XLARGE,
                instance_count=gpu_target,
                min_instance_count=gpu_min,
                partition="gpu",
            ),
            InstanceGroup.compute(
                "cpu",
                instance_type=HyperPodInstanceType.ML_C5_4XLARGE,
                instance_count=cpu_count,
                partition="cpu",
            ),
        ],
    )
    return app, stack, cluster


def synth_error(app: Any) -> str:
    with pytest.raises(Exception) as caught:
        app.synth()
    return str(caught.value)


def override(cluster: HyperPodSlurmCluster, path: str, value: Any) -> None:
    resource = cluster.node.default_child
    assert resource is not None
    resource.add_property_override(path, value)  # type: ignore[attr-defined]


def test_an_escape_hatch_minimum_the_gate_does_not_wait_for_is_refused() -> None:
    """HyperPod would hold gpu for 12, the gate would open at 2."""
    app, _, cluster = cluster_stack()
    override(cluster, "InstanceGroups.1.MinInstanceCount", 12)
    message = synth_error(app)
    assert "Train/Cluster" in message
    assert (
        "instance group gpu: MinInstanceCount is 12 in the template, but the readiness gate "
        "waits for 2"
    ) in message


def test_an_aspect_that_gates_another_group_is_refused() -> None:
    app, stack, _ = cluster_stack()

    @jsii.implements(IAspect)
    class GateCpu:
        def visit(self, node: IConstruct) -> None:
            if node.node.path == "Train/Cluster/Resource":
                node.add_property_override("InstanceGroups.2.MinInstanceCount", 4)  # type: ignore[attr-defined]

    Aspects.of(stack).add(GateCpu())
    message = synth_error(app)
    assert (
        "instance group cpu: MinInstanceCount is 4 in the template, but the readiness gate "
        "does not wait for the group"
    ) in message


@pytest.mark.parametrize(
    ("path", "value", "expected"),
    [
        ("InstanceGroups.1.InstanceCount", 16, "InstanceCount is 16 in the template"),
        ("InstanceGroups.1.InstanceGroupName", "gpu-a", "template's InstanceGroups no longer"),
        ("ClusterName", "other", "ClusterName is 'other' in the template"),
    ],
)
def test_other_overrides_of_gated_values_are_refused(path: str, value: Any, expected: str) -> None:
    app, _, cluster = cluster_stack()
    override(cluster, path, value)
    assert expected in synth_error(app)


def test_overrides_that_agree_with_the_gate_or_touch_other_fields_synthesize() -> None:
    app, _, cluster = cluster_stack()
    override(cluster, "InstanceGroups.1.MinInstanceCount", 2)
    override(cluster, "InstanceGroups.1.ThreadsPerCore", 2)
    template = app.synth().get_stack_by_name("Train").template
    (arm,) = [r for r in template["Resources"].values() if r["Type"] == RESOURCE_TYPE]
    assert arm["Properties"]["Requirements"] == [
        {"GroupName": "gpu", "MinCount": "2", "TargetCount": "12"}
    ]


def test_the_wait_declares_what_it_waits_for_where_only_the_deployment_can_change_it() -> None:
    """What the arm function reads back: the wait handle's Metadata (resolved by
    CloudFormation) declares the gate and every value of the handle's fingerprint, so it never
    changes on an existing handle; the arm function's environment declares the options."""
    app, _, _ = cluster_stack()
    template = app.synth().get_stack_by_name("Train").template
    synthesized = gate_of_template(template, topic=False)
    declared = json.loads(synthesized.handle_metadata)["HyperPodMinCountGate"]
    assert declared == {
        "Gate": synthesized.arm_logical_id,
        "Properties": {
            "ClusterName": "train",
            "Requirements": [{"GroupName": "gpu", "MinCount": "2", "TargetCount": "12"}],
            "WaitConditionLogicalId": synthesized.condition_id,
            "WaitHandleLogicalId": synthesized.handle_id,
        },
    }
    assert json.loads(synthesized.arm_env["HYPERPOD_GATE_WAIT_OPTIONS"]) == {
        "TimeoutSeconds": str(gate_defaults.timeout_seconds()),
        "PollIntervalSeconds": str(gate_defaults.poll_seconds()),
        "MetricsNamespace": gate_defaults.metrics_namespace(),
    }
    sent = {k: v for k, v in synthesized.properties.items() if not k.startswith("Service")}
    assert sent == {
        **declared["Properties"],
        **json.loads(synthesized.arm_env["HYPERPOD_GATE_WAIT_OPTIONS"]),
        "StateMachineArn": sent["StateMachineArn"],
    }


# -- item 6: an imported cluster ----------------------------------------------------------


def test_a_gate_on_an_imported_cluster_waits_for_the_requirements_it_is_given() -> None:
    app = new_app()
    stack = Stack(app, "Ops")
    imported = HyperPodSlurmCluster.from_cluster_arn(stack, "Existing", CLUSTER_ARN)
    gate = MinCountGate(stack, "Gate", cluster=imported, options=MinCountGateOptions())
    gate.add_requirement(Requirement("gpu", 8, 16))
    template = app.synth().get_stack_by_name("Ops").template
    synthesized = gate_of_template(template, topic=False)
    assert synthesized.properties["ClusterName"] == CLUSTER_ARN
    assert synthesized.properties["Requirements"] == [
        {"GroupName": "gpu", "MinCount": "8", "TargetCount": "16"}
    ]
    assert synthesized.fast_path_pattern["resources"] == [CLUSTER_ARN]
    (arm,) = [r for r in template["Resources"].values() if r["Type"] == RESOURCE_TYPE]
    assert all("Existing" not in d for d in arm.get("DependsOn", []))


def test_a_gate_on_an_imported_cluster_without_requirements_is_refused_at_synth() -> None:
    app = new_app()
    stack = Stack(app, "Ops")
    imported = HyperPodSlurmCluster.from_cluster_attributes(
        stack, "Existing", cluster_arn=CLUSTER_ARN, cluster_name="train"
    )
    MinCountGate(stack, "Gate", cluster=imported, options=MinCountGateOptions())
    message = synth_error(app)
    assert "MinCountGate Ops/Gate waits for no instance group" in message
    assert "gate.add_requirement(Requirement(" in message


def test_a_standard_mode_minimum_is_one_error_not_a_second_gate_line() -> None:
    """A Standard-mode group given min_instance_count through the typed API: the cluster's
    own HP-MIN-NEEDS-CONTINUOUS, and no gate line about overriding the L1 (the app overrode
    nothing): one problem line."""
    app, _, _ = cluster_stack(
        node_provisioning_mode=NodeProvisioningMode.STANDARD,
        readiness_gate=MinCountGateOptions(),
    )
    message = synth_error(app)
    assert "[HP-MIN-NEEDS-CONTINUOUS]" in message
    assert "overriding the L1" not in message and "MinCountGate" not in message
    lines = [line for line in message.splitlines() if line.strip().startswith("[")]
    errors = [line for line in lines if "[HP-WARN-" not in line]
    assert len(errors) == 1, errors


def test_a_real_override_still_names_the_gate_in_standard_mode() -> None:
    """Only what the overrides changed is the gate's: an overridden target still is."""
    app, _, cluster = cluster_stack()
    override(cluster, "InstanceGroups.1.InstanceCount", 20)
    assert "InstanceCount is 20 in the template, but the readiness gate" in synth_error(app)


def _job_value(gpu_min: int, gpu_target: int = 12, cpu_count: int = 4) -> tuple[str, str]:
    """The README's job pattern: a dependant that takes ``cluster.ready_fingerprint`` as a
    property; its synthesized value and the wait condition's logical id."""
    from aws_cdk import aws_ssm as ssm

    app, stack, cluster = cluster_stack(gpu_min, gpu_target, cpu_count)
    job = ssm.StringParameter(stack, "Job", string_value=cluster.ready_fingerprint)
    job.node.add_dependency(cluster.ready)
    resources = app.synth().get_stack_by_name("Train").template["Resources"]
    (parameter,) = [r for r in resources.values() if r["Type"] == "AWS::SSM::Parameter"]
    (wait,) = [k for k, r in resources.items() if r["Type"] == "AWS::CloudFormation::WaitCondition"]
    assert wait in parameter["DependsOn"]
    return parameter["Properties"]["Value"], wait


def test_the_ready_fingerprint_changes_exactly_with_a_new_wait() -> None:
    """Day 2: a dependant given ``cluster.ready_fingerprint`` gets a new property value (so
    CloudFormation updates it, after the wait) when the gated values change, and keeps it when
    they do not (an ungated group scaled)."""
    first, wait = _job_value(2)
    assert wait.endswith(first) and len(first) == 8
    raised, raised_wait = _job_value(4)
    assert raised != first and raised_wait.endswith(raised)
    assert _job_value(2, cpu_count=8) == (first, wait)
