"""An existing estate's pieces, imported by id (no lookup), and a scratch FSx for Lustre file
system defined in the app: what the tests of imported resources build on."""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_fsx as fsx


def imported_vpc(stack: Stack) -> ec2.IVpc:
    """``vpc-0123456789abcdef0``: one private subnet with its route table, in us-east-1a."""
    return ec2.Vpc.from_vpc_attributes(
        stack,
        "Vpc",
        vpc_id="vpc-0123456789abcdef0",
        availability_zones=["us-east-1a"],
        private_subnet_ids=["subnet-0123456789abcdef0"],
        private_subnet_route_table_ids=["rtb-0123456789abcdef0"],
    )


def scratch_lustre(stack: Stack, vpc: ec2.IVpc, subnet: ec2.ISubnet) -> fsx.LustreFileSystem:
    """``Fsx``: the smallest SCRATCH_2 FSx for Lustre file system, in ``subnet``."""
    return fsx.LustreFileSystem(
        stack,
        "Fsx",
        vpc=vpc,
        vpc_subnet=subnet,
        storage_capacity_gib=1200,
        lustre_configuration=fsx.LustreConfiguration(
            deployment_type=fsx.LustreDeploymentType.SCRATCH_2
        ),
    )
