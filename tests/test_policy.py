"""The organisation policy: every rule passing and failing (pure, over ClusterFacts), then the
aspect end to end: annotations, severities, tags from ``tags=`` and ``Tags.of(app)``,
exemptions and acknowledgements."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Annotations, App, Aspects, Size, Stack, Tags
from aws_cdk import aws_ec2 as ec2

from hyperpod_constructs import (
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    InstanceStorage,
    NodeProvisioningMode,
)
from hyperpod_constructs.policy import (
    AllowedInstanceTypes,
    ClusterFacts,
    EbsCustomerManagedKey,
    HyperPodPolicy,
    MaxInstanceCount,
    MinInstanceFloor,
    PolicyRule,
    PolicyRuleId,
    PolicySeverity,
    RequiredDeepHealthChecks,
    RequiredTags,
    VpcRequired,
)
from hyperpod_constructs.policy.rules import fail_closed
from hyperpod_constructs.validation import Finding
from tests.conftest import new_app
from tests.support.synth_result import Reported, synth

T = HyperPodInstanceType
BOTH = (DeepHealthCheck.INSTANCE_STRESS, DeepHealthCheck.INSTANCE_CONNECTIVITY)
CONTROLLER = InstanceGroup.controller("controller", instance_type=T.ML_M5_XLARGE)


def gpu(**overrides: Any) -> InstanceGroup:
    """A compliant accelerator compute group, with ``overrides``."""
    values: dict[str, Any] = {
        "instance_type": T.ML_P5_48XLARGE,
        "partition": "gpu",
        "instance_count": 10,
        "min_instance_count": 10,
        "deep_health_checks": BOTH,
        "storage": (InstanceStorage.ebs(volume_size=Size.gibibytes(100), kms_key_id="k-1"),),
    }
    values.update(overrides)
    return InstanceGroup.compute("gpu", **values)


def facts(*groups: InstanceGroup, **overrides: Any) -> ClusterFacts:
    values: dict[str, Any] = {
        "path": "Stack/Cluster",
        "groups": (CONTROLLER, *groups),
        "tags": {"team": "nlp", "env": "prod"},
        "has_vpc": True,
    }
    values.update(overrides)
    return ClusterFacts(**values)


def ids(violations: Iterable[Finding]) -> list[tuple[str, str | None]]:
    return [(v.rule_id, v.group) for v in violations]


# -- each rule, pass and fail -------------------------------------------------------------

CASES: list[tuple[str, PolicyRule, ClusterFacts, list[tuple[str, str | None]], str]] = [
    # (case, rule, cluster, expected (rule, group) pairs, text in the first message)
    (
        "type allowed",
        AllowedInstanceTypes([T.ML_P5_48XLARGE, "ml.m5.xlarge"]),
        facts(gpu()),
        [],
        "",
    ),
    (
        "type not allowed",
        AllowedInstanceTypes([T.ML_P5_48XLARGE, "ml.m5.xlarge"]),
        facts(gpu(instance_type=T.ML_P4D_24XLARGE)),
        [("HPP-INSTANCE-TYPE", "gpu")],
        "instance_type ml.p4d.24xlarge is not allowed. Fix: use one of ml.m5.xlarge, "
        "ml.p5.48xlarge",
    ),
    (
        "controller type checked too",
        AllowedInstanceTypes([T.ML_P5_48XLARGE]),
        facts(gpu()),
        [("HPP-INSTANCE-TYPE", "controller")],
        "ml.m5.xlarge is not allowed",
    ),
    ("count at the maximum", MaxInstanceCount(10), facts(gpu()), [], ""),
    (
        "count above the maximum",
        MaxInstanceCount(8),
        facts(gpu(min_instance_count=8)),
        [("HPP-MAX-COUNT", "gpu")],
        "instance_count 10 is above the maximum of 8 per instance group. Fix: lower "
        "instance_count to at most 8",
    ),
    ("floor met exactly", MinInstanceFloor(0.9), facts(gpu(min_instance_count=9)), [], ""),
    (
        "floor not met",
        MinInstanceFloor(0.9),
        facts(gpu(min_instance_count=8)),
        [("HPP-MIN-FLOOR", "gpu")],
        "min_instance_count 8 is below 90% of instance_count 10 (at least 9). Fix: set "
        "min_instance_count=9 or more",
    ),
    (
        "floor: ungated group",
        MinInstanceFloor(0.5),
        facts(gpu(min_instance_count=None)),
        [("HPP-MIN-FLOOR", "gpu")],
        "min_instance_count is not set",
    ),
    (
        "floor rounds up",
        MinInstanceFloor(0.75),
        facts(gpu(instance_count=9, min_instance_count=6)),
        [("HPP-MIN-FLOOR", "gpu")],
        "(at least 7)",
    ),
    (
        "floor: CPU group exempt",
        MinInstanceFloor(1.0),
        facts(
            InstanceGroup.compute(
                "cpu", instance_type=T.ML_C5_4XLARGE, partition="cpu", instance_count=4
            )
        ),
        [],
        "",
    ),
    (
        "floor: empty group",
        MinInstanceFloor(1.0),
        facts(gpu(instance_count=0, min_instance_count=None)),
        [],
        "",
    ),
    (
        "floor: standard mode is all-or-nothing",
        MinInstanceFloor(1.0),
        facts(gpu(min_instance_count=None), node_provisioning_mode=NodeProvisioningMode.STANDARD),
        [],
        "",
    ),
    ("deep health checks present", RequiredDeepHealthChecks(), facts(gpu()), [], ""),
    (
        "deep health check missing",
        RequiredDeepHealthChecks(),
        facts(gpu(deep_health_checks=[DeepHealthCheck.INSTANCE_STRESS])),
        [("HPP-DEEP-HEALTH", "gpu")],
        "deep_health_checks lacks InstanceConnectivity. Fix: pass deep_health_checks="
        "[DeepHealthCheck.INSTANCE_STRESS, DeepHealthCheck.INSTANCE_CONNECTIVITY]",
    ),
    (
        "only the required check",
        RequiredDeepHealthChecks([DeepHealthCheck.INSTANCE_STRESS]),
        facts(gpu(deep_health_checks=[DeepHealthCheck.INSTANCE_STRESS])),
        [],
        "",
    ),
    (
        "deep health: CPU groups exempt",
        RequiredDeepHealthChecks(),
        facts(
            InstanceGroup.compute(
                "cpu", instance_type=T.ML_C5_4XLARGE, partition="cpu", instance_count=4
            )
        ),
        [],
        "",
    ),
    ("tags present", RequiredTags({"team": None, "env": ["dev", "prod"]}), facts(gpu()), [], ""),
    (
        "tag missing",
        RequiredTags(["team", "owner"]),
        facts(gpu()),
        [("HPP-TAGS", None)],
        "tag 'owner' is missing. Fix: pass tags={'owner': '<value>'} to the cluster, or "
        "Tags.of(scope).add('owner', '<value>')",
    ),
    (
        "tag value not allowed",
        RequiredTags({"env": ["dev", "qa"]}),
        facts(gpu()),
        [("HPP-TAGS", None)],
        "tag 'env' is 'prod', which is not allowed. Fix: set tag 'env' to one of dev, qa",
    ),
    ("tag with one allowed value", RequiredTags({"env": "prod"}), facts(gpu()), [], ""),
    ("volumes with a customer key", EbsCustomerManagedKey(), facts(gpu()), [], ""),
    (
        "volume without a key",
        EbsCustomerManagedKey(),
        facts(gpu(storage=[InstanceStorage.ebs(volume_size=Size.gibibytes(100))])),
        [("HPP-EBS-KMS", "gpu")],
        "storage[0] (EBS volume) has no kms_key_id (encrypted with an AWS owned key)",
    ),
    (
        "volume with the AWS managed key",
        EbsCustomerManagedKey(),
        facts(
            gpu(
                storage=[
                    InstanceStorage.ebs(volume_size=Size.gibibytes(1), kms_key_id="k-1"),
                    InstanceStorage.ebs(volume_size=Size.gibibytes(1), kms_key_id="alias/aws/ebs"),
                ]
            )
        ),
        [("HPP-EBS-KMS", "gpu")],
        "storage[1] (EBS volume) uses the AWS managed key alias/aws/ebs",
    ),
    (
        "FSx is not an EBS volume",
        EbsCustomerManagedKey(),
        facts(gpu(storage=[InstanceStorage.fsx_lustre(dns_name="fs.example", mount_name="m")])),
        [],
        "",
    ),
    ("VPC present", VpcRequired(), facts(gpu()), [], ""),
    (
        "VPC missing",
        VpcRequired(),
        facts(gpu(), has_vpc=False),
        [("HPP-VPC", None)],
        "the cluster has no VPC (it runs in HyperPod's service network). Fix: pass vpc=",
    ),
]


@pytest.mark.parametrize(
    ("rule", "cluster", "expected", "text"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_rule(
    rule: PolicyRule, cluster: ClusterFacts, expected: list[tuple[str, str | None]], text: str
) -> None:
    violations = list(rule.check(cluster))
    assert ids(violations) == expected
    assert all(v.severity is PolicySeverity.ERROR and v.path == "Stack/Cluster" for v in violations)
    if expected:
        message = violations[0].message()
        assert message.startswith(f"[{expected[0][0]}] Stack/Cluster: ")
        if expected[0][1] is not None:
            assert f"instance group {expected[0][1]!r}: " in message
        assert text in message


def test_every_built_in_rule_is_covered_by_a_failing_case() -> None:
    failing = {ids_[0][0] for _, _, _, ids_, _ in CASES if ids_}
    assert failing == {str(rule_id) for rule_id in PolicyRuleId}


@pytest.mark.parametrize(
    ("make", "expected_text"),
    [
        (lambda: AllowedInstanceTypes([]), "non-empty list"),
        (lambda: AllowedInstanceTypes("ml.p5.48xlarge"), "non-empty list"),
        (lambda: MaxInstanceCount(-1), "must be an int >= 0"),
        (lambda: MaxInstanceCount(True), "must be an int >= 0"),
        (lambda: MinInstanceFloor(0), r"must be in \(0, 1\]"),
        (lambda: MinInstanceFloor(1.5), r"must be in \(0, 1\]"),
        (lambda: RequiredDeepHealthChecks([]), "at least one"),
        (lambda: RequiredTags("team"), "non-empty list or mapping"),
        (
            lambda: HyperPodPolicy(severities={"HPP-NOPE": PolicySeverity.WARNING}),
            "unknown rule id.*HPP-NOPE",
        ),
    ],
)
def test_bad_rule_arguments_are_rejected(make: Callable[[], object], expected_text: str) -> None:
    with pytest.raises(ValueError, match=expected_text):
        make()


def test_rules_that_are_not_rules_are_rejected() -> None:
    with pytest.raises(TypeError, match=r"rules\[0\] = 'HPP-VPC' is not allowed; allowed: a Pol"):
        HyperPodPolicy(rules=["HPP-VPC"])  # type: ignore[list-item]


# -- a policy never fails open ------------------------------------------------------------


@pytest.mark.parametrize("given", ["error", "ERROR", " Error ", PolicySeverity.ERROR])
def test_a_severity_given_as_a_string_works(given: Any) -> None:
    cluster = facts(gpu(), has_vpc=False)
    (violation,) = HyperPodPolicy(require_vpc=True, severity=given).evaluate(cluster)
    assert violation.severity is PolicySeverity.ERROR
    (violation,) = HyperPodPolicy(
        require_vpc=True, severity="warning", severities={"HPP-VPC": "error"}
    ).evaluate(cluster)
    assert violation.severity is PolicySeverity.ERROR
    (rule,) = HyperPodPolicy(rules=[VpcRequired(severity="warning")]).rules  # type: ignore[arg-type]
    assert rule.severity is PolicySeverity.WARNING


@pytest.mark.parametrize(
    ("arguments", "parameter"),
    [
        ({"severity": "eror"}, "severity"),
        ({"severity": None}, "severity"),
        ({"severities": {"HPP-VPC": "fatal"}}, "severities"),
        ({"require_vpc": "no"}, "require_vpc"),
        ({"require_customer_managed_key": 1}, "require_customer_managed_key"),
        ({"required_deep_health_checks": "yes"}, "required_deep_health_checks"),
        ({"max_instance_count": 2.5}, "max_instance_count"),
        ({"min_instance_fraction": "0.9"}, "min_instance_fraction"),
        ({"min_instance_fraction": float("nan")}, "min_instance_fraction"),
        ({"name": None}, "name"),
        ({"rules": None}, "rules"),
    ],
)
def test_a_policy_argument_of_the_wrong_kind_is_rejected(
    arguments: dict[str, Any], parameter: str
) -> None:
    with pytest.raises(TypeError, match=rf"^\[HyperPodPolicy\] {parameter} = .* \(got "):
        HyperPodPolicy(**arguments)


def test_a_built_in_rule_with_an_unknown_severity_is_rejected() -> None:
    with pytest.raises(TypeError, match="is not a severity"):
        VpcRequired(severity="eror")  # type: ignore[arg-type]


def test_a_custom_rule_with_an_unknown_severity_counts_as_an_error(tmp_path: Path) -> None:
    """A team's rule returning a severity the library does not know fails closed."""
    app = new_app(outdir=str(tmp_path))
    stack = Stack(app, "Closed")
    built = cluster(stack, gpu())
    Aspects.of(app).add(HyperPodPolicy(rules=[NamePrefix("acme-", severity="fatal")]))  # type: ignore[arg-type]
    succeeded, _ = synth_report(app, tmp_path)
    assert not succeeded
    errors = [str(e.data) for e in built.node.metadata if e.type == "aws:cdk:error"]
    assert len(errors) == 2 and all("[ACME-GROUP-PREFIX]" in e for e in errors), errors


