"""The one rule registry: every rule's id, severity, scope, field and one-line summary.

Adding a rule is one entry here, the check that reports it (a function in the module of its
scope, building :class:`Finding` with ``rule=<id>``) and its test case; the rule table in
docs/validation.md is generated from this registry (``python -m
hyperpod_constructs.validation.registry --write``), and a test fails when it is stale.
Ids are stable: users acknowledge warnings by id (``hyperpod:<rule id>``).
"""

from __future__ import annotations

import enum
import sys
from dataclasses import dataclass
from pathlib import Path

from .finding import Finding, Severity


class Scope(enum.StrEnum):
    """What a rule looks at (and so where its findings are grouped)."""

    ARGUMENT = "argument"
    """One argument of a public constructor, factory or helper: its type."""
    GROUP = "group"
    """One instance group."""
    CLUSTER = "cluster"
    """The cluster's own props."""
    CROSS_GROUP = "cross-group"
    """The cluster and all its groups together."""
    GATE = "gate"
    """The readiness gate's options and the counts it waits for."""
    BLUEPRINT = "blueprint"
    """A training blueprint's arguments."""


@dataclass(frozen=True)
class Rule:
    """One validation rule: a stable id, its severity, what it looks at and a summary."""

    id: str
    severity: Severity
    scope: Scope
    field: str
    """The library property (with the CloudFormation name) the rule checks."""
    summary: str
    """One line: what is allowed (an error) or recommended (a warning)."""

    def finding(
        self, *, field: str, value: object, allowed: str, fix: str, group: str | None = None
    ) -> Finding:
        """A :class:`Finding` of this rule."""
        return Finding(
            rule=self.id,
            field=field,
            value=value,
            allowed=allowed,
            fix=fix,
            group=group,
            severity=self.severity,
        )


E, W = Severity.ERROR, Severity.WARNING
A, G, C, X, GT, B = (
    Scope.ARGUMENT,
    Scope.GROUP,
    Scope.CLUSTER,
    Scope.CROSS_GROUP,
    Scope.GATE,
    Scope.BLUEPRINT,
)
NAME = "1..63 characters, `[a-zA-Z0-9](-*[a-zA-Z0-9])*` (full match)"

