"""The ``watch`` subcommand: its arguments and its refresh loop (the imperative shell).

Importing this module imports neither ``boto3`` nor ``rich``; :func:`run_watch` does, and turns a
missing one into a one-line error (exit 2).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO

from ..._core.sanitize import printable
from .._aws.session import AwsOptions, add_aws_options
from .._cli.commands import add_command, add_json_option
from .._cli.output import write
from ..summary import AssemblyError, find_templates
from .target import TargetError, WatchTarget, load_targets, select_target

if TYPE_CHECKING:
    from .aws import Reader
    from .model import Refresh

EXIT_READY = 0
EXIT_FAILED = 1
EXIT_ERROR = 2
EXIT_INTERRUPTED = 130
DEFAULT_APP = "cdk.out"
DEFAULT_INTERVAL = 15
MIN_INTERVAL, MAX_INTERVAL = 1, 3600
GIVE_UP_AFTER = timedelta(minutes=10)
"""How long reads may keep failing after botocore's retries (throttling, 5xx, network) before
``watch`` gives up (exit 2); a shorter burst only adds a note to the refreshes it hits."""
INSTALL_HINT = "pip install 'hyperpod-constructs[watch]'"


def _interval(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of seconds: {text!r}") from None
    if not MIN_INTERVAL <= value <= MAX_INTERVAL:
        raise argparse.ArgumentTypeError(
            f"{value} is not allowed; allowed: {MIN_INTERVAL}..{MAX_INTERVAL} seconds"
        )
    return value


def add_watch_command(commands: Any) -> None:
    """Register ``watch`` on the ``add_subparsers()`` object of the main parser."""
    watch = add_command(
        commands,
        "watch",
        summary="live view of a deployment's gated instance groups while the MinCount gate waits",
        description=(
            "Show, per gated instance group of a HyperPod cluster, its status, CurrentCount / "
            "MinCount / TargetCount as a bar, the time left in HyperPod's 3-hour window and the "
            "newest cluster events, plus the gate's own state, refreshed until the gate opens "
            "or fails. Read-only AWS calls with your normal credentials."
        ),
        exit_codes=(
            "0 every gated group is ready; 1 the gate failed or HyperPod rolled a "
            "group back (reason printed); 2 bad input, missing credentials or region, or AWS "
            "not reachable after retries; 130 interrupted"
        ),
    )
    choose = watch.add_mutually_exclusive_group()
    choose.add_argument("--stack", help="the CloudFormation stack to watch")
    choose.add_argument("--cluster", help="the HyperPod cluster (ClusterName) to watch")
    watch.add_argument(
        "--app",
        metavar="CDK_OUT",
        help=(
            f"the cloud assembly folder to read gated groups from (default: {DEFAULT_APP}; with "
            "--stack and no such stack there, the deployed template is read)"
        ),
    )
    add_aws_options(watch, region_help="AWS region (default: the stack's, else your AWS config)")
    watch.add_argument(
        "--capacity",
        action="store_true",
        help="once a gated group is below its minimum, read its quotas, the other clusters' use "
        "and its training plan (as preflight does, with its IAM) and say whether waiting can help",
    )
    add_json_option(
        watch, "print one JSON object per refresh, one per line (schema in docs/watch.md)"
    )
    watch.add_argument(
        "--interval",
        type=_interval,
        default=DEFAULT_INTERVAL,
        metavar="SECONDS",
        help=(
            f"seconds between refreshes, {MIN_INTERVAL}..{MAX_INTERVAL} "
            f"(default: {DEFAULT_INTERVAL})"
        ),
    )


def _now() -> datetime:
    return datetime.now(UTC)


class _Output:
    """Where refreshes go: JSON lines, a live terminal view, or one plain line per refresh."""

    def __init__(self, stream: TextIO, *, as_json: bool) -> None:
        self._stream = stream
        self._json = as_json
        self._live: Any = None
        self.terminal = not as_json and stream.isatty()
        if self.terminal:
            from rich.console import Console
            from rich.live import Live

            self._live = Live(
                console=Console(file=stream, highlight=False),
                auto_refresh=False,
                redirect_stdout=False,
                redirect_stderr=False,
            )

    def __enter__(self) -> _Output:
        if self._live is not None:
            self._live.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.stop()

    def show(self, refresh: Refresh) -> None:
        from . import screen
        from .jsonl import json_line

        if self._json:
            write(self._stream, json_line(refresh))
        elif self._live is not None:
            self._live.update(screen.render(refresh), refresh=True)
        else:
            write(self._stream, screen.status_line(refresh) + "\n")


def _target(args: argparse.Namespace, deployed: Callable[[str], list[WatchTarget]]) -> WatchTarget:
    """The target, from ``--app`` (default ``cdk.out``), or from ``deployed(stack)`` (the
    deployed template) for a ``--stack`` not found there. Raises AssemblyError / TargetError /
    FatalError."""
    app = args.app or DEFAULT_APP
    try:
        targets = load_targets(app)
    except AssemblyError as error:
        if args.app is not None:
            raise
        if args.stack is None:
            raise AssemblyError(
                f"{error}; run watch where cdk synth wrote {DEFAULT_APP}, pass --app, or pass "
                "--stack to read the deployed template"
            ) from None
        targets = []
    local = any(args.stack in (t.stack_name, t.display_name) for t in targets)
    if args.stack is not None and args.app is None and not local:
        source = f"the deployed stack {args.stack}"
        try:
            found = deployed(args.stack)
        except Exception as error:
            from .aws import FatalError  # boto3 is loaded by now: deployed() uses it

            stacks = _local_stacks(app)
            if not isinstance(error, FatalError) or not stacks:  # no region, credentials, stack
                raise
            raise TargetError(
                f"stack {args.stack} is not in {app} (its stacks: {stacks}), and the deployed "
                f"stack could not be read: {error}"
            ) from None
        return select_target(found, stack=None, cluster=None, source=source)
    return select_target(targets, stack=args.stack, cluster=args.cluster, source=app)


def _local_stacks(app: str) -> str:
    """The stacks of the cloud assembly ``app`` for a message (``Prod/Training``); empty when
    it has none or cannot be read."""
    try:
        return ", ".join(stack.stack for stack in find_templates(app))
    except AssemblyError:
        return ""


def _error(stderr: TextIO, message: str) -> int:
    print(f"error: {printable(message)}", file=stderr)
    return EXIT_ERROR


def run_watch(
    args: argparse.Namespace,
    *,
    sleep: Callable[[float], None] = time.sleep,
    now: Callable[[], datetime] = _now,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run ``watch`` until the gate is decided; return the exit code (see the epilog)."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    try:
        import boto3  # type: ignore[import-untyped, unused-ignore] # noqa: F401
        import rich  # noqa: F401
    except ImportError as error:
        return _error(err, f"watch needs boto3 and rich ({error.name} is missing): {INSTALL_HINT}")
    from .aws import FatalError, Reader

    options = AwsOptions.from_args(args)
    try:
        target = _target(
            args, lambda stack: Reader(region=None, options=options).deployed_targets(stack)
        )
        aws = Reader(region=target.region, options=options)
    except (AssemblyError, TargetError, FatalError) as error:
        return _error(err, str(error))
    try:
        capacity = None
        if args.capacity:
            from ..preflight.watching import capacity_line

            def capacity(described: Any, below: set[str]) -> str:
                return capacity_line(
                    target, described, below, region=aws.region, session=aws.session, now=now
                )

        with _Output(out, as_json=args.json) as output:
            result = _loop(
                target, aws, output, interval=args.interval, sleep=sleep, now=now, capacity=capacity
            )
    except FatalError as error:
        return _error(err, str(error))
    except KeyboardInterrupt:
        print("interrupted", file=err)
        return EXIT_INTERRUPTED
    if result.exit_code == EXIT_ERROR:
        return _error(err, result.reason)
    if args.json:
        if result.exit_code == EXIT_FAILED:
            print(f"failed: {result.reason}", file=err)
    elif not output.terminal:
        write(out, f"{result.verdict}: {result.reason}\n")
    return int(result.exit_code) if result.exit_code is not None else EXIT_ERROR


def _loop(
    target: WatchTarget,
    aws: Reader,
    output: _Output,
    *,
    interval: float,
    sleep: Callable[[float], None],
    now: Callable[[], datetime],
    capacity: Callable[[Any, set[str]], str] | None = None,
) -> Refresh:
    """Refresh until one decides; return that one. Reads failing for :data:`GIVE_UP_AFTER`
    in a row end it with exit 2. ``capacity(described cluster, groups below their minimum)``:
    read once, the first time a gated group is below its minimum; its line is a note of every
    refresh from then on."""
    from .model import refresh

    capacity_note: str | None = None
    started: datetime | None = None
    failing_since: datetime | None = None
    while True:
        observation = aws.observe(target, now)
        if not observation.problems:
            failing_since = None
        elif failing_since is None:
            failing_since = observation.time
        started = started or observation.time
        result = refresh(target, observation, started_at=started)
        failing = observation.time - failing_since if failing_since else None
        if failing is not None and failing >= GIVE_UP_AFTER and result.exit_code is None:
            result = replace(
                result,
                verdict="error",
                exit_code=EXIT_ERROR,
                reason=(
                    f"AWS reads kept failing for {int(failing.total_seconds())} s: "
                    f"{observation.problems[-1]}"
                ),
            )
        below = {g.name for g in result.groups if not g.ready and g.current < (g.min_count or 0)}
        if capacity is not None and capacity_note is None and below and observation.cluster:
            capacity_note = capacity(observation.cluster, below)
        if capacity_note is not None:
            result = replace(result, notes=(*result.notes, capacity_note))
        output.show(result)
        if result.exit_code is not None:
            return result
        sleep(interval)
