"""Hostile input for every subcommand: exit 0 or 2, one printable ``error:`` line, never a
traceback, never a hang, and every app ``convert`` accepts passes ruff and ``mypy --strict``
and keeps the values it was given.

- Table-driven, from real subprocesses (``python -m hyperpod_constructs ...``, with a timeout):
  files that are not regular (a FIFO, ``/dev/zero``, a folder), not UTF-8, not strict JSON,
  too deep, too large, or of the wrong shape.
- Mutations of a real request: every field of CreateCluster's input shape (walked from the
  generated copy of botocore's model) set to values of every JSON type; each run is exit 0 or
  an error naming a field, and the accepted apps are checked by ruff and mypy in one batch.
- Hypothesis over every CLI option (convert, summary, watch) and random JSON documents, in
  process.
"""

from __future__ import annotations

import ast
import json
import os
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hyperpod_constructs.__main__ import main
from hyperpod_constructs.tools._aws import model as _aws_model
from hyperpod_constructs.tools.convert import ConversionError, convert_request
from tests.conftest import ROOT
from tests.test_convert import lint_generated

FIXTURES = ROOT / "tests" / "fixtures" / "convert"
REQUEST = json.loads((FIXTURES / "docs-continuous-slurm.json").read_text())
HOSTILE_TEXT = "x\x1b]0;t\x07\x1b[2J\u202e\x85\u2028\"'\\{}\U0001f600\u0430"
TIMEOUT = 60


def _printable_lines(text: str) -> bool:
    return all(line.isprintable() for line in text.splitlines())


def assert_clean_failure(code: int, out: str, err: str) -> None:
    assert code == 2, (code, err)
    assert out == ""
    assert len(err.splitlines()) == 1, err
    (line,) = err.splitlines()
    assert line.startswith("error: ") and "Traceback" not in err
    assert "error: unexpected" not in line, line  # the last guard of main() was never needed
    assert line.isprintable()


# -- subprocesses ------------------------------------------------------------------------------


def _file(tmp: Path, name: str, content: bytes) -> str:
    path = tmp / name
    path.write_bytes(content)
    return str(path)


def _fifo(tmp: Path, name: str) -> str:
    os.mkfifo(tmp / name)
    return str(tmp / name)


def _big(tmp: Path) -> str:
    path = tmp / "big.json"
    with path.open("wb") as file:
        file.truncate(9 * 2**20)  # sparse: 9 MiB of NUL bytes
    return str(path)


