"""The HyperPod Slurm cluster L2 construct."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import jsii
from aws_cdk import Annotations, Aws, Names, Resource, Tags
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct, DependencyGroup, IConstruct, IValidation

from ._lazy import lazy_any
from ._nag import acknowledge
from .enums import NodeProvisioningMode, NodeRecovery, SlurmConfigStrategy
from .gate.options import MinCountGateOptions
from .gate.runtime.hyperpod_gate.decision import GroupRequirement
from .instance_group import InstanceGroup
from .lifecycle import BoundLifecycle, LifecycleScripts
from .rendering import render_group
from .validation import (
    ClusterSpec,
    Finding,
    HyperPodValidationError,
    accounting_findings,
    check_name,
    lifecycle_findings,
    network_selection_findings,
    tag_findings,
    validate_cluster,
    validate_group,
)

if TYPE_CHECKING:
    # Imported when the first group is gated: its aws-cdk-lib modules (Lambda, Step Functions,
    # CloudWatch, ...) cost about 0.2 s of CPU that a cluster without a gated group never needs.
    from .gate.construct import MinCountGate

INSTANCE_ROLE_MANAGED_POLICY = "AmazonSageMakerClusterInstanceRolePolicy"

NETWORK_INTERFACE_ACTIONS = (
    "ec2:CreateNetworkInterface",
    "ec2:CreateNetworkInterfacePermission",
    "ec2:DeleteNetworkInterface",
    "ec2:DeleteNetworkInterfacePermission",
    "ec2:DescribeNetworkInterfaces",
    "ec2:DescribeVpcs",
    "ec2:DescribeDhcpOptions",
    "ec2:DescribeSubnets",
    "ec2:DescribeSecurityGroups",
    "ec2:DetachNetworkInterface",
)
"""What HyperPod does with the execution role in a VPC: the nodes' network interfaces."""

DESCRIBE_ACTIONS = (
    "sagemaker:DescribeCluster",
    "sagemaker:DescribeClusterNode",
    "sagemaker:ListClusterNodes",
    "sagemaker:ListClusterEvents",
)


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
        cluster, to ``grantee``."""
        ...

    def grant_describe(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` read the cluster, its nodes and its events."""
        ...


