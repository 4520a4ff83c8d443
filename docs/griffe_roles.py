"""A griffe extension (mkdocstrings, mkdocs.yml): Sphinx cross-reference roles as links.

The docstrings use Sphinx roles (``:class:`HyperPodSlurmCluster```, ``:meth:`~a.b.C.m```).
mkdocstrings parses Sphinx-style fields (``:param x:``) but leaves roles as text, so this
extension turns each role into a mkdocs-autorefs link to the object's page. A target is
looked up as written, then relative to the object, its module and the package. A target in
this package that names nothing is a warning (``mkdocs build --strict`` fails); a target in
another library (``aws_cdk.Duration``) stays plain code.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import griffe

PACKAGE = "hyperpod_constructs"
ROLE = re.compile(
    r"(?::py)?:(?:mod|func|data|const|class|meth|attr|exc|obj):`(?P<tilde>~?)(?P<target>[^`]+)`"
)

log = logging.getLogger("mkdocs.plugins.hyperpod_constructs")


class SphinxRoles(griffe.Extension):
    """Rewrites the roles of every docstring in the package once it is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.name == PACKAGE:
            _rewrite(pkg, pkg, seen=set())


def _rewrite(obj: griffe.Object | griffe.Alias, pkg: griffe.Module, seen: set[str]) -> None:
    if obj.is_alias or obj.path in seen:
        return
    seen.add(obj.path)
    if obj.docstring is not None:
        obj.docstring.value = ROLE.sub(lambda match: _link(match, obj, pkg), obj.docstring.value)
    for member in obj.members.values():
        _rewrite(member, pkg, seen)


def _link(match: re.Match[str], obj: griffe.Object | griffe.Alias, pkg: griffe.Module) -> str:
    relative = match["target"].startswith(".")  # `.model.Refresh`: in this package, always
    target = match["target"].lstrip(".")
    shown = target.rsplit(".", 1)[-1] if match["tilde"] else target
    ours = relative or target.split(".", 1)[0] in {PACKAGE, *pkg.members}
    if not ours and "." in target:
        return f"`{shown}`"  # another library: plain code
    found = _resolve(target, obj, pkg)
    if found is None:
        if "." in target and not target.startswith(PACKAGE) and not relative:
            return f"`{shown}`"
        log.warning("%s: docstring reference '%s' names nothing", obj.path, match[0])
        return f"`{shown}`"
    return f"[`{shown}`][{found}]"


def _resolve(target: str, obj: griffe.Object | griffe.Alias, pkg: griffe.Module) -> str | None:
    scopes: list[str] = []
    current: griffe.Object | griffe.Alias | None = obj
    while current is not None:
        scopes.append(current.path)
        current = current.parent
    candidates = [target] + [f"{scope}.{target}" for scope in scopes]
    for candidate in candidates:
        relative = candidate.removeprefix(f"{PACKAGE}.")
        if candidate == PACKAGE:
            return PACKAGE
        if not candidate.startswith(f"{PACKAGE}."):
            continue
        try:
            found = pkg.get_member(relative)
        except (KeyError, ValueError, griffe.AliasResolutionError, griffe.CyclicAliasError):
            continue
        try:
            return str(found.final_target.path if found.is_alias else found.path)
        except (griffe.AliasResolutionError, griffe.CyclicAliasError):
            return str(found.path)
    return None
