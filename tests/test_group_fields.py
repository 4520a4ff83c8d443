"""The table of instance-group fields (``GROUP_FIELDS``) against everything that walks them.

- Every factory's signature lists exactly the fields the table gives its node type, with the
  dataclass's annotation (read with ``inspect.signature``, both ways).
- A cluster whose groups set every field: every key ``render_group`` produces reaches the
  synthesized template, unchanged (aws-cdk-lib's L1 ``CfnCluster`` mapper drops a key it
  does not know, without a word), and every CloudFormation key of the table is one of
  cfn-lint's schema for ``AWS::SageMaker::Cluster`` ``InstanceGroups[]``.
- That template's cluster, as a CreateCluster request, converts (``convert``) to an app that
  synthesizes the same groups: ``convert`` reads every field the table renders.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Duration, Size, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from constructs import Construct

import hyperpod_constructs as hp
from hyperpod_constructs.instance_group import GROUP_FIELDS
from hyperpod_constructs.tools.convert import Options, convert_request
from tests.conftest import new_app
from tests.template_utils import CLUSTER_TYPE, only
from tests.test_convert import synth_app

FACTORIES: dict[hp.NodeType, Callable[..., hp.InstanceGroup]] = {
    hp.NodeType.CONTROLLER: hp.InstanceGroup.controller,
    hp.NodeType.LOGIN: hp.InstanceGroup.login,
    hp.NodeType.COMPUTE: hp.InstanceGroup.compute,
}
CPU = hp.HyperPodInstanceType.ML_M5_XLARGE
GPU = hp.HyperPodInstanceType.ML_P5_48XLARGE
ROLE_ARN = "arn:aws:iam::111122223333:role/HyperPodCluster"
GROUP_ROLE_ARN = "arn:aws:iam::111122223333:role/HyperPodGroup"
SUBNET, GROUP_SUBNET = "subnet-0123456789abcdef0", "subnet-0fedcba9876543210"
SG = "sg-0123456789abcdef0"


# -- the factories' signatures -------------------------------------------------------------------


def _parameters(factory: Callable[..., object]) -> dict[str, str]:
    """The factory's keyword -> its annotation (a string: the module defers annotations)."""
    return {
        name: str(parameter.annotation)
        for name, parameter in inspect.signature(factory).parameters.items()
        if name != "cls"
    }


def _as_field(annotation: str) -> str:
    """A factory's annotation as the dataclass writes it: a ``Sequence`` is kept as a tuple."""
    return re.sub(r"Sequence\[([^\[\]]+)\]", r"tuple[\1, ...]", annotation)


@pytest.mark.parametrize("node_type", list(FACTORIES), ids=lambda n: n.name.lower())
def test_each_factory_takes_exactly_the_fields_of_its_node_type(node_type: hp.NodeType) -> None:
    parameters = _parameters(FACTORIES[node_type])
    table = {field.keyword: field for field in GROUP_FIELDS if field.takes(node_type)}
    assert set(parameters) == set(table), (
        f"missing from the factory: {sorted(set(table) - set(parameters))}; "
        f"not in the table: {sorted(set(parameters) - set(table))}"
    )
    for keyword, annotation in parameters.items():
        field = table[keyword].annotation
        assert _as_field(annotation) in (field, f"{field} | None"), (keyword, annotation, field)


def test_every_field_of_the_dataclass_is_a_row_of_the_table() -> None:
    """``problems`` (the factory's findings) is the one field of no API member."""
    declared = [f.name for f in dataclasses.fields(hp.InstanceGroup) if f.name != "problems"]
    assert [field.keyword for field in GROUP_FIELDS] == declared


# -- every field, rendered -------------------------------------------------------------------------


def _scripts(name: str) -> hp.LifecycleScripts:
    return hp.LifecycleScripts.from_s3_uri(
        f"s3://sagemaker-scripts/{name}", on_create="on_create.sh"
    )


SAMPLES: dict[str, Callable[[Construct, hp.NodeType], Any]] = {
    "name": lambda _scope, node: node.name.lower(),
    "instance_type": lambda _scope, node: GPU if node is hp.NodeType.COMPUTE else CPU,
    "instance_types": lambda _scope, _node: [GPU, hp.HyperPodInstanceType.ML_P5E_48XLARGE],
    "instance_count": lambda _scope, _node: 1,
    "min_instance_count": lambda _scope, _node: 1,
    "partition": lambda _scope, _node: "gpu",
    "threads_per_core": lambda _scope, _node: 1,
    "deep_health_checks": lambda _scope, _node: [hp.DeepHealthCheck.INSTANCE_STRESS],
    "storage": lambda _scope, _node: [hp.InstanceStorage.ebs(volume_size=Size.gibibytes(500))],
    "training_plan_arn": lambda _scope, node: (
        f"arn:aws:sagemaker:us-east-1:111122223333:training-plan/{node.name.lower()}"
    ),
    "image_id": lambda _scope, _node: "ami-0123456789abcdef0",
    "execution_role": lambda scope, _node: iam.Role.from_role_arn(
        scope, "Role", GROUP_ROLE_ARN, mutable=False
    ),
    "lifecycle_scripts": lambda _scope, node: _scripts(node.name.lower()),
    "vpc_subnets": lambda scope, _node: ec2.SubnetSelection(
        subnets=[ec2.Subnet.from_subnet_id(scope, "Subnet", GROUP_SUBNET)]
    ),
    "security_groups": lambda scope, _node: [
        ec2.SecurityGroup.from_security_group_id(scope, "Sg", SG)
    ],
    "scheduled_update": lambda _scope, _node: hp.ScheduledUpdate(
        schedule_expression="cron(0 3 ? * SUN *)",
        maximum_batch_size=hp.BatchSize.instances(1),
        wait_interval=Duration.minutes(5),
        rollback_alarms=["health"],
    ),
    "network_interface": lambda _scope, _node: hp.NetworkInterfaceType.EFA_ONLY,
    "capacity_type": lambda _scope, _node: hp.CapacityType.ON_DEMAND,
    "auto_patch": lambda _scope, _node: hp.AutoPatchStrategy.WHEN_IDLE,
    "min_accelerators": lambda _scope, _node: 8,
}
"""A value of every keyword a factory takes, valid for each node type (``scope``: the group's
own, for the resources it imports)."""

