"""What aws-cdk-lib prints in the jsii kernel (Node.js), delivered inside the test that
caused it.

aws-cdk-lib prints a synth's validation report with warnings (``WARNING [HP-WARN-...] ...``,
``A copy of this report can be found in: ...``) with ``console.error`` in the Node.js process;
jsii hands it on to Python's ``sys.stderr`` from a thread of its own, which reads the Node
process's stderr. Node has written it before it answers the synth, but that thread may write it
after the test has ended: outside pytest's capture (a stray banner in ``make test``'s output),
or into the next test's ``capsys`` (a failure of a test that never synthesized a warning).

:func:`install` (tests/conftest.py, before aws-cdk-lib is imported and the kernel starts)
replaces jsii's reader with one that shares a lock with :func:`drain`; tests/conftest.py drains
after every phase of every test, so what Node printed before is written while the test that
caused it still captures. What is written is what jsii writes (its console messages decoded,
to ``sys.stderr`` or ``sys.stdout``).
"""

from __future__ import annotations

import array
import base64
import fcntl
import json
import os
import select
import sys
import termios
import threading
from typing import IO, Any

import jsii._kernel.providers.process as jsii_process

_LOCK = threading.Lock()
_READERS: list[int] = []
"""The file descriptor of the Node process's stderr (one kernel per process)."""
_PENDING: dict[int, bytes] = {}
"""Bytes read after the last complete line, per descriptor."""
SINK_THREADS: list[threading.Thread] = []
"""The threads running :func:`_sink` (jsii's ``process.stderr_sink``)."""


def _available(fd: int) -> int:
    count = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, count)
    return count[0]


def _write(line: bytes) -> None:
    """One line of the Node process's stderr, handled as jsii does."""
    try:
        console = json.loads(line)
        if console.get("stderr") is not None:
            sys.stderr.buffer.write(base64.b64decode(console["stderr"]))
        if console.get("stdout") is not None:
            sys.stdout.buffer.write(base64.b64decode(console["stdout"]))
    except Exception:
        print(line, file=sys.stderr)


def _read_available(fd: int) -> bool:
    """Under the lock: read what the pipe holds and write its complete lines. False at the
    end of the stream (the pipe readable with nothing in it: Node closed it)."""
    count = _available(fd)
    if count == 0:
        readable, _, _ = select.select([fd], [], [], 0)
        return not readable
    pending = _PENDING.get(fd, b"") + os.read(fd, count)
    *lines, _PENDING[fd] = pending.split(b"\n")
    for line in lines:
        if line:
            _write(line + b"\n")
    return True


def _sink(reader: IO[Any]) -> None:
    """jsii's ``stderr_sink``, reading only under the lock :func:`drain` takes."""
    SINK_THREADS.append(threading.current_thread())
    fd = reader.fileno()
    _READERS.append(fd)
    try:
        while True:
            select.select([fd], [], [])
            with _LOCK:
                if not _read_available(fd):
                    break
    finally:
        with _LOCK:
            _READERS.remove(fd)
            rest = _PENDING.pop(fd, b"")
        if rest:
            _write(rest)


def install() -> None:
    """Make jsii start its reader as :func:`_sink` (before the kernel starts)."""
    jsii_process.stderr_sink = _sink


def drain() -> None:
    """Write now everything the Node process printed so far."""
    with _LOCK:
        for fd in list(_READERS):
            _read_available(fd)
