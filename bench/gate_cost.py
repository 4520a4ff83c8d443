"""What a 3-hour MinCount wait costs: the gate's Step Functions loop vs the CDK Provider framework.

Runs the real arm/check handlers and the synthesized definition on moto's Step Functions
engine against the HyperPod simulator in virtual time (tests/support), for a minimum met at
2 h 59 min and for a minimum never met (HyperPod rolls back at 3 h), then prints API calls,
Lambda invocations, state transitions, detection latency and an estimated cost of everything
a wait costs.  Run: ``python bench/gate_cost.py``; ``--scale`` prints what the Running
confirmation costs at scale (two groups of 4,000 measured, HyperPod's maximum modelled).

Prices (us-east-1, list): Step Functions Standard USD 0.025 per 1,000 state transitions;
Lambda (Arm, what the gate runs on) USD 0.20 per million requests + USD 0.0000133334 per
GB-second, 128 MB and an assumed ~300 ms per invocation; CloudWatch custom metrics USD 0.30
per metric-month, prorated by the hour (3 per gated group, written while checks run); log
ingestion USD 0.50 per GB (Lambda output plus ~300 bytes of platform lines per invocation,
and the state machine's ALL-level log with execution data, estimated from its history); SNS
USD 0.50 per million messages; the opt-in dashboard USD 3 per month while the stack exists.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pytest

from tests.support import gate_defaults
from tests.support.hyperpod_sim import GroupSpec, constant, steps
from tests.support.world import Execution, GateWorld, Requirement

TRANSITION_USD = 0.025 / 1000
LAMBDA_REQUEST_USD = 0.20 / 1_000_000
LAMBDA_GB_SECOND_USD = 0.0000133334
METRIC_MONTH_USD = 0.30
HOURS_PER_MONTH = 730
LOG_GB_USD = 0.50
LAMBDA_PLATFORM_LOG_BYTES = 300
SNS_MESSAGE_USD = 0.50 / 1_000_000
DASHBOARD_MONTH_USD = 3.0
LAMBDA_MEMORY_GB = 128 / 1024
LAMBDA_SECONDS = 0.3
PROVIDER_POLL_SECONDS = 5
PROVIDER_MAX_SECONDS = 3600

MET_AT = 2 * 3600 + 59 * 60
"""The 'slow' case: the gated group reaches its minimum 2 h 59 min after cluster creation."""
ARM_AT = 59
"""The gate is armed 59 s after cluster creation, so polls run at 59 s + k minutes and both
the minimum (2:59:00) and the rollback (3:00:00) land 1 s after a poll: the measured
detection latency is the worst case for the 10-second simulator tick."""


def lambda_usd(invocations: float) -> float:
    """Request + duration cost of ``invocations`` 128 MB / 300 ms invocations."""
    per_call = LAMBDA_REQUEST_USD + LAMBDA_MEMORY_GB * LAMBDA_SECONDS * LAMBDA_GB_SECOND_USD
    return invocations * per_call


def _groups(scenario: str) -> list[GroupSpec]:
    controller = GroupSpec("controller", 1, node_type="Controller", instance_type="ml.m5.12xlarge")
    if scenario == "met":
        # controller healthy at 610 s; launch attempts every 60 s from 620 s; the attempt
        # at 10,100 s gets the capacity and the instances are healthy 640 s later: 2 h 59 min.
        gpu = GroupSpec(
            "gpu", 16, 16, capacity=steps((0, 4), (10_100, 16)), retry_seconds=60, boot_seconds=640
        )
    elif scenario == "never":
        gpu = GroupSpec("gpu", 16, 16, capacity=constant(10))
    else:
        raise ValueError(f"unknown scenario {scenario!r}")
    return [controller, gpu]


def measure(poll_interval_seconds: int | None = None, scenario: str = "met") -> dict[str, float]:
    """Run one full gate wait in virtual time and return its figures, with the gate's default
    timeout and (unless given) its default poll interval.

    ``scenario`` is ``"met"`` (minimum reached at 2 h 59 min) or ``"never"`` (HyperPod rolls
    the group back at 3 h and the gate fails).  Keys: ``describe_cluster``,
    ``list_cluster_nodes``, ``list_cluster_events``, ``describe_stack_resource``,
    ``lambda_invocations`` (poll + arm), ``state_transitions``, ``wait_seconds``,
    ``detection_latency_seconds`` (measured),
    ``worst_case_latency_seconds`` (bound: one interval), ``transitions_usd``, ``lambda_usd``,
    ``total_usd``, ``succeeded`` (1.0 or 0.0).
    """
    poll = gate_defaults.poll_seconds() if poll_interval_seconds is None else poll_interval_seconds
    with pytest.MonkeyPatch.context() as mp:
        world = GateWorld(mp, _groups(scenario), poll_interval=poll)
        try:
            return _measure(world, execution_of(world), scenario, poll)
        finally:
            world.close()


def execution_of(world: GateWorld) -> Execution:
    """Arm the gate the way CloudFormation does and return its execution."""
    world.clock.advance(ARM_AT)
    return world.execution(world.arm_gate([Requirement("gpu", 16, 16)]))


def _measure(
    world: GateWorld, execution: Execution, scenario: str, poll_interval_seconds: int
) -> dict[str, float]:
    world.run(until_elapsed=6 * 3600)
    (signal,) = world.signals()
    event_time = (
        world.sim.min_reached_at("gpu") if scenario == "met" else world.sim.rolled_back_at("gpu")
    )
    if event_time is None:
        raise RuntimeError("the scenario did not play out")
    if scenario == "met" and round(event_time - world.clock.start) != MET_AT:
        raise RuntimeError(f"minimum met at {event_time - world.clock.start} s, not {MET_AT}")
    calls = world.sim.calls
    invocations = len(world.invocations)
    transitions = execution.transitions
    hours = max(1.0, (signal.time - world.clock.start) / 3600)
    history = world.sfn_client.get_execution_history(executionArn=execution.arn, maxResults=1000)[
        "events"
    ]
    log_bytes = sum(len(i.stdout) + LAMBDA_PLATFORM_LOG_BYTES for i in world.invocations)
    log_bytes += sum(len(json.dumps(e, default=str)) for e in history)
    figures = {
        "describe_cluster": float(calls.get("DescribeCluster", 0)),
        "list_cluster_nodes": float(calls.get("ListClusterNodes", 0)),
        "list_cluster_events": float(calls.get("ListClusterEvents", 0)),
        "describe_stack_resource": float(world.cfn.fake.count("DescribeStackResource")),
        "lambda_invocations": float(invocations),
        "state_transitions": float(transitions),
        "wait_seconds": signal.time - world.clock.start - ARM_AT,
        "detection_latency_seconds": signal.time - event_time,
        "worst_case_latency_seconds": float(poll_interval_seconds),
        "transitions_usd": transitions * TRANSITION_USD,
        "lambda_usd": lambda_usd(invocations),
        "metrics_usd": 3 * METRIC_MONTH_USD * hours / HOURS_PER_MONTH,
        "logs_usd": log_bytes / 1e9 * LOG_GB_USD,
        "sns_usd": len(world.sns.messages) * SNS_MESSAGE_USD,
        "succeeded": 1.0 if execution.status == "SUCCEEDED" else 0.0,
    }
    figures["total_usd"] = (
        sum(figures[k] for k in ("transitions_usd", "lambda_usd", "metrics_usd", "logs_usd"))
        + figures["sns_usd"]
    )
    return figures


def provider_framework(
    poll_seconds: int = PROVIDER_POLL_SECONDS, covered_seconds: int = PROVIDER_MAX_SECONDS
) -> dict[str, float]:
    """The CDK Provider framework polling ``isComplete`` until its 1-hour maximum.

    Per poll: one retry of the waiter task (1 state transition), two Lambda invocations
    (the framework's isComplete function invokes the user's), one DescribeCluster.  It
    cannot wait 3 hours: a custom resource must answer within 1 hour.
    """
    polls = covered_seconds // poll_seconds
    invocations = 2 * polls + 2  # + onEvent (framework + user)
    transitions = polls + 2
    return {
        "describe_cluster": float(polls),
        "list_cluster_nodes": 0.0,
        "list_cluster_events": 0.0,
        "describe_stack_resource": 0.0,
        "lambda_invocations": float(invocations),
        "state_transitions": float(transitions),
        "wait_seconds": float(covered_seconds),
        "detection_latency_seconds": float(poll_seconds),
        "worst_case_latency_seconds": float(poll_seconds),
        "transitions_usd": transitions * TRANSITION_USD,
        "lambda_usd": lambda_usd(invocations),
        "metrics_usd": 0.0,
        "logs_usd": 0.0,
        "sns_usd": 0.0,
        "total_usd": transitions * TRANSITION_USD + lambda_usd(invocations),
        "succeeded": 0.0,
    }


ROWS: list[tuple[str, str, str]] = [
    ("SageMaker DescribeCluster calls", "describe_cluster", "{:.0f}"),
    ("SageMaker ListClusterNodes calls", "list_cluster_nodes", "{:.0f}"),
    ("SageMaker ListClusterEvents calls", "list_cluster_events", "{:.0f}"),
    ("CloudFormation DescribeStackResource", "describe_stack_resource", "{:.0f}"),
    ("Lambda invocations", "lambda_invocations", "{:.0f}"),
    ("Step Functions state transitions", "state_transitions", "{:.0f}"),
    ("Wait covered (h:mm)", "wait_seconds", "hm"),
    ("Detection latency, measured (s)", "detection_latency_seconds", "{:.0f}"),
    ("Detection latency, worst case (s)", "worst_case_latency_seconds", "{:.0f}"),
    ("Step Functions cost (USD)", "transitions_usd", "{:.4f}"),
    ("Lambda cost, Arm (USD)", "lambda_usd", "{:.4f}"),
    ("Custom metrics cost (USD)", "metrics_usd", "{:.4f}"),
    ("Log ingestion cost (USD)", "logs_usd", "{:.4f}"),
    ("SNS cost (USD)", "sns_usd", "{:.6f}"),
    ("Total cost of the wait (USD)", "total_usd", "{:.4f}"),
]


def _cell(value: float, fmt: str) -> str:
    if fmt == "hm":
        minutes = round(value / 60)
        return f"{minutes // 60}:{minutes % 60:02d}"
    return fmt.format(value)


def format_table(columns: Mapping[str, Mapping[str, float]]) -> str:
    """Render ``{column title: figures}`` as a fixed-width text table."""
    names = list(columns)
    label_width = max(len(r[0]) for r in ROWS)
    widths = [max(len(n), 12) for n in names]
    lines = [
        " " * label_width
        + " | "
        + " | ".join(n.rjust(w) for n, w in zip(names, widths, strict=True))
    ]
    lines.append("-" * len(lines[0]))
    for label, key, fmt in ROWS:
        cells = [_cell(columns[n][key], fmt).rjust(w) for n, w in zip(names, widths, strict=True)]
        lines.append(label.ljust(label_width) + " | " + " | ".join(cells))
    return "\n".join(lines)


def main() -> None:
    """Print the comparison table."""
    columns = {
        "gate, met 2:59": measure(scenario="met"),
        "gate, never met": measure(scenario="never"),
        "Provider 5 s, 1 h max": provider_framework(),
    }
    print(
        f"MinCount gate (Step Functions Wait loop, {gate_defaults.poll_seconds()} s poll) vs CDK "
        "Provider framework "
        "(5 s isComplete polling)"
    )
    print(format_table(columns))
    print(
        "Provider framework: a custom resource must answer within 1 hour, so it cannot "
        "cover HyperPod's 3-hour MinCount window (aws-cdk #24974); figures are for its "
        "1-hour maximum."
    )
    print(
        f"Lambda: 128 MB Arm, ~{LAMBDA_SECONDS * 1000:.0f} ms per invocation assumed; prices "
        f"are us-east-1 list prices. The opt-in dashboard adds USD {DASHBOARD_MONTH_USD:.2f} "
        "per month while the stack exists."
    )


PAGE_SECONDS = 0.9
"""What one ListClusterNodes page takes at scale (measured; tests/gate/test_gate_scale.py)."""
MAX_GROUP, MAX_GROUPS = 6758, 100
"""HyperPod's limits: nodes in a group (``InstanceCount`` 0..6758), and groups a cluster."""


