"""The interface of a HyperPod cluster construct (:class:`IHyperPodCluster`): what the readiness
gate and an app's other constructs use, defined below both the cluster and the gate so that
neither imports the other's class (``hyperpod_constructs.cluster`` exports it).

Shaped like aws-cdk-lib's resource interfaces: an :class:`aws_cdk.IResource` (``stack``,
``env``, ``apply_removal_policy``) and the L1's generated reference interface
(:class:`aws_cdk.interfaces.aws_sagemaker.IClusterRef`, ``cluster_ref``), with ``grant*`` and
``on_event`` methods whose options are keyword arguments."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypedDict, runtime_checkable

from aws_cdk import IResource
from aws_cdk.interfaces.aws_sagemaker import IClusterRef

if TYPE_CHECKING:
    from typing import Unpack

    from aws_cdk import aws_events as events
    from aws_cdk import aws_iam as iam
    from constructs import Construct

EVENT_SOURCE = "aws.sagemaker"
"""The EventBridge source of HyperPod's events."""
EVENT_DETAIL_TYPES = (
    "SageMaker HyperPod Cluster Event",
    "SageMaker HyperPod Cluster State Change",
    "SageMaker HyperPod Cluster Node Health Event",
)
"""HyperPod's EventBridge detail-types (source :data:`EVENT_SOURCE`); each event lists the
cluster's ARN in its ``resources``."""


class OnEventOptions(TypedDict, total=False):
    """The keyword options of :meth:`IHyperPodCluster.on_event` (aws-cdk-lib's
    ``events.OnEventOptions``, as keywords).

    :param target: where matching events go, e.g. ``targets.SnsTopic(topic)``. Default: none
        (add one later with ``rule.add_target``).
    :param description: the rule's description. Default: none.
    :param rule_name: the rule's physical name. Default: a name CloudFormation generates.
    :param event_pattern: more filters, merged with the cluster's own (source
        ``aws.sagemaker``, this cluster's ARN); its ``detail_type`` narrows the detail-types.
        Default: every HyperPod detail-type of this cluster.
    :param cross_stack_scope: where to define the rule when the events come from another
        account or region. Default: this cluster's stack.
    """

    target: events.IRuleTarget
    description: str
    rule_name: str
    event_pattern: events.EventPattern
    cross_stack_scope: Construct


@runtime_checkable
class IHyperPodCluster(IResource, IClusterRef, Protocol):
    """A HyperPod cluster, defined in this app or imported: an :class:`aws_cdk.IResource`
    and an :class:`aws_cdk.interfaces.aws_sagemaker.IClusterRef`, like aws-cdk-lib's own
    resource interfaces."""

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

    def grant_update(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` update the cluster (its groups, counts and software).

        :param grantee: the principal (a role, a function, a user).
        """
        ...

    def grant_ssm_session(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` open an SSM session on the cluster's nodes (``aws ssm
        start-session --target sagemaker-cluster:<id>_<group>-<instance>``), and end or
        resume its own sessions.

        :param grantee: the principal (a role, a function, a user).
        """
        ...

    def on_event(self, id: str, **options: Unpack[OnEventOptions]) -> events.Rule:
        """An EventBridge rule for this cluster's HyperPod events (every detail-type of
        ``EVENT_DETAIL_TYPES`` unless ``event_pattern`` narrows them).

        :param id: the rule's id, unique within this cluster.
        :param options: the rule's target, description, name and more filters
            (``OnEventOptions``).
        """
        ...
