"""Find and read the stack templates of a cloud assembly folder (``cdk.out``): the one reader
of an assembly's files.

Stacks come from ``manifest.json``: artifacts of type ``aws:cloudformation:stack`` (their
``properties.templateFile``), following nested assemblies (``cdk:cloud-assembly`` artifacts,
one per ``Stage``, in ``properties.directoryName``). Nested-stack templates
(``*.nested.template.json``, not listed in manifests) are read too. Without a ``manifest.json``
every ``*.template.json`` of the folder is read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..._core.expect import require
from ..._core.sanitize import printable
from .._aws.input import InputError, read_json

MANIFEST = "manifest.json"
STACK_ARTIFACT = "aws:cloudformation:stack"
NESTED_ASSEMBLY_ARTIFACT = "cdk:cloud-assembly"
_MAX_NESTING = 10
MAX_FILE_BYTES = 64 * 2**20
"""The largest manifest or template read (CloudFormation itself takes at most 1 MB)."""


class AssemblyError(Exception):
    """The folder cannot be summarized: it is missing, or a manifest or a template cannot be
    read. ``str()`` is a one-line message that names the file (control characters escaped)."""

    def __str__(self) -> str:
        return printable(super().__str__())


@dataclass(frozen=True)
class StackTemplate:
    """One stack template of the assembly."""

    stack: str
    """Display name: the artifact's ``displayName`` (``Stage/Stack``), else its id, else (no
    manifest, or a nested stack) the file name without ``.template.json``."""
    path: Path
    """The template file (the assembly folder joined with its relative path)."""
    relative_path: str
    """Path relative to the assembly folder, with ``/`` separators."""


def assembly_folder(function: str, directory: object) -> Path:
    """``directory`` as a path: a ``str`` or an ``os.PathLike`` of a ``str`` with no NUL."""
    require(function, "directory", directory, (str, os.PathLike))
    assert isinstance(directory, str | os.PathLike)
    path = os.fspath(directory)
    require(function, "directory", path, str)
    if "\0" in str(path):
        raise AssemblyError(f"not a folder name (it holds a NUL character): {path!r}")
    return Path(path)


def _resolved(path: Path) -> Path:
    """``path`` with symlinks resolved where possible (a loop leaves it as it is; reading it
    reports the loop)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


def _regular_file_inside(root: Path, path: Path, what: str) -> Path:
    """``path`` resolved, when it is a regular file inside ``root`` (symlinks followed);
    raises :class:`AssemblyError` otherwise (a manifest may name anything: ``/dev/zero``, a
    FIFO, a symlink loop, ``../../etc/passwd``)."""
    try:
        resolved = path.resolve(strict=True)
        inside = root.resolve(strict=True)
    except FileNotFoundError:
        raise AssemblyError(f"{what} not found: {path}") from None
    except (OSError, RuntimeError) as error:  # RuntimeError: a symlink loop (Python < 3.13)
        reason = getattr(error, "strerror", None) or str(error)
        raise AssemblyError(f"cannot read {what} {path}: {reason}") from None
    if not resolved.is_relative_to(inside):
        raise AssemblyError(f"cannot read {what} {path}: it is outside the assembly folder")
    try:
        mode = resolved.stat().st_mode
    except OSError as error:
        raise AssemblyError(f"cannot read {what} {path}: {error.strerror or error}") from None
    if not stat.S_ISREG(mode):
        raise AssemblyError(f"cannot read {what} {path}: not a regular file")
    return resolved


def read_assembly_json(path: Path, what: str, root: Path) -> object:
    """The JSON file ``path`` of the assembly in ``root`` (a regular file inside it, strict
    JSON, at most :data:`MAX_FILE_BYTES`); raises :class:`AssemblyError` naming it."""
    resolved = _regular_file_inside(root, path, what)
    try:
        return read_json(resolved, what, max_bytes=MAX_FILE_BYTES)
    except InputError as error:
        raise AssemblyError(f"cannot read {what} {path}: {error.problem}") from None


def _stack_name(stem: str) -> str:
    for suffix in (".nested.template.json", ".template.json"):
        if stem.endswith(suffix):
            return stem[: -len(suffix)]
    return stem


def _from_manifest(root: Path, folder: Path, depth: int, seen: set[Path]) -> list[StackTemplate]:
    manifest_path = folder / MANIFEST
    manifest = read_assembly_json(manifest_path, "manifest", root)
    if not isinstance(manifest, Mapping):
        raise AssemblyError(f"cannot read manifest {manifest_path}: the top level is not an object")
    artifacts = manifest.get("artifacts", {})
    if not isinstance(artifacts, Mapping):
        raise AssemblyError(f"cannot read manifest {manifest_path}: artifacts is not an object")

    templates: list[StackTemplate] = []
    for artifact_id, artifact in artifacts.items():
        if not isinstance(artifact, Mapping):
            continue
        properties = artifact.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        kind = artifact.get("type")
        if kind == STACK_ARTIFACT:
            template_file = properties.get("templateFile")
            if not isinstance(template_file, str):
                raise AssemblyError(
                    f"cannot read manifest {manifest_path}: stack {artifact_id} has no templateFile"
                )
            display = artifact.get("displayName")
            templates.append(
                _template(
                    root,
                    folder / template_file,
                    display if isinstance(display, str) else str(artifact_id),
                )
            )
        elif kind == NESTED_ASSEMBLY_ARTIFACT and depth < _MAX_NESTING:
            directory = properties.get("directoryName")
            nested = _resolved(folder / directory) if isinstance(directory, str) else None
            if (
                nested is not None
                and nested not in seen
                and nested.is_relative_to(root.resolve())
                and (nested / MANIFEST).is_file()
            ):
                seen.add(nested)
                templates.extend(_from_manifest(root, folder / str(directory), depth + 1, seen))
    listed = {_resolved(t.path) for t in templates}
    templates.extend(
        _template(root, path, _stack_name(path.name))
        for path in sorted(folder.glob("*.nested.template.json"))
        if _resolved(path) not in listed
    )
    return templates


def _template(root: Path, path: Path, stack: str) -> StackTemplate:
    try:
        relative = path.relative_to(root).as_posix()
    except ValueError:
        relative = path.as_posix()
    return StackTemplate(stack=stack, path=path, relative_path=relative)


def find_templates(directory: str | Path) -> list[StackTemplate]:
    """The stack templates of the cloud assembly in ``directory``, in manifest order (sorted by
    file name without a manifest). Raises :class:`AssemblyError` when the folder is missing or
    a manifest cannot be read.

    :param directory: a cloud assembly folder (``cdk.out``); anything but a ``str`` or an
        ``os.PathLike`` is a ``TypeError`` naming it.
    """
    root = assembly_folder("find_templates", directory)
    if not root.exists():
        raise AssemblyError(f"folder not found: {root}")
    if not root.is_dir():
        raise AssemblyError(f"not a folder: {root} (expected a cloud assembly such as cdk.out)")
    if (root / MANIFEST).is_file():
        return _from_manifest(root, root, 0, {root.resolve()})
    return [
        _template(root, path, _stack_name(path.name))
        for path in sorted(root.glob("*.template.json"))
    ]
