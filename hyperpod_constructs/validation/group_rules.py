"""Rules for one instance group. Pure: a group in, findings out."""

from __future__ import annotations

import re
from collections.abc import Callable

from .._tokens import is_unresolved
from ..enums import DeepHealthCheck, NodeType
from ..instance_group import InstanceGroup
from ..lifecycle import LifecycleScripts
from ..storage import InstanceStorage
from . import limits
from .finding import Finding

_NAME_ALLOWED = (
    f"1..{limits.MAX_NAME_LENGTH} characters: letters and digits, with single or repeated "
    "hyphens between them (pattern [a-zA-Z0-9](-*[a-zA-Z0-9])*)"
)


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_name(value: str, *, rule: str, field: str, group: str | None) -> list[Finding]:
    """A cluster, group or partition name against HyperPod's pattern and length."""
    if is_unresolved(value):
        return []
    if (
        isinstance(value, str)
        and len(value) <= limits.MAX_NAME_LENGTH
        and limits.NAME_PATTERN.match(value)
    ):
        return []
    suggestion = re.sub(r"[^a-zA-Z0-9-]+", "-", str(value)).strip("-")[: limits.MAX_NAME_LENGTH]
    fix = f"use e.g. {suggestion!r}" if suggestion else "use a name such as 'gpu'"
    return [Finding(rule, field, value, _NAME_ALLOWED, fix, group)]


def _counts(group: InstanceGroup) -> list[Finding]:
    found: list[Finding] = []
    name = group.name
    count, minimum = group.instance_count, group.min_instance_count
    count_known = not is_unresolved(count)
    if count_known and not _is_count(count):
        found.append(
            Finding("HP-COUNT-INT", "instance_count (InstanceCount)", count,
                    "a whole number (int)", "pass an int, e.g. 16", name)
        )
        count_known = False
    elif count_known and not 0 <= count <= limits.MAX_INSTANCE_COUNT:
        found.append(
            Finding("HP-COUNT-RANGE", "instance_count (InstanceCount)", count,
                    f"0..{limits.MAX_INSTANCE_COUNT}",
                    f"set instance_count between 0 and {limits.MAX_INSTANCE_COUNT}", name)
        )
        count_known = False
    if minimum is None or is_unresolved(minimum):
        return found
    if not _is_count(minimum):
        found.append(
            Finding("HP-COUNT-INT", "min_instance_count (MinInstanceCount)", minimum,
                    "a whole number (int)", "pass an int, e.g. 16", name)
        )
    elif minimum < 0 or minimum > limits.MAX_INSTANCE_COUNT:
        found.append(
            Finding("HP-MIN-RANGE", "min_instance_count (MinInstanceCount)", minimum,
                    f"0..{limits.MAX_INSTANCE_COUNT} and at most instance_count",
                    "set min_instance_count between 0 and instance_count", name)
        )
    elif count_known and minimum > count:
        found.append(
            Finding("HP-MIN-ABOVE-COUNT", "min_instance_count (MinInstanceCount)", minimum,
                    f"0..instance_count ({count})",
                    f"lower min_instance_count to at most {count}, or raise instance_count "
                    f"to at least {minimum}", name)
        )
    return found


def _partition(group: InstanceGroup) -> list[Finding]:
    name, partition = group.name, group.partition
    if group.node_type is NodeType.COMPUTE:
        if not partition:
            return [Finding("HP-PARTITION-REQUIRED", "partition (SlurmConfig.PartitionNames)",
                            partition, "exactly one partition name for a compute group",
                            "pass partition='gpu' (or another name)", name)]
        return check_name(partition, rule="HP-PARTITION-NAME",
                          field="partition (SlurmConfig.PartitionNames)", group=name)
    if partition is not None:
        role = group.node_type.value.lower()
        return [Finding("HP-PARTITION-FORBIDDEN", "partition (SlurmConfig.PartitionNames)",
                        partition, f"no partition on a {role} group",
                        "remove partition; only compute groups join partitions", name)]
    return []


