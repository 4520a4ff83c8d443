"""Summaries of the HyperPod clusters in a synthesized cloud assembly (``cdk.out``).

Used by ``python -m hyperpod_constructs summary``. Everything here reads JSON only and uses the
standard library alone: it must never import ``aws_cdk`` (the command has to start fast in a
pipeline and print nothing but its result).

- ``model``: pure functions, CloudFormation template -> :class:`ClusterSummary` list.
- ``assembly``: every cluster of a ``cdk.out`` folder, read by the tools' one reader of a
  cloud assembly (``hyperpod_constructs.tools._assembly``, whose ``AssemblyError``,
  ``StackTemplate`` and ``find_templates`` are exported here).
- ``render``: the plain-text table and the JSON document.
"""

from .._assembly.files import AssemblyError, StackTemplate, find_templates
from .assembly import AssemblySummary, summarize
from .model import (
    ClusterSummary,
    GateRequirement,
    GateSummary,
    GroupSummary,
    TemplateError,
    render_value,
    summarize_template,
)
from .render import JSON_SCHEMA_VERSION, render_json, render_text, to_json

__all__ = [
    "JSON_SCHEMA_VERSION",
    "AssemblyError",
    "AssemblySummary",
    "ClusterSummary",
    "GateRequirement",
    "GateSummary",
    "GroupSummary",
    "StackTemplate",
    "TemplateError",
    "find_templates",
    "render_json",
    "render_text",
    "render_value",
    "summarize",
    "summarize_template",
    "to_json",
]
