"""``plan --change-set``: CloudFormation's own verdict, when it can be asked.

A change set of type ``UPDATE`` is created for the new template (as ``cdk diff --change-set``
does), waited for, read with ``DescribeChangeSet(IncludePropertyValues=True)`` and deleted,
whatever happens. What it says is added to the offline plan, never less: a resource change
with ``Replacement`` ``True`` or ``Conditional`` on a cluster or on anything a cluster refers
to (through ``Ref``/``Fn::GetAtt``/``Fn::Sub``, over the whole template), and a cluster that
CloudFormation removes, are at least "cannot tell" (exit 3).

IAM: ``cloudformation:CreateChangeSet``, ``cloudformation:DescribeChangeSet`` and
``cloudformation:DeleteChangeSet`` on the stack (plus, as for ``cdk deploy``,
``iam:PassRole`` where the stack deploys with a role).
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from .._assembly.types import CLUSTER_TYPE
from .model import StackPlan

CAPABILITIES = ["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"]
MAX_POLLS = 120
POLL_SECONDS = 5.0
_DONE = frozenset({"CREATE_COMPLETE", "FAILED", "DELETE_COMPLETE", "DELETE_FAILED"})
_NO_CHANGES = ("didn't contain changes", "No updates are to be performed")


class ChangeSetError(Exception):
    """The change set could not be made or read: exit 2 with this one-line message."""


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _refers(value: Any, depth: int = 0) -> set[str]:
    """Logical ids a value refers to (``Ref``, ``Fn::GetAtt`` in both forms, ``Fn::Sub``)."""
    if depth > 64:
        return set()
    found: set[str] = set()
    if isinstance(value, list):
        for item in value:
            found |= _refers(item, depth + 1)
    elif isinstance(value, Mapping):
        for key, argument in value.items():
            if key == "Ref" and isinstance(argument, str):
                found.add(argument)
            elif key == "Fn::GetAtt":
                head = argument[0] if isinstance(argument, list) and argument else argument
                if isinstance(head, str):
                    found.add(head.split(".", 1)[0])
            elif key == "Fn::Sub":
                pattern = argument[0] if isinstance(argument, list) and argument else argument
                if isinstance(pattern, str):
                    found |= {
                        part.split("}", 1)[0].split(".", 1)[0]
                        for part in pattern.split("${")[1:]
                        if not part.startswith("!")
                    }
                found |= _refers(argument, depth + 1)
            else:
                found |= _refers(argument, depth + 1)
    return found


def watched(template: Mapping[str, Any]) -> set[str]:
    """The clusters of ``template`` and every resource and parameter they refer to,
    transitively."""
    resources = _mapping(template.get("Resources"))
    todo = [str(k) for k, r in resources.items() if _mapping(r).get("Type") == CLUSTER_TYPE]
    seen: set[str] = set()
    while todo:
        logical_id = todo.pop()
        if logical_id in seen:
            continue
        seen.add(logical_id)
        resource = _mapping(resources.get(logical_id))
        todo += sorted(_refers(resource.get("Properties")) - seen)
    return seen


def findings(
    changes: Iterable[Mapping[str, Any]], old: Mapping[str, Any], new: Mapping[str, Any]
) -> list[str]:
    """What in the change set makes the plan at least "cannot tell" (pure).

    :param changes: ``Changes`` of ``DescribeChangeSet`` (every page).
    :param old: the deployed template; :param new: the new one.
    """
    watch = watched(old) | watched(new)
    found = []
    for change in changes:
        resource = _mapping(_mapping(change).get("ResourceChange"))
        logical_id = str(resource.get("LogicalResourceId"))
        if logical_id not in watch:
            continue
        action, replacement = resource.get("Action"), resource.get("Replacement")
        kind = resource.get("ResourceType")
        what = f"CloudFormation's change set: {logical_id} ({kind})"
        if action == "Remove" and kind == CLUSTER_TYPE:
            found.append(f"{what} is removed")
        elif replacement in ("True", "Conditional"):
            causes = sorted(
                {
                    str(_mapping(d.get("Target")).get("Name") or d.get("CausingEntity"))
                    for d in resource.get("Details") or []
                    if isinstance(d, Mapping)
                    and _mapping(d.get("Target")).get("RequiresRecreation") != "Never"
                }
            )
            because = f" (by {', '.join(causes)})" if causes else ""
            verdict = "is replaced" if replacement == "True" else "may be replaced (Conditional)"
            found.append(
                f"{what} {verdict}{because}: the cluster "
                + ("itself" if kind == CLUSTER_TYPE else "refers to it")
                + ", so plan cannot tell that the update is safe"
            )
    return found


def ask(
    client: Any,
    stack_name: str,
    template: Mapping[str, Any],
    parameters: Mapping[str, str],
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> list[Mapping[str, Any]]:
    """Create an UPDATE change set of ``template`` for ``stack_name``, wait for it, return its
    ``Changes`` (every page) and delete it.

    :param client: a boto3 CloudFormation client.
    :param parameters: the parameter values the update deploys with (the deployed ones kept).
    :param sleep: waits between two reads of the change set (default: ``time.sleep``).
    :raises ChangeSetError: it could not be created or read, or failed for another reason
        than "no changes".
    """
    from botocore.exceptions import (  # type: ignore[import-untyped, unused-ignore]
        BotoCoreError,
        ClientError,
    )

    name = f"hyperpod-plan-{uuid.uuid4().hex[:12]}"
    declared = _mapping(template.get("Parameters"))
    request: dict[str, Any] = {
        "StackName": stack_name,
        "ChangeSetName": name,
        "ChangeSetType": "UPDATE",
        "TemplateBody": json.dumps(template),
        "Capabilities": CAPABILITIES,
        "Parameters": [
            {"ParameterKey": key, "ParameterValue": parameters[key]}
            for key in declared
            if key in parameters
        ],
    }
    try:
        client.create_change_set(**request)
    except (ClientError, BotoCoreError) as error:
        raise ChangeSetError(
            f"cloudformation:CreateChangeSet of stack {stack_name}: {error}"
        ) from None
    try:
        return _read(client, stack_name, name, sleep)
    except (ClientError, BotoCoreError) as error:
        raise ChangeSetError(f"cloudformation:DescribeChangeSet {name}: {error}") from None
    finally:
        # Left behind if this fails: CloudFormation deletes a stack's change sets when the
        # next one is executed; the verdict stands either way.
        with contextlib.suppress(ClientError, BotoCoreError):
            client.delete_change_set(ChangeSetName=name, StackName=stack_name)


def _read(
    client: Any, stack_name: str, name: str, sleep: Callable[[float], None]
) -> list[Mapping[str, Any]]:
    for _ in range(MAX_POLLS):
        page = client.describe_change_set(
            ChangeSetName=name, StackName=stack_name, IncludePropertyValues=True
        )
        status = page.get("Status")
        if status not in _DONE:
            sleep(POLL_SECONDS)
            continue
        if status != "CREATE_COMPLETE":
            reason = str(page.get("StatusReason") or status)
            if any(text in reason for text in _NO_CHANGES):
                return []
            raise ChangeSetError(f"the change set {name} of stack {stack_name} failed: {reason}")
        changes = list(page.get("Changes") or [])
        while page.get("NextToken"):
            page = client.describe_change_set(
                ChangeSetName=name,
                StackName=stack_name,
                IncludePropertyValues=True,
                NextToken=page["NextToken"],
            )
            changes += page.get("Changes") or []
        return changes
    raise ChangeSetError(f"the change set {name} of stack {stack_name} was not ready in time")


def with_change_set(
    plan: StackPlan,
    client: Any,
    stack_name: str,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    parameters: Mapping[str, str],
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> StackPlan:
    """``plan`` with what CloudFormation's change set says added (never less than it).

    :param plan: the offline plan of the update.
    :param client: a boto3 CloudFormation client.
    :param stack_name: the deployed stack's CloudFormation name.
    :param old: the deployed template; :param new: the new one.
    :param parameters: the parameter values the update deploys with.
    :param sleep: waits between two reads of the change set (default: ``time.sleep``).
    """
    changes = ask(client, stack_name, new, parameters, sleep=sleep)
    found = findings(changes, old, new)
    note = (
        f"CloudFormation's change set ({len(changes)} resource changes) agrees"
        if not found
        else f"CloudFormation's change set ({len(changes)} resource changes) replaces what "
        "the cluster depends on"
    )
    return replace(plan, undecided=(*plan.undecided, *found), notes=(*plan.notes, note))
