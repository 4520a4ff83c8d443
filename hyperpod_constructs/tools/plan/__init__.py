"""``python -m hyperpod_constructs plan``: what an update does to a running HyperPod cluster, in
HyperPod's terms, before ``cdk deploy``.

Functional core, imperative shell, as ``summary`` and ``watch``:

- ``semantics``: the one table of what changing each property does (pure data, checked
  against the resource schema that cfn-lint ships); an allow-list: no row, "cannot tell".
- ``resolve``: each template evaluated as CloudFormation deploys it: parameters, mappings,
  conditions and intrinsic functions; what only CloudFormation knows stays an expression
  (pure).
- ``references``: which references of the new template change on deployment (resources
  CloudFormation replaces, by ``schemas``: cfn-lint's resource schemas when installed) (pure).
- ``refusals``: what ``UpdateCluster`` refuses, by the constructs' own rules (pure).
- ``model``: baseline template + new template -> :class:`StackPlan` (pure).
- ``changeset``: ``--change-set``, CloudFormation's own verdict.
- ``render``: the text and the JSON document.
- ``aws``: the deployed baseline (``GetTemplate``, ``DescribeStacks``, ``DescribeCluster``).
- ``cli``: the subcommand.

Importing this package imports neither ``aws_cdk`` nor ``boto3`` nor cfn-lint.
"""

from .model import (
    EXIT_DISRUPTIVE,
    BaselineError,
    Change,
    ClusterChange,
    ClusterPlan,
    GatePlan,
    GateWait,
    GroupChange,
    GroupPlan,
    StackPlan,
    check_baseline,
    plan_stack,
)
from .render import JSON_SCHEMA_VERSION, render_json, render_text, to_json
from .semantics import RULES, Effect, PropertyRule, rule_for

__all__ = [
    "EXIT_DISRUPTIVE",
    "JSON_SCHEMA_VERSION",
    "RULES",
    "BaselineError",
    "Change",
    "ClusterChange",
    "ClusterPlan",
    "Effect",
    "GatePlan",
    "GateWait",
    "GroupChange",
    "GroupPlan",
    "PropertyRule",
    "StackPlan",
    "check_baseline",
    "plan_stack",
    "render_json",
    "render_text",
    "rule_for",
    "to_json",
]