def _threads(group: InstanceGroup) -> list[Finding]:
    value = group.threads_per_core
    if value is None or is_unresolved(value):
        return []
    if _is_count(value) and limits.MIN_THREADS_PER_CORE <= value <= limits.MAX_THREADS_PER_CORE:
        return []
    return [Finding("HP-THREADS", "threads_per_core (ThreadsPerCore)", value,
                    "1 (hyperthreading off) or 2 (on)", "set threads_per_core to 1 or 2",
                    group.name)]


def _health_checks(group: InstanceGroup) -> list[Finding]:
    checks = group.deep_health_checks
    field = "deep_health_checks (OnStartDeepHealthChecks)"
    found: list[Finding] = []
    known = {check.value for check in DeepHealthCheck}
    values = [getattr(check, "value", check) for check in checks]
    unknown = [value for value in values if value not in known]
    if unknown:
        found.append(Finding("HP-DHC-UNKNOWN", field, unknown, f"values of {sorted(known)}",
                             "use DeepHealthCheck.INSTANCE_STRESS / INSTANCE_CONNECTIVITY",
                             group.name))
    if len(set(values)) != len(values) or len(values) > limits.MAX_DEEP_HEALTH_CHECKS:
        found.append(Finding("HP-DHC-DISTINCT", field, values,
                             f"1..{limits.MAX_DEEP_HEALTH_CHECKS} distinct checks",
                             "list each check at most once", group.name))
    return found


def _pattern(
    value: str | None, pattern: re.Pattern[str], *, rule: str, field: str, allowed: str,
    fix: str, group: str,
) -> list[Finding]:
    if value is None or is_unresolved(value) or pattern.match(value):
        return []
    return [Finding(rule, field, value, allowed, fix, group)]


def _ebs(storage: InstanceStorage, group: str) -> list[Finding]:
    found: list[Finding] = []
    field = "storage[].volume_size (EbsVolumeConfig.VolumeSizeInGB)"
    size = storage.volume_size_gib()
    if size is not None and not is_unresolved(size):
        if not float(size).is_integer() or not limits.MIN_EBS_GIB <= size <= limits.MAX_EBS_GIB:
            found.append(Finding("HP-EBS-SIZE", field, f"{size:g} GiB",
                                 f"a whole number of GiB, {limits.MIN_EBS_GIB}..{limits.MAX_EBS_GIB}",
                                 "use Size.gibibytes(n) with n in range", group))
    found += _pattern(storage.kms_key_id, limits.KMS_KEY_ID, rule="HP-EBS-KMS",
                      field="storage[].kms_key_id (VolumeKmsKeyId)",
                      allowed="a KMS key id or ARN", fix="pass key.key_arn", group=group)
    return found


def _fsx(storage: InstanceStorage, group: str) -> list[Finding]:
    found = _pattern(storage.dns_name, limits.FSX_DNS_NAME, rule="HP-FSX-DNS",
                     field="storage[].dns_name (DnsName)",
                     allowed="an FSx DNS name like fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com",
                     fix="pass file_system.dns_name", group=group)
    if storage.kind == "fsx_lustre":
        found += _pattern(storage.mount_name, limits.FSX_MOUNT_NAME, rule="HP-FSX-MOUNT-NAME",
                          field="storage[].mount_name (MountName)",
                          allowed="1..8 letters, digits, '_' or '-'",
                          fix="pass file_system.mount_name", group=group)
    found += _pattern(storage.mount_path, limits.MOUNT_PATH, rule="HP-MOUNT-PATH",
                      field="storage[].mount_path (MountPath)",
                      allowed="an absolute path without a trailing '/', e.g. /fsx",
                      fix="use a path such as '/fsx'", group=group)
    return found