# -- the policy object --------------------------------------------------------------------


def full_policy(**overrides: Any) -> HyperPodPolicy:
    values: dict[str, Any] = {
        "name": "acme",
        "allowed_instance_types": [T.ML_P5_48XLARGE, T.ML_M5_XLARGE],
        "max_instance_count": 16,
        "min_instance_fraction": 0.9,
        "required_deep_health_checks": True,
        "required_tags": ["team"],
        "require_customer_managed_key": True,
        "require_vpc": True,
    }
    values.update(overrides)
    return HyperPodPolicy(**values)


def test_keyword_arguments_build_one_rule_each_and_defaults_are_off() -> None:
    assert HyperPodPolicy().rules == ()
    assert [rule.rule_id for rule in full_policy().rules] == [
        "HPP-INSTANCE-TYPE",
        "HPP-MAX-COUNT",
        "HPP-MIN-FLOOR",
        "HPP-DEEP-HEALTH",
        "HPP-TAGS",
        "HPP-EBS-KMS",
        "HPP-VPC",
    ]
    checks = HyperPodPolicy(required_deep_health_checks=[DeepHealthCheck.INSTANCE_STRESS])
    (rule,) = checks.rules
    assert isinstance(rule, RequiredDeepHealthChecks)
    assert tuple(rule.checks) == (DeepHealthCheck.INSTANCE_STRESS,)


