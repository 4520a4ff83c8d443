"""Sizing instance groups from the accelerators a training job needs.

Pure functions and small frozen dataclasses: no constructs, no jsii calls. The accelerator
counts come from ``ACCELERATORS_PER_INSTANCE`` in ``instance_type.py``, exposed as
:attr:`HyperPodInstanceType.accelerator_count`.

- :func:`instances_for_accelerators`: ``ceil(accelerators / accelerators per instance)``.
- :func:`sizing_type`: the type a flexible group (several types) is sized by.
- :class:`FsdpLayout` (or :func:`fsdp_world_size`): PyTorch FSDP / HSDP, world size =
  data-parallel size.
- :class:`MegatronLayout`: Megatron-LM / NeMo, world size = TP x CP x PP x DP.

A layout's ``nodes_for`` gives the whole number of instances the job fills; when the numbers
do not fit the instance type, :class:`SizingError` names the number that does not fit and the
nearest valid choices.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ._core import limits
from .instance_type import ACCELERATORS_PER_INSTANCE, HyperPodInstanceType

if TYPE_CHECKING:
    from constructs import IConstruct

__all__ = [
    "FsdpLayout",
    "MegatronLayout",
    "ParallelLayout",
    "SizingError",
    "SizingProblem",
    "accelerator_count_of",
    "fsdp_world_size",
    "instances_for_accelerators",
]


@dataclass(frozen=True)
class SizingProblem:
    """One number that does not fit, and the nearest values that would."""

    field: str
    """The parameter that does not fit, e.g. ``tensor_parallel``."""
    value: int
    """The value given."""
    reason: str
    """Why it does not fit, e.g. ``does not divide the 8 accelerators per instance``."""
    allowed: str
    """What would fit, e.g. ``a divisor of 8 (the accelerators per instance)``."""
    nearest: tuple[int, ...] = ()
    """The nearest valid values of ``field``, ascending (empty when there is none)."""
    hint: str = ""
    """Extra advice, e.g. what each nearest value means in instances."""

    def message(self) -> str:
        """One line: ``field=value reason; nearest valid field: a or b (hint)``."""
        text = f"{self.field}={self.value} {self.reason}"
        if self.nearest:
            choices = " or ".join(str(value) for value in self.nearest)
            text += f"; nearest valid {self.field}: {choices}"
        if self.hint:
            text += f" ({self.hint})"
        return text


class SizingError(ValueError):
    """A world size or parallelism layout that does not fit the instance type.

    ``problems`` holds one :class:`SizingProblem` per number that does not fit (it may be
    empty for errors that are not about one number, such as an unknown accelerator count).

    :param message: the error's message, one line.
    :param problems: one :class:`SizingProblem` per number that does not fit. Default: none.
    """

    def __init__(self, message: str, problems: Sequence[SizingProblem] = ()) -> None:
        super().__init__(message)
        self.problems = tuple(problems)


def _check_scope(scope: object) -> None:
    """Refuse a ``scope`` that is not a construct (a path given as text, a number), before it
    is needed to name where an error happened."""
    if scope is None or isinstance(getattr(getattr(scope, "node", None), "path", None), str):
        return
    raise SizingError(
        f"scope={scope!r} ({type(scope).__name__}) is not a construct; pass the construct the "
        "layout sizes (a cluster, a stack), or leave it out"
    )


def _at(scope: IConstruct | None, error: SizingError) -> SizingError:
    """``error`` with the construct path of ``scope`` first (``[Training/Cluster] ...``), as
    the library's other errors name where they happened; ``error`` itself without a scope."""
    if scope is None:
        return error
    return SizingError(f"[{scope.node.path}] {error}", error.problems)


_MAX_RANKS = (
    limits.MAX_INSTANCE_COUNT * limits.MAX_INSTANCE_GROUPS * max(ACCELERATORS_PER_INSTANCE.values())
)
"""The most ranks (accelerators) any number in a layout may be: every instance of the largest
cluster HyperPod allows (``MAX_INSTANCE_GROUPS`` groups of ``MAX_INSTANCE_COUNT``) with the
most accelerators a catalogued type has. A larger world size fits no HyperPod cluster."""


