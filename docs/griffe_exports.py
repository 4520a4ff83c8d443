"""A griffe extension (mkdocstrings, mkdocs.yml): the top level's ``__all__`` as the package
computes it.

``hyperpod_constructs/__init__.py`` lists its public names once, as the ``X as X`` imports of
its ``if TYPE_CHECKING:`` block, and derives ``__all__`` from them when it is imported. griffe
reads the source without running it, so this extension gives the module the same ``__all__``,
read by the package's own reader (``_exports``): griffe then counts those names as public.
"""

from __future__ import annotations

from typing import Any

import griffe

from hyperpod_constructs import _exports

PACKAGE = "hyperpod_constructs"


class TopLevelExports(griffe.Extension):
    """Sets the exports of the top-level module from its ``if TYPE_CHECKING:`` imports."""

    def on_module_members(self, *, mod: griffe.Module, **kwargs: Any) -> None:
        if mod.path == PACKAGE and mod.filepath is not None and not isinstance(mod.filepath, list):
            exports: list[str | griffe.ExprName] = [*_exports(mod.filepath.read_text())]
            mod.exports = sorted([*exports, "__version__"], key=str)
