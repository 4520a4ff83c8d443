"""The cluster's own props (node recovery, accounting database, tags) and the runner of every
rule about the cluster as a whole or several of its groups. Pure: a description of the
cluster in, findings out."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from .._cdk.tokens import is_unresolved
from .._core import limits
from .._core.arguments import (
    TOKEN,
    Check,
    argument_finding,
    check,
    instance_of,
    is_text_token,
    raise_if_any,
)
from .._core.finding import Finding, Severity
from .._core.rule import E, Rule, Scope, Source, W, reports
from ..enums import NodeRecovery
from .layout_rules import group_layout
from .name_rules import cluster_name
from .network_rules import cluster_network, network_selection_findings, override_network_findings
from .provisioning_rules import provisioning_mode
from .spec import ClusterSpec

if TYPE_CHECKING:
    pass

__all__ = [
    "ClusterSpec",
    "accounting_findings",
    "network_selection_findings",
    "node_recovery_findings",
    "override_network_findings",
    "tag_findings",
    "validate_cluster",
]


NODE_RECOVERY = Rule(
    "HP-NODE-RECOVERY",
    E,
    Scope.CLUSTER,
    "`node_recovery` / `NodeRecovery`",
    "`NodeRecovery.AUTOMATIC`, `NodeRecovery.NONE`, `None` or a string token",
    source=Source.api("CreateClusterRequest.NodeRecovery", "Automatic | None"),
)

ACCOUNTING_DATABASE = Rule(
    "HP-ACCOUNTING-DATABASE",
    E,
    Scope.CLUSTER,
    "`accounting_database.*` / `AccountingDatabase`",
    "endpoint: a host name, 1..255 characters; name: 1..64 of `[a-zA-Z0-9$_]`; port: 1..65535",
    source=Source.api(
        "ClusterAccountingDatabase",
        "Endpoint a host name of 1..255 characters, Name 1..64 of [a-zA-Z0-9$_], Port 1..65535",
    ),
)

TAGS = Rule(
    "HP-TAGS",
    E,
    Scope.CLUSTER,
    "`tags` / `Tags`",
    "at most 50; keys 1..128 and values 0..256 characters of Unicode letters, digits, whitespace "
    "and `_ . : / = + - @`; keys not starting with `aws:`",
    source=Source.api(
        "CreateClusterRequest.Tags",
        "0..50 tags; TagKey 1..128 and TagValue 0..256 of [\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]; the "
        "aws: prefix is reserved",
    ),
)

SYNTHESIZER_ASSETS = Rule(
    "HP-SYNTHESIZER-ASSETS",
    Severity.ERROR,
    Scope.CLUSTER,
    "the stack's synthesizer",
    "one that hosts file assets (not `BootstraplessSynthesizer`) when the cluster has a "
    "readiness gate (its Lambda code) or lifecycle scripts from a directory (their upload)",
    source=Source(
        "https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.BootstraplessSynthesizer.html",
        "a synthesizer that needs no bootstrap stack does not support assets",
    ),
)

ROLE_IMMUTABLE = Rule(
    "HP-WARN-ROLE-IMMUTABLE",
    W,
    Scope.CLUSTER,
    "`execution_role` / `ExecutionRole`",
    "an execution role the library can grant what HyperPod needs (the network interfaces, the "
    "lifecycle scripts, a blueprint's volume key), or one that already has it",
    source=Source.library(
        "an imported role with mutable=False takes no statement: aws-cdk-lib drops them"
    ),
)

RULES = (NODE_RECOVERY, ACCOUNTING_DATABASE, TAGS, SYNTHESIZER_ASSETS, ROLE_IMMUTABLE)
"""This family's rules, in documentation order."""


class AccountingDatabaseProps(Protocol):
    """What :func:`accounting_findings` reads (``cluster.AccountingDatabase`` has it)."""

    @property
    def endpoint(self) -> str: ...
    @property
    def database_name(self) -> str | None: ...
    @property
    def port(self) -> int | None: ...


def _refused(value: object, ok: Check) -> bool:
    """``value`` is no token (a token is checked when it resolves) and ``ok`` refuses it."""
    return not is_unresolved(value) and not ok(value)


def _matching(pattern: re.Pattern[str], top: int) -> Check:
    """A ``str`` of at most ``top`` characters that ``pattern`` fully matches."""
    return lambda value: (
        isinstance(value, str) and len(value) <= top and pattern.fullmatch(value) is not None
    )


def _port_ok(port: object) -> bool:
    return (
        isinstance(port, int)
        and not isinstance(port, bool)
        and limits.MIN_DB_PORT <= port <= limits.MAX_DB_PORT
    )


