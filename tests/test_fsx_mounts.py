"""FSx for Lustre mounts of an existing estate: an imported file system is mounted and its
Lustre ports opened exactly as for one the app defines; where the library cannot open them
(an immutable security group, a file system given by names only) a warning, HP-FSX-PORTS,
says what to open."""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_fsx as fsx
from aws_cdk.assertions import Annotations, Match, Template

from hyperpod_constructs import (
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    InstanceStorage,
)
from hyperpod_constructs.validation import HyperPodArgumentError
from hyperpod_constructs.validation.storage_rules import FSX_PORTS, LUSTRE_PORTS
from tests.support.estate import imported_vpc, scratch_lustre
from tests.template_utils import as_dict, resources

DNS = "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com"
ENV = {"account": "111111111111", "region": "us-east-1"}


def _stack() -> tuple[Stack, ec2.IVpc]:
    stack = Stack(App(), "Estate", env=ENV)
    return stack, imported_vpc(stack)


def _file_system(stack: Stack, vpc: ec2.IVpc, how: str) -> fsx.IFileSystem:
    if how == "owned":
        return scratch_lustre(stack, vpc, vpc.private_subnets[0])
    group = ec2.SecurityGroup.from_security_group_id(
        stack, "FsxSg", "sg-0f5000000000000a0", mutable=how == "imported"
    )
    return fsx.LustreFileSystem.from_lustre_file_system_attributes(
        stack, "Fsx", dns_name=DNS, file_system_id="fs-0123456789abcdef0", security_group=group
    )


def _cluster(stack: Stack, vpc: ec2.IVpc, storage: InstanceStorage) -> HyperPodSlurmCluster:
    return HyperPodSlurmCluster(
        stack,
        "Cluster",
        vpc=vpc,
        instance_groups=[
            InstanceGroup.controller(
                "controller", instance_type=HyperPodInstanceType.ML_M5_2XLARGE, storage=[storage]
            )
        ],
    )


def _mount(how: str) -> tuple[Stack, HyperPodSlurmCluster, fsx.IFileSystem]:
    stack, vpc = _stack()
    system = _file_system(stack, vpc, how)
    name = None if how == "owned" else "abcdefgh"
    storage = InstanceStorage.lustre_file_system(system, mount_name=name, mount_path="/fsx")
    return stack, _cluster(stack, vpc, storage), system


def _lustre_ingress(stack: Stack) -> list[dict[str, Any]]:
    """The ingress rules the cluster added to the file system's security group, without the
    file system's own id (which differs between an owned and an imported one)."""
    rules = resources(as_dict(Template.from_stack(stack)), "AWS::EC2::SecurityGroupIngress")
    return [
        {key: value for key, value in rule["Properties"].items() if key != "GroupId"}
        for rule in rules.values()
        if rule["Properties"].get("Description") == "HyperPod cluster nodes"
    ]


def _warnings(stack: Stack) -> list[str]:
    found = Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp(".*"))
    return [str(entry.entry.data) for entry in found]


def test_an_imported_file_system_is_opened_exactly_as_an_owned_one() -> None:
    owned, _, _ = _mount("owned")
    imported, cluster, _ = _mount("imported")

    opened = _lustre_ingress(imported)
    assert opened == _lustre_ingress(owned)
    assert [(rule["FromPort"], rule["ToPort"], rule["IpProtocol"]) for rule in opened] == [
        (988, 1023, "tcp")
    ]
    lustre = Template.from_stack(imported).find_resources("AWS::SageMaker::Cluster")
    (resource,) = lustre.values()
    config = resource["Properties"]["InstanceGroups"][0]["InstanceStorageConfigs"][0]
    assert config == {
        "FsxLustreConfig": {"DnsName": DNS, "MountName": "abcdefgh", "MountPath": "/fsx"}
    }
    assert not [text for text in _warnings(imported) if FSX_PORTS.id in text]
    assert cluster.findings() == []


def test_the_ports_named_are_aws_cdk_libs_lustre_range() -> None:
    _, _, system = _mount("imported")
    default = system.connections.default_port
    assert default is not None
    assert f"TCP {default.to_string()}" == LUSTRE_PORTS


def test_an_immutable_security_group_is_a_warning_saying_what_to_open() -> None:
    stack, _, _ = _mount("immutable")

    assert _lustre_ingress(stack) == []
    (warning,) = [text for text in _warnings(stack) if FSX_PORTS.id in text]
    assert "sg-0f5000000000000a0 is immutable" in warning
    assert f"open {LUSTRE_PORTS} on the file system's security group" in warning


def test_a_file_system_given_by_names_does_not_silently_open_nothing() -> None:
    stack, vpc = _stack()
    _cluster(stack, vpc, InstanceStorage.fsx_lustre(dns_name=DNS, mount_name="abcdefgh"))

    assert _lustre_ingress(stack) == []
    (warning,) = [text for text in _warnings(stack) if FSX_PORTS.id in text]
    assert warning.startswith(f"instance group 'controller': storage[] (FsxLustreConfig) = '{DNS}'")
    assert "InstanceStorage.lustre_file_system(file_system)" in warning


def test_an_imported_file_system_needs_its_mount_name() -> None:
    stack, vpc = _stack()
    system = _file_system(stack, vpc, "imported")
    with pytest.raises(HyperPodArgumentError, match=r"mount_name .*pass mount_name="):
        InstanceStorage.lustre_file_system(system)
