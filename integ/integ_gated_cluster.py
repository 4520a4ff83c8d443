"""Integration test: a Slurm cluster with a gated compute group, and its readiness gate.

Written for ``@aws-cdk/integ-runner``, which cannot read the cloud assembly aws-cdk-lib 2.275
writes yet (docs/integ.md has the evidence). Until it can: without an AWS account ``make test``
synthesizes this app with the pinned ``cdk`` CLI and compares it with its snapshot
(tests/test_integ.py); with one, the ``cdk deploy`` / ``integ/assertion_results.py`` /
``cdk destroy`` commands in docs/integ.md deploy the stacks, check the assertions below, and
destroy everything.

Assertions, after the test stack is deployed (that is, after the gate let it finish):

- ``DescribeCluster`` shows every gated group ``InService`` with ``CurrentCount >= MinCount``.
  The gated groups here ask for ``min_instance_count == instance_count``, and HyperPod never
  runs more than ``TargetCount`` (= ``instance_count``) nodes, so the check is an equality
  on ``CurrentCount``.
- The gate's wait condition is ``CREATE_COMPLETE``.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import App, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk.integ_tests_alpha import ExpectedResult, IntegTest, Match

from hyperpod_constructs import (
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    LifecycleScripts,
)

HERE = Path(__file__).resolve().parent
CPU = HyperPodInstanceType.of("ml.c5.xlarge")

app = App()
stack = Stack(app, "HyperPodGatedCluster")
vpc = ec2.Vpc(stack, "Vpc", max_azs=1, nat_gateways=1)
cluster = HyperPodSlurmCluster(
    stack,
    "Cluster",
    vpc=vpc,
    lifecycle_scripts=LifecycleScripts.from_directory(
        str(HERE / "lifecycle"), on_create="on_create.sh"
    ),
    instance_groups=[
        InstanceGroup.controller("controller", instance_type=CPU),
        InstanceGroup.compute(
            "workers", instance_type=CPU, instance_count=2, min_instance_count=2, partition="cpu"
        ),
    ],
)
gate = cluster.min_count_gate
assert gate is not None, "the cluster has a gated group, so it has a gate"

integ = IntegTest(app, "GatedCluster", test_cases=[stack], regions=["us-east-1"])

gated = [group for group in cluster.instance_groups if (group.min_instance_count or 0) > 0]
described = integ.assertions.aws_api_call(
    "SageMaker", "describeCluster", {"ClusterName": cluster.cluster_name}
)
described.expect(
    ExpectedResult.object_like(
        {
            "InstanceGroups": Match.array_with(
                [
                    Match.object_like(
                        {
                            "InstanceGroupName": group.name,
                            "Status": "InService",
                            "CurrentCount": group.min_instance_count,
                        }
                    )
                    for group in gated
                ]
            )
        }
    )
)

integ.assertions.aws_api_call(
    "CloudFormation",
    "describeStackResource",
    {"StackName": stack.stack_name, "LogicalResourceId": gate.wait_condition.logical_id},
).expect(
    ExpectedResult.object_like(
        {"StackResourceDetail": Match.object_like({"ResourceStatus": "CREATE_COMPLETE"})}
    )
)

app.synth()
