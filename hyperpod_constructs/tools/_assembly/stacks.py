"""Each stack of a cloud assembly as the tools read it: its template, its identity (the
CloudFormation stack name and region the manifest gives it) and, once deployed, its parameter
values.

:func:`read_stacks` (and :func:`each_stack` over it) is the one walk of an assembly that
``summary``, ``watch``, ``preflight`` and ``plan`` share.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict, TypeVar

from .files import MANIFEST, AssemblyError, StackTemplate, find_templates, read_assembly_json

T = TypeVar("T")


class Identity(TypedDict):
    """A stack's names and region, as the tools' readers of one template take them."""

    stack_name: str
    display_name: str
    region: str | None


@dataclass(frozen=True)
class AssemblyStack:
    """One stack template of a cloud assembly, read, with the stack's identity."""

    file: StackTemplate
    """Where the template is, and the stack's path in the app (``Stage/Stack``)."""
    name: str
    """The CloudFormation stack name (the manifest's ``stackName``, else the artifact id)."""
    region: str | None
    """The stack's region when the app pins one (``env=``), else None."""
    template: object
    """The template as read (strict JSON; not checked to be a template)."""

    @property
    def identity(self) -> Identity:
        """The CloudFormation name, the path in the app and the region."""
        return Identity(stack_name=self.name, display_name=self.file.stack, region=self.region)


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _region(environment: object) -> str | None:
    """``aws://123456789012/eu-west-1`` -> ``eu-west-1``; environment-agnostic -> None."""
    if not isinstance(environment, str) or not environment.startswith("aws://"):
        return None
    region = environment.rsplit("/", 1)[-1]
    return None if region in ("", "unknown-region") else region


def stack_identity(stack: StackTemplate, root: Path) -> tuple[str, str | None]:
    """(CloudFormation stack name, region) of a template, from the manifest that lists it."""
    manifest_path = stack.path.parent / MANIFEST
    try:
        manifest = read_assembly_json(manifest_path, "manifest", root)
    except AssemblyError:
        return stack.stack, None
    for artifact_id, artifact in _mapping(_mapping(manifest).get("artifacts")).items():
        artifact = _mapping(artifact)
        properties = _mapping(artifact.get("properties"))
        if properties.get("templateFile") == stack.path.name:
            name = properties.get("stackName")
            return (
                name if isinstance(name, str) and name else str(artifact_id),
                _region(artifact.get("environment")),
            )
    return stack.stack, None


def read_stacks(directory: str | Path) -> Iterator[AssemblyStack]:
    """Every stack template of the cloud assembly in ``directory`` (manifest order, nested
    assemblies included), read one at a time. Raises :class:`~.files.AssemblyError` (one line
    naming the file) when the folder, a manifest or a template cannot be read."""
    root = Path(directory)
    for stack in find_templates(directory):
        template = read_assembly_json(stack.path, "template", root)
        name, region = stack_identity(stack, root)
        yield AssemblyStack(stack, name, region, template)


def each_stack(directory: str | Path, read: Callable[[AssemblyStack], list[T]]) -> list[T]:
    """``read(stack)`` of every stack of the cloud assembly in ``directory`` (manifest order),
    concatenated. Raises :class:`~.files.AssemblyError` (one line naming the file) when the
    folder, a manifest or a template cannot be read, or ``read`` finds no template in it (a
    ``ValueError``: ``TemplateError``)."""
    found: list[T] = []
    for stack in read_stacks(directory):
        try:
            found += read(stack)
        except ValueError as error:  # TemplateError
            raise AssemblyError(f"cannot read template {stack.file.path}: {error}") from None
    return found


def deployed_parameters(stack: Mapping[str, Any]) -> dict[str, str]:
    """A deployed stack's parameter values, from its ``DescribeStacks`` entry (an SSM
    parameter type's resolved value)."""
    values: dict[str, str] = {}
    for parameter in stack.get("Parameters") or []:
        key = parameter.get("ParameterKey")
        value = parameter.get("ResolvedValue") or parameter.get("ParameterValue")
        if isinstance(key, str) and isinstance(value, str):
            values[key] = value
    return values
