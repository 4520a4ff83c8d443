"""The package's layers (docs/layout.md): every import points down or sideways, never up, and
no imports close a circle.

Each import is a dependency, wherever it is written: at module level, inside a function, and
under ``if TYPE_CHECKING:``. Importing ``a.b.c`` also runs ``a/b/__init__.py`` (unless the
importer is inside ``a.b`` already), so that package is a dependency too. The gate's Lambda
runtime (``_runtime``) is a separate deployable that imports nothing of the library; it is
outside the layers, and any module may import it (tests/gate/test_gate_runtime_package.py
checks it).
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
OUTSIDE = ("_runtime",)
"""Modules outside the layers (by prefix, below the package)."""

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("values", ("_core", "_cdk", "_version", "enums", "permissions")),
    (
        "model",
        (
            "instance_type",
            "sizing",
            "updates",
            "storage",
            "lifecycle_files",
            "lifecycle",
            "group_fields",
            "instance_group",
            "gate",
        ),
    ),
    ("rules", ("validation",)),
    ("constructs", ("_cluster", "_gate", "_report", "cluster")),
    ("entry points", ("", "reporting", "policy", "blueprints")),
    ("tools", ("__main__", "summary", "watch", "convert", "plan", "preflight", "tools")),
)
"""The layers, bottom first, each with its packages and top-level modules (``""`` is the
package's ``__init__``). A package is in one layer with every module in it; a module may
import its own layer and those below. The top floor is the command-line tools: the package
``tools``, the command line that runs them and the tools' old paths (deprecated aliases)."""
TOOLS = "tools"
"""The tools' floor (a layer's name), which nothing below it imports."""
TOP_LEVEL_PRIVATE = {"__init__", "__main__", "_version"}
"""The only private modules at the package's top level: the helpers live in private
sub-packages, one layer each."""


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
    """The index of ``module``'s layer: that of its top-level package or module."""
    top = module.partition(".")[0]
    for index, (_, entries) in enumerate(LAYERS):
        if top in entries:
            return index
    raise KeyError(f"{PACKAGE}.{module} is in no layer: add {top!r} to LAYERS")


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
                continue  # the gate's Lambda code, below every layer (its __init__ is empty)
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
    assert len(entries) == len(set(entries)), "a package is listed in two layers"
    assert {m: layer_of(m) for m in MODULES}  # raises for a module in no layer
    listed = {e for e in entries if e}
    assert listed <= set(MODULES), f"listed but not in the package: {listed - set(MODULES)}"


def test_the_layers_list_packages_and_top_level_modules() -> None:
    """Each entry is a top-level package or module (a package's modules are in its layer,
    never listed on their own), and the private helpers are in private packages: the top
    level holds no private module but the version."""
    entries = [entry for _, layer in LAYERS for entry in layer if entry]
    assert [entry for entry in entries if "." in entry] == []
    private = {path.stem for path in ROOT.glob("_*.py")}
    assert private == TOP_LEVEL_PRIVATE, (
        f"move {sorted(private - TOP_LEVEL_PRIVATE)} into a package"
    )
    top_level = {name.partition(".")[0] for name in MODULES if name}
    assert top_level == set(entries), "a top-level package or module is not in LAYERS"


def test_the_reader_sees_imports_in_functions_and_under_type_checking() -> None:
    # instance_group imports LifecycleScripts for annotations only (TYPE_CHECKING), the
    # gate imports its metrics when one is asked for (in a function), and importing
    # gate.options runs gate/__init__.py.
    assert "lifecycle" in GRAPH["instance_group"]
    assert "_gate.metrics" in GRAPH["_gate.construct"]
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


def reaching_up_to(graph: dict[str, set[str]], floor: str) -> dict[str, list[str]]:
    """Each module below the layer ``floor`` that imports a module of it, with what it imports."""
    top = [name for name, _ in LAYERS].index(floor)
    found = {
        module: sorted(t for t in targets if layer_of(t) >= top)
        for module, targets in graph.items()
        if layer_of(module) < top
    }
    return {module: targets for module, targets in found.items() if targets}


def test_the_constructs_never_import_the_tools() -> None:
    """Nothing of the values, the model, the rules, the constructs or the other entry points
    imports a tool, its private packages (``tools._aws``, ``tools._cli``) or an old path of a
    tool: a CDK app never loads them."""
    assert reaching_up_to(GRAPH, TOOLS) == {}


def test_a_construct_importing_a_tool_is_named() -> None:
    graph = {"cluster": {"_core", "tools._aws.session"}, "tools.plan": {"cluster"}, "plan": set()}
    graph["_gate.construct"] = {"plan"}
    assert reaching_up_to(graph, TOOLS) == {
        "_gate.construct": ["plan"],
        "cluster": ["tools._aws.session"],
    }


def private_imports(module: str) -> set[str]:
    """The private names (a ``_x`` part, not a dunder) of another package that ``module``
    imports. A private name belongs to the package that holds it (a module's private name to
    the module's package), and only that package's modules import it. A private package is
    shared by design: one at the top level (``_core``) by the layers above it, one of a layer's
    top-level package (``tools._aws``) by that layer (``__main__`` runs the tools with
    ``tools._cli``)."""
    path = MODULES[module]
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    targets = [
        target
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for target in _targets(module, node, path.name == "__init__.py")
    ]
    for target in [*targets, *_attributes_read(module, tree)]:
        if not target.startswith(f"{PACKAGE}."):
            continue
        parts = target.removeprefix(f"{PACKAGE}.").split(".")
        private = [i for i, p in enumerate(parts) if p.startswith("_") and p[:2] != "__"]
        if not private or private[0] == 0:
            continue  # nothing private, or a private package of the top level
        holder = ".".join(parts[: private[0]])
        is_package = holder not in MODULES or MODULES[holder].name == "__init__.py"
        owner = holder if is_package else holder.rpartition(".")[0]
        inside = module == owner or module.startswith(f"{owner}.")
        if not inside and ("." in owner or layer_of(module) != layer_of(owner)):
            found.add(".".join(parts))
    return found


def _attributes_read(module: str, tree: ast.Module) -> Iterator[str]:
    """``<module>.<name>`` for each ``name`` read as an attribute of a module of the package
    that ``module`` imported (``from ..watch import aws`` then ``aws._code``): a private
    name reached by attribute is imported as much as one named in the import."""
    bound: dict[str, str] = {}
    package = MODULES[module].name == "__init__.py"
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            origin = next(_targets(module, node, package))
            for alias in node.names:
                name = f"{origin}.{alias.name}".removeprefix(f"{PACKAGE}.")
                if name in MODULES:
                    bound[alias.asname or alias.name] = f"{origin}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname and alias.name.removeprefix(f"{PACKAGE}.") in MODULES:
                    bound[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in bound
        ):
            yield f"{bound[node.value.id]}.{node.attr}"


@pytest.mark.parametrize("module", sorted(MODULES), ids=lambda m: m or PACKAGE)
def test_no_module_imports_a_private_name_of_another_package(module: str) -> None:
    """``plan`` once imported ``watch``'s ``_stack_identity``, ``_parameters`` and
    ``_Transient``: what two packages share is public in one of them, or in a private package
    both may import (``tools._assembly``, the tools' one reader of a cloud assembly)."""
    assert private_imports(module) == set()


def test_a_private_import_of_another_package_is_named(tmp_path: Path) -> None:
    """The check on modules written for it: a tool importing another tool's private name, or
    a private module of it, and a construct importing the tools' private package are named; a
    package's own private names and the private packages its layer shares are not."""
    sources = {
        "tools.plan.cli": (
            "from ..watch.target import _stack_identity, load_targets\n"
            "from ..watch import _decision\n"
            "from .model import _private\n"
            "from .._aws.input import read_json\n"
            "from ..._core.sanitize import printable\n"
        ),
        "tools.plan.aws": "from ..watch import aws\n\ndef code(e):\n    return aws._code(e)\n",
        "tools.watch.target": "from ._decision import evaluate\n",
        "__main__": "from .tools._cli.output import write\n",
        "cluster": "from .tools._aws import session\n",
    }
    saved = dict(MODULES)
    try:
        for module, source in sources.items():
            MODULES[module] = tmp_path / f"{module}.py"
            MODULES[module].write_text(source, encoding="utf-8")
        found = {module: private_imports(module) for module in sources}
    finally:
        MODULES.clear()
        MODULES.update(saved)
    assert found == {
        "tools.plan.cli": {"tools.watch.target._stack_identity", "tools.watch._decision"},
        "tools.plan.aws": {"tools.watch.aws._code"},
        "tools.watch.target": set(),
        "__main__": set(),
        "cluster": {"tools._aws", "tools._aws.session"},
    }


def test_the_construct_helpers_never_import_the_cluster() -> None:
    """The cluster uses its helpers (``_cluster``, ``_gate``, ``_report``); none of them uses
    the cluster (the report of a failing synth finds the clusters by what it asks of them,
    ``_report.text.Checked``)."""
    helpers = {
        m: GRAPH[m] for m in MODULES if m.partition(".")[0] in {"_cluster", "_gate", "_report"}
    }
    assert {m: sorted(targets) for m, targets in helpers.items() if "cluster" in targets} == {}


HOURS = ("hours",)
"""A duration in hours: ``Duration.hours(n)`` or ``timedelta(hours=n)``."""


def literal_hours(source: str) -> list[int]:
    """The lines of ``source`` that write a number of hours as a literal: a duration in hours
    (``HOURS``), or a name of hours bound to a number (``WINDOW_HOURS = 3``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Constant):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if any("HOUR" in name.upper() for name in names):
                found.append(node.lineno)
        if not isinstance(node, ast.Call):
            continue
        name = (
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        )
        values = [
            *(node.args if name in HOURS else []),
            *(k.value for k in node.keywords if k.arg in HOURS),
        ]
        if any(isinstance(value, ast.Constant) for value in values):
            found.append(node.lineno)
    return found


def test_hyperpods_limits_are_written_once_in_core() -> None:
    """HyperPod's 3-hour MinCount window was written twice (the gate's options and ``watch``,
    which ``plan`` read): every duration in hours is a limit of ``_core/limits.py``, read
    from there, never a number written again."""
    written = {
        module: lines
        for module, path in MODULES.items()
        if module != "_core.limits" and (lines := literal_hours(path.read_text(encoding="utf-8")))
    }
    assert written == {}
    assert literal_hours("from datetime import timedelta\nW = timedelta(hours=3)\n") == [2]
    assert literal_hours("W = Duration.hours(3)\nV = Duration.hours(LIMIT)\n") == [1]
    assert literal_hours("WINDOW_HOURS = 3\nwindow_hours: int = 3\nH = WINDOW_HOURS\n") == [1, 2]


def test_no_imports_close_a_circle() -> None:
    assert circles(GRAPH) == []


def test_a_circle_is_found() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def layout_rows(page: str) -> list[tuple[str, str]]:
    """The (layer, package or module) pairs of the table on ``page``, in its order: one row
    per package, and the top-level modules of a layer together in one row."""
    return [
        (cells[0], name)
        for line in page.splitlines()
        if line.startswith("| ") and not line.startswith("| Layer")
        for cells in [[cell.strip() for cell in line.strip("|").split("|")]]
        for name in re.findall(r"`([^`]+)`", cells[1])
    ]


def test_the_layout_page_shows_these_layers() -> None:
    """docs/layout.md's table: bottom first, naming the same packages and modules in the
    same layers (``__init__`` for the package's own)."""
    expected = [(name, entry or "__init__") for name, entries in LAYERS for entry in entries]
    assert layout_rows(PAGE.read_text(encoding="utf-8")) == expected


def test_a_row_in_another_layer_is_seen() -> None:
    page = "| Layer | Package or module | What |\n|---|---|---|\n| model | `_gate` | x |\n"
    assert layout_rows(page) == [("model", "_gate")]


PATH = re.compile(r"[\w.*-]+(?:/[\w.*-]+)*/?")
"""A file or folder path, possibly with a ``*`` pattern."""


def named_paths(page: str) -> set[str]:
    """The file and folder paths ``page`` names: in backquotes (a path with a ``/`` or a file
    name with a suffix such as ``.py``) and as a link's target."""
    quoted = {
        text
        for text in re.findall(r"`([^`\n]+)`", page)
        if PATH.fullmatch(text) and ("/" in text or re.search(r"\.(py|md|toml|txt)$", text))
    }
    linked = {
        target.partition("#")[0]
        for target in re.findall(r"\]\(([^)\s]+)\)", page)
        if "://" not in target and not target.startswith("#")
    }
    return quoted | linked


def test_every_path_the_layout_page_names_exists() -> None:
    """A path is read from the package, the repository or docs/ (a link's target), as the
    page writes them (``_core/finding.py``, ``tests/test_layers.py``, ``validation.md``)."""
    bases = (ROOT, ROOT.parent, PAGE.parent)
    paths = named_paths(PAGE.read_text(encoding="utf-8"))
    assert {"_core/finding.py", "_gate/construct.py", "../tests/test_layers.py"} <= paths
    missing = sorted(p for p in paths if not any(list(base.glob(p.rstrip("/"))) for base in bases))
    assert missing == [], f"docs/layout.md names paths that do not exist: {missing}"


def test_a_missing_path_is_named() -> None:
    page = "Add it to `gate/construct.py` ([guide](gone.md)); `a.b` and `x y/z` are no paths."
    assert named_paths(page) == {"gate/construct.py", "gone.md"}


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
