"""Which Service Quotas entries limit a HyperPod cluster, found by their names.

AWS names them (Service Quotas, service code ``sagemaker``; the HyperPod prerequisites page,
"SageMaker HyperPod quotas", tells users to search the console for "cluster usage"):

- ``<instance type> for cluster usage``: instances of that type across the account's clusters
  (not ``... for cluster spot instance usage``, a separate quota);
- ``Maximum number instances allowed per SageMaker HyperPod cluster`` (sic: no "of");
- ``Total number of instances allowed across SageMaker HyperPod clusters``.

The codes (``L-...``) are read from the answers, never from a table here. The patterns accept
an "of" AWS may add and any case and spacing; nothing else.
"""

from __future__ import annotations

import re
from enum import Enum

from .facts import Quota, Quotas, Unread

SERVICE_CODE = "sagemaker"


class Kind(Enum):
    """The three kinds of quota a gated group meets."""

    INSTANCE_TYPE = "instance type"
    PER_CLUSTER = "per cluster"
    ACROSS_CLUSTERS = "across clusters"


_PATTERNS = {
    Kind.INSTANCE_TYPE: re.compile(r"(?P<type>ml\.[a-z0-9-]+\.[a-z0-9-]+) for cluster usage"),
    Kind.PER_CLUSTER: re.compile(
        r"maximum number (?:of )?instances allowed per sagemaker hyperpod cluster"
    ),
    Kind.ACROSS_CLUSTERS: re.compile(
        r"total number of instances allowed across sagemaker hyperpod clusters"
    ),
}
DESCRIBED = {
    Kind.INSTANCE_TYPE: "<instance type> for cluster usage",
    Kind.PER_CLUSTER: "Maximum number instances allowed per SageMaker HyperPod cluster",
    Kind.ACROSS_CLUSTERS: "Total number of instances allowed across SageMaker HyperPod clusters",
}
"""How each kind's name reads (for messages when the account lists none)."""


def _normal(name: str) -> str:
    return " ".join(name.split()).lower()


def matches(name: str, kind: Kind, instance_type: str | None = None) -> bool:
    """Whether the quota named ``name`` is of ``kind`` (for ``instance_type``, when given)."""
    found = _PATTERNS[kind].fullmatch(_normal(name))
    if found is None:
        return False
    return kind is not Kind.INSTANCE_TYPE or found["type"] == (instance_type or "").lower()


def _first(quotas: tuple[Quota, ...], kind: Kind, instance_type: str | None) -> Quota | None:
    return next((q for q in quotas if matches(q.name, kind, instance_type)), None)


def wanted(kind: Kind, instance_type: str | None = None) -> str:
    """The name of the quota of ``kind`` as AWS spells it (for messages)."""
    return f"{instance_type} for cluster usage" if instance_type else DESCRIBED[kind]


def find(quotas: Quotas, kind: Kind, instance_type: str | None = None) -> Quota | Unread:
    """The account's quota of ``kind``: its applied value, else AWS's default when the account
    has no applied value. :class:`Unread` when the list that would decide was not read, or when
    neither list names such a quota."""
    if isinstance(quotas.applied, Unread):
        return quotas.applied
    applied = _first(quotas.applied, kind, instance_type)
    if applied is not None:
        return applied
    if isinstance(quotas.defaults, Unread):
        return Unread(f"no applied value, and AWS's default: {quotas.defaults.reason}")
    default = _first(quotas.defaults, kind, instance_type)
    if default is not None:
        return default
    return Unread(
        "no SageMaker quota of this name in Service Quotas (applied or default) in this region: "
        "the instance type may not be offered for HyperPod here"
    )
