"""What a platform team bakes into its cluster blueprints."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from aws_cdk import Size

from .._core.expect import require
from ..enums import DeepHealthCheck
from ..gate.options import MinCountGateOptions
from ..instance_type import HyperPodInstanceType
from ..policy import HyperPodPolicy, PolicySeverity


@dataclass(frozen=True, kw_only=True)
class BlueprintDefaults:
    """A platform team's settings for every cluster built from its blueprints.

    Publish them by subclassing a blueprint and setting its ``DEFAULTS`` class attribute::

        ACME = BlueprintDefaults(name="acme-ml", tags={"org": "acme"}, required_tags=("team",))

        class AcmeFsdpCluster(FsdpTrainingCluster):
            DEFAULTS = ACME

    The same values drive :meth:`policy`, which the blueprint applies to its own cluster, so
    what the blueprint builds and what the organisation allows cannot drift apart.
    """

    name: str = "platform blueprint"
    """Policy name shown in every policy message. Default: ``"platform blueprint"``."""
    controller_instance_type: HyperPodInstanceType = field(
        default_factory=lambda: HyperPodInstanceType.ML_M5_2XLARGE
    )
    """Slurm controller. Default: ``ml.m5.2xlarge``."""
    login_instance_type: HyperPodInstanceType | None = field(
        default_factory=lambda: HyperPodInstanceType.ML_M5_XLARGE
    )
    """Login node; ``None`` for no login group. Default: ``ml.m5.xlarge``."""
    compute_instance_types: tuple[HyperPodInstanceType, ...] = field(
        default_factory=lambda: (
            HyperPodInstanceType.ML_P5_48XLARGE,
            HyperPodInstanceType.ML_P5EN_48XLARGE,
        )
    )
    """The accelerator types ML teams may pick; the first is the default. Default:
    ``ml.p5.48xlarge``, ``ml.p5en.48xlarge``."""
    deep_health_checks: tuple[DeepHealthCheck, ...] = (
        DeepHealthCheck.INSTANCE_STRESS,
        DeepHealthCheck.INSTANCE_CONNECTIVITY,
    )
    """On-start deep health checks of the compute group (and required by the policy).
    Default: both."""
    threads_per_core: int | None = 1
    """Compute group ``ThreadsPerCore``. Default: 1 (hyper-threading off, the usual choice
    for NCCL / EFA training). ``None`` leaves HyperPod's default."""
    compute_volume_size: Size = field(default_factory=lambda: Size.gibibytes(500))
    """Secondary EBS volume (``/opt/sagemaker``) per compute instance. Default: 500 GiB."""
    head_volume_size: Size = field(default_factory=lambda: Size.gibibytes(100))
    """Secondary EBS volume per controller / login instance. Default: 100 GiB."""
    encrypt_volumes: bool = True
    """Create a customer managed KMS key (rotation on) for the EBS volumes and require one in
    the policy. Default: True."""
    tags: Mapping[str, str] = field(default_factory=dict)
    """Tags every cluster gets; ML teams cannot override them. Default: none."""
    required_tags: tuple[str, ...] = ()
    """Tag keys the ML team must supply (checked by the policy, so ``Tags.of(app)`` counts).
    Default: none."""
    max_instance_count: int | None = None
    """Largest ``instance_count`` of a group. Default: no limit."""
    max_spare_instances: int | None = None
    """Largest number of spare instances above the gated minimum. Default: no limit."""
    min_instance_fraction: float | None = None
    """Policy floor: ``min_instance_count >= fraction x instance_count`` on the compute group.
    Default: off (the blueprint always gates at the job's node count)."""
    severity: PolicySeverity = PolicySeverity.ERROR
    """Severity of every rule of :meth:`policy`. Default: ERROR (synth fails)."""
    severities: Mapping[str, PolicySeverity] = field(default_factory=dict)
    """Per-rule severity overrides (rule id -> severity). Default: none."""
    gate: MinCountGateOptions | None = None
    """Readiness gate options. Default: the gate's own defaults (on)."""

    def __post_init__(self) -> None:
        require("BlueprintDefaults", "tags", self.tags, Mapping)
        require("BlueprintDefaults", "required_tags", self.required_tags, (tuple, list))
        require(
            "BlueprintDefaults",
            "compute_instance_types",
            self.compute_instance_types,
            (tuple, list),
        )
        if not self.compute_instance_types:
            raise ValueError("BlueprintDefaults.compute_instance_types must not be empty")
        overlap = sorted(set(self.required_tags) & set(self.tags))
        if overlap:
            raise ValueError(
                f"BlueprintDefaults: {', '.join(overlap)} are set in tags and required from "
                "ML teams; keep each key in one of the two"
            )

    def allowed_instance_types(self) -> tuple[HyperPodInstanceType, ...]:
        """Controller, login and compute types: what the policy allows."""
        head = [self.controller_instance_type]
        if self.login_instance_type is not None:
            head.append(self.login_instance_type)
        return tuple(dict.fromkeys([*head, *self.compute_instance_types]))

    def policy(self) -> HyperPodPolicy:
        """The organisation policy these defaults imply: allowed types, deep health checks,
        required tags, a VPC, customer managed keys (when ``encrypt_volumes``), and the
        optional limits. Apply it to a whole app to hold hand-built clusters to the same
        rules: ``Aspects.of(app).add(DEFAULTS.policy())``."""
        return HyperPodPolicy(
            name=self.name,
            allowed_instance_types=self.allowed_instance_types(),
            max_instance_count=self.max_instance_count,
            min_instance_fraction=self.min_instance_fraction,
            required_deep_health_checks=self.deep_health_checks or False,
            required_tags=self.required_tags or None,
            require_customer_managed_key=self.encrypt_volumes,
            require_vpc=True,
            severity=self.severity,
            severities=self.severities,
        )
