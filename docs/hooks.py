"""mkdocs hooks (``hooks:`` in mkdocs.yml) that keep the site in step with the repository.

- The API reference is one page per public package: ``hyperpod_constructs`` and each of its
  sub-packages (``docs/api/<name>.md``, ``index.md`` for the top level), and, as in
  aws-cdk-lib's reference, one page per class of the top level (a construct, an interface, a
  props or options class, an error: ``docs/api/<Class>.md``); the enums stay on the top
  level's page. A package or class without a page, or a page whose object is gone, fails the
  build.
- The guides link to repository files outside ``docs/`` (``../examples/fsdp.py``). Those
  files are published under ``files/`` and the links rewritten to them; a link to a file that
  does not exist is a warning, so ``mkdocs build --strict`` fails on it.
- ``changelog.md`` is CHANGELOG.md, generated so that it has one source.
"""

from __future__ import annotations

import ast
import html
import logging
import re
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "hyperpod_constructs"
API_DIR = Path(__file__).resolve().parent / "api"
PUBLISHED = "files"
"""Where repository files linked from the guides are published in the site."""

REPO_LINK = re.compile(r"\]\(\.\./(?P<path>[^)#\s]+)(?P<anchor>#[^)\s]*)?\)")
DIRECTIVE = re.compile(r"^::: +(?P<module>[\w.]+)", re.MULTILINE)
SKIPPED = ("__pycache__", ".pyc")

log = logging.getLogger("mkdocs.plugins.hyperpod_constructs")


def public_packages(root: Path = ROOT) -> set[str]:
    """``hyperpod_constructs``, its direct sub-packages whose names are public, and the
    modules the top level names as its public sub-packages (``_SUBPACKAGES``:
    ``hyperpod_constructs.sizing``)."""
    top = root / PACKAGE
    return {PACKAGE} | _package_folders(top) | set(subpackages(root))


TOOLS = "tools"
"""The tools' floor: a folder of public packages (``hyperpod_constructs.tools.plan``) that holds
no names of its own."""


def _package_folders(top: Path) -> set[str]:
    return {
        ".".join((PACKAGE, *init.parent.relative_to(top).parts))
        for pattern in ("*/__init__.py", f"{TOOLS}/*/__init__.py")
        for init in top.glob(pattern)
        if not init.parent.name.startswith("_") and init.parent.name != TOOLS
    }


def subpackages(root: Path = ROOT) -> list[str]:
    """The public sub-packages, in order, as ``_SUBPACKAGES = (".gate", ...)`` of the package's
    ``__init__.py`` lists them (the one list): ``hyperpod_constructs.gate``, ..."""
    for node in ast.parse((root / PACKAGE / "__init__.py").read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "_SUBPACKAGES" for target in node.targets
        ):
            value = ast.literal_eval(node.value)
            return [f"{PACKAGE}{name}" for name in value]
    return []


VERSIONING_LIST = re.compile(r"public\s+sub-packages\s+\((?P<names>[^)]*)\)")
"""docs/versioning.md's list: ``public sub-packages (`hyperpod_constructs.gate`, `.policy`)``."""
DOCSTRING_ITEM = re.compile(rf"^- ``(?P<name>{PACKAGE}(?:\.\w+)+)``:", re.MULTILINE)


def _versioning_list(text: str) -> list[str]:
    match = VERSIONING_LIST.search(text)
    names = re.findall(r"`([\w.]+)`", match["names"]) if match else []
    return [name if name.startswith(PACKAGE) else f"{PACKAGE}{name}" for name in names]


def _navigation_list(nav: list[Any]) -> list[str]:
    """The ``hyperpod_constructs.<name>`` entries of the navigation's API reference."""
    for section in nav:
        if isinstance(section, dict) and "API reference" in section:
            titles = [next(iter(entry)) for entry in section["API reference"]]
            return [t for t in titles if t.startswith(f"{PACKAGE}.")]
    return []


def subpackage_problems(root: Path, nav: list[Any]) -> list[str]:
    """One line per list of the public sub-packages that differs from ``_SUBPACKAGES``: the
    package folders, the package's docstring, the navigation (mkdocs.yml) and
    docs/versioning.md."""
    listed = subpackages(root)
    where = f"_SUBPACKAGES of {PACKAGE}/__init__.py"
    problems = [
        f"package {name} is missing from {where}"
        for name in sorted(_package_folders(root / PACKAGE) - set(listed))
    ]
    docstring = ast.get_docstring(ast.parse((root / PACKAGE / "__init__.py").read_text())) or ""
    versioning = root / "docs" / "versioning.md"
    lists = {
        f"the docstring of {PACKAGE}/__init__.py": DOCSTRING_ITEM.findall(docstring),
        "the API reference in mkdocs.yml's nav": _navigation_list(nav),
        "docs/versioning.md": _versioning_list(versioning.read_text()),
    }
    problems += [
        f"{place} lists the public sub-packages {found}, not {listed} ({where})"
        for place, found in lists.items()
        if found != listed
    ]
    return problems