def _check_positive(field: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _MAX_RANKS:
        raise SizingError(
            f"{field}={value!r} must be a positive whole number, at most {_MAX_RANKS} (the "
            "accelerators of the largest HyperPod cluster)"
        )
    return value


def _check_type(value: object) -> HyperPodInstanceType:
    """``value`` when it is a :class:`HyperPodInstanceType`; else the error naming
    ``instance_type``, what was given and how to pass it (a name given as text included)."""
    if isinstance(value, HyperPodInstanceType):
        if isinstance(value.name, str):
            return value
        raise SizingError(
            f"instance_type={value!r}: the name is not a str; pass "
            "HyperPodInstanceType.of('ml.<family>.<size>'), e.g. HyperPodInstanceType.of("
            "'ml.p5.48xlarge')"
        )
    example = (
        f"HyperPodInstanceType.of({value!r})"
        if isinstance(value, str)
        else ("HyperPodInstanceType.ML_P5_48XLARGE")
    )
    raise SizingError(
        f"instance_type={value!r} ({type(value).__name__}) is not an instance type; "
        f"pass a HyperPodInstanceType, e.g. {example}"
    )


def instances_for_accelerators(instance_type: HyperPodInstanceType, accelerators: int) -> int:
    """The fewest instances of ``instance_type`` that provide ``accelerators`` accelerators.

    ``ceil(accelerators / accelerators per instance)``, in whole numbers (exact for any
    count: a group's instance count rules then report one HyperPod cannot hold, with the
    cluster's other findings). Raises :class:`SizingError` when ``instance_type`` is not a
    :class:`HyperPodInstanceType`, the library does not know the type's accelerator count or
    ``accelerators`` is not positive.

    :param instance_type: the instance type of the group.
    :param accelerators: the accelerators (GPUs, Trainium chips) the job needs, at least 1.
    """
    if isinstance(accelerators, bool) or not isinstance(accelerators, int) or accelerators < 1:
        raise SizingError(
            f"min_accelerators={accelerators!r} must be a positive whole number of accelerators"
        )
    per_instance = _check_type(instance_type).accelerator_count
    if per_instance is None:
        raise SizingError(
            f"min_accelerators: the library does not know how many accelerators an "
            f"{instance_type.name} has; give min_instance_count and instance_count instead"
        )
    return -(-accelerators // per_instance)


def sizing_type(instance_types: Sequence[object]) -> object:
    """The type a flexible group (``instance_types``, in priority order) is sized by: the one
    with the fewest accelerators per instance, so that ``MinInstanceCount`` instances provide
    the accelerators whichever of the types HyperPod launches. A type whose count the library
    does not know (or a value that is not a type) is returned instead: the group cannot be
    sized, and the caller reports that type.
    """
    known: list[HyperPodInstanceType] = []
    for value in instance_types:
        if not isinstance(value, HyperPodInstanceType) or value.accelerator_count is None:
            return value
        known.append(value)
    return min(known, key=lambda t: t.accelerator_count or 0)


def accelerator_count_of(
    instance_type: HyperPodInstanceType, *, accelerators_per_instance: int | None = None
) -> int:
    """The accelerators (ranks) per instance to size a job with.

    :param instance_type: the instance type of the group.
    :param accelerators_per_instance: an explicit count. Default: the library's count for the
        type (:attr:`HyperPodInstanceType.accelerator_count`). Required for types the library
        does not know; for a known type it may be smaller (fewer ranks per node than
        accelerators) but not larger.
    :raises SizingError: ``instance_type`` is not a :class:`HyperPodInstanceType`, the type's
        count is unknown and none was given, or the explicit count is not positive or exceeds
        what the type has.
    """
    known = _check_type(instance_type).accelerator_count
    if accelerators_per_instance is not None:
        given = _check_positive("accelerators_per_instance", accelerators_per_instance)
        if known is not None and given > known:
            raise SizingError(
                f"accelerators_per_instance={given} is more than the {known} accelerators of "
                f"an {instance_type.name}; use at most {known}"
            )
        return given
    if known is not None:
        return known
    family = (
        ""
        if instance_type.is_accelerated
        else " (it is not in a GPU or Trainium family: p, g, gr or trn)"
    )
    raise SizingError(
        f"the library does not know how many accelerators an {instance_type.name} has{family}; "
        "pass accelerators_per_instance=<GPUs or Trainium chips per instance>"
    )


def _divisors(number: int) -> list[int]:
    """The divisors of ``number`` (positive), ascending: trial division up to its square
    root, so a world size of millions costs thousands of steps, not millions."""
    small = [d for d in range(1, math.isqrt(number) + 1) if number % d == 0]
    large = [number // d for d in reversed(small) if d * d != number]
    return small + large


def _nearest_divisors(value: int, number: int) -> tuple[int, ...]:
    """The divisors of ``number`` closest to ``value`` (both, ascending, on a tie)."""
    divisors = _divisors(number)
    best = min(abs(d - value) for d in divisors)
    return tuple(d for d in divisors if abs(d - value) == best)


def _nearest_multiples(value: int, step: int) -> tuple[int, ...]:
    """The positive multiples of ``step`` just below and just above ``value`` (ascending)."""
    lower = (value // step) * step
    if lower == value:
        return (value,)
    return (lower, lower + step) if lower > 0 else (lower + step,)


def _instances_hint(worlds: Sequence[int], per_instance: int) -> str:
    parts = []
    for world in worlds:
        count = world // per_instance
        parts.append(f"{world} = {count} instance{'s' if count != 1 else ''}")
    return ", ".join(parts)


class _Layout:
    """``validate_for`` and ``nodes_for`` on top of a layout's ``problems_for``."""

    @property
    def world_size(self) -> int:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def problems_for(
        self, instance_type: HyperPodInstanceType, *, accelerators_per_instance: int | None = None
    ) -> tuple[SizingProblem, ...]:
        raise NotImplementedError

    def validate_for(
        self,
        instance_type: HyperPodInstanceType,
        *,
        accelerators_per_instance: int | None = None,
        scope: IConstruct | None = None,
    ) -> None:
        """Raise :class:`SizingError` naming every number that does not fit ``instance_type``
        and the nearest valid choices (see ``problems_for``).

        :param scope: the construct the layout sizes, named first in the error. Default: none.
        """
        _check_scope(scope)
        try:
            per = accelerator_count_of(
                instance_type, accelerators_per_instance=accelerators_per_instance
            )
        except SizingError as error:
            raise _at(scope, error) from None
        problems = self.problems_for(instance_type, accelerators_per_instance=per)
        if problems:
            lines = "; ".join(problem.message() for problem in problems)
            misfit = SizingError(
                f"{self.describe()} does not fit {instance_type.name} ({per} accelerators per "
                f"instance): {lines}",
                problems,
            )
            raise _at(scope, misfit)

    def nodes_for(
        self,
        instance_type: HyperPodInstanceType,
        *,
        accelerators_per_instance: int | None = None,
        scope: IConstruct | None = None,
    ) -> int:
        """Instances the job fills: ``world_size / accelerators per instance``.

        :param accelerators_per_instance: ranks per instance. Default: the type's accelerator
            count (required for types the library does not know).
        :param scope: the construct the layout sizes (a cluster, a stack), named first in the
            error (``[Training/Cluster] ...``). Default: none.
        :raises SizingError: the layout does not fit (see ``problems_for``).
        """
        self.validate_for(
            instance_type, accelerators_per_instance=accelerators_per_instance, scope=scope
        )
        return self.world_size // accelerator_count_of(
            instance_type, accelerators_per_instance=accelerators_per_instance
        )


@runtime_checkable
class ParallelLayout(Protocol):
    """What the blueprints need from a training topology (:class:`FsdpLayout`,
    :class:`MegatronLayout`, or your own)."""

    @property
    def world_size(self) -> int:
        """Ranks in the job: one per accelerator."""
        ...

    def nodes_for(
        self, instance_type: HyperPodInstanceType, *, accelerators_per_instance: int | None = None
    ) -> int:
        """Instances the job fills; raises :class:`SizingError` if it does not fit."""
        ...

    def describe(self) -> str:
        """A short description for messages and tags, e.g. ``FSDP dp=128``."""
        ...


@dataclass(frozen=True)
class FsdpLayout(_Layout):
    """A PyTorch FSDP job: every rank holds a shard; world size = ``data_parallel``.

    With hybrid sharding (HSDP), parameters are sharded within groups of
    ``shard_group_size`` ranks and replicated across ``data_parallel / shard_group_size``
    groups.

    :param data_parallel: ranks in the job (= accelerators). Positive.
    :param shard_group_size: HSDP shard group size; must divide ``data_parallel``.
        Default: ``None`` (full sharding across all ranks).
    :raises SizingError: a value is not positive, or ``shard_group_size`` does not divide
        ``data_parallel`` (the message names the nearest divisors).
    """

    data_parallel: int
    shard_group_size: int | None = None

    def __post_init__(self) -> None:
        _check_positive("data_parallel", self.data_parallel)
        if self.shard_group_size is not None:
            shard = _check_positive("shard_group_size", self.shard_group_size)
            if self.data_parallel % shard:
                problem = SizingProblem(
                    field="shard_group_size",
                    value=shard,
                    reason=f"does not divide data_parallel={self.data_parallel}",
                    allowed=f"a divisor of data_parallel={self.data_parallel}",
                    nearest=_nearest_divisors(shard, self.data_parallel),
                )
                raise SizingError(f"{self.describe()}: {problem.message()}", [problem])

    @property
    def world_size(self) -> int:
        """Ranks in the job: ``data_parallel``."""
        return self.data_parallel

    @property
    def replica_groups(self) -> int:
        """HSDP replica groups: ``data_parallel / shard_group_size`` (1 for plain FSDP)."""
        return self.data_parallel // (self.shard_group_size or self.data_parallel)

    def describe(self) -> str:
        """``FSDP dp=128`` or ``HSDP dp=128 shard=8``."""
        if self.shard_group_size is None:
            return f"FSDP dp={self.data_parallel}"
        return f"HSDP dp={self.data_parallel} shard={self.shard_group_size}"

    def problems_for(
        self, instance_type: HyperPodInstanceType, *, accelerators_per_instance: int | None = None
    ) -> tuple[SizingProblem, ...]:
        """What does not fit ``instance_type``; empty when the layout fits.

        Rules: every instance runs one rank per accelerator, so ``data_parallel`` must be a
        multiple of the accelerators per instance; an HSDP shard group must cover whole
        instances or divide one instance evenly (so no group straddles a node boundary).
        Raises :class:`SizingError` only when the accelerator count is unknown.
        """
        per = accelerator_count_of(
            instance_type, accelerators_per_instance=accelerators_per_instance
        )
        found: list[SizingProblem] = []
        shard = self.shard_group_size
        if self.data_parallel % per:
            step = math.lcm(per, shard or 1)
            nearest = _nearest_multiples(self.data_parallel, step)
            hint = _instances_hint(nearest, per)
            if self.data_parallel < per:
                hint += (
                    f"; or pass accelerators_per_instance={self.data_parallel} to run "
                    f"{self.data_parallel} ranks on one instance"
                )
            found.append(
                SizingProblem(
                    field="data_parallel",
                    value=self.data_parallel,
                    reason=f"is not a multiple of the {per} accelerators per instance "
                    "(every instance runs one rank per accelerator)",
                    allowed=f"a multiple of {step} (whole instances of {per} accelerators"
                    + (f", and of shard_group_size={shard})" if shard else ")"),
                    nearest=nearest,
                    hint=hint,
                )
            )
        if shard is not None and shard % per and per % shard:
            candidates = [d for d in _divisors(self.data_parallel) if d % per == 0 or per % d == 0]
            best = min(abs(d - shard) for d in candidates)
            found.append(
                SizingProblem(
                    field="shard_group_size",
                    value=shard,
                    reason=f"neither divides nor is a multiple of the {per} accelerators per "
                    "instance (a shard group would straddle an instance boundary)",
                    allowed=f"a divisor of data_parallel that divides {per} or is a multiple of it",
                    nearest=tuple(d for d in candidates if abs(d - shard) == best),
                )
            )
        return tuple(found)


def fsdp_world_size(data_parallel: int, *, shard_group_size: int | None = None) -> FsdpLayout:
    """The world size of an FSDP job is its data-parallel size: the layout, checked.

    ``fsdp_world_size(128).world_size == 128``; ``.nodes_for(ML_P5_48XLARGE) == 16``.

    :param data_parallel: the data-parallel size, which is the world size (ranks).
    :param shard_group_size: HSDP shard group size. Default: ``None`` (full sharding).
    """
    return FsdpLayout(data_parallel, shard_group_size)


@dataclass(frozen=True)
class MegatronLayout(_Layout):
    """A Megatron-LM / NeMo job: world size = TP x CP x PP x DP.

    :param tensor_parallel: TP size (``--tensor-model-parallel-size``). A tensor-parallel
        group exchanges activations every layer, so it must stay inside one instance: TP must
        divide the accelerators per instance.
    :param pipeline_parallel: PP size (``--pipeline-model-parallel-size``). Default: 1.
    :param data_parallel: DP size (derived by Megatron as world / (TP x CP x PP)). Default: 1.
    :param context_parallel: CP size (``--context-parallel-size``). Default: 1.
    :raises SizingError: a value is not a positive whole number, or the world size is more
        than the accelerators of the largest HyperPod cluster.
    """

    tensor_parallel: int
    pipeline_parallel: int = 1
    data_parallel: int = 1
    context_parallel: int = 1

    def __post_init__(self) -> None:
        for field in ("tensor_parallel", "pipeline_parallel", "data_parallel", "context_parallel"):
            _check_positive(field, getattr(self, field))
        if self.world_size > _MAX_RANKS:
            raise SizingError(
                f"{self.describe()}: world size {self.world_size} (TP x CP x PP x DP) is more "
                f"than {_MAX_RANKS}, the accelerators of the largest HyperPod cluster"
            )

    @classmethod
    def from_world_size(
        cls,
        world_size: int,
        *,
        tensor_parallel: int,
        pipeline_parallel: int = 1,
        context_parallel: int = 1,
        scope: IConstruct | None = None,
    ) -> MegatronLayout:
        """The layout Megatron derives: ``data_parallel = world_size / (TP x CP x PP)``.

        :param world_size: ranks in the job (= accelerators).
        :param tensor_parallel: TP, ranks that split each layer.
        :param pipeline_parallel: PP, pipeline stages. Default: 1.
        :param context_parallel: CP, ranks that split the sequence. Default: 1.
        :param scope: the construct the layout sizes (a cluster, a stack), named first in the
            error (``[Training/Cluster] ...``). Default: none.
        :raises SizingError: ``world_size`` is not divisible by TP x CP x PP; the message
            names the nearest world sizes that are.
        """
        _check_scope(scope)
        _check_positive("world_size", world_size)
        model = (
            _check_positive("tensor_parallel", tensor_parallel)
            * _check_positive("pipeline_parallel", pipeline_parallel)
            * _check_positive("context_parallel", context_parallel)
        )
        if world_size % model:
            problem = SizingProblem(
                field="world_size",
                value=world_size,
                reason=f"is not divisible by TP x CP x PP = {tensor_parallel} x "
                f"{context_parallel} x {pipeline_parallel} = {model}",
                allowed=f"a multiple of {model}",
                nearest=_nearest_multiples(world_size, model),
            )
            raise _at(scope, SizingError(f"Megatron layout: {problem.message()}", [problem]))
        return cls(tensor_parallel, pipeline_parallel, world_size // model, context_parallel)

    @property
    def model_parallel_size(self) -> int:
        """Ranks holding one model replica: TP x CP x PP."""
        return self.tensor_parallel * self.context_parallel * self.pipeline_parallel

    @property
    def world_size(self) -> int:
        """Ranks in the job: TP x CP x PP x DP."""
        return self.model_parallel_size * self.data_parallel

    def describe(self) -> str:
        """``Megatron tp=8 pp=4 dp=4`` (``cp=`` only when it is not 1)."""
        cp = f" cp={self.context_parallel}" if self.context_parallel != 1 else ""
        return (
            f"Megatron tp={self.tensor_parallel}{cp} pp={self.pipeline_parallel} "
            f"dp={self.data_parallel}"
        )

    def problems_for(
        self, instance_type: HyperPodInstanceType, *, accelerators_per_instance: int | None = None
    ) -> tuple[SizingProblem, ...]:
        """What does not fit ``instance_type``; empty when the layout fits.

        Rules: TP divides the accelerators per instance (nearest valid: the closest
        divisors); the world size fills whole instances (nearest valid: the closest
        ``data_parallel`` values whose world size is a multiple of the accelerators per
        instance). Raises :class:`SizingError` only when the accelerator count is unknown.
        """
        per = accelerator_count_of(
            instance_type, accelerators_per_instance=accelerators_per_instance
        )
        found: list[SizingProblem] = []
        if per % self.tensor_parallel:
            found.append(
                SizingProblem(
                    field="tensor_parallel",
                    value=self.tensor_parallel,
                    reason=f"does not divide the {per} accelerators per instance (a "
                    "tensor-parallel group must stay inside one instance)",
                    allowed=f"a divisor of {per} (the accelerators per instance)",
                    nearest=_nearest_divisors(self.tensor_parallel, per),
                )
            )
        if self.world_size % per:
            step = per // math.gcd(self.model_parallel_size, per)
            nearest = _nearest_multiples(self.data_parallel, step)
            worlds = [dp * self.model_parallel_size for dp in nearest]
            found.append(
                SizingProblem(
                    field="data_parallel",
                    value=self.data_parallel,
                    reason=f"gives world size {self.world_size} (TP x CP x PP x DP), which is not "
                    f"a multiple of the {per} accelerators per instance",
                    allowed=f"a multiple of {step} (so the world size fills whole instances)",
                    nearest=nearest,
                    hint="world size " + _instances_hint(worlds, per),
                )
            )
        return tuple(found)