# fmt: off
_RULES = (
    # Arguments (every public entry point)
    Rule("HP-ARG-TYPE", E, A, "any argument",
         "the documented type: e.g. `HyperPodInstanceType.of(...)`, not a `str`; an `int`, "
         "not a `float`/`bool`/NaN; a list, not `None`; a `bool`, not a string"),
    # One instance group
    Rule("HP-NAME-GROUP", E, G, "`name` / `InstanceGroupName`", NAME),
    Rule("HP-COUNT-INT", E, G, "`instance_count`, `min_instance_count`",
         "a Python `int` (not `float`, not `bool`)"),
    Rule("HP-COUNT-RANGE", E, G, "`instance_count` / `InstanceCount`", "0..6758"),
    Rule("HP-CONTROLLER-COUNT", E, G, "`instance_count` of a controller group",
         "at least 1 (the cluster cannot run without its Slurm controller)"),
    Rule("HP-MIN-RANGE", E, G, "`min_instance_count` / `MinInstanceCount`", "0..6758"),
    Rule("HP-MIN-ABOVE-COUNT", E, G, "`min_instance_count` / `MinInstanceCount`",
         "0..`instance_count`"),
    Rule("HP-SIZING", E, G, "`min_accelerators`, `instance_count`",
         "`min_accelerators` >= 1, on a type whose accelerator count is known, not together "
         "with `min_instance_count`; a compute group needs `instance_count` or "
         "`min_accelerators`"),
    Rule("HP-PARTITION-REQUIRED", E, G, "`partition` / `SlurmConfig.PartitionNames`",
         "exactly one name on a compute group"),
    Rule("HP-PARTITION-NAME", E, G, "`partition` / `SlurmConfig.PartitionNames[0]`",
         "1..1024 characters, `[a-zA-Z0-9](-*[a-zA-Z0-9])*` (full match)"),
    Rule("HP-PARTITION-FORBIDDEN", E, G, "`partition` / `SlurmConfig.PartitionNames`",
         "none on controller and login groups"),
    Rule("HP-WARN-PARTITION-DEV", W, G, "`partition` / `SlurmConfig.PartitionNames[0]`",
         "not `dev`: HyperPod already puts every node in the `dev` partition"),
    Rule("HP-THREADS", E, G, "`threads_per_core` / `ThreadsPerCore`", "1 or 2"),
    Rule("HP-DHC-UNKNOWN", E, G, "`deep_health_checks` / `OnStartDeepHealthChecks`",
         "`DeepHealthCheck` members only (plain strings are rejected)"),
    Rule("HP-DHC-DISTINCT", E, G, "`deep_health_checks` / `OnStartDeepHealthChecks`",
         "none, or 1..2 distinct checks"),
    Rule("HP-DHC-CONNECTIVITY", E, G, "`deep_health_checks` / `OnStartDeepHealthChecks`",
         "`InstanceConnectivity` only on an instance type with multi-node GPU networking "
         "(EFA GPU types)"),
    Rule("HP-WARN-DHC-CONNECTIVITY", W, G, "`deep_health_checks` / `OnStartDeepHealthChecks`",
         "`InstanceConnectivity` only on groups of at least 2 instances"),
    Rule("HP-WARN-DHC", W, G, "`deep_health_checks` / `OnStartDeepHealthChecks`",
         "deep health checks on GPU and Trainium compute groups"),
    Rule("HP-STORAGE-COUNT", E, G, "`storage` / `InstanceStorageConfigs`", "0..4 configs"),
    Rule("HP-EBS-SIZE", E, G, "`storage[].volume_size` / `EbsVolumeConfig.VolumeSizeInGB`",
         "required; a whole number of GiB, 1..16384; a token only as `Size.gibibytes(token)`"),
    Rule("HP-EBS-KMS", E, G, "`storage[].kms_key_id` / `EbsVolumeConfig.VolumeKmsKeyId`",
         "up to 2048 of `[a-zA-Z0-9:/_-]`"),
    Rule("HP-FSX-DNS", E, G, "`storage[].dns_name` / `Fsx*Config.DnsName`",
         "`fs-`/`fc-`/`fsi-`/`fci-`, 8 or more hex digits, a dot and 4..253 characters"),
    Rule("HP-FSX-MOUNT-NAME", E, G, "`storage[].mount_name` / `FsxLustreConfig.MountName`",
         "1..8 of `[A-Za-z0-9_-]` (required)"),
    Rule("HP-MOUNT-PATH", E, G, "`storage[].mount_path` / `Fsx*Config.MountPath`",
         "absolute, no `//`, no trailing `/`, `[a-zA-Z0-9._-]` segments, no `.`/`..` "
         "segments, up to 1024 characters"),
    Rule("HP-IMAGE-ID", E, G, "`image_id` / `ImageId`",
         "`ami-` and 8 or 17 lowercase hex digits, or `default`"),
    Rule("HP-TRAINING-PLAN", E, G, "`training_plan_arn` / `TrainingPlanArn`",
         "`arn:aws[a-z-]*:sagemaker:<region>:<12 digits>:training-plan/...`, 50..2048 "
         "characters"),
    Rule("HP-INSTANCE-TYPE", E, G, "`instance_type` / `InstanceType`",
         "`ml.<family>.<size>` (also types newer than the library)"),
    Rule("HP-WARN-INSTANCE-TYPE", W, G, "`instance_type` / `InstanceType`",
         "a type in the library's catalogue (an unknown type gets a \"did you mean\")"),
    Rule("HP-LIFECYCLE", E, G, "`lifecycle_scripts.*` / `LifeCycleConfig`",
         "`on_create` a file name (1..128 characters, no `/`) present in the directory; an "
         "existing directory; an S3 prefix without `..`, `//`, `s3://` or whitespace; the S3 "
         "URI at most 1024 characters; exactly one of a directory, a bucket or an "
         "`s3://<bucket>/<prefix>` URI (`from_s3_uri`, with one of `on_create` / "
         "`on_init_complete`)"),
    Rule("HP-LIFECYCLE-FILES", E, G, "`lifecycle_scripts` of `from_directory` "
         "(`exclude` / `include`)",
         "valid `.gitignore` patterns; no symbolic link leaving the folder; `on_create` among "
         "the files the upload keeps"),
    Rule("HP-WARN-LIFECYCLE-BUCKET", W, G, "`lifecycle_scripts.bucket` / "
         "`LifeCycleConfig.SourceS3Uri`",
         "a `sagemaker-*` bucket when the execution role is imported (the library cannot "
         "grant it read access to another bucket)"),
    Rule("HP-SCHEDULED-UPDATE", E, G, "`scheduled_update` / `ScheduledUpdateConfig`",
         "a 6-field `cron(...)` expression (at most 256 characters); batch sizes >= 1, "
         "`maximum_batch_size` whenever `rollback_maximum_batch_size`; `wait_interval` "
         "0..3600 whole seconds; at most 10 rollback alarms, named with 1..255 characters, "
         "not only whitespace"),
    Rule("HP-OVERRIDE-VPC", E, G, "`vpc_subnets`, `security_groups` / `OverrideVpcConfig`",
         "1..5 security groups, 1..16 explicit subnets; a subnet selection without "
         "`subnets` only when the cluster has a `vpc`; security groups of the group or the "
         "cluster"),
    # The cluster
    Rule("HP-NAME-CLUSTER", E, C, "`cluster_name` / `ClusterName`", NAME),
    Rule("HP-VPC-REQUIRED", E, C, "`security_groups`, `vpc_subnets` / `VpcConfig`",
         "together with `vpc`, or explicit subnets (`SubnetSelection(subnets=...)`) together "
         "with `security_groups`"),
    Rule("HP-NODE-RECOVERY", E, C, "`node_recovery` / `NodeRecovery`",
         "`NodeRecovery.AUTOMATIC`, `NodeRecovery.NONE`, `None` or a string token"),
    Rule("HP-ACCOUNTING-DATABASE", E, C, "`accounting_database.*` / `AccountingDatabase`",
         "endpoint: a host name, 1..255 characters; name: 1..64 of `[a-zA-Z0-9$_]`; port: "
         "1..65535"),
    Rule("HP-TAGS", E, C, "`tags` / `Tags`",
         "at most 50; keys 1..128 and values 0..256 characters of Unicode letters, digits, "
         "whitespace and `_ . : / = + - @`; keys not starting with `aws:`"),
    # The cluster and its groups together
    Rule("HP-GROUPS-COUNT", E, X, "`instance_groups` / `InstanceGroups`", "1..100 groups"),
    Rule("HP-CONTROLLER-ONE", E, X, "`instance_groups` (NodeType=Controller)",
         "exactly one controller group"),
    Rule("HP-LOGIN-MAX", E, X, "`instance_groups` (NodeType=Login)", "at most one login group"),
    Rule("HP-GROUP-UNIQUE", E, X, "`name` / `InstanceGroupName`", "unique within the cluster"),
    Rule("HP-MIN-NEEDS-CONTINUOUS", E, X, "`min_instance_count` / `MinInstanceCount`",
         "> 0 only with `NodeProvisioningMode.CONTINUOUS`"),
    Rule("HP-ACCOUNTING-NEEDS-CONTINUOUS", E, X,
         "`accounting_database` / `Orchestrator.Slurm.AccountingDatabase`",
         "only with `NodeProvisioningMode.CONTINUOUS`"),
    Rule("HP-LAYOUT-NEEDS-STANDARD", E, X, "`slurm_layout` / `SlurmConfig`",
         "`SlurmLayout.LIFECYCLE_SCRIPTS` only with `NodeProvisioningMode.STANDARD`"),
    Rule("HP-STRATEGY-IN-CONTINUOUS", E, X,
         "`slurm_config_strategy` / `Orchestrator.Slurm.SlurmConfigStrategy`",
         "only with `NodeProvisioningMode.STANDARD`"),
    Rule("HP-FSX-NEEDS-VPC", E, X, "`vpc` / `VpcConfig`", "a VPC whenever a group mounts FSx"),
    Rule("HP-VPC-SECURITY-GROUPS", E, X, "`security_groups` / `VpcConfig.SecurityGroupIds`",
         "1..5"),
    Rule("HP-VPC-SUBNETS", E, X, "`vpc_subnets` / `VpcConfig.Subnets`", "1..16 subnets"),
    # The readiness gate
    Rule("HP-GATE-TIMEOUT", E, GT, "`readiness_gate.timeout`", "more than 0, at most 12 h"),
    Rule("HP-GATE-POLL", E, GT, "`readiness_gate.poll_interval`",
         "10 s .. 15 min, and shorter than the timeout"),
    Rule("HP-GATE-NAMESPACE", E, GT, "`readiness_gate.metrics_namespace`",
         "1..255 characters of letters, digits and `. - _ / # : space`, at least one "
         "non-space, not starting with `:` or `AWS/`"),
    Rule("HP-GATE-TOKEN-COUNT", E, GT, "`instance_count` of a gated group",
         "a number (not a token) when `min_instance_count > 0` and the gate is on"),
    Rule("HP-GATE-TOKEN-DURATION", E, GT, "`readiness_gate.timeout` / `poll_interval`",
         "a concrete `Duration`"),
    Rule("HP-WARN-GATE-TOKEN-MIN", W, GT, "`min_instance_count` / `MinInstanceCount`",
         "a number when the gate is on (the gate cannot wait for a token)"),
    Rule("HP-WARN-GATE-TIMEOUT", W, GT, "`readiness_gate.timeout`",
         "at least 3 h (HyperPod's MinCount window)"),
    # Blueprints
    Rule("HP-BLUEPRINT-ARGS", E, B, "blueprint arguments",
         "what the platform defaults allow (instance types, spare instances, tags)"),
    Rule("HP-BLUEPRINT-SIZING", E, B, "blueprint layout",
         "a parallel layout that fits the instance type"),
)
# fmt: on

