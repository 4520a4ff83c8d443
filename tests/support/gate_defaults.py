"""The readiness gate's defaults, read from its options model (``MinCountGateOptions()``), for
the tests that state one. A test that needs a value other than the default says so where it
writes the value; a test that means "the default" reads it here, so changing a default is one
edit in ``hyperpod_constructs/gate/options.py``. Loads aws_cdk on first use only."""

from __future__ import annotations

import dataclasses
import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hyperpod_constructs.gate.options import MinCountGateOptions


@functools.cache
def defaults() -> MinCountGateOptions:
    """The options a gate gets when nothing is set."""
    from hyperpod_constructs.gate.options import MinCountGateOptions

    return MinCountGateOptions()


def default_values() -> dict[str, Any]:
    """Every field of the options model and its default (derived from the dataclass)."""
    options = defaults()
    return {f.name: getattr(options, f.name) for f in dataclasses.fields(options)}


def poll_seconds() -> int:
    """The default ``poll_interval``, in seconds."""
    return int(defaults().poll_interval.to_seconds())


def timeout_seconds() -> int:
    """The default ``timeout``, in seconds."""
    return int(defaults().timeout.to_seconds())


def metrics_namespace() -> str:
    """The default ``metrics_namespace``."""
    return defaults().metrics_namespace


def human(seconds: int) -> str:
    """``12600`` -> ``"3 h 30 min"``, ``41340`` -> ``"11 h 29 min"``, ``60`` -> ``"1 min"``,
    ``45`` -> ``"45 s"``: how the docs, the summary and the messages write a duration."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = (f"{hours} h" if hours else "", f"{minutes} min" if minutes else "")
    return " ".join((*filter(None, parts), f"{secs} s") if secs else filter(None, parts))
