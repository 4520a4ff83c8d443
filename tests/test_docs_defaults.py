"""The docs state the readiness gate's defaults as the options model has them.

Every statement of ``docs/*.md`` (and of the options' docstrings, which the API pages show) that
depends on a default of ``MinCountGateOptions()`` is a :class:`Claim` here, its text computed
from the model: changing a default is one edit in ``hyperpod_constructs/gate/options.py``, and
then each stale statement fails :func:`test_each_claim_is_stated`, naming its page and what it
should say now. :func:`test_every_statement_of_a_default_is_a_claim` finds the statements
(derived over the model's fields: a sentence or table row that names an option and holds its
default's value), so a new one cannot be written without a claim. docs/cli.md's outputs are
compared with the real ``summary`` of the example app.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Duration
from aws_cdk.cx_api import CloudAssembly

from hyperpod_constructs.__main__ import main
from hyperpod_constructs._gate.resources import LOG_RETENTION_DAYS, RETENTION_DAYS
from hyperpod_constructs.gate.options import (
    HYPERPOD_MIN_COUNT_WINDOW,
    MAX_POLL_MINUTES,
    MIN_POLL_SECONDS,
    max_gate_timeout_seconds,
)
from tests.support.gate_defaults import default_values, defaults, human
from tests.support.prose import prose

ROOT = Path(__file__).resolve().parent.parent
OPTIONS_MODULE = "hyperpod_constructs/gate/options.py"
PAGES = [*(f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md"))), OPTIONS_MODULE]


ARMED_AT = 1764448200
"""When docs/gate-runtime.md's example execution input was armed."""


@dataclass(frozen=True)
class Claim:
    """A statement of ``page`` that depends on the default of ``option``: ``text`` (computed
    from the model) must be in the page, whitespace aside; ``what`` says where, and how to
    renew it when it is measured rather than written."""

    page: str
    option: str
    text: str
    what: str


