"""Sizing instance groups from the accelerators a training job needs."""

from __future__ import annotations

import math

from .instance_type import HyperPodInstanceType


class SizingError(ValueError):
    """A world size or parallelism layout that does not fit the instance type."""


def instances_for_accelerators(instance_type: HyperPodInstanceType, accelerators: int) -> int:
    """The fewest instances of ``instance_type`` that provide ``accelerators`` accelerators.

    ``ceil(accelerators / accelerators per instance)``. Raises :class:`SizingError` when the
    library does not know the type's accelerator count or ``accelerators`` is not positive.
    """
    if isinstance(accelerators, bool) or not isinstance(accelerators, int) or accelerators < 1:
        raise SizingError(
            f"min_accelerators={accelerators!r} must be a positive whole number of accelerators"
        )
    per_instance = instance_type.accelerator_count
    if per_instance is None:
        raise SizingError(
            f"min_accelerators: the library does not know how many accelerators an "
            f"{instance_type.name} has; give min_instance_count and instance_count instead"
        )
    return math.ceil(accelerators / per_instance)
