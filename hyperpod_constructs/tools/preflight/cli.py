"""The ``preflight`` subcommand: its arguments, and the reads and verdicts (the imperative
shell). Importing this module imports no ``boto3``: :func:`run_preflight` does.

Its own command, not a ``plan`` mode: ``plan`` compares a template with the deployed stack
(and needs one), while ``preflight`` compares each gated minimum with what the account can
give, on a first deploy as on an update, with other permissions (Service Quotas, SageMaker
lists) and its own exit code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from ..._core.sanitize import printable
from .._aws.session import AwsOptions, add_aws_options
from .._cli.commands import add_command, add_json_option
from .._cli.output import write as _write
from ..summary import AssemblyError, TemplateError
from ..watch.cli import DEFAULT_APP, INSTALL_HINT
from .demand import ClusterDemand, demands_from_template, load_demands, select, stack_names
from .render import EXIT_NOT_MET, Report, render_json, render_text
from .verdict import judge

EXIT_ERROR = 2


def add_preflight_command(commands: Any) -> None:
    """Register ``preflight`` on the ``add_subparsers()`` object of the main parser."""
    parser = add_command(
        commands,
        "preflight",
        summary="before a deploy: can each gated group's minimum be met (quotas, other "
        "clusters, training plans)?",
        description=(
            "For every gated instance group (MinInstanceCount > 0) of an app's cloud assembly "
            "or of a deployed stack, compare the minimum with what the account can give: the "
            "SageMaker quotas for cluster usage (per instance type, per cluster, across "
            "clusters) less what the account's other clusters hold, and the group's training "
            "plan. Read-only AWS calls with your normal credentials."
        ),
        exit_codes=(
            f"0 every gated group's minimum can be met (or nothing is gated); {EXIT_NOT_MET} a "
            "minimum cannot be met, or could not be checked (an answer denied, throttled or "
            f"unreadable; never 0 on an unread answer); {EXIT_ERROR} bad input, missing "
            "credentials or region"
        ),
    )
    parser.add_argument(
        "--app",
        metavar="CDK_OUT",
        default=None,
        help=f"the cloud assembly folder (default: {DEFAULT_APP})",
    )
    parser.add_argument(
        "--stack",
        help="only this stack's clusters; a stack not in the assembly is read from the "
        "deployed stack (its template and parameter values)",
    )
    add_aws_options(parser, region_help="the AWS region (default: the stack's, else your config's)")
    add_json_option(parser, "print one JSON document (schema in docs/preflight.md)")


def _local(args: argparse.Namespace) -> list[ClusterDemand] | None:
    """The assembly's gated clusters (of ``--stack``); None when ``--stack`` names a stack to
    read from AWS: no ``--app``, and no such stack in the default folder (or no folder)."""
    app = args.app or DEFAULT_APP
    from_aws = args.app is None and args.stack is not None
    if from_aws and (not Path(app).is_dir() or args.stack not in stack_names(app)):
        return None
    if args.stack is not None and args.stack not in stack_names(app):
        raise AssemblyError(
            f"no stack {args.stack} in {app}; its stacks: {', '.join(sorted(stack_names(app)))}"
        )
    return select(load_demands(app), args.stack)


def _region(args: argparse.Namespace, demands: Sequence[ClusterDemand]) -> str | None:
    if args.region is not None:
        return str(args.region)
    regions = {d.region for d in demands if d.region is not None}
    if len(regions) > 1:
        raise AssemblyError(
            f"the app's gated clusters are in {len(regions)} regions ({', '.join(sorted(regions))})"
            ": choose one with --stack or --region"
        )
    return regions.pop() if regions else None


def _deployed(reader: Any, stack: str) -> list[ClusterDemand]:
    from .aws import FatalError

    template = reader.deployed_template(stack, where="not found in the assembly and ")
    parameters = reader.stack_parameters(stack)
    try:
        return demands_from_template(
            template,
            stack_name=stack,
            display_name=stack,
            region=reader.region,
            parameters=parameters,
        )
    except TemplateError as error:
        raise FatalError(f"the deployed template of stack {stack}: {error}") from None


def run_preflight(
    args: argparse.Namespace,
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    session: Any = None,
    now: Callable[[], datetime] | None = None,
) -> int:
    """Run ``preflight``; return the exit code (see the epilog). ``session``: a boto3 session
    to read with (tests); default, one of ``--profile`` in the region."""
    out, err = stdout or sys.stdout, stderr or sys.stderr

    def fail(message: str) -> int:
        _write(err, f"error: {printable(message)}\n")
        return EXIT_ERROR

    try:
        local = _local(args)
        region = _region(args, local or [])
    except AssemblyError as error:
        return fail(str(error))
    if local is not None and not any(d.gated for d in local):
        report = Report(region=region or "-", verdicts=())
        _write(out, render_json(report) if args.json else render_text(report))
        return report.exit_code
    try:
        import boto3  # type: ignore[import-untyped, unused-ignore] # noqa: F401
    except ImportError:
        return fail(f"preflight reads AWS and needs boto3: {INSTALL_HINT}")
    from .aws import AccountReader, FatalError, deployed_name, make_clients

    try:
        options = AwsOptions.from_args(args)
        clients = make_clients(region=region, options=options, session=session)
        demands = local if local is not None else _deployed(clients.stacks, args.stack)
        demands = [deployed_name(clients.stacks, d) for d in demands]
        account = AccountReader(clients, now=now).account(demands)
    except FatalError as error:
        return fail(str(error))
    report = Report(region=clients.region, verdicts=tuple(judge(demands, account)))
    _write(out, render_json(report) if args.json else render_text(report))
    return report.exit_code
