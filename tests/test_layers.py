"""The package's layers (docs/layout.md): every import points down or sideways, never up, and
no imports close a circle.

Each import is a dependency, wherever it is written: at module level, inside a function, and
under ``if TYPE_CHECKING:``. Importing ``a.b.c`` also runs ``a/b/__init__.py`` (unless the
importer is inside ``a.b`` already), so that package is a dependency too. The gate's Lambda
runtime (``gate/runtime``) is a separate deployable that imports nothing of the library; it is
outside the layers (tests/gate/test_gate_runtime_package.py checks it).
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = "hyperpod_constructs"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE
PAGE = ROOT.parent / "docs" / "layout.md"
OUTSIDE = ("gate.runtime",)
"""Modules outside the layers (by prefix, below the package)."""

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "values",
        (
            "_core",
            "_tokens",
            "_sanitize",
            "_version",
            "_lazy",
            "_nag",
            "_roles",
            "_dependable",
            "_synthesizer",
            "_aws_model",
            "_shapes",
            "_input",
            "enums",
            "permissions",
        ),
    ),
    (
        "model",
        (
            "instance_type",
            "sizing",
            "updates",
            "storage",
            "lifecycle_files",
            "lifecycle",
            "instance_group",
            "gate",
            "gate.options",
            "gate.definition",
        ),
    ),
    ("rules", ("validation",)),
    (
        "constructs",
        (
            "_cluster_interface",
            "rendering",
            "gate.metrics",
            "gate.resources",
            "gate.construct",
            "cluster",
        ),
    ),
    (
        "entry points",
        (
            "",
            "__main__",
            "_report_text",
            "reporting",
            "policy",
            "blueprints",
            "summary",
            "watch",
            "convert",
            "plan",
        ),
    ),
)
"""The layers, bottom first, each with the modules and packages in it (a package's entry
covers its modules unless one is listed itself; ``""`` is the package's ``__init__``). A module
may import its own layer and those below."""


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if not any(name == o or name.startswith(f"{o}.") for o in OUTSIDE):
            found[name] = path
    return found


MODULES = _modules()


def layer_of(module: str) -> int:
    """The index of ``module``'s layer: that of its longest listed prefix."""
    best: tuple[int, int] | None = None
    for index, (_, entries) in enumerate(LAYERS):
        for entry in entries:
            inside = module == entry or (entry != "" and module.startswith(f"{entry}."))
            if inside and (best is None or len(entry) > best[1]):
                best = (index, len(entry))
    if best is None:
        raise KeyError(f"{PACKAGE}.{module} is in no layer: add it to LAYERS")
    return best[0]


def _ancestors(module: str) -> list[str]:
    parts = module.split(".") if module else []
    return [".".join(parts[:end]) for end in range(len(parts) - 1, -1, -1)]


def _targets(module: str, node: ast.Import | ast.ImportFrom, package: bool) -> Iterator[str]:
    """The package's modules that ``node`` (in ``module``) names, below the package."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    if node.level:
        base = module.split(".") if module else []
        base = base if package else base[:-1]
        base = base[: len(base) - (node.level - 1)]
        origin = ".".join([PACKAGE, *base, *([node.module] if node.module else [])])
    else:
        origin = node.module or ""
    yield origin
    for alias in node.names:
        yield f"{origin}.{alias.name}"


def imports(module: str) -> set[str]:
    """Every module of the package that ``module`` imports (in any place), and the packages
    Python runs on the way (not ``module``'s own)."""
    path = MODULES[module]
    own = set(_ancestors(module))
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        for target in _targets(module, node, path.name == "__init__.py"):
            if target != PACKAGE and not target.startswith(f"{PACKAGE}."):
                continue
            name = target.removeprefix(PACKAGE).removeprefix(".")
            while name not in MODULES and name:
                name = name.rpartition(".")[0]
            if any(name == o or name.startswith(f"{o}.") for o in OUTSIDE):
                name = ".".join(name.split(".")[:1])  # the runtime's parent package: gate
            found |= {name, *_ancestors(name)} - own - {module}
    return found


GRAPH = {module: imports(module) for module in MODULES}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_every_module_is_in_one_layer_listed_once() -> None:
    entries = [entry for _, layer in LAYERS for entry in layer]
    assert len(entries) == len(set(entries)), "a module is listed in two layers"
    assert {m: layer_of(m) for m in MODULES}  # raises for a module in no layer
    listed = {e for e in entries if e}
    assert listed <= set(MODULES), f"listed but not in the package: {listed - set(MODULES)}"


def test_the_reader_sees_imports_in_functions_and_under_type_checking() -> None:
    # instance_group imports LifecycleScripts for annotations only (TYPE_CHECKING), the
    # gate imports its metrics when one is asked for (in a function), and importing
    # gate.options runs gate/__init__.py.
    assert "lifecycle" in GRAPH["instance_group"]
    assert "gate.metrics" in GRAPH["gate.construct"]
    assert {"gate", "gate.options"} <= GRAPH["validation.gate_rules"]


@pytest.mark.parametrize("module", sorted(MODULES), ids=lambda m: m or PACKAGE)
def test_no_import_goes_up_a_layer(module: str) -> None:
    level = layer_of(module)
    upward = {
        f"{target} ({LAYERS[layer_of(target)][0]})"
        for target in GRAPH[module]
        if layer_of(target) > level
    }
    assert upward == set(), f"{module or PACKAGE} ({LAYERS[level][0]}) imports up: {upward}"


def test_no_imports_close_a_circle() -> None:
    assert circles(GRAPH) == []


def test_a_circle_is_found() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_layout_page_shows_these_layers() -> None:
    """docs/layout.md's table: one row per layer, bottom first, naming the same modules
    (``__init__`` for the package's own)."""
    rows = [
        (cells[0], re.findall(r"`([^`]+)`", cells[1]))
        for line in PAGE.read_text(encoding="utf-8").splitlines()
        if line.startswith("| ") and not line.startswith("| Layer")
        for cells in [[cell.strip() for cell in line.strip("|").split("|")]]
    ]
    expected = [(name, [entry or "__init__" for entry in entries]) for name, entries in LAYERS]
    assert rows == expected


MODEL_ONLY = """
import json, sys
from hyperpod_constructs._core.finding import Finding, Severity
from hyperpod_constructs._core.rule import Rule, Scope
from hyperpod_constructs.instance_group import InstanceGroup
from hyperpod_constructs.instance_type import HyperPodInstanceType

group = InstanceGroup.compute(
    "gpu", instance_type=HyperPodInstanceType.ML_P5_48XLARGE, min_accelerators=0
)
advice = Rule("HP-EXAMPLE", Severity.WARNING, Scope.GROUP, "`x` / `X`", "anything")
print(json.dumps({
    "rules loaded": sorted(m for m in sys.modules if m.startswith(PACKAGE + ".validation")),
    "group": [[f.rule, str(f.severity), f.message()] for f in group.problems],
    "warning": str(advice.finding(value=1, allowed="2", fix="use 2").severity),
    "direct": str(Finding(rule="HP-WARN-DHC", field="f", allowed="a", fix="b").severity),
}))
""".replace("PACKAGE", repr(PACKAGE))


def test_a_findings_severity_is_its_rules_whatever_was_imported() -> None:
    """A library finding is built by its rule (``Rule.finding``), which gives it the rule's
    severity: no table filled when the registry loads. A process that imports only the model
    (``from hyperpod_constructs import InstanceGroup`` loads no rule family) builds the same
    findings as one that loaded every rule; a warning rule's finding is a warning there too,
    and a ``Finding`` built directly without a severity is an error in both."""
    from hyperpod_constructs import HyperPodInstanceType, InstanceGroup
    from hyperpod_constructs.validation import Finding
    from hyperpod_constructs.validation.registry import RULES

    env = {**os.environ, "PYTHONPATH": str(ROOT.parent)}
    result = subprocess.run(
        [sys.executable, "-c", MODEL_ONLY],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT.parent,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    alone = json.loads(result.stdout.strip().splitlines()[-1])
    assert alone["rules loaded"] == []
    group = InstanceGroup.compute(
        "gpu", instance_type=HyperPodInstanceType.ML_P5_48XLARGE, min_accelerators=0
    )
    loaded = [[f.rule, str(f.severity), f.message()] for f in group.problems]
    assert alone["group"] == loaded
    assert [(rule, severity) for rule, severity, _ in loaded] == [
        ("HP-SIZING", str(RULES["HP-SIZING"].severity))
    ]
    assert alone["warning"] == "warning"
    direct = Finding(rule="HP-WARN-DHC", field="f", allowed="a", fix="b")
    assert alone["direct"] == str(direct.severity) == "error"
