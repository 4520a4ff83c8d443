"""``preflight``: each gated group's minimum against the account's SageMaker quotas, its other
clusters and the group's training plan.

Inputs are the example app's synthesized templates (and, for training plans, an app synthesized
here); the account answers through real boto3 clients (:mod:`tests.support.account_fake`:
botocore's models validate every answer, botocore parses and retries).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import pytest
from aws_cdk.cx_api import CloudAssembly

from hyperpod_constructs.__main__ import _parser
from hyperpod_constructs.tools.preflight.cli import run_preflight
from hyperpod_constructs.tools.preflight.quotas import Kind, matches
from tests.conftest import new_app
from tests.support.account_fake import (
    ACROSS_CLUSTERS,
    CLUSTER_USAGE,
    DISTRACTORS,
    PER_CLUSTER,
    FakeAccount,
    always,
    group,
    plan,
    plan_arn,
    quota,
)
from tests.support.clock import VirtualClock, patch_botocore_retry_sleep
from tests.support.groups import Groups

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
P5 = "ml.p5.48xlarge"
FSDP = "FsdpTraining"
"""The example stack: controller ml.m5.2xlarge 1, login ml.m5.xlarge 1, gpu ml.p5.48xlarge 16
of 16 gated; cluster fsdp-train."""


@pytest.fixture(autouse=True)
def _virtual_retry_sleep(monkeypatch: pytest.MonkeyPatch) -> Iterator[VirtualClock]:
    clock = VirtualClock()
    patch_botocore_retry_sleep(monkeypatch, clock)
    yield clock


@pytest.fixture(scope="module")
def cdk_out(example_assembly: CloudAssembly) -> str:
    return str(example_assembly.directory)


def roomy(**values: float) -> list[dict[str, Any]]:
    """Applied quotas with room for the FsdpTraining stack, ``values`` overriding (by name),
    among quotas of the same service that must not match."""
    named = {
        CLUSTER_USAGE.format(P5): 32.0,
        CLUSTER_USAGE.format("ml.m5.2xlarge"): 8.0,
        PER_CLUSTER: 64.0,
        ACROSS_CLUSTERS: 128.0,
        **{name: 0.0 for name in DISTRACTORS},
    }
    named.update({k.replace("_", " "): v for k, v in values.items()})
    return [quota(name, value) for name, value in named.items()]


def run(cdk_out: str, account: FakeAccount, *extra: str) -> tuple[int, dict[str, Any], str]:
    args = _parser().parse_args(["preflight", "--app", cdk_out, "--json", *extra])
    out, err = io.StringIO(), io.StringIO()
    code = run_preflight(args, stdout=out, stderr=err, session=account.session(), now=lambda: NOW)
    assert "Traceback" not in err.getvalue()
    return code, json.loads(out.getvalue()) if out.getvalue() else {}, err.getvalue()


def run_text(cdk_out: str, account: FakeAccount, *extra: str) -> tuple[int, str]:
    args = _parser().parse_args(["preflight", "--app", cdk_out, *extra])
    out = io.StringIO()
    code = run_preflight(
        args, stdout=out, stderr=io.StringIO(), session=account.session(), now=lambda: NOW
    )
    return code, out.getvalue()


def gpu(document: dict[str, Any], name: str = "gpu") -> dict[str, Any]:
    (found,) = [g for g in document["groups"] if g["group"] == name]
    return found


def check(found: dict[str, Any], subject: str) -> dict[str, Any]:
    (hit,) = [c for c in found["checks"] if c["subject"] == subject]
    return hit


# -- quota names --------------------------------------------------------------------------
def test_the_quota_names_match_cluster_usage_only() -> None:
    assert matches("ml.p5.48xlarge for cluster usage", Kind.INSTANCE_TYPE, P5)
    assert matches("ML.P5.48XLARGE  for  cluster usage", Kind.INSTANCE_TYPE, P5)
    assert not matches("ml.p5.48xlarge for cluster usage", Kind.INSTANCE_TYPE, "ml.p5e.48xlarge")
    assert matches(PER_CLUSTER, Kind.PER_CLUSTER)
    assert matches(PER_CLUSTER.replace("number instances", "number of instances"), Kind.PER_CLUSTER)
    assert matches(ACROSS_CLUSTERS, Kind.ACROSS_CLUSTERS)
    for name in DISTRACTORS:
        assert not any(matches(name, kind, P5) for kind in Kind), name


# -- quotas against the minimum -----------------------------------------------------------
def test_quotas_exactly_at_the_minimum_are_met(cdk_out: str) -> None:
    # 16 p5 for the gated group; 18 instances in the cluster (controller and login count).
    account = FakeAccount(
        applied=roomy(**{CLUSTER_USAGE.format(P5): 16, PER_CLUSTER: 18, ACROSS_CLUSTERS: 18})
    )
    code, document, _ = run(cdk_out, account, "--stack", FSDP)
    assert code == 0, document
    found = gpu(document)
    assert found["verdict"] == "met" and found["minimum"] == 16
    usage = check(found, CLUSTER_USAGE.format(P5))
    assert (usage["limit"], usage["others"], usage["needed"]) == (16, 0, 16)
    assert check(found, PER_CLUSTER)["needed"] == 18
    assert document["schema_version"] == 1 and document["exit_code"] == 0


@pytest.mark.parametrize(
    "name", [CLUSTER_USAGE.format(P5), PER_CLUSTER, ACROSS_CLUSTERS], ids=["type", "cluster", "all"]
)
def test_one_below_the_minimum_cannot_be_met(cdk_out: str, name: str) -> None:
    at = {CLUSTER_USAGE.format(P5): 16, PER_CLUSTER: 18, ACROSS_CLUSTERS: 18}
    account = FakeAccount(applied=roomy(**{**at, name: at[name] - 1}))
    code, document, _ = run(cdk_out, account, "--stack", FSDP)
    assert code == 3
    found = gpu(document)
    assert found["verdict"] == "short" and found["short_by"] == 1
    short = check(found, name)
    assert short["verdict"] == "short" and short["short_by"] == 1
    assert name in short["fix"] and short["quota_code"] in short["fix"]
    assert "lower the minimum to 15" in short["fix"]


def test_other_clusters_use_part_of_the_quota(cdk_out: str) -> None:
    # Another cluster holds 2 p5 and is launching 2 more: 4 of the 20 are taken.
    account = FakeAccount(
        applied=roomy(**{CLUSTER_USAGE.format(P5): 20}),
        clusters={"research": [group("a", "ml.m5.xlarge", 1), group("b", P5, 2, 4)]},
    )
    code, document, _ = run(cdk_out, account, "--stack", FSDP)
    assert code == 0
    assert check(gpu(document), CLUSTER_USAGE.format(P5))["others"] == 4
    account.clusters["more"] = [group("c", P5, 1)]
    code, document, _ = run(cdk_out, account, "--stack", FSDP)
    assert code == 3
    usage = check(gpu(document), CLUSTER_USAGE.format(P5))
    assert (usage["others"], usage["short_by"]) == (5, 1)
    assert check(gpu(document), ACROSS_CLUSTERS)["others"] == 6


def test_an_update_counts_only_what_it_adds(cdk_out: str) -> None:
    # The deployed fsdp-train already holds its 16 p5: the quota of 16 is not exceeded.
    deployed = [group("controller", "ml.m5.2xlarge", 1), group("gpu", P5, 16)]
    account = FakeAccount(
        applied=roomy(**{CLUSTER_USAGE.format(P5): 16, ACROSS_CLUSTERS: 18}),
        clusters={"fsdp-train": deployed},
    )
    code, document, _ = run(cdk_out, account, "--stack", FSDP)
    assert code == 0, document
    assert check(gpu(document), CLUSTER_USAGE.format(P5))["others"] == 0


def test_a_cluster_replaced_under_a_new_name_counts_both(cdk_out: str) -> None:
    # The stack's cluster was deployed as fsdp-train-v1; the app now names it fsdp-train, so
    # CloudFormation creates the new one before it deletes the old.
    account = FakeAccount(
        applied=roomy(**{CLUSTER_USAGE.format(P5): 16}),
        clusters={"fsdp-train-v1": [group("gpu", P5, 16)]},
    )
    code, document, _ = run(cdk_out, account, "--stack", FSDP)
    assert code == 3
    usage = check(gpu(document), CLUSTER_USAGE.format(P5))
    assert (usage["others"], usage["short_by"]) == (16, 16)


def test_every_page_is_read(cdk_out: str) -> None:
    # The p5 quota is on the last page of five; the other cluster on the last of two.
    applied = roomy(**{CLUSTER_USAGE.format(P5): 20})
    applied.append(applied.pop(0))
    account = FakeAccount(
        applied=applied,
        clusters={"a": [], "b": [], "c": [group("gpu", P5, 5)]},
    )
    code, document, _ = run(cdk_out, account, "--stack", FSDP)
    assert account.count("ListServiceQuotas") == 5
    assert account.count("ListClusters") == 2
    assert code == 3 and check(gpu(document), CLUSTER_USAGE.format(P5))["short_by"] == 1


def test_the_aws_default_stands_in_for_a_missing_applied_value(cdk_out: str) -> None:
    applied = [q for q in roomy() if q["QuotaName"] != CLUSTER_USAGE.format(P5)]
    account = FakeAccount(applied=applied, defaults=[quota(CLUSTER_USAGE.format(P5), 8)])
    code, document, _ = run(cdk_out, account, "--stack", FSDP)
    assert code == 3
    usage = check(gpu(document), CLUSTER_USAGE.format(P5))
    assert usage["limit"] == 8 and "AWS default" in usage["detail"]


def test_a_quota_the_account_does_not_list_is_unknown(cdk_out: str) -> None:
    applied = [q for q in roomy() if q["QuotaName"] != CLUSTER_USAGE.format(P5)]
    code, document, _ = run(cdk_out, FakeAccount(applied=applied), "--stack", FSDP)
    assert code == 3
    assert gpu(document)["verdict"] == "unknown"


# -- answers not read ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "operation",
    ["ListServiceQuotas", "ListAWSDefaultServiceQuotas", "ListClusters", "DescribeCluster"],
)
def test_access_denied_is_unknown_never_met(cdk_out: str, operation: str) -> None:
    applied = roomy()
    if operation == "ListAWSDefaultServiceQuotas":  # only read for a quota without applied value
        applied = [q for q in applied if q["QuotaName"] != CLUSTER_USAGE.format(P5)]
    account = FakeAccount(
        applied=applied,
        defaults=[quota(CLUSTER_USAGE.format(P5), 64)],
        clusters={"other": [group("gpu", P5, 1)]},
        faults={operation: always("AccessDeniedException", message="not authorized")},
    )
    code, document, _ = run(cdk_out, account, "--stack", FSDP)
    assert code == 3
    found = gpu(document)
    assert found["verdict"] == "unknown"
    assert any(
        c["verdict"] == "unknown"
        and operation in c["detail"]
        and "AccessDeniedException" in c["detail"]
        for c in found["checks"]
    )


def test_an_answer_that_does_not_fit_aws_model_is_unknown() -> None:
    from hyperpod_constructs.tools.preflight.aws import AccountReader, make_clients
    from hyperpod_constructs.tools.preflight.facts import Unread

    reader = AccountReader(make_clients(region=None, session=FakeAccount().session()))
    for answer in ({"Quotas": "no list"}, {"Quotas": [{"QuotaName": 4}]}, [], {"NextToken": 1}):
        read = reader._read(
            "service-quotas:ListServiceQuotas", lambda a=answer: a, "ListServiceQuotas"
        )
        assert isinstance(read, Unread) and "does not fit AWS's model" in read.reason, answer


def test_throttling_is_retried_then_unknown(cdk_out: str) -> None:
    account = FakeAccount(
        applied=roomy(),
        faults={"ListClusters": always("ThrottlingException", message="Rate exceeded")},
    )
    code, document, _ = run(cdk_out, account, "--stack", FSDP)
    # botocore's standard mode: max_attempts=4 retries after the first attempt.
    assert account.count("ListClusters") == 5
    assert code == 3 and gpu(document)["verdict"] == "unknown"


def test_a_throttling_burst_is_ridden_out(cdk_out: str) -> None:
    left = [2]

    def twice(_operation: str, _request: dict[str, Any]) -> None:
        if left[0]:
            left[0] -= 1
            always("ThrottlingException")(_operation, _request)

    account = FakeAccount(applied=roomy(), faults={"ListServiceQuotas": twice})
    code, document, _ = run(cdk_out, account, "--stack", FSDP)
    assert code == 0 and gpu(document)["verdict"] == "met"


def test_text_names_the_quota_the_numbers_and_the_fix(cdk_out: str) -> None:
    account = FakeAccount(
        applied=roomy(**{CLUSTER_USAGE.format(P5): 12}), clusters={"x": [group("g", P5, 2)]}
    )
    code, text = run_text(cdk_out, account, "--stack", FSDP)
    assert code == 3
    assert "group gpu (ml.p5.48xlarge), minimum 16: CANNOT BE MET (6 short)" in text
    assert "quota 12: other clusters hold 2, this cluster needs 16 of ml.p5.48xlarge" in text
    assert "request a quota increase of 'ml.p5.48xlarge for cluster usage'" in text
    assert text.rstrip().endswith("(0 met, 1 cannot be met, 0 unknown)")


def test_the_guide_shows_what_the_command_prints(cdk_out: str) -> None:
    account = FakeAccount(
        applied=roomy(**{CLUSTER_USAGE.format(P5): 12}), clusters={"x": [group("g", P5, 2)]}
    )
    _, text = run_text(cdk_out, account, "--stack", FSDP)
    page = (Path(__file__).parent.parent / "docs" / "preflight.md").read_text()
    shown = page.split("## Sample output\n\n```text\n", 1)[1].split("```", 1)[0]
    assert shown == text


def test_every_gated_cluster_of_the_app(cdk_out: str) -> None:
    account = FakeAccount(
        applied=roomy(
            **{
                CLUSTER_USAGE.format("ml.p4d.24xlarge"): 8,
                CLUSTER_USAGE.format("ml.p5en.48xlarge"): 16,
                CLUSTER_USAGE.format(P5): 16 + 8,
            }
        )
    )
    code, document, _ = run(cdk_out, account)
    assert code == 0, [g for g in document["groups"] if g["verdict"] != "met"]
    assert {(g["stack"], g["group"], g["minimum"]) for g in document["groups"]} == {
        ("FsdpTraining", "gpu", 16),
        ("Heterogeneous", "gpu", 8),
        ("FsdpBlueprint", "train", 8),
        ("MegatronBlueprint", "train", 16),
    }


# -- training plans -----------------------------------------------------------------------
PLAN = "reserved-p5"
GROUPS = Groups(compute_type=__import__("hyperpod_constructs").HyperPodInstanceType.ML_P5_48XLARGE)


@pytest.fixture(scope="module")
def plan_app(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An app whose gated group (4 of 4) runs on a training plan."""
    from aws_cdk import Stack

    from hyperpod_constructs import HyperPodSlurmCluster

    outdir = tmp_path_factory.mktemp("plan") / "cdk.out"
    app = new_app(outdir=str(outdir))
    HyperPodSlurmCluster(
        Stack(app, "OnPlan"),
        "Cluster",
        cluster_name="on-plan",
        instance_groups=[
            GROUPS.controller(),
            GROUPS.compute("gpu", 4, 4, training_plan_arn=plan_arn(PLAN)),
        ],
    )
    app.synth()
    return str(outdir)


