"""The ``plan`` subcommand: its arguments and the imperative shell around the pure model.

Importing this module imports neither ``aws_cdk`` nor ``boto3``; ``boto3`` loads only for a
deployed baseline (``--stack`` without ``--baseline``), and a missing one is a one-line error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

from ..._core.sanitize import printable
from .._assembly.files import MAX_FILE_BYTES, AssemblyError, StackTemplate
from .._assembly.nested import has_cluster, nested_stacks, nested_template
from .._assembly.stacks import read_stacks
from .._assembly.templates import parse_template
from .._aws.input import InputError, read_text
from .._aws.session import AwsOptions, add_aws_options
from .._cli.commands import add_command, add_json_option
from .._cli.output import write as _write
from .changeset import ChangeSetError, with_change_set
from .model import (
    EXIT_ERROR,
    BaselineError,
    StackPlan,
    check_baseline,
    overlap,
    plan_stack,
    shares_cluster,
)
from .nested import Passed, passed_parameters
from .references import follow
from .render import render_json, render_markdown, render_text
from .resolve import evaluate

DEFAULT_APP = "cdk.out"
INSTALL_HINT = "pip install 'hyperpod-constructs[watch]'"


def add_plan_command(commands: Any) -> None:
    """Register ``plan`` on the ``add_subparsers()`` object of the main parser."""
    plan = add_command(
        commands,
        "plan",
        summary="what an update does to a running HyperPod cluster, before cdk deploy",
        description=(
            "Compare a synthesized cloud assembly with a baseline (a template file, e.g. the "
            "main branch's, or the deployed stack) and say, per cluster and instance group, "
            "what the update does in HyperPod's terms: cluster replaced, groups added, removed "
            "or renamed, scale-out and scale-in, changes applied to new nodes only or by a "
            "rolling software update, changes HyperPod refuses, and whether the readiness gate "
            "waits."
        ),
        exit_codes=(
            "0 every change is one plan proves safe: nothing terminates a node, replaces or "
            "removes a cluster or is refused; 3 something does, or plan cannot tell (printed "
            "first); 2 bad input, missing credentials or region, or AWS not reachable"
        ),
    )
    plan.add_argument(
        "--baseline",
        metavar="OLD.template.json",
        help="the template the stack runs now, or the cloud assembly folder it was synthesized "
        "into (no AWS access needed); without it, --stack reads the deployed stack's template, "
        "parameters and live node counts",
    )
    plan.add_argument(
        "--app",
        metavar="CDK_OUT",
        default=DEFAULT_APP,
        help=f"the cloud assembly with the new templates (default: {DEFAULT_APP})",
    )
    plan.add_argument(
        "--stack",
        help="the stack to plan: its CloudFormation name or its path in the app as cdk shows "
        "it (Prod/Training for a stack of a Stage); required without --baseline",
    )
    plan.add_argument(
        "--parameter",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a parameter value the update deploys with (repeatable; as cdk deploy "
        "--parameters): offline it applies to both templates, with --stack to the new one",
    )
    add_aws_options(
        plan,
        region_help="AWS region of the deployed stack (default: the stack's, else your config)",
    )
    plan.add_argument(
        "--change-set",
        action="store_true",
        help="with --stack: also ask CloudFormation (a change set, created and deleted); its "
        "replacements of what a cluster depends on count as disruptive",
    )
    add_json_option(plan, "print one JSON object (schema in docs/cli.md) instead of the text")
    plan.add_argument(
        "--format",
        choices=("text", "json", "markdown"),
        default="text",
        help="text, json (as --json) or markdown (for a pull-request comment; default: text)",
    )


@dataclass(frozen=True)
class _NewStack:
    stack: StackTemplate
    name: str
    """The CloudFormation stack name."""
    region: str | None
    template: Mapping[str, Any]


class PlanInputError(Exception):
    """Bad input: exit 2 with this one-line message."""


def _new_stacks(app: str) -> list[_NewStack]:
    """Every stack template of the cloud assembly ``app``, nested assemblies (Stages)
    included."""
    stacks = []
    for read in read_stacks(app):
        if not isinstance(read.template, Mapping):
            raise PlanInputError(f"template {read.file.path} is not a CloudFormation template")
        stacks.append(_NewStack(read.file, read.name, read.region, read.template))
    if not stacks:
        raise PlanInputError(f"no stack template in {app}: run cdk synth first")
    return stacks


def _named(stacks: Sequence[_NewStack], name: str, app: str) -> _NewStack:
    """The stack ``name`` names as the cdk CLI takes it: its path in the app (the manifest's
    ``displayName``, ``Prod/Training``) or its CloudFormation stack name."""
    for candidate in stacks:
        if name == candidate.stack.stack:
            return candidate
    matches = [candidate for candidate in stacks if name == candidate.name]
    if len(matches) == 1:
        return matches[0]
    choices = ", ".join(s.stack.stack for s in stacks)
    if matches:
        raise PlanInputError(
            f"more than one stack of {app} deploys as {name}: name it by its path ({choices})"
        )
    raise PlanInputError(f"no stack {name} in {app}; stacks: {choices}")


def _parameters(pairs: Sequence[str]) -> dict[str, str]:
    """``--parameter KEY=VALUE`` values (the last one of a key wins)."""
    values: dict[str, str] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise PlanInputError(f"--parameter {pair!r}: expected KEY=VALUE")
        values[key.strip()] = value
    return values


def _pseudo(stack: _NewStack, region: str | None) -> dict[str, str]:
    """The pseudo parameters both templates deploy with: the stack's name and region."""
    pseudo = {"AWS::StackName": stack.name}
    if region is not None:
        pseudo["AWS::Region"] = region
    return pseudo


