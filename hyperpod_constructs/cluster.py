"""The HyperPod Slurm cluster L2 construct."""

from __future__ import annotations

import functools
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable
from weakref import WeakKeyDictionary

import jsii
from aws_cdk import (
    Acknowledgment,
    Annotations,
    Aspects,
    CfnDeletionPolicy,
    CfnResource,
    Names,
    RemovalPolicy,
    Resource,
    Stack,
    Stage,
    TagManager,
    Tags,
    Validations,
)
from aws_cdk.interfaces.aws_sagemaker import ClusterReference, IClusterRef
from constructs import Construct, DependencyGroup, IConstruct, IDependable, IValidation

from ._cdk.dependable import LazyDependable, drop_implied_dependencies
from ._cdk.lazy import final_any, lazy_list, lazy_string
from ._cdk.modules import declare_interfaces, loaded_instance_of, submodule
from ._cdk.nag import acknowledge, acknowledge_compliance
from ._cdk.paths import path_of, remember_path
from ._cdk.roles import statements_land
from ._cdk.synthesizer import refusing_synthesizer
from ._cdk.tokens import count_or_token, is_unresolved
from ._cluster.interface import EVENT_DETAIL_TYPES, EVENT_SOURCE
from ._cluster.interface import IHyperPodCluster as IHyperPodCluster
from ._cluster.interface import OnEventOptions as OnEventOptions
from ._cluster.rendering import DELETED, apply_overrides, render_group, to_l1
from ._core.arguments import (
    ARG_TYPE,
    check,
    instance_of,
    is_bool,
    is_sequence,
    is_str,
    raise_if_any,
)
from ._core.finding import merge_findings
from ._gate.metrics import GateMetrics, gate_metric, unwatched_metric_errors
from ._report.records import WARNING_PREFIX, annotation_texts, record_findings
from ._runtime.hyperpod_gate.contract import Requirement
from .enums import NodeProvisioningMode, NodeRecovery, SlurmConfigStrategy, SlurmLayout
from .gate.options import MinCountGateOptions
from .instance_group import InstanceGroup
from .instance_type import known_names
from .lifecycle import BoundLifecycle, LifecycleScripts
from .permissions import (
    SAGEMAKER_SERVICE,
    WILDCARD_RESOURCES,
    execution_role_principal,
    network_interface_statements,
)
from .validation import (
    ClusterSpec,
    Finding,
    accounting_findings,
    argument_finding,
    check_name,
    gate_option_findings,
    lifecycle_findings,
    network_selection_findings,
    node_recovery_findings,
    override_network_findings,
    partition_rules,
    tag_findings,
    validate_cluster,
    validate_group,
)
from .validation.cluster_rules import (
    TAG_LIMITS,
    immutable_role_findings,
    synthesizer_asset_findings,
)
from .validation.name_rules import NAME_CLUSTER
from .validation.node_rules import WARN_INSTANCE_TYPE
from .validation.storage_rules import unopened_lustre_ports

if TYPE_CHECKING:
    from typing import Unpack

    # Imported when the first group is gated: its aws-cdk-lib modules (Lambda, Step Functions,
    # CloudWatch, ...) cost about 0.2 s of CPU that a cluster without a gated group never needs.
    from aws_cdk import aws_cloudwatch as cloudwatch
    from aws_cdk import aws_ec2 as ec2
    from aws_cdk import aws_events as events
    from aws_cdk import aws_iam as iam
    from aws_cdk import aws_sagemaker as sagemaker
    from aws_cdk import aws_secretsmanager as secretsmanager  # annotations only

    from ._gate.construct import MinCountGate
    from ._gate.metrics import MetricOptions
else:  # imported where first used (_cdk/modules.py): aws_ec2 only for a network or IConnectable
    ec2 = submodule("aws_ec2")
    iam = submodule("aws_iam")
    sagemaker = submodule("aws_sagemaker")

INSTANCE_ROLE_MANAGED_POLICY = "AmazonSageMakerClusterInstanceRolePolicy"

PARTITION_RULES = partition_rules.LAYOUT_RULES
"""Rules about ``SlurmConfig.PartitionNames``, which the legacy layout does not render."""

DESCRIBE_ACTIONS = (
    "sagemaker:DescribeCluster",
    "sagemaker:DescribeClusterNode",
    "sagemaker:ListClusterNodes",
    "sagemaker:ListClusterEvents",
)
UPDATE_ACTIONS = ("sagemaker:UpdateCluster", "sagemaker:UpdateClusterSoftware")
"""What :meth:`~HyperPodClusterBase.grant_update` grants on the cluster (an update passes the
groups' execution roles too: ``iam:PassRole``, granted by the defined cluster)."""
SSM_SESSION_ACTION = "ssm:StartSession"
"""Granted on the cluster's ARN: HyperPod's SSM targets (``sagemaker-cluster:<id>_...``) are
authorized against the cluster (the HyperPod guide's SSM access policy)."""
OWN_SESSION_ACTIONS = ("ssm:TerminateSession", "ssm:ResumeSession")
"""Granted on the principal's own sessions only (``session/${aws:userid}-*``)."""


