"""Command line: ``python -m hyperpod_constructs summary [CDK_OUT] [--json]``, ``watch``,
``plan``, ``preflight`` and ``convert cluster-config.json [-o app.py]``.

Prints each HyperPod cluster of a synthesized cloud assembly with its instance groups (node
type, instance type, count, minimum, partition) and its readiness-gate settings; see
``docs/cli.md``. Reads JSON only: it never imports ``aws_cdk``.

Exit codes: 0 report printed (also when no cluster is found); 2 usage error, missing folder,
an unreadable manifest or template, or an output that cannot be written (a one-line
``error:`` message on stderr).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ._core.sanitize import printable
from .tools._cli.commands import add_command, add_json_option
from .tools._cli.output import OutputError, finish, output_failed, write
from .tools.convert.cli import add_convert_command, run_convert
from .tools.plan.cli import add_plan_command, run_plan
from .tools.preflight.cli import add_preflight_command, run_preflight
from .tools.summary import AssemblyError, render_json, render_text, summarize
from .tools.watch.cli import add_watch_command, run_watch

PROG = "python -m hyperpod_constructs"
EXIT_OK = 0
EXIT_ERROR = 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Tools for HyperPod clusters defined with hyperpod_constructs.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    summary = add_command(
        commands,
        "summary",
        summary="summarize the HyperPod clusters of a synthesized cdk.out folder",
        description=(
            "Print each HyperPod cluster found in a synthesized cloud assembly: its instance "
            "groups with counts, minimums, node types and partitions, and its MinCount gate "
            "settings, as a table or (--json) as one JSON document."
        ),
        exit_codes="0 report printed (also when no cluster is found); 2 usage error, missing "
        "folder, or unreadable manifest or template",
    )
    summary.add_argument(
        "directory",
        nargs="?",
        default="cdk.out",
        metavar="CDK_OUT",
        help="the cloud assembly folder written by `cdk synth` (default: cdk.out)",
    )
    add_json_option(summary, "print one JSON document (schema in docs/cli.md) instead of the table")
    add_watch_command(commands)
    add_convert_command(commands)
    add_plan_command(commands)
    add_preflight_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); return the exit code.

    Whatever the input, no traceback reaches the user: an output that cannot be written
    (stdout closed or full) is one ``error:`` line on stderr and exit 2, in every subcommand;
    an exception no subcommand expected (a bug) is one ``error:`` line and exit 2."""
    try:
        code = _main(argv)
        finish(sys.stdout)
        return code
    except (OutputError, BrokenPipeError) as error:
        return output_failed(error)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # the last guard; tests check that no input reaches it
        print(
            f"error: unexpected {type(error).__name__}: {printable(error)} (a bug in "
            "hyperpod_constructs: please report it with the command line)",
            file=sys.stderr,
        )
        return EXIT_ERROR


def _main(argv: Sequence[str] | None) -> int:
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exit_:  # --help, or a usage error already printed by argparse
        return exit_.code if isinstance(exit_.code, int) else EXIT_ERROR
    if args.command == "watch":
        return run_watch(args)
    if args.command == "convert":
        return run_convert(args)
    if args.command == "plan":
        return run_plan(args)
    if args.command == "preflight":
        return run_preflight(args)
    try:
        summary = summarize(args.directory)
    except AssemblyError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    write(sys.stdout, render_json(summary) if args.json else render_text(summary))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
