"""What a reader of the docs reads in a file: a page's text, a module's docstrings."""

from __future__ import annotations

import ast
from pathlib import Path


def prose(path: Path) -> str:
    """A page's text; a module's docstrings (of the module, classes, functions, attributes),
    which the API pages are built from."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return text
    return "\n".join(
        node.value.value
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )
