"""A stack's partition, region and account, read once per stack."""

from __future__ import annotations

import weakref

from aws_cdk import Stack

_ENVIRONMENTS: weakref.WeakKeyDictionary[Stack, tuple[str, str, str]] = weakref.WeakKeyDictionary()


def stack_environment(stack: Stack) -> tuple[str, str, str]:
    """``(stack.partition, stack.region, stack.account)``: what ``stack.format_arn`` writes
    (tokens for an environment-agnostic stack), three round trips to jsii once per stack."""
    if stack not in _ENVIRONMENTS:
        _ENVIRONMENTS[stack] = (stack.partition, stack.region, stack.account)
    return _ENVIRONMENTS[stack]
