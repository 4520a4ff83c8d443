"""aws-cdk-lib's submodules, loaded where they are first used.

Each of aws-cdk-lib's submodules costs a tenth of a second of CPU or more to import
(``aws_sagemaker``, and ``aws_lambda`` with the six it loads, much more: docs/performance.md),
which neither the import of the library's names nor a cluster without a VPC or a gate needs. A
module of the library names a submodule once, typed as the module itself::

    if TYPE_CHECKING:
        from aws_cdk import aws_ec2 as ec2
    else:
        ec2 = submodule("aws_ec2")

and ``ec2.SubnetSelection`` then imports ``aws_cdk.aws_ec2`` when it is first read (at run
time, never at the library's import). :func:`loaded_instance_of` checks a value's class
without importing its module at all.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any

PACKAGE = "aws_cdk"


class Submodule:
    """``aws_cdk.<name>``, imported on the first attribute read (then Python's own cache)."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = f"{PACKAGE}.{name}"

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self._name), attribute)

    def __repr__(self) -> str:
        return f"<{self._name}, imported on first use>"


def submodule(name: str) -> Any:
    """A stand-in for ``aws_cdk.<name>`` (``"aws_ec2"``) that imports it on first use."""
    return Submodule(name)


def loaded_instance_of(name: str, class_name: str) -> Callable[[object], bool]:
    """A check that a value is an ``aws_cdk.<name>.<class_name>``, which never imports the
    module: while it is not loaded, no value can be an instance of its classes."""
    module_name = f"{PACKAGE}.{name}"

    def ok(value: object) -> bool:
        module = sys.modules.get(module_name)
        return module is not None and isinstance(value, getattr(module, class_name))

    return ok


def declare_interfaces(cls: type, interfaces: Callable[[], tuple[type, ...]]) -> None:
    """``jsii.implements(*interfaces())`` for ``cls``, when its first instance is created
    rather than where the class is defined (call it before ``super().__init__``, which sends
    the interfaces to jsii), so that the modules of the interfaces load only then. Once per
    class: a subclass gets them at its own first instance."""
    if "__jsii_declared_late__" in vars(cls):
        return
    declared = list(getattr(cls, "__jsii_ifaces__", []))
    cls.__jsii_ifaces__ = declared + [i for i in interfaces() if i not in declared]  # type: ignore[attr-defined]
    cls.__jsii_declared_late__ = True  # type: ignore[attr-defined]
