"""The one way the command-line tools read a file from outside: bounded, regular files only,
strict JSON.

- :func:`read_text` opens without blocking (``O_NONBLOCK``: a FIFO never hangs), accepts only a
  regular file (not a FIFO, socket, device or folder) and reads at most ``max_bytes``; the
  bytes must be UTF-8 (a leading byte-order mark is dropped).
- :func:`parse_json` is strict where Python's ``json`` is lenient: a duplicate key, ``NaN`` /
  ``Infinity``, a number that is not finite, an integer longer than :data:`MAX_INT_DIGITS`
  digits, a lone surrogate (``"\\ud800"``) and nesting deeper than ``max_depth`` are refused,
  with the line and column.
- :func:`read_json` is both.

Every problem raises :class:`InputError`, whose ``str()`` is one printable line naming the
input (control characters escaped); callers print it as ``error: ...`` and exit 2. Standard
library only.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Callable
from json import decoder as _json_decoder
from json import scanner as _json_scanner
from typing import Any

from ..._core.sanitize import FieldError

__all__ = [
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "InputError",
    "parse_json",
    "read_json",
    "read_text",
]

MAX_BYTES = 8 * 2**20
"""Default size limit of one input (CloudFormation takes templates of at most 1 MB and a
CreateCluster request is a few KB)."""
MAX_DEPTH = 64
"""Default nesting limit of objects and arrays (AWS's shapes nest less than 10 deep)."""
MAX_INT_DIGITS = 32
"""Longest integer accepted (AWS's ``Long`` has 19 digits)."""

_SURROGATE = re.compile(r"[\ud800-\udfff]")
_decoder: Any = _json_decoder  # JSONObject, JSONArray, scanstring: not in typeshed
_scanner: Any = _json_scanner  # py_make_scanner: Python's own scanner, not the C one


class InputError(FieldError):
    """An input that cannot be read or is not strict JSON; ``str()`` is one printable line,
    ``<what>: <problem>``."""

    def __init__(self, what: str, problem: str) -> None:
        super().__init__(what, problem)
        self.what = what


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def read_text(path: str | os.PathLike[str], what: str, *, max_bytes: int = MAX_BYTES) -> str:
    """The UTF-8 text of the regular file ``path`` (``what`` names it in errors).

    :raises InputError: missing, unreadable, not a regular file, larger than ``max_bytes``,
        or not UTF-8.
    """
    name = os.fspath(path)
    where = f"{what} {name!r}" if what != name else repr(name)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        descriptor = os.open(name, flags | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError) as error:  # ValueError: a NUL in the path
        reason = getattr(error, "strerror", None) or str(error)
        raise InputError(where, f"cannot open: {reason}") from None
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(where, f"cannot read {_kind(mode)}: give a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(descriptor, min(2**20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        raise InputError(where, f"cannot read: {error.strerror or error}") from None
    finally:
        os.close(descriptor)
    if size > max_bytes:
        raise InputError(where, f"larger than {max_bytes} bytes")
    data = b"".join(chunks)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(
            where, f"not UTF-8 text: byte 0x{data[error.start]:02x} at offset {error.start}"
        ) from None
    return text.removeprefix("\ufeff")


class _Refused(Exception):
    def __init__(self, problem: str, position: int | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.position = position


def _at(position: int | None, scan: Callable[..., Any], *args: Any) -> Any:
    try:
        return scan(*args)
    except _Refused as refused:
        if refused.position is None:
            refused.position = position
        raise


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Refused(f"duplicate key {json.dumps(key)} in the object starting")
        if _SURROGATE.search(key):
            raise _Refused(f"a lone surrogate in the key {json.dumps(key)} of the object starting")
        result[key] = value
    return result


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number")


def _int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _Refused(f"an integer of {digits} digits (at most {MAX_INT_DIGITS} accepted)")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:40]} is out of range")
    return value


def _string(text: str, end: int, strict: bool) -> tuple[str, int]:
    value, after = _decoder.scanstring(text, end, strict)
    if _SURROGATE.search(value):
        raise _Refused("a lone surrogate (\\ud800-\\udfff) in a string", end - 1)
    return value, after


class _StrictDecoder(json.JSONDecoder):
    """``json.JSONDecoder`` with Python's own scanner and strict hooks; positions are kept
    by wrapping the scanner that objects and arrays call for their values."""

    def __init__(self, max_depth: int) -> None:
        super().__init__(
            object_pairs_hook=_pairs,
            parse_float=_float,
            parse_int=_int,
            parse_constant=_constant,
            strict=True,
        )
        self._max_depth = max_depth
        self._depth = 0
        self.parse_object = self._object
        self.parse_array = self._array
        self.parse_string = _string
        self.scan_once = _scanner.py_make_scanner(self)

    def _enter(self, start: int) -> None:
        self._depth += 1
        if self._depth > self._max_depth:
            raise _Refused(f"nested deeper than {self._max_depth} levels", start)

    def _object(
        self,
        s_and_end: tuple[str, int],
        strict: bool,
        scan_once: Callable[[str, int], Any],
        object_hook: Any,
        object_pairs_hook: Any,
        memo: Any,
    ) -> Any:
        start = s_and_end[1] - 1
        self._enter(start)
        try:
            return _at(
                start,
                _decoder.JSONObject,
                s_and_end,
                strict,
                self._tracked(scan_once),
                object_hook,
                object_pairs_hook,
                memo,
            )
        finally:
            self._depth -= 1

    def _array(self, s_and_end: tuple[str, int], scan_once: Callable[[str, int], Any]) -> Any:
        start = s_and_end[1] - 1
        self._enter(start)
        try:
            return _at(start, _decoder.JSONArray, s_and_end, self._tracked(scan_once))
        finally:
            self._depth -= 1

    @staticmethod
    def _tracked(scan_once: Callable[[str, int], Any]) -> Callable[[str, int], Any]:
        def scan(text: str, index: int) -> Any:
            return _at(index, scan_once, text, index)

        return scan


def _line_column(text: str, position: int) -> str:
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    return f"line {line} column {column}"


def _too_deep(value: object, max_depth: int) -> bool:
    level = [value]
    for _ in range(max_depth):
        level = [
            child
            for item in level
            if isinstance(item, dict | list)
            for child in (item.values() if isinstance(item, dict) else item)
        ]
    return any(isinstance(item, dict | list) for item in level)


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _fast(text: str, max_depth: int) -> object:
    """Python's C decoder with the strict hooks; None of the positions (see ``_strict``)."""
    if _SURROGATE.search(text) or _SURROGATE_ESCAPE.search(text):
        raise _Refused("a surrogate escape: read again by the scanner that checks pairs")
    value = json.loads(
        text,
        object_pairs_hook=_pairs,
        parse_float=_float,
        parse_int=_int,
        parse_constant=_constant,
    )
    if _too_deep(value, max_depth):
        raise _Refused(f"nested deeper than {max_depth} levels")
    return value


def parse_json(text: str, what: str, *, max_depth: int = MAX_DEPTH) -> object:
    """``text`` as strict JSON (see the module docstring); ``what`` names it in errors.

    Valid input is read by Python's C decoder; anything it refuses is read again by Python's
    own scanner, which knows where the problem is.

    :raises InputError: not JSON, or JSON this reader refuses, with the line and column.
    """
    try:
        return _fast(text, max_depth)
    except (_Refused, json.JSONDecodeError, RecursionError):
        pass
    try:
        return _StrictDecoder(max_depth).decode(text)
    except _Refused as refused:
        raise InputError(
            what, f"{refused.problem} at {_line_column(text, refused.position or 0)}"
        ) from None
    except json.JSONDecodeError as error:
        message = error.msg.removesuffix(" at")
        raise InputError(
            what, f"not JSON: {message} at line {error.lineno} column {error.colno}"
        ) from None
    except RecursionError:
        raise InputError(what, "nested too deeply") from None


def read_json(
    path: str | os.PathLike[str],
    what: str,
    *,
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
) -> object:
    """:func:`read_text` then :func:`parse_json`; errors name ``what`` and ``path``."""
    text = read_text(path, what, max_bytes=max_bytes)
    name = os.fspath(path)
    return parse_json(text, f"{what} {name!r}" if what != name else repr(name), max_depth=max_depth)
