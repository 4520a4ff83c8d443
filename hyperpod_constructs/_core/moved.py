"""The tools' old import paths (``hyperpod_constructs.summary``, ``.convert``, ``.watch``,
``.plan``, ``.preflight``): deprecated aliases of their packages under
``hyperpod_constructs.tools``. Each old module is a few lines whose ``__getattr__`` (PEP 562)
calls :func:`moved_attribute`: every name read through the old path is the very object of the
new one, with a ``DeprecationWarning`` at the line that reads it, naming the new path.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

PACKAGE = "hyperpod_constructs"
FLOOR = f"{PACKAGE}.tools"


def new_path(old: str) -> str:
    """``hyperpod_constructs.summary`` -> ``hyperpod_constructs.tools.summary``."""
    return f"{FLOOR}.{old.removeprefix(f'{PACKAGE}.')}"


def moved_attribute(old: str, name: str) -> Any:
    """``name`` of the package that moved from ``old``, with a ``DeprecationWarning``.

    A dunder other than ``__all__`` is never forwarded (``__path__`` would let the import
    system load the new package's modules a second time under the old name)."""
    if name.startswith("__") and name != "__all__":
        raise AttributeError(f"module {old!r} has no attribute {name!r}")
    new = new_path(old)
    try:
        value = getattr(importlib.import_module(new), name)
    except AttributeError:
        raise AttributeError(f"module {old!r} has no attribute {name!r} (moved to {new})") from None
    warnings.warn(
        f"{old} is deprecated: import {name} from {new} (the command line is unchanged)",
        DeprecationWarning,
        stacklevel=3,
    )
    return value
