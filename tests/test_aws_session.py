"""The command-line tools' one AWS session (``hyperpod_constructs.tools._aws.session``): the options
every AWS-reading subcommand takes (derived from the registered subcommands), a deadline that a
dripping endpoint cannot defeat, profiles, and a role assumed through STS (moto).
"""

from __future__ import annotations

import argparse
import os
import threading
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from hyperpod_constructs.__main__ import _parser, main
from hyperpod_constructs.tools._aws.session import (
    AwsOptions,
    DeadlineError,
    SessionError,
    add_aws_options,
    bounded,
    open_session,
    session_from_args,
)
from tests.support.cli_process import run_cli, subcommands
from tests.support.raw_endpoint import RawEndpoint

DRIPPING = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/xml\r\nContent-Length: 4096\r\n\r\n" + b" " * 4096
)

AWS_OPTIONS = ("--profile", "--region", "--role-arn", "--role-session-name", "--external-id")


def reads_aws(parser: argparse.ArgumentParser) -> bool:
    return "--aws-timeout" in parser._option_string_actions


def _assembly(tmp: Path) -> str:
    folder = tmp / "cdk.out"
    folder.mkdir()
    (folder / "S.template.json").write_text('{"Resources": {}}')
    return str(folder)


def _argv(command: str, tmp: Path) -> list[str]:
    """A command line of ``command`` whose first step is an AWS call."""
    if command == "plan":
        return ["plan", "--stack", "S", "--app", _assembly(tmp)]
    if command in ("watch", "preflight"):
        return [command, "--stack", "S"]  # no cdk.out here: the deployed template is read
    raise AssertionError(f"a new subcommand reads AWS: add a command line for {command}")


def test_every_subcommand_that_reads_aws_takes_the_same_options() -> None:
    readers = {name for name, parser in subcommands().items() if reads_aws(parser)}
    assert {"plan", "watch", "preflight"} <= readers
    for name in readers:
        options = subcommands()[name]._option_string_actions
        assert set(AWS_OPTIONS) <= set(options), name


def test_a_dripping_endpoint_ends_every_aws_reading_command_with_exit_2_and_one_line(
    tmp_path: Path,
) -> None:
    """One byte every second keeps botocore reading forever (its read timeout is per socket
    read); the deadline of the call ends it: exit 2, one ``error:`` line, nothing on stdout."""
    readers = sorted(name for name, parser in subcommands().items() if reads_aws(parser))
    with RawEndpoint(DRIPPING, every=1.0) as drip:
        for command in readers:
            folder = tmp_path / command
            folder.mkdir()
            argv = [*_argv(command, folder), "--region", "us-east-1", "--aws-timeout", "2"]
            code, out, err = run_cli(argv, cwd=folder, endpoint=drip.url)
            assert (code, out) == (2, b""), (command, err)
            (line,) = err.splitlines()
            assert line.startswith("error: ") and "within 2 s (--aws-timeout)" in line, line
        assert drip.requests >= len(readers)


def test_bounded_returns_raises_and_abandons() -> None:
    assert bounded(lambda: 7, 5) == 7
    with pytest.raises(KeyError):
        bounded(lambda: {}["x"], 5)
    release = threading.Event()
    with pytest.raises(DeadlineError, match=r"within 0\.05 s"):
        bounded(lambda: release.wait(30), 0.05)
    release.set()


@pytest.mark.parametrize("value", ["0", "-1", "3601", "nan", "inf", "soon"])
def test_a_deadline_out_of_range_is_a_usage_error(value: str) -> None:
    for name, parser in subcommands().items():
        if reads_aws(parser):
            with pytest.raises(SystemExit):
                _parser().parse_args([name, "--aws-timeout", value])


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith("AWS_"):
            monkeypatch.delenv(name)
    path = tmp_path / "config"
    path.write_text(
        "[profile prod]\nregion = eu-west-1\n"
        "aws_access_key_id = AKIDPRODPRODPRODPROD\naws_secret_access_key = prod-secret\n"
    )
    monkeypatch.setenv("AWS_CONFIG_FILE", str(path))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    return path


def test_a_profile_gives_its_region_and_credentials(config: Path) -> None:
    session = open_session(AwsOptions(profile="prod"), tool="plan")
    assert session.region == "eu-west-1"
    credentials = session.boto3_session.get_credentials()
    assert credentials.access_key == "AKIDPRODPRODPRODPROD"
    assert open_session(AwsOptions(profile="prod", region="us-west-2"), tool="plan").region == (
        "us-west-2"
    )


