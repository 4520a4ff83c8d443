"""The ``convert`` subcommand: read a CreateCluster request, write the app.

Exit codes: 0 app written; 2 usage error, unreadable input, or a field the library cannot
express (a one-line ``error:`` message naming the field, never a traceback).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from .translate import ConversionError, Options, convert_request

EXIT_OK, EXIT_ERROR = 0, 2


def add_convert_command(commands: Any) -> None:
    """Register ``convert`` on the ``python -m hyperpod_constructs`` subcommands."""
    convert = commands.add_parser(
        "convert",
        help="write a CDK app from a CreateCluster request (cluster-config.json)",
        description=(
            "Read a CreateCluster request (the JSON `aws sagemaker create-cluster "
            "--cli-input-json` takes) and write a typed Python CDK app whose "
            "AWS::SageMaker::Cluster equals it. Existing roles, subnets and security groups "
            "are imported by ARN / ID."
        ),
        epilog="exit codes: 0 app written; 2 usage error, unreadable input, or a field the "
        "library cannot express (named in the message)",
    )
    convert.add_argument("request", metavar="REQUEST_JSON", help="the CreateCluster request")
    convert.add_argument(
        "-o", "--output", metavar="APP_PY", help="where to write the app (default: stdout)"
    )
    convert.add_argument(
        "--provisioning-parameters",
        metavar="JSON",
        help="the lifecycle scripts' provisioning_parameters.json: the Slurm layout of "
        "requests whose groups have no SlurmConfig",
    )
    convert.add_argument(
        "--continuous",
        action="store_true",
        help="generate a Continuous-mode app: MinInstanceCount = InstanceCount on "
        "accelerator compute groups (with the readiness gate) and SlurmConfig on every group",
    )
    convert.add_argument("--stack-name", help="the stack name (default: the cluster name)")


def _read(path: str, what: str) -> object:
    try:
        with open(path, encoding="utf-8") as file:
            return json.load(file)
    except OSError as error:
        raise ConversionError(what, f"cannot read {path!r}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise ConversionError(what, f"{path!r} is not JSON: {error}") from None


def run_convert(args: argparse.Namespace) -> int:
    """Convert; print ``error: <field>: <problem>`` and return 2 on failure."""
    try:
        request = _read(args.request, "REQUEST_JSON")
        parameters = (
            _read(args.provisioning_parameters, "--provisioning-parameters")
            if args.provisioning_parameters
            else None
        )
        source, notes = convert_request(
            request,
            parameters,
            Options(
                continuous=args.continuous,
                stack_name=args.stack_name,
                source_name=os.path.basename(args.request),
            ),
        )
    except ConversionError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if args.output is None:
        sys.stdout.write(source)
        return EXIT_OK
    try:
        with open(args.output, "w", encoding="utf-8") as file:
            file.write(source)
    except OSError as error:
        print(f"error: cannot write {args.output!r}: {error.strerror}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK
