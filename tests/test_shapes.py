"""Every shape AWS accepts, and the CDK idioms users already use.

Network from subnet / security-group IDs, per-group fields (OverrideVpcConfig,
ScheduledUpdateConfig, NetworkInterface, CapacityRequirements, OnInitComplete), the legacy
Slurm layout without SlurmConfig, escape hatches into single groups, the cluster as an
``ec2.IConnectable`` with FSx for Lustre, warnings for immutable imported roles, and a test
that every instance-group field of the CloudFormation schema is supported or documented as
deliberately unsupported.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from aws_cdk import CfnParameter, Duration, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_fsx as fsx
from aws_cdk import aws_iam as iam
from aws_cdk.assertions import Annotations, Match, Template

from hyperpod_constructs import (
    BatchSize,
    CapacityType,
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    InstanceStorage,
    LifecycleScripts,
    NetworkInterfaceType,
    NodeProvisioningMode,
    ScheduledUpdate,
    SlurmLayout,
)
from hyperpod_constructs.instance_group import GROUP_FIELDS
from hyperpod_constructs.tools.convert import UNSUPPORTED
from tests.conftest import ROOT, new_app, synth_template
from tests.support.groups import Groups
from tests.template_utils import CLUSTER_TYPE, actions, as_dict, only, resources, statements

ROLE_ARN = "arn:aws:iam::111122223333:role/ExistingHyperPodRole"
SUBNET, LOCAL_ZONE_SUBNET = "subnet-0123456789abcdef0", "subnet-0fedcba9876543210"
SG, SG_2 = "sg-0123456789abcdef0", "sg-0fedcba9876543210"
CPU = HyperPodInstanceType.ML_M5_XLARGE
GPU = HyperPodInstanceType.ML_P5_48XLARGE
DHC = (DeepHealthCheck.INSTANCE_STRESS, DeepHealthCheck.INSTANCE_CONNECTIVITY)


GROUPS = Groups(controller_type=CPU, compute_type=GPU, instance_count=2, deep_health_checks=DHC)
controller = GROUPS.controller


def gpu(**props: Any) -> InstanceGroup:
    return GROUPS.compute("gpu", **props)


def network(stack: Stack) -> dict[str, Any]:
    """``vpc_subnets`` and ``security_groups`` from IDs only (no VPC)."""
    return {
        "vpc_subnets": ec2.SubnetSelection(subnets=[ec2.Subnet.from_subnet_id(stack, "S", SUBNET)]),
        "security_groups": [ec2.SecurityGroup.from_security_group_id(stack, "G", SG)],
    }


def cluster_properties(template: Template) -> dict[str, Any]:
    return dict(only(as_dict(template), CLUSTER_TYPE)[1]["Properties"])


def groups(template: Template) -> dict[str, dict[str, Any]]:
    return {g["InstanceGroupName"]: g for g in cluster_properties(template)["InstanceGroups"]}


# -- network from IDs ----------------------------------------------------------------------


def test_network_from_subnet_and_security_group_ids_without_a_vpc() -> None:
    template = synth_template(
        lambda stack: HyperPodSlurmCluster(
            stack, "Cluster", instance_groups=[controller(), gpu()], **network(stack)
        )
    )
    assert cluster_properties(template)["VpcConfig"] == {
        "SecurityGroupIds": [SG],
        "Subnets": [SUBNET],
    }
    # The default role gets the network-interface permissions, as with a VPC object.
    (role_id,) = resources(as_dict(template), "AWS::IAM::Role")
    granted = set().union(*(actions(s) for s in statements(as_dict(template), role_id)))
    assert {"ec2:CreateNetworkInterface", "ec2:DeleteNetworkInterface"} <= granted


def test_imported_subnets_work_with_a_vpc_too() -> None:
    """``vpc.select_subnets(subnets=[Subnet.from_subnet_id(...)])`` reads the subnets'
    availability zone and throws; explicit subnets are now read by ID only."""

    def define(stack: Stack) -> None:
        vpc = ec2.Vpc.from_vpc_attributes(
            stack, "Vpc", vpc_id="vpc-0123456789abcdef0", availability_zones=["us-east-1a"]
        )
        subnets = ec2.SubnetSelection(subnets=[ec2.Subnet.from_subnet_id(stack, "S", SUBNET)])
        HyperPodSlurmCluster(
            stack, "Cluster", vpc=vpc, vpc_subnets=subnets, instance_groups=[controller(), gpu()]
        )

    assert cluster_properties(synth_template(define))["VpcConfig"]["Subnets"] == [SUBNET]


# -- per-group fields ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def every_field() -> Template:
    """One cluster whose groups use every instance-group field the library renders."""

    def define(stack: Stack) -> None:
        local_zone = ec2.Subnet.from_subnet_id(stack, "LocalZone", LOCAL_ZONE_SUBNET)
        HyperPodSlurmCluster(
            stack,
            "Cluster",
            lifecycle_scripts=LifecycleScripts.from_s3_uri(
                "s3://sagemaker-scripts/ext", on_init_complete="extend.sh"
            ),
            instance_groups=[
                controller(min_instance_count=1, image_id="ami-0123456789abcdef0"),
                gpu(
                    min_instance_count=1,
                    threads_per_core=1,
                    storage=[
                        InstanceStorage.fsx_open_zfs(
                            dns_name="fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com"
                        )
                    ],
                    training_plan_arn="arn:aws:sagemaker:us-east-1:111122223333:training-plan/p5-plan",
                    vpc_subnets=ec2.SubnetSelection(subnets=[local_zone]),
                    scheduled_update=ScheduledUpdate(
                        schedule_expression="cron(0 3 ? * SUN *)",
                        maximum_batch_size=BatchSize.instances(1),
                        rollback_maximum_batch_size=BatchSize.percentage(50),
                        wait_interval=Duration.minutes(5),
                        rollback_alarms=["gpu-health"],
                    ),
                    network_interface=NetworkInterfaceType.EFA_ONLY,
                    capacity_type=CapacityType.SPOT,
                ),
            ],
            **network(stack),
        )

    return synth_template(define)


def test_per_group_fields_render_in_cloudformation_shape(every_field: Template) -> None:
    group = groups(every_field)["gpu"]
    assert group["OverrideVpcConfig"] == {"SecurityGroupIds": [SG], "Subnets": [LOCAL_ZONE_SUBNET]}
    assert group["ScheduledUpdateConfig"] == {
        "ScheduleExpression": "cron(0 3 ? * SUN *)",
        "DeploymentConfig": {
            "RollingUpdatePolicy": {
                "MaximumBatchSize": {"Type": "INSTANCE_COUNT", "Value": 1},
                "RollbackMaximumBatchSize": {"Type": "CAPACITY_PERCENTAGE", "Value": 50},
            },
            "WaitIntervalInSeconds": 300,
            "AutoRollbackConfiguration": [{"AlarmName": "gpu-health"}],
        },
    }
    assert group["NetworkInterface"] == {"InterfaceType": "efa-only"}
    assert group["CapacityRequirements"] == {"Spot": {}}
    assert group["LifeCycleConfig"] == {
        "SourceS3Uri": "s3://sagemaker-scripts/ext",
        "OnInitComplete": "extend.sh",
    }


def cluster_schema() -> dict[str, Any]:
    from cfnlint.schema.manager import PROVIDER_SCHEMA_MANAGER

    return dict(PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", CLUSTER_TYPE).schema)


def schema_group_fields() -> set[str]:
    return set(cluster_schema()["definitions"]["ClusterInstanceGroup"]["properties"])


def schema_cluster_fields() -> set[str]:
    """The cluster's writable properties (read-only ones are what CloudFormation returns)."""
    schema = cluster_schema()
    read_only = {path.removeprefix("/properties/") for path in schema["readOnlyProperties"]}
    return set(schema["properties"]) - read_only


@pytest.fixture(scope="module")
def new_fields() -> Template:
    """A cluster with the fields AWS added that apply to Slurm: a flexible group
    (``InstanceRequirements``) and automatic patching (``AutoPatchConfig``); with tags and the
    explicit Slurm orchestrator, so that it renders the cluster fields ``every_field`` does
    not."""
    from hyperpod_constructs import AutoPatchStrategy

    return synth_template(
        lambda stack: HyperPodSlurmCluster(
            stack,
            "Cluster",
            declare_slurm_orchestrator=True,
            tags={"project": "training"},
            instance_groups=[
                controller(auto_patch=AutoPatchStrategy.WHEN_IDLE),
                InstanceGroup.compute(
                    "gpu",
                    instance_types=[GPU, HyperPodInstanceType.ML_P5E_48XLARGE],
                    partition="gpu",
                    instance_count=2,
                    deep_health_checks=DHC,
                ),
            ],
        )
    )


def _unsupported_and_documented(name: str, guide: str) -> None:
    assert name in UNSUPPORTED, f"{name}: neither rendered nor deliberately unsupported"
    assert f"`{name}`" in guide, f"{name}: docs/guide.md does not list it as unsupported"


def test_every_schema_group_field_is_supported_or_documented(
    every_field: Template, new_fields: Template
) -> None:
    """The schema's instance-group fields (cfn-lint's copy) are each either rendered by the
    library or listed, with a reason, as deliberately unsupported (the converter refuses them
    by name and docs/guide.md lists them). A field AWS adds later fails this test."""
    rendered = set().union(
        *(set(g) for template in (every_field, new_fields) for g in groups(template).values())
    )
    # The table's keys (tests/test_group_fields.py synthesizes each one into a template).
    rendered |= {field.cfn for field in GROUP_FIELDS if field.cfn is not None}
    guide = (ROOT / "docs" / "guide.md").read_text()
    for name in sorted(schema_group_fields() - rendered):
        _unsupported_and_documented(name, guide)
    assert {"InstanceRequirements", "AutoPatchConfig"} <= rendered
    stale = sorted(rendered & set(UNSUPPORTED))
    assert not stale, (
        f"rendered, yet convert's UNSUPPORTED (tools/convert/reading.py) refuses {stale}"
    )


def test_every_schema_cluster_field_is_supported_or_documented(
    every_field: Template, new_fields: Template
) -> None:
    """The same for the cluster's own properties (``Orchestrator`` is rendered, its ``Eks``
    member refused by name); a property AWS adds later fails this test."""
    rendered = set(cluster_properties(every_field)) | set(cluster_properties(new_fields))
    guide = (ROOT / "docs" / "guide.md").read_text()
    for name in sorted(schema_cluster_fields() - rendered):
        _unsupported_and_documented(name, guide)


# -- legacy layout ----------------------------------------------------------------------------


def test_legacy_layout_leaves_slurm_config_out() -> None:
    """STANDARD mode with the layout in provisioning_parameters.json: no SlurmConfig, and the
    partition (Slurm's own name, e.g. the instance type) is not checked against the API's."""
    template = synth_template(
        lambda stack: HyperPodSlurmCluster(
            stack,
            "Cluster",
            node_provisioning_mode=NodeProvisioningMode.STANDARD,
            slurm_layout=SlurmLayout.LIFECYCLE_SCRIPTS,
            instance_groups=[
                controller(),
                InstanceGroup.compute(
                    "gpu",
                    instance_type=GPU,
                    partition="ml.p5.48xlarge",
                    instance_count=2,
                    deep_health_checks=DHC,
                ),
            ],
        )
    )
    assert all("SlurmConfig" not in group for group in groups(template).values())


# -- escape hatches ----------------------------------------------------------------------------


