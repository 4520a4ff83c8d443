"""The docs site's own checks (docs/hooks.py, run by ``mkdocs build --strict``): an API page
per public package, none left over. ``make docs`` builds the real site in CI."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

from tests.conftest import ROOT


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = _hooks()


def _tree(tmp_path: Path, packages: list[str], pages: dict[str, str]) -> tuple[Path, Path]:
    root, api = tmp_path / "repo", tmp_path / "repo" / "docs" / "api"
    for package in ["", *packages]:
        folder = root / "hyperpod_constructs" / package
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "__init__.py").write_text("")
    api.mkdir(parents=True)
    for name, module in pages.items():
        (api / name).write_text(f"# {module}\n\n::: {module}\n")
    return root, api


def test_the_repository_has_one_api_page_per_public_package() -> None:
    assert hooks.stale_api_pages() == []
    assert set(hooks.documented_packages()) == hooks.public_packages()


def test_a_package_without_a_page_and_a_page_without_a_package_fail(tmp_path: Path) -> None:
    root, api = _tree(
        tmp_path,
        ["gate", "sizing", "_private"],
        {"index.md": "hyperpod_constructs", "gate.md": "hyperpod_constructs.gate"}
        | {"old.md": "hyperpod_constructs.old"},
    )
    assert hooks.stale_api_pages(root, api) == [
        "API reference: package hyperpod_constructs.sizing has no page "
        "(add docs/api/<name>.md with '::: hyperpod_constructs.sizing')",
        "API reference: docs/api/old.md documents hyperpod_constructs.old, "
        "which is not a public package",
    ]
