"""The IAM actions ``preflight`` calls: all read-only (standard library only, so a CDK app can
grant them, e.g. to a CDK Pipelines step, without importing ``boto3``)."""

from __future__ import annotations

from typing import Any

PREFLIGHT_ACTIONS: tuple[str, ...] = (
    "servicequotas:ListServiceQuotas",
    "servicequotas:ListAWSDefaultServiceQuotas",
    "sagemaker:ListClusters",
    "sagemaker:DescribeCluster",
    "sagemaker:DescribeTrainingPlan",
    "cloudformation:DescribeStackResource",
    "cloudformation:DescribeStacks",
    "cloudformation:GetTemplate",
)
"""Service Quotas' two lists (applied and default SageMaker quotas), the account's clusters and
the app's training plans, and the deployed stack (a generated cluster name; a stack read from
AWS). Missing one is never "ok": the checks that need it are "unknown" (exit 3)."""


def preflight_policy() -> dict[str, Any]:
    """An identity policy document granting :data:`PREFLIGHT_ACTIONS` (resources ``*``: the
    listings accept no narrower resource)."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "HyperPodPreflightReadOnly",
                "Effect": "Allow",
                "Action": list(PREFLIGHT_ACTIONS),
                "Resource": "*",
            }
        ],
    }
