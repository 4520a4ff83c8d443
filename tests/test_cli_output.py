"""Output that cannot be written, in every command (derived from the registered subcommands):
stdout closed (``BrokenPipeError``), stdout on ``/dev/full`` (``ENOSPC``), and stdouts whose
encoding cannot hold the text (``ascii``, ``latin-1``). Each run is a real
``python -m hyperpod_constructs`` process whose output holds non-ASCII text (a folder, a cluster
name, AWS's failure reason): a failed output is one ``error:`` line on stderr and exit 2, never
"a bug in hyperpod_constructs"; a narrow encoding gets the whole output, escaped."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.cx_api import CloudAssembly

from tests.support.cli_process import run_cli, subcommands
from tests.support.raw_endpoint import RawEndpoint, http_answer

FOLDER = "entraînement-€.out"
NORMAL_EXIT = {"summary": 0, "convert": 0, "plan": 0, "watch": 1, "preflight": 3}
"""Each case's exit code when its output is written (watch: the stack rolled back; preflight:
the quotas could not be read)."""
_STACKS = (
    '<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/">'
    "<DescribeStacksResult><Stacks><member><StackName>FsdpTraining</StackName>"
    "<StackId>arn:aws:cloudformation:us-east-1:123456789012:stack/FsdpTraining/1</StackId>"
    "<CreationTime>2026-01-01T00:00:00Z</CreationTime><StackStatus>ROLLBACK_COMPLETE"
    "</StackStatus><StackStatusReason>Überlastung: 3 € per node</StackStatusReason>"
    "</member></Stacks></DescribeStacksResult></DescribeStacksResponse>"
).encode()
_NO_RESOURCE = (
    b"<ErrorResponse><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Resource "
    b"does not exist for stack FsdpTraining</Message></Error></ErrorResponse>"
)
_NO_CLUSTER = '{"__type": "ResourceNotFound", "message": "nicht gefunden: 3 €"}'.encode()


def _aws(request: bytes) -> bytes:
    """A stack that rolled back (its reason in German), without the cluster."""
    if b"Action=DescribeStacks" in request:
        return http_answer(_STACKS)
    if b"Action=DescribeStackResource" in request:
        return http_answer(_NO_RESOURCE, status="400 Bad Request")
    return http_answer(
        _NO_CLUSTER, status="400 Bad Request", content_type="application/x-amz-json-1.1"
    )


def _cluster_template(count: int) -> dict[str, Any]:
    group = {
        "InstanceGroupName": "gpu",
        "InstanceType": "ml.p5.48xlarge",
        "InstanceCount": count,
        "ExecutionRole": "arn:aws:iam::123456789012:role/r",
        "LifeCycleConfig": {"SourceS3Uri": "s3://b/p", "OnCreate": "on_create.sh"},
    }
    properties = {"ClusterName": "entraînement-€", "InstanceGroups": [group]}
    return {"Resources": {"Cluster": {"Type": "AWS::SageMaker::Cluster", "Properties": properties}}}


def _argv(command: str, tmp: Path, cdk_out: str) -> list[str]:
    """A command line of ``command`` that prints non-ASCII text to stdout."""
    if command == "summary":
        folder = tmp / FOLDER
        folder.mkdir()
        (folder / "S.template.json").write_text('{"Resources": {}}')
        return ["summary", str(folder)]
    if command == "convert":
        request = Path(__file__).parent / "fixtures" / "convert" / "docs-continuous-slurm.json"
        return ["convert", str(request)]
    if command == "plan":
        folder = tmp / FOLDER
        folder.mkdir()
        (folder / "Train.template.json").write_text(json.dumps(_cluster_template(3)))
        (tmp / "old.json").write_text(json.dumps(_cluster_template(2)))
        return ["plan", "--baseline", str(tmp / "old.json"), "--app", str(folder)]
    if command in ("watch", "preflight"):
        return [command, "--app", cdk_out, "--stack", "FsdpTraining", "--region", "us-east-1"]
    raise AssertionError(f"new subcommand {command}: add a command line that prints output")


@pytest.fixture(scope="module")
def cdk_out(example_assembly: CloudAssembly) -> str:
    return str(example_assembly.directory)


@pytest.fixture(scope="module")
def endpoint() -> Iterator[RawEndpoint]:
    with RawEndpoint(_aws) as served:
        yield served


def _run(
    argv: list[str], cwd: Path, endpoint: str, stdout: Any, encoding: str | None = None
) -> tuple[int, bytes, str]:
    env = {} if encoding is None else {"PYTHONIOENCODING": encoding}
    return run_cli(argv, cwd=cwd, endpoint=endpoint, stdout=stdout, env=env)


def test_every_command_has_a_case() -> None:
    assert set(NORMAL_EXIT) == set(subcommands())


@pytest.mark.deep(sample=5)
@pytest.mark.parametrize("failure", ["closed", "full"])
@pytest.mark.parametrize("command", sorted(subcommands()))
def test_an_output_that_cannot_be_written_is_one_line_and_exit_2(
    tmp_path: Path, cdk_out: str, endpoint: RawEndpoint, command: str, failure: str
) -> None:
    argv = _argv(command, tmp_path, cdk_out)
    if failure == "closed":
        read, write = os.pipe()
        os.close(read)  # nobody reads: the first write is EPIPE
        try:
            code, _, err = _run(argv, tmp_path, endpoint.url, write)
        finally:
            os.close(write)
        expected = "error: cannot write the output: Broken pipe"
    else:
        with open("/dev/full", "wb") as full:
            code, _, err = _run(argv, tmp_path, endpoint.url, full)
        expected = "error: cannot write the output: No space left on device"
    assert code == 2, err
    assert err.splitlines()[-1] == expected, err
    assert [line for line in err.splitlines() if line.startswith("error:")] == [expected]
    assert "Traceback" not in err and "unexpected" not in err and "Exception" not in err


@pytest.mark.deep(sample=5)
@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize("command", sorted(subcommands()))
def test_a_narrow_encoding_gets_the_whole_output_escaped(
    tmp_path: Path, cdk_out: str, endpoint: RawEndpoint, command: str, encoding: str
) -> None:
    argv = _argv(command, tmp_path, cdk_out)
    code, out, err = _run(argv, tmp_path, endpoint.url, subprocess.PIPE, encoding)
    assert code == NORMAL_EXIT[command], err
    assert "error:" not in err and "Traceback" not in err
    text = out.decode(encoding)  # every byte is in the stdout's encoding
    if command != "convert":  # its app is ASCII source whatever the request holds
        assert "\\u" in text or "\\x" in text, text
    if encoding == "latin-1" and command in ("summary", "plan"):
        assert "entraînement" in text  # what latin-1 holds is written as it is


def test_the_cases_print_non_ascii_text(
    tmp_path: Path, cdk_out: str, endpoint: RawEndpoint
) -> None:
    """Under UTF-8 the same runs print the non-ASCII text itself (the cases test something)."""
    for command in ("summary", "plan", "watch", "preflight"):
        folder = tmp_path / command
        folder.mkdir()
        code, out, err = _run(
            _argv(command, folder, cdk_out), folder, endpoint.url, subprocess.PIPE, "utf-8"
        )
        assert code == NORMAL_EXIT[command], err
        assert not out.isascii(), out
    shutil.rmtree(tmp_path)
