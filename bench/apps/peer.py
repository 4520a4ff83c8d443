"""The peer of ``clusters.py N``: what an app writes without the library (issue 37).

Usage: ``peer.py N``. Each cluster is the same ``AWS::SageMaker::Cluster`` as ``clusters.py``'s
(a controller and one compute group of 2 ``ml.p5.48xlarge`` with a minimum of 2) written with
the L1 ``CfnCluster``, with the same execution role, and waited for by aws-cdk-lib's own
Provider framework (``custom_resources.Provider`` with an ``is_complete_handler``: a Step
Functions waiter that polls until the handler says complete); an SSM parameter depends on the
waiter's custom resource. The stack has one provider (its two handlers, inline code) that every
cluster's custom resource uses, as a team writing this by hand would. No validation, no
notifications, no dashboard: less than the library's gate does. The library is not imported.
"""

from __future__ import annotations

import _harness

_harness.start()

import sys  # noqa: E402
from typing import Any  # noqa: E402

from aws_cdk import CustomResource, Duration, Stack  # noqa: E402
from aws_cdk import aws_iam as iam  # noqa: E402
from aws_cdk import aws_lambda as lambda_  # noqa: E402
from aws_cdk import aws_sagemaker as sagemaker  # noqa: E402
from aws_cdk import aws_ssm as ssm  # noqa: E402
from aws_cdk import custom_resources as cr  # noqa: E402

MANAGED_POLICY = _harness.library_literal("cluster", "INSTANCE_ROLE_MANAGED_POLICY")

ON_EVENT = """
def handler(event, context):
    return {"PhysicalResourceId": event["ResourceProperties"]["ClusterName"]}
"""

IS_COMPLETE = """
import boto3

def handler(event, context):
    if event["RequestType"] == "Delete":
        return {"IsComplete": True}
    properties = event["ResourceProperties"]
    nodes = boto3.client("sagemaker").list_cluster_nodes(
        ClusterName=properties["ClusterName"],
        InstanceGroupNameContains=properties["GroupName"],
    )["ClusterNodeSummaries"]
    running = sum(n["InstanceStatus"]["Status"] == "Running" for n in nodes)
    return {"IsComplete": running >= int(properties["MinCount"])}
"""


def _provider(stack: Stack) -> cr.Provider:
    """The stack's one waiter: an event handler, a completion check, and the framework."""
    code: dict[str, Any] = {"runtime": lambda_.Runtime.PYTHON_3_12, "handler": "index.handler"}
    on_event = lambda_.Function(stack, "OnEvent", code=lambda_.Code.from_inline(ON_EVENT), **code)
    is_complete = lambda_.Function(
        stack, "IsComplete", code=lambda_.Code.from_inline(IS_COMPLETE), **code
    )
    is_complete.add_to_role_policy(
        iam.PolicyStatement(
            actions=["sagemaker:ListClusterNodes"],
            resources=[
                stack.format_arn(service="sagemaker", resource="cluster", resource_name="*")
            ],
        )
    )
    return cr.Provider(
        stack,
        "Waiter",
        on_event_handler=on_event,
        is_complete_handler=is_complete,
        query_interval=Duration.minutes(1),
        total_timeout=Duration.hours(2),
    )


def _cluster(stack: Stack, index: int, provider: cr.Provider) -> None:
    role = iam.Role(
        stack,
        f"ExecutionRole{index}",
        assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
        managed_policies=[iam.ManagedPolicy.from_aws_managed_policy_name(MANAGED_POLICY)],
    )
    group = sagemaker.CfnCluster.ClusterInstanceGroupProperty
    slurm = sagemaker.CfnCluster.ClusterSlurmConfigProperty
    cluster = sagemaker.CfnCluster(
        stack,
        f"Cluster{index}",
        cluster_name=f"team-{index}",
        node_provisioning_mode="Continuous",
        node_recovery="Automatic",
        instance_groups=[
            group(
                instance_group_name="controller",
                instance_type="ml.m5.2xlarge",
                instance_count=1,
                execution_role=role.role_arn,
                slurm_config=slurm(node_type="Controller"),
            ),
            group(
                instance_group_name="gpu",
                instance_type="ml.p5.48xlarge",
                instance_count=2,
                min_instance_count=2,
                execution_role=role.role_arn,
                slurm_config=slurm(node_type="Compute"),
            ),
        ],
    )
    cluster.node.add_dependency(role)
    wait = CustomResource(
        stack,
        f"Ready{index}Wait",
        service_token=provider.service_token,
        properties={"ClusterName": cluster.attr_cluster_arn, "GroupName": "gpu", "MinCount": "2"},
    )
    ready = ssm.StringParameter(stack, f"Ready{index}", string_value=f"team-{index}")
    ready.node.add_dependency(wait)


def define_peer(app: Any, count: int) -> None:
    """Add the stack with ``count`` clusters, their waiters and dependants to ``app``."""
    stack = Stack(app, "Peer")
    provider = _provider(stack)
    for index in range(count):
        _cluster(stack, index, provider)


def define(app: Any) -> None:
    """Add the stack of ``peer.py N`` to ``app``."""
    define_peer(app, int(sys.argv[1]))


if __name__ == "__main__":
    _harness.run(define)
