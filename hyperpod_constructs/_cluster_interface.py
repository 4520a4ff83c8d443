"""The interface of a HyperPod cluster construct (:class:`IHyperPodCluster`): what the readiness
gate and an app's other constructs use, defined below both the cluster and the gate so that
neither imports the other's class (``hyperpod_constructs.cluster`` exports it)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from aws_cdk import aws_iam as iam
from constructs import IConstruct


@runtime_checkable
class IHyperPodCluster(IConstruct, Protocol):
    """A HyperPod cluster, defined in this app or imported."""

    @property
    def cluster_arn(self) -> str:
        """The cluster ARN (``arn:...:sagemaker:<region>:<account>:cluster/<id>``)."""
        ...

    @property
    def cluster_name(self) -> str:
        """The cluster name; for an imported cluster known only by ARN, the ARN (which the
        SageMaker API accepts wherever it takes a cluster name)."""
        ...

    def grant(self, grantee: iam.IGrantable, *actions: str) -> iam.Grant:
        """Grant ``actions`` (e.g. ``sagemaker:UpdateCluster``) on this cluster, and only this
        cluster, to ``grantee``.

        :param grantee: the principal (a role, a function, a user).
        :param actions: IAM actions, e.g. ``"sagemaker:UpdateCluster"``.
        """
        ...

    def grant_describe(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` read the cluster, its nodes and its events.

        :param grantee: the principal (a role, a function, a user).
        """
        ...