def _matching(stacks: Sequence[_NewStack], baseline: Mapping[str, Any], app: str) -> _NewStack:
    """The stack of the assembly that the baseline is a template of: the one sharing the most
    resources with it (the other-stack check then refuses a baseline sharing none)."""
    scored = sorted(stacks, key=lambda s: overlap(baseline, s.template), reverse=True)
    best = scored[0]
    if len(scored) > 1 and overlap(baseline, scored[1].template) == overlap(
        baseline, best.template
    ):
        tied = ", ".join(
            s.stack.stack
            for s in scored
            if overlap(baseline, s.template) == overlap(baseline, best.template)
        )
        raise PlanInputError(
            f"the baseline matches more than one stack of {app} ({tied}): choose one with --stack"
        )
    return best


def _read_baseline(
    path: str, stacks: Sequence[_NewStack], stack: str | None, app: str
) -> tuple[object, Path]:
    """The baseline file through the one input reader (a regular file, bounded), strict JSON
    or a YAML template (:func:`~.._assembly.templates.parse_template`); a cloud assembly
    folder (e.g. the main branch's ``cdk.out``): the template of the stack of the same path
    (``--stack``, else the only stack both assemblies have). With the folder its nested
    templates are in."""
    if not Path(path).is_dir():
        text = read_text(path, "baseline", max_bytes=MAX_FILE_BYTES)
        return parse_template(text, f"baseline {path!r}"), Path(path).parent
    old_stacks = _new_stacks(path)
    if stack is not None:
        wanted = _named(stacks, stack, app).stack.stack
    else:
        shared = {s.stack.stack for s in stacks} & {s.stack.stack for s in old_stacks}
        if len(shared) != 1:
            raise PlanInputError(
                f"the baseline assembly {path} and the app share {len(shared)} stacks: choose "
                "one with --stack"
            )
        (wanted,) = shared
    for candidate in old_stacks:
        if candidate.stack.stack == wanted:
            return candidate.template, candidate.stack.path.parent
    raise PlanInputError(f"the baseline assembly {path} has no stack {wanted}")


def _not_another_stacks(
    old: Mapping[str, Any], new: _NewStack, stacks: Sequence[_NewStack]
) -> None:
    """Refuse a baseline whose cluster is, unchanged (logical id and name), in another stack of
    the app but not in ``new``: it is that stack's template, not a renamed cluster."""
    if shares_cluster(old, new.template):
        return
    owners = [s.stack.stack for s in stacks if s is not new and shares_cluster(old, s.template)]
    if owners:
        raise BaselineError(
            "other-stack",
            f"the baseline is the template of {', '.join(owners)} (the same cluster under the "
            f"same name), not of {new.stack.stack}: pass the template {new.stack.stack} was "
            "deployed from",
        )


