"""How the subcommands of ``python -m hyperpod_constructs`` are registered: each the same way
(its one-line help, its description and its exit codes), with the ``--json`` flag several share."""

from __future__ import annotations

import argparse
from typing import Any

from .output import EXIT_OUTPUT


def add_command(
    commands: Any, name: str, *, summary: str, description: str, exit_codes: str
) -> argparse.ArgumentParser:
    """Register the subcommand ``name`` on ``commands`` (the main parser's
    ``add_subparsers()``); its epilog lists ``exit_codes`` and the code every command exits
    with when its output cannot be written."""
    epilog = f"exit codes: {exit_codes}; {EXIT_OUTPUT} also when stdout cannot be written"
    parser: argparse.ArgumentParser = commands.add_parser(
        name, help=summary, description=description, epilog=epilog
    )
    return parser


def add_json_option(parser: argparse.ArgumentParser, help: str) -> None:
    """``--json``: a flag, the machine-readable output instead of the text."""
    parser.add_argument("--json", action="store_true", help=help)