def test_a_compliant_cluster_has_no_violations() -> None:
    assert full_policy().evaluate(facts(gpu())) == []


def test_severity_default_and_per_rule_override() -> None:
    cluster = facts(gpu(min_instance_count=1), has_vpc=False, tags={})
    policy = full_policy(
        severity=PolicySeverity.WARNING,
        severities={
            PolicyRuleId.VPC_REQUIRED: PolicySeverity.ERROR,
            "HPP-TAGS": PolicySeverity.ERROR,
        },
    )
    levels = {v.rule_id: v.severity for v in policy.evaluate(cluster)}
    assert levels == {
        "HPP-MIN-FLOOR": PolicySeverity.WARNING,
        "HPP-VPC": PolicySeverity.ERROR,
        "HPP-TAGS": PolicySeverity.ERROR,
    }


def test_evaluate_names_the_policy_in_every_message() -> None:
    (violation,) = full_policy().evaluate(facts(gpu(), has_vpc=False))
    assert violation.policy == "acme"
    assert violation.message().startswith("[HPP-VPC] acme: Stack/Cluster: the cluster has no")


@dataclasses.dataclass(frozen=True)
class NamePrefix:
    """A team-written rule: group names start with a prefix."""

    prefix: str
    rule_id: str = "ACME-GROUP-PREFIX"
    severity: PolicySeverity = PolicySeverity.WARNING

    def check(self, cluster: ClusterFacts) -> Iterable[Finding]:
        for group in cluster.groups:
            if not group.name.startswith(self.prefix):
                yield Finding(
                    rule=self.rule_id,
                    severity=fail_closed(self.severity),
                    path=cluster.path,
                    group=group.name,
                    problem=f"name does not start with {self.prefix!r}",
                    fix=f"rename it to {self.prefix}{group.name}",
                )