def on_plan(
    status: str, available: int = 4, *, start: timedelta, end: timedelta, **more: Any
) -> FakeAccount:
    return FakeAccount(
        applied=roomy(),
        plans={PLAN: plan(PLAN, status, available, start=NOW + start, end=NOW + end, **more)},
    )


@pytest.mark.parametrize(
    ("status", "available", "start", "end", "verdict"),
    [
        ("Active", 4, -timedelta(days=1), timedelta(days=7), "met"),
        ("Active", 3, -timedelta(days=1), timedelta(days=7), "short"),
        ("Active", 4, -timedelta(days=1), timedelta(hours=2), "short"),
        ("Scheduled", 4, timedelta(hours=1), timedelta(days=7), "met"),
        ("Scheduled", 4, timedelta(hours=5), timedelta(days=7), "short"),
        ("Pending", 4, timedelta(hours=1), timedelta(days=7), "short"),
        ("Expired", 4, -timedelta(days=8), -timedelta(days=1), "short"),
        ("Failed", 4, timedelta(hours=1), timedelta(days=7), "short"),
    ],
    ids=[
        "active",
        "too-few",
        "ends-in-window",
        "starts-in-window",
        "starts-later",
        "pending",
        "expired",
        "failed",
    ],
)
def test_a_training_plan_against_the_window(
    plan_app: str, status: str, available: int, start: timedelta, end: timedelta, verdict: str
) -> None:
    account = on_plan(status, available, start=start, end=end)
    code, document, _ = run(plan_app, account)
    found = gpu(document)
    assert found["training_plan_arn"] == plan_arn(PLAN)
    plan_check = check(found, PLAN)
    assert plan_check["verdict"] == verdict, plan_check
    assert code == (0 if verdict == "met" else 3)
    # A group on a plan is not held to the on-demand quota of its type.
    assert not any(c["subject"] == CLUSTER_USAGE.format(P5) for c in found["checks"])


