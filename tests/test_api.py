"""The public API of the top level: one list, small, lazily loaded, typed for mypy."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from aws_cdk import Stack
from aws_cdk import aws_iam as iam

import hyperpod_constructs
from hyperpod_constructs import HyperPodClusterBase, HyperPodSlurmCluster, IHyperPodCluster
from tests.conftest import ROOT, new_app, synth_template
from tests.template_utils import actions, as_dict, only, statement_resources, statements

INIT = ROOT / "hyperpod_constructs" / "__init__.py"


def type_checking_imports() -> dict[str, str]:
    """Name -> module of the ``if TYPE_CHECKING:`` imports of ``__init__.py``."""
    tree = ast.parse(INIT.read_text())
    (block,) = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name)
        if node.test.id == "TYPE_CHECKING"
    ]
    found: dict[str, str] = {}
    for statement in block.body:
        assert isinstance(statement, ast.ImportFrom)
        for alias in statement.names:
            # `X as X` marks an explicit re-export for mypy --strict.
            assert alias.asname == alias.name, alias.name
            found[alias.name] = "." * statement.level + (statement.module or "")
    return found


def test_all_is_the_export_table() -> None:
    """``__all__`` is derived from the export table: every name once, and the version."""
    exported = hyperpod_constructs.__all__
    assert sorted(exported) == sorted([*hyperpod_constructs._EXPORTS, "__version__"])
    assert len(exported) == len(set(exported))


def test_type_checking_imports_match_the_export_table() -> None:
    assert type_checking_imports() == hyperpod_constructs._EXPORTS


def test_the_export_table_is_read_from_the_type_checking_block() -> None:
    """A name added to (or removed from) the ``if TYPE_CHECKING:`` imports is added to (or
    removed from) the exports: the block is the one list."""
    source = INIT.read_text()
    line = "    from .enums import NodeType as NodeType\n"
    assert line in source
    added = source.replace(line, line + "    from .sizing import FsdpLayout as FsdpLayout\n")
    assert hyperpod_constructs._exports(added) == {
        **hyperpod_constructs._EXPORTS,
        "FsdpLayout": ".sizing",
    }
    removed = hyperpod_constructs._exports(source.replace(line, ""))
    assert set(removed) == set(hyperpod_constructs._EXPORTS) - {"NodeType"}


def test_dir_lists_every_export_before_any_is_loaded() -> None:
    """``dir()`` and the lazy loading, in a fresh interpreter: importing the package imports
    none of the modules behind its exports, nor aws_cdk."""
    script = (
        "import sys, hyperpod_constructs as h\n"
        "print(sorted(set(h.__all__) - set(dir(h))))\n"
        "print(sorted(m for m in sys.modules if m.startswith(('aws_cdk', 'hyperpod_constructs.'))"
        " and m != 'hyperpod_constructs._version'))\n"
        "print(h.InstanceGroup.__module__)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["[]", "[]", "hyperpod_constructs.instance_group"]


USER_APP = """
import hyperpod_constructs
from hyperpod_constructs import {names}

