"""Values computed at synth time, after every group has been added."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

import jsii
from aws_cdk import IAnyProducer, IListProducer, IResolveContext, IStringProducer, Lazy

T = TypeVar("T")


@jsii.implements(IAnyProducer, IStringProducer, IListProducer)
class _Producer(Generic[T]):
    """``produce()`` at synth, for ``Lazy.uncached_any``, ``_string`` and ``_list`` alike."""

    def __init__(self, produce: Callable[[], T]) -> None:
        self._produce = produce

    def produce(self, context: IResolveContext) -> T:
        return self._produce()


def lazy_any(produce: Callable[[], Any]) -> Any:
    """A token that resolves to ``produce()`` when the template is written (one jsii call)."""
    return Lazy.uncached_any(_Producer(produce))


def lazy_string(produce: Callable[[], str]) -> str:
    """A string token that resolves to ``produce()`` when the template is written."""
    return Lazy.uncached_string(_Producer(produce))


def lazy_list(produce: Callable[[], list[str]]) -> list[str]:
    """A list token (a list of one encoded string) that resolves to ``produce()`` when the
    template is written."""
    return Lazy.uncached_list(_Producer(produce))