def api_directives(api_dir: Path = API_DIR) -> dict[str, str]:
    """What each API page renders (``::: target``): target -> page."""
    found: dict[str, str] = {}
    for page in sorted(api_dir.glob("*.md")):
        for match in DIRECTIVE.finditer(page.read_text()):
            found[match["module"]] = page.name
    return found


def _is_class(target: str) -> bool:
    return target.rsplit(".", 1)[-1][:1].isupper()


def documented_packages(api_dir: Path = API_DIR) -> dict[str, str]:
    """Package -> the API page that renders it (``::: package``)."""
    return {t: page for t, page in api_directives(api_dir).items() if not _is_class(t)}


def documented_classes(api_dir: Path = API_DIR) -> dict[str, str]:
    """Class name (of the top level) -> its own API page (``::: hyperpod_constructs.Name``)."""
    return {
        t.rsplit(".", 1)[-1]: page for t, page in api_directives(api_dir).items() if _is_class(t)
    }


def top_level_classes(root: Path = ROOT) -> set[str]:
    """The classes of the top level that get a page of their own: every exported name that is
    a class (capitalised), but the enums (exported from ``.enums``). Read from the source of
    ``__init__.py`` (its ``if TYPE_CHECKING:`` imports, the package's one list of its names),
    as the package reads it."""
    from hyperpod_constructs import _exports

    exports = _exports((root / PACKAGE / "__init__.py").read_text())
    return {n for n, module in exports.items() if n[:1].isupper() and module != ".enums"}


def stale_api_pages(
    root: Path = ROOT, api_dir: Path = API_DIR, classes: set[str] | None = None
) -> list[str]:
    """One line per package (and, given ``classes``, per class) without an API page and per
    page of a package or class that is gone."""
    packages, pages = public_packages(root), documented_packages(api_dir)
    problems = [
        f"API reference: package {name} has no page (add docs/api/<name>.md with '::: {name}')"
        for name in sorted(packages - set(pages))
    ]
    problems += [
        f"API reference: docs/api/{pages[name]} documents {name}, which is not a public package"
        for name in sorted(set(pages) - packages)
    ]
    if classes is not None:
        paged = documented_classes(api_dir)
        problems += [
            f"API reference: class {PACKAGE}.{name} has no page (add docs/api/{name}.md with "
            f"'::: {PACKAGE}.{name}')"
            for name in sorted(classes - set(paged))
        ]
        problems += [
            f"API reference: docs/api/{paged[name]} documents {PACKAGE}.{name}, which is not "
            "a class of the top level"
            for name in sorted(set(paged) - classes)
        ]
    return problems


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    problems = stale_api_pages(classes=top_level_classes())
    problems += subpackage_problems(ROOT, config["nav"])
    if problems:
        raise PluginError("\n".join(problems))
    return config


def _linked_repository_files(docs_dir: Path) -> set[Path]:
    """Repository files (outside docs/) linked from the guides; directories expanded."""
    linked: set[Path] = set()
    for page in docs_dir.glob("*.md"):
        for match in REPO_LINK.finditer(page.read_text()):
            target = (ROOT / match["path"]).resolve()
            if not target.is_relative_to(ROOT) or not target.exists():
                continue  # reported by on_page_markdown, with the page it is on
            if target.is_dir():
                linked |= {p for p in target.rglob("*") if p.is_file() and _published(p)}
            else:
                linked.add(target)
    return linked


def _published(path: Path) -> bool:
    return not any(part in SKIPPED or part.endswith(SKIPPED) for part in path.parts)


def _listing(directory: Path) -> str:
    """A plain HTML index of a linked repository directory."""
    rows = "".join(
        f'<li><a href="{html.escape(p.name)}">{html.escape(p.name)}</a></li>'
        for p in sorted(directory.iterdir())
        if p.is_file() and _published(p)
    )
    title = html.escape(str(directory.relative_to(ROOT)))
    return f"<!doctype html><title>{title}</title><h1>{title}/</h1><ul>{rows}</ul>\n"


def on_files(files: Files, config: MkDocsConfig) -> Files:
    changelog = (ROOT / "CHANGELOG.md").read_text()
    files.append(File.generated(config, "changelog.md", content=changelog))
    docs_dir = Path(config["docs_dir"])
    for path in sorted(_linked_repository_files(docs_dir)):
        uri = f"{PUBLISHED}/{path.relative_to(ROOT).as_posix()}"
        files.append(File.generated(config, uri, abs_src_path=str(path)))
        listing = f"{PUBLISHED}/{path.parent.relative_to(ROOT).as_posix()}/index.html"
        if files.get_file_from_path(listing) is None:
            files.append(File.generated(config, listing, content=_listing(path.parent)))
    return files


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, **_: Any) -> str:
    depth = page.file.src_uri.count("/")

    def rewrite(match: re.Match[str]) -> str:
        path = match["path"]
        target = (ROOT / path).resolve()
        if not target.is_relative_to(ROOT) or not target.exists():
            log.warning("%s links to '../%s', which does not exist", page.file.src_uri, path)
            return match[0]
        published = f"{'../' * depth}{PUBLISHED}/{target.relative_to(ROOT).as_posix()}"
        if target.is_dir():
            published += "/index.html"
        return f"]({published}{match['anchor'] or ''})"

    return REPO_LINK.sub(rewrite, markdown)
