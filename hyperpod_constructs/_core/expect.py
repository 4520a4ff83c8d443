"""The type check at a public entry point that raises at once (no synth report to carry a
finding): ``require`` raises a ``TypeError`` naming the function and the parameter, before a
value of the wrong type reaches code that would fail on it with a raw error deep inside.

Standard library only: the commands that must start without ``aws_cdk`` (``summary``, ``plan``)
use it.
"""

from __future__ import annotations

__all__ = ["require"]


def require(function: str, parameter: str, value: object, kind: type | tuple[type, ...]) -> None:
    """Raise ``TypeError`` naming ``parameter`` of ``function`` unless ``value`` is a ``kind``.

    :param function: the public function's name, as the user calls it.
    :param parameter: the parameter's name.
    :param value: what it got.
    :param kind: the type (or types) it takes.
    """
    if not isinstance(value, kind):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        expected = " or ".join(k.__name__ for k in kinds)
        raise TypeError(
            f"{function}() argument {parameter!r} must be {expected}, not {type(value).__name__}"
        )
