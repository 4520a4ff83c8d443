"""Reading a CreateCluster request: every key is taken or reported, never dropped; and what
the generated app imports (existing roles, subnets, security groups, secrets by ID)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..._core.sanitize import FieldError
from .source import Call, Code, Raw, assignment, literal

UNSUPPORTED = {
    "RestrictedInstanceGroups": "restricted instance groups (Amazon Nova training) take no "
    "SlurmConfig in the API, so they cannot join a Slurm cluster's layout",
    "RestrictedInstanceGroupsConfig": "restricted instance groups are not supported (they take "
    "no SlurmConfig)",
    "TieredStorageConfig": "managed tiered checkpointing is documented for Amazon EKS clusters "
    "only",
    "ClusterRole": "a cluster role is used by EKS autoscaling only, which this Slurm library "
    "does not manage",
    "AutoScaling": "autoscaling (Karpenter) applies to EKS clusters only",
    "Orchestrator.Eks": "EKS-orchestrated clusters are not supported; hyperpod_constructs "
    "builds Slurm clusters",
    "KubernetesConfig": "Kubernetes labels and taints apply to EKS clusters only",
    "ImageReleaseVersion": "ImageReleaseVersion is supported only for EKS-orchestrated clusters "
    "(CloudFormation schema)",
    "IdleWaitWindowInSeconds": "AutoPatchConfig.IdleWaitWindowInSeconds is not in the "
    "CloudFormation schema; HyperPod's default (24 hours) applies",
    "PatchSchedule": "AutoPatchConfig.PatchSchedule.NextPatchDate is read-only in CloudFormation "
    "(HyperPod sets it when a patch is detected)",
    "CurrentCount": "read-only: the instances running now, as DescribeCluster reports them",
}
"""Fields the library deliberately does not express, and why (also in docs/guide.md)."""


class ConversionError(FieldError):
    """A request field the library cannot express (or an invalid request).

    :param field: the field's path in the request, e.g. ``InstanceGroups[1].InstanceType``.
    :param problem: what is wrong with it, in words.
    """

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(field, problem)
        self.field = field


@dataclass(frozen=True, kw_only=True)
class Options:
    """How to convert.

    :param continuous: generate a Continuous-mode app: ``MinInstanceCount`` = ``InstanceCount``
        on accelerator groups (so the readiness gate waits for them) and ``SlurmConfig`` on
        every group. Default: keep the request's mode.
    :param stack_name: the stack's name. Default: from the cluster name.
    :param source_name: the request's file name, quoted in the generated docstring.
    """

    continuous: bool = False
    stack_name: str | None = None
    source_name: str = "cluster-config.json"


@dataclass
class _Fields:
    """A JSON object being read: every key must be taken, or ``done()`` reports it."""

    value: Mapping[str, Any]
    path: str
    taken: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, value: object, path: str) -> _Fields:
        if not isinstance(value, Mapping):
            raise ConversionError(path, f"expected a JSON object, got {type(value).__name__}")
        return cls(value, path)

    def take(self, key: str) -> Any:
        self.taken.add(key)
        return self.value.get(key)

    def require(self, key: str) -> Any:
        value = self.take(key)
        if value is None:
            raise ConversionError(f"{self.path}.{key}", "required by CreateCluster")
        return value

    def done(self) -> None:
        for key in self.value:
            if key not in self.taken:
                where = f"{self.path}.{key}" if self.path else key
                reason = UNSUPPORTED.get(key) or UNSUPPORTED.get(where)
                raise ConversionError(
                    where, reason or "not a field hyperpod_constructs knows (not converted)"
                )


def _expect(value: object, kind: type | tuple[type, ...], path: str) -> Any:
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise ConversionError(path, f"expected {names}, got {value!r}")
    return value


@dataclass
class _Imports:
    """What the app imports, and the existing resources it imports by ID."""

    names: set[str] = field(default_factory=set)
    cdk: set[str] = field(default_factory={"App", "Stack"}.copy)
    modules: set[str] = field(default_factory=set)
    lines: list[str] = field(default_factory=list)
    variables: dict[tuple[str, str], str] = field(default_factory=dict)

    def library(self, name: str) -> Raw:
        self.names.add(name)
        return Raw(name)

    def existing(self, kind: str, value: str) -> Raw:
        """A variable holding an imported role / subnet / security group (one per value)."""
        key = (kind, value)
        if key not in self.variables:
            count = sum(1 for k, _ in self.variables if k == kind) + 1
            module, call, var, construct_id, extra = _IMPORTERS[kind]
            self.modules.add(module)
            numbered = count > 1 or kind in ("subnet", "security_group")
            variable = f"{var}_{count}" if numbered else var
            construct_id = f"{construct_id}{count}" if numbered else construct_id
            self.variables[key] = variable
            self.lines.append(
                assignment(
                    variable,
                    Call(call, (Raw("stack"), literal(construct_id), literal(value)), extra),
                )
            )
        return Raw(self.variables[key])


_IMPORTERS: dict[str, tuple[str, str, str, str, tuple[tuple[str, Code], ...]]] = {
    "role": (
        "aws_iam as iam",
        "iam.Role.from_role_arn",
        "execution_role",
        "ExecutionRole",
        (("mutable", Raw("False")),),
    ),
    "subnet": ("aws_ec2 as ec2", "ec2.Subnet.from_subnet_id", "subnet", "Subnet", ()),
    "security_group": (
        "aws_ec2 as ec2",
        "ec2.SecurityGroup.from_security_group_id",
        "security_group",
        "SecurityGroup",
        (("mutable", Raw("False")),),
    ),
    "secret": (
        "aws_secretsmanager as secretsmanager",
        "secretsmanager.Secret.from_secret_complete_arn",
        "accounting_secret",
        "AccountingSecret",
        (),
    ),
}
