"""Construct paths read from jsii once (hyperpod_constructs/_cdk/paths.py)."""

from __future__ import annotations

from aws_cdk import App, CfnResource, Stack
from constructs import Construct

from hyperpod_constructs._cdk.paths import child_path, path_of, remember_path


class _OwnText(CfnResource):
    """A resource whose ``toString`` is not aws-cdk-lib's."""

    def to_string(self) -> str:
        return "not a path"


def _tree() -> tuple[Stack, Construct]:
    stack = Stack(App(), "Paths")
    return stack, Construct(stack, "Odd [id] here")


def test_a_resources_path_is_its_node_path_whatever_its_id_holds() -> None:
    stack, holder = _tree()
    for resource in (
        CfnResource(holder, "Plain", type="Test::Paths::Plain"),
        CfnResource(holder, "With [brackets] and ] spaces [", type="Test::Paths::Odd"),
        CfnResource(stack, "Custom", type="Custom::Paths"),
    ):
        assert path_of(resource) == resource.node.path
    assert path_of(holder) == holder.node.path == "Paths/Odd [id] here"


def test_a_resource_with_its_own_text_falls_back_to_its_node_path() -> None:
    _, holder = _tree()
    resource = _OwnText(holder, "Own", type="Test::Paths::Own")
    assert path_of(resource) == "Paths/Odd [id] here/Own"


def test_a_childs_path_is_the_one_aws_cdk_lib_gives_it() -> None:
    stack, holder = _tree()
    assert child_path(holder, "Child") == Construct(holder, "Child").node.path
    assert child_path(stack, "Top") == Construct(stack, "Top").node.path


def test_a_remembered_path_is_the_one_aws_cdk_lib_gives_it() -> None:
    stack, holder = _tree()
    for scope, id in ((holder, "Remembered"), (stack, "A/B"), (stack, "Line\nbreak")):
        construct = Construct(scope, id)
        remember_path(construct, scope, id)
        assert path_of(construct) == construct.node.path
