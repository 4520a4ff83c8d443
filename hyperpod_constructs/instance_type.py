"""Instance types HyperPod accepts: one catalogue of what each carries.

Each constant of :class:`HyperPodInstanceType` is one line of the catalogue: the API name,
its accelerators (GPUs or Trainium chips per instance, ``None`` when the library does not
know the count) or none for CPU-only types, and whether it supports EFA. Everything else
(``accelerator_count``, ``is_accelerated``, ``efa_capable``, :func:`known_names`,
``ACCELERATORS_PER_INSTANCE``) is derived from those lines, so a new type is one line.

Sources: the names are the values of ``ClusterInstanceType`` in the SageMaker API model that
botocore ships (a test compares them); the accelerator counts follow the EC2 instance type
specifications (the accelerated computing pages); EFA support follows the EC2 list of
EFA-supported instance types and the instance table of AWS's ``sagemaker-hyperpod-cli``.
Uncertain entries say so in a comment: ``ml.g7`` launched with only its 2x..8xlarge (1 GPU)
and 48xlarge (8 GPUs) sizes documented, so 12xlarge and 24xlarge have an unknown count;
their EFA support follows the ``ml.g7e`` sizes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ._core import limits

AcceleratorKind = Literal["gpu", "trainium"]


@dataclass(frozen=True)
class _Entry:
    """One catalogue line: the facts of one instance type."""

    name: str
    kind: AcceleratorKind | None
    """``None`` for CPU-only types."""
    accelerators: int | None
    """Per instance; ``None`` for CPU-only types or an accelerated type of unknown count."""
    efa: bool

    def __get__(self, instance: object, owner: type | None = None) -> HyperPodInstanceType:
        # For type checkers: ``HyperPodInstanceType.ML_P5_48XLARGE`` is a HyperPodInstanceType.
        # At run time the entries are replaced by instances once the class exists (below).
        return HyperPodInstanceType(self.name)


def _cpu(name: str, *, efa: bool = False) -> _Entry:
    return _Entry(name, None, None, efa)


def _gpu(name: str, count: int | None, *, efa: bool = False) -> _Entry:
    return _Entry(name, "gpu", count, efa)


def _trainium(name: str, count: int, *, efa: bool = False) -> _Entry:
    return _Entry(name, "trainium", count, efa)


class HyperPodInstanceType:
    """An EC2 instance type for a HyperPod instance group (enum-like, open set).

    Use a constant such as ``HyperPodInstanceType.ML_P5_48XLARGE`` for the types the
    SageMaker API model lists today, or ``HyperPodInstanceType.of("ml.x.y")`` for types
    newer than this library. An existing group keeps the instance type it was created
    with: ``UpdateCluster`` refuses a new one (``plan`` reports it); rename the group to
    replace its nodes.

    Example:

    ```python
    HyperPodInstanceType.ML_P5_48XLARGE.accelerator_count  # 8
    HyperPodInstanceType.of("ml.p5.48xlarge") == HyperPodInstanceType.ML_P5_48XLARGE  # True
    ```
    """

    # -- the catalogue: one line per type (name, accelerators per instance, EFA) ----------
    ML_P4D_24XLARGE = _gpu("ml.p4d.24xlarge", 8, efa=True)
    ML_P4DE_24XLARGE = _gpu("ml.p4de.24xlarge", 8, efa=True)
    ML_P5_48XLARGE = _gpu("ml.p5.48xlarge", 8, efa=True)
    ML_P5_4XLARGE = _gpu("ml.p5.4xlarge", 1, efa=True)
    ML_P6E_GB200_36XLARGE = _gpu("ml.p6e-gb200.36xlarge", 4, efa=True)
    ML_TRN1_32XLARGE = _trainium("ml.trn1.32xlarge", 16, efa=True)
    ML_TRN1N_32XLARGE = _trainium("ml.trn1n.32xlarge", 16, efa=True)
    ML_G5_XLARGE = _gpu("ml.g5.xlarge", 1)
    ML_G5_2XLARGE = _gpu("ml.g5.2xlarge", 1)
    ML_G5_4XLARGE = _gpu("ml.g5.4xlarge", 1)
    ML_G5_8XLARGE = _gpu("ml.g5.8xlarge", 1, efa=True)
    ML_G5_12XLARGE = _gpu("ml.g5.12xlarge", 4, efa=True)
    ML_G5_16XLARGE = _gpu("ml.g5.16xlarge", 1, efa=True)
    ML_G5_24XLARGE = _gpu("ml.g5.24xlarge", 4, efa=True)
    ML_G5_48XLARGE = _gpu("ml.g5.48xlarge", 8, efa=True)
    ML_C5_LARGE = _cpu("ml.c5.large")
    ML_C5_XLARGE = _cpu("ml.c5.xlarge")
    ML_C5_2XLARGE = _cpu("ml.c5.2xlarge")
    ML_C5_4XLARGE = _cpu("ml.c5.4xlarge")
    ML_C5_9XLARGE = _cpu("ml.c5.9xlarge")
    ML_C5_12XLARGE = _cpu("ml.c5.12xlarge")
    ML_C5_18XLARGE = _cpu("ml.c5.18xlarge")
    ML_C5_24XLARGE = _cpu("ml.c5.24xlarge")
    ML_C5N_LARGE = _cpu("ml.c5n.large")
    ML_C5N_2XLARGE = _cpu("ml.c5n.2xlarge")
    ML_C5N_4XLARGE = _cpu("ml.c5n.4xlarge")
    ML_C5N_9XLARGE = _cpu("ml.c5n.9xlarge", efa=True)
    ML_C5N_18XLARGE = _cpu("ml.c5n.18xlarge", efa=True)
    ML_M5_LARGE = _cpu("ml.m5.large")
    ML_M5_XLARGE = _cpu("ml.m5.xlarge")
    ML_M5_2XLARGE = _cpu("ml.m5.2xlarge")
    ML_M5_4XLARGE = _cpu("ml.m5.4xlarge")
    ML_M5_8XLARGE = _cpu("ml.m5.8xlarge")
    ML_M5_12XLARGE = _cpu("ml.m5.12xlarge")
    ML_M5_16XLARGE = _cpu("ml.m5.16xlarge")
    ML_M5_24XLARGE = _cpu("ml.m5.24xlarge")
    ML_T3_MEDIUM = _cpu("ml.t3.medium")
    ML_T3_LARGE = _cpu("ml.t3.large")
    ML_T3_XLARGE = _cpu("ml.t3.xlarge")
    ML_T3_2XLARGE = _cpu("ml.t3.2xlarge")
    ML_G6_XLARGE = _gpu("ml.g6.xlarge", 1)
    ML_G6_2XLARGE = _gpu("ml.g6.2xlarge", 1)
    ML_G6_4XLARGE = _gpu("ml.g6.4xlarge", 1)
    ML_G6_8XLARGE = _gpu("ml.g6.8xlarge", 1, efa=True)
    ML_G6_16XLARGE = _gpu("ml.g6.16xlarge", 1, efa=True)
    ML_G6_12XLARGE = _gpu("ml.g6.12xlarge", 4, efa=True)
    ML_G6_24XLARGE = _gpu("ml.g6.24xlarge", 4, efa=True)
    ML_G6_48XLARGE = _gpu("ml.g6.48xlarge", 8, efa=True)
    ML_GR6_4XLARGE = _gpu("ml.gr6.4xlarge", 1)
    ML_GR6_8XLARGE = _gpu("ml.gr6.8xlarge", 1, efa=True)
    ML_G6E_XLARGE = _gpu("ml.g6e.xlarge", 1)
    ML_G6E_2XLARGE = _gpu("ml.g6e.2xlarge", 1)
    ML_G6E_4XLARGE = _gpu("ml.g6e.4xlarge", 1)
    ML_G6E_8XLARGE = _gpu("ml.g6e.8xlarge", 1, efa=True)
    ML_G6E_16XLARGE = _gpu("ml.g6e.16xlarge", 1, efa=True)
    ML_G6E_12XLARGE = _gpu("ml.g6e.12xlarge", 4, efa=True)
    ML_G6E_24XLARGE = _gpu("ml.g6e.24xlarge", 4, efa=True)
    ML_G6E_48XLARGE = _gpu("ml.g6e.48xlarge", 8, efa=True)
    ML_P5E_48XLARGE = _gpu("ml.p5e.48xlarge", 8, efa=True)
    ML_P5EN_48XLARGE = _gpu("ml.p5en.48xlarge", 8, efa=True)
    ML_P6_B200_48XLARGE = _gpu("ml.p6-b200.48xlarge", 8, efa=True)
    ML_TRN2_3XLARGE = _trainium("ml.trn2.3xlarge", 1, efa=True)
    ML_TRN2_48XLARGE = _trainium("ml.trn2.48xlarge", 16, efa=True)
    ML_C6I_LARGE = _cpu("ml.c6i.large")
    ML_C6I_XLARGE = _cpu("ml.c6i.xlarge")
    ML_C6I_2XLARGE = _cpu("ml.c6i.2xlarge")
    ML_C6I_4XLARGE = _cpu("ml.c6i.4xlarge")
    ML_C6I_8XLARGE = _cpu("ml.c6i.8xlarge")
    ML_C6I_12XLARGE = _cpu("ml.c6i.12xlarge")
    ML_C6I_16XLARGE = _cpu("ml.c6i.16xlarge")
    ML_C6I_24XLARGE = _cpu("ml.c6i.24xlarge")
    ML_C6I_32XLARGE = _cpu("ml.c6i.32xlarge", efa=True)
    ML_M6I_LARGE = _cpu("ml.m6i.large")
    ML_M6I_XLARGE = _cpu("ml.m6i.xlarge")
    ML_M6I_2XLARGE = _cpu("ml.m6i.2xlarge")
    ML_M6I_4XLARGE = _cpu("ml.m6i.4xlarge")
    ML_M6I_8XLARGE = _cpu("ml.m6i.8xlarge")
    ML_M6I_12XLARGE = _cpu("ml.m6i.12xlarge")
    ML_M6I_16XLARGE = _cpu("ml.m6i.16xlarge")
    ML_M6I_24XLARGE = _cpu("ml.m6i.24xlarge")
    ML_M6I_32XLARGE = _cpu("ml.m6i.32xlarge", efa=True)
    ML_R6I_LARGE = _cpu("ml.r6i.large")
    ML_R6I_XLARGE = _cpu("ml.r6i.xlarge")
    ML_R6I_2XLARGE = _cpu("ml.r6i.2xlarge")
    ML_R6I_4XLARGE = _cpu("ml.r6i.4xlarge")
    ML_R6I_8XLARGE = _cpu("ml.r6i.8xlarge")
    ML_R6I_12XLARGE = _cpu("ml.r6i.12xlarge")
    ML_R6I_16XLARGE = _cpu("ml.r6i.16xlarge")
    ML_R6I_24XLARGE = _cpu("ml.r6i.24xlarge")
    ML_R6I_32XLARGE = _cpu("ml.r6i.32xlarge", efa=True)
    ML_I3EN_LARGE = _cpu("ml.i3en.large")
    ML_I3EN_XLARGE = _cpu("ml.i3en.xlarge")
    ML_I3EN_2XLARGE = _cpu("ml.i3en.2xlarge")
    ML_I3EN_3XLARGE = _cpu("ml.i3en.3xlarge")
    ML_I3EN_6XLARGE = _cpu("ml.i3en.6xlarge")
    ML_I3EN_12XLARGE = _cpu("ml.i3en.12xlarge", efa=True)
    ML_I3EN_24XLARGE = _cpu("ml.i3en.24xlarge", efa=True)
    ML_M7I_LARGE = _cpu("ml.m7i.large")
    ML_M7I_XLARGE = _cpu("ml.m7i.xlarge")
    ML_M7I_2XLARGE = _cpu("ml.m7i.2xlarge")
    ML_M7I_4XLARGE = _cpu("ml.m7i.4xlarge")
    ML_M7I_8XLARGE = _cpu("ml.m7i.8xlarge")
    ML_M7I_12XLARGE = _cpu("ml.m7i.12xlarge")
    ML_M7I_16XLARGE = _cpu("ml.m7i.16xlarge")
    ML_M7I_24XLARGE = _cpu("ml.m7i.24xlarge")
    ML_M7I_48XLARGE = _cpu("ml.m7i.48xlarge", efa=True)
    ML_R7I_LARGE = _cpu("ml.r7i.large")
    ML_R7I_XLARGE = _cpu("ml.r7i.xlarge")
    ML_R7I_2XLARGE = _cpu("ml.r7i.2xlarge")
    ML_R7I_4XLARGE = _cpu("ml.r7i.4xlarge")
    ML_R7I_8XLARGE = _cpu("ml.r7i.8xlarge")
    ML_R7I_12XLARGE = _cpu("ml.r7i.12xlarge")
    ML_R7I_16XLARGE = _cpu("ml.r7i.16xlarge")
    ML_R7I_24XLARGE = _cpu("ml.r7i.24xlarge")
    ML_R7I_48XLARGE = _cpu("ml.r7i.48xlarge", efa=True)
    ML_R5D_16XLARGE = _cpu("ml.r5d.16xlarge")
    ML_G7E_2XLARGE = _gpu("ml.g7e.2xlarge", 1)
    ML_G7E_4XLARGE = _gpu("ml.g7e.4xlarge", 1)
    ML_G7E_8XLARGE = _gpu("ml.g7e.8xlarge", 1, efa=True)
    ML_G7E_12XLARGE = _gpu("ml.g7e.12xlarge", 2, efa=True)
    ML_G7E_24XLARGE = _gpu("ml.g7e.24xlarge", 4, efa=True)
    ML_G7E_48XLARGE = _gpu("ml.g7e.48xlarge", 8, efa=True)
    ML_P6_B300_48XLARGE = _gpu("ml.p6-b300.48xlarge", 8, efa=True)
    ML_G4DN_XLARGE = _gpu("ml.g4dn.xlarge", 1)
    ML_G4DN_2XLARGE = _gpu("ml.g4dn.2xlarge", 1)
    ML_G4DN_4XLARGE = _gpu("ml.g4dn.4xlarge", 1)
    ML_G4DN_8XLARGE = _gpu("ml.g4dn.8xlarge", 1, efa=True)
    ML_G4DN_12XLARGE = _gpu("ml.g4dn.12xlarge", 4, efa=True)
    ML_G4DN_16XLARGE = _gpu("ml.g4dn.16xlarge", 1, efa=True)
    ML_C6G_MEDIUM = _cpu("ml.c6g.medium")
    ML_C6G_LARGE = _cpu("ml.c6g.large")
    ML_C6G_XLARGE = _cpu("ml.c6g.xlarge")
    ML_C6G_2XLARGE = _cpu("ml.c6g.2xlarge")
    ML_C6G_4XLARGE = _cpu("ml.c6g.4xlarge")
    ML_C6G_8XLARGE = _cpu("ml.c6g.8xlarge")
    ML_C6G_12XLARGE = _cpu("ml.c6g.12xlarge")
    ML_C6G_16XLARGE = _cpu("ml.c6g.16xlarge")
    ML_C7G_MEDIUM = _cpu("ml.c7g.medium")
    ML_C7G_LARGE = _cpu("ml.c7g.large")
    ML_C7G_XLARGE = _cpu("ml.c7g.xlarge")
    ML_C7G_2XLARGE = _cpu("ml.c7g.2xlarge")
    ML_C7G_4XLARGE = _cpu("ml.c7g.4xlarge")
    ML_C7G_8XLARGE = _cpu("ml.c7g.8xlarge")
    ML_C7G_12XLARGE = _cpu("ml.c7g.12xlarge")
    ML_C7G_16XLARGE = _cpu("ml.c7g.16xlarge", efa=True)
    ML_C8G_MEDIUM = _cpu("ml.c8g.medium")
    ML_C8G_LARGE = _cpu("ml.c8g.large")
    ML_C8G_XLARGE = _cpu("ml.c8g.xlarge")
    ML_C8G_2XLARGE = _cpu("ml.c8g.2xlarge")
    ML_C8G_4XLARGE = _cpu("ml.c8g.4xlarge")
    ML_C8G_8XLARGE = _cpu("ml.c8g.8xlarge")
    ML_C8G_12XLARGE = _cpu("ml.c8g.12xlarge")
    ML_C8G_16XLARGE = _cpu("ml.c8g.16xlarge")
    ML_C8G_24XLARGE = _cpu("ml.c8g.24xlarge", efa=True)
    ML_C8G_48XLARGE = _cpu("ml.c8g.48xlarge", efa=True)
    ML_C6A_LARGE = _cpu("ml.c6a.large")
    ML_C6A_XLARGE = _cpu("ml.c6a.xlarge")
    ML_C6A_2XLARGE = _cpu("ml.c6a.2xlarge")
    ML_C6A_4XLARGE = _cpu("ml.c6a.4xlarge")
    ML_C6A_8XLARGE = _cpu("ml.c6a.8xlarge")
    ML_C6A_12XLARGE = _cpu("ml.c6a.12xlarge")
    ML_C6A_16XLARGE = _cpu("ml.c6a.16xlarge")
    ML_C6A_24XLARGE = _cpu("ml.c6a.24xlarge")
    ML_C6A_32XLARGE = _cpu("ml.c6a.32xlarge", efa=True)
    ML_C6A_48XLARGE = _cpu("ml.c6a.48xlarge", efa=True)
    ML_M6A_LARGE = _cpu("ml.m6a.large")
    ML_M6A_XLARGE = _cpu("ml.m6a.xlarge")
    ML_M6A_2XLARGE = _cpu("ml.m6a.2xlarge")
    ML_M6A_4XLARGE = _cpu("ml.m6a.4xlarge")
    ML_M6A_8XLARGE = _cpu("ml.m6a.8xlarge")
    ML_M6A_12XLARGE = _cpu("ml.m6a.12xlarge")
    ML_M6A_16XLARGE = _cpu("ml.m6a.16xlarge")
    ML_M6A_24XLARGE = _cpu("ml.m6a.24xlarge")
    ML_M6A_32XLARGE = _cpu("ml.m6a.32xlarge", efa=True)
    ML_M6A_48XLARGE = _cpu("ml.m6a.48xlarge", efa=True)
    ML_M6G_MEDIUM = _cpu("ml.m6g.medium")
    ML_M6G_LARGE = _cpu("ml.m6g.large")
    ML_M6G_XLARGE = _cpu("ml.m6g.xlarge")
    ML_M6G_2XLARGE = _cpu("ml.m6g.2xlarge")
    ML_M6G_4XLARGE = _cpu("ml.m6g.4xlarge")
    ML_M6G_8XLARGE = _cpu("ml.m6g.8xlarge")
    ML_M6G_12XLARGE = _cpu("ml.m6g.12xlarge")
    ML_M6G_16XLARGE = _cpu("ml.m6g.16xlarge")
    ML_M7G_MEDIUM = _cpu("ml.m7g.medium")
    ML_M7G_LARGE = _cpu("ml.m7g.large")
    ML_M7G_XLARGE = _cpu("ml.m7g.xlarge")
    ML_M7G_2XLARGE = _cpu("ml.m7g.2xlarge")
    ML_M7G_4XLARGE = _cpu("ml.m7g.4xlarge")
    ML_M7G_8XLARGE = _cpu("ml.m7g.8xlarge")
    ML_M7G_12XLARGE = _cpu("ml.m7g.12xlarge")
    ML_M7G_16XLARGE = _cpu("ml.m7g.16xlarge", efa=True)
    ML_M8G_MEDIUM = _cpu("ml.m8g.medium")
    ML_M8G_LARGE = _cpu("ml.m8g.large")
    ML_M8G_XLARGE = _cpu("ml.m8g.xlarge")
    ML_M8G_2XLARGE = _cpu("ml.m8g.2xlarge")
    ML_M8G_4XLARGE = _cpu("ml.m8g.4xlarge")
    ML_M8G_8XLARGE = _cpu("ml.m8g.8xlarge")
    ML_M8G_12XLARGE = _cpu("ml.m8g.12xlarge")
    ML_M8G_16XLARGE = _cpu("ml.m8g.16xlarge")
    ML_M8G_24XLARGE = _cpu("ml.m8g.24xlarge", efa=True)
    ML_M8G_48XLARGE = _cpu("ml.m8g.48xlarge", efa=True)
    ML_G7_2XLARGE = _gpu("ml.g7.2xlarge", 1)
    ML_G7_4XLARGE = _gpu("ml.g7.4xlarge", 1)
    ML_G7_8XLARGE = _gpu("ml.g7.8xlarge", 1, efa=True)
    ML_G7_12XLARGE = _gpu("ml.g7.12xlarge", None, efa=True)  # count undocumented
    ML_G7_24XLARGE = _gpu("ml.g7.24xlarge", None, efa=True)  # count undocumented
    ML_G7_48XLARGE = _gpu("ml.g7.48xlarge", 8, efa=True)
    ML_C8A_16XLARGE = _cpu("ml.c8a.16xlarge")
    ML_M8A_16XLARGE = _cpu("ml.m8a.16xlarge")

    def __init__(self, name: str) -> None:
        self._name = name

    @classmethod
    def of(cls, name: str) -> HyperPodInstanceType:
        """An instance type by its API name, e.g. ``"ml.p5.48xlarge"``.

        The name is checked when the instance group is added to a cluster (it must look
        like ``ml.<family>.<size>``); a type unknown to this library is accepted.
        """
        return cls(name)

    @property
    def name(self) -> str:
        """The API name, e.g. ``ml.p5.48xlarge``."""
        return self._name

    def _entry(self) -> _Entry | None:
        """The catalogue's line for the name (none for a name that is not a str: such a type
        is reported when its group joins a cluster, and answers as an unknown type here)."""
        return _CATALOGUE.get(self._name) if isinstance(self._name, str) else None

    @property
    def is_known(self) -> bool:
        """Whether the type is in this library's catalogue (the SageMaker API model's list)."""
        return self._entry() is not None

    @property
    def accelerator_count(self) -> int | None:
        """GPUs or Trainium chips per instance; ``None`` for CPU-only types and when the
        library does not know the count."""
        entry = self._entry()
        return entry.accelerators if entry is not None else None

    @property
    def accelerator_kind(self) -> AcceleratorKind | None:
        """``"gpu"``, ``"trainium"``, or ``None`` for CPU-only types.

        For a type not in the catalogue, the kind of its family's catalogued types (a new
        size, e.g. ``ml.p5.96xlarge``), else of its series' (a new generation, e.g.
        ``ml.p9.96xlarge``: every catalogued ``p`` family is a GPU family); ``None``
        otherwise.
        """
        entry = self._entry()
        if entry is not None:
            return entry.kind
        if not isinstance(self._name, str):
            return None
        return _FAMILY_KINDS.get(_family(self._name)) or _SERIES_KINDS.get(_series(self._name))

    @property
    def is_accelerated(self) -> bool:
        """Whether the type carries GPUs or Trainium chips (see :attr:`accelerator_kind`)."""
        return self.accelerator_kind is not None

    @property
    def efa_capable(self) -> bool | None:
        """Whether the type supports EFA (Elastic Fabric Adapter), which multi-node GPU
        networking and the ``InstanceConnectivity`` deep health check need; ``None`` for a
        type not in the catalogue."""
        entry = self._entry()
        return entry.efa if entry is not None else None

    @property
    def is_well_formed(self) -> bool:
        """Whether the name has the ``ml.<family>.<size>`` shape the API requires (the pattern
        the validation rules check)."""
        return (
            isinstance(self._name, str) and limits.INSTANCE_TYPE.fullmatch(self._name) is not None
        )

    def __str__(self) -> str:
        return self._name if isinstance(self._name, str) else repr(self._name)

    def __repr__(self) -> str:
        return f"HyperPodInstanceType({self._name!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HyperPodInstanceType) and other._name == self._name

    def __hash__(self) -> int:
        return hash(self._name if isinstance(self._name, str) else repr(self._name))


def _family(name: str) -> str:
    return name.rsplit(".", 1)[0]


def _series(name: str) -> str:
    """The letters before the generation: ``ml.p5en.48xlarge`` -> ``p``, ``ml.trn2...`` ->
    ``trn``."""
    found = re.match(r"ml\.([a-z]+)\d", name)
    return found.group(1) if found else ""


_CATALOGUE: dict[str, _Entry] = {
    entry.name: entry for entry in vars(HyperPodInstanceType).values() if isinstance(entry, _Entry)
}
for _attribute, _value in list(vars(HyperPodInstanceType).items()):
    if isinstance(_value, _Entry):
        setattr(HyperPodInstanceType, _attribute, HyperPodInstanceType(_value.name))

_FAMILY_KINDS: dict[str, AcceleratorKind] = {
    _family(entry.name): entry.kind for entry in _CATALOGUE.values() if entry.kind is not None
}


def _series_kinds() -> dict[str, AcceleratorKind]:
    kinds: dict[str, set[AcceleratorKind | None]] = {}
    for name, entry in _CATALOGUE.items():
        kinds.setdefault(_series(name), set()).add(entry.kind)
    return {
        series: kind
        for series, found in kinds.items()
        if len(found) == 1 and (kind := next(iter(found))) is not None
    }


_SERIES_KINDS = _series_kinds()
"""Series whose catalogued types all carry accelerators of one kind (p, g, gr, trn)."""

ACCELERATORS_PER_INSTANCE: dict[str, int] = {
    name: entry.accelerators for name, entry in _CATALOGUE.items() if entry.accelerators is not None
}
"""GPUs (or Trainium chips) per instance, for the catalogued types whose count is known
(derived from the catalogue in :class:`HyperPodInstanceType`)."""


def constant_name(name: str) -> str:
    """The constant of an API name: ``ml.p6-b200.48xlarge`` -> ``ML_P6_B200_48XLARGE``."""
    return re.sub(r"[.-]", "_", name).upper()


def known_names() -> tuple[str, ...]:
    """The API names of every catalogued type, sorted."""
    return tuple(sorted(_CATALOGUE))