def test_a_plan_this_cluster_already_uses_counts_its_instances(plan_app: str) -> None:
    account = on_plan("Active", 1, start=-timedelta(days=1), end=timedelta(days=7))
    account.clusters["on-plan"] = [group("gpu", P5, 3, plan=plan_arn(PLAN))]
    code, document, _ = run(plan_app, account)
    assert code == 0, document


def test_a_plan_for_other_resources_or_types_cannot_serve(plan_app: str) -> None:
    jobs = on_plan(
        "Active", start=-timedelta(days=1), end=timedelta(days=7), targets=("training-job",)
    )
    assert run(plan_app, jobs)[0] == 3
    other = on_plan(
        "Active", start=-timedelta(days=1), end=timedelta(days=7), instance_type="ml.p4d.24xlarge"
    )
    assert run(plan_app, other)[0] == 3


def test_a_plan_not_read_is_unknown(plan_app: str) -> None:
    account = on_plan("Active", start=-timedelta(days=1), end=timedelta(days=7))
    account.faults["DescribeTrainingPlan"] = always("AccessDeniedException")
    code, document, _ = run(plan_app, account)
    assert code == 3 and gpu(document)["verdict"] == "unknown"


def test_nothing_gated_is_nothing_to_check(example_assembly: CloudAssembly) -> None:
    account = FakeAccount(faults={op: always("AccessDeniedException") for op in ("ListClusters",)})
    code, text = run_text(str(example_assembly.directory), account, "--stack", "MinimalDev")
    assert code == 0 and "nothing to check" in text
    assert account.count("ListServiceQuotas") == 0