RULES: dict[str, Rule] = {rule.id: rule for rule in _RULES}
"""Every rule of the library, by id, in documentation order."""

TABLE_BEGIN = "<!-- rule-table:begin (generated from validation/registry.py) -->"
TABLE_END = "<!-- rule-table:end -->"


def rule(rule_id: str) -> Rule:
    """The registered rule ``rule_id``.

    :raises KeyError: no such rule (a typo in a check is caught by the tests).
    """
    return RULES[rule_id]


def rule_table() -> str:
    """The Markdown table of every rule, as docs/validation.md shows it."""
    lines = [
        "| Rule | Severity | Scope | Field | Allowed (error) / recommended (warning) |",
        "|---|---|---|---|---|",
    ]
    for entry in RULES.values():
        summary = entry.summary.replace("|", "\\|")
        lines.append(
            f"| `{entry.id}` | {entry.severity} | {entry.scope} | {entry.field} | {summary} |"
        )
    return "\n".join(lines)


def with_rule_table(markdown: str) -> str:
    """``markdown`` with the text between the table markers replaced by :func:`rule_table`.

    :raises ValueError: the markers are missing.
    """
    head, begin, rest = markdown.partition(TABLE_BEGIN)
    _, end, tail = rest.partition(TABLE_END)
    if not begin or not end:
        raise ValueError(f"the rule table markers {TABLE_BEGIN!r} / {TABLE_END!r} are missing")
    return f"{head}{TABLE_BEGIN}\n{rule_table()}\n{TABLE_END}{tail}"


def main(argv: list[str]) -> int:
    """Exit 1 when docs/validation.md's rule table is stale; with ``--write``, regenerate it.
    Run from the repository root."""
    path = Path("docs") / "validation.md"
    text = path.read_text(encoding="utf-8")
    fresh = with_rule_table(text)
    if "--write" in argv:
        path.write_text(fresh, encoding="utf-8")
        return 0
    if fresh != text:
        sys.stderr.write(
            f"{path}: the rule table is stale; run python -m hyperpod_constructs.validation "
            "--write\n"
        )
        return 1
    return 0