def measure_scale(groups: int = 2, nodes: int = 4000) -> dict[str, float]:
    """The Running confirmation of ``groups`` gated groups of ``nodes`` each, at
    :data:`PAGE_SECONDS` a ListClusterNodes page: pages, checks, and the seconds from every
    node Running to the READY signal."""
    names = [f"gpu-{index}" for index in range(groups)]
    controller = GroupSpec("controller", 1, node_type="Controller", instance_type="ml.m5.12xlarge")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("tests.support.moto_sfn.PARK_TIMEOUT", 900.0)  # ~76 real pages a check
        world = GateWorld(
            mp,
            [controller, *(GroupSpec(name, nodes, nodes) for name in names)],
            timeout_seconds=6 * 3600,
            sim_options={"latency": {"ListClusterNodes": PAGE_SECONDS}},
        )
        try:
            world.clock.advance(ARM_AT)
            execution = world.execution(world.arm_gate())
            world.run(until_elapsed=7 * 3600)
            (signal,) = world.signals()
            running = max(world.sim.min_running_at(name) or 0.0 for name in names)
            confirming = [
                i
                for i in world.invocations
                if isinstance(i.result, dict) and i.result.get("status") == "CONFIRMING"
            ]
            pages = float(world.sim.calls.get("ListClusterNodes", 0))
            per_check = [
                int(found.group(1))
                for i in confirming
                if (found := re.search(r"\((\d+) page\(s\) read\)", str(i.result["reason"])))
            ]
            return {
                "pages": pages,
                "confirming_checks": float(len(confirming)),
                "pages_per_check": min(per_check) if per_check else pages,
                "seconds_to_ready": signal.time - running,
                "succeeded": 1.0 if execution.status == "SUCCEEDED" else 0.0,
            }
        finally:
            world.close()