@dataclass(frozen=True)
class _Nested:
    """A nested stack whose baseline template holds a cluster, and its new template."""

    logical_id: str
    old: Mapping[str, Any]
    new: Mapping[str, Any]
    passed: Passed


def _nested(
    old: Mapping[str, Any],
    new: _NewStack,
    old_template_of: Callable[[str, Mapping[str, Any]], object],
    parameters: tuple[Mapping[str, str] | None, Mapping[str, str] | None],
    pseudo: Mapping[str, str],
) -> list[_Nested]:
    """Each nested stack of the baseline parent ``old`` whose template (``old_template_of``)
    holds a cluster, with its new template (none: the update removes it) and the values the
    parents pass it."""
    old_parent = evaluate(old, parameters[0], pseudo)
    new_parent = follow(old_parent, evaluate(new.template, parameters[1], pseudo))
    found = []
    for logical_id, resource in nested_stacks(old).items():
        before = old_template_of(logical_id, resource)
        if not isinstance(before, Mapping) or not has_cluster(before):
            continue
        after: Mapping[str, Any] | None = {"Resources": {}}
        if logical_id in (now := nested_stacks(new.template)):
            after = nested_template(now[logical_id], new.stack.path.parent)
        if after is None:
            raise PlanInputError(
                f"the template of nested stack {logical_id} of {new.stack.stack} is not in "
                f"{new.stack.path.parent}: run cdk synth again"
            )
        found.append(
            _Nested(
                logical_id, before, after, passed_parameters(old_parent, new_parent, logical_id)
            )
        )
    return found


def _nested_plan(
    nested: _Nested, stack: _NewStack, deployed: Any | None, **options: Any
) -> StackPlan:
    """The plan of one nested stack: offline (``deployed`` None) with the literal values the
    parents pass (an expression both pass alike as one opaque value); for the deployed stack
    with its parameter values, the new ones where the new parent passes a literal."""
    passed = nested.passed
    check_baseline(nested.old, nested.new, same_stack=True)
    if deployed is None:
        old_values, new_values = {**passed.old, **passed.same}, {**passed.new, **passed.same}
    else:
        old_values = deployed.parameters
        kept = {k: v for k, v in old_values.items() if k in passed.same}
        new_values = {**kept, **passed.new}
    plan = plan_stack(
        nested.old,
        nested.new,
        stack=f"{stack.stack.stack}/{nested.logical_id}",
        old_parameters=old_values,
        new_parameters=new_values,
        live=deployed.live if deployed is not None else None,
        notes=deployed.notes if deployed is not None else (),
        **options,
    )
    return replace(plan, undecided=plan.undecided + passed.undecided)


def _merged(parent: StackPlan | None, nested: Sequence[StackPlan], stack: str) -> StackPlan:
    """The parent's plan (None: no cluster of its own) with its nested stacks' clusters."""
    plans = ([parent] if parent is not None else []) + list(nested)
    first = plans[0]
    return replace(
        first,
        stack=stack,
        live_counts=any(p.live_counts for p in plans),
        clusters=tuple(c for p in plans for c in p.clusters),
        notes=tuple(n for p in plans for n in p.notes)
        + tuple(
            f"planned with nested stack {p.stack}: the parameters its parent passes" for p in nested
        ),
        undecided=tuple(u for p in plans for u in p.undecided),
    )


def _offline(args: argparse.Namespace, stacks: Sequence[_NewStack]) -> StackPlan:
    old, folder = _read_baseline(args.baseline, stacks, args.stack, args.app)
    if not isinstance(old, Mapping) or not nested_stacks(old):
        check_baseline(old, old)  # a template with a cluster, before looking for its stack
    assert isinstance(old, Mapping)
    new = _named(stacks, args.stack, args.app) if args.stack else _matching(stacks, old, args.app)
    given = _parameters(args.parameter)
    pseudo = _pseudo(new, args.region or new.region)
    region = {k: v for k, v in pseudo.items() if k != "AWS::StackName"}  # a nested stack's
    nested = _nested(
        old,
        new,
        lambda _, resource: nested_template(resource, folder),
        (given or None, given or None),
        region,
    )
    options: dict[str, Any] = {
        "baseline": args.baseline,
        "parameters_from": "defaults and --parameter" if given else "defaults",
    }
    parent = None
    if not nested or has_cluster(old):
        check_baseline(old, new.template, stack_path=new.stack.stack)
        _not_another_stacks(old, new, stacks)
        parent = plan_stack(
            old,
            new.template,
            stack=new.stack.stack,
            old_parameters=given or None,
            new_parameters=given or None,
            pseudo=pseudo,
            **options,
        )
    plans = [_nested_plan(n, new, None, pseudo=region, **options) for n in nested]
    return _merged(parent, plans, new.stack.stack)


