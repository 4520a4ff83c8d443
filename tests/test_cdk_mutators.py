"""aws-cdk-lib's own mutators reach the checks the props have: what
``apply_removal_policy``, ``Tags.of`` or ``cfn_options`` leave on the rendered
``AWS::SageMaker::Cluster`` is checked at synth like the props."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from aws_cdk import CfnDeletionPolicy, RemovalPolicy, Stack, Tags
from aws_cdk.assertions import Template

from hyperpod_constructs import HyperPodInstanceType, HyperPodSlurmCluster, InstanceGroup
from hyperpod_constructs.reporting import validation_messages
from tests.conftest import new_app


def build(mutate: Callable[[HyperPodSlurmCluster], None]) -> tuple[Stack, HyperPodSlurmCluster]:
    app = new_app()
    stack = Stack(app, "Mutated")
    cluster = HyperPodSlurmCluster(
        stack,
        "Cluster",
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=HyperPodInstanceType.ML_M5_XLARGE)
        ],
    )
    mutate(cluster)
    return stack, cluster


def failure(mutate: Callable[[HyperPodSlurmCluster], None]) -> list[str]:
    stack, _ = build(mutate)
    with pytest.raises(RuntimeError) as raised:
        stack.node.root.synth()  # type: ignore[attr-defined]
    messages = validation_messages(raised.value)
    assert messages is not None, str(raised.value)[:2000]
    return messages


def test_apply_removal_policy_snapshot_is_refused_like_the_prop() -> None:
    """aws-cdk-lib 2.275 refuses it at the call (SnapshotRemovalNotSupported); an older one
    writes ``DeletionPolicy: Snapshot``, which the cluster's validation refuses at synth."""
    try:
        lines = failure(lambda c: c.apply_removal_policy(RemovalPolicy.SNAPSHOT))
    except RuntimeError as refused:
        assert "SnapshotRemovalNotSupported" in str(refused)
        return
    (line,) = lines
    assert "[Mutated/Cluster]" in line and "HP-ARG-TYPE" in line
    assert "removal_policy (DeletionPolicy)" in line and "a cluster has no snapshot" in line


def test_a_snapshot_set_through_cfn_options_is_refused() -> None:
    def mutate(cluster: HyperPodSlurmCluster) -> None:
        resource = cluster.node.default_child
        assert resource is not None
        resource.cfn_options.update_replace_policy = CfnDeletionPolicy.SNAPSHOT  # type: ignore[attr-defined]

    (line,) = failure(mutate)
    assert "[Mutated/Cluster]" in line and "HP-ARG-TYPE" in line
    assert "removal_policy (UpdateReplacePolicy)" in line and "a cluster has no snapshot" in line


def test_a_snapshot_deletion_policy_set_through_cfn_options_is_refused() -> None:
    def mutate(cluster: HyperPodSlurmCluster) -> None:
        resource = cluster.node.default_child
        assert resource is not None
        resource.cfn_options.deletion_policy = CfnDeletionPolicy.SNAPSHOT  # type: ignore[attr-defined]

    (line,) = failure(mutate)
    assert "removal_policy (DeletionPolicy)" in line


def test_tags_added_with_tags_of_are_checked_like_the_prop() -> None:
    def mutate(cluster: HyperPodSlurmCluster) -> None:
        Tags.of(cluster).add("aws:owner", "me")
        for index in range(51):
            Tags.of(cluster.node.scope).add(f"cost-{index}", "x")  # type: ignore[arg-type]

    lines = failure(mutate)
    assert any("tags key (Tags[].Key) = 'aws:owner'" in line for line in lines), lines
    assert any("52 tags" in line and "0..50 tags" in line for line in lines), lines


def test_allowed_mutations_still_synthesize() -> None:
    def mutate(cluster: HyperPodSlurmCluster) -> None:
        cluster.apply_removal_policy(RemovalPolicy.RETAIN)
        Tags.of(cluster).add("team", "ml")

    stack, _ = build(mutate)
    template = Template.from_stack(stack).to_json()
    (cluster,) = [
        r for r in template["Resources"].values() if r["Type"] == "AWS::SageMaker::Cluster"
    ]
    assert cluster["DeletionPolicy"] == "Retain"
    assert {"Key": "team", "Value": "ml"} in cluster["Properties"]["Tags"]
