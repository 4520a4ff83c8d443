"""The instance groups the tests build: one builder for the controller, login and compute
groups (:class:`Groups`), and the controller of the simulated HyperPod (:func:`controller_spec`).

Each test module states its defaults once (``GROUPS = Groups(compute_type=CPU, ...)``) and
takes ``controller`` / ``compute`` from it; a call overrides any prop of the group.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hyperpod_constructs import DeepHealthCheck, HyperPodInstanceType, InstanceGroup

if TYPE_CHECKING:  # the simulator imports boto3: only the gate's tests need it
    from tests.support.hyperpod_sim import GroupSpec

CPU = HyperPodInstanceType.ML_C5_XLARGE
GPU = HyperPodInstanceType.ML_P5_48XLARGE
BOTH_CHECKS = (DeepHealthCheck.INSTANCE_STRESS, DeepHealthCheck.INSTANCE_CONNECTIVITY)
_UNSET: Any = object()
"""A prop the call does not give (``None`` is a value a test may pass)."""


@dataclass(frozen=True)
class Groups:
    """A test module's instance groups: the instance types and a compute group's defaults."""

    controller_type: HyperPodInstanceType = CPU
    """The controller's (and a login group's) instance type."""
    compute_type: HyperPodInstanceType = GPU
    instance_count: int = 4
    """A compute group's ``instance_count`` unless the call gives one."""
    partition: str | None = "gpu"
    """A compute group's partition; None: the group's own name."""
    deep_health_checks: tuple[DeepHealthCheck, ...] = BOTH_CHECKS
    """A compute group's checks; empty: none given (a CPU group takes none)."""

    def controller(self, name: str = "controller", **props: Any) -> InstanceGroup:
        return InstanceGroup.controller(name, instance_type=self.controller_type, **props)

    def login(self, name: str = "login", **props: Any) -> InstanceGroup:
        return InstanceGroup.login(name, instance_type=self.controller_type, **props)

    def compute(
        self,
        name: str = "gpu",
        instance_count: Any = _UNSET,
        min_instance_count: Any = _UNSET,
        **props: Any,
    ) -> InstanceGroup:
        """A compute group: ``compute("gpu", 4, 2)`` is 4 instances, 2 of them gated; a prop
        given (``instance_count=None`` too) is passed as given."""
        values: dict[str, Any] = {
            "instance_type": self.compute_type,
            "instance_count": self.instance_count if instance_count is _UNSET else instance_count,
            "partition": name if self.partition is None else self.partition,
        }
        if min_instance_count is not _UNSET:
            values["min_instance_count"] = min_instance_count
        if self.deep_health_checks:
            values["deep_health_checks"] = self.deep_health_checks
        values.update(props)
        return InstanceGroup.compute(name, **values)


def controller_spec(instance_type: str = "ml.m5.12xlarge") -> GroupSpec:
    """The controller group of a simulated cluster (one instance)."""
    from tests.support.hyperpod_sim import GroupSpec

    return GroupSpec("controller", 1, node_type="Controller", instance_type=instance_type)
