"""Which stack synthesizer refused a construct's file asset (for messages only: the library
never calls a synthesizer from Python, see ``_gate/resources.py``)."""

from __future__ import annotations

import re

from aws_cdk import Stack
from constructs import IConstruct

_NAMED = re.compile(r"\b([A-Z]\w*Synthesizer)\b")


def refusing_synthesizer(scope: IConstruct, refusal: str) -> str:
    """The class name of the synthesizer that refused a file asset of ``scope`` with the
    error text ``refusal``: the one the text names (aws-cdk-lib's ``BootstraplessSynthesizer``
    does), else the class of the outermost stack's synthesizer (a nested stack forwards its
    assets to its parent's). Reading ``stack.synthesizer`` makes the jsii kernel warn about
    the bound copy aws-cdk-lib keeps of a reusable synthesizer, hence the text first."""
    named = _NAMED.search(refusal)
    if named is not None:
        return named.group(1)
    stack = Stack.of(scope)
    while stack.nested_stack_parent is not None:
        stack = stack.nested_stack_parent
    return type(stack.synthesizer).__name__
