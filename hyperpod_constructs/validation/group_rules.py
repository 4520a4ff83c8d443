"""Rules for one instance group. Pure: a group in, findings out.

Every rule skips a value that is an unresolved CDK token (it is only known at deploy time) and
still checks the concrete values next to it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from aws_cdk import Duration, Size

from .._tokens import is_unresolved
from ..enums import DeepHealthCheck, NodeType
from . import limits
from .arguments import (
    argument_finding,
    check,
    is_bool,
    is_int,
    is_number_token,
    is_text_token,
    type_name,
)
from .finding import Finding
from .group_arguments import group_argument_findings, label
from .group_warnings import GROUP_WARNINGS
from .lifecycle_rules import lifecycle_findings

if TYPE_CHECKING:
    from ..instance_group import InstanceGroup
    from ..storage import InstanceStorage


class _Unresolved:
    """Shown for a token value in messages (its encoded form means nothing to a reader)."""

    def __repr__(self) -> str:
        return "<token>"


TOKEN = _Unresolved()


def _name_allowed(max_length: int) -> str:
    return (
        f"1..{max_length} characters: letters and digits, with single or repeated hyphens "
        "between them (pattern [a-zA-Z0-9](-*[a-zA-Z0-9])*)"
    )


_is_count = is_int


def _int_hint(value: object) -> int:
    """The int a user probably meant (4 for 4.0, 1 for True), else 16."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and math.isfinite(value):
        return round(value)
    return 16


def check_name(
    value: str,
    *,
    rule: str,
    field: str,
    group: str | None,
    max_length: int = limits.MAX_NAME_LENGTH,
) -> list[Finding]:
    """A cluster, group or partition name against HyperPod's pattern and length (a string
    token passes; a number token is not a name)."""
    if is_text_token(value):
        return []
    if is_unresolved(value):
        return [
            Finding(
                rule=rule,
                field=field,
                value=TOKEN,
                allowed=f"{_name_allowed(max_length)}; a string token, not a number token",
                fix="pass a string parameter (value_as_string) or Token.as_string(...)",
                group=group,
            )
        ]
    if isinstance(value, str) and len(value) <= max_length and limits.NAME_PATTERN.fullmatch(value):
        return []
    suggestion = re.sub(r"[^a-zA-Z0-9]+", "-", str(value)).strip("-")[:max_length].strip("-")
    if not suggestion:
        fix = "use a name such as 'gpu'"
    elif suggestion == value or len(suggestion) > limits.MAX_NAME_LENGTH:
        fix = f"shorten it to at most {max_length} characters"
    else:
        fix = f"use e.g. {suggestion!r}"
    return [
        Finding(
            rule=rule,
            field=field,
            value=value,
            allowed=_name_allowed(max_length),
            fix=fix,
            group=group,
        )
    ]


def _text_token_count(value: object, field: str, group: str) -> list[Finding]:
    """A count given as a string token: CloudFormation would pass the parameter's text where
    HyperPod takes an integer."""
    if not is_text_token(value):
        return []
    return [
        Finding(
            rule="HP-COUNT-INT",
            field=field,
            value=TOKEN,
            allowed="a whole number (int) or a number token, not a string token",
            fix="use CfnParameter(type='Number').value_as_number or Token.as_number(...)",
            group=group,
        )
    ]


