"""A synth warning for a subscription to the gate's topic that waits for the gate.

The gate publishes READY once, when its wait condition completes. A subscription to the
gate's topic that depends on ``cluster.ready`` (or on the cluster, or on anything that does)
is created by CloudFormation only after the wait condition completed, that is after the READY
message was sent to nobody. SNS keeps no messages for later subscribers, so the trap cannot be
made harmless at run time; the synth names it instead (``HP-WARN-GATE-SUBSCRIPTION``).
"""

from __future__ import annotations

from collections.abc import Callable

import jsii
from aws_cdk import Annotations, IAspect, Stack
from aws_cdk import aws_sns as sns
from constructs import IConstruct

WARNING_ID = "hyperpod:HP-WARN-GATE-SUBSCRIPTION"
MAX_DEPENDENCY_DEPTH = 32
"""How deep dependencies are followed (a dependency cycle CDK would refuse anyway)."""


def _contains(root: IConstruct, target: IConstruct) -> bool:
    """Whether depending on ``root`` waits for ``target`` (it is ``target`` or contains it)."""
    root_path, path = root.node.path, target.node.path
    return path == root_path or path.startswith(root_path + "/") or root_path == ""


def waits_for(construct: IConstruct, target: IConstruct) -> bool:
    """Whether ``construct`` (through its own dependencies, its scopes', or theirs, however
    deep) is created only after ``target``."""
    seen: set[str] = set()
    pending = [(construct, 0)]
    while pending:
        current, depth = pending.pop()
        if current.node.path in seen or depth > MAX_DEPENDENCY_DEPTH:
            continue
        seen.add(current.node.path)
        for scope in current.node.scopes:
            for root in scope.node.dependencies:
                if _contains(root, target):
                    return True
                pending.append((root, depth + 1))
    return False


@jsii.implements(IAspect)
class SubscriptionAfterReady:
    """Warns on every subscription to ``topic`` created only after the wait condition."""

    def __init__(self, topic: sns.ITopic, condition: Callable[[], IConstruct]) -> None:
        self._topic = topic
        self._condition = condition

    def visit(self, node: IConstruct) -> None:
        if not isinstance(node, sns.CfnSubscription):
            return
        stack = Stack.of(node)
        if stack.resolve(node.topic_arn) != stack.resolve(self._topic.topic_arn):
            return
        condition = self._condition()
        if not waits_for(node, condition):
            return
        Annotations.of(node).add_warning_v2(
            WARNING_ID,
            f"this subscription to the MinCount gate's topic depends on the gate's wait "
            f"condition ({condition.node.path}, e.g. through cluster.ready): CloudFormation "
            "creates it only after the gate opened, so it never receives the READY message. "
            "Fix: do not make the subscription depend on cluster.ready (or the cluster); "
            "subscribe before the gate opens, e.g. in the same stack without that dependency "
            "or in a stack deployed first [HP-WARN-GATE-SUBSCRIPTION]",
        )