def test_a_rule_returns_findings() -> None:
    """Policy rules return the library's one ``Finding`` type."""
    cluster = facts(gpu(), has_vpc=False)
    found = HyperPodPolicy(name="acme", rules=[NamePrefix("acme-")]).evaluate(cluster)
    assert all(type(v) is Finding for v in found)
    assert found[0].message() == (
        "[ACME-GROUP-PREFIX] acme: Stack/Cluster: instance group 'controller': name does not "
        "start with 'acme-'. Fix: rename it to acme-controller"
    )


def test_custom_rules_run_after_the_built_in_ones() -> None:
    policy = HyperPodPolicy(require_vpc=True, rules=[NamePrefix("acme-")])
    found = policy.evaluate(facts(gpu(), has_vpc=False))
    assert ids(found) == [
        ("HPP-VPC", None),
        ("ACME-GROUP-PREFIX", "controller"),
        ("ACME-GROUP-PREFIX", "gpu"),
    ]
    assert isinstance(NamePrefix("x"), PolicyRule)


# -- the aspect, end to end ---------------------------------------------------------------
#
# A policy's errors are its node validation's result: they fail every synth, whatever the
# app's feature flags, and no template is written (tests/support/synth_result.py).


def synth_report(app: App, outdir: Path) -> tuple[bool, Reported]:
    """Synthesize; return whether it succeeded and the annotations (see :func:`synth`)."""
    result = synth(app, outdir)
    return result.succeeded, result.found