def _deployed(
    args: argparse.Namespace, stacks: Sequence[_NewStack], reader: Callable[[str | None], Any]
) -> StackPlan:
    new = _named(stacks, args.stack, args.app)
    given = _parameters(args.parameter)
    region = args.region or new.region
    aws = reader(region)
    deployed = aws.baseline(new.name)
    # cdk deploy keeps the deployed value of a parameter the new template still declares.
    parameters = {**deployed.parameters, **given}
    pseudo = _pseudo(new, region)
    nested_pseudo = {k: v for k, v in pseudo.items() if k != "AWS::StackName"}
    baselines: dict[str, Any] = {}

    def nested_baseline(logical_id: str, _: Mapping[str, Any]) -> object:
        baselines[logical_id] = aws.nested_baseline(new.name, logical_id)
        return baselines[logical_id].template if baselines[logical_id] else None

    template = deployed.template
    nested = (
        _nested(template, new, nested_baseline, (deployed.parameters, parameters), nested_pseudo)
        if isinstance(template, Mapping)
        else []
    )
    options: dict[str, Any] = {"baseline": f"the deployed stack {new.name}"}
    parent = None
    if not nested or has_cluster(template):
        check_baseline(template, new.template, same_stack=True)
        parent = plan_stack(
            template,
            new.template,
            stack=new.stack.stack,
            old_parameters=deployed.parameters,
            new_parameters=parameters,
            live=deployed.live,
            notes=deployed.notes,
            pseudo=pseudo,
            **options,
        )
    plans = [
        _nested_plan(n, new, baselines[n.logical_id], pseudo=nested_pseudo, **options)
        for n in nested
    ]
    plan = _merged(parent, plans, new.stack.stack)
    if not args.change_set:
        return plan
    assert isinstance(template, Mapping)
    return with_change_set(plan, aws.cloudformation(), new.name, template, new.template, parameters)


def _default_reader(region: str | None, options: AwsOptions | None = None) -> Any:
    from .aws import DeployedReader

    return DeployedReader(region=region, options=options, tool="plan")


def run_plan(
    args: argparse.Namespace,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    reader: Callable[[str | None], Any] | None = None,
) -> int:
    """Run ``plan``; return the exit code (see the epilog)."""
    out, err = stdout or sys.stdout, stderr or sys.stderr

    def fail(message: str) -> int:
        _write(err, f"error: {printable(message)}\n")
        return EXIT_ERROR

    if args.change_set and args.baseline is not None:
        return fail(
            "--change-set asks CloudFormation about the deployed stack: use it with "
            "--stack and without --baseline"
        )
    if args.baseline is None and args.stack is None:
        return fail(
            "give a baseline: --baseline OLD.template.json (e.g. the main branch's template), or "
            "--stack NAME to compare with the deployed stack"
        )
    try:
        stacks = _new_stacks(args.app)
        if args.baseline is not None:
            plan = _offline(args, stacks)
        else:
            try:
                import boto3  # type: ignore[import-untyped, unused-ignore] # noqa: F401
            except ImportError:
                return fail(f"plan --stack reads AWS and needs boto3: {INSTALL_HINT}")
            from .aws import FatalError

            try:
                options = AwsOptions.from_args(args)
                plan = _deployed(
                    args, stacks, reader or (lambda region: _default_reader(region, options))
                )
            except (FatalError, ChangeSetError) as error:
                return fail(str(error))
    except (AssemblyError, InputError, PlanInputError, BaselineError) as error:
        return fail(str(error))
    render = {"text": render_text, "json": render_json, "markdown": render_markdown}
    _write(out, render["json" if args.json else args.format](plan))
    return plan.exit_code