def _counts(group: InstanceGroup) -> list[Finding]:
    found: list[Finding] = []
    name, top = group.name, limits.MAX_INSTANCE_COUNT
    count, minimum = group.instance_count, group.min_instance_count
    count_field, min_field = (
        "instance_count (InstanceCount)",
        "min_instance_count (MinInstanceCount)",
    )
    found += _text_token_count(count, count_field, name)
    count_known = not is_unresolved(count)
    if count_known and not _is_count(count):
        found.append(
            Finding(
                rule="HP-COUNT-INT",
                field=count_field,
                value=count,
                allowed=f"a whole number (int) in 0..{top} (got {type_name(count)})",
                fix=f"pass an int, e.g. {_int_hint(count)}",
                group=name,
            )
        )
        count_known = False
    elif count_known and not 0 <= count <= top:
        found.append(
            Finding(
                rule="HP-COUNT-RANGE",
                field=count_field,
                value=count,
                allowed=f"0..{top}",
                fix=f"set instance_count between 0 and {top}",
                group=name,
            )
        )
        count_known = False
    found += _text_token_count(minimum, min_field, name)
    if minimum is None or is_unresolved(minimum):
        return found
    upper = f"instance_count ({count})" if count_known else "instance_count"
    if not _is_count(minimum):
        found.append(
            Finding(
                rule="HP-COUNT-INT",
                field=min_field,
                value=minimum,
                allowed=f"a whole number (int) in 0..{upper} (got {type_name(minimum)})",
                fix=f"pass an int, e.g. {_int_hint(minimum)}",
                group=name,
            )
        )
    elif not 0 <= minimum <= top:
        found.append(
            Finding(
                rule="HP-MIN-RANGE",
                field=min_field,
                value=minimum,
                allowed=f"0..{top} and at most {upper}",
                fix="set min_instance_count between 0 and instance_count",
                group=name,
            )
        )
    elif count_known and minimum > count:
        found.append(
            Finding(
                rule="HP-MIN-ABOVE-COUNT",
                field=min_field,
                value=minimum,
                allowed=f"0..{upper}",
                fix=f"lower min_instance_count to at most {count}, or raise instance_count "
                f"to at least {minimum}",
                group=name,
            )
        )
    return found


def _sizing(group: InstanceGroup) -> list[Finding]:
    """Problems the factory met while sizing the group from ``min_accelerators``."""
    return list(group.problems)


def _partition(group: InstanceGroup) -> list[Finding]:
    name, partition = group.name, group.partition
    field = "partition (SlurmConfig.PartitionNames)"
    if group.node_type is NodeType.COMPUTE:
        if partition is None or partition == "":
            return [
                Finding(
                    rule="HP-PARTITION-REQUIRED",
                    field=field,
                    value=partition,
                    allowed="exactly one partition name for a compute group",
                    fix="pass partition='gpu' (or another name)",
                    group=name,
                )
            ]
        return check_name(
            partition,
            rule="HP-PARTITION-NAME",
            field=field,
            group=name,
            max_length=limits.MAX_PARTITION_LENGTH,
        )
    if partition is not None:
        role = group.node_type.value.lower()
        return [
            Finding(
                rule="HP-PARTITION-FORBIDDEN",
                field=field,
                value=partition,
                allowed=f"no partition on a {role} group (None)",
                fix="remove partition; only compute groups join partitions",
                group=name,
            )
        ]
    return []


def _threads(group: InstanceGroup) -> list[Finding]:
    value = group.threads_per_core
    if value is None or is_number_token(value):
        return []
    if _is_count(value) and limits.MIN_THREADS_PER_CORE <= value <= limits.MAX_THREADS_PER_CORE:
        return []
    return [
        Finding(
            rule="HP-THREADS",
            field="threads_per_core (ThreadsPerCore)",
            value=value,
            allowed="1 (hyperthreading off) or 2 (on)",
            fix="set threads_per_core to 1 or 2",
            group=group.name,
        )
    ]


def _health_checks(group: InstanceGroup) -> list[Finding]:
    checks: list[object] = list(group.deep_health_checks)
    field = "deep_health_checks (OnStartDeepHealthChecks)"
    found: list[Finding] = []
    known: dict[object, DeepHealthCheck] = {check.value: check for check in DeepHealthCheck}
    unknown = [check for check in checks if not isinstance(check, DeepHealthCheck)]
    if unknown:
        # Plain strings are rejected too: the group renders ``check.value``.
        hints = [f"DeepHealthCheck.{known[v].name}" for v in unknown if v in known]
        found.append(
            Finding(
                rule="HP-DHC-UNKNOWN",
                field=field,
                value=unknown,
                allowed="DeepHealthCheck members: "
                + ", ".join(f"DeepHealthCheck.{c.name} ({c.value})" for c in DeepHealthCheck),
                fix=f"use {', '.join(hints)}"
                if hints
                else "use DeepHealthCheck.INSTANCE_STRESS / DeepHealthCheck.INSTANCE_CONNECTIVITY",
                group=group.name,
            )
        )
    values = [getattr(check, "value", check) for check in checks]
    if len(set(values)) != len(values) or len(values) > limits.MAX_DEEP_HEALTH_CHECKS:
        found.append(
            Finding(
                rule="HP-DHC-DISTINCT",
                field=field,
                value=values,
                allowed=f"1..{limits.MAX_DEEP_HEALTH_CHECKS} distinct checks (or none)",
                fix="list each check at most once",
                group=group.name,
            )
        )
    return found


