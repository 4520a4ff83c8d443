"""Helpers for reading synthesized CloudFormation templates in tests.

Pure functions over template dicts (no CDK import), plus a cached cfn-lint runner.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

ASSET_HASH = re.compile(r"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")
"""A CDK asset hash (SHA-256 hex) as it appears in S3 keys and asset paths."""

CLUSTER_TYPE = "AWS::SageMaker::Cluster"


# -- reading ------------------------------------------------------------------------------


def as_dict(template: Any) -> dict[str, Any]:
    """An ``aws_cdk.assertions.Template`` as a plain template dict."""
    return dict(template.to_json())


def resources(template: Mapping[str, Any], type_name: str) -> dict[str, dict[str, Any]]:
    """Logical id -> resource, for every resource of ``type_name``."""
    return {
        logical_id: resource
        for logical_id, resource in template.get("Resources", {}).items()
        if resource["Type"] == type_name
    }


def only(template: Mapping[str, Any], type_name: str) -> tuple[str, dict[str, Any]]:
    """The single resource of ``type_name`` (fails if there is not exactly one)."""
    found = resources(template, type_name)
    assert len(found) == 1, f"expected one {type_name}, found {sorted(found)}"
    return next(iter(found.items()))


def depends_on(resource: Mapping[str, Any]) -> set[str]:
    """The explicit ``DependsOn`` logical ids of a resource."""
    value = resource.get("DependsOn", [])
    return {value} if isinstance(value, str) else set(value)


def references(value: Any) -> set[str]:
    """Logical ids referenced by ``Ref`` / ``Fn::GetAtt`` anywhere inside ``value``
    (pseudo parameters such as ``AWS::Region`` excluded)."""
    found: set[str] = set()
    for node in walk(value):
        if isinstance(node, dict) and len(node) == 1:
            ((key, arg),) = node.items()
            if key == "Ref" and isinstance(arg, str) and not arg.startswith("AWS::"):
                found.add(arg)
            elif key == "Fn::GetAtt":
                target = arg[0] if isinstance(arg, list) else str(arg).split(".")[0]
                found.add(target)
    return found


def walk(value: Any) -> Iterator[Any]:
    """Every dict, list and scalar inside ``value`` (pre-order)."""
    yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from walk(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk(item)


def statements(template: Mapping[str, Any], role_logical_id: str) -> list[dict[str, Any]]:
    """Every IAM statement attached to a role: inline ``AWS::IAM::Policy`` resources and the
    role's own ``Policies``."""
    found: list[dict[str, Any]] = []
    for policy in resources(template, "AWS::IAM::Policy").values():
        if {"Ref": role_logical_id} in policy["Properties"].get("Roles", []):
            found += _as_list(policy["Properties"]["PolicyDocument"]["Statement"])
    role = template["Resources"][role_logical_id]
    for inline in role["Properties"].get("Policies", []):
        found += _as_list(inline["PolicyDocument"]["Statement"])
    return found


def actions(statement: Mapping[str, Any]) -> set[str]:
    return set(_as_list(statement.get("Action", [])))


def statement_resources(statement: Mapping[str, Any]) -> list[Any]:
    return _as_list(statement.get("Resource", []))


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def flatten(value: Any, template: Mapping[str, Any] | None = None) -> str:
    """A string for a CloudFormation string expression: ``Fn::Join`` is joined, a ``Ref`` to
    a bucket with a literal-prefixed name becomes that name, anything else becomes a
    ``{Ref:X}`` / ``{X.Attr}`` / ``{Fn::...}`` placeholder."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and len(value) == 1:
        ((key, arg),) = value.items()
        if key == "Fn::Join":
            delimiter, parts = arg
            return str(delimiter).join(flatten(part, template) for part in parts)
        if key == "Ref":
            target = (template or {}).get("Resources", {}).get(arg)
            if target is not None and "BucketName" in target.get("Properties", {}):
                return flatten(target["Properties"]["BucketName"], template)
            return f"{{Ref:{arg}}}"
        if key == "Fn::GetAtt":
            parts = arg if isinstance(arg, list) else [arg]
            return "{" + ".".join(str(part) for part in parts) + "}"
        return f"{{{key}}}"
    return json.dumps(value)


# -- asset hashes -------------------------------------------------------------------------


def asset_hashes(value: Any) -> list[str]:
    """Every asset hash in ``value``, in order of first appearance (sorted-key JSON)."""
    return list(dict.fromkeys(ASSET_HASH.findall(json.dumps(value, sort_keys=True))))


def normalize_asset_hashes(value: Any) -> Any:
    """``value`` with every asset hash replaced by ``<asset-hash-N>`` (N numbered by first
    appearance), so the same asset keeps the same placeholder within one template."""
    text = json.dumps(value, sort_keys=True)
    numbering = {digest: index for index, digest in enumerate(asset_hashes(value), start=1)}
    return json.loads(ASSET_HASH.sub(lambda m: f"<asset-hash-{numbering[m.group(0)]}>", text))


# -- cfn-lint -----------------------------------------------------------------------------


@functools.cache
def _lint_rules() -> Any:
    from cfnlint.core import get_rules

    return get_rules([], [], [])


@functools.cache
def _lint_config(regions: tuple[str, ...]) -> Any:
    from cfnlint.config import ConfigMixIn

    return ConfigMixIn(regions=list(regions))


def cfn_lint(template: Mapping[str, Any], regions: Iterable[str] = ("us-east-1",)) -> list[Any]:
    """cfn-lint's default rule set (errors and warnings) on a template dict.

    Same rules and result as ``cfnlint.api.lint(json.dumps(template),
    config=ManualArgs(regions=[...]))``, but the rule collection is loaded once per session
    (loading it costs ~1 s, a run on one resource ~25 ms).
    """
    from cfnlint.runner import run_template_by_data

    data = json.loads(json.dumps(template))  # cfn-lint may annotate what it is given
    return list(run_template_by_data(data, _lint_config(tuple(regions)), _lint_rules()))


def describe_matches(matches: Iterable[Any]) -> str:
    """One line per cfn-lint match, for assertion messages."""
    return "\n".join(
        f"{m.rule.id} {'/'.join(str(p) for p in getattr(m, 'path', []) or [])}: {m.message}"
        for m in matches
    )
