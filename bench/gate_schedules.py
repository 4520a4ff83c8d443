"""What one fault schedule of the gate's property test costs (tests/gate/test_gate_faults.py,
``test_every_fault_schedule_ends_with_hyperpods_verdict``). Run:
``python bench/gate_schedules.py [SCHEDULES]`` (default 40).

It runs the property test itself, as pytest would (hypothesis derandomized, so the same
schedules every time), for SCHEDULES schedules, and prints the CPU time (user + system of
this process: every thread of moto's engine included) and the wall time per schedule, and
what one schedule does on average: Lambda invocations, API calls of the handlers and state
machine steps. The suite's default count is ``SCHEDULES`` in the test module; the figures are
recorded in docs/performance.md.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DEFAULT_SCHEDULES = 40


def measure(schedules: int) -> dict[str, float]:
    """Run the property test for ``schedules`` schedules; per-schedule averages."""
    os.environ["HYPERPOD_GATE_SCHEDULES"] = str(schedules)
    os.environ["HYPERPOD_TEST_DEPTH"] = "deep"  # derandomized: the same schedules every time
    os.environ.setdefault("CDK_VALIDATION", "false")
    import pytest

    from tests.support.depth import load_hypothesis_profile

    load_hypothesis_profile()  # before the test's settings are made, as pytest does

    from tests.gate import test_gate_faults as module
    from tests.support import world as world_module

    totals = {"schedules": 0, "invocations": 0, "api_calls": 0, "steps": 0}
    close = world_module.GateWorld.close

    def counted(self: Any) -> None:  # counts each world once, without keeping it alive
        if not getattr(self, "_closed", False):
            totals["schedules"] += 1
            totals["invocations"] += len(self.invocations)
            totals["api_calls"] += len(self.sfn_calls) + sum(
                len(fake.attempts) for fake in (self.sim.fake, self.cfn.fake, self.sns.fake)
            )
            totals["steps"] += self.scheduler.steps
        close(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(world_module.GateWorld, "close", counted)
        # Warm-up outside the measurement: imports and the synthesis of the gate (cached).
        world_module.synthesized_gate(
            (world_module.Requirement("gpu", 16, 16),), 3 * 3600 + 1800, 60, True
        )
        cpu, wall = time.process_time(), time.perf_counter()
        module.test_every_fault_schedule_ends_with_hyperpods_verdict()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    runs = max(1, totals["schedules"])
    return {
        "schedules": float(runs),
        "cpu_per_schedule": cpu / runs,
        "wall_per_schedule": wall / runs,
        "invocations_per_schedule": totals["invocations"] / runs,
        "api_calls_per_schedule": totals["api_calls"] / runs,
        "steps_per_schedule": totals["steps"] / runs,
    }


def main() -> None:
    schedules = int(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_SCHEDULES
    found = measure(schedules)
    print(f"Gate property test: {found['schedules']:.0f} fault schedules")
    print(f"  CPU per schedule        {found['cpu_per_schedule']:8.3f} s")
    print(f"  wall per schedule       {found['wall_per_schedule']:8.3f} s")
    print(f"  Lambda invocations      {found['invocations_per_schedule']:8.1f} per schedule")
    print(f"  handler API calls       {found['api_calls_per_schedule']:8.1f} per schedule")
    print(f"  scheduler steps         {found['steps_per_schedule']:8.1f} per schedule")


if __name__ == "__main__":
    main()
