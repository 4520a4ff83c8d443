"""Something to depend on whose resources are decided at synth."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import jsii
from aws_cdk import CfnResource, IAspect, Stack
from constructs import Construct, Dependable, IConstruct

from ._lazy import lazy_any


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


def drop_implied_dependencies(resource: CfnResource) -> None:
    """Write ``resource``'s ``DependsOn`` without the resources its own properties already
    name in a ``Ref`` or an ``Fn::GetAtt``: CloudFormation orders those by the reference (at
    creation and, in reverse, at deletion), and cfn-lint warns about the repetition (W3005).
    The rest is kept: a role's policies, the network a teardown must outlive.

    Computed when the template is written, from every dependency the resource has by then
    (aws-cdk-lib's own included, e.g. a Lambda function's on its role). It is written as
    the resource's ``DependsOn`` override: an escape-hatch override of ``DependsOn`` made
    before it is replaced, and a property override that removes a reference is not seen.
    """
    stack = Stack.of(resource)

    def depends_on() -> list[str] | None:
        named = _referenced(stack.resolve(resource._cfn_properties), set())
        # In aws-cdk-lib's order (by construct path), each once.
        targets = sorted(
            (t for t in resource.obtain_dependencies() if isinstance(t, CfnResource)),
            key=lambda target: target.node.path,
        )
        ids = dict.fromkeys(str(stack.resolve(target.logical_id)) for target in targets)
        return [logical_id for logical_id in ids if logical_id not in named] or None

    resource.add_override("DependsOn", lazy_any(depends_on))


@jsii.implements(IAspect)
class DropImpliedDependsOn:
    """An aspect that writes every resource's ``DependsOn`` without what the resource's own
    ``Ref`` / ``Fn::GetAtt`` already order (cfn-lint W3005), for constructs the library does
    not write (aws-cdk-lib's ``Vpc`` default-security-group handler, a Lambda function's
    role): ``Aspects.of(stack).add(DropImpliedDependsOn())``. The library's own resources
    need no aspect. A resource with its own ``DependsOn`` override should not be below it."""

    def __init__(self) -> None:
        self._done: set[str] = set()

    def visit(self, node: IConstruct) -> None:
        """Aspect entry point."""
        if isinstance(node, CfnResource) and node.node.path not in self._done:
            self._done.add(node.node.path)
            drop_implied_dependencies(node)
