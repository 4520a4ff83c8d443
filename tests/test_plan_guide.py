"""The plans shown in docs/safe-updates.md: the FSDP example (examples/fsdp.py) as deployed,
and the plan of each typical edit of it, synthesized by the library and planned by ``plan``
when the tests run, so the guide shows what the command prints today.

``PLAN_GUIDE_UPDATE=1 pytest tests/test_plan_guide.py`` rewrites the guide's plan blocks."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from examples.fsdp import LIFECYCLE_DIR, FsdpTrainingStack
from hyperpod_constructs import HyperPodInstanceType
from hyperpod_constructs.tools.plan import RULES, Effect, plan_stack, render_text
from tests.conftest import new_app

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "safe-updates.md"
BLOCK = re.compile(
    r"(<!-- plan: (?P<edit>[a-z-]+) -->\n```text\n)(?P<body>.*?)(```\n<!-- /plan -->)", re.S
)
RULES_BLOCK = re.compile(r"(<!-- rules -->\n)(?P<body>.*?)(<!-- /rules -->)", re.S)
BASELINE = "main.template.json"

EDITS: dict[str, Callable[[Path], dict[str, Any]]] = {
    "scale-out": lambda _: {"gpu_nodes": 24},
    "scale-in": lambda _: {"gpu_nodes": 8},
    "lifecycle": lambda scripts: {"lifecycle_dir": str(scripts)},
    "rename-group": lambda _: {"gpu_group": "gpu-a"},
    "instance-type": lambda _: {"gpu_instance_type": HyperPodInstanceType.ML_P5EN_48XLARGE},
    "rename-cluster": lambda _: {"cluster_name": "fsdp-train-2"},
}
"""Edit name -> the FsdpTrainingStack arguments that make it (given a lifecycle folder with one
changed script)."""
EXPECTED_EXIT = {
    "scale-out": 0,
    "scale-in": 3,
    "lifecycle": 0,
    "rename-group": 3,
    "instance-type": 3,
    "rename-cluster": 3,
}


def without_hashes(text: str) -> str:
    """Asset hashes as ``<asset-hash-N>`` in order of appearance (as the snapshots write them):
    the guide shows that the upload changes, not this machine's hash."""
    seen: dict[str, str] = {}

    def placeholder(match: re.Match[str]) -> str:
        return seen.setdefault(match[0], f"<asset-hash-{len(seen) + 1}>")

    return re.sub(r"\b[0-9a-f]{64}\b", placeholder, text)


def rules_table() -> str:
    """The property table of hyperpod_constructs/tools/plan/semantics.py as Markdown."""
    lines = ["| Property | Effect | What HyperPod does | Source |", "|---|---|---|---|"]
    for rule in RULES:
        name = (
            rule.pointer.removeprefix("/properties/")
            .replace("RestrictedInstanceGroups/*/", "restricted group ")
            .replace("InstanceGroups/*/", "group ")
        )
        lines.append(
            f"| `{name.replace('/', '.')}` | {rule.effect.value} | {rule.what} | {rule.source} |"
        )
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    scripts = tmp_path_factory.mktemp("lifecycle") / "scripts"
    shutil.copytree(LIFECYCLE_DIR, scripts)
    with (scripts / "on_create.sh").open("a") as script:
        script.write("echo 'lifecycle v2'\n")

    def synthesized(**arguments: Any) -> dict[str, Any]:
        # Each edit is the same stack (the same construct paths, so the same names derived
        # from them) in its own app, as a pull request edits one app.
        app = new_app(outdir=str(tmp_path_factory.mktemp("guide-cdk.out")))
        FsdpTrainingStack(app, "FsdpTraining", **arguments)
        template: dict[str, Any] = app.synth().get_stack_by_name("FsdpTraining").template
        return template

    baseline = synthesized()
    return {
        edit: plan_stack(
            baseline, synthesized(**arguments(scripts)), stack="FsdpTraining", baseline=BASELINE
        )
        for edit, arguments in EDITS.items()
    }


def test_each_edit_has_the_exit_code_the_guide_states(plans: dict[str, Any]) -> None:
    assert {edit: plan.exit_code for edit, plan in plans.items()} == EXPECTED_EXIT
    # An edited script keeps the SourceS3Uri: the plan sees the upload change instead.
    (cluster,) = plans["lifecycle"].clusters
    for group in cluster.groups:
        (change,) = group.changes
        assert change.effect is Effect.NEW_NODES and "uploaded by" in change.path
        assert change.old != change.new


def test_the_guide_shows_the_plans_the_command_prints(plans: dict[str, Any]) -> None:
    text = GUIDE.read_text()
    shown = {match["edit"] for match in BLOCK.finditer(text)}
    assert shown == set(EDITS), "one plan block per edit in docs/safe-updates.md"

    def generated(match: re.Match[str]) -> str:
        return match[1] + without_hashes(render_text(plans[match["edit"]])) + match[4]

    expected = RULES_BLOCK.sub(lambda m: m[1] + rules_table() + m[3], BLOCK.sub(generated, text))
    if expected != text and os.environ.get("PLAN_GUIDE_UPDATE") == "1":
        GUIDE.write_text(expected)
        return
    assert expected == text, (
        "docs/safe-updates.md shows an outdated plan: run "
        "PLAN_GUIDE_UPDATE=1 pytest tests/test_plan_guide.py and review the diff"
    )
