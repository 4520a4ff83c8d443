"""The rules learned from real configurations: each fails (or warns) on the input it
is about and stays quiet on the input next to it. Warnings are read from the synthesized
annotations; errors from the failed synth."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Annotations, Match

from hyperpod_constructs import (
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    LifecycleScripts,
    MinCountGateOptions,
)
from tests.support.findings import errors_in
from tests.support.groups import Groups

CPU = HyperPodInstanceType.ML_C5_XLARGE
GPU = HyperPodInstanceType.ML_P5_48XLARGE
CONNECTIVITY = (DeepHealthCheck.INSTANCE_CONNECTIVITY,)

Build = Callable[[Stack], Any]


def cluster(stack: Stack, *groups: InstanceGroup, **props: Any) -> HyperPodSlurmCluster:
    chosen = groups or (
        InstanceGroup.controller("controller", instance_type=CPU),
        InstanceGroup.compute("cpu", instance_type=CPU, instance_count=2, partition="cpu"),
    )
    return HyperPodSlurmCluster(stack, "Cluster", instance_groups=list(chosen), **props)


GROUPS = Groups(
    controller_type=CPU,
    compute_type=GPU,
    instance_count=2,
    deep_health_checks=(DeepHealthCheck.INSTANCE_STRESS, *CONNECTIVITY),
)
controller = GROUPS.controller


def gpu(**props: Any) -> InstanceGroup:
    return GROUPS.compute("gpu", **props)


def warnings(build: Build) -> list[str]:
    stack = Stack(App(), "Test")
    build(stack)
    found = Annotations.from_stack(stack).find_warning("*", Match.any_value())
    return [str(message.entry.data) for message in found]


def errors(build: Build) -> list[str]:
    stack = Stack(App(), "Test")
    build(stack)
    return [finding.message() for finding in errors_in(stack)]


# fmt: off
CASES = [
    # (id, build, rule it must report, errors or warnings)
    ("controller-count-0", lambda s: cluster(s, controller(instance_count=0), gpu()),
     "HP-CONTROLLER-COUNT", errors),
    ("connectivity-on-cpu-type",
     lambda s: cluster(s, controller(), gpu(instance_type=CPU, deep_health_checks=CONNECTIVITY)),
     "HP-DHC-CONNECTIVITY", errors),
    ("connectivity-on-one-node", lambda s: cluster(s, controller(), gpu(instance_count=1)),
     "HP-WARN-DHC-CONNECTIVITY", warnings),
    ("partition-dev", lambda s: cluster(s, controller(), gpu(partition="dev")),
     "HP-WARN-PARTITION-DEV", warnings),
    ("instance-type-typo",
     lambda s: cluster(s, controller(),
                       gpu(instance_type=HyperPodInstanceType.of("ml.p5.48xlarg"))),
     "HP-WARN-INSTANCE-TYPE", warnings),
    ("foreign-bucket-with-imported-role",
     lambda s: cluster(s, execution_role=iam.Role.from_role_arn(
         s, "Role", "arn:aws:iam::123456789012:role/hyperpod", mutable=False),
         lifecycle_scripts=LifecycleScripts.from_s3(
             s3.Bucket.from_bucket_name(s, "Scripts", "my-scripts"), on_create="on_create.sh")),
     "HP-WARN-LIFECYCLE-BUCKET", warnings),
    ("gate-namespace-aws",
     lambda s: cluster(s, controller(), gpu(min_instance_count=2),
                       readiness_gate=MinCountGateOptions(metrics_namespace="AWS/HyperPod")),
     "HP-GATE-NAMESPACE", errors),
    ("gate-namespace-256-chars",
     lambda s: cluster(s, controller(), gpu(min_instance_count=2),
                       readiness_gate=MinCountGateOptions(metrics_namespace="n" * 256)),
     "HP-GATE-NAMESPACE", errors),
]
QUIET = [
    # The input next to each case: nothing to report.
    ("controller-count-1", lambda s: cluster(s, controller(), gpu())),
    ("connectivity-on-two-gpu-nodes", lambda s: cluster(s, controller(), gpu())),
    ("connectivity-on-a-group-scaled-to-0", lambda s: cluster(s, controller(),
                                                              gpu(instance_count=0))),
    ("partition-gpu", lambda s: cluster(s, controller(), gpu(partition="gpu"))),
    ("instance-type-newer-than-the-library",
     lambda s: cluster(s, controller(),
                       gpu(instance_type=HyperPodInstanceType.of("ml.p9.96xlarge")))),
    ("foreign-bucket-with-the-library's-role",
     lambda s: cluster(s, lifecycle_scripts=LifecycleScripts.from_s3(
         s3.Bucket.from_bucket_name(s, "Scripts", "my-scripts"), on_create="on_create.sh"))),
    ("gate-namespace-255-chars",
     lambda s: cluster(s, controller(), gpu(min_instance_count=2),
                       readiness_gate=MinCountGateOptions(metrics_namespace="n" * 255))),
]
# fmt: on


@pytest.mark.parametrize(
    ("build", "rule", "read"), [pytest.param(b, r, f, id=i) for i, b, r, f in CASES]
)
def test_new_rule_reports(build: Build, rule: str, read: Callable[[Build], list[str]]) -> None:
    found = read(build)
    ours = [message for message in found if f"[{rule}]" in message]
    assert len(ours) == 1, found


@pytest.mark.parametrize("build", [pytest.param(b, id=i) for i, b in QUIET])
def test_new_rules_stay_quiet_next_to_it(build: Build) -> None:
    assert errors(build) == []
    assert [w for w in warnings(build) if "[HP-" in w] == [], warnings(build)


def test_did_you_mean_names_the_catalogue_type() -> None:
    (message,) = warnings(
        lambda s: cluster(
            s, controller(), gpu(instance_type=HyperPodInstanceType.of("ml.p5.48xlarg"))
        )
    )
    assert "did you mean ml.p5.48xlarge" in message
