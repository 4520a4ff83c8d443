"""Virtual time for the gate tests: a clock, a discrete-event scheduler, and the
patch that makes botocore's retry back-off advance the clock instead of sleeping."""

from __future__ import annotations

import heapq
import itertools
import time as real_time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import ModuleType
from typing import Any

import botocore.endpoint  # type: ignore[import-untyped, unused-ignore]

EPOCH = datetime(2026, 6, 1, 8, 0, 0, tzinfo=UTC).timestamp()
"""Virtual time zero of every test (an arbitrary, fixed instant)."""


class VirtualClock:
    """Epoch-seconds clock that only moves when told to."""

    def __init__(self, start: float = EPOCH) -> None:
        self.start = start
        self._now = start
        self.sleeps: list[float] = []

    def time(self) -> float:
        """Current virtual time, epoch seconds."""
        return self._now

    def now(self) -> datetime:
        """Current virtual time as an aware UTC datetime."""
        return datetime.fromtimestamp(self._now, tz=UTC)

    @property
    def elapsed(self) -> float:
        """Seconds since the clock's start."""
        return self._now - self.start

    def advance(self, seconds: float) -> None:
        """Move forward by ``seconds`` (>= 0)."""
        if seconds < 0:
            raise ValueError(f"time cannot go backwards ({seconds})")
        self._now += seconds

    def advance_to(self, moment: float) -> None:
        """Move forward to ``moment`` (no-op if already past it)."""
        if moment > self._now:
            self._now = moment

    def sleep(self, seconds: float) -> None:
        """A sleep that costs no real time: records it and advances the clock."""
        self.sleeps.append(float(seconds))
        self.advance(max(0.0, float(seconds)))


class _VirtualTimeModule(ModuleType):
    """Stands in for the ``time`` module inside ``botocore.endpoint``."""

    def __init__(self, clock: VirtualClock) -> None:
        super().__init__("time")
        self._clock = clock

    def sleep(self, seconds: float) -> None:
        self._clock.sleep(seconds)

    def __getattr__(self, name: str) -> Any:
        return getattr(real_time, name)


def patch_botocore_retry_sleep(monkeypatch: Any, clock: VirtualClock) -> None:
    """Make botocore's retry back-off advance ``clock``.

    In botocore 1.44 every retry delay computed by the standard-mode handler
    (``botocore.retries.standard.RetryHandler.needs_retry``) is slept in
    ``botocore.endpoint.Endpoint._needs_retry`` with ``time.sleep`` looked up on
    the ``time`` module imported by ``botocore.endpoint``; that name is replaced.
    """
    monkeypatch.setattr(botocore.endpoint, "time", _VirtualTimeModule(clock))


def forbid_real_sleep(monkeypatch: Any) -> None:
    """Make any real ``time.sleep`` fail the test (tests must use virtual time)."""

    def _no_sleep(seconds: float) -> None:
        raise AssertionError(f"real time.sleep({seconds}) called in a virtual-time test")

    monkeypatch.setattr(real_time, "sleep", _no_sleep)


@dataclass(order=True)
class _Item:
    when: float
    seq: int
    action: Callable[[], None] = field(compare=False)
    label: str = field(compare=False, default="")


class Scheduler:
    """Discrete-event loop over a :class:`VirtualClock`.

    Actions run in time order; an action that consumes virtual time (e.g. a
    poll whose API calls are retried) makes later actions run late, as they
    would in reality.
    """

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self._queue: list[_Item] = []
        self._seq = itertools.count()
        self.steps = 0

    def at(self, when: float, action: Callable[[], None], label: str = "") -> None:
        """Run ``action`` at virtual time ``when``."""
        heapq.heappush(self._queue, _Item(when, next(self._seq), action, label))

    def after(self, delay: float, action: Callable[[], None], label: str = "") -> None:
        """Run ``action`` ``delay`` seconds from now."""
        self.at(self.clock.time() + delay, action, label)

    @property
    def pending(self) -> int:
        """Number of queued actions."""
        return len(self._queue)

    def run(
        self,
        *,
        until: float | None = None,
        stop: Callable[[], bool] | None = None,
        max_steps: int = 1_000_000,
    ) -> None:
        """Run actions until the queue is empty, ``until`` is reached or ``stop()``."""
        while self._queue:
            if stop is not None and stop():
                return
            item = self._queue[0]
            if until is not None and item.when > until:
                self.clock.advance_to(until)
                return
            heapq.heappop(self._queue)
            self.clock.advance_to(item.when)
            item.action()
            self.steps += 1
            if self.steps > max_steps:
                raise AssertionError("scheduler ran away (more than max_steps actions)")
        if until is not None:
            self.clock.advance_to(until)
