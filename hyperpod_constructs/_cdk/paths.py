"""Construct paths, read from jsii once per construct (a construct's path never changes)."""

from __future__ import annotations

from weakref import WeakKeyDictionary

from aws_cdk import CfnResource
from constructs import IConstruct

_PATHS: WeakKeyDictionary[IConstruct, str] = WeakKeyDictionary()


def path_of(construct: IConstruct) -> str:
    """``construct.node.path``, read from jsii the first time only (two calls: the node, then
    its path). A ``CfnResource``'s takes one: its ``toString()`` is the path followed by
    `` [<type>]`` (a type has no `` [``, so the last one starts it); any other text (a
    subclass's own ``toString``) falls back to the node's path."""
    path = _PATHS.get(construct)
    if path is None:
        path = None
        if isinstance(construct, CfnResource):
            text, bracket, kind = construct.to_string().rpartition(" [")
            if bracket and kind.endswith("]") and " " not in kind:
                path = text
        if path is None:
            path = construct.node.path
        _PATHS[construct] = path
    return path


def child_path(scope: IConstruct, id: str) -> str:
    """The path of ``scope``'s child ``id`` (an id without ``/`` or a line break, which
    constructs rewrites), from ``scope``'s path (:func:`path_of`) without asking jsii for the
    child's."""
    parent = path_of(scope)
    return f"{parent}/{id}" if parent else id


def remember_path(construct: IConstruct, scope: IConstruct, id: str) -> None:
    """Record the path of ``construct``, just defined as ``id`` in ``scope``, from
    ``scope``'s (:func:`child_path`): :func:`path_of` then asks jsii nothing for it, and
    nothing for the next construct defined in ``scope``. An id that constructs rewrites is
    left to :func:`path_of`."""
    if "/" not in id and "\n" not in id:
        _PATHS[construct] = child_path(scope, id)