EXCLUSIVE = {"instance_types": "instance_type", "min_accelerators": "min_instance_count"}
"""The pairs of keywords a factory takes one of: the first compute group sets the key, the
second the value."""


def _group(stack: Stack, node_type: hp.NodeType, *, second: bool) -> hp.InstanceGroup:
    """A group of ``node_type`` that sets every field its factory takes, of each pair in
    :data:`EXCLUSIVE` the first (``second``: the other, for a second compute group)."""
    taken = {field.keyword for field in GROUP_FIELDS if field.takes(node_type)}
    left_out = set(EXCLUSIVE.values()) if second else set(EXCLUSIVE)
    name = SAMPLES["name"](stack, node_type) + ("-2" if second else "")
    scope = Construct(stack, name)
    kwargs = {k: SAMPLES[k](scope, node_type) for k in sorted(taken - left_out - {"name"})}
    if second:
        kwargs["partition"] = "gpu-2"
        del kwargs["network_interface"]  # efa-only: not on every type of a flexible group
    return FACTORIES[node_type](name, **kwargs)


def define(stack: Stack) -> hp.HyperPodSlurmCluster:
    """A cluster whose groups set every field of the table."""
    return hp.HyperPodSlurmCluster(
        stack,
        "Cluster",
        cluster_name="every-field",
        execution_role=iam.Role.from_role_arn(stack, "ClusterRole", ROLE_ARN, mutable=False),
        lifecycle_scripts=_scripts("cluster"),
        vpc_subnets=ec2.SubnetSelection(subnets=[ec2.Subnet.from_subnet_id(stack, "S", SUBNET)]),
        security_groups=[ec2.SecurityGroup.from_security_group_id(stack, "G", SG)],
        instance_groups=[
            _group(stack, hp.NodeType.CONTROLLER, second=False),
            _group(stack, hp.NodeType.LOGIN, second=False),
            _group(stack, hp.NodeType.COMPUTE, second=False),
            _group(stack, hp.NodeType.COMPUTE, second=True),
        ],
    )


@pytest.fixture(scope="module")
def every_field() -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """What ``render_group`` gave for each group, and the synthesized cluster's properties."""
    app = new_app()
    stack = Stack(app, "EveryField")
    cluster = define(stack)
    rendered = cluster._render_groups()
    template = app.synth().get_stack_by_name(stack.stack_name).template
    _, resource = only(template, CLUSTER_TYPE)
    return rendered, dict(resource["Properties"])


def test_the_samples_are_the_keywords_of_the_factories() -> None:
    """A new field needs its sample here, so that the tests below render and convert it."""
    assert set(SAMPLES) == {field.keyword for field in GROUP_FIELDS if field.nodes} | {"name"}


def test_every_rendered_key_reaches_the_template(
    every_field: tuple[list[dict[str, Any]], dict[str, Any]],
) -> None:
    """The L1 mapper drops a key it does not know: the template would lack it."""
    rendered, properties = every_field
    synthesized = properties["InstanceGroups"]
    pairs = zip(rendered, synthesized, strict=True)
    dropped = [sorted(set(group) - set(kept)) for group, kept in pairs]
    assert dropped == [[]] * len(rendered), f"rendered, not in the template: {dropped}"
    assert synthesized == rendered


def test_every_key_of_the_table_is_rendered_and_in_the_schema(
    every_field: tuple[list[dict[str, Any]], dict[str, Any]],
) -> None:
    from tests.test_shapes import schema_group_fields

    rendered, _ = every_field
    keys = {field.cfn for field in GROUP_FIELDS if field.cfn is not None}
    assert keys <= schema_group_fields(), keys - schema_group_fields()
    assert set().union(*rendered) == keys


# -- convert reads every field ---------------------------------------------------------------------


def test_convert_reads_every_field_back(
    every_field: tuple[list[dict[str, Any]], dict[str, Any]], tmp_path: Path
) -> None:
    """The synthesized cluster as a CreateCluster request -> convert -> the app -> synth: the
    same groups (a key convert did not read is refused by name, never dropped)."""
    _, request = every_field
    source, _notes = convert_request(request, None, Options(source_name="every-field.json"))
    path = tmp_path / "app.py"
    path.write_text(source)
    _, converted = only(synth_app(path), CLUSTER_TYPE)
    assert converted["Properties"]["InstanceGroups"] == request["InstanceGroups"]
