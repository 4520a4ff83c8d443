"""The plan's one property table (``hyperpod_constructs/tools/plan/semantics.py``) against the
``AWS::SageMaker::Cluster`` resource schema that cfn-lint ships: the rows that replace the
cluster are exactly the schema's create-only properties, read-only rows are read-only there,
every row names a property the schema has, and the properties the table does not know are
listed here (a new cfn-lint schema with new properties fails this test until they are
classified or added to the list)."""

from __future__ import annotations

from functools import cache
from typing import Any

from cfnlint.schema import PROVIDER_SCHEMA_MANAGER

from hyperpod_constructs.tools.plan.semantics import (
    CLUSTER,
    GROUP,
    RULES,
    UNORDERED,
    Effect,
    rule_for,
)

UNCLASSIFIED = {
    # Cluster: EKS-only or Nova-only properties; plan reports a change of them as "unknown".
    "/properties/RestrictedInstanceGroups",
    "/properties/RestrictedInstanceGroupsConfig",
    "/properties/Orchestrator/Slurm",
    # Groups: newer fields whose in-place behaviour no AWS source states (yet).
    "/properties/InstanceGroups/*/AutoPatchConfig",
    "/properties/InstanceGroups/*/CapacityRequirements",
    "/properties/InstanceGroups/*/InstanceRequirements",
    "/properties/InstanceGroups/*/KubernetesConfig",
    "/properties/InstanceGroups/*/NetworkInterface",
    "/properties/InstanceGroups/*/SlurmConfig/PartitionNames",
    "/properties/InstanceGroups/*/TrainingPlanArn",
}
"""Schema properties without a row of their own or of an enclosing property."""
STRUCTURE = {"/properties/InstanceGroups", "/properties/Orchestrator", f"{GROUP}/SlurmConfig"}
"""Objects the plan looks into rather than classifying as a whole."""


@cache
def schema() -> dict[str, Any]:
    resource = PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", "AWS::SageMaker::Cluster")
    return dict(resource.schema)


def _resolved(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema()["definitions"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _properties(node: dict[str, Any]) -> dict[str, Any]:
    node = _resolved(node)
    found: dict[str, Any] = dict(node.get("properties", {}))
    for option in node.get("oneOf", []) + node.get("anyOf", []):
        found.update(_resolved(option).get("properties", {}))
    return found


def node_at(pointer: str) -> dict[str, Any] | None:
    """The schema node of a JSON pointer (``*`` steps into an array's items)."""
    node: dict[str, Any] = {"properties": schema()["properties"]}
    for part in pointer.removeprefix("/properties/").split("/"):
        node = _resolved(node)
        if part == "*":
            node = _resolved(node.get("items", {}))
            continue
        child = _properties(node).get(part)
        if child is None:
            return None
        node = child
    return _resolved(node)


def schema_pointers() -> set[str]:
    """Every cluster property and every group property (with SlurmConfig's and Orchestrator's
    children), as pointers."""
    pointers = {f"{CLUSTER}/{name}" for name in schema()["properties"]}
    group = node_at(GROUP)
    assert group is not None
    pointers |= {f"{GROUP}/{name}" for name in _properties(group)}
    for parent in ("/properties/Orchestrator", f"{GROUP}/SlurmConfig"):
        node = node_at(parent)
        assert node is not None
        pointers |= {f"{parent}/{name}" for name in _properties(node)}
    return pointers


def test_the_rows_that_replace_the_cluster_are_the_schemas_create_only_properties() -> None:
    replacing = {rule.pointer for rule in RULES if rule.effect is Effect.REPLACES_CLUSTER}
    assert replacing == set(schema()["createOnlyProperties"])


def test_read_only_rows_are_read_only_in_the_schema() -> None:
    read_only = {rule.pointer for rule in RULES if rule.effect is Effect.READ_ONLY}
    assert read_only
    assert read_only <= set(schema()["readOnlyProperties"])


def test_every_row_names_a_property_of_the_schema() -> None:
    missing = [rule.pointer for rule in RULES if node_at(rule.pointer) is None]
    assert missing == []
    assert len({rule.pointer for rule in RULES}) == len(RULES), "one row per property"
    assert all(rule.what and rule.source for rule in RULES)


def test_every_schema_property_is_classified_or_listed_as_unknown() -> None:
    read_only = set(schema()["readOnlyProperties"])
    pointers = schema_pointers() - read_only - STRUCTURE
    unknown = {
        p
        for p in pointers
        if rule_for(p).effect is Effect.UNKNOWN and p not in {r.pointer for r in RULES}
    }
    assert unknown == UNCLASSIFIED
    # Cluster-level read-only attributes (ClusterArn, ...) are not template inputs at all.
    assert all(node_at(p) is not None for p in UNCLASSIFIED)


def test_a_property_is_classified_by_its_nearest_row() -> None:
    assert rule_for(f"{GROUP}/LifeCycleConfig/SourceS3Uri").effect is Effect.NEW_NODES
    assert rule_for(f"{CLUSTER}/VpcConfig/Subnets").effect is Effect.REPLACES_CLUSTER
    assert rule_for(f"{GROUP}/SlurmConfig/NodeType").effect is Effect.REFUSED
    # A group property never falls back to a cluster row, nor the other way round.
    assert rule_for(f"{GROUP}/Tags").effect is Effect.UNKNOWN
    assert rule_for(f"{CLUSTER}/InstanceType").effect is Effect.UNKNOWN
    future = rule_for(f"{GROUP}/SomeFieldAddedNextYear")
    assert future.effect is Effect.UNKNOWN and "not create-only" in future.what


def _unordered_lists(node: dict[str, Any], pointer: str, depth: int = 0) -> set[str]:
    """Pointers of the lists the schema marks ``insertionOrder: false``, below ``node``."""
    node = _resolved(node)
    found = (
        {pointer} if node.get("type") == "array" and node.get("insertionOrder") is False else set()
    )
    if depth > 12:
        return found
    if "items" in node:
        found |= _unordered_lists(node["items"], f"{pointer}/*", depth + 1)
    for name, child in _properties(node).items():
        found |= _unordered_lists(child, f"{pointer}/{name}", depth + 1)
    return found


def test_the_unordered_lists_are_the_schemas_insertion_order_false_lists() -> None:
    derived: set[str] = set()
    for name, node in schema()["properties"].items():
        derived |= _unordered_lists(node, f"{CLUSTER}/{name}")
    assert derived == set(UNORDERED)
