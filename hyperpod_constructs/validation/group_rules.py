"""Rules for one instance group. Pure: a group in, findings out.

Every rule skips a value that is an unresolved CDK token (it is only known at deploy time) and
still checks the concrete values next to it.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable

from .._tokens import is_unresolved
from ..enums import DeepHealthCheck, NodeType
from ..instance_group import InstanceGroup
from ..lifecycle import REQUIRED_BUCKET_PREFIX, LifecycleScripts
from ..storage import InstanceStorage
from . import limits
from .finding import Finding


def _name_allowed(max_length: int) -> str:
    return (
        f"1..{max_length} characters: letters and digits, with single or repeated hyphens "
        "between them (pattern [a-zA-Z0-9](-*[a-zA-Z0-9])*)"
    )


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


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
    """A cluster, group or partition name against HyperPod's pattern and length."""
    if is_unresolved(value):
        return []
    if isinstance(value, str) and len(value) <= max_length and limits.NAME_PATTERN.match(value):
        return []
    suggestion = re.sub(r"[^a-zA-Z0-9]+", "-", str(value)).strip("-")[:max_length].strip("-")
    if not suggestion:
        fix = "use a name such as 'gpu'"
    elif suggestion == value or len(suggestion) > limits.MAX_NAME_LENGTH:
        fix = f"shorten it to at most {max_length} characters"
    else:
        fix = f"use e.g. {suggestion!r}"
    return [Finding(rule, field, value, _name_allowed(max_length), fix, group)]


def _counts(group: InstanceGroup) -> list[Finding]:
    found: list[Finding] = []
    name, top = group.name, limits.MAX_INSTANCE_COUNT
    count, minimum = group.instance_count, group.min_instance_count
    count_field, min_field = (
        "instance_count (InstanceCount)",
        "min_instance_count (MinInstanceCount)",
    )
    count_known = not is_unresolved(count)
    if count_known and not _is_count(count):
        found.append(
            Finding(
                "HP-COUNT-INT",
                count_field,
                count,
                f"a whole number (int) in 0..{top}",
                f"pass an int, e.g. {_int_hint(count)}",
                name,
            )
        )
        count_known = False
    elif count_known and not 0 <= count <= top:
        found.append(
            Finding(
                "HP-COUNT-RANGE",
                count_field,
                count,
                f"0..{top}",
                f"set instance_count between 0 and {top}",
                name,
            )
        )
        count_known = False
    if minimum is None or is_unresolved(minimum):
        return found
    upper = f"instance_count ({count})" if count_known else "instance_count"
    if not _is_count(minimum):
        found.append(
            Finding(
                "HP-COUNT-INT",
                min_field,
                minimum,
                f"a whole number (int) in 0..{upper}",
                f"pass an int, e.g. {_int_hint(minimum)}",
                name,
            )
        )
    elif not 0 <= minimum <= top:
        found.append(
            Finding(
                "HP-MIN-RANGE",
                min_field,
                minimum,
                f"0..{top} and at most {upper}",
                "set min_instance_count between 0 and instance_count",
                name,
            )
        )
    elif count_known and minimum > count:
        found.append(
            Finding(
                "HP-MIN-ABOVE-COUNT",
                min_field,
                minimum,
                f"0..{upper}",
                f"lower min_instance_count to at most {count}, or raise instance_count "
                f"to at least {minimum}",
                name,
            )
        )
    return found


