"""Storage of a group (``InstanceStorageConfigs``): EBS volumes and FSx mounts. Pure: a group
in, findings out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_cdk import Size, SizeRoundingBehavior

from .._cdk.tokens import read_once
from .._core import limits
from .._core.arguments import (
    TOKEN,
    argument_finding,
    check,
    is_bool,
    pattern_findings,
)
from .._core.finding import Finding
from .._core.rule import E, Rule, Scope, Source, W, reports

if TYPE_CHECKING:
    from ..instance_group import InstanceGroup
    from ..storage import InstanceStorage

STORAGE_COUNT = Rule(
    "HP-STORAGE-COUNT",
    E,
    Scope.GROUP,
    "`storage` / `InstanceStorageConfigs`",
    "0..4 configs",
    source=Source.api("ClusterInstanceGroupSpecification.InstanceStorageConfigs", "0..4 items"),
)

EBS_SIZE = Rule(
    "HP-EBS-SIZE",
    E,
    Scope.GROUP,
    "`storage[].volume_size` / `EbsVolumeConfig.VolumeSizeInGB`",
    "required (unless `root_volume=True`); a whole number of GiB, 1..16384; a token only as "
    "`Size.gibibytes(token)`",
    source=Source.api(
        "ClusterEbsVolumeConfig.VolumeSizeInGB", "1..16384; required unless RootVolume is true"
    ),
)

EBS_ROOT_VOLUME = Rule(
    "HP-EBS-ROOT-VOLUME",
    E,
    Scope.GROUP,
    "`storage[].root_volume` / `EbsVolumeConfig.RootVolume`",
    "with `root_volume=True`: no `volume_size` (HyperPod sizes the root volume) and a `kms_key_id`",
    source=Source.api(
        "ClusterEbsVolumeConfig.RootVolume",
        "when true, VolumeSizeInGB cannot be given (HyperPod sizes the root volume) and "
        "VolumeKmsKeyId must be",
    ),
)

EBS_KMS = Rule(
    "HP-EBS-KMS",
    E,
    Scope.GROUP,
    "`storage[].kms_key_id` / `EbsVolumeConfig.VolumeKmsKeyId`",
    "up to 2048 of `[a-zA-Z0-9:/_-]`",
    source=Source.api(
        "ClusterEbsVolumeConfig.VolumeKmsKeyId", "0..2048 characters, pattern [a-zA-Z0-9:/_-]*"
    ),
)

FSX_DNS = Rule(
    "HP-FSX-DNS",
    E,
    Scope.GROUP,
    "`storage[].dns_name` / `Fsx*Config.DnsName`",
    "`fs-`/`fc-`/`fsi-`/`fci-`, 8 or more hex digits, a dot and 4..253 characters",
    source=Source.schema(
        "ClusterFsxLustreConfig.DnsName / ClusterFsxOpenZfsConfig.DnsName",
        "pattern ^((fs|fc)i?-[0-9a-f]{8,}\\..{4,253})$",
    ),
)

FSX_MOUNT_NAME = Rule(
    "HP-FSX-MOUNT-NAME",
    E,
    Scope.GROUP,
    "`storage[].mount_name` / `FsxLustreConfig.MountName`",
    "1..8 of `[A-Za-z0-9_-]` (required)",
    source=Source.api("ClusterFsxLustreConfig.MountName", "required, 1..8 of [A-Za-z0-9_-]"),
)

MOUNT_PATH = Rule(
    "HP-MOUNT-PATH",
    E,
    Scope.GROUP,
    "`storage[].mount_path` / `Fsx*Config.MountPath`",
    "absolute, no `//`, no trailing `/`, `[a-zA-Z0-9._-]` segments, no `.`/`..` segments, up to "
    "1024 characters",
    source=Source.schema(
        "ClusterFsxLustreConfig.MountPath / ClusterFsxOpenZfsConfig.MountPath",
        "absolute, no //, no trailing /, up to 1024 characters (the API's pattern is looser)",
    ),
)

LUSTRE_PORTS = "TCP 988-1023"
"""The ports an FSx for Lustre file system's security group opens to its clients: the range
aws-cdk-lib's ``LustreFileSystem`` (owned or imported) opens with
``connections.allow_default_port_from``, which covers AWS's 988 and 1018-1023."""

FSX_PORTS = Rule(
    "HP-FSX-PORTS",
    W,
    Scope.GROUP,
    "`storage[]` / `FsxLustreConfig`",
    f"the file system's security group lets the nodes in ({LUSTRE_PORTS} from the cluster's "
    "security groups): opened by the library for `InstanceStorage.lustre_file_system(...)`, "
    "yours to open otherwise",
    source=Source(
        "https://docs.aws.amazon.com/fsx/latest/LustreGuide/limit-access-security-groups.html",
        "Lustre clients need inbound TCP 988 and 1018-1023 from their security groups",
    ),
)

