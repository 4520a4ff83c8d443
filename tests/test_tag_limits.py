"""Tag values checked with AWS's limits on every resource the library creates: the limits are
those of each resource type's CloudFormation schema (cfn-lint's copy), so an empty value
(``{"team": ""}``, an unset CI variable) is the library's finding (HP-TAGS) naming the type
that refuses it, never aws-cdk-lib's error on the gate's state machine; the policy's
required tags refuse an empty value too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Aspects, Stack, Tags
from cfnlint.schema import PROVIDER_SCHEMA_MANAGER

from hyperpod_constructs import (
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    MinCountGateOptions,
)
from hyperpod_constructs.validation.cluster_rules import TAG_LIMITS, TagLimits
from tests.support.groups import Groups
from tests.support.synth_result import synth

ROOT = Path(__file__).resolve().parent.parent


def _resolve(schema: dict[str, Any], node: Any) -> Any:
    """``node`` with its ``$ref`` (``#/definitions/Tag``) followed."""
    while isinstance(node, dict) and "$ref" in node:
        found: Any = schema
        for part in node["$ref"].lstrip("#/").split("/"):
            found = found[part]
        node = found
    return node


def schema_limits(type_name: str) -> TagLimits | None:
    """The Tags' Key and Value lengths in the type's schema; None: no Tags list with both."""
    schema = dict(PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", type_name).schema)
    tags = _resolve(schema, schema.get("properties", {}).get("Tags"))
    if not isinstance(tags, dict) or tags.get("type") != "array":
        return None
    item = _resolve(schema, tags.get("items", {}))
    key = _resolve(schema, item.get("properties", {}).get("Key", {}))
    value = _resolve(schema, item.get("properties", {}).get("Value", {}))
    bounds = (key.get("minLength"), key.get("maxLength"), value.get("maxLength"))
    if None in bounds:
        return None
    return TagLimits(
        key=(key["minLength"], key["maxLength"]),
        value=(value.get("minLength", 0), value["maxLength"]),
    )


GROUPS = Groups(
    controller_type=HyperPodInstanceType.ML_M5_2XLARGE,
    compute_type=HyperPodInstanceType.ML_C5_4XLARGE,
    instance_count=2,
    partition="cpu",
    deep_health_checks=(),
)


def _cluster(stack: Stack, *, gated: bool = True, **props: Any) -> HyperPodSlurmCluster:
    """A controller and, ``gated``, a compute group with a minimum (so a readiness gate)."""
    groups = [GROUPS.controller()] + ([GROUPS.compute("cpu", 2, 1)] if gated else [])
    return HyperPodSlurmCluster(stack, "Cluster", instance_groups=groups, **props)


def _library_types(tmp_path: Path) -> set[str]:
    """Every resource type a gated cluster with every gate option creates (a real template)."""
    app = App(outdir=str(tmp_path))
    stack = Stack(app, "Types")
    options = MinCountGateOptions(dashboard=True, create_notification_topic=True)
    _cluster(stack, readiness_gate=options)
    app.synth()
    template = json.loads((tmp_path / "Types.template.json").read_text())
    return {resource["Type"] for resource in template["Resources"].values()}


def test_every_type_the_library_creates_has_its_schemas_tag_limits(tmp_path: Path) -> None:
    types = _library_types(tmp_path)
    assert "AWS::StepFunctions::StateMachine" in types
    derived = {t: limits for t in sorted(types) if (limits := schema_limits(t)) is not None}
    assert len(derived) >= 5  # the cluster, roles, functions, log groups, the state machine
    assert {t: TAG_LIMITS.get(t, TagLimits()) for t in derived} == derived
    # The cluster's own resource has AWS's usual limits: a stricter type is checked apart.
    assert derived["AWS::SageMaker::Cluster"] == TagLimits()


@pytest.mark.parametrize("how", ["tags=", "Tags.of(app)"])
def test_an_empty_tag_value_is_the_librarys_finding(how: str, tmp_path: Path) -> None:
    app = App(outdir=str(tmp_path))
    stack = Stack(app, "S")
    if how == "tags=":
        _cluster(stack, tags={"team": ""})
    else:
        _cluster(stack)
        Tags.of(app).add("team", "")

    result = synth(app, tmp_path)

    assert not result.succeeded
    assert result.error.count("[HP-TAGS]") == 1
    assert (
        "[S/Cluster] tags['team'] (Tags[].Value) = '' is not allowed; allowed: keys "
        "1..128 and values 1..256 characters on AWS::StepFunctions::StateMachine "
        "(resources the library creates for the cluster). Fix: give the tag a value (an "
        "unset variable?) or drop it, or keep it off those resources: "
        "Tags.of(scope).add('team', ..., exclude_resource_types=[...]) [HP-TAGS]"
    ) in result.error
    assert "Tags.4.Value" not in result.error  # not aws-cdk-lib's own check


def test_an_empty_value_without_a_gate_is_fine(tmp_path: Path) -> None:
    app = App(outdir=str(tmp_path))
    _cluster(Stack(app, "S"), gated=False, tags={"team": ""})
    assert synth(app, tmp_path).succeeded


def test_the_policy_refuses_an_empty_required_tag(tmp_path: Path) -> None:
    from hyperpod_constructs.policy import HyperPodPolicy

    app = App(outdir=str(tmp_path))
    _cluster(Stack(app, "S"), gated=False, tags={"team": " "})
    Aspects.of(app).add(HyperPodPolicy(name="acme", required_tags=["team"]))
    result = synth(app, tmp_path)
    assert not result.succeeded
    assert [text for kind, _, text in result.found if kind == "error"] == [
        "[HPP-TAGS] acme: tag 'team' has an empty value. Fix: give tag 'team' a value (an "
        "unset variable in the build?)"
    ]
