"""aws-cdk-lib's submodules load where they are used, not when the library is imported.

Importing ``aws_cdk.aws_ec2``, ``aws_sagemaker`` or ``aws_lambda`` (which loads ``aws_ec2`` and
five more) costs from a tenth of a second to over a second of CPU each (docs/performance.md,
section 6); an app that imports the library's names pays none of them, a cluster without a
gate none of the gate's (tests/test_api.py). What they are used for still works: the cluster is an
``ec2.IConnectable`` and an ``iam.IGrantable`` to aws-cdk-lib (declared to jsii at its first
instance), also in a subclass.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from typing import Any

from aws_cdk import Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Template

from hyperpod_constructs import HyperPodInstanceType, HyperPodSlurmCluster, InstanceGroup
from tests.conftest import ROOT, new_app
from tests.support.estate import imported_vpc
from tests.template_utils import as_dict, resources

SUBMODULES = """
import sys
{before}
print(sorted(
    m for m in sys.modules
    if m.startswith("aws_cdk.aws_") and not m.endswith("._private")
))
"""

EVERY_NAME = """
import hyperpod_constructs
for name in hyperpod_constructs.__all__:
    getattr(hyperpod_constructs, name)
"""


def printed_by(script: str) -> Any:
    """The value a fresh interpreter running ``script`` prints last (a Python literal)."""
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "CDK_VALIDATION": "false", "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return ast.literal_eval(result.stdout.strip().splitlines()[-1])


def loaded_submodules(before: str) -> list[str]:
    """The ``aws_cdk.aws_*`` modules a fresh interpreter holds after running ``before``."""
    loaded: list[str] = printed_by(SUBMODULES.format(before=before))
    return loaded


def test_every_public_name_loads_no_submodule_of_aws_cdk_lib() -> None:
    assert loaded_submodules(EVERY_NAME) == []


class _TeamCluster(HyperPodSlurmCluster):
    """A user's subclass, defined before any cluster exists."""


def test_a_subclass_is_connectable_and_grantable_to_aws_cdk_lib() -> None:
    """aws-cdk-lib calls back ``connections`` and ``grant_principal`` on the cluster (jsii
    interfaces declared at the first instance of each class)."""
    stack = Stack(new_app(), "Test")
    vpc = imported_vpc(stack)
    cluster = _TeamCluster(
        stack,
        "Cluster",
        vpc=vpc,
        instance_groups=[
            InstanceGroup.controller("c", instance_type=HyperPodInstanceType.ML_M5_2XLARGE)
        ],
    )
    database = ec2.SecurityGroup(stack, "Database", vpc=vpc)
    database.connections.allow_from(cluster, ec2.Port.tcp(5432), "from the nodes")
    s3.Bucket(stack, "Data").grant_read(cluster)
    template = as_dict(Template.from_stack(stack))
    ingress = resources(template, "AWS::EC2::SecurityGroupIngress").values()
    assert [
        rule["Properties"]["FromPort"]
        for rule in ingress
        if rule["Properties"].get("Description") == "from the nodes"
    ] == [5432]
    policies = resources(template, "AWS::IAM::Policy").values()
    assert any(
        "s3:GetObject*" in statement["Action"]
        for policy in policies
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    )


EXAMPLE_APP = """
import sys, tempfile
from aws_cdk import App
from examples.app import build
app = App(outdir=tempfile.mkdtemp())
build(app)
app.synth()
print(sorted(m for m in sys.modules if m.startswith("hyperpod_constructs.tools")))
"""


def test_the_example_app_synthesizes_without_loading_the_tools() -> None:
    """Every example stack (the blueprints and the policies included), built and synthesized
    in a fresh interpreter, loads nothing of ``hyperpod_constructs.tools``: the layer test reads
    the imports, this reads what really runs (an ``importlib`` load as well)."""
    assert printed_by(EXAMPLE_APP) == []