RULES = (
    STORAGE_COUNT,
    EBS_SIZE,
    EBS_ROOT_VOLUME,
    EBS_KMS,
    FSX_DNS,
    FSX_MOUNT_NAME,
    MOUNT_PATH,
    FSX_PORTS,
)
"""This family's rules, in documentation order."""


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
    if storage.root_volume is True:
        found += _root_volume(storage, group)
    elif volume is None:
        found.append(
            EBS_SIZE.finding(
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
    elif read_once(volume, "unresolved", volume.is_unresolved):
        try:
            storage.volume_size_gib()
        except RuntimeError:  # jsii: a token amount cannot be converted between units
            found.append(
                EBS_SIZE.finding(
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
                EBS_SIZE.finding(
                    value=_gib(size),
                    allowed=allowed,
                    fix="use Size.gibibytes(n) with a whole n in range",
                    group=group,
                )
            )
    found += pattern_findings(
        storage.kms_key_id,
        limits.KMS_KEY_ID,
        rule=EBS_KMS,
        allowed=f"a KMS key id or ARN (up to {limits.MAX_KMS_KEY_ID_LENGTH} letters, digits, "
        "':', '/', '_' or '-')",
        fix="pass key.key_arn",
        group=group,
        max_length=limits.MAX_KMS_KEY_ID_LENGTH,
    )
    return found


def _root_volume(storage: InstanceStorage, group: str) -> list[Finding]:
    """``RootVolume`` true: the API reference forbids ``VolumeSizeInGB`` and requires
    ``VolumeKmsKeyId``."""
    found: list[Finding] = []
    volume = storage.volume_size
    if volume is not None:
        concrete = isinstance(volume, Size) and not volume.is_unresolved()
        found.append(
            EBS_ROOT_VOLUME.finding(
                field="storage[].volume_size (EbsVolumeConfig.VolumeSizeInGB)",
                value=_gib(float(volume.to_gibibytes(rounding=SizeRoundingBehavior.NONE)))
                if concrete
                else (TOKEN if isinstance(volume, Size) else volume),
                allowed="no size with root_volume=True (HyperPod sizes the root volume)",
                fix="drop volume_size, or add a second InstanceStorage.ebs(volume_size=...) for "
                "an extra volume",
                group=group,
            )
        )
    if storage.kms_key_id is None:
        found.append(
            EBS_ROOT_VOLUME.finding(
                field="storage[].kms_key_id (EbsVolumeConfig.VolumeKmsKeyId)",
                value=None,
                allowed="a customer managed KMS key with root_volume=True (the root volume's "
                "configuration only sets its key)",
                fix="pass kms_key_id=key.key_arn, or drop root_volume",
                group=group,
            )
        )
    return found


def unopened_lustre_ports(group: str, dns_name: object, why: str) -> Finding:
    """An ``HP-FSX-PORTS`` warning: the library could not open the Lustre ports of the file
    system at ``dns_name`` to the nodes (``why``)."""
    return FSX_PORTS.finding(
        field="storage[] (FsxLustreConfig)",
        value=dns_name,
        allowed=f"{LUSTRE_PORTS} open to the cluster's security groups (not opened by the "
        f"library: {why})",
        fix=f"open {LUSTRE_PORTS} on the file system's security group to the cluster's "
        "security groups, or mount it with InstanceStorage.lustre_file_system(file_system) "
        "(LustreFileSystem.from_lustre_file_system_attributes for an existing one) and a "
        "mutable security group; acknowledge the warning once the ports are open",
        group=group,
    )


def _fsx(storage: InstanceStorage, group: str) -> list[Finding]:
    key = "FsxLustreConfig" if storage.kind == "fsx_lustre" else "FsxOpenZfsConfig"
    found = pattern_findings(
        storage.dns_name,
        limits.FSX_DNS_NAME,
        rule=FSX_DNS,
        field=f"storage[].dns_name ({key}.DnsName)",
        allowed="an FSx DNS name like fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com "
        f"(16..{limits.MAX_FSX_DNS_NAME_LENGTH} characters)",
        fix="pass file_system.dns_name",
        group=group,
        max_length=limits.MAX_FSX_DNS_NAME_LENGTH,
        required=True,
    )
    if storage.kind == "fsx_lustre" and storage.file_system is None:
        found.append(unopened_lustre_ports(group, storage.dns_name, "no file system construct"))
    if storage.kind == "fsx_lustre":
        found += pattern_findings(
            storage.mount_name,
            limits.FSX_MOUNT_NAME,
            rule=FSX_MOUNT_NAME,
            allowed="1..8 letters, digits, '_' or '-'",
            fix="pass file_system.mount_name",
            group=group,
            required=True,
        )
    found += pattern_findings(
        storage.mount_path,
        limits.MOUNT_PATH,
        rule=MOUNT_PATH,
        field=f"storage[].mount_path ({key}.MountPath)",
        allowed="an absolute path without '//' or a trailing '/', e.g. /fsx "
        f"(letters, digits, '.', '_', '-'; up to {limits.MAX_MOUNT_PATH_LENGTH} characters)",
        fix="use a path such as '/fsx'",
        group=group,
        max_length=limits.MAX_MOUNT_PATH_LENGTH,
    )
    return found


@reports(*RULES)
def storage_configs(group: InstanceGroup) -> list[Finding]:
    """At most four storage configs, each with valid EBS or FSx values."""
    found: list[Finding] = []
    if len(group.storage) > limits.MAX_STORAGE_CONFIGS:
        found.append(
            STORAGE_COUNT.finding(
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
