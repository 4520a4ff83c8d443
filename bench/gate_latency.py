"""Detection latency of the MinCount gate: from the moment the last gated group has its minimum
to the SUCCESS signal, in the simulator's virtual time, per poll interval, with and without
the EventBridge fast path. Run: ``python bench/gate_latency.py``.

Each cell runs the real handlers and the synthesized definition on moto's engine (tests/support)
for several arrival times of the capacity, spread over one poll interval, and reports the
median and the worst latency. Idle cost: while the gate has not signalled, the nodes that are
up wait; at an assumed USD 100 per ml.p5.48xlarge hour (a round figure: check your price),
16 of them cost USD 1600 an hour, USD 0.44 a second. Polling cost: Step Functions transitions
and Lambda invocations of a 3-hour wait at that interval (see bench/gate_cost.py).
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pytest
from gate_cost import TRANSITION_USD, lambda_usd  # bench/ is on sys.path when run

from tests.support.hyperpod_sim import GroupSpec, steps
from tests.support.world import GateWorld, Requirement

INTERVALS = (30, 60, 120)
"""Poll intervals measured (seconds)."""
ARRIVALS = 4
"""Capacity arrival times per interval, spread evenly over one interval."""
NODES, NODE_HOUR_USD = 16, 100.0
WAIT_SECONDS = 3 * 3600
ARM_AT = 60
BASE_ARRIVAL = 30 * 60


def latency(poll_interval: int, offset: float, *, event_bridge: bool) -> float:
    """Seconds from the minimum being reached to the first SUCCESS signal."""
    capacity = steps((0, 0), (BASE_ARRIVAL + offset, 16))
    groups = [
        GroupSpec("controller", 1, node_type="Controller", instance_type="ml.m5.12xlarge"),
        GroupSpec("gpu", 16, 16, capacity=capacity, retry_seconds=10.0),
    ]
    with pytest.MonkeyPatch.context() as mp:
        world = GateWorld(mp, groups, poll_interval=poll_interval, event_bridge=event_bridge)
        try:
            world.clock.advance(ARM_AT)
            world.arm_gate([Requirement("gpu", 16, 16)])
            world.run(until_elapsed=2 * 3600)
            reached = world.sim.min_reached_at("gpu")
            signals = world.signals()
            if reached is None or not signals:
                raise RuntimeError("the scenario did not play out")
            return signals[0].time - reached
        finally:
            world.close()


def polling_usd(poll_interval: int) -> float:
    """Transitions (3 per check) and invocations of a 3-hour wait at this interval."""
    checks = WAIT_SECONDS // poll_interval
    return 3 * checks * TRANSITION_USD + lambda_usd(checks)


def main() -> None:
    """Print median and worst latency per interval, with and without events."""
    idle_per_second = NODES * NODE_HOUR_USD / 3600
    print(
        f"Detection latency (virtual time), {ARRIVALS} capacity arrival times per interval; "
        f"idle cost at {NODES} x USD {NODE_HOUR_USD:.0f}/h"
    )
    header = (
        f"{'interval':>8} | {'events':>6} | {'median s':>8} | {'worst s':>7} | "
        f"{'idle USD (median)':>17} | {'polling USD / 3 h':>17}"
    )
    print(header)
    print("-" * len(header))
    for interval in INTERVALS:
        offsets = [interval * k / ARRIVALS + 7 for k in range(ARRIVALS)]
        for event_bridge in (False, True):
            found = [latency(interval, o, event_bridge=event_bridge) for o in offsets]
            median = statistics.median(found)
            print(
                f"{interval:>8} | {'on' if event_bridge else 'off':>6} | {median:>8.0f} | "
                f"{max(found):>7.0f} | {median * idle_per_second:>17.2f} | "
                f"{polling_usd(interval):>17.4f}"
            )


if __name__ == "__main__":
    main()
