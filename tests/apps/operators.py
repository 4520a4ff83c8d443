"""A user's app that uses every API of the cluster interface: imports by ARN and by name,
``IResource`` members, ``cluster_ref``, the gate's metrics with keyword options, an alarm,
HyperPod's events and the operators' grants. mypy --strict checks it (pyproject's ``files``);
tests/test_api.py synthesizes it."""

from __future__ import annotations

from aws_cdk import App, Duration, RemovalPolicy, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sns as sns
from aws_cdk.interfaces.aws_sagemaker import ClusterReference, IClusterRef

from hyperpod_constructs import (
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    IHyperPodCluster,
    InstanceGroup,
)

IMPORTED_ARN = "arn:aws:sagemaker:us-east-1:111122223333:cluster/abcdef123456"
CHECKS = [DeepHealthCheck.INSTANCE_STRESS, DeepHealthCheck.INSTANCE_CONNECTIVITY]


def build(app: App) -> Stack:
    """The operators' stack: a defined cluster with a gated group, and two imported ones."""
    stack = Stack(app, "Operators")
    cluster = HyperPodSlurmCluster(
        stack,
        "Cluster",
        instance_groups=[
            InstanceGroup.controller(
                "controller", instance_type=HyperPodInstanceType.ML_M5_2XLARGE
            ),
            InstanceGroup.compute(
                "gpu",
                instance_type=HyperPodInstanceType.ML_P5_48XLARGE,
                instance_count=4,
                min_instance_count=4,
                partition="gpu",
                deep_health_checks=CHECKS,
            ),
        ],
    )
    by_arn: IHyperPodCluster = HyperPodSlurmCluster.from_cluster_arn(stack, "ByArn", IMPORTED_ARN)
    by_name: IHyperPodCluster = HyperPodSlurmCluster.from_cluster_name(stack, "ByName", "research")
    interface: IHyperPodCluster = cluster

    # IResource and IClusterRef, as for aws-cdk-lib's resources.
    interface.apply_removal_policy(RemovalPolicy.RETAIN)
    assert interface.stack is stack and by_arn.env.region == "us-east-1"
    reference: ClusterReference = by_arn.cluster_ref
    assert reference.cluster_arn == IMPORTED_ARN
    as_ref: IClusterRef = cluster
    assert as_ref.cluster_ref.cluster_arn == cluster.cluster_arn

    # The gate's metrics, options as keywords.
    running = cluster.metric_running_count("gpu", period=Duration.minutes(5), statistic="Minimum")
    cluster.metric("TargetCount", "gpu", label="gpu target")
    for metric in (
        cluster.metric_current_count("gpu", period=Duration.minutes(5)),
        cluster.metric_min_count("gpu", color=cloudwatch.Color.GREY),
        cluster.metric_target_count("gpu", unit=cloudwatch.Unit.COUNT),
    ):
        assert metric.namespace == running.namespace
    running.create_alarm(
        stack,
        "TooFewRunning",
        threshold=4,
        evaluation_periods=1,
        comparison_operator=cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
    )

    # HyperPod's events of each cluster.
    alerts = sns.Topic(stack, "Alerts")
    cluster.on_event("Events", target=targets.SnsTopic(alerts), description="HyperPod events")
    by_arn.on_event(
        "NodeHealth",
        target=targets.SnsTopic(alerts),
        event_pattern=events.EventPattern(
            detail_type=["SageMaker HyperPod Cluster Node Health Event"]
        ),
    )

    # What operators need.
    operator = iam.Role(stack, "Operator", assumed_by=iam.AccountRootPrincipal())
    for target in (cluster, by_arn, by_name):
        target.grant_describe(operator)
        target.grant_ssm_session(operator)
    cluster.grant_update(operator)
    by_arn.grant_update(operator)
    return stack


if __name__ == "__main__":
    app = App()
    build(app)
    app.synth()