def test_escape_hatch_overrides_of_single_groups_are_kept() -> None:
    """Each group is rendered on its own (not one lazy raw override of all groups), so an
    override of one group's field reaches the template instead of a token object."""

    def define(stack: Stack) -> None:
        cluster = HyperPodSlurmCluster(stack, "Cluster", instance_groups=[controller(), gpu()])
        cluster.node.default_child.add_property_override(  # type: ignore[union-attr]
            "InstanceGroups.1.OverrideVpcConfig", {"SecurityGroupIds": [SG], "Subnets": [SUBNET]}
        )
        cluster.node.default_child.add_property_override(  # type: ignore[union-attr]
            "InstanceGroups.0.ImageId", "ami-0123456789abcdef0"
        )

    found = groups(synth_template(define))
    assert found["gpu"]["OverrideVpcConfig"] == {"SecurityGroupIds": [SG], "Subnets": [SUBNET]}
    assert found["controller"]["ImageId"] == "ami-0123456789abcdef0"
    assert found["gpu"]["InstanceType"] == "ml.p5.48xlarge"  # the rest of the group stays


# -- CloudFormation parameters -------------------------------------------------------------------


def test_node_recovery_from_a_parameter_or_left_out() -> None:
    def define(stack: Stack) -> None:
        recovery = CfnParameter(stack, "NodeRecovery", allowed_values=["Automatic", "None"])
        HyperPodSlurmCluster(
            stack,
            "A",
            node_recovery=recovery.value_as_string,
            instance_groups=[controller(), gpu()],
        )
        HyperPodSlurmCluster(stack, "B", node_recovery=None, instance_groups=[controller(), gpu()])

    clusters = resources(as_dict(synth_template(define)), CLUSTER_TYPE)
    by_id = {key[0]: value["Properties"] for key, value in clusters.items()}
    assert by_id["A"]["NodeRecovery"] == {"Ref": "NodeRecovery"}
    assert "NodeRecovery" not in by_id["B"]


# -- IConnectable and FSx ------------------------------------------------------------------------


def test_file_system_opens_its_ports_to_the_cluster_without_warnings() -> None:
    app = new_app()
    stack = Stack(app, "Test")
    vpc = ec2.Vpc(
        stack,
        "Vpc",
        max_azs=1,
        nat_gateways=0,
        subnet_configuration=[
            ec2.SubnetConfiguration(name="private", subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)
        ],
    )
    file_system = fsx.LustreFileSystem(
        stack,
        "Fsx",
        vpc=vpc,
        vpc_subnet=vpc.isolated_subnets[0],
        storage_capacity_gib=1200,
        lustre_configuration=fsx.LustreConfiguration(
            deployment_type=fsx.LustreDeploymentType.SCRATCH_2
        ),
    )
    cluster = HyperPodSlurmCluster(
        stack,
        "Cluster",
        vpc=vpc,
        vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED),
        instance_groups=[
            controller(
                storage=[InstanceStorage.lustre_file_system(file_system, mount_path="/fsx")]
            ),
            gpu(),
        ],
    )
    # The cluster is an ec2.IConnectable: CDK's own API takes it.
    file_system.connections.allow_from(cluster, ec2.Port.tcp(22), "ssh from the nodes")
    template = Template.from_stack(stack)
    ingress = [
        (rule["Properties"]["FromPort"], rule["Properties"]["ToPort"])
        for rule in resources(as_dict(template), "AWS::EC2::SecurityGroupIngress").values()
        if rule["Properties"].get("Description", "").startswith(("HyperPod", "ssh"))
    ]
    # CDK's own Lustre port range (connections.default_port of the file system).
    assert sorted(ingress) == [(22, 22), (988, 1023)]
    lustre = groups(template)["controller"]["InstanceStorageConfigs"][0]["FsxLustreConfig"]
    assert set(lustre) == {"DnsName", "MountName", "MountPath"}
    Annotations.from_stack(stack).has_no_warning("*", Match.any_value())


# -- imported roles --------------------------------------------------------------------------------


def test_immutable_imported_role_gets_one_warning_naming_all_that_is_missing() -> None:
    app = new_app()
    stack = Stack(app, "Test")
    role = iam.Role.from_role_arn(stack, "Role", ROLE_ARN, mutable=False)
    HyperPodSlurmCluster(
        stack,
        "Cluster",
        execution_role=role,
        lifecycle_scripts=LifecycleScripts.from_s3_uri(
            "s3://sagemaker-x/lc/", on_create="on_create.sh"
        ),
        instance_groups=[controller(), gpu()],
        **network(stack),
    )
    warnings = Annotations.from_stack(stack).find_warning("/Test/Cluster", Match.any_value())
    texts = [str(w.entry.data) for w in warnings if "Test/Role" in str(w.entry.data)]
    (text,) = texts  # once per cluster, both missing grants on its line, with its rule id
    assert "the network-interface actions and read access to the lifecycle scripts" in text
    assert "[HP-WARN-ROLE-IMMUTABLE] [ack: hyperpod:HP-WARN-ROLE-IMMUTABLE]" in text
    assert resources(as_dict(Template.from_stack(stack)), "AWS::IAM::Policy") == {}