def _pattern(
    value: str | None,
    pattern: re.Pattern[str],
    *,
    rule: str,
    field: str,
    allowed: str,
    fix: str,
    group: str,
    max_length: int | None = None,
    required: bool = False,
) -> list[Finding]:
    if value is None and not required:
        return []
    if is_text_token(value):
        return []
    if (
        isinstance(value, str)
        and pattern.fullmatch(value)
        and (max_length is None or len(value) <= max_length)
    ):
        return []
    return [Finding(rule=rule, field=field, value=value, allowed=allowed, fix=fix, group=group)]


def _gib(size: float) -> str:
    return f"{int(size)} GiB" if size.is_integer() else f"{size!r} GiB"


def _ebs(storage: InstanceStorage, group: str) -> list[Finding]:
    found: list[Finding] = []
    field = "storage[].volume_size (EbsVolumeConfig.VolumeSizeInGB)"
    allowed = f"a whole number of GiB, {limits.MIN_EBS_GIB}..{limits.MAX_EBS_GIB}"
    volume = storage.volume_size
    found += check(
        "storage[].root_volume (EbsVolumeConfig.RootVolume)",
        storage.root_volume,
        is_bool,
        "True or False (a bool)",
        optional=True,
        group=group,
    )
    if volume is None:
        found.append(
            Finding(
                rule="HP-EBS-SIZE",
                field=field,
                value=None,
                allowed=f"{allowed} (required)",
                fix="pass volume_size=Size.gibibytes(n)",
                group=group,
            )
        )
    elif not isinstance(volume, Size):
        found.append(
            argument_finding(field, volume, "a Size, e.g. Size.gibibytes(500)", group=group)
        )
    elif volume.is_unresolved():
        try:
            storage.volume_size_gib()
        except RuntimeError:  # jsii: a token amount cannot be converted between units
            found.append(
                Finding(
                    rule="HP-EBS-SIZE",
                    field=field,
                    value="a token in a unit other than GiB",
                    allowed=f"{allowed}; a token amount only as Size.gibibytes(token)",
                    fix="use Size.gibibytes(parameter.value_as_number)",
                    group=group,
                )
            )
    elif volume is not None:
        size = storage.volume_size_gib()
        assert size is not None
        if not size.is_integer() or not limits.MIN_EBS_GIB <= size <= limits.MAX_EBS_GIB:
            found.append(
                Finding(
                    rule="HP-EBS-SIZE",
                    field=field,
                    value=_gib(size),
                    allowed=allowed,
                    fix="use Size.gibibytes(n) with a whole n in range",
                    group=group,
                )
            )
    found += _pattern(
        storage.kms_key_id,
        limits.KMS_KEY_ID,
        rule="HP-EBS-KMS",
        field="storage[].kms_key_id (EbsVolumeConfig.VolumeKmsKeyId)",
        allowed=f"a KMS key id or ARN (up to {limits.MAX_KMS_KEY_ID_LENGTH} letters, digits, "
        "':', '/', '_' or '-')",
        fix="pass key.key_arn",
        group=group,
        max_length=limits.MAX_KMS_KEY_ID_LENGTH,
    )
    return found


