"""Values computed at synth time, after every group has been added."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

import jsii
from aws_cdk import (
    IAnyProducer,
    IListProducer,
    IResolveContext,
    IStableAnyProducer,
    IStableStringProducer,
    IStringProducer,
    Lazy,
)

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


@jsii.implements(IStableAnyProducer, IStableStringProducer)
class _FinalProducer(Generic[T]):
    """``produce()`` once, for ``Lazy.any`` and ``Lazy.string``."""

    def __init__(self, produce: Callable[[], T]) -> None:
        self._produce = produce

    def produce(self) -> T:
        return self._produce()


def final_any(produce: Callable[[], Any]) -> Any:
    """A token that resolves to ``produce()``, called the first time the template is written
    and never again: for a value that is final when it is first asked (one callback through
    jsii, where :func:`lazy_any` costs one per resolution, and aws-cdk-lib resolves a value
    several times per synth)."""
    return Lazy.any(_FinalProducer(produce))


def final_string(produce: Callable[[], str]) -> str:
    """:func:`final_any` for a string."""
    return Lazy.string(_FinalProducer(produce))