def _sizing(group: InstanceGroup) -> list[Finding]:
    """Problems :meth:`InstanceGroup.compute` met while sizing from ``min_accelerators``.

    The factory records them as text (``sizing_errors``); the group's fields tell which
    problem it was, so the finding can name the right field and what is allowed.
    """
    if not group.sizing_errors:
        return []
    name, wanted = group.name, group.min_accelerators
    field = "min_accelerators (sizes MinInstanceCount)"
    if wanted is None:
        if any("instance_count" in error for error in group.sizing_errors):
            field, allowed = (
                "instance_count (InstanceCount)",
                f"a whole number in 0..{limits.MAX_INSTANCE_COUNT}; required unless "
                "min_accelerators is given",
            )
            fix = (
                "pass instance_count=..., or min_accelerators=... to size the group from the "
                "accelerators a job needs"
            )
        else:
            allowed, fix = "; ".join(group.sizing_errors), "fix the group's sizing arguments"
    elif group.min_instance_count is not None:
        # The factory sizes only when min_instance_count was not given: both were passed.
        allowed = (
            "min_accelerators or min_instance_count, not both "
            f"(min_instance_count = {group.min_instance_count!r})"
        )
        fix = "drop min_instance_count (it is computed from min_accelerators) or min_accelerators"
    elif not _is_count(wanted) or wanted < 1:
        allowed = "a whole number of accelerators >= 1"
        fix = "pass the job's world size, e.g. min_accelerators=64"
    elif group.instance_type.accelerator_count is None:
        allowed = (
            "only on an instance type whose accelerators per instance the library knows "
            f"({group.instance_type.name} is not one; see ACCELERATORS_PER_INSTANCE)"
        )
        fix = (
            "give min_instance_count and instance_count explicitly, i.e. "
            "ceil(min_accelerators / accelerators per instance)"
        )
    else:  # a problem this rule does not know: show the factory's own words
        allowed = "; ".join(group.sizing_errors)
        fix = "fix min_accelerators, or give instance_count and min_instance_count"
    value = None if field.startswith("instance_count") else wanted
    return [Finding("HP-SIZING", field, value, allowed, fix, name)]


def _partition(group: InstanceGroup) -> list[Finding]:
    name, partition = group.name, group.partition
    field = "partition (SlurmConfig.PartitionNames)"
    if group.node_type is NodeType.COMPUTE:
        if partition is None or partition == "":
            return [
                Finding(
                    "HP-PARTITION-REQUIRED",
                    field,
                    partition,
                    "exactly one partition name for a compute group",
                    "pass partition='gpu' (or another name)",
                    name,
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
                "HP-PARTITION-FORBIDDEN",
                field,
                partition,
                f"no partition on a {role} group (None)",
                "remove partition; only compute groups join partitions",
                name,
            )
        ]
    return []