def test_an_unknown_profile_is_one_line(config: Path) -> None:
    with pytest.raises(SessionError) as error:
        open_session(AwsOptions(profile="nope\x1b[2J"), tool="plan")
    assert str(error.value).startswith("cannot open the AWS session: ")
    assert str(error.value).isprintable() and "\x1b" not in str(error.value)


def _role(iam: Any, name: str) -> str:
    trust = (
        '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": '
        '{"AWS": "arn:aws:iam::123456789012:root"}, "Action": "sts:AssumeRole"}]}'
    )
    return str(iam.create_role(RoleName=name, AssumeRolePolicyDocument=trust)["Role"]["Arn"])


@mock_aws
def test_a_role_is_assumed_and_every_call_reads_with_it(config: Path) -> None:
    role = _role(boto3.client("iam", region_name="us-east-1"), "Deployer")
    options = AwsOptions(
        profile="prod", role_arn=role, role_session_name="pipeline-prod", external_id="ext-1"
    )
    session = open_session(options, tool="plan")

    identity = session.client("sts").get_caller_identity()
    assert identity["Arn"].endswith(":assumed-role/Deployer/pipeline-prod")
    assert session.region == "eu-west-1"  # the profile's region, kept
    credentials = session.boto3_session.get_credentials()
    assert credentials.method == "assume-role"
    assert credentials.access_key != "AKIDPRODPRODPRODPROD"


@mock_aws
def test_the_default_session_name_names_the_tool(config: Path) -> None:
    role = _role(boto3.client("iam", region_name="us-east-1"), "Reader")
    session = open_session(AwsOptions(profile="prod", role_arn=role), tool="watch")
    identity = session.client("sts").get_caller_identity()
    assert identity["Arn"].endswith(":assumed-role/Reader/hyperpod-constructs-watch")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (AwsOptions(role_arn="arn:aws:iam::12:role/x"), "not an IAM role ARN"),
        (AwsOptions(role_arn="arn:aws:s3:::bucket"), "not an IAM role ARN"),
        (
            AwsOptions(role_arn="arn:aws:iam::123456789012:role/x", role_session_name="a b"),
            "--role-session-name 'a b'",
        ),
    ],
)
def test_a_malformed_role_is_refused_before_any_call(
    config: Path, options: AwsOptions, message: str
) -> None:
    with pytest.raises(SessionError, match=message):
        open_session(AwsOptions(**{**options.__dict__, "profile": "prod"}), tool="plan")


def test_a_role_that_cannot_be_assumed_is_one_line(
    config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """STS does not answer (a dripping endpoint) within the deadline."""
    options = AwsOptions(profile="prod", role_arn="arn:aws:iam::123456789012:role/x", timeout=1)
    with RawEndpoint(DRIPPING, every=1.0) as drip:
        monkeypatch.setenv("AWS_ENDPOINT_URL", drip.url)
        with pytest.raises(SessionError) as error:
            open_session(options, tool="plan")
    assert str(error.value) == (
        "cannot assume role arn:aws:iam::123456789012:role/x: no complete answer within 1 s "
        "(--aws-timeout)"
    )


@pytest.mark.parametrize("command", sorted(n for n, p in subcommands().items() if reads_aws(p)))
def test_every_aws_reading_command_opens_its_session_from_its_options(
    command: str,
    tmp_path: Path,
    config: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The options reach the session: a malformed role is refused before any call."""
    argv = [*_argv(command, tmp_path), "--profile", "prod", "--role-arn", "arn:aws:iam::1:role/x"]
    monkeypatch.chdir(tmp_path)
    code = main(argv)
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    (line,) = err.splitlines()
    assert "--role-arn 'arn:aws:iam::1:role/x': not an IAM role ARN" in line, line


def test_session_from_args_reads_the_options_of_add_aws_options(config: Path) -> None:
    parser = argparse.ArgumentParser()
    add_aws_options(parser, region_help="the region")
    args = parser.parse_args(["--profile", "prod", "--aws-timeout", "7"])
    session = session_from_args(args, tool="preflight", region="ap-south-1")
    assert (session.region, session.timeout) == ("ap-south-1", 7.0)  # the stack's region wins
    assert AwsOptions.from_args(argparse.Namespace()) == AwsOptions()
