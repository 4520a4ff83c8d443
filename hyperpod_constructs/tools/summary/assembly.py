"""Summarize the HyperPod clusters of a cloud assembly folder (``cdk.out``), read by the tools'
one reader of an assembly (``hyperpod_constructs.tools._assembly``): stacks from
``manifest.json``, nested assemblies (one per ``Stage``) and nested-stack templates; without a
``manifest.json`` every ``*.template.json`` of the folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .._assembly.files import assembly_folder
from .._assembly.stacks import AssemblyStack, each_stack
from .model import ClusterSummary, summarize_template


@dataclass(frozen=True)
class AssemblySummary:
    """Every HyperPod cluster found in a cloud assembly folder."""

    directory: str
    """The folder, as given."""
    stacks_read: int
    """How many stack templates were read."""
    clusters: tuple[ClusterSummary, ...]
    """Every cluster found, in stack order."""


def summarize(directory: str | Path) -> AssemblySummary:
    """Read every stack template in ``directory`` and summarize its HyperPod clusters.

    Raises :class:`~hyperpod_constructs.tools.summary.AssemblyError` (one-line message naming
    the file) when the folder is missing or a manifest or template is unreadable, not JSON, or
    not a template.

    :param directory: a cloud assembly folder (``cdk.out``); anything but a ``str`` or an
        ``os.PathLike`` is a ``TypeError`` naming it.
    """
    read: list[AssemblyStack] = []

    def clusters_of(stack: AssemblyStack) -> list[ClusterSummary]:
        read.append(stack)
        file = stack.file
        return summarize_template(
            stack.template, stack=file.stack, template_file=file.relative_path
        )

    clusters = each_stack(assembly_folder("summarize", directory), clusters_of)
    return AssemblySummary(
        directory=str(directory), stacks_read=len(read), clusters=tuple(clusters)
    )
