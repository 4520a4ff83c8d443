"""The ``convert`` subcommand: read a CreateCluster request, write the app.

Exit codes: 0 app written; 2 usage error, unreadable input, or a field the library cannot
express (a one-line ``error:`` message naming the field, never a traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import stat
import sys
import tempfile
from typing import Any

from ..._core.sanitize import printable
from .._aws.input import InputError, read_json
from .._cli.commands import add_command
from .._cli.output import write
from .translate import ConversionError, Options, convert_request

EXIT_OK, EXIT_ERROR = 0, 2


def add_convert_command(commands: Any) -> None:
    """Register ``convert`` on the ``python -m hyperpod_constructs`` subcommands."""
    convert = add_command(
        commands,
        "convert",
        summary="write a CDK app from a CreateCluster request (cluster-config.json)",
        description=(
            "Read a CreateCluster request (the JSON `aws sagemaker create-cluster "
            "--cli-input-json` takes) and write a typed Python CDK app whose "
            "AWS::SageMaker::Cluster equals it. Existing roles, subnets and security groups "
            "are imported by ARN / ID."
        ),
        exit_codes="0 app written; 2 usage error, unreadable input, or a field the library "
        "cannot express (named in the message)",
    )
    convert.add_argument("request", metavar="REQUEST_JSON", help="the CreateCluster request")
    convert.add_argument(
        "-o",
        "--output",
        metavar="APP_PY",
        help="where to write the app (default: stdout); written to a temporary file first, "
        "then renamed, so a failure leaves an existing file as it was",
    )
    convert.add_argument(
        "--force", action="store_true", help="replace APP_PY when it exists (default: refuse)"
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
        return read_json(path, what)
    except InputError as error:
        raise ConversionError(what, f"{path!r}: {error.problem}") from None


def _refuse_target(path: str, *, force: bool) -> None:
    """Refuse an output that is not a regular file, or exists without ``--force``."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise ConversionError("--output", f"cannot write {path!r}: {reason}") from None
    if stat.S_ISLNK(mode):
        raise ConversionError(
            "--output", f"{path!r} is a symbolic link: give the file it points to"
        )
    if not stat.S_ISREG(mode):
        raise ConversionError("--output", f"{path!r} exists and is not a regular file")
    if not force:
        raise ConversionError("--output", f"{path!r} exists: pass --force to replace it")


def write_atomically(path: str, text: str, *, force: bool) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, renamed over
    it: ``path`` holds the old text or the new, never a part. Without ``force`` an existing
    ``path`` is never replaced (not even one created meanwhile).

    :raises ConversionError: on ``--output``, naming the path.
    """
    _refuse_target(path, force=force)
    folder = os.path.dirname(path) or "."
    try:
        descriptor, temporary = tempfile.mkstemp(
            dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp"
        )
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise ConversionError("--output", f"cannot write {path!r}: {reason}") from None
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        if force:
            os.replace(temporary, path)
        else:
            os.link(temporary, path)  # fails if path appeared meanwhile
            os.unlink(temporary)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, FileExistsError):
            raise ConversionError(
                "--output", f"{path!r} exists: pass --force to replace it"
            ) from None
        raise ConversionError(
            "--output", f"cannot write {path!r}: {error.strerror or error}"
        ) from None


def run_convert(args: argparse.Namespace) -> int:
    """Convert; print ``error: <field>: <problem>`` and return 2 on failure."""
    try:
        request = _read(args.request, "REQUEST_JSON")
        parameters = (
            _read(args.provisioning_parameters, "--provisioning-parameters")
            if args.provisioning_parameters is not None
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
        if args.output is not None:
            write_atomically(args.output, source, force=args.force)
    except ConversionError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_ERROR
    for note in notes:
        print(f"note: {printable(note)}", file=sys.stderr)
    if args.output is None:
        write(sys.stdout, source)
    print(printable(_summary(request, args)), file=sys.stderr)
    return EXIT_OK


def _summary(request: object, args: argparse.Namespace) -> str:
    assert isinstance(request, dict)  # convert_request refused anything else
    groups = request["InstanceGroups"]
    where = "stdout" if args.output is None else repr(os.path.abspath(args.output))
    return (
        f"converted {args.request!r}: cluster {request['ClusterName']!r}, "
        f"{len(groups)} instance group{'s' if len(groups) != 1 else ''}, app written to {where}"
    )
