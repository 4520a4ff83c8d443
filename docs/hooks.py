"""mkdocs hooks (``hooks:`` in mkdocs.yml) that keep the site in step with the repository.

- The API reference is one page per public package: ``hyperpod_constructs`` and each of its
  sub-packages (``docs/api/<name>.md``, ``index.md`` for the top level). A package without a
  page, or a page whose package is gone, fails the build.
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
    modules the top level names as where its other names live (``_SUBPACKAGES``:
    ``hyperpod_constructs.sizing``)."""
    top = root / PACKAGE
    packages = {
        f"{PACKAGE}.{init.parent.name}"
        for init in top.glob("*/__init__.py")
        if not init.parent.name.startswith("_")
    }
    return {PACKAGE} | packages | {f"{PACKAGE}{name}" for name in _subpackages(top)}


def _subpackages(top: Path) -> list[str]:
    """The names in ``_SUBPACKAGES = (".sizing", ...)`` of the package's ``__init__.py``."""
    for node in ast.parse((top / "__init__.py").read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "_SUBPACKAGES" for target in node.targets
        ):
            value = ast.literal_eval(node.value)
            return [str(name) for name in value]
    return []


def documented_packages(api_dir: Path = API_DIR) -> dict[str, str]:
    """Package -> the API page that renders it (``::: package``)."""
    found: dict[str, str] = {}
    for page in sorted(api_dir.glob("*.md")):
        for match in DIRECTIVE.finditer(page.read_text()):
            found[match["module"]] = page.name
    return found


def stale_api_pages(root: Path = ROOT, api_dir: Path = API_DIR) -> list[str]:
    """One line per package without an API page and per page of a package that is gone."""
    packages, pages = public_packages(root), documented_packages(api_dir)
    problems = [
        f"API reference: package {name} has no page (add docs/api/<name>.md with '::: {name}')"
        for name in sorted(packages - set(pages))
    ]
    problems += [
        f"API reference: docs/api/{pages[name]} documents {name}, which is not a public package"
        for name in sorted(set(pages) - packages)
    ]
    return problems


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    problems = stale_api_pages()
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
