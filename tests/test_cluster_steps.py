"""The cluster constructor's steps, each on its own: the props declared once (one dataclass
whose fields are the constructor's keyword parameters, with their checks by value), and the
one step that resolves them (usable values, fallbacks, findings)."""

from __future__ import annotations

import inspect
import re
from dataclasses import MISSING, fields
from typing import Any

import pytest
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
from hyperpod_constructs import cluster as cluster_module
from hyperpod_constructs.cluster import (
    _PARAMETERS,
    _VALUE_CHECK,
    _ClusterProps,
    _resolve_props,
    _ResolvedProps,
)

SIGNATURE = inspect.signature(HyperPodSlurmCluster.__init__)
PARAMETERS = list(SIGNATURE.parameters.values())[3:]
"""The constructor's keyword parameters, in order (after self, scope and id)."""


def _scope() -> Construct:
    return Construct(Stack(App(), "Stack"), "Cluster")


def test_the_signature_is_the_props_fields() -> None:
    """Every keyword parameter is one field of ``_ClusterProps``, in the same order, with the
    same name, annotation and default (and no field is missing from the signature)."""
    assert list(SIGNATURE.parameters)[:3] == ["self", "scope", "id"]
    assert [p.kind for p in PARAMETERS] == [inspect.Parameter.KEYWORD_ONLY] * len(PARAMETERS)
    declared = [(f.name, f.type, f.default) for f in fields(_ClusterProps)]
    assert [(p.name, p.annotation, p.default) for p in PARAMETERS] == declared
    assert [type(p.default) for p in PARAMETERS] == [type(f.default) for f in fields(_ClusterProps)]
    assert all(f.default is not MISSING and f.kw_only for f in fields(_ClusterProps))


def test_every_parameter_has_its_param_entry_in_the_docstring() -> None:
    documented = re.findall(r"^\s*:param (\w+):", HyperPodSlurmCluster.__init__.__doc__ or "", re.M)
    assert documented == ["scope", "id", *(f.name for f in fields(_ClusterProps))]


class _Captured(Exception):
    def __init__(self, given: _ClusterProps) -> None:
        super().__init__("captured")
        self.given = given


def test_the_constructor_passes_every_parameter_to_the_props(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A parameter the constructor forgot to pass would silently take its field's default."""

    def capture(cluster: Construct, given: _ClusterProps) -> _ResolvedProps:
        raise _Captured(given)

    monkeypatch.setattr(cluster_module, "_resolve_props", capture)
    sentinels: dict[str, Any] = {f.name: object() for f in fields(_ClusterProps)}
    with pytest.raises(_Captured) as captured:
        HyperPodSlurmCluster(Stack(App(), "Stack"), "Cluster", **sentinels)
    given = captured.value.given
    assert type(given) is _ClusterProps
    assert [name for name, value in sentinels.items() if getattr(given, name) is not value] == []


def test_the_checked_parameters_are_derived_from_the_fields_and_ranked_once() -> None:
    checked = [f for f in fields(_ClusterProps) if _VALUE_CHECK in f.metadata]
    assert {p.name for p in _PARAMETERS} == {f.name for f in checked}
    assert len(_PARAMETERS) == len(checked)
    ranks = sorted(f.metadata[_VALUE_CHECK].rank for f in checked)
    assert ranks == list(range(1, len(checked) + 1))
    defaults = {f.name: f.default for f in checked}
    assert all(p.fallback is defaults[p.name] for p in _PARAMETERS)


def test_the_value_checks_report_in_their_order() -> None:
    """The report's order of the parameters checked by value alone (each one wrong)."""
    wrong = {parameter.name: 12345 for parameter in _PARAMETERS}
    props = _resolve_props(_scope(), _ClusterProps(cluster_name="train", **wrong))
    assert [f.field.split(" ")[0] for f in props.findings][: len(wrong)] == [
        "node_provisioning_mode",
        "node_recovery",
        "execution_role",
        "vpc",
        "vpc_subnets",
        "security_groups",
        "slurm_config_strategy",
        "accounting_database",
        "instance_groups",
        "slurm_layout",
        "declare_slurm_orchestrator",
        "removal_policy",
    ]
    for parameter in _PARAMETERS:
        assert getattr(props, parameter.name) is parameter.fallback


def test_defaults_resolve_without_findings() -> None:
    props = _resolve_props(_scope(), _ClusterProps(cluster_name="train"))
    assert props.findings == ()
    assert props.name == "train"
    assert props.node_provisioning_mode is NodeProvisioningMode.CONTINUOUS
    assert props.node_recovery is NodeRecovery.AUTOMATIC
    assert props.gate_enabled
    assert isinstance(props.gate_options, MinCountGateOptions)
    assert props.tags == {}


def test_a_value_of_the_wrong_type_is_a_finding_and_its_fallback_is_used() -> None:
    props = _resolve_props(
        _scope(),
        _ClusterProps(
            cluster_name="train",
            node_provisioning_mode="CONTINUOUS",  # type: ignore[arg-type]
            slurm_layout=None,  # type: ignore[arg-type]
            node_recovery="sometimes",
            vpc="vpc-123",  # type: ignore[arg-type]
        ),
    )
    assert [f.field.split(" ")[0] for f in props.findings][:4] == [
        "node_provisioning_mode",
        "node_recovery",
        "vpc",
        "slurm_layout",
    ]
    assert all(f.is_error for f in props.findings)
    assert props.node_provisioning_mode is NodeProvisioningMode.CONTINUOUS
    assert props.node_recovery is NodeRecovery.AUTOMATIC
    assert props.vpc is None
    assert props.slurm_layout is SlurmLayout.API


def test_props_with_errors_are_not_used() -> None:
    props = _resolve_props(
        _scope(),
        _ClusterProps(
            cluster_name="train",
            tags={"aws:reserved": "x"},
            lifecycle_scripts=LifecycleScripts.from_s3_uri("https://example.com/x"),
            readiness_gate="fast",  # type: ignore[arg-type]
        ),
    )
    assert "HP-TAGS" in {f.rule for f in props.findings}
    assert any(f.field.startswith("lifecycle_scripts") for f in props.findings)
    assert any(f.field.startswith("readiness_gate") for f in props.findings)
    assert props.tags == {}
    assert props.lifecycle_scripts is None
    assert isinstance(props.gate_options, MinCountGateOptions)
    assert props.readiness_gate is props.gate_options


def test_a_disabled_gate_is_not_gated_and_its_options_are_not_reported() -> None:
    props = _resolve_props(
        _scope(),
        _ClusterProps(cluster_name="train", readiness_gate=MinCountGateOptions(enabled=False)),
    )
    assert not props.gate_enabled
    assert props.findings == ()


def test_the_name_defaults_to_one_from_the_construct_path() -> None:
    props = _resolve_props(_scope(), _ClusterProps())
    assert props.name.startswith("StackCluster")
    assert len(props.name) <= 63
    assert props.cluster_name is None


def test_the_cluster_reads_its_resolved_props() -> None:
    stack = Stack(App(), "Stack")
    cluster = HyperPodSlurmCluster(stack, "Cluster", cluster_name="train", vpc=None)
    assert isinstance(cluster._props, _ResolvedProps)
    assert cluster.cluster_name == cluster._props.name == "train"
    assert cluster.node_provisioning_mode is cluster._props.node_provisioning_mode
    assert cluster.vpc is None