@reports(ACCOUNTING_DATABASE)
def accounting_findings(database: AccountingDatabaseProps | None) -> list[Finding]:
    """``Orchestrator.Slurm.AccountingDatabase`` values against the resource schema.

    :param database: the cluster's ``accounting_database``, or ``None``.
    """
    if database is None:
        return []
    found: list[Finding] = []
    # Each field: its name, its value, whether it is required (a name or a port left out
    # takes its default), its check, what it allows and the fix.
    fields = (
        (
            "endpoint (AccountingDatabase.Endpoint)",
            database.endpoint,
            True,
            _matching(limits.DB_ENDPOINT, limits.MAX_DB_ENDPOINT_LENGTH),
            f"a host name of 1..{limits.MAX_DB_ENDPOINT_LENGTH} characters: dot-separated "
            "labels of letters, digits and inner hyphens",
            "pass the database's endpoint, e.g. instance.db_instance_endpoint_address",
        ),
        (
            "database_name (AccountingDatabase.Name)",
            database.database_name,
            False,
            _matching(limits.DB_NAME, limits.MAX_DB_NAME_LENGTH),
            f"1..{limits.MAX_DB_NAME_LENGTH} letters, digits, '$' or '_'",
            "use e.g. 'slurm_acct_db' (the default)",
        ),
        (
            "port (AccountingDatabase.Port)",
            database.port,
            False,
            _port_ok,
            f"a whole number in {limits.MIN_DB_PORT}..{limits.MAX_DB_PORT}",
            "use the database's port, e.g. 3306 (the default)",
        ),
    )
    for field, value, required, ok, allowed, fix in fields:
        if (required or value is not None) and _refused(value, ok):
            found.append(
                ACCOUNTING_DATABASE.finding(
                    field=f"accounting_database.{field}", value=value, allowed=allowed, fix=fix
                )
            )
    return found


RESERVED_TAG_PREFIX = "aws:"
"""Tag keys starting with this (any case) are reserved for AWS."""


def _tag_text_ok(text: str) -> bool:
    return all(
        char in limits.TAG_PUNCTUATION or unicodedata.category(char)[0] in "LNZ" for char in text
    )


def _tag_key_ok(key: object) -> bool:
    return (
        isinstance(key, str)
        and 1 <= len(key) <= limits.MAX_TAG_KEY_LENGTH
        and _tag_text_ok(key)
        and not key.lower().startswith(RESERVED_TAG_PREFIX)
    )


def _tag_value_ok(value: object) -> bool:
    return (
        isinstance(value, str) and len(value) <= limits.MAX_TAG_VALUE_LENGTH and _tag_text_ok(value)
    )


@dataclass(frozen=True)
class TagLimits:
    """The lengths a resource type's CloudFormation schema allows in a tag
    (``Tags[].Key`` / ``Tags[].Value``): AWS's usual limits unless given."""

    key: tuple[int, int] = (1, limits.MAX_TAG_KEY_LENGTH)
    value: tuple[int, int] = (0, limits.MAX_TAG_VALUE_LENGTH)

    def refuses(self, key: str, value: str) -> bool:
        """Whether a tag ``key`` = ``value`` is outside these limits."""
        return not (
            self.key[0] <= len(key) <= self.key[1] and self.value[0] <= len(value) <= self.value[1]
        )

    def describe(self) -> str:
        return (
            f"keys {self.key[0]}..{self.key[1]} and values {self.value[0]}..{self.value[1]} "
            "characters"
        )


TAG_LIMITS: Mapping[str, TagLimits] = {
    type_name: TagLimits(value=(1, limits.MAX_TAG_VALUE_LENGTH))
    for type_name in (
        "AWS::CloudWatch::Alarm",
        "AWS::CloudWatch::CompositeAlarm",
        "AWS::CloudWatch::Dashboard",
        "AWS::StepFunctions::StateMachine",
    )
}
"""The resource types whose tags' limits differ from :class:`TagLimits` ``()`` (no empty
value), as their CloudFormation schemas say: tests/test_tag_limits.py checks every resource
type the library creates against cfn-lint's copy of the schemas."""


def _resource_tag_findings(tags_by_type: Mapping[str, Mapping[str, str]]) -> list[Finding]:
    """The tags that a resource type refuses, one finding per tag naming every such type."""
    refused: dict[tuple[str, str], list[str]] = {}
    for type_name, tags in sorted(tags_by_type.items()):
        limit = TAG_LIMITS.get(type_name, TagLimits())
        for key, value in tags.items():
            concrete = isinstance(key, str) and isinstance(value, str)
            tokens = concrete and (is_unresolved(key) or is_unresolved(value))
            if concrete and not tokens and limit.refuses(key, value):
                refused.setdefault((key, value), []).append(type_name)
    return [
        TAGS.finding(
            field=f"tags[{key!r}] (Tags[].Value)",
            value=value,
            allowed="; ".join(
                f"{TAG_LIMITS.get(type_name, TagLimits()).describe()} on {type_name}"
                for type_name in types
            )
            + " (resources the library creates for the cluster)",
            fix="give the tag a value (an unset variable?) or drop it, or keep it off those "
            f"resources: Tags.of(scope).add({key!r}, ..., exclude_resource_types=[...])",
        )
        for (key, value), types in refused.items()
    ]


