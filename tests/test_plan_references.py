"""The reference closure (issue 35): in random templates where a resource the cluster refers to,
directly or through a chain of other resources, is replaced (a create-only property changes,
by cfn-lint's schema of its type, drawn from every type cfn-lint knows; its type changes; a
custom resource's input changes; or it is an SSM-typed parameter), the plan never exits 0."""

from __future__ import annotations

import copy
from typing import Any

from cfnlint.schema import PROVIDER_SCHEMA_MANAGER
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hyperpod_constructs.tools.plan import plan_stack
from tests.support.plan_pairs import PlanPairs, plan_pairs

__all__ = ["plan_pairs"]

Template = dict[str, Any]
TYPES = sorted(PROVIDER_SCHEMA_MANAGER.get_resource_types("us-east-1"))
SITES = (
    ("gpu", "ExecutionRole"),
    ("gpu", "InstanceType"),
    ("gpu", "InstanceCount"),
    ("gpu", "ThreadsPerCore"),
    ("gpu", "InstanceGroupName"),
    ("controller", "SlurmConfig.NodeType"),
    (None, "ClusterName"),
    (None, "VpcConfig.SecurityGroupIds.0"),
    (None, "VpcConfig.Subnets.0"),
)
"""Where the cluster refers to the resource: properties whose change no row calls safe."""


def top_create_only(type_name: str) -> list[str]:
    schema = PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", type_name).schema
    return sorted(
        p.removeprefix("/properties/")
        for p in schema.get("createOnlyProperties", [])
        if p.count("/") == 2
    )


def reference(logical_id: str, how: str) -> Any:
    return {
        "ref": {"Ref": logical_id},
        "arn": {"Fn::GetAtt": [logical_id, "Arn"]},
        "attribute": {"Fn::GetAtt": [logical_id, "Endpoint"]},
        "sub": {"Fn::Sub": "prefix-${" + logical_id + "}"},
        "join": {"Fn::Join": ["-", ["x", {"Ref": logical_id}]]},
    }[how]


def put(template: Template, site: tuple[str | None, str], value: Any) -> None:
    resource = next(
        r for r in template["Resources"].values() if r["Type"] == "AWS::SageMaker::Cluster"
    )
    node: Any = resource["Properties"]
    group, path = site
    if group is not None:
        node = next(g for g in node["InstanceGroups"] if g["InstanceGroupName"] == group)
    *parents, last = path.split(".")
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_replaced_resource_the_cluster_refers_to_never_exits_0(
    plan_pairs: PlanPairs, data: st.DataObject
) -> None:
    base = plan_pairs.templates["base"]
    old, new = copy.deepcopy(base), copy.deepcopy(base)
    length = data.draw(st.integers(1, 3), "chain length")
    origin = data.draw(st.sampled_from(["create-only", "type", "custom", "ssm"]), "replaced by")
    previous: str | None = None
    for index in range(length):
        logical_id = f"Link{index}"
        kind = data.draw(st.sampled_from(TYPES), f"type of {logical_id}")
        names = top_create_only(kind)
        if not names:
            names = ["Name"]  # no create-only property: the chain goes through one anyway
        name = data.draw(st.sampled_from(names), f"property of {logical_id}")
        if previous is None:
            if origin == "ssm":
                parameter = {"Type": "AWS::SSM::Parameter::Value<String>", "Default": "/x"}
                for template in (old, new):
                    template.setdefault("Parameters", {})[logical_id] = parameter
                previous = logical_id
                continue
            before: dict[str, Any] = {"Type": kind, "Properties": {name: "value-a"}}
            after = copy.deepcopy(before)
            if origin == "create-only" and top_create_only(kind):
                after["Properties"][name] = "value-b"
            elif origin == "custom" or not top_create_only(kind):
                before["Type"] = after["Type"] = "Custom::Thing"
                after["Properties"][name] = "value-b"
            else:
                after["Type"] = data.draw(
                    st.sampled_from([t for t in TYPES if t != kind][:50]), "new type"
                )
        else:
            how = data.draw(st.sampled_from(["ref", "arn", "sub", "join"]), "link")
            value = reference(previous, how)
            before = {"Type": kind, "Properties": {name: value}}
            if not top_create_only(kind):
                before["Type"] = "Custom::Thing"
            after = copy.deepcopy(before)
        old["Resources"][logical_id], new["Resources"][logical_id] = before, after
        previous = logical_id
    assert previous is not None
    site = data.draw(st.sampled_from(SITES), "site")
    how = data.draw(st.sampled_from(["ref", "arn", "attribute", "sub", "join"]), "reference")
    put(old, site, reference(previous, how))
    put(new, site, reference(previous, how))
    result = plan_stack(old, new, stack="Probe", baseline="probe")
    assert result.exit_code == 3, result.headlines()