def of_rule(found: Reported, rule: str, path: str | None = None) -> Reported:
    return [r for r in found if r[2].startswith(f"[{rule}]") and path in (None, r[1])]


def infos(construct: HyperPodSlurmCluster) -> list[str]:
    return [str(entry.data) for entry in construct.node.metadata if entry.type == "aws:cdk:info"]


def cluster(stack: Stack, *groups: InstanceGroup, **kwargs: Any) -> HyperPodSlurmCluster:
    return HyperPodSlurmCluster(stack, "Cluster", instance_groups=[CONTROLLER, *groups], **kwargs)


def isolated_vpc(stack: Stack) -> dict[str, Any]:
    """An imported VPC (cheap: no resources) with one isolated subnet."""
    vpc = ec2.Vpc.from_vpc_attributes(
        stack,
        "Vpc",
        vpc_id="vpc-0example",
        availability_zones=["us-east-1a"],
        isolated_subnet_ids=["subnet-0example"],
    )
    return {
        "vpc": vpc,
        "vpc_subnets": ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED),
    }


@dataclasses.dataclass
class Scenarios:
    succeeded: bool
    found: Reported
    error: str
    policy: HyperPodPolicy
    second: HyperPodPolicy
    clusters: dict[str, HyperPodSlurmCluster]


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> Scenarios:
    """One app, one stack per scenario, synthesized once."""
    outdir = tmp_path_factory.mktemp("policy.out")
    app = new_app(outdir=str(outdir))
    policy = full_policy(severities={"HPP-TAGS": PolicySeverity.WARNING})
    Aspects.of(app).add(policy)
    clusters: dict[str, HyperPodSlurmCluster] = {}

    stack = Stack(app, "Compliant")
    clusters["Compliant"] = cluster(stack, gpu(), tags={"team": "nlp"}, **isolated_vpc(stack))

    clusters["Broken"] = cluster(
        Stack(app, "Broken"),
        gpu(
            instance_type=T.ML_P4D_24XLARGE,
            instance_count=20,
            min_instance_count=10,
            storage=(InstanceStorage.ebs(volume_size=Size.gibibytes(10)),),
        ),
    )

    stack = Stack(app, "TaggedByApp")
    clusters["TaggedByApp"] = cluster(stack, gpu())
    Tags.of(stack).add("team", "vision")  # applied by a Tags aspect at synth

    stack = Stack(app, "Exempt")
    clusters["Exempt"] = cluster(stack, gpu(), tags={"team": "nlp"})
    HyperPodPolicy.exempt(stack, "HPP-VPC", reason="sandbox account without a VPC")

    stack = Stack(app, "GroupExempt")
    clusters["GroupExempt"] = cluster(
        stack,
        gpu(deep_health_checks=()),
        InstanceGroup.compute(
            "gpu2",
            instance_type=T.ML_P5_48XLARGE,
            partition="gpu2",
            instance_count=2,
            min_instance_count=2,
        ),
        tags={"team": "nlp"},
        **isolated_vpc(stack),
    )
    HyperPodPolicy.exempt(stack, "HPP-DEEP-HEALTH", group="gpu", reason="burn-in run")

    stack = Stack(app, "Acknowledged")
    clusters["Acknowledged"] = cluster(stack, gpu(), **isolated_vpc(stack))
    Annotations.of(clusters["Acknowledged"]).acknowledge_warning(
        "hyperpod-policy:HPP-TAGS", "tags come from the account baseline"
    )

    # The same policy added again on a stack, and a second policy on that stack only.
    stack = Stack(app, "Twice")
    clusters["Twice"] = cluster(stack, gpu(), tags={"team": "nlp"}, **isolated_vpc(stack))
    Aspects.of(stack).add(policy)
    second = HyperPodPolicy(
        name="stack-only", max_instance_count=5, severity=PolicySeverity.WARNING
    )
    Aspects.of(stack).add(second)

    result = synth(app, outdir)
    return Scenarios(result.succeeded, result.found, result.error, policy, second, clusters)


