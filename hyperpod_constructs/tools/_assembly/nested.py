"""Nested stacks in a cloud assembly: which nested stacks a parent template declares and where
their templates are.

CDK writes a ``NestedStack`` as an ``AWS::CloudFormation::Stack`` resource of the parent whose
template is an asset of the parent: named by the resource's ``aws:asset:path`` metadata (the
cdk CLI writes it), else by the asset manifest's file whose S3 object key ends the resource's
``TemplateURL``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .files import read_assembly_json
from .types import CLUSTER_TYPE, NESTED_STACK_TYPE

ASSET_PATH = "aws:asset:path"


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def nested_stacks(template: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Logical id -> resource of each nested stack (``AWS::CloudFormation::Stack``)."""
    return {
        str(logical_id): resource
        for logical_id, resource in _mapping(template.get("Resources")).items()
        if isinstance(resource, Mapping) and resource.get("Type") == NESTED_STACK_TYPE
    }


def has_cluster(template: Mapping[str, Any]) -> bool:
    """``template`` declares a HyperPod cluster."""
    resources = _mapping(template.get("Resources")).values()
    return any(_mapping(resource).get("Type") == CLUSTER_TYPE for resource in resources)


def _object_key(url: Any) -> str | None:
    """The last path segment of a ``TemplateURL`` (a string, or CDK's ``Fn::Join``)."""
    if isinstance(url, str):
        return url.rsplit("/", 1)[-1] or None
    parts = _mapping(url).get("Fn::Join")
    if isinstance(parts, list) and len(parts) == 2 and isinstance(parts[1], list):
        last = parts[1][-1] if parts[1] else None
        if isinstance(last, str):
            return last.rsplit("/", 1)[-1] or None
    return None


def template_file(resource: Mapping[str, Any], assets: Iterable[Mapping[str, Any]]) -> str | None:
    """The nested stack's template file, relative to the parent's folder (None: not found).

    :param resource: the parent's ``AWS::CloudFormation::Stack`` resource.
    :param assets: the asset manifests (``*.assets.json``) beside the parent's template.
    """
    path = _mapping(resource.get("Metadata")).get(ASSET_PATH)
    if isinstance(path, str):
        return path
    key = _object_key(_mapping(resource.get("Properties")).get("TemplateURL"))
    if key is None:
        return None
    for manifest in assets:
        for asset in _mapping(manifest.get("files")).values():
            destinations = _mapping(_mapping(asset).get("destinations")).values()
            source = _mapping(_mapping(asset).get("source")).get("path")
            if isinstance(source, str) and any(
                _mapping(d).get("objectKey") == key for d in destinations
            ):
                return source
    return None


def nested_template(resource: Mapping[str, Any], folder: Path) -> Mapping[str, Any] | None:
    """The template of a parent's nested stack resource, from the parent's folder (None: not
    found, or not an object)."""
    assets = [read_assembly_json(f, "asset manifest", folder) for f in folder.glob("*.assets.json")]
    name = template_file(resource, [a for a in assets if isinstance(a, Mapping)])
    if name is None or not (folder / name).is_file():
        return None
    document = read_assembly_json(folder / name, "template", folder)
    return document if isinstance(document, Mapping) else None