print(hyperpod_constructs.HyperPodSlurmCluster, hyperpod_constructs.__version__)
from hyperpod_constructs import evaluate_gate  # line 6: a name of the gate, not exported
print(hyperpod_constructs.FsdpLayout)  # line 7: a name of the sizing module, not exported
"""


def test_mypy_accepts_every_export_and_rejects_the_rest(tmp_path: Path) -> None:
    """A user's app under ``mypy --strict``: every exported name (and ``__version__``)
    imports, a name that is not exported is an error where it is used."""
    names = ", ".join(sorted(hyperpod_constructs._EXPORTS))
    app = tmp_path / "app.py"
    app.write_text(USER_APP.format(names=names))
    # Run from the repository: the project's mypy settings (strict) and its cache, which `make
    # test`'s mypy run has filled (aws-cdk-lib's stubs are not checked again); the package is
    # found as source (the editable install is an import hook mypy does not follow).
    result = subprocess.run(
        [sys.executable, "-m", "mypy", str(app)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    assert [line.split(":")[1] for line in errors] == ["6", "7"], result.stdout
    assert "evaluate_gate" in errors[0]
    assert "FsdpLayout" in errors[1]


PUBLIC_NAMES = [
    "AccountingDatabase",
    "AutoPatchStrategy",
    "BatchSize",
    "BatchSizeType",
    "CapacityType",
    "DeepHealthCheck",
    "Finding",
    "HyperPodClusterBase",
    "HyperPodInstanceType",
    "HyperPodSlurmCluster",
    "HyperPodValidationError",
    "IHyperPodCluster",
    "InstanceGroup",
    "InstanceStorage",
    "LifecycleScripts",
    "MinCountGate",
    "MinCountGateOptions",
    "NetworkInterfaceType",
    "NodeProvisioningMode",
    "NodeRecovery",
    "NodeType",
    "ScheduledUpdate",
    "SlurmConfigStrategy",
    "SlurmLayout",
    "__version__",
    "report_validation_errors",
]
"""The top level's public API as released (docs/versioning.md: removing a name is breaking).
Written out on purpose: the package derives its lists from one place, so only a list kept
apart from it can notice a name that one edit dropped."""


def test_the_public_names_are_the_released_ones() -> None:
    assert hyperpod_constructs.__all__ == sorted(PUBLIC_NAMES)
    for name in PUBLIC_NAMES:
        assert getattr(hyperpod_constructs, name) is not None, name


def test_the_top_level_is_small_and_holds_what_an_app_writes() -> None:
    names = set(hyperpod_constructs._EXPORTS)
    assert len(names) <= 25  # the constructs, their props/options and enums; nothing else
    assert {"HyperPodSlurmCluster", "InstanceGroup", "HyperPodInstanceType"} <= names
    internals = {"evaluate_gate", "GateDecision", "GroupRequirement", "HyperPodPolicy"}
    assert not names & internals


@pytest.mark.parametrize("name", sorted(hyperpod_constructs._EXPORTS))
def test_every_export_resolves_to_its_module(name: str) -> None:
    value = getattr(hyperpod_constructs, name)
    module = importlib.import_module(hyperpod_constructs._EXPORTS[name], "hyperpod_constructs")
    assert value is getattr(module, name)
    assert inspect.getdoc(value), f"{name} has no docstring"


@pytest.mark.parametrize(
    ("name", "package"),
    [
        ("FsdpLayout", "hyperpod_constructs.sizing"),
        ("HyperPodPolicy", "hyperpod_constructs.policy"),
        ("FsdpTrainingCluster", "hyperpod_constructs.blueprints"),
        ("evaluate_gate", "hyperpod_constructs.gate"),
        ("RULES", "hyperpod_constructs.validation"),
        ("summarize", "hyperpod_constructs.tools.summary"),
        ("convert_request", "hyperpod_constructs.tools.convert"),
        ("plan_stack", "hyperpod_constructs.tools.plan"),
    ],
)
def test_a_name_that_left_the_top_level_says_where_it_lives(name: str, package: str) -> None:
    with pytest.raises(AttributeError, match=f"import it from {package}$"):
        getattr(hyperpod_constructs, name)


def test_an_unknown_name_is_a_plain_attribute_error() -> None:
    with pytest.raises(AttributeError, match=r"has no attribute 'NoSuchThing'$"):
        hyperpod_constructs.NoSuchThing  # noqa: B018


# -- the cluster interface -----------------------------------------------------------------


def test_the_cluster_interface_carries_grant() -> None:
    arn = "arn:aws:sagemaker:us-east-1:111122223333:cluster/abcdef123456"

    def define(stack: Stack) -> None:
        cluster: IHyperPodCluster = HyperPodSlurmCluster.from_cluster_arn(stack, "Imported", arn)
        role = iam.Role(stack, "Operator", assumed_by=iam.AccountRootPrincipal())
        assert cluster.grant(role, "sagemaker:UpdateCluster").success

    assert callable(getattr(IHyperPodCluster, "grant", None))
    data = as_dict(synth_template(define))
    role_id, _ = only(data, "AWS::IAM::Role")
    (statement,) = statements(data, role_id)
    assert actions(statement) == {"sagemaker:UpdateCluster"}
    assert statement_resources(statement) == [arn]


OPERATORS = ROOT / "tests" / "apps" / "operators.py"
"""A user's app using every API of the cluster interface (mypy --strict checks it)."""