def scale_model(pages_per_check: float) -> dict[str, float]:
    """HyperPod's maximum (100 groups of 6,758), from the pages one check reads."""
    pages = MAX_GROUPS * -(-MAX_GROUP // 100)
    checks = -(-pages // int(pages_per_check))
    return {
        "pages": float(pages),
        "checks": float(checks + 1),
        "minutes": checks * (pages_per_check * PAGE_SECONDS + 4 * PAGE_SECONDS) / 60,
    }


def main_scale(*, maximum: bool = False) -> None:
    """Print the confirmation's cost at scale (``python bench/gate_cost.py --scale``; with
    ``--max`` also HyperPod's maximum, 99 gated groups of 6,758 besides the controller,
    measured: minutes of real time)."""
    if maximum:
        top = measure_scale(MAX_GROUPS - 1, MAX_GROUP)
        print(
            f"{MAX_GROUPS - 1} groups of {MAX_GROUP:,} at {PAGE_SECONDS} s a page (measured): "
            f"{top['pages']:.0f} pages, {top['confirming_checks']:.0f} CONFIRMING check(s) + 1, "
            f"READY {top['seconds_to_ready'] / 60:.0f} min after every node was Running"
        )
    measured = measure_scale()
    print(
        f"2 groups of 4,000 at {PAGE_SECONDS} s a page: {measured['pages']:.0f} pages, "
        f"{measured['confirming_checks']:.0f} CONFIRMING check(s) + 1, READY "
        f"{measured['seconds_to_ready']:.0f} s after every node was Running"
    )
    model = scale_model(measured["pages_per_check"])
    print(
        f"100 groups of 6,758 (model, {measured['pages_per_check']:.0f} pages a check): "
        f"{model['pages']:.0f} pages in {model['checks']:.0f} checks, about "
        f"{model['minutes']:.0f} minutes after every node is Running"
    )


if __name__ == "__main__":
    if "--scale" in sys.argv[1:]:
        main_scale(maximum="--max" in sys.argv[1:])
    else:
        main()
