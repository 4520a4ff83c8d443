"""The floor of an app: its own synthesized template written back as plain ``CfnResource``s.

Usage: ``floor.py TEMPLATE.json``. Every resource of the template becomes a ``CfnResource``
with the same logical id, type, properties and resource attributes (``DependsOn``,
``Metadata``, policies), in a stack with the same description: the least any construct
library can cost for that template (no validation, no lookups, no assets staged, no lazy
values). The library is not imported.
"""

from __future__ import annotations

import _harness

_harness.start()

import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from aws_cdk import CfnResource, Stack  # noqa: E402

ATTRIBUTES = ("CreationPolicy", "DeletionPolicy", "DependsOn", "Metadata", "UpdateReplacePolicy")
"""The resource attributes the library's templates use, written as overrides."""


def define_floor(app: Any, template: dict[str, Any]) -> None:
    """Add a stack with ``template``'s resources as ``CfnResource``s to ``app``."""
    stack = Stack(app, "Floor", description=template.get("Description"))
    for logical_id, resource in template["Resources"].items():
        cfn = CfnResource(
            stack, logical_id, type=resource["Type"], properties=resource.get("Properties")
        )
        cfn.override_logical_id(logical_id)
        for attribute in ATTRIBUTES:
            if attribute in resource:
                cfn.add_override(attribute, resource[attribute])


def define(app: Any) -> None:
    """Add the floor of the template ``floor.py`` was given to ``app``."""
    define_floor(app, json.loads(Path(sys.argv[1]).read_text(encoding="utf-8")))


if __name__ == "__main__":
    _harness.run(define)