def test_error_violations_fail_the_synth(scenarios: Scenarios) -> None:
    assert scenarios.succeeded is False
    errors = [(path, message) for severity, path, message in scenarios.found if severity == "error"]
    assert len(errors) == 7  # Broken: five rules; TaggedByApp (no VPC), GroupExempt: one each
    # Each is the validation's own error (not only an annotation, which a plain app without
    # cdk.json's annotationsInValidationReport flag would write into a template and exit 0).
    for path, message in errors:
        assert f"[{path}] {message}" in scenarios.error


def test_a_second_synth_fails_again(tmp_path: Path) -> None:
    """The policy's validation runs once per cluster, and still fails every later synth."""
    app = new_app(outdir=str(tmp_path))
    built = cluster(Stack(app, "Again"), gpu())
    Aspects.of(app).add(HyperPodPolicy(max_instance_count=2))
    first, second = synth(app, tmp_path), synth(app, tmp_path)
    assert not first.succeeded and not second.succeeded
    assert "[HPP-MAX-COUNT]" in first.error and "[HPP-MAX-COUNT]" in second.error
    errors = [e for e in built.node.metadata if e.type == "aws:cdk:error"]
    assert len(errors) == 1, "the annotation is added once"


def test_a_compliant_cluster_gets_no_annotations(scenarios: Scenarios) -> None:
    assert [r for r in scenarios.found if r[1] == "Compliant/Cluster"] == []
    assert [v for v in scenarios.policy.violations if v.path == "Compliant/Cluster"] == []


def test_violations_name_rule_group_and_fix_not_the_path(scenarios: Scenarios) -> None:
    found = [r for r in scenarios.found if r[1] == "Broken/Cluster"]
    by_rule = {message.split("]")[0][1:]: (severity, message) for severity, _, message in found}
    assert set(by_rule) == {
        "HPP-INSTANCE-TYPE",
        "HPP-MAX-COUNT",
        "HPP-MIN-FLOOR",
        "HPP-EBS-KMS",
        "HPP-TAGS",
        "HPP-VPC",
    }
    assert {rule: severity for rule, (severity, _) in by_rule.items()} == {
        "HPP-INSTANCE-TYPE": "error",
        "HPP-MAX-COUNT": "error",
        "HPP-MIN-FLOOR": "error",
        "HPP-EBS-KMS": "error",
        "HPP-TAGS": "warning",
        "HPP-VPC": "error",
    }
    assert by_rule["HPP-MAX-COUNT"][1] == (
        "[HPP-MAX-COUNT] acme: instance group 'gpu': instance_count 20 is "
        "above the maximum of 16 per instance group. Fix: lower instance_count to at most 16, "
        "or split the instances over several groups or clusters"
    )


def test_tags_from_tags_of_count(scenarios: Scenarios) -> None:
    assert of_rule(scenarios.found, "HPP-TAGS", "TaggedByApp/Cluster") == []
    assert of_rule(scenarios.found, "HPP-TAGS", "Broken/Cluster") != []