@reports(TAGS)
def tag_findings(
    tags: Mapping[str, str] | None,
    *,
    on_resources: Mapping[str, Mapping[str, str]] | None = None,
) -> list[Finding]:
    """The cluster's ``tags`` against the resource schema's ``Tags`` (keys, values, count);
    with ``on_resources``, the tags of the other resources the library creates against their
    types' limits (their CloudFormation schemas': an empty value is refused by some).

    :param tags: the cluster's ``tags``, or ``None``.
    :param on_resources: by CloudFormation resource type, the tags its resources carry.
        Default: none.
    """
    if on_resources:
        return _resource_tag_findings(on_resources) + tag_findings(tags)
    if tags is None:
        return []
    if not isinstance(tags, Mapping):
        return [argument_finding("tags", tags, "a dict of str to str")]
    found: list[Finding] = []
    top = limits.MAX_TAGS
    if len(tags) > top:
        found.append(
            TAGS.finding(
                value=f"{len(tags)} tags",
                allowed=f"0..{top} tags",
                fix="drop tags, or tag the stack instead of the cluster",
            )
        )
    allowed_text = "Unicode letters, digits, whitespace and _ . : / = + - @"
    for key, value in tags.items():
        if _refused(key, _tag_key_ok):
            found.append(
                TAGS.finding(
                    field="tags key (Tags[].Key)",
                    value=key,
                    allowed=f"1..{limits.MAX_TAG_KEY_LENGTH} characters: {allowed_text}; "
                    f"not starting with {RESERVED_TAG_PREFIX!r} (reserved for AWS)",
                    fix="rename the tag",
                )
            )
        if _refused(value, _tag_value_ok):
            found.append(
                TAGS.finding(
                    field=f"tags[{key!r}] (Tags[].Value)",
                    value=value,
                    allowed=f"0..{limits.MAX_TAG_VALUE_LENGTH} characters: {allowed_text}",
                    fix="change the tag's value",
                )
            )
    return found


@reports(ROLE_IMMUTABLE)
def immutable_role_findings(missing: Mapping[str, Sequence[str]]) -> list[Finding]:
    """One warning per immutable execution role, naming everything the library could not
    grant it.

    :param missing: by the role's construct path, what it could not be granted.
    """
    return [
        ROLE_IMMUTABLE.finding(
            value=path,
            allowed=f"a role the library can grant {' and '.join(whats)} (an imported role "
            "with mutable=False takes no statement)",
            fix="make sure the role already has them, then acknowledge the warning; or import "
            "the role mutable (iam.Role.from_role_arn(..., mutable=True))",
        )
        for path, whats in missing.items()
    ]


def validate_cluster(spec: ClusterSpec) -> list[Finding]:
    """Every finding that involves the cluster as a whole or several of its groups.

    :param spec: what the rules need to know of the cluster; anything but a
        :class:`ClusterSpec` raises :class:`HyperPodArgumentError` naming it.
    """
    raise_if_any("validate_cluster", check("spec", spec, instance_of(ClusterSpec), "a ClusterSpec"))
    return [
        *cluster_name(spec.name),
        *group_layout(spec),
        *provisioning_mode(spec),
        *cluster_network(spec),
    ]


@reports(NODE_RECOVERY)
def node_recovery_findings(value: object) -> list[Finding]:
    """``NodeRecovery``: a :class:`NodeRecovery`, ``None`` (omitted) or a string token.

    :param value: the cluster's ``node_recovery``.
    """
    if value is None or isinstance(value, NodeRecovery) or is_text_token(value):
        return []
    return [
        NODE_RECOVERY.finding(
            value=TOKEN if is_unresolved(value) else value,
            allowed="NodeRecovery.AUTOMATIC, NodeRecovery.NONE, None, or a string token",
            fix="pass NodeRecovery.AUTOMATIC or NodeRecovery.NONE",
        )
    ]


@reports(SYNTHESIZER_ASSETS)
def synthesizer_asset_findings(synthesizer: str, needs: str, refusal: str) -> list[Finding]:
    """``needs`` (what the cluster stages as a file asset, e.g. the readiness gate's Lambda
    code) cannot be deployed: the stack synthesizer named ``synthesizer`` (its class) does
    not host file assets, as it said in ``refusal``."""
    reason = refusal.strip().splitlines()[0] if refusal.strip() else "no reason given"
    return [
        SYNTHESIZER_ASSETS.finding(
            field="the stack's synthesizer",
            value=synthesizer,
            allowed=f"a synthesizer that hosts file assets, for {needs} (this one does not: "
            f"{reason})",
            fix="synthesize this stack with DefaultStackSynthesizer (the default, after `cdk "
            "bootstrap`), CliCredentialsStackSynthesizer or LegacyStackSynthesizer; or do "
            "without the asset: readiness_gate=MinCountGateOptions(enabled=False), lifecycle "
            "scripts already in S3 (LifecycleScripts.from_s3)",
        )
    ]