VALID = json.dumps(REQUEST).encode()
CONVERT_INPUTS: dict[str, Callable[[Path], list[str]]] = {
    "fifo-request": lambda t: [_fifo(t, "req")],
    "fifo-parameters": lambda t: [
        _file(t, "r.json", VALID),
        "--provisioning-parameters",
        _fifo(t, "pp"),
    ],
    "dev-zero": lambda t: ["/dev/zero"],
    "folder": lambda t: [str(t)],
    "missing": lambda t: [str(t / "nope.json")],
    "too-large": lambda t: [_big(t)],
    "latin-1": lambda t: [_file(t, "l.json", b'{"ClusterName": "caf\xe9"}')],
    "empty": lambda t: [_file(t, "e.json", b"")],
    "top-level-list": lambda t: [_file(t, "l.json", b"[]")],
    "nan": lambda t: [
        _file(t, "n.json", VALID.replace(b'"InstanceCount": 1', b'"InstanceCount": NaN'))
    ],
    "infinity": lambda t: [_file(t, "i.json", b'{"ClusterName": "c", "X": -Infinity}')],
    "huge-int": lambda t: [_file(t, "h.json", b'{"InstanceGroups": [' + b"9" * 5000 + b"]}")],
    "deep": lambda t: [_file(t, "d.json", b"[" * 10_000 + b"]" * 10_000)],
    "duplicate-key": lambda t: [_file(t, "k.json", b'{"ClusterName": "a", "ClusterName": "b"}')],
    "lone-surrogate": lambda t: [_file(t, "s.json", b'{"ClusterName": "\\ud800"}')],
    "truncated": lambda t: [_file(t, "t.json", VALID[: len(VALID) // 2])],
    "enum-a-list": lambda t: [
        _file(t, "e.json", VALID.replace(b'"Continuous"', b'["Continuous"]'))
    ],
    "list-a-number": lambda t: [_file(t, "n.json", b'{"ClusterName": "c", "InstanceGroups": 3}')],
    "parameters-not-json": lambda t: [
        _file(t, "r.json", VALID),
        "--provisioning-parameters",
        _file(t, "p.json", b"{oops"),
    ],
    "output-a-folder": lambda t: [_file(t, "r.json", VALID), "-o", str(t)],
    "output-in-missing-folder": lambda t: [_file(t, "r.json", VALID), "-o", str(t / "no/app.py")],
    "hostile-file-name": lambda t: [str(t / "\x1b]0;x\x07.json")],
}
SUMMARY_INPUTS: dict[str, Callable[[Path], list[str]]] = {
    "template-deep": lambda t: [
        _folder(t, {"D.template.json": b'{"Resources": ' + b"[" * 5000 + b"]" * 5000 + b"}"})
    ],
    "template-fifo": lambda t: [_folder(t, {}, fifo="F.template.json")],
    "manifest-duplicate-keys": lambda t: [
        _folder(t, {"manifest.json": b'{"artifacts": {}, "artifacts": {}}'})
    ],
    "template-latin-1": lambda t: [_folder(t, {"L.template.json": b'{"R\xe9": 1}'})],
}


def _folder(tmp: Path, files: dict[str, bytes], fifo: str | None = None) -> str:
    folder = tmp / "cdk.out"
    folder.mkdir()
    for name, content in files.items():
        (folder / name).write_bytes(content)
    if fifo is not None:
        os.mkfifo(folder / fifo)
    return str(folder)


def _run(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_CONFIG_FILE="/dev/null", AWS_SHARED_CREDENTIALS_FILE="/dev/null")
    env["AWS_EC2_METADATA_DISABLED"] = "true"
    result = subprocess.run(
        [sys.executable, "-m", "hyperpod_constructs", *argv],
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=TIMEOUT,  # a hang fails the test instead of blocking it
    )
    return result.returncode, result.stdout.decode(), result.stderr.decode(errors="replace")


def _cases(tmp: Path) -> Iterator[tuple[str, list[str]]]:
    for name, make in CONVERT_INPUTS.items():
        folder = tmp / name
        folder.mkdir()
        yield name, ["convert", *make(folder)]
    for name, make in SUMMARY_INPUTS.items():
        folder = tmp / name
        folder.mkdir()
        argv = make(folder)
        yield name, ["summary", *argv]
        yield f"watch-{name}", ["watch", "--app", *argv]
    yield "watch-no-credentials", ["watch", "--stack", "\x1b]0;x\x07", "--region", "us-east-1"]
    yield "watch-bad-region", ["watch", "--stack", "S", "--region", "a b"]


@pytest.mark.deep(
    why="over 30 python -m hyperpod_constructs processes; in make test summary, watch and "
    "convert refuse hostile input in-process: test_summary_and_watch_read_any_document, "
    "test_convert_options_and_documents, test_a_bad_interval_is_an_argparse_usage_error"
)
def test_every_subcommand_refuses_hostile_files_in_one_line(tmp_path: Path) -> None:
    """Each case in its own ``python -m hyperpod_constructs`` process, four at a time."""
    cases = list(_cases(tmp_path))
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda case: _run(case[1], tmp_path), cases))
    failures = []
    for (name, _), (code, out, err) in zip(cases, results, strict=True):
        try:
            assert_clean_failure(code, out, err)
        except AssertionError as error:
            failures.append(f"{name}: {error}")
    assert not failures, "\n".join(failures)
    assert len(cases) >= 30


@pytest.mark.parametrize("value", ["1e9", "0", "-5", "3601", "\x1b[2J", "NaN"])
def test_a_bad_interval_is_an_argparse_usage_error(tmp_path: Path, value: str) -> None:
    code, out, err = _run(["watch", "--interval", value], tmp_path)
    assert (code, out) == (2, "")
    assert err.splitlines()[-1].startswith(
        "python -m hyperpod_constructs watch: error: argument --interval: "
    )
    assert "\x1b" not in err and "Traceback" not in err


# -- every field of CreateCluster's shape ------------------------------------------------------

VALUES: tuple[object, ...] = (
    None,
    True,
    0,
    -1,
    10**30,
    1.5,
    "",
    HOSTILE_TEXT,
    "ml.p5-48xlarge",
    [],
    [HOSTILE_TEXT],
    [1],
    {},
    {"Unknown": 1},
)


def _paths(value: object, shape: str, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path of ``value`` that the shape describes, and every member the shape allows
    below a present object (present or not)."""
    entry = _aws_model.SHAPES[shape]
    if path:
        yield path
    if entry["type"] in ("structure", "union") and isinstance(value, dict):
        for member, member_shape in entry["members"].items():
            yield from _paths(value.get(member), member_shape, (*path, member))
    elif entry["type"] == "list" and isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, entry["member"], (*path, index))


def _set(document: Any, path: tuple[Any, ...], value: object) -> Any:
    copy = json.loads(json.dumps(document))
    target = copy
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return copy


def _mutations(seed: int, count: int) -> list[tuple[str, Any]]:
    rng = random.Random(seed)
    paths = sorted(set(_paths(REQUEST, _aws_model.ROOTS["CreateCluster"])), key=str)
    chosen = [(p, v) for p in paths for v in VALUES]
    rng.shuffle(chosen)
    strings = [p for p in paths if isinstance(_get(REQUEST, p), str)]
    # Every string field also with hostile text (the values most likely to be kept).
    chosen = [(p, HOSTILE_TEXT + str(_get(REQUEST, p))) for p in strings] + chosen[:count]
    return [(".".join(map(str, p)), _set(REQUEST, p, v)) for p, v in chosen]


def _get(document: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        try:
            document = document[step]
        except (KeyError, IndexError, TypeError):
            return None
    return document


def _strings(value: object) -> Iterator[str]:
    """Every string value of a document (not the field names)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_mutated_requests_are_refused_by_field_or_kept_exactly_in_clean_source(
    tmp_path: Path,
) -> None:
    """Each field of the shape set to each kind of value: refused naming a field, or
    converted to source that holds every string of the request as a literal, escaped to
    printable ASCII; all accepted apps pass ruff (check and format) and mypy --strict."""
    accepted: list[Path] = []
    refused = 0
    for index, (where, request) in enumerate(_mutations(seed=18, count=400)):
        try:
            source, _ = convert_request(request)
        except ConversionError as error:
            assert error.field and str(error).isprintable(), (where, str(error))
            refused += 1
            continue
        assert source.isascii() and all(line.isprintable() for line in source.splitlines())
        literals = {
            node.value
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        }
        missing = {
            s for s in _strings(request) if s and s not in literals and s not in _ENUM_VALUES
        }
        assert not missing, (where, missing)
        path = tmp_path / f"app_{index}.py"
        path.write_text(source)
        accepted.append(path)
    assert refused > 100 and len(accepted) > 20, (refused, len(accepted))
    _assert_ruff_and_mypy_clean(tmp_path, accepted)


_ENUM_VALUES = {
    value
    for shape in _aws_model.SHAPES.values()
    for value in shape.get("enum", ())
    if shape.get("type") == "string"
} | {"Slurm", "OnDemand", "Spot"}
"""Strings the app writes as enum members (``NodeRecovery.AUTOMATIC``), not as literals."""


def _assert_ruff_and_mypy_clean(folder: Path, apps: list[Path]) -> None:
    failed = lint_generated(folder, apps)
    assert not failed, "\n".join(r.stdout[-4000:] + r.stderr[-2000:] for r in failed)


# -- hypothesis: every option, in process ------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)
TEXT = st.text(max_size=30) | st.sampled_from([HOSTILE_TEXT, "-", "--json", "..", "/dev/zero"])
SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@SETTINGS
@given(
    document=JSON,
    parameters=st.none() | JSON,
    continuous=st.booleans(),
    stack_name=st.none() | TEXT,
    force=st.booleans(),
)
def test_convert_options_and_documents(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    document: object,
    parameters: object,
    continuous: bool,
    stack_name: str | None,
    force: bool,
) -> None:
    request = tmp_path / "request.json"
    request.write_text(json.dumps(document))
    argv = ["convert", str(request), "-o", str(tmp_path / "app.py")]
    if parameters is not None:
        (tmp_path / "pp.json").write_text(json.dumps(parameters))
        argv += ["--provisioning-parameters", str(tmp_path / "pp.json")]
    argv += ["--continuous"] * continuous + ["--force"] * force
    if stack_name is not None and stack_name.isprintable() and "\x00" not in stack_name:
        argv += ["--stack-name", stack_name]
    code, _, err = _main(argv, capsys)
    assert code in (0, 2)
    assert "Traceback" not in err and "error: unexpected" not in err
    assert _printable_lines(err)
    if code == 2 and "error: " in err:
        assert err.count("error: ") == 1


@SETTINGS
@given(template=JSON, manifest=st.none() | JSON, as_json=st.booleans())
def test_summary_and_watch_read_any_document(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    template: object,
    manifest: object,
    as_json: bool,
) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    folder = tmp_path / "cdk.out"
    folder.mkdir(exist_ok=True)
    for stale in folder.iterdir():
        stale.unlink()
    (folder / "S.template.json").write_text(json.dumps(template))
    if manifest is not None:
        (folder / "manifest.json").write_text(json.dumps(manifest))
    for argv in (
        ["summary", str(folder), *(["--json"] * as_json)],
        ["watch", "--app", str(folder), "--region", "us-east-1", *(["--json"] * as_json)],
    ):
        code, out, err = _main(argv, capsys)
        assert code in (0, 2), (argv, err)
        assert "Traceback" not in err and "error: unexpected" not in err
        assert _printable_lines(err) and _printable_lines(out)
        if argv[0] == "summary" and as_json and code == 0:
            json.loads(out)