@pytest.fixture(scope="module")
def operators() -> dict[str, object]:
    """The template of :data:`OPERATORS`' stack."""
    from aws_cdk.assertions import Template

    from tests.apps.operators import build

    return as_dict(Template.from_stack(build(new_app())))


def test_the_interface_is_an_aws_cdk_lib_resource_interface() -> None:
    from aws_cdk import IResource
    from aws_cdk.interfaces.aws_sagemaker import IClusterRef

    assert {IResource, IClusterRef} <= set(IHyperPodCluster.__mro__)
    for name in ("apply_removal_policy", "stack", "env", "cluster_ref", "on_event"):
        assert hasattr(IHyperPodCluster, name), name


def test_the_users_app_is_type_checked_by_mypy() -> None:
    """``make test``'s mypy --strict run includes the app (pyproject's ``files``)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "tests/apps" in config["tool"]["mypy"]["files"]
    source = OPERATORS.read_text()
    for api in (
        "from_cluster_name(",
        "apply_removal_policy(",
        "cluster_ref",
        "metric(",
        "metric_running_count(",
        "on_event(",
        "grant_update(",
        "grant_ssm_session(",
    ):
        assert api in source, api


def _rules(template: dict[str, object]) -> dict[str, dict[str, object]]:
    from tests.template_utils import resources

    return {
        logical: body["Properties"]
        for logical, body in resources(template, "AWS::Events::Rule").items()
        if "FastPath" not in logical
    }


def test_on_event_matches_this_clusters_hyperpod_events(operators: dict[str, object]) -> None:
    rules = _rules(operators)
    (events,) = [p for logical, p in rules.items() if logical.startswith("ClusterEvents")]
    assert events["EventPattern"] == {
        "source": ["aws.sagemaker"],
        "detail-type": [
            "SageMaker HyperPod Cluster Event",
            "SageMaker HyperPod Cluster State Change",
            "SageMaker HyperPod Cluster Node Health Event",
        ],
        "resources": [{"Fn::GetAtt": ["ClusterEB0386A7", "ClusterArn"]}],
    }
    assert events["Description"] == "HyperPod events"
    # A detail-type of the user's own narrows the rule; it is not widened to all three.
    (health,) = [p for logical, p in rules.items() if logical.startswith("ByArnNodeHealth")]
    assert health["EventPattern"] == {
        "source": ["aws.sagemaker"],
        "detail-type": ["SageMaker HyperPod Cluster Node Health Event"],
        "resources": ["arn:aws:sagemaker:us-east-1:111122223333:cluster/abcdef123456"],
    }


def test_operator_grants_are_scoped_to_each_cluster(operators: dict[str, object]) -> None:
    names = list(operators["Resources"])  # type: ignore[call-overload]
    role_id = next(k for k in names if k.startswith("Operator"))
    execution_role = next(k for k in names if k.startswith("ClusterExecutionRole"))
    granted: dict[str, list[object]] = {}
    for statement in statements(operators, role_id):
        for action in sorted(actions(statement)):
            granted.setdefault(action, []).extend(statement_resources(statement))

    def on(*arns: object) -> list[str]:
        return sorted(json.dumps(arn) for arn in arns)

    found = {action: on(*arns) for action, arns in granted.items()}
    defined = {"Fn::GetAtt": ["ClusterEB0386A7", "ClusterArn"]}
    imported = "arn:aws:sagemaker:us-east-1:111122223333:cluster/abcdef123456"
    looked_up = {"Fn::GetAtt": ["ByNameArnLookupF9683680", "ClusterArn"]}
    assert found["sagemaker:DescribeCluster"] == on(defined, imported, looked_up)
    assert found["ssm:StartSession"] == on(defined, imported, looked_up)
    assert found["sagemaker:UpdateCluster"] == on(defined, imported)
    assert found["sagemaker:UpdateClusterSoftware"] == on(defined, imported)
    (own,) = set(map(str, granted["ssm:TerminateSession"]))
    assert "session/${aws:userid}-*" in own
    (pass_role,) = [s for s in statements(operators, role_id) if actions(s) == {"iam:PassRole"}]
    assert pass_role["Condition"] == {
        "StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}
    }
    assert pass_role["Resource"] == {"Fn::GetAtt": [execution_role, "Arn"]}


def test_from_cluster_name_reads_the_arn_once_at_deploy_time(
    operators: dict[str, object],
) -> None:
    """HyperPod's ARN ends in the cluster's id: one DescribeCluster call, allowed nothing else."""
    from tests.template_utils import only

    _, lookup = only(operators, "Custom::AWS")
    create = json.loads(lookup["Properties"]["Create"])
    assert create["action"] == "DescribeCluster"
    assert create["parameters"] == {"ClusterName": "research"}
    assert create["outputPaths"] == ["ClusterArn"]
    policies = [
        body
        for logical, body in operators["Resources"].items()  # type: ignore[attr-defined]
        if logical.startswith("ByNameArnLookupCustomResourcePolicy")
    ]
    (statement,) = policies[0]["Properties"]["PolicyDocument"]["Statement"]
    assert statement["Action"] == "sagemaker:DescribeCluster"


def test_metrics_take_keyword_options(operators: dict[str, object]) -> None:
    from tests.template_utils import only

    _, alarm = only(operators, "AWS::CloudWatch::Alarm")
    properties = alarm["Properties"]
    assert properties["MetricName"] == "RunningCount"
    assert (properties["Period"], properties["Statistic"]) == (300, "Minimum")
    assert {d["Name"]: d["Value"] for d in properties["Dimensions"]}["InstanceGroup"] == "gpu"


@pytest.mark.parametrize(
    ("group", "why"),
    [
        ("cpu", "instance group 'cpu' is not gated"),
        ("gpux", "there is no instance group 'gpux'"),
    ],
)
@pytest.mark.parametrize("owner", ["cluster", "gate"])
def test_a_metric_of_a_group_the_gate_does_not_watch_fails_the_synth(
    group: str, why: str, owner: str
) -> None:
    from hyperpod_constructs import HyperPodInstanceType, InstanceGroup

    cpu = HyperPodInstanceType.ML_C5_4XLARGE
    app = new_app()
    cluster = HyperPodSlurmCluster(
        Stack(app, "S"),
        "Cluster",
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=cpu),
            InstanceGroup.compute(
                "gpu", instance_type=cpu, instance_count=2, min_instance_count=2, partition="g"
            ),
            InstanceGroup.compute("cpu", instance_type=cpu, instance_count=2, partition="c"),
        ],
    )
    source = cluster if owner == "cluster" else cluster.min_count_gate
    assert source is not None
    source.metric_current_count(group)
    with pytest.raises(RuntimeError, match="Validation failed") as failed:
        app.synth()
    (line,) = [line for line in str(failed.value).splitlines() if "metric_current_count" in line]
    if owner == "gate":
        why = f"the readiness gate does not wait for instance group '{group}'"
    assert f"metric_current_count('{group}'): {why}" in line
    assert "allowed: a gated group ('gpu')" in line


def test_the_cluster_base_class_is_abstract() -> None:
    with pytest.raises(TypeError, match="abstract"):
        HyperPodClusterBase(Stack(new_app(), "S"), "Cluster")  # type: ignore[abstract]


# -- import cost ---------------------------------------------------------------------------

UNGATED_APP = """
import sys
from aws_cdk import App, Stack
from hyperpod_constructs import HyperPodInstanceType, HyperPodSlurmCluster, InstanceGroup

HyperPodSlurmCluster(
    Stack(App(), "S"),
    "Cluster",
    instance_groups=[
        InstanceGroup.controller("c", instance_type=HyperPodInstanceType.ML_M5_2XLARGE),
        InstanceGroup.compute(
            "cpu",
            instance_type=HyperPodInstanceType.ML_C5_4XLARGE,
            instance_count=2,
            partition="cpu",
        ),
    ],
)
print(sorted(m for m in sys.modules if m.startswith(("hyperpod_constructs._gate.construct",
                                                        "aws_cdk.aws_stepfunctions"))))
"""


def test_a_cluster_without_gated_groups_does_not_import_the_gate() -> None:
    """The gate's modules (Step Functions, Lambda, CloudWatch, ...) cost about 0.2 s of CPU
    to import; a cluster with no gated group never needs them."""
    env = {**os.environ, "CDK_VALIDATION": "false", "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", UNGATED_APP],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
