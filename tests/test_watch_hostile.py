"""``watch`` against answers no honest AWS sends, through real boto3 clients and the simulator on
127.0.0.1: bodies that are ``{}``, not JSON, truncated or of the wrong shape are "unknown" for
the refresh (a note, the verdict keeps waiting, exit 2 only when they persist), never a gate
verdict; text from the server never reaches the output with a control character, an escape
sequence or a bidi control in it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from aws_cdk.cx_api import CloudAssembly
from rich.console import Console

from hyperpod_constructs._core.sanitize import printable
from hyperpod_constructs.tools.watch import screen
from hyperpod_constructs.tools.watch.model import (
    EventView,
    GateView,
    GroupView,
    Refresh,
    printable_view,
)
from tests.support.hyperpod_sim import constant, linear
from tests.support.watch_deployment import STACK, Deployment, WatchRun

INTERVAL = 300
HOSTILE = "boom\x1b]0;owned\x07\x1b[2J\x9b31m\u202egnp.exe\x85[bold red]x[/]\ud800"
"""An OSC title, a clear-screen CSI, a C1 CSI, a bidi override, NEL, rich markup and a lone
surrogate."""


@pytest.fixture(scope="module")
def cdk_out(example_assembly: CloudAssembly) -> str:
    return str(example_assembly.directory)


@pytest.fixture(scope="module")
def template(example_templates: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return example_templates[STACK]


def _json_edit(edit: Callable[[dict[str, Any]], None]) -> Callable[[bytes], bytes]:
    def rewrite(body: bytes) -> bytes:
        document = json.loads(body)
        edit(document)
        return json.dumps(document).encode()

    return rewrite


def _groups_as(value: object) -> Callable[[bytes], bytes]:
    return _json_edit(lambda d: d.update(InstanceGroups=value))


BAD_DESCRIBE_CLUSTER: dict[str, Callable[[bytes], bytes]] = {
    "empty-object": lambda body: b"{}",
    "not-json": lambda body: b"<html>502 Bad Gateway</html>",
    "truncated": lambda body: body[: len(body) // 2],
    "a-list": lambda body: b"[]",
    "groups-a-string": _groups_as("x"),
    "groups-of-numbers": _groups_as([1, 2]),
    "count-a-string": _json_edit(
        lambda d: [g.update(CurrentCount="many") for g in d["InstanceGroups"]]
    ),
    "no-status": _json_edit(lambda d: d.pop("ClusterStatus")),
    "bad-creation-time": _json_edit(lambda d: d.update(CreationTime="yesterday")),
}
BAD_EVENTS: dict[str, Callable[[bytes], bytes]] = {
    "events-a-string": _json_edit(lambda d: d.update(Events="x")),
    "event-time-garbage": _json_edit(
        lambda d: [e.update(EventTime={"t": 1}) for e in d.get("Events", [])]
    ),
    "events-not-json": lambda body: b"{",
}


def _watch(
    deployment: Deployment,
    cdk_out: str,
    operation: str,
    corrupt: Callable[[bytes], bytes],
    *,
    start: float,
    end: float | None,
    extra: tuple[str, ...] = ("--json",),
) -> WatchRun:
    clock = deployment.world.clock
    hits: list[float] = []

    def rewrite(service: str, called: str, body: bytes) -> bytes:
        now = clock.time() - clock.start
        if called == operation and now >= start and (end is None or now < end):
            hits.append(now)
            return corrupt(body)
        return body

    with deployment.server(rewrite=rewrite) as endpoint:
        run = deployment.watch(cdk_out, *extra, "--interval", str(INTERVAL), endpoint=endpoint.url)
    assert endpoint.errors == []
    assert hits, "the corrupt answer was served"
    assert "Traceback" not in run.stderr
    return run


@pytest.mark.deep(sample=3)
@pytest.mark.parametrize(
    ("operation", "corrupt"),
    [
        *(("DescribeCluster", c) for c in BAD_DESCRIBE_CLUSTER.values()),
        *(("ListClusterEvents", c) for c in BAD_EVENTS.values()),
    ],
    ids=[*BAD_DESCRIBE_CLUSTER, *BAD_EVENTS],
)
def test_a_burst_of_unreadable_answers_is_unknown_not_a_verdict(
    monkeypatch: pytest.MonkeyPatch,
    cdk_out: str,
    template: dict[str, Any],
    operation: str,
    corrupt: Callable[[bytes], bytes],
) -> None:
    """Ten minutes of bad answers in the middle of a ramp to ready: those refreshes say why
    in a note and keep waiting; the run ends ready (exit 0)."""
    deployment = Deployment(monkeypatch, template, linear(0, 30, 16))
    run = _watch(deployment, cdk_out, operation, corrupt, start=1200, end=1200 + 600)

    assert run.code == 0, run.stderr
    noted = [r for r in run.refreshes if r["notes"]]
    assert noted, "a refresh with an unreadable answer says so"
    assert all(f"sagemaker:{operation}" in " ".join(r["notes"]) for r in noted)
    assert all(r["verdict"] == "waiting" and r["exit_code"] is None for r in noted)
    assert "failed" not in {r["verdict"] for r in run.refreshes}
    assert run.refreshes[-1]["verdict"] == "ready"


def test_answers_that_stay_unreadable_end_with_exit_2_and_the_reason(
    monkeypatch: pytest.MonkeyPatch, cdk_out: str, template: dict[str, Any]
) -> None:
    deployment = Deployment(monkeypatch, template, linear(0, 6, 16))
    run = _watch(deployment, cdk_out, "DescribeCluster", lambda body: b"{}", start=1800, end=None)

    assert run.code == 2
    (line,) = run.stderr.splitlines()
    assert line.startswith("error: AWS reads kept failing for 6")
    assert (
        "sagemaker:DescribeCluster fsdp-train: an answer that does not fit AWS's model: "
        "ClusterArn: missing; AWS requires it" in line
    )
    assert "failed" not in {r["verdict"] for r in run.refreshes}


def _hostile_events(body: bytes) -> bytes:
    document = json.loads(body)
    for event in document.get("Events", []):
        event["Description"] = HOSTILE
    return json.dumps(document).encode()


@pytest.mark.parametrize("mode", ["json", "plain"])
def test_server_text_reaches_the_output_escaped(
    monkeypatch: pytest.MonkeyPatch, cdk_out: str, template: dict[str, Any], mode: str
) -> None:
    """The cluster's FailureMessage and every event description carry escape sequences: the
    JSON lines stay JSON with the text escaped, the plain lines and the ``failed:`` line on
    stderr hold no control character."""
    deployment = Deployment(monkeypatch, template, constant(16), controller_failure=HOSTILE)
    extra = ("--json",) if mode == "json" else ()
    run = _watch(
        deployment, cdk_out, "ListClusterEvents", _hostile_events, start=0, end=None, extra=extra
    )

    assert run.code == 1
    for text in (run.stdout, run.stderr):
        assert all(char.isprintable() for char in text.replace("\n", ""))
    (failed,) = run.stderr.splitlines() if mode == "json" else run.stdout.splitlines()[-1:]
    assert failed.startswith("failed: ")
    assert "boom\\x1b]0;owned\\x07\\x1b[2J\\x9b31m\\u202egnp.exe" in failed
    if mode == "json":
        assert run.refreshes[-1]["failure_message"] == printable(HOSTILE)


def test_event_descriptions_reach_json_escaped(
    monkeypatch: pytest.MonkeyPatch, cdk_out: str, template: dict[str, Any]
) -> None:
    deployment = Deployment(monkeypatch, template, linear(0, 30, 16))
    run = _watch(deployment, cdk_out, "ListClusterEvents", _hostile_events, start=0, end=None)

    assert run.code == 0, run.stderr
    assert all(char.isprintable() for char in run.stdout.replace("\n", ""))
    events = [
        e for r in run.refreshes for g in r["groups"] for e in [*g["events"], *r["cluster_events"]]
    ]
    assert events, "the hostile events were shown"
    assert {e["description"] for e in events} == {printable(" ".join(HOSTILE.split()))}


def test_the_terminal_view_shows_hostile_names_as_text() -> None:
    """The rich view of a refresh whose every string is hostile: no OSC, no clear-screen, no
    bidi control, and rich markup in a name is printed, not applied."""
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    event = EventView(moment, HOSTILE, HOSTILE)
    group = GroupView(HOSTILE, HOSTILE, 1, 2, 3, None, None, False, False, None, events=(event,))
    refresh = printable_view(
        Refresh(
            time=moment,
            elapsed=moment - moment,
            stack_name=HOSTILE,
            stack_status=HOSTILE,
            cluster=HOSTILE,
            cluster_status=HOSTILE,
            failure_message=HOSTILE,
            groups=(group,),
            cluster_events=(event,),
            gate=GateView("failed", HOSTILE, HOSTILE),
            verdict="failed",
            reason=HOSTILE,
            exit_code=1,
            notes=(HOSTILE,),
        )
    )
    stream = io.StringIO()
    Console(file=stream, force_terminal=True, width=400, color_system="truecolor").print(
        screen.render(refresh)
    )
    shown = stream.getvalue()
    assert "\x1b]" not in shown and "\x1b[2J" not in shown
    assert not any(char in shown for char in "\x9b\u202e\x85\x07")
    assert "[bold red]x[/]" in shown
    plain = screen.status_line(refresh)
    assert all(char.isprintable() for char in plain)


def _reason_with_a_control_character(body: bytes) -> bytes:
    """CloudFormation's XML answer with the failure reason AWS might carry: a raw control
    character, which no XML parser accepts (botocore's ``ResponseParserError``)."""
    assert b"</StackStatus>" in body, body[:200]
    return body.replace(
        b"</StackStatus>",
        b"</StackStatus><StackStatusReason>WaitCondition failed: \x01 signal</StackStatusReason>",
        1,
    )


@pytest.mark.parametrize("operation", ["DescribeStacks", "DescribeStackResource"])
def test_an_unreadable_stack_answer_is_never_ready(
    monkeypatch: pytest.MonkeyPatch, cdk_out: str, template: dict[str, Any], operation: str
) -> None:
    """From 20 minutes on CloudFormation's answers (which say whether the gate failed)
    cannot be read; from 25 minutes on every group is at its target. No refresh says "ready"
    (today's main said it at 25 minutes, exit 0); the run ends with exit 2 after 10 minutes of
    unreadable answers."""
    deployment = Deployment(monkeypatch, template, constant(16))
    corrupt = (
        _reason_with_a_control_character
        if operation == "DescribeStacks"
        else lambda body: body.replace(b"</ResourceStatus>", b"\x01</ResourceStatus>", 1)
    )
    run = _watch(deployment, cdk_out, operation, corrupt, start=1200, end=None)

    assert run.code == 2, [(r["verdict"], r["reason"]) for r in run.refreshes]
    assert "ready" not in {r["verdict"] for r in run.refreshes}
    assert all(r["exit_code"] is None for r in run.refreshes[:-1])
    assert any("not judged ok" in r["reason"] for r in run.refreshes), [
        (r["verdict"], r["reason"]) for r in run.refreshes
    ]
    (line,) = run.stderr.splitlines()
    assert line.startswith("error: AWS reads kept failing for ")
    assert f"cloudformation:{operation}" in line and "unreadable answer" in line