def _fsx(storage: InstanceStorage, group: str) -> list[Finding]:
    key = "FsxLustreConfig" if storage.kind == "fsx_lustre" else "FsxOpenZfsConfig"
    found = _pattern(
        storage.dns_name,
        limits.FSX_DNS_NAME,
        rule="HP-FSX-DNS",
        field=f"storage[].dns_name ({key}.DnsName)",
        allowed="an FSx DNS name like fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com "
        f"(16..{limits.MAX_FSX_DNS_NAME_LENGTH} characters)",
        fix="pass file_system.dns_name",
        group=group,
        max_length=limits.MAX_FSX_DNS_NAME_LENGTH,
        required=True,
    )
    if storage.kind == "fsx_lustre":
        found += _pattern(
            storage.mount_name,
            limits.FSX_MOUNT_NAME,
            rule="HP-FSX-MOUNT-NAME",
            field=f"storage[].mount_name ({key}.MountName)",
            allowed="1..8 letters, digits, '_' or '-'",
            fix="pass file_system.mount_name",
            group=group,
            required=True,
        )
    found += _pattern(
        storage.mount_path,
        limits.MOUNT_PATH,
        rule="HP-MOUNT-PATH",
        field=f"storage[].mount_path ({key}.MountPath)",
        allowed="an absolute path without '//' or a trailing '/', e.g. /fsx "
        f"(letters, digits, '.', '_', '-'; up to {limits.MAX_MOUNT_PATH_LENGTH} characters)",
        fix="use a path such as '/fsx'",
        group=group,
        max_length=limits.MAX_MOUNT_PATH_LENGTH,
    )
    return found


def _storage(group: InstanceGroup) -> list[Finding]:
    found: list[Finding] = []
    if len(group.storage) > limits.MAX_STORAGE_CONFIGS:
        found.append(
            Finding(
                rule="HP-STORAGE-COUNT",
                field="storage (InstanceStorageConfigs)",
                value=f"{len(group.storage)} configs",
                allowed=f"0..{limits.MAX_STORAGE_CONFIGS} configs",
                fix="merge or drop storage configs",
                group=group.name,
            )
        )
    for storage in group.storage:
        if storage.kind == "ebs":
            found += _ebs(storage, group.name)
        elif storage.kind in ("fsx_lustre", "fsx_open_zfs"):
            found += _fsx(storage, group.name)
        else:
            found.append(
                argument_finding(
                    "storage[].kind",
                    storage.kind,
                    "'ebs', 'fsx_lustre' or 'fsx_open_zfs' (use the InstanceStorage factories)",
                    group=group.name,
                )
            )
    return found


def _identifiers(group: InstanceGroup) -> list[Finding]:
    found = _pattern(
        group.image_id,
        limits.IMAGE_ID,
        rule="HP-IMAGE-ID",
        field="image_id (ImageId)",
        allowed="'ami-' and 8 or 17 lowercase hex digits, or 'default'",
        fix="pass an AMI id such as ami-0123456789abcdef0",
        group=group.name,
    )
    plan = group.training_plan_arn
    if plan is not None and not is_text_token(plan):
        lo, hi = limits.MIN_TRAINING_PLAN_ARN_LENGTH, limits.MAX_TRAINING_PLAN_ARN_LENGTH
        if not (
            isinstance(plan, str)
            and lo <= len(plan) <= hi
            and limits.TRAINING_PLAN_ARN.fullmatch(plan)
        ):
            found.append(
                Finding(
                    rule="HP-TRAINING-PLAN",
                    field="training_plan_arn (TrainingPlanArn)",
                    value=plan,
                    allowed="arn:<partition>:sagemaker:<region>:<account>:training-plan/<name> "
                    f"({lo}..{hi} characters)",
                    fix="pass the ARN shown by `aws sagemaker list-training-plans`",
                    group=group.name,
                )
            )
    itype = group.instance_type.name
    if not is_unresolved(itype) and not limits.INSTANCE_TYPE.fullmatch(itype):
        found.append(
            Finding(
                rule="HP-INSTANCE-TYPE",
                field="instance_type (InstanceType)",
                value=itype,
                allowed="ml.<family>.<size>, e.g. ml.p5.48xlarge",
                fix="use a HyperPodInstanceType constant or .of('ml.<family>.<size>')",
                group=group.name,
            )
        )
    return found


