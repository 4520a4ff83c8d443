"""The AWS pages the rules' sources name (:class:`~hyperpod_constructs._core.rule.Source`);
API-model shapes are named where they are used."""

from __future__ import annotations

GUIDE = "https://docs.aws.amazon.com/sagemaker/latest/dg"

SLURM_SCALING = f"{GUIDE}/sagemaker-hyperpod-scaling-slurm.html"
"""Continuous provisioning with Slurm (priority provisioning, MinInstanceCount)."""
SLURM_REFERENCE = f"{GUIDE}/sagemaker-hyperpod-ref.html"
"""The HyperPod references page, section "SageMaker HyperPod Slurm configuration" (``SlurmConfig``
node types and partitions, ``Orchestrator.Slurm``, FSx through ``InstanceStorageConfigs``)."""
SLURM_DEEP_HEALTH_CHECKS = f"{GUIDE}/sagemaker-hyperpod-resiliency-slurm-deep-health-checks.html"
"""Deep health checks on Slurm clusters: the two types and each utility's instance types."""
INSTANCE_ROLE_POLICY = (
    "https://docs.aws.amazon.com/aws-managed-policy/latest/reference/"
    "AmazonSageMakerClusterInstanceRolePolicy.html"
)
"""The managed policy of HyperPod's execution roles (S3 read on ``sagemaker-*`` buckets)."""
WAIT_CONDITION = (
    "https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/"
    "aws-resource-cloudformation-waitcondition.html"
)
"""``AWS::CloudFormation::WaitCondition`` (Timeout at most 43200 s; create-only)."""
PUT_METRIC_DATA = (
    "https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_PutMetricData.html"
)
"""CloudWatch ``PutMetricData`` (the ``Namespace`` parameter)."""

STEP_FUNCTIONS_QUOTAS = "https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html"
"""Step Functions quotas (an execution's history: at most 25,000 events)."""

SEARCHED = (
    "the Slurm continuous provisioning guide, the Slurm configuration reference, the migration "
    "guide to API-driven Slurm configuration, the API reference "
    "(ClusterInstanceGroupSpecification, ClusterSlurmConfig, ClusterOrchestratorSlurmConfig, "
    "ClusterInstanceRequirements) and the "
    "CloudFormation AWS::SageMaker::Cluster page"
)
"""Where an unconfirmed claim was looked for (docs/validation.md, "What was searched")."""