def claims() -> list[Claim]:
    """Every statement of a default, computed from the options model."""
    options = defaults()
    poll, timeout = int(options.poll_interval.to_seconds()), int(options.timeout.to_seconds())
    namespace = options.metrics_namespace
    slack = timeout - int(HYPERPOD_MIN_COUNT_WINDOW.to_seconds())
    longest = human(max_gate_timeout_seconds(poll))
    allowed = f"{human(MIN_POLL_SECONDS)} .. {human(MAX_POLL_MINUTES * 60)}"
    gate, runtime, cli, updates = (
        "docs/gate.md",
        "docs/gate-runtime.md",
        "docs/cli.md",
        ("docs/safe-updates.md"),
    )
    cost = "cost table, measured by python bench/gate_cost.py at this interval: run it again"
    latency = "latency table, measured by python bench/gate_latency.py: run it again"
    topics = "| `notification_topic` / `create_notification_topic` | none /"
    worst = "| worst-case detection latency, loop only |"
    loop_input = f'"armedAt": {ARMED_AT}, "deadline": {ARMED_AT + timeout}, "pollIntervalSeconds"'
    gives_up = f"(HyperPod's window: 3 h; the gate gives up after {human(timeout)})"
    summary_gate = f"timeout {human(timeout)}; poll every {human(poll)};"
    # log_retention's default is None: the construct then keeps LOG_RETENTION_DAYS
    (retention,) = [n for n, days in RETENTION_DAYS.items() if days == LOG_RETENTION_DAYS]
    retention = retention.lower().replace("_", " ")  # ONE_MONTH -> one month
    return [
        Claim(gate, "poll_interval", f"loop every poll interval (default {poll} s)", "diagram"),
        Claim(gate, "enabled", f"| `enabled` | `{options.enabled}` |", "options table"),
        Claim(gate, "timeout", f"| `timeout` | {human(timeout)} |", "options table"),
        Claim(gate, "timeout", f"3 h plus {human(slack)} of slack", "options table"),
        Claim(gate, "poll_interval", f"({longest} with the default interval:", "options table"),
        Claim(gate, "poll_interval", f"| `poll_interval` | {human(poll)} | {allowed};", "table"),
        Claim(
            gate,
            "create_notification_topic",
            f"{topics} `{options.create_notification_topic}`",
            "table",
        ),
        Claim(gate, "dashboard", f"| `dashboard` | `{options.dashboard}` |", "options table"),
        Claim(gate, "metrics_namespace", f"| `metrics_namespace` | `{namespace}` |", "table"),
        Claim(gate, "timeout", f"deployed '{timeout}'", "an arm refusal's example"),
        Claim(gate, "poll_interval", f"(default {poll} s poll;", cost),
        Claim(gate, "poll_interval", f"{worst} {poll} s | {poll} s |", cost),
        Claim(gate, "poll_interval", f"| {poll} s (default) | lost (loop only) |", latency),
        Claim(gate, "poll_interval", f"| {poll} s (default) | delivered |", latency),
        Claim(gate, "poll_interval", f"The default stays {poll} s", "latency section"),
        Claim(runtime, "metrics_namespace", f"(default `{namespace}`)", "arm properties"),
        Claim(runtime, "metrics_namespace", f'"metricsNamespace": "{namespace}"', "input"),
        Claim(runtime, "timeout", f"deployed '{timeout}'", "an arm refusal's example"),
        Claim(runtime, "timeout", f"{loop_input}: {poll},", "the loop's input"),
        Claim(gate, "log_retention", f"{retention} retention)", "cost of logs"),
        Claim(
            "docs/guardrails.md", "log_retention", f"(kept {retention.replace('one ', 'a ')})", ""
        ),
        Claim(OPTIONS_MODULE, "log_retention", f"Default: {retention}.", "docstring"),
        Claim("docs/watch.md", "poll_interval", f"poll interval (default {poll} s)", "gate"),
        Claim(updates, "timeout", f"({human(timeout)} by default;", "the gate's wait"),
        Claim(updates, "timeout", gives_up, "plan's outputs"),
        Claim(cli, "timeout", summary_gate, "summary's output (checked by running it, below)"),
        Claim(cli, "timeout", f'"timeout_seconds": {timeout},', "summary's JSON (run below)"),
        Claim(cli, "poll_interval", f'"poll_interval_seconds": {poll},', "summary's JSON"),
        Claim(cli, "metrics_namespace", f'"metrics_namespace": "{namespace}",', "summary JSON"),
        Claim(OPTIONS_MODULE, "timeout", f"Default: {human(timeout)}.", "docstring"),
        Claim(OPTIONS_MODULE, "timeout", f"the {slack // 60} minutes are slack", "docstring"),
        Claim(
            OPTIONS_MODULE, "poll_interval", f"({longest} with the default poll interval:", "doc"
        ),
        Claim(
            OPTIONS_MODULE, "poll_interval", f"Default: {human(poll)} (allowed {allowed})", "doc"
        ),
        Claim(OPTIONS_MODULE, "enabled", f"Default: {options.enabled}.", "docstring"),
        Claim(OPTIONS_MODULE, "dashboard", f"Default: {options.dashboard} (opt-in", "docstring"),
        Claim(OPTIONS_MODULE, "metrics_namespace", f"Default: ``{namespace}``.", "docstring"),
    ]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _text(page: str) -> str:
    return prose(ROOT / page)


def test_every_option_with_a_stated_default_is_a_field_of_the_model() -> None:
    assert {claim.option for claim in claims()} <= set(default_values())
    assert {claim.page for claim in claims()} <= set(PAGES)


@pytest.mark.parametrize("claim", claims(), ids=lambda c: f"{c.page}:{c.text[:40]}")
def test_each_claim_is_stated(claim: Claim) -> None:
    assert _flat(claim.text) in _flat(_text(claim.page)), (
        f"{claim.page} ({claim.what}) is stale: it should say {claim.text!r}, from the default "
        f"of MinCountGateOptions.{claim.option}"
    )


# -- the statements, found ------------------------------------------------------------------


NOT_A_DEFAULT = {
    ("docs/gate-runtime.md", "`confirm.CONFIRM_MIN_SECONDS` = 60 s"): "a constant of the check",
    ("docs/gate-runtime.md", "`confirm.CONFIRM_MIN_SECONDS` (60 s)"): "a constant of the check",
    ("docs/gate-runtime.md", "61,656 s at 60 s"): "the longest timeout at one of three intervals",
}
"""Statements that hold a default's value and name its option, but state something else
(``(page, text)`` -> what they state)."""