def gate_findings(group: InstanceGroup) -> list[Finding]:
    """Counts the readiness gate cannot wait for: it needs them at synth, as numbers.

    The gate re-arms (a new wait condition) whenever a gated group's minimum or target
    changes, so both must be known when the template is written. Only for clusters whose
    gate is enabled.
    """
    count, minimum = group.instance_count, group.min_instance_count
    if minimum is None or is_text_token(minimum):  # a string token is HP-COUNT-INT
        return []
    if is_unresolved(minimum):
        return [
            Finding(
                rule="HP-WARN-GATE-TOKEN-MIN",
                field="min_instance_count (MinInstanceCount)",
                value=TOKEN,
                allowed="a number, so the readiness gate can wait for the group (HyperPod still "
                "enforces the token's value, but min_count_gate will not wait for it)",
                fix="pass a concrete min_instance_count if resources must wait for the group",
                group=group.name,
            )
        ]
    if _is_count(minimum) and minimum > 0 and is_unresolved(count):
        return [
            Finding(
                rule="HP-GATE-TOKEN-COUNT",
                field="instance_count (InstanceCount)",
                value=TOKEN,
                allowed="a number when min_instance_count > 0 and the readiness gate is on "
                "(the gate "
                "compares the counts and re-arms when they change)",
                fix="pass a concrete instance_count, or "
                "min_count_gate=MinCountGateOptions(enabled=False)",
                group=group.name,
            )
        ]
    return []


def _warnings(group: InstanceGroup) -> list[Finding]:
    found: list[Finding] = []
    accelerated = group.instance_type.is_accelerated and group.node_type is NodeType.COMPUTE
    if accelerated and not group.deep_health_checks:
        found.append(
            Finding(
                rule="HP-WARN-DHC",
                field="deep_health_checks (OnStartDeepHealthChecks)",
                value=[],
                allowed="InstanceStress and InstanceConnectivity on accelerator groups",
                fix="pass deep_health_checks=[DeepHealthCheck.INSTANCE_STRESS, "
                "DeepHealthCheck.INSTANCE_CONNECTIVITY] so faulty GPUs are caught "
                "before jobs land on them",
                group=group.name,
            )
        )
    return found


def _wait_seconds(interval: Duration) -> float:
    """A wait interval in seconds, fractions included (``to_seconds`` refuses them)."""
    return float(interval.to_milliseconds()) / 1000


def _alarm_name_ok(name: str) -> bool:
    """``AlarmName``: 1..255 characters, not only whitespace (a string token passes)."""
    if is_text_token(name):
        return True
    return len(name) <= limits.MAX_ALARM_NAME_LENGTH and bool(name.strip())


def _scheduled_update(group: InstanceGroup) -> list[Finding]:
    """``ScheduledUpdateConfig`` against the API model and the resource schema (cron pattern,
    ranges, alarm names). Its fields have the right types (``group_arguments``)."""
    update = group.scheduled_update
    if update is None:
        return []
    found: list[Finding] = []
    name, prefix = group.name, "scheduled_update"

    def add(field: str, value: object, allowed: str, fix: str) -> None:
        found.append(
            Finding(
                rule="HP-SCHEDULED-UPDATE",
                field=f"{prefix}.{field}",
                value=value,
                allowed=allowed,
                fix=fix,
                group=name,
            )
        )

    expression = update.schedule_expression
    if not is_text_token(expression) and not (
        isinstance(expression, str)
        and len(expression) <= limits.MAX_SCHEDULE_EXPRESSION_LENGTH
        and limits.SCHEDULE_EXPRESSION.search(expression)
    ):
        add(
            "schedule_expression (ScheduleExpression)",
            TOKEN if is_unresolved(expression) else expression,
            "cron(minute hour day-of-month month day-of-week year), e.g. cron(0 3 ? * SUN *)",
            "write a 6-field cron(...) expression",
        )
    for field, size in (
        ("maximum_batch_size (MaximumBatchSize)", update.maximum_batch_size),
        (
            "rollback_maximum_batch_size (RollbackMaximumBatchSize)",
            update.rollback_maximum_batch_size,
        ),
    ):
        if (
            size is not None
            and not is_number_token(size.value)
            and not (_is_count(size.value) and size.value >= 1)
        ):
            add(
                field,
                TOKEN if is_unresolved(size.value) else size.value,
                "a whole number of at least 1",
                "use e.g. BatchSize.instances(1)",
            )
    if update.rollback_maximum_batch_size is not None and update.maximum_batch_size is None:
        add(
            "maximum_batch_size (RollingUpdatePolicy.MaximumBatchSize)",
            None,
            "set whenever rollback_maximum_batch_size is",
            "pass maximum_batch_size as well",
        )
    interval = update.wait_interval
    if interval is not None and not interval.is_unresolved():
        seconds = _wait_seconds(interval)
        if not (seconds.is_integer() and 0 <= seconds <= limits.MAX_UPDATE_WAIT_SECONDS):
            add(
                "wait_interval (WaitIntervalInSeconds)",
                seconds,
                f"0..{limits.MAX_UPDATE_WAIT_SECONDS} whole seconds",
                "use e.g. Duration.minutes(5)",
            )
    if len(update.rollback_alarms) > limits.MAX_ROLLBACK_ALARMS:
        add(
            "rollback_alarms (AutoRollbackConfiguration)",
            len(update.rollback_alarms),
            f"at most {limits.MAX_ROLLBACK_ALARMS} alarm names",
            "keep the alarms that matter most",
        )
    for alarm in update.rollback_alarms:
        if not _alarm_name_ok(alarm):
            add(
                "rollback_alarms[] (AlarmName)",
                alarm,
                f"1..{limits.MAX_ALARM_NAME_LENGTH} characters, not only whitespace",
                "pass the alarm's name, e.g. alarm.alarm_name",
            )
    return found


