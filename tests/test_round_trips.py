"""The jsii round trips a cluster costs, counted exactly: a regression fails here.

Every call from Python into aws-cdk-lib (and every callback answered: a lazy value, an aspect,
a validation) is one request to the jsii Node.js process, about 0.5 ms of CPU each
(docs/performance.md). The counts are deterministic, so they are asserted exactly where they
must be zero and against a ceiling elsewhere: an added gated instance group costs no round
trip at all (its properties are built in Python and cross once, in the cluster's one lazy
value), and a gated cluster costs at most :data:`GATED_CLUSTER_CEILING`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from aws_cdk import App, CfnResource, Duration, Stack
from aws_cdk.assertions import Template
from jsii._kernel.providers import process

from hyperpod_constructs import (
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    MinCountGateOptions,
)
from hyperpod_constructs._cdk.lazy import final_any, final_string
from hyperpod_constructs._cdk.paths import path_of
from hyperpod_constructs._cdk.tokens import read_once
from tests.conftest import CDK_CONTEXT, ROOT

GATED_CLUSTER_CEILING = 159
"""Round trips of one more gated cluster (a controller and one gated compute group), while the app
is built and synthesized: measured 159 (263 before the gate's arm properties were rendered once
with three late values, its roles written as L1s with their documents built in Python, its
executions ARN and nag finding ids made in one call each, and the cluster side's paths,
durations, ARN token and the tree above it read once; 328 before the gate's checks stopped
sending plain numbers and constant durations to jsii, and its synth-time values were produced
once; 282 before the gates of a stack shared their code asset, the cluster's ``connections``
were made when first asked for, the pseudo parameters (``Aws.REGION``, ...) were read once per
process and the default durations of the gate's options made once). Lower it when a change saves
some; never raise it without a reason in docs/performance.md."""

UNGATED_CLUSTER_CEILING = 38
"""The same for a cluster whose gate is disabled: measured 38 (61 before its groups and the
DependsOn written without implied dependencies were produced once per synth, what is above
its scope (its path, stack, root and Stages) read once per scope, the gate options' default
durations once per process, and the SageMaker principal and the managed policy of its role
made once per process; 65 before that)."""

FSDP_EXAMPLE_CEILING = 373
"""Round trips of building and synthesizing the FSDP example (examples/fsdp.py, a cluster with a
VPC, lifecycle scripts and a gated group), counted after a first synth of the same app: measured
373 (443 before the gate's cuts of the third round, 563 before a resource's implied dependencies
were resolved in one call, each construct path read once, the lifecycle binding read its bucket,
paths and roles once, and the synth-time values of the cluster, its ENI policy and its bucket
policy were produced once)."""

Counter = Callable[[Callable[[App], None]], int]


@pytest.fixture
def round_trips(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter]:
    """``count(define)``: the round trips of building ``define(app)`` and synthesizing it."""
    send = process._NodeProcess.send
    calls = [0]

    def counting_send(self: Any, request: Any, response_type: Any) -> Any:
        calls[0] += 1
        return send(self, request, response_type)

    monkeypatch.setattr(process._NodeProcess, "send", counting_send)

    def count(define: Callable[[App], None]) -> int:
        app = App(context=CDK_CONTEXT)  # created before counting: the same in every case
        before = calls[0]
        define(app)
        app.synth()
        return calls[0] - before

    count(clusters(1, 2))  # first use: nothing a later app pays again is counted
    yield count


def clusters(
    count: int, groups: int, *, gate: bool = True, stack_name: str = "RoundTrips"
) -> Callable[[App], None]:
    """One stack with ``count`` clusters of a controller and ``groups - 1`` gated groups."""

    def define(app: App) -> None:
        stack = Stack(app, stack_name)
        for index in range(count):
            cluster = HyperPodSlurmCluster(
                stack,
                f"Cluster{index}",
                cluster_name=f"round-trips-{index}",
                readiness_gate=None if gate else MinCountGateOptions(enabled=False),
                instance_groups=[
                    InstanceGroup.controller(
                        "controller", instance_type=HyperPodInstanceType.ML_M5_2XLARGE
                    )
                ],
            )
            for group in range(1, groups):
                cluster.add_instance_group(
                    InstanceGroup.compute(
                        f"gpu{group}",
                        instance_type=HyperPodInstanceType.ML_P5_48XLARGE,
                        instance_count=2,
                        min_instance_count=2,
                        partition=f"p{group}",
                        deep_health_checks=[DeepHealthCheck.INSTANCE_STRESS],
                    )
                )

    return define


def test_an_added_gated_group_costs_no_round_trip(round_trips: Counter) -> None:
    one, three = round_trips(clusters(1, 2)), round_trips(clusters(1, 4))
    assert three == one, f"{(three - one) / 2} round trips per added gated group"


def test_an_added_gated_cluster_costs_at_most_its_ceiling(round_trips: Counter) -> None:
    one, two = round_trips(clusters(1, 2)), round_trips(clusters(2, 2))
    assert two - one <= GATED_CLUSTER_CEILING, f"{two - one} round trips per gated cluster"


def test_an_added_ungated_cluster_costs_at_most_its_ceiling(round_trips: Counter) -> None:
    one = round_trips(clusters(1, 2, gate=False))
    two = round_trips(clusters(2, 2, gate=False))
    assert two - one <= UNGATED_CLUSTER_CEILING, f"{two - one} round trips per cluster"


def test_the_fsdp_example_costs_at_most_its_ceiling(round_trips: Counter) -> None:
    """A cluster with a VPC, lifecycle scripts and a gated group: the FSDP example (its VPC,
    upload and dependant included), counted after a first synth of the same app."""
    from examples.fsdp import FsdpTrainingStack

    def define(app: App) -> None:
        FsdpTrainingStack(app, "Fsdp")

    round_trips(define)
    count = round_trips(define)
    assert count <= FSDP_EXAMPLE_CEILING, f"{count} round trips for the FSDP example"


def test_an_immutable_value_and_a_path_are_read_from_jsii_once(round_trips: Counter) -> None:
    """read_once: a Duration's seconds, asked three times, cross once; path_of: a
    resource's path (its toString) once, however often the implied dependencies ask."""
    duration = Duration.minutes(7)

    def read_thrice(app: App) -> None:
        for _ in range(3):
            assert read_once(duration, "seconds", duration.to_seconds) == 420

    nothing = round_trips(lambda app: None)
    assert round_trips(read_thrice) - nothing == 1
    assert round_trips(read_thrice) - nothing == 0
    resource = CfnResource(Stack(App(), "Paths"), "Resource", type="Test::Paths::Once")
    assert round_trips(lambda app: [path_of(resource) for _ in range(3)]) - nothing == 1


def test_clusters_in_one_vpc_select_its_subnets_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default subnet selection (seven round trips) is read once per VPC, and every
    cluster still names the VPC's private subnets."""
    from aws_cdk import aws_ec2 as ec2

    selections: list[object] = []
    select = ec2.Vpc.select_subnets

    def counting_select(self: ec2.Vpc, **selection: Any) -> ec2.SelectedSubnets:
        selections.append(selection)
        return select(self, **selection)

    monkeypatch.setattr(ec2.Vpc, "select_subnets", counting_select)
    stack = Stack(App(context=CDK_CONTEXT), "SharedVpc")
    vpc = ec2.Vpc(stack, "Vpc", max_azs=2)
    for index in range(3):
        HyperPodSlurmCluster(
            stack,
            f"Cluster{index}",
            vpc=vpc,
            readiness_gate=MinCountGateOptions(enabled=False),
            instance_groups=[
                InstanceGroup.controller(
                    "controller", instance_type=HyperPodInstanceType.ML_M5_2XLARGE
                )
            ],
        )
    assert len(selections) == 1
    private = stack.resolve([subnet.subnet_id for subnet in vpc.private_subnets])
    template = Template.from_stack(stack).to_json()
    clusters = [
        resource["Properties"]["VpcConfig"]["Subnets"]
        for resource in template["Resources"].values()
        if resource["Type"] == "AWS::SageMaker::Cluster"
    ]
    assert clusters == [private] * 3


def test_the_count_is_deterministic(round_trips: Counter) -> None:
    """The same app costs the same round trips every time (what makes the ceilings exact)."""
    assert len({round_trips(clusters(2, 3)) for _ in range(3)}) == 1


def test_a_final_value_is_produced_once_however_often_it_is_resolved() -> None:
    produced: list[str] = []

    def produce(value: str) -> str:
        produced.append(value)
        return value

    app = App()
    stack = Stack(app, "Final")
    resource = CfnResource(
        stack,
        "Resource",
        type="Test::Final::Value",
        properties={
            "Any": final_any(lambda: produce("any")),
            "Name": final_string(lambda: produce("name")),
        },
    )
    resource.override_logical_id(final_string(lambda: produce("Id")))
    for _ in range(3):
        stack.resolve(resource.logical_id)
    template = app.synth().get_stack_by_name("Final").template
    assert template["Resources"]["Id"]["Properties"] == {"Any": "any", "Name": "name"}
    assert sorted(produced) == ["Id", "any", "name"]


def test_the_gates_of_a_stack_share_one_staged_code_asset_and_write_the_same_code() -> None:
    """Synth-wide work once: every gate of a stack takes the code asset the first one staged
    (one construct, one staging, their jsii calls once); each function still names the same
    bucket and key, and a stack of its own stages its own."""
    from aws_cdk import aws_s3_assets as s3_assets

    app = App(context=CDK_CONTEXT)
    clusters(3, 2)(app)
    clusters(1, 2, stack_name="Other")(app)
    assembly = app.synth()
    for name, gates in (("RoundTrips", 3), ("Other", 1)):
        stack = app.node.find_child(name)
        assets = [c for c in stack.node.find_all() if isinstance(c, s3_assets.Asset)]
        assert len(assets) == 1, [asset.node.path for asset in assets]
        template = assembly.get_stack_by_name(name).template
        codes = [
            resource["Properties"]["Code"]
            for resource in template["Resources"].values()
            if resource["Type"] == "AWS::Lambda::Function"
        ]
        assert len(codes) == 2 * gates
        assert all(code == codes[0] for code in codes)


def test_the_performance_page_states_the_ceilings() -> None:
    """docs/performance.md's targets table and findings state the ceilings this file holds
    (a lowered ceiling is one edit here; the page then fails this test until it follows)."""
    page = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
    gated, ungated = GATED_CLUSTER_CEILING, UNGATED_CLUSTER_CEILING
    assert f"an added gated cluster at most {gated}, an ungated one {ungated} |" in page
    assert f"an added gated cluster at most {gated}, an ungated one at most {ungated})" in page