def test_tags_added_to_the_app_after_the_policy_count(tmp_path: Path) -> None:
    app = new_app(outdir=str(tmp_path))
    Aspects.of(app).add(
        HyperPodPolicy(
            required_tags={"team": ["nlp"], "env": None}, severity=PolicySeverity.WARNING
        )
    )
    cluster(Stack(app, "AppTags"), gpu(), tags={"env": "dev"})
    Tags.of(app).add("team", "nlp")  # after the policy, at the app: still seen
    succeeded, found = synth_report(app, tmp_path)
    assert succeeded
    assert of_rule(found, "HPP-TAGS") == []


def test_an_exemption_turns_the_error_into_info_with_the_reason(scenarios: Scenarios) -> None:
    assert of_rule(scenarios.found, "HPP-VPC", "Exempt/Cluster") == []
    (info,) = [m for m in infos(scenarios.clusters["Exempt"]) if m.startswith("[HPP-VPC]")]
    assert info.endswith("(exempted: sandbox account without a VPC)")
    (recorded,) = [v for v in scenarios.policy.violations if v.path == "Exempt/Cluster"]
    assert recorded.exemption == "sandbox account without a VPC"


def test_a_group_exemption_covers_only_that_group(scenarios: Scenarios) -> None:
    reported = of_rule(scenarios.found, "HPP-DEEP-HEALTH", "GroupExempt/Cluster")
    assert [
        (severity, "instance group 'gpu2'" in message) for severity, _, message in reported
    ] == [("error", True)]
    (info,) = [m for m in infos(scenarios.clusters["GroupExempt"]) if "HPP-DEEP-HEALTH" in m]
    assert "instance group 'gpu'" in info and "(exempted: burn-in run)" in info


def test_an_acknowledged_warning_is_not_reported(scenarios: Scenarios) -> None:
    assert [r for r in scenarios.found if r[1] == "Acknowledged/Cluster"] == []
    # The policy still records it.
    assert ids(v for v in scenarios.policy.violations if v.path == "Acknowledged/Cluster") == [
        ("HPP-TAGS", None)
    ]


def test_each_cluster_is_checked_once_per_policy(scenarios: Scenarios) -> None:
    found = [r for r in scenarios.found if r[1] == "Twice/Cluster"]
    assert found == [
        (
            "warning",
            "Twice/Cluster",
            "[HPP-MAX-COUNT] stack-only: instance group 'gpu': instance_count 10 "
            "is above the maximum of 5 per instance group. Fix: lower instance_count to at most 5, "
            "or split the instances over several groups or clusters",
        )
    ]
    assert [v.path for v in scenarios.second.violations] == ["Twice/Cluster"]


def test_cluster_facts_read_the_construct() -> None:
    app = new_app()
    stack = Stack(app, "Facts")
    with_vpc = cluster(stack, gpu(), tags={"team": "nlp"}, **isolated_vpc(stack))
    read = ClusterFacts.of(with_vpc)
    assert (read.path, read.has_vpc, dict(read.tags)) == ("Facts/Cluster", True, {})
    assert [g.name for g in read.groups] == ["controller", "gpu"]
    app.synth()  # the tags= prop is applied by a Tags aspect at synth
    assert dict(ClusterFacts.of(with_vpc).tags) == {"team": "nlp"}
    assert ClusterFacts.of(cluster(Stack(app, "NoVpc"), gpu())).has_vpc is False


def test_exempt_needs_a_reason() -> None:
    with pytest.raises(ValueError, match="give the reason"):
        HyperPodPolicy.exempt(Stack(new_app(), "S"), "HPP-VPC", reason=" ")


def test_one_policy_object_checks_the_clusters_of_several_apps() -> None:
    policy = HyperPodPolicy(name="shared", require_vpc=True, severity=PolicySeverity.WARNING)
    for _ in range(2):
        app = new_app()
        Aspects.of(app).add(policy)
        cluster(Stack(app, "S"), gpu())  # the same path in both apps
        app.synth()
    assert [(v.path, v.rule_id) for v in policy.violations] == [("S/Cluster", "HPP-VPC")] * 2
    assert all(type(v.rule_id) is str for v in policy.violations)