def _override_network(group: InstanceGroup) -> list[Finding]:
    """``OverrideVpcConfig``: 1..5 security groups; explicit subnets 1..16."""
    found: list[Finding] = []
    top_sg, top_subnets = limits.MAX_SECURITY_GROUPS, limits.MAX_SUBNETS
    if group.security_groups is not None and not 1 <= len(group.security_groups) <= top_sg:
        found.append(
            Finding(
                rule="HP-OVERRIDE-VPC",
                field="security_groups (OverrideVpcConfig.SecurityGroupIds)",
                value=len(group.security_groups),
                allowed=f"1..{top_sg} security groups",
                fix=f"pass between 1 and {top_sg} security groups, or None for the cluster's",
                group=group.name,
            )
        )
    subnets = group.vpc_subnets.subnets if group.vpc_subnets is not None else None
    if subnets is not None and not 1 <= len(subnets) <= top_subnets:
        found.append(
            Finding(
                rule="HP-OVERRIDE-VPC",
                field="vpc_subnets (OverrideVpcConfig.Subnets)",
                value=len(subnets),
                allowed=f"1..{top_subnets} subnets",
                fix=f"select between 1 and {top_subnets} subnets, or None for the cluster's",
                group=group.name,
            )
        )
    return found


GROUP_RULES: tuple[Callable[[InstanceGroup], list[Finding]], ...] = (
    _counts,
    _sizing,
    _partition,
    _threads,
    _health_checks,
    _storage,
    _identifiers,
    _scheduled_update,
    _override_network,
    _warnings,
)


def validate_group(
    group: InstanceGroup, *, gate: bool = False, role_owned: bool = True
) -> list[Finding]:
    """Every finding (errors and warnings) for one instance group, in rule order.

    A field of the wrong type (``HP-ARG-TYPE``) that other rules must read stops the group's
    other rules (they could not read it); its name and the factory's findings are still
    reported.

    :param gate: whether the cluster's readiness gate is enabled; adds
        :func:`gate_findings`. Default: False.
    :param role_owned: whether the group's execution role is defined in the app (see
        :func:`lifecycle_findings`). Default: True.
    """
    name = label(group)
    found = check_name(
        group.name, rule="HP-NAME-GROUP", field="name (InstanceGroupName)", group=name
    )
    arguments = group_argument_findings(group)
    if arguments:
        return [*found, *arguments, *_sizing(group)]
    for rule in (*GROUP_RULES, *GROUP_WARNINGS):
        found += rule(group)
    found += lifecycle_findings(group.lifecycle_scripts, group=name, role_owned=role_owned)
    if gate:
        found += gate_findings(group)
    return found