def _threads(group: InstanceGroup) -> list[Finding]:
    value = group.threads_per_core
    if value is None or is_unresolved(value):
        return []
    if _is_count(value) and limits.MIN_THREADS_PER_CORE <= value <= limits.MAX_THREADS_PER_CORE:
        return []
    return [
        Finding(
            "HP-THREADS",
            "threads_per_core (ThreadsPerCore)",
            value,
            "1 (hyperthreading off) or 2 (on)",
            "set threads_per_core to 1 or 2",
            group.name,
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
                "HP-DHC-UNKNOWN",
                field,
                unknown,
                "DeepHealthCheck members: "
                + ", ".join(f"DeepHealthCheck.{c.name} ({c.value})" for c in DeepHealthCheck),
                f"use {', '.join(hints)}"
                if hints
                else "use DeepHealthCheck.INSTANCE_STRESS / DeepHealthCheck.INSTANCE_CONNECTIVITY",
                group.name,
            )
        )
    values = [getattr(check, "value", check) for check in checks]
    if len(set(values)) != len(values) or len(values) > limits.MAX_DEEP_HEALTH_CHECKS:
        found.append(
            Finding(
                "HP-DHC-DISTINCT",
                field,
                values,
                f"1..{limits.MAX_DEEP_HEALTH_CHECKS} distinct checks (or none)",
                "list each check at most once",
                group.name,
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
    if is_unresolved(value):
        return []
    if (
        isinstance(value, str)
        and pattern.match(value)
        and (max_length is None or len(value) <= max_length)
    ):
        return []
    return [Finding(rule, field, value, allowed, fix, group)]


def _gib(size: float) -> str:
    return f"{int(size)} GiB" if size.is_integer() else f"{size!r} GiB"


def _ebs(storage: InstanceStorage, group: str) -> list[Finding]:
    found: list[Finding] = []
    field = "storage[].volume_size (EbsVolumeConfig.VolumeSizeInGB)"
    allowed = f"a whole number of GiB, {limits.MIN_EBS_GIB}..{limits.MAX_EBS_GIB}"
    volume = storage.volume_size
    if volume is not None and volume.is_unresolved():
        try:
            storage.volume_size_gib()
        except RuntimeError:  # jsii: a token amount cannot be converted between units
            found.append(
                Finding(
                    "HP-EBS-SIZE",
                    field,
                    "a token in a unit other than GiB",
                    f"{allowed}; a token amount only as Size.gibibytes(token)",
                    "use Size.gibibytes(parameter.value_as_number)",
                    group,
                )
            )
    elif volume is not None:
        size = storage.volume_size_gib()
        assert size is not None
        if not size.is_integer() or not limits.MIN_EBS_GIB <= size <= limits.MAX_EBS_GIB:
            found.append(
                Finding(
                    "HP-EBS-SIZE",
                    field,
                    _gib(size),
                    allowed,
                    "use Size.gibibytes(n) with a whole n in range",
                    group,
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
                "HP-STORAGE-COUNT",
                "storage (InstanceStorageConfigs)",
                f"{len(group.storage)} configs",
                f"0..{limits.MAX_STORAGE_CONFIGS} configs",
                "merge or drop storage configs",
                group.name,
            )
        )
    for storage in group.storage:
        found += _ebs(storage, group.name) if storage.kind == "ebs" else _fsx(storage, group.name)
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
    if plan is not None and not is_unresolved(plan):
        lo, hi = limits.MIN_TRAINING_PLAN_ARN_LENGTH, limits.MAX_TRAINING_PLAN_ARN_LENGTH
        if not (
            isinstance(plan, str) and lo <= len(plan) <= hi and limits.TRAINING_PLAN_ARN.match(plan)
        ):
            found.append(
                Finding(
                    "HP-TRAINING-PLAN",
                    "training_plan_arn (TrainingPlanArn)",
                    plan,
                    "arn:<partition>:sagemaker:<region>:<account>:training-plan/<name> "
                    f"({lo}..{hi} characters)",
                    "pass the ARN shown by `aws sagemaker list-training-plans`",
                    group.name,
                )
            )
    itype = group.instance_type.name
    if not is_unresolved(itype) and not group.instance_type.is_well_formed:
        found.append(
            Finding(
                "HP-INSTANCE-TYPE",
                "instance_type (InstanceType)",
                itype,
                "ml.<family>.<size>, e.g. ml.p5.48xlarge",
                "use a HyperPodInstanceType constant or .of('ml.<family>.<size>')",
                group.name,
            )
        )
    return found


def _lifecycle_field(field: str) -> tuple[str, str]:
    """The field name with its CloudFormation name, and how to fix it."""
    if field == "on_create":
        return (
            "lifecycle_scripts.on_create (LifeCycleConfig.OnCreate)",
            "pass on_create='<file>' naming the entry script at the top of the scripts folder",
        )
    if field == "lifecycle_scripts.path":
        return (
            "lifecycle_scripts.path (LifeCycleConfig.SourceS3Uri)",
            f"pass an existing folder (a relative path is read from {os.getcwd()!r})",
        )
    if field == "lifecycle_scripts.bucket":
        return (
            "lifecycle_scripts.bucket (LifeCycleConfig.SourceS3Uri)",
            f"use a bucket named {REQUIRED_BUCKET_PREFIX}..., or "
            "LifecycleScripts.from_directory(...) which creates one",
        )
    return (field if "." in field else f"lifecycle_scripts.{field}", "fix lifecycle_scripts")


def _source_uri(bucket_name: str, prefix: str) -> str | None:
    """``SourceS3Uri`` as :meth:`LifecycleScripts.bind` renders it; None when a token."""
    if is_unresolved(bucket_name) or is_unresolved(prefix):
        return None
    return f"s3://{bucket_name}/{prefix + '/' if prefix else ''}"


def lifecycle_findings(scripts: LifecycleScripts | None, *, group: str | None) -> list[Finding]:
    """Problems with lifecycle scripts (given to a group, or to the whole cluster)."""
    if scripts is None:
        return []
    found: list[Finding] = []
    for field, value, allowed in scripts.problems():
        name, fix = _lifecycle_field(field)
        found.append(Finding("HP-LIFECYCLE", name, value, allowed, fix, group))
    on_create = scripts.on_create
    if (
        isinstance(on_create, str)
        and not is_unresolved(on_create)
        and len(on_create) > limits.MAX_ON_CREATE_LENGTH
        and not any(f.field.startswith("lifecycle_scripts.on_create") for f in found)
    ):
        name, fix = _lifecycle_field("on_create")
        allowed = f"a file name (1..{limits.MAX_ON_CREATE_LENGTH} characters, no '/')"
        found.append(Finding("HP-LIFECYCLE", name, on_create, allowed, fix, group))
    if scripts.bucket is not None:
        uri = _source_uri(scripts.bucket.bucket_name, scripts.prefix)
        if uri is not None and len(uri) > limits.MAX_SOURCE_S3_URI_LENGTH:
            found.append(
                Finding(
                    "HP-LIFECYCLE",
                    "lifecycle_scripts.prefix (LifeCycleConfig.SourceS3Uri)",
                    uri,
                    f"an S3 URI of at most {limits.MAX_SOURCE_S3_URI_LENGTH} characters",
                    "use a shorter prefix",
                    group,
                )
            )
    if scripts.source_s3_uri is None and (scripts.directory is None) == (scripts.bucket is None):
        source = "neither" if scripts.directory is None else "both"
        found.append(
            Finding(
                "HP-LIFECYCLE",
                "lifecycle_scripts.directory / .bucket (LifeCycleConfig.SourceS3Uri)",
                f"{source} given",
                "exactly one of a directory or a bucket",
                "build it with LifecycleScripts.from_directory(...) or .from_s3(...)",
                group,
            )
        )
    return found


def _lifecycle(group: InstanceGroup) -> list[Finding]:
    return lifecycle_findings(group.lifecycle_scripts, group=group.name)


class _Unresolved:
    """Shown for a token value in messages (its encoded form means nothing to a reader)."""

    def __repr__(self) -> str:
        return "<token>"


TOKEN = _Unresolved()


def gate_findings(group: InstanceGroup) -> list[Finding]:
    """Counts the readiness gate cannot wait for: it needs them at synth, as numbers.

    The gate re-arms (a new wait condition) whenever a gated group's minimum or target
    changes, so both must be known when the template is written. Only for clusters whose
    gate is enabled.
    """
    count, minimum = group.instance_count, group.min_instance_count
    if minimum is None:
        return []
    if is_unresolved(minimum):
        return [
            Finding(
                "HP-WARN-GATE-TOKEN-MIN",
                "min_instance_count (MinInstanceCount)",
                TOKEN,
                "a number, so the readiness gate can wait for the group (HyperPod still "
                "enforces the token's value, but min_count_gate will not wait for it)",
                "pass a concrete min_instance_count if resources must wait for the group",
                group.name,
                "warning",
            )
        ]
    if _is_count(minimum) and minimum > 0 and is_unresolved(count):
        return [
            Finding(
                "HP-GATE-TOKEN-COUNT",
                "instance_count (InstanceCount)",
                TOKEN,
                "a number when min_instance_count > 0 and the readiness gate is on (the gate "
                "compares the counts and re-arms when they change)",
                "pass a concrete instance_count, or "
                "min_count_gate=MinCountGateOptions(enabled=False)",
                group.name,
            )
        ]
    return []


def _warnings(group: InstanceGroup) -> list[Finding]:
    found: list[Finding] = []
    accelerated = group.instance_type.is_accelerated and group.node_type is NodeType.COMPUTE
    if accelerated and not group.deep_health_checks:
        found.append(
            Finding(
                "HP-WARN-DHC",
                "deep_health_checks (OnStartDeepHealthChecks)",
                [],
                "InstanceStress and InstanceConnectivity on accelerator groups",
                "pass deep_health_checks=[DeepHealthCheck.INSTANCE_STRESS, "
                "DeepHealthCheck.INSTANCE_CONNECTIVITY] so faulty GPUs are caught "
                "before jobs land on them",
                group.name,
                "warning",
            )
        )
    return found


def _scheduled_update(group: InstanceGroup) -> list[Finding]:
    """``ScheduledUpdateConfig`` against the resource schema (cron pattern, ranges)."""
    update = group.scheduled_update
    if update is None:
        return []
    found: list[Finding] = []
    name, prefix = group.name, "scheduled_update"

    def add(field: str, value: object, allowed: str, fix: str) -> None:
        found.append(Finding("HP-SCHEDULED-UPDATE", f"{prefix}.{field}", value, allowed, fix, name))

    expression = update.schedule_expression
    if not is_unresolved(expression) and not (
        isinstance(expression, str)
        and len(expression) <= limits.MAX_SCHEDULE_EXPRESSION_LENGTH
        and limits.SCHEDULE_EXPRESSION.search(expression)
    ):
        add(
            "schedule_expression (ScheduleExpression)",
            expression,
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
            and not is_unresolved(size.value)
            and not (_is_count(size.value) and size.value >= 1)
        ):
            add(
                field, size.value, "a whole number of at least 1", "use e.g. BatchSize.instances(1)"
            )
    if update.rollback_maximum_batch_size is not None and update.maximum_batch_size is None:
        add(
            "maximum_batch_size (RollingUpdatePolicy.MaximumBatchSize)",
            None,
            "set whenever rollback_maximum_batch_size is",
            "pass maximum_batch_size as well",
        )
    seconds = update.wait_interval_seconds()
    if (
        seconds is not None
        and not is_unresolved(seconds)
        and not (seconds == int(seconds) and 0 <= seconds <= limits.MAX_UPDATE_WAIT_SECONDS)
    ):
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
    return found


def _override_network(group: InstanceGroup) -> list[Finding]:
    """``OverrideVpcConfig``: 1..5 security groups; explicit subnets 1..16."""
    found: list[Finding] = []
    top_sg, top_subnets = limits.MAX_SECURITY_GROUPS, limits.MAX_SUBNETS
    if group.security_groups is not None and not 1 <= len(group.security_groups) <= top_sg:
        found.append(
            Finding(
                "HP-OVERRIDE-VPC",
                "security_groups (OverrideVpcConfig.SecurityGroupIds)",
                len(group.security_groups),
                f"1..{top_sg} security groups",
                f"pass between 1 and {top_sg} security groups, or None for the cluster's",
                group.name,
            )
        )
    subnets = group.vpc_subnets.subnets if group.vpc_subnets is not None else None
    if subnets is not None and not 1 <= len(subnets) <= top_subnets:
        found.append(
            Finding(
                "HP-OVERRIDE-VPC",
                "vpc_subnets (OverrideVpcConfig.Subnets)",
                len(subnets),
                f"1..{top_subnets} subnets",
                f"select between 1 and {top_subnets} subnets, or None for the cluster's",
                group.name,
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
    _lifecycle,
    _scheduled_update,
    _override_network,
    _warnings,
)


def validate_group(group: InstanceGroup, *, gate: bool = False) -> list[Finding]:
    """Every finding (errors and warnings) for one instance group, in rule order.

    :param gate: whether the cluster's readiness gate is enabled; adds
        :func:`gate_findings`. Default: False.
    """
    found = check_name(
        group.name, rule="HP-NAME-GROUP", field="name (InstanceGroupName)", group=group.name
    )
    for rule in GROUP_RULES:
        found += rule(group)
    if gate:
        found += gate_findings(group)
    return found
