"""The cluster constructor's steps, each on its own: the table of parameters checked by value,
and the one step that resolves the props (usable values, fallbacks, findings)."""

from __future__ import annotations

import inspect
from typing import Any

from aws_cdk import App, Stack
from constructs import Construct

from hyperpod_constructs import (
    HyperPodSlurmCluster,
    LifecycleScripts,
    MinCountGateOptions,
    NodeProvisioningMode,
    NodeRecovery,
    SlurmLayout,
)
from hyperpod_constructs.cluster import _PARAMETERS, _resolve_props

PARAMETERS = list(inspect.signature(HyperPodSlurmCluster.__init__).parameters)[3:]
"""The constructor's keyword parameters, in order (after self, scope and id)."""


def _given(**changes: Any) -> dict[str, Any]:
    defaults = {
        name: parameter.default
        for name, parameter in inspect.signature(HyperPodSlurmCluster.__init__).parameters.items()
        if name in PARAMETERS
    }
    return {**defaults, **changes}


def _scope() -> Construct:
    return Construct(Stack(App(), "Stack"), "Cluster")


def test_the_table_names_constructor_parameters_once() -> None:
    names = [parameter.name for parameter in _PARAMETERS]
    assert len(names) == len(set(names))
    assert set(names) <= set(PARAMETERS)


def test_defaults_resolve_without_findings() -> None:
    props = _resolve_props(_scope(), _given(cluster_name="train"))
    assert props.findings == ()
    assert props.name == "train"
    assert props.mode is NodeProvisioningMode.CONTINUOUS
    assert props.node_recovery is NodeRecovery.AUTOMATIC
    assert props.gate_enabled
    assert isinstance(props.gate_options, MinCountGateOptions)
    assert props.tags == {}


def test_a_value_of_the_wrong_type_is_a_finding_and_its_fallback_is_used() -> None:
    props = _resolve_props(
        _scope(),
        _given(
            cluster_name="train",
            node_provisioning_mode="CONTINUOUS",
            slurm_layout=None,
            node_recovery="sometimes",
            vpc="vpc-123",
        ),
    )
    assert [f.field.split(" ")[0] for f in props.findings][:4] == [
        "node_provisioning_mode",
        "node_recovery",
        "vpc",
        "slurm_layout",
    ]
    assert all(f.is_error for f in props.findings)
    assert props.mode is NodeProvisioningMode.CONTINUOUS
    assert props.node_recovery is NodeRecovery.AUTOMATIC
    assert props.vpc is None
    assert props.slurm_layout is SlurmLayout.API


def test_props_with_errors_are_not_used() -> None:
    props = _resolve_props(
        _scope(),
        _given(
            cluster_name="train",
            tags={"aws:reserved": "x"},
            lifecycle_scripts=LifecycleScripts.from_s3_uri("https://example.com/x"),
            readiness_gate="fast",
        ),
    )
    assert "HP-TAGS" in {f.rule for f in props.findings}
    assert any(f.field.startswith("lifecycle_scripts") for f in props.findings)
    assert any(f.field.startswith("readiness_gate") for f in props.findings)
    assert props.tags == {}
    assert props.lifecycle_scripts is None
    assert isinstance(props.gate_options, MinCountGateOptions)


def test_the_name_defaults_to_one_from_the_construct_path() -> None:
    props = _resolve_props(_scope(), _given())
    assert props.name.startswith("StackCluster")
    assert len(props.name) <= 63
