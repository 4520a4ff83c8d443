"""Something to depend on whose resources are decided at synth."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from weakref import WeakKeyDictionary

import jsii
from aws_cdk import CfnResource, IAspect, Stack
from constructs import Construct, Dependable, IConstruct

from .._core.expect import require
from .lazy import final_any
from .paths import path_of


class DependencyRoots(Dependable):
    """Dependency roots computed when dependencies are read (at synth), not when taken."""

    def __init__(self, roots: Callable[[], list[IConstruct]]) -> None:
        super().__init__()
        self._roots = roots

    @property
    def dependency_roots(self) -> list[IConstruct]:
        return self._roots()


class LazyDependable(Construct):
    """Something to depend on whose resources are decided at synth (see
    :attr:`HyperPodSlurmCluster.ready`). It defines no resource of its own."""

    def __init__(self, scope: Construct, id: str, *, roots: Callable[[], list[IConstruct]]) -> None:
        super().__init__(scope, id)
        Dependable.implement(self, DependencyRoots(roots))


def _referenced(value: object, found: set[str]) -> set[str]:
    """The logical ids a resolved value names in a ``Ref`` or an ``Fn::GetAtt``."""
    if isinstance(value, Mapping):
        if len(value) == 1 and isinstance(value.get("Ref"), str):
            found.add(value["Ref"])
        attribute = value.get("Fn::GetAtt") if len(value) == 1 else None
        if isinstance(attribute, list) and attribute and isinstance(attribute[0], str):
            found.add(attribute[0])
        for item in value.values():
            _referenced(item, found)
    elif isinstance(value, list):
        for item in value:
            _referenced(item, found)
    return found


def drop_implied_dependencies(resource: CfnResource, *, stack: Stack | None = None) -> None:
    """Write ``resource``'s ``DependsOn`` without the resources its own properties already
    name in a ``Ref`` or an ``Fn::GetAtt``: CloudFormation orders those by the reference (at
    creation and, in reverse, at deletion), and cfn-lint warns about the repetition (W3005).
    The rest is kept: a role's policies, the network a teardown must outlive.

    Computed when the template is written, from every dependency the resource has by then
    (aws-cdk-lib's own included, e.g. a Lambda function's on its role). It is written as
    the resource's ``DependsOn`` override: an escape-hatch override of ``DependsOn`` made
    before it is replaced, and a property override that removes a reference is not seen.
    ``stack``: ``Stack.of(resource)``, when the caller knows it (a jsii call). Default: read.
    """
    stack = Stack.of(resource) if stack is None else stack
    computed: list[list[str] | None] = []  # once: the dependencies are final at synth

    def depends_on() -> list[str] | None:
        if not computed:
            computed.append(_unreferenced(stack, resource))
        return computed[0]

    # Cached by aws-cdk-lib once produced (a list; None is asked again, and answered here).
    resource.add_override("DependsOn", final_any(depends_on))


_LOGICAL_ID_TOKENS: WeakKeyDictionary[CfnResource, str] = WeakKeyDictionary()
"""By resource, its ``logical_id`` token (made once, when it is created; what it resolves to
may change until the synth, so it is resolved at each synth)."""


def _logical_id_token(resource: CfnResource) -> str:
    token = _LOGICAL_ID_TOKENS.get(resource)
    if token is None:
        token = _LOGICAL_ID_TOKENS[resource] = resource.logical_id
    return token


def _unreferenced(stack: Stack, resource: CfnResource) -> list[str] | None:
    targets = [t for t in resource.obtain_dependencies() if isinstance(t, CfnResource)]
    if not targets:  # most resources: no properties to resolve (each costs ~5 ms)
        return None
    # In aws-cdk-lib's order (by construct path), each once. The properties and every
    # target's logical id are resolved in one jsii call (a call per target would cost a
    # round trip each: a VPC is twenty resources).
    targets.sort(key=path_of)
    properties, logical_ids = stack.resolve(
        [resource._cfn_properties, [_logical_id_token(target) for target in targets]]
    )
    named = _referenced(properties, set())
    ids = dict.fromkeys(map(str, logical_ids))
    return [logical_id for logical_id in ids if logical_id not in named] or None


@jsii.implements(IAspect)
class DropImpliedDependsOn:
    """An aspect that writes every resource's ``DependsOn`` without what the resource's own
    ``Ref`` / ``Fn::GetAtt`` already order (cfn-lint W3005), for constructs the library does
    not write (aws-cdk-lib's ``Vpc`` default-security-group handler, a Lambda function's
    role): ``Aspects.of(stack).add(DropImpliedDependsOn())``. The library's own resources
    need no aspect. A resource with its own ``DependsOn`` override should not be below it."""

    def __init__(self, *, resource_types: Collection[str] | None = None) -> None:
        """:param resource_types: only resources of these types (e.g.
        ``["AWS::Lambda::Function"]``, where aws-cdk-lib's functions repeat their role),
        which saves the look at every other resource. Default: every resource."""
        self._done: set[str] = set()
        if resource_types is not None:
            require(
                "DropImpliedDependsOn",
                "resource_types",
                resource_types,
                (list, tuple, set, frozenset),
            )
        self._types = None if resource_types is None else frozenset(resource_types)

    def visit(self, node: IConstruct) -> None:
        """Aspect entry point."""
        # Only a resource with a dependency by now (the construct's or the resource's own)
        # can repeat a reference: the others cost no override.
        if not isinstance(node, CfnResource):
            return
        if self._types is not None and node.cfn_resource_type not in self._types:
            return
        if not (node.node.dependencies or node.obtain_dependencies()):
            return
        path = path_of(node)
        if path not in self._done:
            self._done.add(path)
            drop_implied_dependencies(node)
