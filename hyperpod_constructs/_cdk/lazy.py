"""Values computed at synth time, after every group has been added."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jsii
from aws_cdk import IAnyProducer, IListProducer, IResolveContext, IStringProducer, Lazy


@jsii.implements(IAnyProducer)
class _AnyProducer:
    def __init__(self, produce: Callable[[], Any]) -> None:
        self._produce = produce

    def produce(self, context: IResolveContext) -> Any:
        return self._produce()


@jsii.implements(IStringProducer)
class _StringProducer:
    def __init__(self, produce: Callable[[], str]) -> None:
        self._produce = produce

    def produce(self, context: IResolveContext) -> str:
        return self._produce()


@jsii.implements(IListProducer)
class _ListProducer:
    def __init__(self, produce: Callable[[], list[str]]) -> None:
        self._produce = produce

    def produce(self, context: IResolveContext) -> list[str]:
        return self._produce()


def lazy_any(produce: Callable[[], Any]) -> Any:
    """A token that resolves to ``produce()`` when the template is written (one jsii call)."""
    return Lazy.uncached_any(_AnyProducer(produce))


def lazy_string(produce: Callable[[], str]) -> str:
    """A string token that resolves to ``produce()`` when the template is written."""
    return Lazy.uncached_string(_StringProducer(produce))


def lazy_list(produce: Callable[[], list[str]]) -> list[str]:
    """A list token (a list of one encoded string) that resolves to ``produce()`` when the
    template is written."""
    return Lazy.uncached_list(_ListProducer(produce))
