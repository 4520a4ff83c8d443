"""Extra storage attached to every instance of a group (``InstanceStorageConfigs``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aws_cdk import Size, SizeRoundingBehavior

from ._cdk.tokens import read_once
from ._core.arguments import check, is_str, raise_if_any

if TYPE_CHECKING:  # annotations only: a cluster without FSx does not load the module
    from aws_cdk import aws_fsx as fsx


@dataclass(frozen=True, kw_only=True)
class InstanceStorage:
    """One storage configuration: an EBS volume, or an FSx for Lustre / OpenZFS mount.

    Create it with :meth:`ebs`, :meth:`fsx_lustre` or :meth:`fsx_open_zfs`. At most four per
    instance group. Values are checked when the group is added to a cluster.

    Example:

    ```python
    storage = [
        InstanceStorage.ebs(volume_size=Size.gibibytes(500)),  # at /opt/sagemaker
        InstanceStorage.fsx_lustre(
            dns_name="fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com", mount_name="abcdefgh"
        ),
    ]  # InstanceGroup.compute(..., storage=storage)
    ```
    """

    kind: str
    """``"ebs"``, ``"fsx_lustre"`` or ``"fsx_open_zfs"``."""
    volume_size: Size | None = None
    """EBS: ``VolumeSizeInGB``, a whole number of GiB, 1..16384. Default: none (FSx)."""
    root_volume: bool | None = None
    """EBS: ``RootVolume``, apply the size and key to the root volume instead. Default: no."""
    kms_key_id: str | None = None
    """EBS: ``VolumeKmsKeyId``, a customer managed KMS key id or ARN. Default: an AWS managed
    key."""
    dns_name: str | None = None
    """FSx: ``DnsName`` of the file system (``fs-0123….fsx.us-east-1.amazonaws.com``)."""
    mount_name: str | None = None
    """FSx for Lustre: ``MountName`` of the file system (8 characters, e.g. ``abcdefgh``)."""
    mount_path: str | None = None
    """FSx: ``MountPath`` on the instances, an absolute path. Default: HyperPod's default
    (``/fsx`` for Lustre, ``/home`` for OpenZFS)."""
    file_system: fsx.IFileSystem | None = field(default=None, compare=False)
    """The file system construct (defined in the app or imported), when built with
    :meth:`lustre_file_system`: the cluster opens its port range
    (``connections.allow_default_port_from``) to the nodes. Default: none (:meth:`fsx_lustre`:
    the ports are yours to open, ``HP-FSX-PORTS`` says which)."""

    @classmethod
    def ebs(
        cls,
        *,
        volume_size: Size | None = None,
        root_volume: bool | None = None,
        kms_key_id: str | None = None,
    ) -> InstanceStorage:
        """An extra EBS volume per instance (1..16384 GiB), mounted at ``/opt/sagemaker``; or,
        with ``root_volume=True``, the customer managed KMS key of each instance's root volume.

        The API reference (``ClusterEbsVolumeConfig.RootVolume``): with ``RootVolume`` true the
        configuration applies to the root volume, ``VolumeSizeInGB`` cannot be given (HyperPod
        sizes the root volume) and ``VolumeKmsKeyId`` is required; otherwise ``VolumeSizeInGB``
        is required and the key optional. Checked when the group is added to a cluster
        (``HP-EBS-SIZE``, ``HP-EBS-ROOT-VOLUME``).

        :param volume_size: size of the extra volume, a whole number of GiB; required unless
            ``root_volume=True``, where it must be left out. Default: none.
        :param root_volume: configure the root volume's encryption key instead of an extra
            volume. Default: no (an extra volume).
        :param kms_key_id: customer managed KMS key id or ARN; required with
            ``root_volume=True``. Default: an AWS owned key.
        """
        return cls(
            kind="ebs", volume_size=volume_size, root_volume=root_volume, kms_key_id=kms_key_id
        )

    @classmethod
    def fsx_lustre(
        cls, *, dns_name: str, mount_name: str, mount_path: str | None = None
    ) -> InstanceStorage:
        """Mount an FSx for Lustre file system by its DNS and mount names. Needs a VPC on the
        cluster. The library cannot open the file system's Lustre ports to the nodes (it has
        no security group of it): a warning (``HP-FSX-PORTS``) says which to open. Prefer
        :meth:`lustre_file_system`, which opens them, also for an existing file system.

        :param mount_path: where to mount it. Default: HyperPod's default (``/fsx``).
        """
        return cls(
            kind="fsx_lustre", dns_name=dns_name, mount_name=mount_name, mount_path=mount_path
        )

    @classmethod
    def lustre_file_system(
        cls,
        file_system: fsx.IFileSystem,
        *,
        mount_name: str | None = None,
        mount_path: str | None = None,
    ) -> InstanceStorage:
        """Mount an FSx for Lustre file system defined in the app or imported into it
        (``fsx.LustreFileSystem.from_lustre_file_system_attributes``): its DNS name (and,
        for one the app defines, its mount name) are read from it, and the cluster opens the
        file system's Lustre port range (``TCP 988-1023``) to its security groups when the
        group is added, the same for both. An imported security group that is immutable
        (``mutable=False``) takes no rule: a warning (``HP-FSX-PORTS``) then says what to
        open. Needs a network on the cluster.

        ```python
        from aws_cdk import aws_fsx as fsx

        shared = fsx.LustreFileSystem.from_lustre_file_system_attributes(
            stack, "Shared", dns_name="fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com",
            file_system_id="fs-0123456789abcdef0",
            security_group=ec2.SecurityGroup.from_security_group_id(stack, "FsxSg", "sg-0123"),
        )
        InstanceStorage.lustre_file_system(shared, mount_name="abcdefgh")
        ```

        :param mount_name: the file system's ``MountName``; required for an imported file
            system (its attributes carry none). Default: the file system's own.
        :param mount_path: where to mount it. Default: HyperPod's default (``/fsx``).
        :raises HyperPodArgumentError: ``file_system`` is not a file system construct, or an
            imported one comes without ``mount_name``.
        """
        # aws-cdk-lib types an imported file system as fsx.IFileSystem, which declares
        # neither name: both are read from the object.
        own = getattr(file_system, "mount_name", None)
        dns_name = getattr(file_system, "dns_name", None)
        raise_if_any(
            "InstanceStorage.lustre_file_system",
            [
                *check(
                    "file_system",
                    file_system,
                    lambda v: all(hasattr(v, a) for a in ("dns_name", "connections")),
                    "an fsx.LustreFileSystem, or one from "
                    "fsx.LustreFileSystem.from_lustre_file_system_attributes(...)",
                ),
                *check(
                    "mount_name",
                    mount_name if mount_name is not None else own,
                    is_str,
                    "the file system's mount name (a str): an imported file system has none",
                    fix="pass mount_name='abcdefgh' (the file system's MountName)",
                ),
            ],
        )
        return cls(
            kind="fsx_lustre",
            dns_name=dns_name,
            mount_name=mount_name if mount_name is not None else own,
            mount_path=mount_path,
            file_system=file_system,
        )

    @classmethod
    def fsx_open_zfs(cls, *, dns_name: str, mount_path: str | None = None) -> InstanceStorage:
        """Mount an FSx for OpenZFS file system. Needs a VPC on the cluster."""
        return cls(kind="fsx_open_zfs", dns_name=dns_name, mount_path=mount_path)

    @property
    def is_fsx(self) -> bool:
        """Whether this mounts an FSx file system (which needs a VPC)."""
        return self.kind != "ebs"

    def volume_size_gib(self) -> float | None:
        """The EBS size in GiB (may be fractional if the Size was not whole GiB)."""
        if self.volume_size is None:
            return None
        size = self.volume_size
        # Once per Size (immutable): the template and the checks read it several times.
        return float(
            read_once(size, "GiB", lambda: size.to_gibibytes(rounding=SizeRoundingBehavior.NONE))
        )

    def render(self) -> dict[str, Any]:
        """The CloudFormation ``ClusterInstanceStorageConfig`` object."""
        if self.kind == "ebs":
            size = self.volume_size_gib()
            ebs: dict[str, Any] = {}
            if size is not None:
                ebs["VolumeSizeInGB"] = int(size)
            if self.root_volume is not None:
                ebs["RootVolume"] = self.root_volume
            if self.kms_key_id is not None:
                ebs["VolumeKmsKeyId"] = self.kms_key_id
            return {"EbsVolumeConfig": ebs}
        body: dict[str, Any] = {"DnsName": self.dns_name}
        if self.kind == "fsx_lustre":
            body["MountName"] = self.mount_name
        if self.mount_path is not None:
            body["MountPath"] = self.mount_path
        key = "FsxLustreConfig" if self.kind == "fsx_lustre" else "FsxOpenZfsConfig"
        return {key: body}
