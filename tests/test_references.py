"""What the package names is there: every module-level constant is read somewhere, and every
module or file a docstring or a docs page names exists."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "hyperpod_constructs"
READERS = ("hyperpod_constructs", "tests", "examples", "bench", "integ")
"""Where a constant may be read: the package and everything that imports it."""
CONSTANT = re.compile(r"_?[A-Z][A-Z0-9_]*")
GENERATED = {PACKAGE / "tools" / "_aws" / "model.py"}
"""Written by a generator, which records its input there (``BOTOCORE_VERSION``)."""


def python_files(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (REPO / folder).rglob("*.py"))


def module_constants(path: Path) -> set[str]:
    """The UPPER_CASE names a module assigns at its top level."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        names |= {t.id for t in targets if isinstance(t, ast.Name) and CONSTANT.fullmatch(t.id)}
    return names - {"__all__"}


def reads(source: str) -> Counter[str]:
    """The names a module reads: a bare name or an attribute, in a load (not an import, not a
    string in ``__all__``)."""
    counts: Counter[str] = Counter()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            counts[node.id] += 1
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            counts[node.attr] += 1
    return counts


def unread_constants() -> dict[str, set[str]]:
    read: Counter[str] = Counter()
    for path in python_files(*READERS):
        read += reads(path.read_text(encoding="utf-8"))
    unread = {}
    for path in python_files("hyperpod_constructs"):
        if path in GENERATED:
            continue
        names = {name for name in module_constants(path) if not read[name]}
        if names:
            unread[path.relative_to(PACKAGE).as_posix()] = names
    return unread


def test_every_constant_is_read() -> None:
    assert unread_constants() == {}


def test_an_unread_constant_is_found() -> None:
    source = "A = 1\nB: int = A\n_C = 2\nprint(B)\nimport x.D\n__all__ = ['_C']\n"
    assert reads(source)["A"] == 1 and not reads(source)["_C"] and not reads(source)["D"]
    assert module_constants(PACKAGE / "_core" / "limits.py") >= {"MAX_PARTITION_LENGTH"}


RUNTIME = PACKAGE / "_runtime"
DOTTED = re.compile(r"(?<![\w./-])(hyperpod_constructs|hyperpod_gate)((?:\.[A-Za-z_]\w*)+)")
"""A dotted path into the package or into the gate's Lambda package (as its handlers name it)."""
FILE = re.compile(r"(?<![\w./-])((?:[\w.-]+/)+[\w.-]+\.(?:py|md))(?![\w/])")
"""A path of a source file or a page, with at least one folder (``_gate/construct.py``)."""
EXAMPLES_IN = ("tests", "bench", "integ")
"""Where a docstring may draw a made-up tree (``a/b/__init__.py``): a path there is checked
when its first folder is one of the repository's."""
WRITERS = ("hyperpod_constructs", "examples", *EXAMPLES_IN)


def docstrings(source: str) -> list[str]:
    """The docstrings of a module, its classes and functions, and of its attributes (the
    string right after an assignment)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            found.append(ast.get_docstring(node, clean=False) or "")
        if isinstance(node, ast.Module | ast.ClassDef):
            for before, after in zip(node.body, node.body[1:], strict=False):
                if (
                    isinstance(before, ast.Assign | ast.AnnAssign)
                    and isinstance(after, ast.Expr)
                    and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)
                ):
                    found.append(after.value.value)
    return [text for text in found if text]


def top_level_names(path: Path) -> set[str]:
    """What a module defines or imports, at its top level or under an ``if``."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        for inner in ast.walk(node) if isinstance(node, ast.If) else [node]:
            if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(inner.name)
            elif isinstance(inner, ast.Import | ast.ImportFrom):
                names |= {(alias.asname or alias.name).split(".")[0] for alias in inner.names}
            elif isinstance(inner, ast.Assign | ast.AnnAssign):
                targets = inner.targets if isinstance(inner, ast.Assign) else [inner.target]
                names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def dotted_path_exists(dotted: str) -> bool:
    """``a.b.c``: its longest prefix that is a module exists, and the next name is a module or
    a name that module defines (``hyperpod_gate.poll.handler``, ``hyperpod_constructs.gate``)."""
    top, *parts = dotted.split(".")
    folder = PACKAGE if top == "hyperpod_constructs" else RUNTIME / "hyperpod_gate"
    for length in range(len(parts), -1, -1):
        here = folder.joinpath(*parts[:length])
        module = here / "__init__.py" if here.is_dir() else here.with_suffix(".py")
        if module.is_file():
            rest = parts[length:]
            return not rest or rest[0] in top_level_names(module)
    return False


def named_paths(text: str) -> tuple[set[str], set[str]]:
    """The dotted module paths and the file paths a text names."""
    dotted = {match.group(0).rstrip(".") for match in DOTTED.finditer(text)}
    return dotted, {match.group(1) for match in FILE.finditer(text)}


def file_exists(path: str, writer: Path) -> bool:
    bases = (REPO, PACKAGE, RUNTIME, REPO / "docs", writer.parent)
    return any((base / path).exists() for base in bases)


def texts() -> dict[Path, str]:
    """Every docstring of the package and of what imports it, and every page."""
    found = {
        path: "\n".join(docstrings(path.read_text(encoding="utf-8")))
        for path in python_files(*WRITERS)
    }
    pages = [*sorted((REPO / "docs").rglob("*.md")), REPO / "README.md"]
    return found | {page: page.read_text(encoding="utf-8") for page in pages}


def missing_paths() -> list[str]:
    folders = {p.name for base in (REPO, PACKAGE) for p in base.iterdir() if p.is_dir()}
    missing = []
    for writer, text in texts().items():
        where = writer.relative_to(REPO).as_posix()
        dotted, files = named_paths(text)
        missing += [f"{where}: {name}" for name in sorted(dotted) if not dotted_path_exists(name)]
        for path in sorted(files):
            made_up = where.startswith(EXAMPLES_IN) and path.split("/")[0] not in folders
            if not made_up and not file_exists(path, writer):
                missing.append(f"{where}: {path}")
    return missing


def test_every_module_and_file_a_docstring_or_page_names_exists() -> None:
    assert missing_paths() == []


def test_a_path_that_is_gone_is_found() -> None:
    text = (
        "``hyperpod_constructs.gate.runtime.hyperpod_gate`` and ``runtime/hyperpod_gate/poll.py``"
        " are gone; ``hyperpod_constructs.gate.options.MinCountGateOptions``, "
        "``hyperpod_gate.poll.handler`` and ``_gate/construct.py`` are there."
    )
    dotted, files = named_paths(text)
    assert {name for name in dotted if not dotted_path_exists(name)} == {
        "hyperpod_constructs.gate.runtime.hyperpod_gate"
    }
    assert {p for p in files if not file_exists(p, PACKAGE / "x.py")} == {
        "runtime/hyperpod_gate/poll.py"
    }
    assert dotted_path_exists("hyperpod_constructs.MinCountGate")  # under TYPE_CHECKING
    assert docstrings('"""m"""\nX = 1\n"""x"""\nclass C:\n    """c"""\n') == ["m", "x", "c"]
