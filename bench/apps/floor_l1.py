"""The floor in aws-cdk-lib's L1 classes: an app's own template, each resource an instance of
its L1 class (``lambda.CfnFunction`` for ``AWS::Lambda::Function``, ...).

Usage: ``floor_l1.py TEMPLATE.json``. It imports the Python module of every L1 class the
template's resource types need (what any Python app that creates them pays) and has
aws-cdk-lib's ``CfnInclude`` create the resources in one call, with their logical ids. Not a
target: a reference for what the L1 classes themselves cost (their modules' imports on both
sides of jsii, their rendering and tree metadata at synth), which a library whose resources
cdk-nag must see (its rules test ``instanceof CfnFunction``, ...) cannot avoid, and which
``floor.py``'s ``CfnResource``s do not pay. The library is not imported.
"""

from __future__ import annotations

import _harness

_harness.start()

import importlib  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from aws_cdk import Stack  # noqa: E402
from aws_cdk import cloudformation_include as cfn_inc  # noqa: E402


def l1_module(resource_type: str) -> str | None:
    """The aws-cdk-lib module of ``AWS::Lambda::Function``'s L1 class (``aws_lambda``), or None
    for a type without one (``Custom::...``)."""
    parts = resource_type.split("::")
    if len(parts) != 3 or parts[0] != "AWS":
        return None
    return f"aws_{parts[1].lower()}"


def define_floor(app: Any, path: Path) -> None:
    """Add a stack with ``path``'s resources as L1 instances to ``app``."""
    template = json.loads(path.read_text(encoding="utf-8"))
    modules = {l1_module(r["Type"]) for r in template["Resources"].values()}
    for module in sorted(m for m in modules if m is not None):
        importlib.import_module(f"aws_cdk.{module}")
    stack = Stack(app, "FloorL1", description=template.get("Description"))
    # The resources only: the stack writes its own bootstrap parameter and rule again.
    resources = Path(tempfile.mkdtemp()) / "resources.json"
    resources.write_text(json.dumps({"Resources": template["Resources"]}), encoding="utf-8")
    cfn_inc.CfnInclude(stack, "Template", template_file=str(resources))


def define(app: Any) -> None:
    """Add the L1 floor of the template ``floor_l1.py`` was given to ``app``."""
    define_floor(app, Path(sys.argv[1]))


if __name__ == "__main__":
    _harness.run(define)
