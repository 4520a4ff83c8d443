"""The public API of the top level: one list, small, lazily loaded, typed for mypy."""

from __future__ import annotations

import ast
import importlib
import inspect
import os
import subprocess
import sys

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
    """``__all__`` is written out for the docs tooling; it holds the export table, once."""
    exported = hyperpod_constructs.__all__
    assert sorted(exported) == sorted([*hyperpod_constructs._EXPORTS, "__version__"])


def test_type_checking_imports_match_the_export_table() -> None:
    assert type_checking_imports() == hyperpod_constructs._EXPORTS


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
print(sorted(m for m in sys.modules if m.startswith(("hyperpod_constructs.gate.construct",
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