class HyperPodClusterBase(Resource, metaclass=jsii.JSIIAbstractClass):
    """What every HyperPod cluster construct, defined or imported, can do (abstract: a
    subclass provides ``cluster_arn`` and ``cluster_name``)."""

    @property
    @abstractmethod
    def cluster_arn(self) -> str:
        """The cluster ARN."""

    @property
    @abstractmethod
    def cluster_name(self) -> str:
        """The cluster name (or, for a cluster imported by ARN only, the ARN)."""

    def grant(self, grantee: iam.IGrantable, *actions: str) -> iam.Grant:
        """Grant ``actions`` on this cluster (and only this cluster) to ``grantee``."""
        return iam.Grant.add_to_principal(
            grantee=grantee, actions=list(actions), resource_arns=[self.cluster_arn]
        )

    def grant_describe(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` describe the cluster and list its nodes and events."""
        return self.grant(grantee, *DESCRIBE_ACTIONS)


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


@dataclass(frozen=True, kw_only=True)
class AccountingDatabase:
    """An external MySQL-compatible database for ``slurmdbd`` (Continuous mode only).

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
        body: dict[str, Any] = {"Endpoint": self.endpoint, "SecretArn": self.secret.secret_arn}
        if self.database_name is not None:
            body["Name"] = self.database_name
        if self.port is not None:
            body["Port"] = self.port
        return body


@jsii.implements(IValidation)
class _ClusterRules:
    def __init__(self, cluster: HyperPodSlurmCluster) -> None:
        self._cluster = cluster

    def validate(self) -> list[str]:
        return [finding.message() for finding in self._cluster._cross_group_findings()]


class HyperPodSlurmCluster(HyperPodClusterBase):
    """A SageMaker HyperPod cluster orchestrated by Slurm (``AWS::SageMaker::Cluster``).

    Every rule HyperPod enforces at deploy time is checked at synth: per-group values when the
    group is added (raising :class:`HyperPodValidationError`), cross-group rules from a node
    validation. Groups with ``min_instance_count > 0`` get a readiness gate
    (:attr:`min_count_gate`) that other resources can depend on.

    Replacement: ``cluster_name`` and the VPC settings (``vpc``, ``vpc_subnets``,
    ``security_groups``) are create-only: changing them replaces the cluster. With an explicit
    ``cluster_name``, CloudFormation cannot replace the cluster (the new one would take the
    same name): change the name together with the VPC settings.
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        instance_groups: Sequence[InstanceGroup] = (),
        cluster_name: str | None = None,
        node_provisioning_mode: NodeProvisioningMode = NodeProvisioningMode.CONTINUOUS,
        node_recovery: NodeRecovery = NodeRecovery.AUTOMATIC,
        lifecycle_scripts: LifecycleScripts | None = None,
        execution_role: iam.IRole | None = None,
        vpc: ec2.IVpc | None = None,
        vpc_subnets: ec2.SubnetSelection | None = None,
        security_groups: Sequence[ec2.ISecurityGroup] | None = None,
        slurm_config_strategy: SlurmConfigStrategy | None = None,
        accounting_database: AccountingDatabase | None = None,
        tags: Mapping[str, str] | None = None,
        min_count_gate: MinCountGateOptions | None = None,
    ) -> None:
        """Define the cluster.

        :param instance_groups: the groups; more can be added with :meth:`add_instance_group`.
        :param cluster_name: 1..63 letters, digits and hyphens. Default: derived from the
            construct path (unique in the account). Replacement on change.
        :param node_provisioning_mode: Default CONTINUOUS (required for min_instance_count).
        :param node_recovery: Default AUTOMATIC (faulty nodes are replaced or rebooted).
        :param lifecycle_scripts: scripts for every group that does not bring its own.
            Default: none (HyperPod configures Slurm from each group's SlurmConfig).
        :param execution_role: role for every group that does not bring its own. Default: a
            new role with AmazonSageMakerClusterInstanceRolePolicy, read access to the
            lifecycle bucket and, with a VPC, the ENI permissions HyperPod needs.
            Replacement of the groups on change.
        :param vpc: Default: none (HyperPod's own network; FSx storage needs a VPC).
        :param vpc_subnets: Default: the VPC's private subnets with egress.
        :param security_groups: Default: a new group that allows all traffic within itself
            (needed for EFA) and all outbound traffic.
        :param slurm_config_strategy: only in STANDARD mode. Default: none.
        :param accounting_database: Slurm accounting database (CONTINUOUS only). Default: none.
        :param tags: tags for the cluster and the resources the construct creates.
        :param min_count_gate: options of the readiness gate. Default: on, with the defaults
            of :class:`MinCountGateOptions`, whenever a group has ``min_instance_count > 0``.
        """
        super().__init__(scope, id)
        self._groups: list[InstanceGroup] = []
        self._mode = node_provisioning_mode
        self._lifecycle = lifecycle_scripts
        self._strategy = slurm_config_strategy
        self._accounting = accounting_database
        self._gate_options = min_count_gate or MinCountGateOptions()
        self._gate: MinCountGate | None = None
        self._vpc = vpc
        self._name = (
            cluster_name
            if cluster_name is not None
            else Names.unique_resource_name(self, max_length=63)
        )
        self._bound_lifecycles: dict[str, BoundLifecycle | None] = {}
        self._fail_on(
            check_name(
                self._name, rule="HP-NAME-CLUSTER", field="cluster_name (ClusterName)", group=None
            )
            + lifecycle_findings(lifecycle_scripts, group=None)
            + accounting_findings(accounting_database)
            + tag_findings(tags)
            + self._gate_option_findings(min_count_gate)
            + network_selection_findings(
                has_vpc=vpc is not None,
                security_groups_given=security_groups is not None,
                subnets_given=vpc_subnets is not None,
            )
        )

        self._role = execution_role or self._default_role()
        # One jsii call per distinct role, not per group, when the groups are rendered.
        self._role_arns: dict[int, str] = {}
        self._security_groups: list[ec2.ISecurityGroup] = []
        # Teardown order: SageMaker assumes the execution role while it deletes the cluster,
        # so roles, their policies, the lifecycle upload and the network must outlive the
        # cluster. One group the cluster depends on; it is read at synth, so what is added
        # later (group roles, the VPC policy, the upload) counts too.
        self._teardown = DependencyGroup(self._role)
        self._vpc_policy: iam.Policy | None = None
        self._subnet_ids: list[str] = []
        vpc_config = self._network(vpc, vpc_subnets, security_groups)

        orchestrator: dict[str, Any] | None = None
        slurm: dict[str, Any] = {}
        if slurm_config_strategy is not None:
            slurm["SlurmConfigStrategy"] = slurm_config_strategy.value
        if accounting_database is not None:
            slurm["AccountingDatabase"] = accounting_database.render()
            accounting_database.secret.grant_read(self._role)
        if slurm:
            orchestrator = {"Slurm": slurm}

        self._resource = sagemaker.CfnCluster(
            self,
            "Resource",
            cluster_name=self._name,
            node_provisioning_mode=(
                node_provisioning_mode.value
                if node_provisioning_mode is NodeProvisioningMode.CONTINUOUS
                else None
            ),
            node_recovery=node_recovery.value,
            vpc_config=vpc_config,
        )
        # Rendered in CloudFormation's own shape at synth, after every group has been added.
        self._resource.add_property_override("InstanceGroups", lazy_any(self._render_groups))
        if orchestrator is not None:
            self._resource.add_property_override("Orchestrator", orchestrator)
        if vpc is not None:
            self._teardown.add(vpc)
        self._resource.node.add_dependency(self._teardown)
        for key, value in (tags or {}).items():
            Tags.of(self).add(key, value)
        self.node.add_validation(_ClusterRules(self))
        for group in instance_groups:
            self.add_instance_group(group)

    @classmethod
    def from_cluster_attributes(
        cls, scope: Construct, id: str, *, cluster_arn: str, cluster_name: str | None = None
    ) -> IHyperPodCluster:
        """Import an existing cluster. ``cluster_name`` defaults to the ARN."""
        return _ImportedCluster(scope, id, arn=cluster_arn, name=cluster_name or cluster_arn)

    @classmethod
    def from_cluster_arn(cls, scope: Construct, id: str, cluster_arn: str) -> IHyperPodCluster:
        """Import an existing cluster by ARN."""
        return cls.from_cluster_attributes(scope, id, cluster_arn=cluster_arn)

    # -- public surface ------------------------------------------------------------------

    @property
    def cluster_arn(self) -> str:
        """The cluster ARN (a token)."""
        return self._resource.attr_cluster_arn

    @property
    def cluster_name(self) -> str:
        """The cluster name."""
        return self._name

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
        return self._mode

    @property
    def vpc(self) -> ec2.IVpc | None:
        """The VPC the nodes run in, or ``None`` for HyperPod's own network."""
        return self._vpc

    @property
    def role(self) -> iam.IRole:
        """The default execution role of the groups."""
        return self._role

    @property
    def connections(self) -> ec2.Connections:
        """The cluster's security groups, to allow traffic to file systems or databases."""
        return ec2.Connections(security_groups=self._security_groups)

    @property
    def min_count_gate(self) -> MinCountGate | None:
        """The readiness gate: depend on it to wait until every gated group has its minimum.

        ``None`` while no group has ``min_instance_count > 0`` or when the gate is disabled.
        """
        return self._gate

    def add_instance_group(self, group: InstanceGroup) -> None:
        """Add a group. Raises :class:`HyperPodValidationError` if its values are invalid."""
        findings = validate_group(group, gate=self._gate_options.enabled)
        self._fail_on(findings)
        for finding in findings:
            Annotations.of(self).add_warning_v2(f"hyperpod:{finding.rule}", finding.message())
        self._groups.append(group)
        self._bound_lifecycles[group.name] = self._bind_lifecycle(group)
        role = group.execution_role
        if role is not None and isinstance(role, Construct):
            self._teardown.add(role)
            self._grant_vpc_access(role)
        if role is not None and self._accounting is not None:
            self._accounting.secret.grant_read(role)
        if group.is_gated:
            self._sync_gate(group)

    # -- internals -----------------------------------------------------------------------

    def _fail_on(self, findings: Sequence[Finding]) -> None:
        errors = [finding for finding in findings if finding.severity == "error"]
        if errors:
            raise HyperPodValidationError(self.node.path, errors)

    @staticmethod
    def _gate_option_findings(options: MinCountGateOptions | None) -> list[Finding]:
        """Problems with options the user gave (the defaults have none)."""
        if options is None or not options.enabled:
            return []
        from .gate.construct import gate_option_findings

        return gate_option_findings(options)

    def _cross_group_findings(self) -> list[Finding]:
        spec = ClusterSpec(
            name=self._name,
            mode=self._mode,
            groups=self._groups,
            slurm_config_strategy=self._strategy,
            has_accounting_database=self._accounting is not None,
            has_vpc=self._vpc is not None,
            security_group_count=len(self._security_groups) if self._vpc is not None else None,
            subnet_count=len(self._subnet_ids) if self._vpc is not None else None,
        )
        return [f for f in validate_cluster(spec) if f.rule != "HP-NAME-CLUSTER"]

    def _default_role(self) -> iam.Role:
        role = iam.Role(
            self,
            "ExecutionRole",
            assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
            description="Execution role of the HyperPod cluster's instance groups",
            managed_policies=[
                iam.ManagedPolicy.from_aws_managed_policy_name(INSTANCE_ROLE_MANAGED_POLICY)
            ],
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
        if vpc is None:
            return None
        if security_groups:
            self._security_groups = list(security_groups)
            # Their rules (EFA, FSx, ...) must exist while nodes run and outlive the cluster.
            self._teardown.add(
                *(group for group in security_groups if isinstance(group, Construct))
            )
        else:
            group = ec2.SecurityGroup(
                self,
                "SecurityGroup",
                vpc=vpc,
                description="HyperPod cluster nodes: all traffic within the group (EFA)",
                allow_all_outbound=True,
            )
            group.add_ingress_rule(group, ec2.Port.all_traffic(), "All traffic between nodes (EFA)")
            # The self-referencing ingress rule is its own resource: nodes need it (EFA) from
            # the start and until the cluster is gone.
            self._teardown.add(group)
            self._security_groups = [group]
        if vpc_subnets is None:
            selected = vpc.select_subnets(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS)
        else:
            selected = vpc.select_subnets(
                availability_zones=vpc_subnets.availability_zones,
                one_per_az=vpc_subnets.one_per_az,
                subnet_filters=vpc_subnets.subnet_filters,
                subnet_group_name=vpc_subnets.subnet_group_name,
                subnets=vpc_subnets.subnets,
                subnet_type=vpc_subnets.subnet_type,
            )
        self._subnet_ids = list(selected.subnet_ids)
        self._grant_vpc_access(self._role)
        return {
            "securityGroupIds": [sg.security_group_id for sg in self._security_groups],
            "subnets": self._subnet_ids,
        }

    def _grant_vpc_access(self, role: iam.IRole) -> None:
        """Attach the network-interface policy to an execution role this app defines."""
        if self._vpc is None or not isinstance(role, iam.Role):
            return
        if self._vpc_policy is None:
            self._vpc_policy = self._new_vpc_policy()
            self._teardown.add(self._vpc_policy)
        self._vpc_policy.attach_to_role(role)

    def _new_vpc_policy(self) -> iam.Policy:
        policy = iam.Policy(
            self,
            "VpcAccess",
            statements=[
                iam.PolicyStatement(
                    sid="HyperPodNetworkInterfaces",
                    actions=list(NETWORK_INTERFACE_ACTIONS),
                    resources=["*"],
                ),
                iam.PolicyStatement(
                    sid="HyperPodTagNetworkInterfaces",
                    actions=["ec2:CreateTags"],
                    resources=[f"arn:{Aws.PARTITION}:ec2:*:*:network-interface/*"],
                ),
            ],
        )
        acknowledge(
            policy,
            "HyperPod creates and describes the cluster's network interfaces at run time; these "
            "EC2 actions take no resource-level scope before the interfaces exist",
            "AwsSolutions-IAM5[Resource::*]",
            "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:*:*:network-interface/*]",
        )
        return policy

    def _role_arn(self, group: InstanceGroup) -> str:
        role = group.execution_role or self._role
        key = id(role)
        if key not in self._role_arns:
            self._role_arns[key] = role.role_arn
        return self._role_arns[key]

    def _bind_lifecycle(self, group: InstanceGroup) -> BoundLifecycle | None:
        scripts = group.lifecycle_scripts or self._lifecycle
        if scripts is None:
            return None
        bound = scripts.bind(self, group.execution_role or self._role)
        if bound.dependable is not None:
            self._teardown.add(bound.dependable)
        return bound

    def _render_groups(self) -> list[dict[str, Any]]:
        return [
            render_group(
                group,
                execution_role_arn=self._role_arn(group),
                lifecycle=self._bound_lifecycles.get(group.name),
                continuous=self._mode is NodeProvisioningMode.CONTINUOUS,
            )
            for group in self._groups
        ]

    def _sync_gate(self, group: InstanceGroup) -> None:
        """Add a gated group to the readiness gate (created with the first one)."""
        if not self._gate_options.enabled:
            return
        if self._gate is None:
            from .gate.construct import MinCountGate

            self._gate = MinCountGate(
                self, "MinCountGate", cluster=self, options=self._gate_options
            )
        self._gate.add_requirement(
            group.name,
            GroupRequirement(
                min_count=int(group.min_instance_count or 0),
                target_count=int(group.instance_count),
            ),
        )