def _storage(group: InstanceGroup) -> list[Finding]:
    found: list[Finding] = []
    if len(group.storage) > limits.MAX_STORAGE_CONFIGS:
        found.append(Finding("HP-STORAGE-COUNT", "storage (InstanceStorageConfigs)",
                             f"{len(group.storage)} configs",
                             f"at most {limits.MAX_STORAGE_CONFIGS}",
                             "merge or drop storage configs", group.name))
    for storage in group.storage:
        found += _ebs(storage, group.name) if storage.kind == "ebs" else _fsx(storage, group.name)
    return found


def _identifiers(group: InstanceGroup) -> list[Finding]:
    found = _pattern(group.image_id, limits.IMAGE_ID, rule="HP-IMAGE-ID",
                     field="image_id (ImageId)", allowed="'ami-' and 8..17 hex digits, or 'default'",
                     fix="pass an AMI id such as ami-0123456789abcdef0", group=group.name)
    plan = group.training_plan_arn
    if plan is not None and not is_unresolved(plan) and (
        len(plan) < limits.MIN_TRAINING_PLAN_ARN_LENGTH or not limits.TRAINING_PLAN_ARN.match(plan)
    ):
        found.append(Finding("HP-TRAINING-PLAN", "training_plan_arn (TrainingPlanArn)", plan,
                             "arn:<partition>:sagemaker:<region>:<account>:training-plan/<name> "
                             f"(at least {limits.MIN_TRAINING_PLAN_ARN_LENGTH} characters)",
                             "pass the ARN shown by `aws sagemaker list-training-plans`",
                             group.name))
    itype = group.instance_type.name
    if not is_unresolved(itype) and not group.instance_type.is_well_formed:
        found.append(Finding("HP-INSTANCE-TYPE", "instance_type (InstanceType)", itype,
                             "an instance type such as ml.p5.48xlarge",
                             "use a HyperPodInstanceType constant or .of('ml.<family>.<size>')",
                             group.name))
    return found


def lifecycle_findings(scripts: LifecycleScripts | None, *, group: str | None) -> list[Finding]:
    """Problems with lifecycle scripts (given to a group, or to the whole cluster)."""
    if scripts is None:
        return []
    return [
        Finding("HP-LIFECYCLE", f"lifecycle_scripts.{field}" if "." not in field else field,
                value, allowed, "fix the lifecycle_scripts argument", group)
        for field, value, allowed in scripts.problems()
    ]


def _lifecycle(group: InstanceGroup) -> list[Finding]:
    return lifecycle_findings(group.lifecycle_scripts, group=group.name)


def _sizing(group: InstanceGroup) -> list[Finding]:
    return [
        Finding("HP-SIZING", "min_accelerators", group.min_accelerators, message,
                "give explicit instance_count and min_instance_count, or fix min_accelerators",
                group.name)
        for message in group.sizing_errors
    ]


def _warnings(group: InstanceGroup) -> list[Finding]:
    found: list[Finding] = []
    accelerated = group.instance_type.is_accelerated and group.node_type is NodeType.COMPUTE
    if accelerated and not group.deep_health_checks:
        found.append(Finding("HP-WARN-DHC", "deep_health_checks (OnStartDeepHealthChecks)", [],
                             "InstanceStress and InstanceConnectivity on accelerator groups",
                             "pass deep_health_checks=[DeepHealthCheck.INSTANCE_STRESS, "
                             "DeepHealthCheck.INSTANCE_CONNECTIVITY] so faulty GPUs are caught "
                             "before jobs land on them", group.name, "warning"))
    return found


GROUP_RULES: tuple[Callable[[InstanceGroup], list[Finding]], ...] = (
    _counts, _sizing, _partition, _threads, _health_checks, _storage, _identifiers, _lifecycle,
    _warnings,
)


def validate_group(group: InstanceGroup) -> list[Finding]:
    """Every finding (errors and warnings) for one instance group, in rule order."""
    found = check_name(group.name, rule="HP-NAME-GROUP", field="name (InstanceGroupName)",
                       group=group.name)
    for rule in GROUP_RULES:
        found += rule(group)
    return found
