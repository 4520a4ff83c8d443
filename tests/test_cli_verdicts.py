"""The one rule of every command's verdict (``hyperpod_constructs.tools._cli.verdict``): what could
not be read is never "ok". Each registered subcommand (derived from the main parser) is given
an input it cannot read, a file or an AWS answer (CloudFormation's XML with a raw control
character, which no XML parser reads): it never exits 0. ``watch``'s refresh-by-refresh rule is
tested against the simulator in tests/test_watch_hostile.py."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from hyperpod_constructs.tools._cli.verdict import EXIT_OK, withheld
from tests.support.cli_process import run_cli, subcommands
from tests.support.raw_endpoint import RawEndpoint, http_answer

_BODY = (
    b'<?xml version="1.0"?><DescribeStacksResponse><DescribeStacksResult><Stacks><member>'
    b"<StackName>S</StackName><StackStatus>UPDATE_FAILED</StackStatus><StackStatusReason>"
    b"WaitCondition failed: \x01</StackStatusReason></member></Stacks></DescribeStacksResult>"
    b"</DescribeStacksResponse>"
)
UNREADABLE_ANSWER = http_answer(_BODY)
NOT_JSON = b'{"Resources": {"C": \x01}}'


def _folder(tmp: Path, name: str, template: bytes) -> str:
    folder = tmp / name
    folder.mkdir()
    (folder / "S.template.json").write_bytes(template)
    return str(folder)


def _unreadable(command: str, tmp: Path) -> list[list[str]]:
    """Command lines of ``command`` whose input cannot be read."""
    unreadable_file = tmp / "unreadable.json"
    unreadable_file.write_bytes(NOT_JSON)
    unreadable_app = _folder(tmp, "unreadable.out", NOT_JSON)
    app = _folder(tmp, "cdk.out", b'{"Resources": {}}')
    cases = {
        "summary": [["summary", unreadable_app]],
        "convert": [["convert", str(unreadable_file)]],
        "plan": [
            ["plan", "--baseline", str(unreadable_file), "--app", app],
            ["plan", "--stack", "S", "--app", app],  # the AWS answer
        ],
        "watch": [["watch", "--stack", "S"], ["watch", "--app", unreadable_app]],
        "preflight": [["preflight", "--stack", "T"], ["preflight", "--app", unreadable_app]],
    }
    if command not in cases:
        raise AssertionError(f"new subcommand {command}: add the inputs it cannot read here")
    return cases[command]


def test_no_command_says_ok_on_what_it_could_not_read(tmp_path: Path) -> None:
    ran = []
    with RawEndpoint(UNREADABLE_ANSWER) as endpoint:
        for command in sorted(subcommands()):
            folder = tmp_path / command
            folder.mkdir()
            for argv in _unreadable(command, folder):
                code, out, err = run_cli(
                    argv, cwd=folder, endpoint=endpoint.url, env={"AWS_DEFAULT_REGION": "us-east-1"}
                )
                ran.append(command)
                assert code == 2, (argv, out, err)
                (line,) = err.splitlines()
                assert line.startswith("error: ") and "unexpected" not in line, line
    assert endpoint.requests >= 3, "plan, watch and preflight read the unreadable answer"
    assert set(ran) == set(subcommands())


@given(
    code=st.none() | st.integers(min_value=0, max_value=255),
    unreadable=st.lists(st.text(min_size=1), max_size=4),
)
def test_only_an_ok_is_withheld_and_only_for_what_was_not_read(
    code: int | None, unreadable: list[str]
) -> None:
    reason = withheld(code, unreadable)
    assert (reason is not None) == (code == EXIT_OK and bool(unreadable))
    if reason is not None:
        assert reason.startswith(f"{len(unreadable)} answer")
        assert unreadable[0] in reason and "not judged ok" in reason
