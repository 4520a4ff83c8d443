"""Deprecated: moved to :mod:`hyperpod_constructs.tools.preflight`; import from there.

Every name read here is the one of the new path, with a ``DeprecationWarning``.
"""

from typing import Any

from ._core.moved import moved_attribute


def __getattr__(name: str) -> Any:
    return moved_attribute(__name__, name)
