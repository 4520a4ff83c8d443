"""The gate's IAM roles, written as ``iam.Role`` writes them, with their statements in Python.

An ``iam.Role`` with statements added one by one costs a jsii round trip per principal, per
statement and per ``add_to_policy``, and its Node.js side does more work per call than the
resources it writes. :class:`GateRole` writes the same two resources at the same paths
(``<id>/Resource``, ``<id>/DefaultPolicy/Resource``), hence the same logical ids: the role as
an L1 ``iam.CfnRole`` and its default policy as an ``iam.Policy`` whose document is handed to
jsii once (``PolicyDocument.from_json``), so aws-cdk-lib still renders it (minimized or not, as
the app's ``@aws-cdk/aws-iam:minimizePolicies`` flag says) and names it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import jsii
from aws_cdk import Stack
from constructs import Construct, IDependable

from .._cdk.modules import declare_interfaces, submodule

if TYPE_CHECKING:
    from aws_cdk import aws_iam as iam
else:  # imported where first used (_cdk/modules.py)
    iam = submodule("aws_iam")

POLICY_VERSION = "2012-10-17"
"""The ``Version`` aws-cdk-lib writes in every policy document."""

Statement = Mapping[str, Any]
"""One IAM policy statement in its JSON form (``Action``, ``Effect``, ``Resource``, ...)."""


def allow(
    actions: Sequence[str], resources: str | Sequence[str], *, sid: str | None = None
) -> Statement:
    """What ``iam.PolicyStatement(actions=..., resources=..., sid=...)`` allows, as JSON."""
    statement: dict[str, Any] = {
        "Action": list(actions),
        "Effect": "Allow",
        "Resource": resources if isinstance(resources, str) else list(resources),
    }
    if sid is not None:
        statement["Sid"] = sid
    return statement


def policy_document(statements: Sequence[Statement]) -> iam.PolicyDocument:
    """``statements`` as an aws-cdk-lib policy document (one round trip)."""
    return iam.PolicyDocument.from_json({"Statement": list(statements), "Version": POLICY_VERSION})


class GateRole:
    """A role assumed by an AWS service, and its default policy, at ``scope/id``.

    :param service: the service principal (``lambda.amazonaws.com``).
    :param description: the role's description (none by default).
    :param conditions: the conditions of the trust statement (none by default).
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        service: str,
        description: str | None = None,
        conditions: Mapping[str, Any] | None = None,
    ) -> None:
        self.scope = Construct(scope, id)
        """The role's construct (acknowledgments go here: they cover its policy too)."""
        trust: dict[str, Any] = {"Action": "sts:AssumeRole"}
        if conditions:
            trust["Condition"] = conditions
        trust.update(Effect="Allow", Principal={"Service": service})
        self.resource = iam.CfnRole(
            self.scope,
            "Resource",
            assume_role_policy_document={"Statement": [trust], "Version": POLICY_VERSION},
            description=description,
        )
        self.arn: str = self.resource.attr_arn
        """The role's ARN (``Fn::GetAtt``)."""
        self.name: str = self.resource.ref
        """The role's name (``Ref``)."""
        self._statements: list[Statement] = []
        self._written = False
        self._imported: iam.IRole | None = None
        self._sink: _StatementSink | None = None

    def add(self, *statements: Statement) -> None:
        """Add ``statements`` to the role's default policy (before :meth:`write_policy`: after
        it, a statement would reach no policy, so it raises instead)."""
        if self._written:
            raise RuntimeError(f"{self.scope.node.path}: its default policy is already written")
        self._statements.extend(statements)

    @property
    def grantee(self) -> iam.IPrincipal:
        """A principal for aws-cdk-lib's ``grant_*`` methods: what they grant lands in the
        role's default policy (before :meth:`write_policy`), as on an ``iam.Role``."""
        if self._sink is None:
            declare_interfaces(_StatementSink, lambda: (iam.IPrincipal,))
            self._sink = _StatementSink(self, Stack.of(self.scope).account)
        return self._sink

    @property
    def imported(self) -> iam.IRole:
        """The role as an aws-cdk-lib ``IRole`` (built on first use)."""
        if self._imported is None:
            self._imported = iam.Role.from_role_name(self.scope, "Import", self.name)
        return self._imported

    def write_policy(self) -> iam.Policy:
        """Write the default policy with every statement added so far (once)."""
        self._written = True
        return iam.Policy(
            self.scope,
            "DefaultPolicy",
            document=policy_document(self._statements),
            roles=[self.imported],
        )


@jsii.implements()  # iam.IPrincipal is declared at the first instance
class _StatementSink:
    """The principal :attr:`GateRole.grantee` gives aws-cdk-lib's grants: the statements they
    add to the principal's policy are collected, as JSON, for the role's default policy.
    It implements ``iam.IPrincipal``, declared at its first instance (``declare_interfaces``)."""

    def __init__(self, role: GateRole, account: str) -> None:
        self._role = role
        self._account = account

    @property
    def grant_principal(self) -> iam.IPrincipal:
        return self

    @property
    def assume_role_action(self) -> str:
        return "sts:AssumeRole"

    @property
    def policy_fragment(self) -> iam.PrincipalPolicyFragment:
        return iam.ArnPrincipal(self._role.arn).policy_fragment

    @property
    def principal_account(self) -> str | None:
        return self._account  # what an iam.Role reports: its stack's account

    def add_to_policy(self, statement: iam.PolicyStatement) -> bool:
        return self.add_to_principal_policy(statement).statement_added

    def add_to_principal_policy(
        self, statement: iam.PolicyStatement
    ) -> iam.AddToPrincipalPolicyResult:
        self._role.add(statement.to_statement_json())
        dependable: IDependable = self._role.scope
        return iam.AddToPrincipalPolicyResult(statement_added=True, policy_dependable=dependable)