def _renderings(value: Any) -> list[str]:
    """How a page may write this default: a duration as ``3 h 30 min``, ``12600 s``, ``12600``
    and ``3 hours 30 minutes``; a flag as ``True``; a text as itself."""
    if isinstance(value, Duration):
        seconds = int(value.to_seconds())
        return [human(seconds), f"{seconds} s", str(seconds), value.to_human_string()]
    if isinstance(value, bool):
        return [f"`{value}`", f"Default: {value}"]
    return [value] if isinstance(value, str) else []


def _subjects(option: str) -> str:
    """A statement is about ``option`` if it names it (``poll_interval``, ``poll interval``,
    ``PollIntervalSeconds``, ``poll every``); a timeout also as ``gives up after``."""
    words = option.split("_")
    names = ["_".join(words), " ".join(words), "".join(w.capitalize() for w in words), words[0]]
    if option == "timeout":
        names.append("gives up")
    return "|".join(re.escape(name) for name in names)


def _units(text: str) -> Iterator[str]:
    """Each line of a code block or table, each sentence of the prose (a paragraph or list item
    ends one)."""
    for number, part in enumerate(re.split(r"(```.*?```)", text, flags=re.DOTALL)):
        if number % 2:  # a fenced code block
            yield from part.splitlines()
            continue
        for block in re.split(r"\n\s*\n|\n(?=\s*(?:[-*#>|]|\d+\.))", part):
            if block.lstrip().startswith("|"):
                yield from block.splitlines()
            else:
                yield from re.split(r"(?<=[.;])\s+(?=[A-Z(`])", _flat(block))


def _statements() -> Iterator[tuple[str, str, str]]:
    """``(page, option, statement)`` for each statement that names an option and holds its
    default's value."""
    for option, value in default_values().items():
        renderings = _renderings(value)
        if not renderings:
            continue  # None: the docs describe it in words ("none", "the VPC's private subnets")
        value_pattern = "|".join(rf"(?<![\w.,/]){re.escape(r)}(?![\w/])" for r in renderings)
        subject = re.compile(_subjects(option), re.IGNORECASE)
        for page in PAGES:
            for unit in _units(_text(page)):
                if re.search(value_pattern, unit) and (
                    subject.search(unit) or isinstance(value, str)
                ):
                    yield page, option, _flat(unit)


def test_every_statement_of_a_default_is_a_claim() -> None:
    stated = {(claim.page, _flat(claim.text)) for claim in claims()}
    unclaimed = [
        f"{page}: {statement!r} (MinCountGateOptions.{option})"
        for page, option, statement in _statements()
        if not any(page == p and text in statement for p, text in stated)
        and not any(page == p and text in statement for p, text in NOT_A_DEFAULT)
    ]
    assert not unclaimed, "a default stated without a Claim in this file:\n" + "\n".join(unclaimed)


# -- docs/cli.md: the outputs, run ----------------------------------------------------------


def _block_after(text: str, command: str, fence: str = "```") -> str:
    start = text.index(command) + len(command)
    return text[start : text.index(fence, start)]


def test_the_summary_outputs_in_cli_md_are_what_summary_prints(
    example_assembly: CloudAssembly, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each ``gate:`` line of docs/cli.md's summary of the example app is the line ``summary``
    prints for that cluster, and its JSON's ``gate`` is the real one."""
    doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert main(["summary", str(example_assembly.directory)]) == 0
    real = capsys.readouterr().out

    def gate_lines(output: str) -> dict[str, str]:
        return {
            block.split()[0]: next(line for line in block.splitlines() if "  gate:" in line)
            for block in output.split("\n\n")
            if "  gate:" in block and "(stack " in block
        }

    documented = gate_lines(_block_after(doc, "$ python -m hyperpod_constructs summary\n"))
    assert documented, "docs/cli.md shows no summary of the example app"
    actual = gate_lines(real)
    assert {name: actual.get(name) for name in documented} == documented

    assert main(["summary", str(example_assembly.directory), "--json"]) == 0
    clusters = {c["stack"]: c for c in json.loads(capsys.readouterr().out)["clusters"]}
    shown = json.loads(_block_after(doc, "(`--json`; the other clusters left out):\n\n```json"))
    for cluster in shown["clusters"]:
        assert cluster["gate"] == clusters[cluster["stack"]]["gate"], cluster["stack"]
