"""Values computed at synth time, after every group has been added."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jsii
from aws_cdk import IAnyProducer, IResolveContext, IStringProducer, Lazy


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


def lazy_any(produce: Callable[[], Any]) -> Any:
    """A token that resolves to ``produce()`` when the template is written (one jsii call)."""
    return Lazy.uncached_any(_AnyProducer(produce))


def lazy_string(produce: Callable[[], str]) -> str:
    """A string token that resolves to ``produce()`` when the template is written."""
    return Lazy.uncached_string(_StringProducer(produce))