def test_mutable_imported_role_gets_the_policies_and_no_warning() -> None:
    app = new_app()
    stack = Stack(app, "Test")
    role = iam.Role.from_role_arn(stack, "Role", ROLE_ARN)
    HyperPodSlurmCluster(
        stack,
        "Cluster",
        execution_role=role,
        instance_groups=[controller(), gpu()],
        **network(stack),
    )
    policies = resources(as_dict(Template.from_stack(stack)), "AWS::IAM::Policy")
    granted = set().union(
        *(
            actions(s)
            for p in policies.values()
            for s in p["Properties"]["PolicyDocument"]["Statement"]
        )
    )
    assert "ec2:CreateNetworkInterface" in granted
    warnings = Annotations.from_stack(stack).find_warning("/Test/Cluster", Match.any_value())
    assert not [w for w in warnings if "immutable" in str(w.entry.data)]


def test_unsupported_reasons_are_sentences() -> None:
    assert all(re.match(r"^[A-Za-z(]", reason) for reason in UNSUPPORTED.values())


def test_conditions_reach_counts_recovery_and_the_resource() -> None:
    """Org templates switch values with conditions: ``Fn.condition_if`` tokens pass through,
    and the cluster resource takes a condition through the escape hatch."""
    from aws_cdk import CfnCondition, Fn, Token

    def define(stack: Stack) -> None:
        prod = CfnCondition(stack, "IsProd", expression=Fn.condition_equals(Fn.ref("Env"), "prod"))
        CfnParameter(stack, "Env", allowed_values=["prod", "dev"])
        count = Token.as_number(Fn.condition_if(prod.logical_id, 16, 2))
        cluster = HyperPodSlurmCluster(
            stack,
            "Cluster",
            node_recovery=Token.as_string(Fn.condition_if(prod.logical_id, "Automatic", "None")),
            instance_groups=[controller(), gpu(instance_count=count)],
        )
        cluster.node.default_child.cfn_options.condition = prod  # type: ignore[union-attr]

    template = as_dict(synth_template(define))
    _, cluster = only(template, CLUSTER_TYPE)
    assert cluster["Condition"] == "IsProd"
    assert cluster["Properties"]["NodeRecovery"] == {"Fn::If": ["IsProd", "Automatic", "None"]}
    gpu_group = cluster["Properties"]["InstanceGroups"][1]
    assert gpu_group["InstanceCount"] == {"Fn::If": ["IsProd", 16, 2]}


def test_escape_hatch_reaches_cluster_level_properties_too() -> None:
    def define(stack: Stack) -> None:
        cluster = HyperPodSlurmCluster(
            stack,
            "Cluster",
            node_provisioning_mode=NodeProvisioningMode.STANDARD,
            declare_slurm_orchestrator=True,
            instance_groups=[controller(), gpu()],
            **network(stack),
        )
        cfn = cluster.node.default_child
        cfn.add_property_override("Orchestrator.Slurm.SlurmConfigStrategy", "Merge")  # type: ignore[union-attr]
        cfn.add_property_override("VpcConfig.Subnets", [SUBNET, LOCAL_ZONE_SUBNET])  # type: ignore[union-attr]

    properties = cluster_properties(synth_template(define))
    assert properties["Orchestrator"] == {"Slurm": {"SlurmConfigStrategy": "Merge"}}
    assert properties["VpcConfig"] == {
        "SecurityGroupIds": [SG],
        "Subnets": [SUBNET, LOCAL_ZONE_SUBNET],
    }