@jsii.implements(IClusterRef)
class HyperPodClusterBase(Resource, metaclass=jsii.JSIIAbstractClass):
    """What every HyperPod cluster construct, defined or imported, can do (abstract: a
    subclass provides ``cluster_arn`` and ``cluster_name``): an :class:`aws_cdk.Resource`
    that implements :class:`IHyperPodCluster`.

    Example:

    ```python
    existing = HyperPodSlurmCluster.from_cluster_arn(stack, "Existing", cluster_arn)
    existing.grant_describe(my_function)  # DescribeCluster, ListClusterNodes, ... on it only
    ```

    :param scope: the construct to define it in (a Stack or a construct in one).
    :param id: its id, unique within ``scope``.
    :param account: the account it lives in. Default: the stack's.
    :param region: the region it lives in. Default: the stack's.
    :param environment_from_arn: an ARN to read the account and region from. Default: none.
    :param physical_name: its physical name. Default: none.
    """

    @property
    @abstractmethod
    def cluster_arn(self) -> str:
        """The cluster ARN."""

    @property
    @abstractmethod
    def cluster_name(self) -> str:
        """The cluster name (or, for a cluster imported by ARN only, the ARN)."""

    @property
    def cluster_ref(self) -> ClusterReference:
        """A reference to the cluster, for aws-cdk-lib's ``IClusterRef`` APIs."""
        return ClusterReference(cluster_arn=self.cluster_arn)

    def grant(self, grantee: iam.IGrantable, *actions: str) -> iam.Grant:
        """Grant ``actions`` on this cluster (and only this cluster) to ``grantee``.

        :param grantee: the principal (a role, a function, a user).
        :param actions: IAM actions, e.g. ``"sagemaker:UpdateCluster"``.
        """
        return iam.Grant.add_to_principal(
            grantee=grantee, actions=list(actions), resource_arns=[self.cluster_arn]
        )

    def grant_describe(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` describe the cluster and list its nodes and events
        (``DescribeCluster``, ``ListClusterNodes``, ``ListClusterEvents``, ...).

        :param grantee: the principal (a role, a function, a user).
        """
        return self.grant(grantee, *DESCRIBE_ACTIONS)

    def grant_update(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` update the cluster: ``UpdateCluster`` and ``UpdateClusterSoftware``
        on it. An update passes the groups' execution roles: a cluster defined in this app
        also grants ``iam:PassRole`` on them (to SageMaker only); for an imported cluster,
        grant it on its roles yourself (``role.grant_pass_role(grantee)``).

        :param grantee: the principal (a role, a function, a user).
        """
        return self.grant(grantee, *UPDATE_ACTIONS)

    def grant_ssm_session(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` open an SSM session on the cluster's nodes
        (``aws ssm start-session --target sagemaker-cluster:<id>_<group>-<instance>``):
        ``ssm:StartSession`` on this cluster only, and ending or resuming its own sessions.

        :param grantee: the principal (a role, a function, a user).
        """
        grant = self.grant(grantee, SSM_SESSION_ACTION)
        own_sessions = self.stack.format_arn(
            service="ssm", resource="session", resource_name="${aws:userid}-*"
        )
        return grant.combine(
            iam.Grant.add_to_principal(
                grantee=grantee, actions=list(OWN_SESSION_ACTIONS), resource_arns=[own_sessions]
            )
        )

    def on_event(self, id: str, **options: Unpack[OnEventOptions]) -> events.Rule:
        """An EventBridge rule for this cluster's HyperPod events: source ``aws.sagemaker``,
        this cluster's ARN, and every detail-type of HyperPod (cluster events, state changes,
        node health events) unless ``event_pattern`` names some.

        Example:

        ```python
        from aws_cdk import aws_events as events
        from aws_cdk import aws_events_targets as targets
        from aws_cdk import aws_sns as sns

        alerts = sns.Topic(stack, "Alerts")
        cluster.on_event(
            "NodeHealth",
            target=targets.SnsTopic(alerts),
            event_pattern=events.EventPattern(
                detail_type=["SageMaker HyperPod Cluster Node Health Event"]
            ),
        )
        ```

        :param id: the rule's id, unique within this cluster.
        :param options: the rule's ``target``, ``description``, ``rule_name``,
            ``event_pattern`` (more filters, merged) and ``cross_stack_scope``.
        """
        from aws_cdk import aws_events as events  # only for those who ask for events

        pattern = options.get("event_pattern")
        rule = events.Rule(
            self,
            id,
            description=options.get("description"),
            rule_name=options.get("rule_name"),
            cross_stack_scope=options.get("cross_stack_scope"),
            event_pattern=pattern,
        )
        given_types = pattern.detail_type if pattern is not None else None
        rule.add_event_pattern(
            source=[EVENT_SOURCE],
            detail_type=None if given_types else list(EVENT_DETAIL_TYPES),
            resources=[self.cluster_arn],
        )
        target = options.get("target")
        if target is not None:
            rule.add_target(target)
        return rule


class _ImportedCluster(HyperPodClusterBase):
    def __init__(self, scope: Construct, id: str, *, arn: str, name: str) -> None:
        super().__init__(scope, id, environment_from_arn=arn)
        self._arn = arn
        self._name = name

    @property
    def cluster_arn(self) -> str:
        return self._arn

    @property
    def cluster_name(self) -> str:
        return self._name


class _ClusterImportedByName(HyperPodClusterBase):
    """A cluster known by name only. HyperPod's ARN ends in the cluster's id, not its name,
    so the ARN (for grants, events, ``cluster_ref``) is read at deploy time by one
    ``DescribeCluster`` call, added when it is first asked for."""

    def __init__(self, scope: Construct, id: str, *, name: str) -> None:
        super().__init__(scope, id)
        self._name = name
        self._arn: str | None = None

    @property
    def cluster_arn(self) -> str:
        if self._arn is None:
            from aws_cdk import custom_resources as cr  # only when the ARN is asked for

            call = cr.AwsSdkCall(
                service="SageMaker",
                action="DescribeCluster",
                parameters={"ClusterName": self._name},
                physical_resource_id=cr.PhysicalResourceId.of(self._name),
                output_paths=["ClusterArn"],
            )
            clusters = self.stack.format_arn(
                service="sagemaker", resource="cluster", resource_name="*"
            )
            lookup = cr.AwsCustomResource(
                self,
                "ArnLookup",
                on_create=call,
                on_update=call,
                install_latest_aws_sdk=False,
                policy=cr.AwsCustomResourcePolicy.from_statements(
                    [
                        iam.PolicyStatement(
                            actions=["sagemaker:DescribeCluster"], resources=[clusters]
                        )
                    ]
                ),
            )
            self._arn = lookup.get_response_field("ClusterArn")
        return self._arn

    @property
    def cluster_name(self) -> str:
        return self._name


@dataclass(frozen=True, kw_only=True)
class AccountingDatabase:
    """An external MySQL-compatible database for ``slurmdbd`` (Continuous mode only).

    Example:

    ```python
    from aws_cdk import aws_secretsmanager as secretsmanager

    AccountingDatabase(
        endpoint="slurm-db.cluster-abc123.us-east-1.rds.amazonaws.com",
        secret=secretsmanager.Secret.from_secret_name_v2(stack, "DbSecret", "slurm/accounting"),
    )  # HyperPodSlurmCluster(..., accounting_database=...)
    ```

    :param endpoint: host name of the database, e.g. an RDS endpoint.
    :param secret: Secrets Manager secret with the credentials; the execution role of
        every group may read it.
    :param database_name: schema name. Default: ``slurm_acct_db``.
    :param port: TCP port. Default: 3306.
    """

    endpoint: str
    secret: secretsmanager.ISecret
    database_name: str | None = None
    port: int | None = None

    def render(self) -> dict[str, Any]:
        """The ``Orchestrator.Slurm.AccountingDatabase`` object of the template (``Endpoint``,
        ``SecretArn``, ``Name``, ``Port``)."""
        body: dict[str, Any] = {"Endpoint": self.endpoint, "SecretArn": self.secret.secret_arn}
        if self.database_name is not None:
            body["Name"] = self.database_name
        if self.port is not None:
            body["Port"] = self.port
        return body


def _has(value: object, *names: str) -> bool:
    """Whether ``value`` has every member of ``names``, looked up on its class first: a jsii
    object's ``hasattr`` reads a property through jsii (a round trip), its class's does not."""
    kind = type(value)
    return all(hasattr(kind, name) or hasattr(value, name) for name in names)


def _is_role(value: object) -> bool:
    return _has(value, "role_arn", "add_to_principal_policy")


def _is_vpc(value: object) -> bool:
    return _has(value, "vpc_id", "select_subnets")


def _is_security_groups(value: object) -> bool:
    return isinstance(value, list | tuple) and all(_has(g, "security_group_id") for g in value)


def _is_accounting_database(value: object) -> bool:
    return isinstance(value, AccountingDatabase) and _has(value.secret, "secret_arn")


def _is_removal_policy(value: object) -> bool:
    return isinstance(value, RemovalPolicy) and value is not RemovalPolicy.SNAPSHOT


_REMOVAL_POLICIES = (
    "RemovalPolicy.DESTROY, RETAIN or RETAIN_ON_UPDATE_OR_DELETE (a cluster has no snapshot)"
)


def _rendered_findings(resource: sagemaker.CfnCluster) -> list[Finding]:
    """The props' checks on what the ``AWS::SageMaker::Cluster`` holds once every aspect and
    mutator ran, so that aws-cdk-lib's own calls (``apply_removal_policy``, ``Tags.of``,
    ``cfn_options``) cannot go around them. The props' values that failed are never
    applied, so a mistake is reported once."""
    options = resource.cfn_options
    policies = (
        ("DeletionPolicy", options.deletion_policy),
        ("UpdateReplacePolicy", options.update_replace_policy),
    )
    return [
        ARG_TYPE.finding(
            field=f"removal_policy ({attribute})",
            value="Snapshot",
            allowed=_REMOVAL_POLICIES,
            fix="apply RemovalPolicy.RETAIN (or DESTROY) instead of SNAPSHOT",
        )
        for attribute, policy in policies
        if policy == CfnDeletionPolicy.SNAPSHOT
    ] + tag_findings(TagManager.of(resource).tag_values())  # type: ignore[union-attr]


_RESOURCE_TYPES: dict[type, str] = {}
"""By L1 class (``CfnStateMachine``), its CloudFormation type: one jsii call per class."""


def _resource_type(resource: CfnResource) -> str:
    """``resource``'s CloudFormation type (read once per L1 class)."""
    kind = type(resource)
    if kind is CfnResource:  # a plain CfnResource: any type
        return resource.cfn_resource_type
    if kind not in _RESOURCE_TYPES:
        _RESOURCE_TYPES[kind] = resource.cfn_resource_type
    return _RESOURCE_TYPES[kind]


_TAGGABLE: dict[type, bool] = {}
"""By L1 class, whether it is ``TagManager.is_taggable``: one jsii call per class."""


def _is_taggable(resource: CfnResource) -> bool:
    """``TagManager.is_taggable(resource)`` (read once per L1 class: an L1 makes its tags
    in its constructor, so every resource of a class is taggable or none is)."""
    kind = type(resource)
    if kind is CfnResource:  # a plain CfnResource: any type
        return bool(TagManager.is_taggable(resource))
    if kind not in _TAGGABLE:
        _TAGGABLE[kind] = bool(TagManager.is_taggable(resource))
    return _TAGGABLE[kind]


_VALUE_CHECK = "hyperpod_constructs.value_check"
"""The metadata key of a :class:`_ClusterProps` field's :class:`_ValueCheck`."""


@dataclass(frozen=True)
class _ValueCheck:
    """A constructor parameter's check by its value alone (a field's metadata): its findings,
    given the parameter's name and value, and ``rank``, the place of its findings among the
    parameters checked this way (1 first; the report's order)."""

    findings: Callable[[str, object], list[Finding]]
    rank: int


def _checked(findings: Callable[[str, object], list[Finding]], *, rank: int) -> dict[str, Any]:
    """The metadata of a :class:`_ClusterProps` field checked by its value alone."""
    return {_VALUE_CHECK: _ValueCheck(findings, rank)}


def _typed(
    ok: Callable[[object], bool], expected: str, *, optional: bool, rank: int
) -> dict[str, Any]:
    """The metadata of a field whose only check is its type (``HP-ARG-TYPE``): ``ok``, or
    ``None`` when ``optional``."""
    return _checked(
        lambda name, value: check(name, value, ok, expected, optional=optional), rank=rank
    )


@dataclass(frozen=True, kw_only=True)
class _ClusterProps:
    """The keyword parameters of :class:`HyperPodSlurmCluster`, declared once: each field is
    one parameter, with the constructor's name, annotation and default (a test compares them
    with the signature and its docstring's ``:param`` entries). A field checked by its value
    alone carries its :class:`_ValueCheck` (:func:`_typed`, :func:`_checked`); the others are
    checked by the rules of the props in :func:`_resolve_props`."""

    instance_groups: Sequence[InstanceGroup] = field(
        default=(),
        metadata=_typed(
            is_sequence,
            "a list of InstanceGroup (or an empty list)",
            optional=False,
            rank=9,
        ),
    )
    cluster_name: str | None = None
    node_provisioning_mode: NodeProvisioningMode = field(
        default=NodeProvisioningMode.CONTINUOUS,
        metadata=_typed(
            instance_of(NodeProvisioningMode),
            "a NodeProvisioningMode, e.g. NodeProvisioningMode.CONTINUOUS",
            optional=True,
            rank=1,
        ),
    )
    node_recovery: NodeRecovery | str | None = field(
        default=NodeRecovery.AUTOMATIC,
        metadata=_checked(lambda _, value: node_recovery_findings(value), rank=2),
    )
    lifecycle_scripts: LifecycleScripts | None = None
    execution_role: iam.IRole | None = field(
        default=None,
        metadata=_typed(_is_role, "an iam.IRole or None", optional=True, rank=3),
    )
    vpc: ec2.IVpc | None = field(
        default=None,
        metadata=_typed(_is_vpc, "an ec2.IVpc or None", optional=True, rank=4),
    )
    vpc_subnets: ec2.SubnetSelection | None = field(
        default=None,
        metadata=_typed(
            loaded_instance_of("aws_ec2", "SubnetSelection"),
            "an ec2.SubnetSelection or None",
            optional=True,
            rank=5,
        ),
    )
    security_groups: Sequence[ec2.ISecurityGroup] | None = field(
        default=None,
        metadata=_typed(
            _is_security_groups,
            "a list of ec2.ISecurityGroup or None",
            optional=True,
            rank=6,
        ),
    )
    slurm_config_strategy: SlurmConfigStrategy | None = field(
        default=None,
        metadata=_typed(
            instance_of(SlurmConfigStrategy),
            "a SlurmConfigStrategy or None",
            optional=True,
            rank=7,
        ),
    )
    slurm_layout: SlurmLayout = field(
        default=SlurmLayout.API,
        metadata=_typed(
            instance_of(SlurmLayout),
            "a SlurmLayout, e.g. SlurmLayout.API",
            optional=False,
            rank=10,
        ),
    )
    declare_slurm_orchestrator: bool = field(
        default=False,
        metadata=_typed(is_bool, "True or False (a bool)", optional=False, rank=11),
    )
    accounting_database: AccountingDatabase | None = field(
        default=None,
        metadata=_typed(
            _is_accounting_database,
            "AccountingDatabase(endpoint=..., secret=<secretsmanager.ISecret>) or None",
            optional=True,
            rank=8,
        ),
    )
    tags: Mapping[str, str] | None = None
    readiness_gate: MinCountGateOptions | None = None
    removal_policy: RemovalPolicy | None = field(
        default=None,
        metadata=_typed(
            _is_removal_policy,
            f"{_REMOVAL_POLICIES}, or None",
            optional=True,
            rank=12,
        ),
    )


@dataclass(frozen=True, kw_only=True)
class _ResolvedProps(_ClusterProps):
    """The props resolved once (:func:`_resolve_props`), which the cluster reads as
    ``self._props``: every parameter's value usable as it is (a value with errors replaced by
    its default, ``lifecycle_scripts`` ``None`` and ``tags`` empty when they have errors,
    ``readiness_gate`` the options the gate uses), what derives from them, and every finding
    of the props in the order the report lists them."""

    name: str
    """``cluster_name``, or one derived from the construct path (:func:`_default_name`)."""
    gate_enabled: bool
    """Whether groups with a minimum are gated (``readiness_gate.enabled`` as given)."""
    render_accounting_database: bool
    """Whether the database is rendered (it has no errors)."""
    findings: tuple[Finding, ...]

    @property
    def gate_options(self) -> MinCountGateOptions:
        """The gate's options: the defaults also when the options given have errors (the
        app may depend on the gate; the synth fails on the findings)."""
        return self.readiness_gate if self.readiness_gate is not None else MinCountGateOptions()


@dataclass(frozen=True)
class _Parameter:
    """A constructor parameter checked by its value alone, read off its field: its findings,
    and the value used in its place when there are any, its default (the synth fails on the
    findings; the construct still builds)."""

    name: str
    findings: Callable[[str, object], list[Finding]]
    fallback: object


def _checked_parameters(props: type[_ClusterProps]) -> tuple[_Parameter, ...]:
    """The fields of ``props`` checked by value alone, in the order of their ranks."""
    checked = sorted(
        (
            (parameter.metadata[_VALUE_CHECK], parameter)
            for parameter in fields(props)
            if _VALUE_CHECK in parameter.metadata
        ),
        key=lambda entry: entry[0].rank,
    )
    return tuple(
        _Parameter(parameter.name, value_check.findings, parameter.default)
        for value_check, parameter in checked
    )


_PARAMETERS = _checked_parameters(_ClusterProps)
"""The parameters checked by value alone, in the order their findings are reported."""


def _default_name(cluster: Construct, cluster_name: str | None) -> str:
    """``cluster_name``, or one derived from the construct path (unique in the account)."""
    return (
        cluster_name
        if cluster_name is not None
        else Names.unique_resource_name(cluster, max_length=63)
    )


def _gate_options(readiness_gate: object) -> MinCountGateOptions:
    """The options given, or the defaults for ``None`` or a value of another type (which
    :func:`gate_option_findings` reports)."""
    if isinstance(readiness_gate, MinCountGateOptions):
        return readiness_gate
    return MinCountGateOptions()


def _has_errors(findings: Sequence[Finding]) -> bool:
    return any(finding.is_error for finding in findings)


def _resolve_props(cluster: Construct, given: _ClusterProps) -> _ResolvedProps:
    """Check every parameter once and decide, in this one place, between each value and its
    fallback: first the parameters checked by value alone (:data:`_PARAMETERS`), then the
    rules of the props (the name, the lifecycle scripts, the database, the tags, the gate's
    options, the network selection)."""
    found: list[Finding] = []
    fallbacks: dict[str, Any] = {}
    for parameter in _PARAMETERS:
        problems = parameter.findings(parameter.name, getattr(given, parameter.name))
        found += problems
        if problems:
            fallbacks[parameter.name] = parameter.fallback
    usable = replace(given, **fallbacks)
    name = _default_name(cluster, usable.cluster_name)
    role, vpc, subnets = usable.execution_role, usable.vpc, usable.vpc_subnets
    scripts = usable.lifecycle_scripts
    role_owned = role is None or isinstance(role, iam.Role)
    scripts_findings = lifecycle_findings(scripts, group=None, role_owned=role_owned)
    tags_findings = tag_findings(usable.tags)
    database_findings = accounting_findings(usable.accounting_database)
    readiness_gate = usable.readiness_gate
    options = _gate_options(readiness_gate)
    gate_enabled = options.enabled is not False
    gate_findings = gate_option_findings(
        MinCountGateOptions() if readiness_gate is None else readiness_gate,
        parameter="readiness_gate",
    )
    found += (
        check_name(name, rule=NAME_CLUSTER, field="cluster_name (ClusterName)", group=None)
        + scripts_findings
        + database_findings
        + tags_findings
        + (gate_findings if gate_enabled else [])
        + network_selection_findings(
            has_vpc=vpc is not None,
            security_groups_given=usable.security_groups is not None,
            subnets_given=subnets is not None,
            explicit_subnets=subnets is not None and subnets.subnets is not None,
        )
    )
    resolved = replace(
        usable,
        lifecycle_scripts=None if _has_errors(scripts_findings) else scripts,
        tags={} if _has_errors(tags_findings) else (usable.tags or {}),
        readiness_gate=MinCountGateOptions() if _has_errors(gate_findings) else options,
    )
    return _ResolvedProps(
        **{parameter.name: getattr(resolved, parameter.name) for parameter in fields(resolved)},
        name=name,
        gate_enabled=gate_enabled,
        render_accounting_database=not _has_errors(database_findings),
        findings=tuple(found),
    )


def _check_scope_and_id(scope: object, id: object) -> None:
    """The only arguments refused at once (nothing can be built without them)."""
    raise_if_any(
        "HyperPodSlurmCluster",
        check(
            "scope",
            scope,
            instance_of(Construct),
            "a Construct (a Stack or a construct in one)",
        )
        + check("id", id, is_str, "a str"),
    )


def _new_cfn_cluster(
    scope: Construct, id: str, *, render_groups: Any, **props: Any
) -> sagemaker.CfnCluster:
    """The cluster's ``AWS::SageMaker::Cluster`` (:func:`_cfn_cluster_class`)."""
    resource: sagemaker.CfnCluster = _cfn_cluster_class()(
        scope, id, render_groups=render_groups, **props
    )
    return resource


@functools.cache
def _cfn_cluster_class() -> Any:
    """The L1 class of the cluster's resource, defined at the first cluster (it subclasses
    ``aws_sagemaker.CfnCluster``, which the library's import does not load)."""

    class _CfnCluster(sagemaker.CfnCluster):
        """The ``AWS::SageMaker::Cluster`` L1, remembering its escape-hatch overrides (including
        an aspect's), so that the readiness gate can compare the minimums the template finally
        carries with the ones it waits for (:meth:`final_instance_groups`)."""

        def __init__(self, scope: Construct, id: str, *, render_groups: Any, **props: Any) -> None:
            super().__init__(scope, id, **props)
            self._render_groups = render_groups
            self.recorded_overrides: list[tuple[str, Any]] = []

        def add_override(self, path: str, value: Any) -> None:
            self.recorded_overrides.append((path, value))
            super().add_override(path, value)

        def add_deletion_override(self, path: str) -> None:
            self.recorded_overrides.append((path, DELETED))
            super().add_deletion_override(path)

        def final_properties(self, *, overrides: bool = True) -> dict[str, Any] | None:
            """``ClusterName`` and ``InstanceGroups`` as the template will carry them, after the
            overrides (CloudFormation's shape; tokens as tokens); ``None`` when an override
            cannot be followed. ``overrides=False``: as the typed API renders them (default:
            with the overrides)."""
            properties: dict[str, Any] = {"InstanceGroups": self._render_groups()}
            if self.cluster_name is not None:
                properties["ClusterName"] = self.cluster_name
            recorded = self.recorded_overrides if overrides else []
            final = apply_overrides({"Properties": properties}, recorded)
            return None if final is None else dict(final.get("Properties") or {})

    return _CfnCluster


@runtime_checkable
class OuterStagePolicy(Protocol):
    """An aspect that checks clusters (``HyperPodPolicy``) also where aws-cdk-lib does not
    carry it: into a ``Stage`` below the scope it was added to. A cluster's validation calls
    it for every such aspect of the scopes above the cluster's own Stage."""

    def check_across_stage(self, cluster: HyperPodSlurmCluster) -> list[str]:
        """Check ``cluster`` (once) and return the errors that fail its Stage's synth."""
        ...


@dataclass(frozen=True)
class _Ancestry:
    """What is above a construct defined in a scope (:func:`_ancestry`)."""

    root: IConstruct
    """The root of the tree (the App)."""
    above_own_stage: tuple[IConstruct, ...]
    """The scopes above the Stage the construct belongs to (that Stage's ancestors),
    outermost first: none for a Stack of the App."""


_ANCESTRIES: WeakKeyDictionary[IConstruct, _Ancestry] = WeakKeyDictionary()
_STACKS: WeakKeyDictionary[IConstruct, Stack] = WeakKeyDictionary()


def _stack_of(scope: IConstruct) -> Stack:
    """``Stack.of(scope)``, read once per scope: the stack of every cluster defined in it."""
    stack = _STACKS.get(scope)
    if stack is None:
        stack = _STACKS[scope] = Stack.of(scope)
    return stack


def _ancestry(scope: IConstruct) -> _Ancestry:
    """What is above a construct defined in ``scope``, read once per scope (what is above a
    construct never changes), not once per cluster."""
    ancestry = _ANCESTRIES.get(scope)
    if ancestry is None:
        stage = Stage.of(scope)
        if stage is None:
            ancestry = _Ancestry(scope.node.root, ())
        else:
            scopes = stage.node.scopes
            ancestry = _Ancestry(scopes[0], tuple(scopes[:-1]))
        _ANCESTRIES[scope] = ancestry
    return ancestry


def _outer_stage_errors(cluster: HyperPodSlurmCluster, scope: IConstruct) -> list[str]:
    """The errors of the policies added above the cluster's own Stage (an App's, or an outer
    Stage's): aws-cdk-lib runs a Stage's aspects only, so they would check nothing here.
    ``scope``: the cluster's."""
    return [
        error
        for outer in _ancestry(scope).above_own_stage
        for aspect in Aspects.of(outer).all
        if isinstance(aspect, OuterStagePolicy)
        for error in aspect.check_across_stage(cluster)
    ]


@jsii.implements(IValidation)
class _ClusterRules:
    def __init__(self, cluster: HyperPodSlurmCluster) -> None:
        self._cluster = cluster

    def validate(self) -> list[str]:
        cluster = self._cluster
        return [
            *cluster._late_groups(),
            *cluster._report(),
            *_outer_stage_errors(cluster, cluster._parent_scope),
        ]


def _cluster_interfaces() -> tuple[type, ...]:
    """What a cluster implements besides :class:`IHyperPodCluster`, declared to jsii at the
    first cluster (:func:`declare_interfaces`): importing the library loads no ``aws_ec2``."""
    return (ec2.IConnectable, iam.IGrantable)


class HyperPodSlurmCluster(HyperPodClusterBase, GateMetrics):
    """A SageMaker HyperPod cluster orchestrated by Slurm (``AWS::SageMaker::Cluster``).

    Every rule HyperPod enforces at deploy time is checked at synth (docs/validation.md): the
    cluster collects the findings of its props, of each group (when it is added), of the
    gate's options and of the rules across groups, and its node validation reports them all
    in one ``cdk synth`` (no template is written). Arguments of the wrong type are findings
    too; only a wrong ``scope`` or ``id`` raises :class:`HyperPodArgumentError` at once.
    Groups with a minimum (``min_instance_count > 0``, or a token such as a
    ``CfnParameter``) get a readiness gate (:attr:`min_count_gate`); depend on
    :attr:`ready` to start only once the cluster is ready.

    The cluster is an :class:`aws_cdk.aws_ec2.IConnectable`
    (``file_system.connections.allow_default_port_from(cluster)``), and the L1 escape hatch
    works for every property, including single groups
    (``cluster.node.default_child.add_property_override("InstanceGroups.1.ImageId", ...)``,
    indexed in the order the groups were added).

    Replacement: ``cluster_name`` and the VPC settings (``vpc``, ``vpc_subnets``,
    ``security_groups``) are create-only: changing them replaces the cluster. With an explicit
    ``cluster_name``, CloudFormation cannot replace the cluster (the new one would take the
    same name): change the name together with the VPC settings.

    Example:

    ```python
    cluster = HyperPodSlurmCluster(
        stack,
        "Cluster",
        vpc=vpc,
        instance_groups=[
            InstanceGroup.controller("ctl", instance_type=HyperPodInstanceType.ML_M5_2XLARGE),
            InstanceGroup.compute(
                "gpu",
                instance_type=HyperPodInstanceType.ML_P5_48XLARGE,
                instance_count=16,
                min_instance_count=16,  # gated: cluster.ready waits for all 16
                partition="gpu",
                deep_health_checks=[
                    DeepHealthCheck.INSTANCE_STRESS,
                    DeepHealthCheck.INSTANCE_CONNECTIVITY,
                ],
            ),
        ],
    )
    ssm.StringParameter(stack, "Ready", string_value=cluster.cluster_arn).node.add_dependency(
        cluster.ready
    )
    ```
    """

    _connections: ec2.Connections | None
    """Made when first asked for (:attr:`connections`): one jsii call fewer per cluster."""
    _arn_token: str | None
    """:attr:`cluster_arn`, read from jsii when first asked for."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        instance_groups: Sequence[InstanceGroup] = (),
        cluster_name: str | None = None,
        node_provisioning_mode: NodeProvisioningMode = NodeProvisioningMode.CONTINUOUS,
        node_recovery: NodeRecovery | str | None = NodeRecovery.AUTOMATIC,
        lifecycle_scripts: LifecycleScripts | None = None,
        execution_role: iam.IRole | None = None,
        vpc: ec2.IVpc | None = None,
        vpc_subnets: ec2.SubnetSelection | None = None,
        security_groups: Sequence[ec2.ISecurityGroup] | None = None,
        slurm_config_strategy: SlurmConfigStrategy | None = None,
        slurm_layout: SlurmLayout = SlurmLayout.API,
        declare_slurm_orchestrator: bool = False,
        accounting_database: AccountingDatabase | None = None,
        tags: Mapping[str, str] | None = None,
        readiness_gate: MinCountGateOptions | None = None,
        removal_policy: RemovalPolicy | None = None,
    ) -> None:
        """Define the cluster.

        :param scope: the construct to define it in (a Stack or a construct in one).
        :param id: its id, unique within ``scope``.
        :param instance_groups: the groups; more can be added with :meth:`add_instance_group`.
        :param cluster_name: 1..63 letters, digits and hyphens. Default: derived from the
            construct path (unique in the account). Replacement on change.
        :param node_provisioning_mode: Default CONTINUOUS (required for min_instance_count).
        :param node_recovery: Default AUTOMATIC (faulty nodes are replaced or rebooted).
            ``None`` leaves ``NodeRecovery`` out (HyperPod's own default); a string token
            (e.g. a ``CfnParameter``'s ``value_as_string``) is passed through.
        :param lifecycle_scripts: scripts for every group that does not bring its own.
            Default: none (HyperPod configures Slurm from each group's SlurmConfig).
        :param execution_role: role for every group that does not bring its own. Default: a
            new role with AmazonSageMakerClusterInstanceRolePolicy, read access to the
            lifecycle bucket and, with a VPC, the ENI permissions HyperPod needs.
            Replacement of the groups on change.
        :param vpc: Default: none (HyperPod's own network unless ``vpc_subnets`` names
            subnets; FSx storage needs a network).
        :param vpc_subnets: Default: the VPC's private subnets with egress. Explicit
            ``subnets`` (e.g. ``ec2.Subnet.from_subnet_id``) are used as given, without a VPC
            lookup, and need no ``vpc`` when ``security_groups`` are given too.
        :param security_groups: Default: a new group in ``vpc`` that allows all traffic
            within itself (needed for EFA) and all outbound traffic.
        :param slurm_config_strategy: only in STANDARD mode. Default: none.
        :param slurm_layout: where node types and partitions live. Default API (each group's
            ``SlurmConfig``); LIFECYCLE_SCRIPTS leaves ``SlurmConfig`` out for clusters whose
            layout is in ``provisioning_parameters.json`` (STANDARD mode only).
        :param declare_slurm_orchestrator: render ``Orchestrator: {"Slurm": {}}`` even with no
            Slurm option set, as AWS's Continuous-mode examples do. Default: False
            (``Orchestrator`` only when ``slurm_config_strategy`` or ``accounting_database``
            is set). Replacement on change (``Orchestrator`` is create-only).
        :param accounting_database: Slurm accounting database (CONTINUOUS only). Default: none.
        :param tags: tags for the cluster and the resources the construct creates. The
            cluster's final tags (these and any ``Tags.of(...)``) are checked at synth.
        :param readiness_gate: options of the readiness gate. Default: on, with the defaults
            of :class:`MinCountGateOptions`, whenever a group has a minimum
            (``min_instance_count > 0``, or a token).
        :param removal_policy: what happens to the running cluster when it leaves the stack or
            CloudFormation replaces it (``DeletionPolicy`` and ``UpdateReplacePolicy``).
            Default: none written, i.e. CloudFormation's ``Delete``: the cluster and every
            node go with the stack, so no GPU instance bills after ``cdk destroy`` or a
            replacement. ``RemovalPolicy.RETAIN`` keeps it running (and its training job)
            when it is removed or replaced, outside any stack and billing until deleted by
            hand; ``RETAIN_ON_UPDATE_OR_DELETE`` likewise, except when the creation fails.
            ``SNAPSHOT`` is refused (a cluster has no snapshot), also when it reaches the
            resource another way (``apply_removal_policy``, ``cfn_options``). ``python -m
            hyperpod_constructs plan`` shows which one applies before a deployment.
        """
        _check_scope_and_id(scope, id)
        declare_interfaces(type(self), _cluster_interfaces)
        super().__init__(scope, id)
        self._parent_scope = scope
        remember_path(self, scope, id)
        self._init_state()
        self._props = _resolve_props(
            self,
            _ClusterProps(
                instance_groups=instance_groups,
                cluster_name=cluster_name,
                node_provisioning_mode=node_provisioning_mode,
                node_recovery=node_recovery,
                lifecycle_scripts=lifecycle_scripts,
                execution_role=execution_role,
                vpc=vpc,
                vpc_subnets=vpc_subnets,
                security_groups=security_groups,
                slurm_config_strategy=slurm_config_strategy,
                slurm_layout=slurm_layout,
                declare_slurm_orchestrator=declare_slurm_orchestrator,
                accounting_database=accounting_database,
                tags=tags,
                readiness_gate=readiness_gate,
                removal_policy=removal_policy,
            ),
        )
        self._record(self._props.findings)
        self._add_role()
        vpc_config = self._add_network()
        self._resource = self._add_resource(vpc_config)
        self._add_tags()
        self.node.add_validation(_ClusterRules(self))
        for group in self._props.instance_groups:
            self.add_instance_group(group)

    @classmethod
    def from_cluster_attributes(
        cls, scope: Construct, id: str, *, cluster_arn: str, cluster_name: str | None = None
    ) -> IHyperPodCluster:
        """Import an existing cluster, to grant access to it or to depend on it.

        :param scope: the construct to define it in (a Stack or a construct in one).
        :param id: its id, unique within ``scope``.
        :param cluster_arn: the cluster's ARN.
        :param cluster_name: its name. Default: the ARN (which the API accepts as a name).
        """
        return _ImportedCluster(scope, id, arn=cluster_arn, name=cluster_name or cluster_arn)

    @classmethod
    def from_cluster_arn(cls, scope: Construct, id: str, cluster_arn: str) -> IHyperPodCluster:
        """Import an existing cluster by ARN.

        :param scope: the construct to define it in (a Stack or a construct in one).
        :param id: its id, unique within ``scope``.
        :param cluster_arn: the cluster's ARN.
        """
        return cls.from_cluster_attributes(scope, id, cluster_arn=cluster_arn)

    @classmethod
    def from_cluster_name(cls, scope: Construct, id: str, cluster_name: str) -> IHyperPodCluster:
        """Import an existing cluster of this stack's account and region by name.

        A HyperPod ARN ends in the cluster's id, not its name: when the ARN is needed (a
        grant, ``on_event``, ``cluster_ref``), one ``DescribeCluster`` call reads it at
        deploy time (an ``AwsCustomResource`` at ``<id>/ArnLookup``, allowed
        ``sagemaker:DescribeCluster`` only). Where you know the ARN,
        :meth:`from_cluster_attributes` needs no lookup.

        :param scope: the construct to define it in (a Stack or a construct in one).
        :param id: its id, unique within ``scope``.
        :param cluster_name: the cluster's name.
        """
        return _ClusterImportedByName(scope, id, name=cluster_name)

    # -- public surface ------------------------------------------------------------------

    @property
    def cluster_arn(self) -> str:
        """The cluster ARN (a token)."""
        if self._arn_token is None:  # one token, read once: every read is a jsii call
            self._arn_token = self._resource.attr_cluster_arn
        return self._arn_token

    @property
    def cluster_name(self) -> str:
        """The cluster name."""
        return self._props.name

    @property
    def cluster_status(self) -> str:
        """``ClusterStatus`` at the end of the deployment (a token)."""
        return self._resource.attr_cluster_status

    @property
    def instance_groups(self) -> tuple[InstanceGroup, ...]:
        """The groups, in the order they were added."""
        return tuple(self._groups)

    @property
    def node_provisioning_mode(self) -> NodeProvisioningMode:
        """How HyperPod provisions the nodes (``NodeProvisioningMode.CONTINUOUS`` unless
        given)."""
        return self._props.node_provisioning_mode

    @property
    def vpc(self) -> ec2.IVpc | None:
        """The VPC the nodes run in, or ``None`` for HyperPod's own network."""
        return self._props.vpc

    @property
    def role(self) -> iam.IRole:
        """The default execution role of the groups."""
        return self._role

    @property
    def grant_principal(self) -> iam.IPrincipal:
        """The principal to grant to (:class:`aws_cdk.aws_iam.IGrantable`): the groups'
        default execution role, as ``aws_lambda.Function`` and ``aws_ec2.Instance`` name
        their role. ``bucket.grant_read(cluster)`` lets the nodes read the bucket; a group
        with its own ``execution_role`` is not granted."""
        return self._role

    def add_to_role_policy(self, statement: iam.PolicyStatement) -> None:
        """Add ``statement`` to the default execution role's policy (as
        ``aws_ec2.Instance.add_to_role_policy``). An imported role that is immutable takes
        nothing: the cluster's one warning about that role (``HP-WARN-ROLE-IMMUTABLE``)
        then names these statements too.

        :param statement: the permission the nodes need.
        """
        granted = self._role.add_to_principal_policy(statement)
        if not (granted.statement_added and statements_land(self._role)):
            self._warn_missing_permission(self._role, "the statements of add_to_role_policy")

    @property
    def tags(self) -> TagManager:
        """The tags of the ``AWS::SageMaker::Cluster`` (its ``TagManager``):
        ``cluster.tags.tag_values()`` reads them once the aspects ran (``tags=``,
        ``Tags.of``), ``cluster.tags.set_tag(...)`` sets one on the cluster resource only.
        ``Tags.of(cluster).add(...)`` tags everything the cluster creates (its role, the
        gate)."""
        return cast(TagManager, TagManager.of(self._resource))

    @property
    def connections(self) -> ec2.Connections:
        """The cluster's security groups (:class:`aws_cdk.aws_ec2.IConnectable`), to allow
        traffic to file systems or databases; empty without a network."""
        if self._connections is None:
            self._connections = ec2.Connections(security_groups=self._security_groups)
        return self._connections

    @property
    def min_count_gate(self) -> MinCountGate | None:
        """The readiness gate (its wait condition, functions, loop and topic).

        ``None`` while no group has a minimum (above 0, or a token) or when the gate is
        disabled; to make something wait, depend on :attr:`ready`, which always exists.
        """
        return self._gate

    @property
    def ready(self) -> IDependable:
        """Depend on this to wait until the cluster is ready:
        ``resource.node.add_dependency(cluster.ready)``.

        It is the gate's wait condition when a group is gated (every gated group has its
        minimum), and the cluster resource otherwise. Decided at synth, so groups added after
        the dependency was taken count too.
        """
        return self._ready

    @property
    def ready_fingerprint(self) -> str:
        """A token to hand a dependant of :attr:`ready` as a property, so that CloudFormation
        updates it when a deployment waits again (a gated minimum or target changed, a gated
        group added or removed): the gate's :attr:`MinCountGate.ready_fingerprint`, or
        ``"ungated"`` while no group is gated. Decided at synth."""
        return lazy_string(
            lambda: "ungated" if self._gate is None else str(self._gate.ready_fingerprint)
        )

    def grant_update(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` update the cluster: ``UpdateCluster`` and ``UpdateClusterSoftware``
        on it, and ``iam:PassRole`` (to SageMaker only) on the groups' execution roles, as
        the groups stand at synth.

        :param grantee: the principal (a role, a function, a user).
        """
        grant = super().grant_update(grantee)
        roles = lazy_list(lambda: list(dict.fromkeys(map(self._role_arn, self._groups))))
        return grant.combine(
            iam.Grant.add_to_principal(
                grantee=grantee,
                actions=["iam:PassRole"],
                resource_arns=roles,
                conditions={"StringEquals": {"iam:PassedToService": SAGEMAKER_SERVICE}},
            )
        )

    def add_instance_group(self, group: InstanceGroup) -> None:
        """Add a group. Its problems are reported at synth, with every other finding of the
        cluster (see :meth:`findings`); a group with errors is not wired up (no lifecycle
        upload, no gate).

        :param group: an :class:`InstanceGroup` (``InstanceGroup.compute(...)``). Groups are
            rendered in the order they are added.
        """
        position = len(self._groups) + 1
        if not isinstance(group, InstanceGroup):
            self._record(
                [
                    argument_finding(
                        "instance_groups[]",
                        group,
                        "an InstanceGroup, e.g. InstanceGroup.compute(...)",
                    )
                ],
                position=position,
            )
            return
        findings = validate_group(
            group,
            gate=self._props.gate_enabled,
            role_owned=isinstance(group.execution_role or self._role, iam.Role),
        )
        if self._props.slurm_layout is SlurmLayout.LIFECYCLE_SCRIPTS:
            # Partitions live in provisioning_parameters.json (Slurm's own names, not rendered).
            findings = [f for f in findings if f.rule not in PARTITION_RULES]
        overridden = group.vpc_subnets is not None or group.security_groups is not None
        if overridden and not any(f.rule == ARG_TYPE.id for f in findings):
            findings += override_network_findings(
                group,
                has_vpc=self._props.vpc is not None,
                cluster_security_groups=len(self._security_groups),
            )
        self._record(findings, position=position)
        self._groups.append(group)
        if any(finding.is_error for finding in findings):
            if group.has_minimum:
                # The app may depend on the gate; the synth fails on the findings anyway.
                self._sync_gate(None)
            return
        self._wired.append(group)
        override = self._override_vpc_config(group)
        if override is not None:
            self._override_vpc_configs[id(group)] = override
        self._bound_lifecycles[group.name] = self._bind_lifecycle(group)
        role = group.execution_role
        if role is not None and isinstance(role, Construct):
            self._teardown.add(role)
            self._grant_vpc_access(role)
        self._open_file_systems(group)
        if role is not None and self._props.accounting_database is not None:
            self._props.accounting_database.secret.grant_read(role)
        if group.has_minimum:
            self._sync_gate(group)

    def findings(self) -> list[Finding]:
        """Every error found so far: the cluster's props, each group, the gate's options and
        the rules across groups. The cluster's node validation reports them at synth, so a
        template is only written when this is empty. Warnings are CDK annotations instead."""
        return [finding for finding in self._all_findings() if finding.is_error]

    # -- internals -----------------------------------------------------------------------

    def _init_state(self) -> None:
        """The state the groups added later build up."""
        self._groups: list[InstanceGroup] = []
        self._arn_token = None
        self._wired: list[InstanceGroup] = []
        """The groups without errors: bound, gated and rendered (a group with errors is
        reported at synth and never rendered)."""
        self._produced_groups: int | None = None
        """How many groups ``InstanceGroups`` rendered when it was produced (once)."""
        self._gate: MinCountGate | None = None
        self._upload_refused = False
        self._ready = LazyDependable(self, "Ready", roots=self._ready_roots)
        self._bound_lifecycles: dict[str, BoundLifecycle | None] = {}
        self._found: list[Finding] = []
        """Every finding of the props and the groups (all severities), each group's with its
        position; warnings become annotations at synth (:meth:`_report`)."""
        # One jsii call per distinct role, not per group, when the groups are rendered.
        self._role_arns: dict[int, str] = {}
        self._security_groups: list[ec2.ISecurityGroup] = []
        self._connections = None
        self._vpc_policy: iam.Policy | None = None
        self._subnet_ids: list[str] = []
        # Every subnet and security group the nodes' network interfaces may use (the cluster's
        # and the groups' OverrideVpcConfig), which the execution roles' ENI policy names.
        self._eni_subnets: list[str] = []
        self._eni_security_groups: list[str] = []
        self._override_vpc_configs: dict[int, dict[str, Any]] = {}
        self._opened: set[int] = set()
        self._ungranted: dict[str, list[str]] = {}
        """By immutable execution role, what the library could not grant it."""
        self._metric_groups: dict[str, str] = {}
        """The groups whose gate metrics were asked for, and the method that asked first."""

    def _add_role(self) -> None:
        """The groups' default execution role (a new one unless one is given), and the
        teardown order. SageMaker assumes the execution role while it deletes the cluster, so
        roles, their policies, the lifecycle upload and the network must outlive the cluster:
        one group the cluster depends on, read at synth, so what is added later (group roles,
        the VPC policy, the upload) counts too."""
        self._role = self._props.execution_role or self._default_role()
        self._teardown = DependencyGroup(self._role)

    def _add_network(self) -> dict[str, Any] | None:
        """The cluster's ``VpcConfig`` (and its security group when none is given), and the
        default role's access to it."""
        props = self._props
        vpc_config = self._network(props.vpc, props.vpc_subnets, props.security_groups)
        self._has_network = vpc_config is not None
        self._grant_vpc_access(self._role)
        return vpc_config

    def _add_tags(self) -> None:
        """The tags, on the cluster and everything the construct creates."""
        if self._props.tags:
            tags = Tags.of(self)
            for key, value in self._props.tags.items():
                tags.add(key, value)

    def _orchestrator(self) -> dict[str, Any] | None:
        """``Orchestrator.Slurm`` (the accounting database's secret readable by the role)."""
        props = self._props
        slurm: dict[str, Any] = {}
        if props.slurm_config_strategy is not None:
            slurm["SlurmConfigStrategy"] = props.slurm_config_strategy.value
        database = props.accounting_database
        if database is not None and props.render_accounting_database:
            slurm["AccountingDatabase"] = database.render()
            database.secret.grant_read(self._role)
        return {"Slurm": slurm} if slurm or props.declare_slurm_orchestrator else None

    def _add_resource(self, vpc_config: dict[str, Any] | None) -> sagemaker.CfnCluster:
        """The ``AWS::SageMaker::Cluster``, its removal policy and its teardown order."""
        props = self._props
        orchestrator = self._orchestrator()
        resource = _new_cfn_cluster(
            self,
            "Resource",
            render_groups=self._render_groups,
            # A name that is not a str is reported (HP-NAME-CLUSTER); jsii would reject it.
            cluster_name=props.name if isinstance(props.name, str) else None,
            node_provisioning_mode=(
                props.node_provisioning_mode.value
                if props.node_provisioning_mode is NodeProvisioningMode.CONTINUOUS
                else None
            ),
            node_recovery=(
                props.node_recovery.value
                if isinstance(props.node_recovery, NodeRecovery)
                else props.node_recovery
            ),
            vpc_config=vpc_config,
            # Rendered at synth, after every group has been added, as the L1's own property
            # (not a raw override), so escape-hatch overrides of single groups merge into it.
            # Once: aws-cdk-lib resolves a template several times per synth (a callback each),
            # and the groups are final when it first does (as the gate's values, which the
            # groups make, are).
            instance_groups=final_any(self._produce_groups),
            orchestrator=to_l1(orchestrator),
        )
        if props.removal_policy is not None:
            resource.apply_removal_policy(props.removal_policy)
        if props.vpc is not None:
            self._teardown.add(props.vpc)
        resource.node.add_dependency(self._teardown)
        drop_implied_dependencies(resource, stack=_stack_of(self._parent_scope))
        return resource

    def _record(self, findings: Sequence[Finding], *, position: int | None = None) -> None:
        """Keep ``findings`` (those of the group at ``position``) for the synth's report."""
        self._found += (
            findings
            if position is None
            else [replace(f, positions=(position,)) if f.group is not None else f for f in findings]
        )

    def _all_findings(self) -> list[Finding]:
        """Every finding, errors first; a group's position shown only where names repeat."""
        shared = _shared_positions(self._groups)
        found = [
            replace(f, positions=f.positions or shared[f.group])
            if f.group in shared
            else replace(f, positions=())
            for f in (
                *self._found,
                *self._cross_group_findings(),
                *_rendered_findings(self._resource),
                *immutable_role_findings(self._ungranted),
                *self._library_tag_findings(),
            )
        ]
        return sorted(found, key=lambda finding: not finding.is_error)

    def _library_tag_findings(self) -> list[Finding]:
        """The tags (``tags=``, ``Tags.of``) of the other resources the cluster creates (its
        role, the gate's state machine, ...) against their types' limits, where the cluster's
        own resource takes them: a value one of them refuses is the library's finding, not
        aws-cdk-lib's error on a resource the user never created."""
        by_type: dict[str, dict[str, str]] = {}
        for resource in self._strictly_tagged():
            if _is_taggable(resource):
                values = TagManager.of(resource).tag_values()  # type: ignore[union-attr]
                by_type.setdefault(_resource_type(resource), {}).update(values)
        return tag_findings(None, on_resources=by_type)

    def _strictly_tagged(self) -> list[CfnResource]:
        """The resources of the types in :data:`TAG_LIMITS` the cluster creates: the gate's
        state machine and dashboard (tests/test_tag_limits.py checks that no other type
        the library creates is stricter than the cluster's own resource, whose tags are
        checked with it). Read from the Python objects: walking the construct tree would
        load a jsii proxy (and its module) for every L1 that aws-cdk-lib's L2s created."""
        gate = self._gate
        if gate is None:
            return []
        found: list[CfnResource] = [gate._state_machine]
        if gate.dashboard is not None:
            found.append(cast(CfnResource, gate.dashboard.node.default_child))
        return [resource for resource in found if _resource_type(resource) in TAG_LIMITS]

    def _report(self) -> list[str]:
        """The node validation: every finding as one line per mistake. Errors fail the synth
        (their lines go back to aws-cdk-lib, followed by the warnings, marked
        :data:`WARNING_PREFIX`, when there are errors); warnings become annotations now, when
        every group is known. Everything is recorded for the report of a failing synth, which
        shows what no one else would then: the warnings, and the other annotations (a
        policy's, the gate's)."""
        findings = merge_findings(self._all_findings())
        errors = [finding for finding in findings if finding.is_error]
        warnings = [finding for finding in findings if not finding.is_error]
        if warnings:  # Annotations.of is a jsii call: only when there is something to add
            annotations = Annotations.of(self)
            for warning in warnings:
                annotations.add_warning_v2(f"hyperpod:{warning.rule}", warning.message())
        _acknowledge_reported_types(self._resource, self._wired, warnings)
        record_findings(
            self,
            errors,
            warnings,
            annotated=[self._gate] if self._gate is not None else [],
            root=_ancestry(self._parent_scope).root,
            path=path_of(self),
        )
        refused = self._unwatched_metrics()
        if not errors and not refused:
            return []
        # A failing synth writes no template, so no one prints the warnings: the error's
        # message carries them, after the errors (an acknowledged warning is gone).
        _, shown = annotation_texts([self])
        return (
            [finding.message() for finding in errors]
            + refused
            + [
                f"{WARNING_PREFIX}{text}"
                for text in dict.fromkeys(finding.message() for finding in warnings)
                if text in shown
            ]
        )

    def _cross_group_findings(self) -> list[Finding]:
        spec = ClusterSpec(
            name=self._props.name,
            mode=self._props.node_provisioning_mode,
            groups=self._groups,
            slurm_config_strategy=self._props.slurm_config_strategy,
            has_accounting_database=self._props.accounting_database is not None,
            has_vpc=self._has_network,
            security_group_count=len(self._security_groups) if self._has_network else None,
            subnet_count=len(self._subnet_ids) if self._has_network else None,
            slurm_layout=self._props.slurm_layout,
        )
        return [f for f in validate_cluster(spec) if f.rule != NAME_CLUSTER.id]

    def _default_role(self) -> iam.Role:
        role = iam.Role(
            self,
            "ExecutionRole",
            assumed_by=execution_role_principal(),
            description="Execution role of the HyperPod cluster's instance groups",
            managed_policies=[_instance_role_policy()],
        )
        acknowledge_compliance(
            role,
            "The role's own statements (lifecycle read, accounting secret, volume key) belong "
            "to this role only and are deleted with it; shared statements are separate "
            "policies",
            "IAMNoInlinePolicy",
        )
        acknowledge(
            role,
            "HyperPod requires the AWS managed AmazonSageMakerClusterInstanceRolePolicy on the "
            "execution role of its instance groups",
            f"AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/"
            f"{INSTANCE_ROLE_MANAGED_POLICY}]",
        )
        return role

    def _network(
        self,
        vpc: ec2.IVpc | None,
        vpc_subnets: ec2.SubnetSelection | None,
        security_groups: Sequence[ec2.ISecurityGroup] | None,
    ) -> dict[str, Any] | None:
        if vpc is None and (vpc_subnets is None or security_groups is None):
            return None  # HP-VPC-REQUIRED has rejected a partial network already
        if security_groups:
            self._security_groups = list(security_groups)
            self._keep_security_groups(security_groups)
        elif vpc is not None:
            group = ec2.SecurityGroup(
                self,
                "SecurityGroup",
                vpc=vpc,
                description="HyperPod cluster nodes: all traffic within the group (EFA)",
                allow_all_outbound=True,
            )
            group.add_ingress_rule(group, ec2.Port.all_traffic(), "All traffic between nodes (EFA)")
            acknowledge_compliance(
                group,
                "The only ingress source is the group itself: EFA needs all traffic between "
                "the cluster's nodes (AWS EFA guide: security group rules)",
                "EC2RestrictedCommonPorts",
            )
            # The self-referencing ingress rule is its own resource: nodes need it (EFA) from
            # the start and until the cluster is gone.
            self._teardown.add(group)
            self._security_groups = [group]
        self._subnet_ids = _subnet_ids(vpc, vpc_subnets)
        security_group_ids = [sg.security_group_id for sg in self._security_groups]
        self._eni_subnets.extend(self._subnet_ids)
        self._eni_security_groups.extend(security_group_ids)
        return {"securityGroupIds": security_group_ids, "subnets": self._subnet_ids}

    def _keep_security_groups(self, security_groups: Sequence[ec2.ISecurityGroup]) -> None:
        """Their rules (EFA, FSx, ...) must exist while nodes run and outlive the cluster."""
        self._teardown.add(*(group for group in security_groups if isinstance(group, Construct)))

    def _override_vpc_config(self, group: InstanceGroup) -> dict[str, Any] | None:
        """``OverrideVpcConfig`` of a group (both lists: the API takes both or neither)."""
        if group.vpc_subnets is None and group.security_groups is None:
            return None
        if group.security_groups is not None:
            self._keep_security_groups(group.security_groups)
        groups = group.security_groups or tuple(self._security_groups)
        if group.vpc_subnets is not None and (
            group.vpc_subnets.subnets is not None or self._props.vpc is not None
        ):
            subnets = _subnet_ids(self._props.vpc, group.vpc_subnets)
        else:
            subnets = list(self._subnet_ids)
        security_group_ids = [sg.security_group_id for sg in groups]
        self._eni_subnets.extend(subnets)
        self._eni_security_groups.extend(security_group_ids)
        return {"SecurityGroupIds": security_group_ids, "Subnets": subnets}

    def _grant_vpc_access(self, role: iam.IRole) -> None:
        """Attach the network-interface policy to an execution role this app defines; ask an
        imported role for the same statements and warn when it cannot take them."""
        if not self._has_network:
            return
        if not isinstance(role, iam.Role):
            added = [role.add_to_principal_policy(s) for s in self._network_statements()]
            if not (all(grant.statement_added for grant in added) and statements_land(role)):
                self._warn_missing_permission(role, "the network-interface actions")
            return
        if self._vpc_policy is None:
            self._vpc_policy = self._new_vpc_policy()
            self._teardown.add(self._vpc_policy)
        self._vpc_policy.attach_to_role(role)

    def _network_statements(self) -> list[iam.PolicyStatement]:
        """The network-interface statements, pinned to every subnet and security group the
        cluster and its groups' ``OverrideVpcConfig`` use (read at synth)."""
        return network_interface_statements(self._eni_subnets, self._eni_security_groups)

    def _new_vpc_policy(self) -> iam.Policy:
        policy = iam.Policy(
            self,
            "VpcAccess",
            statements=self._network_statements(),
        )
        acknowledge(
            policy,
            "HyperPod creates, describes and removes the nodes' network interfaces at run time "
            "(AWS docs: IAM role for SageMaker HyperPod); the EC2 Describe actions take no "
            "resource, new interfaces have no ARN before they exist, the subnets and security "
            "groups are pinned by ec2:SubnetID / ec2:SecurityGroupID conditions in any owner "
            "account (shared VPCs), and the nodes' instances live in a HyperPod service account",
            *(f"AwsSolutions-IAM5[Resource::{resource}]" for resource in WILDCARD_RESOURCES),
        )
        acknowledge_compliance(
            policy,
            "A policy of this cluster attached to each execution role the app defines; it is "
            "deleted with the cluster's stack, after the cluster (teardown order)",
            "IAMNoInlinePolicy",
        )
        return policy

    def _open_file_systems(self, group: InstanceGroup) -> None:
        """Let the nodes reach the file systems a group mounts (their own port ranges); warn
        (``HP-FSX-PORTS``) where a security group takes no rule (an immutable import)."""
        for storage in group.storage:
            system = storage.file_system
            if system is not None and self._has_network and id(system) not in self._opened:
                self._opened.add(id(system))
                connections = system.connections
                connections.allow_default_port_from(self, "HyperPod cluster nodes")
                default = connections.default_port
                port = f":{default.to_string()}" if default is not None else ""
                refused = [
                    sg.security_group_id
                    for sg in connections.security_groups
                    if not any(
                        rule.node.id.startswith("from ") and rule.node.id.endswith(port)
                        for rule in sg.node.children
                    )
                ]
                if refused:
                    why = f"security group {', '.join(refused)} is immutable in this app"
                    self._record([unopened_lustre_ports(group.name, storage.dns_name, why)])

    def _warn_missing_permission(self, role: iam.IRole, what: str) -> None:
        """Remember that ``role`` could not be granted ``what``: one warning per role
        (``HP-WARN-ROLE-IMMUTABLE``) names all of it at synth."""
        missing = self._ungranted.setdefault(path_of(role), [])
        if what not in missing:
            missing.append(what)

    def _role_arn(self, group: InstanceGroup) -> str:
        role = group.execution_role or self._role
        key = id(role)
        if key not in self._role_arns:
            self._role_arns[key] = role.role_arn
        return self._role_arns[key]

    def _bind_lifecycle(self, group: InstanceGroup) -> BoundLifecycle | None:
        scripts = group.lifecycle_scripts or self._props.lifecycle_scripts
        if scripts is None:
            return None
        role = group.execution_role or self._role
        uploads = scripts.directory is not None
        if uploads and self._upload_refused:
            return None
        try:
            bound = scripts.bind(self, role)
        except RuntimeError as refused:  # jsii: the synthesizer refused the upload's assets
            if not uploads:
                raise
            self._upload_refused = True
            reason = str(refused)
            self._record(
                synthesizer_asset_findings(
                    refusing_synthesizer(self, reason),
                    "the lifecycle scripts' upload (LifecycleScripts.from_directory)",
                    reason,
                )
            )
            return None
        if not isinstance(role, iam.Role) and not scripts.can_grant(self, role):
            self._warn_missing_permission(role, "read access to the lifecycle scripts")
        if bound.dependable is not None:
            self._teardown.add(bound.dependable)
        return bound

    def _produce_groups(self) -> object:
        """``InstanceGroups``, produced once (the first time anything resolves it)."""
        self._produced_groups = len(self._wired)
        return to_l1(self._render_groups())

    def _late_groups(self) -> list[str]:
        """A group added after ``InstanceGroups`` was produced is not in the template: an
        error, never a silent omission."""
        produced = self._produced_groups
        if produced is None or produced == len(self._wired):
            return []
        late = ", ".join(group.name for group in self._wired[produced:])
        return [
            f"{self.node.path}: instance group(s) {late} were added after the cluster's "
            f"template was first resolved (it has {produced} of {len(self._wired)} groups). "
            "Fix: add every group before anything resolves the stack (stack.resolve, a synth)"
        ]

    def _render_groups(self) -> list[dict[str, Any]]:
        return [
            render_group(
                group,
                execution_role_arn=self._role_arn(group),
                lifecycle=self._bound_lifecycles.get(group.name),
                continuous=self._props.node_provisioning_mode is NodeProvisioningMode.CONTINUOUS,
                slurm_config=self._props.slurm_layout is SlurmLayout.API,
                override_vpc_config=self._override_vpc_configs.get(id(group)),
            )
            for group in self._wired
        ]

    def _ready_roots(self) -> list[IConstruct]:
        if self._gate is not None:
            return [self._gate.wait_condition]
        return [self._resource]

    def _gate_metric(
        self, method: str, name: str, group_name: str, options: MetricOptions
    ) -> cloudwatch.Metric:
        self._metric_groups.setdefault(group_name, method)
        return gate_metric(
            name,
            namespace=self._props.gate_options.metrics_namespace,
            cluster_name=self._props.name,
            group_name=group_name,
            **options,
        )

    def _unwatched_metrics(self) -> list[str]:
        """The metrics asked for of groups the gate does not watch (refused at synth)."""
        if not self._metric_groups:
            return []
        gated = set(self._gate.requirements) if self._gate is not None else set()
        groups = {group.name for group in self._groups}
        return unwatched_metric_errors(self._metric_groups, gated=gated, groups=groups)

    def _sync_gate(self, group: InstanceGroup | None) -> None:
        """Add a gated group to the readiness gate (created with the first one; ``None``
        only creates it)."""
        if not self._props.gate_enabled:
            return
        if self._gate is None:
            from ._gate.construct import MinCountGate

            self._gate = MinCountGate(
                self, "MinCountGate", cluster=self, options=self._props.gate_options
            )
            self._record(self._gate.findings)
        if group is None:
            return
        self._gate.add_requirement(
            Requirement(
                group.name,
                min_count=count_or_token(group.min_instance_count),
                target_count=count_or_token(group.instance_count),
            )
        )


TEMPLATE_INSTANCE_TYPE_RULE = "CloudFormation-Validate::E3644"
"""aws-cdk-lib's template validation of ``InstanceGroups[].InstanceType`` (a type not valid in
any region), which reports the same typo as ``HP-WARN-INSTANCE-TYPE``, without a "did you
mean", in its own format."""


def _acknowledge_reported_types(
    resource: IConstruct, groups: Sequence[InstanceGroup], warnings: Sequence[Finding]
) -> None:
    """Acknowledge :data:`TEMPLATE_INSTANCE_TYPE_RULE` on the cluster's resource when every
    rendered type the library does not know already has its ``HP-WARN-INSTANCE-TYPE``
    warning, so that each typo is reported once; a type with no such warning keeps it."""
    reported = {
        reason.value
        for warning in warnings
        for reason in (warning, *warning.also)
        if reason.rule == WARN_INSTANCE_TYPE.id
    }
    names = [
        kind.name for group in groups for kind in (group.instance_types or (group.instance_type,))
    ]
    known = known_names()
    unknown = {n for n in names if isinstance(n, str) and not is_unresolved(n) and n not in known}
    if unknown and unknown <= reported:
        Validations.of(resource).acknowledge(
            Acknowledgment(
                id=TEMPLATE_INSTANCE_TYPE_RULE,
                reason=f"HyperPod's {WARN_INSTANCE_TYPE.id} warning reports "
                f"{', '.join(sorted(unknown))} with a 'did you mean'",
            )
        )


def _shared_positions(groups: Sequence[InstanceGroup]) -> dict[str, tuple[int, ...]]:
    """The positions (1 = the first group added) of every name more than one group uses."""
    positions: dict[str, list[int]] = {}
    for index, group in enumerate(groups, start=1):
        if isinstance(group.name, str):
            positions.setdefault(group.name, []).append(index)
    return {name: tuple(found) for name, found in positions.items() if len(found) > 1}


@functools.cache
def _instance_role_policy() -> iam.IManagedPolicy:
    """The AWS managed :data:`INSTANCE_ROLE_MANAGED_POLICY`: one object per process (its ARN
    is made for the stack it is resolved in), one jsii call fewer per cluster."""
    return iam.ManagedPolicy.from_aws_managed_policy_name(INSTANCE_ROLE_MANAGED_POLICY)


_PRIVATE_SUBNET_IDS: WeakKeyDictionary[ec2.IVpc, tuple[str, ...]] = WeakKeyDictionary()
"""By VPC, the ids of its private subnets with egress (a VPC's subnets are made with it)."""


def _subnet_ids(vpc: ec2.IVpc | None, selection: ec2.SubnetSelection | None) -> list[str]:
    """The subnet ids of a selection. Explicit subnets are read by id only: an imported
    ``ec2.Subnet.from_subnet_id`` has no availability zone, which ``select_subnets`` reads."""
    if selection is not None and selection.subnets is not None:
        return [subnet.subnet_id for subnet in selection.subnets]
    assert vpc is not None  # without a VPC, HP-VPC-REQUIRED needs explicit subnets
    if selection is None:  # the default: once per VPC (seven jsii calls), for every cluster
        if vpc not in _PRIVATE_SUBNET_IDS:
            selected = vpc.select_subnets(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS)
            _PRIVATE_SUBNET_IDS[vpc] = tuple(selected.subnet_ids)
        return list(_PRIVATE_SUBNET_IDS[vpc])
    return list(
        vpc.select_subnets(
            availability_zones=selection.availability_zones,
            one_per_az=selection.one_per_az,
            subnet_filters=selection.subnet_filters,
            subnet_group_name=selection.subnet_group_name,
            subnet_type=selection.subnet_type,
        ).subnet_ids
    )