def test_the_default_assembly_is_cdk_out_here(
    cdk_out: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "cdk.out").symlink_to(cdk_out)
    monkeypatch.chdir(tmp_path)
    account = FakeAccount(applied=roomy(**{CLUSTER_USAGE.format(P5): 7}))
    for argv in (["preflight", "--json"], ["preflight", "--json", "--stack", FSDP]):
        out = io.StringIO()
        code = run_preflight(_parser().parse_args(argv), stdout=out, session=account.session())
        assert code == 3
        assert {g["stack"] for g in json.loads(out.getvalue())["groups"]} >= {FSDP}
    assert account.count("GetTemplate") == 0


def test_a_missing_assembly_or_stack_is_a_usage_error(tmp_path: Path, cdk_out: str) -> None:
    code, _, err = run(str(tmp_path / "nowhere"), FakeAccount())
    assert code == 2 and err.startswith("error: ")
    code, _, err = run(cdk_out, FakeAccount(), "--stack", "FsdpTrainin")  # never "nothing gated"
    assert code == 2 and err.startswith("error: no stack FsdpTrainin in ")


def test_a_deployed_stack_is_read_from_aws(
    example_templates: dict[str, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no cdk.out here: the stack is read from AWS
    account = FakeAccount(
        applied=roomy(**{CLUSTER_USAGE.format(P5): 15}), stacks={FSDP: example_templates[FSDP]}
    )
    args = _parser().parse_args(["preflight", "--stack", FSDP, "--json"])
    out = io.StringIO()
    code = run_preflight(args, stdout=out, stderr=io.StringIO(), session=account.session())
    assert code == 3
    assert gpu(json.loads(out.getvalue()))["short_by"] == 1
    assert account.count("GetTemplate") == 1 and account.count("DescribeStacks") == 1


def test_a_generated_cluster_name_is_read_from_the_stack(
    example_templates: dict[str, dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The example's template without its ClusterName: CloudFormation named the deployed
    # cluster, which holds the 16 p5 already; only DescribeStackResource tells it is this one.
    template = json.loads(json.dumps(example_templates[FSDP]))
    (logical_id,) = [
        k for k, r in template["Resources"].items() if r["Type"] == "AWS::SageMaker::Cluster"
    ]
    del template["Resources"][logical_id]["Properties"]["ClusterName"]
    monkeypatch.chdir(tmp_path)
    account = FakeAccount(
        applied=roomy(**{CLUSTER_USAGE.format(P5): 16, ACROSS_CLUSTERS: 18}),
        stacks={FSDP: template},
        physical={logical_id: "ClusterEB0386A7-abcdef"},
        clusters={"ClusterEB0386A7-abcdef": [group("gpu", P5, 16)]},
    )
    args = _parser().parse_args(["preflight", "--stack", FSDP, "--json"])
    out = io.StringIO()
    assert run_preflight(args, stdout=out, session=account.session()) == 0, out.getvalue()
    assert account.count("DescribeStackResource") == 1


# -- the IAM it needs ---------------------------------------------------------------------
def _iam_prefix(service: str) -> str:
    import botocore.session

    metadata = botocore.session.get_session().get_service_model(service).metadata
    return str(metadata.get("signingName") or metadata["endpointPrefix"])


def test_the_policy_grants_every_call_and_names_only_real_operations(
    cdk_out: str,
    plan_app: str,
    example_templates: dict[str, dict[str, Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import botocore.session

    from hyperpod_constructs.tools.preflight.permissions import PREFLIGHT_ACTIONS, preflight_policy

    # Every action is an operation of the service botocore signs with that prefix.
    session = botocore.session.get_session()
    services = {
        _iam_prefix(name): name for name in ("service-quotas", "sagemaker", "cloudformation")
    }
    for action in PREFLIGHT_ACTIONS:
        prefix, operation = action.split(":")
        assert operation in session.get_service_model(services[prefix]).operation_names, action
    # Every call of runs that take every path is granted.
    seen: set[str] = set()
    applied = [q for q in roomy() if q["QuotaName"] != CLUSTER_USAGE.format(P5)]
    runs = [
        (
            cdk_out,
            FakeAccount(applied=applied, defaults=roomy(), clusters={"x": [group("g", P5, 1)]}),
        ),
        (plan_app, on_plan("Active", start=-timedelta(days=1), end=timedelta(days=7))),
    ]
    for app, account in runs:
        run(app, account)
        seen |= {
            f"{_iam_prefix(s)}:{op}" for s, fake in account.fakes.items() for op, _ in fake.attempts
        }
    monkeypatch.chdir(tmp_path)
    deployed = FakeAccount(applied=roomy(), stacks={FSDP: example_templates[FSDP]})
    run_preflight(
        _parser().parse_args(["preflight", "--stack", FSDP]),
        stdout=io.StringIO(),
        session=deployed.session(),
    )
    seen |= {
        f"{_iam_prefix(s)}:{op}" for s, fake in deployed.fakes.items() for op, _ in fake.attempts
    }
    assert seen | {"cloudformation:DescribeStackResource"} == set(PREFLIGHT_ACTIONS)
    # The guide shows the same document.
    page = (Path(__file__).parent.parent / "docs" / "preflight.md").read_text()
    block = page.split("```json\n", 1)[1].split("```", 1)[0]
    assert json.loads(block) == preflight_policy()


# -- watch --capacity -----------------------------------------------------------------------
def _described(current: int) -> dict[str, Any]:
    return {
        "ClusterName": "fsdp-train",
        "ClusterStatus": "Creating",
        "CreationTime": NOW - timedelta(minutes=30),
        "InstanceGroups": [
            group("controller", "ml.m5.2xlarge", 1),
            group("login", "ml.m5.xlarge", 1),
            group("gpu", P5, current, 16),
        ],
    }


def _fsdp_target(cdk_out: str) -> Any:
    from hyperpod_constructs.tools.watch.target import load_targets

    (target,) = [t for t in load_targets(cdk_out) if t.stack_name == FSDP]
    return target


def test_watch_says_whether_waiting_can_help(cdk_out: str) -> None:
    from hyperpod_constructs.tools.preflight.watching import capacity_line

    target = _fsdp_target(cdk_out)
    # The watched cluster itself holds 4 p5 already: not counted as another cluster's.
    short = FakeAccount(
        applied=roomy(**{CLUSTER_USAGE.format(P5): 14}),
        clusters={"fsdp-train": _described(4)["InstanceGroups"], "x": [group("g", P5, 2)]},
    )
    line = capacity_line(target, _described(4), {"gpu"}, region=None, session=short.session())
    assert line.startswith("capacity: gpu (minimum 16): ml.p5.48xlarge for cluster usage:")
    assert "other clusters hold 2" in line and "4 short; waiting cannot help" in line
    room = FakeAccount(applied=roomy(), clusters={"fsdp-train": []})
    line = capacity_line(target, _described(4), {"gpu"}, region=None, session=room.session())
    assert line.endswith("waiting for capacity can help")
    denied = FakeAccount(applied=roomy(), faults={"ListClusters": always("AccessDeniedException")})
    line = capacity_line(target, _described(4), {"gpu"}, region=None, session=denied.session())
    assert "AccessDeniedException" in line and "unknown" in line


class _Stop(Exception):
    pass


def test_watch_reads_capacity_once_and_shows_it_on_every_refresh_after(cdk_out: str) -> None:
    from hyperpod_constructs.tools.watch.cli import _loop
    from hyperpod_constructs.tools.watch.model import Observation, ResourceState, StackState

    target = _fsdp_target(cdk_out)
    assert target.wait_condition_id is not None
    stack = StackState(
        "CREATE_IN_PROGRESS",
        None,
        {
            target.wait_condition_id: ResourceState("CREATE_IN_PROGRESS"),
            target.cluster_logical_id: ResourceState("CREATE_COMPLETE", physical_id="fsdp-train"),
        },
    )
    counts = iter([2, 4, 5, 6])
    shown: list[Any] = []
    calls: list[set[str]] = []

    class Reader:
        def observe(self, _target: Any, now: Any) -> Observation:
            return Observation(time=now(), stack=stack, cluster=_described(next(counts)))

    class Output:
        terminal = False

        def show(self, refresh: Any) -> None:
            shown.append(refresh)

    def sleep(_seconds: float) -> None:
        if len(shown) == 4:
            raise _Stop

    def capacity(described: Any, below: set[str]) -> str:
        calls.append(below)
        return "capacity: gpu ..."

    with pytest.raises(_Stop):
        _loop(
            target,
            cast(Any, Reader()),
            cast(Any, Output()),
            interval=60,
            sleep=sleep,
            now=lambda: NOW,
            capacity=capacity,
        )
    assert calls == [{"gpu"}]
    assert all(r.notes == ("capacity: gpu ...",) for r in shown)


def test_hostile_assemblies_are_one_line_and_exit_2(tmp_path: Path) -> None:
    """The folders ``summary`` and ``watch`` refuse (not JSON, too big, a FIFO, ...): one
    ``error:`` line, exit 2, before any AWS call."""
    from tests.test_cli_hostile import SUMMARY_INPUTS, assert_clean_failure

    for name, make in SUMMARY_INPUTS.items():
        folder = tmp_path / name
        folder.mkdir()
        argv = make(folder)
        account = FakeAccount(faults={op: always("AccessDenied") for op in ("ListClusters",)})
        args = _parser().parse_args(["preflight", "--app", *argv])
        out, err = io.StringIO(), io.StringIO()
        code = run_preflight(args, stdout=out, stderr=err, session=account.session())
        assert_clean_failure(code, out.getvalue(), err.getvalue())
        assert not any(fake.attempts for fake in account.fakes.values()), name


def test_a_minimum_from_a_stack_parameter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In an assembly the parameter's value is not known before the deploy: unknown, never met.
    The deployed stack's value (DescribeStacks) is read with ``--stack``."""
    from tests.support.parameterized import parameterized_assembly

    assembly = parameterized_assembly("Params", cluster_name="params", outdir=str(tmp_path / "o"))
    code, document, _ = run(str(assembly.directory), FakeAccount(applied=roomy()))
    assert code == 3
    (check_,) = gpu(document)["checks"]
    assert check_["verdict"] == "unknown" and "GpuMin" in check_["detail"]
    monkeypatch.chdir(tmp_path)
    account = FakeAccount(
        applied=roomy(**{CLUSTER_USAGE.format(P5): 4}),
        stacks={"Params": assembly.get_stack_by_name("Params").template},
    )
    out = io.StringIO()
    args = _parser().parse_args(["preflight", "--stack", "Params", "--json"])
    assert run_preflight(args, stdout=out, session=account.session()) == 0, out.getvalue()
    assert gpu(json.loads(out.getvalue()))["minimum"] == 4  # GpuMin's deployed value


def test_a_flexible_group_may_use_the_room_of_each_of_its_types(tmp_path: Path) -> None:
    from aws_cdk import Stack

    from hyperpod_constructs import HyperPodInstanceType, HyperPodSlurmCluster

    app = new_app(outdir=str(tmp_path / "cdk.out"))
    HyperPodSlurmCluster(
        Stack(app, "Flexible"),
        "Cluster",
        cluster_name="flexible",
        instance_groups=[
            GROUPS.controller(),
            GROUPS.compute(
                "gpu",
                4,
                4,
                instance_type=None,
                instance_types=[
                    HyperPodInstanceType.ML_P5_48XLARGE,
                    HyperPodInstanceType.ML_P5EN_48XLARGE,
                ],
            ),
        ],
    )
    app.synth()
    p5en = CLUSTER_USAGE.format("ml.p5en.48xlarge")
    account = FakeAccount(applied=roomy(**{CLUSTER_USAGE.format(P5): 2, p5en: 2}))
    code, document, _ = run(str(tmp_path / "cdk.out"), account)
    assert code == 0, document
    assert gpu(document)["instance_types"] == [P5, "ml.p5en.48xlarge"]
    account = FakeAccount(applied=roomy(**{CLUSTER_USAGE.format(P5): 2, p5en: 1}))
    code, document, _ = run(str(tmp_path / "cdk.out"), account)
    assert code == 3 and gpu(document)["short_by"] == 1
