"""Secret-like files of every documented kind stay out of the lifecycle upload.

The kinds are ``DEFAULT_EXCLUDE_KINDS`` (the table the filter reads); docs/security.md's table
must be the one generated from it. The names are generated from each kind's patterns (random
text where a pattern has ``*``, random case, a random disguise at the end: a number, a
trailing dot, a backup suffix, trailing white space), so that a new pattern is tried as soon
as it joins the table, and every example the docs show is staged for real.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hyperpod_constructs import LifecycleScripts
from hyperpod_constructs.lifecycle_files import (
    DEFAULT_EXCLUDE_KINDS,
    DEFAULT_EXCLUDES,
    exclude_table,
    select_files,
)
from tests.support.depth import examples
from tests.test_lifecycle_upload import SCRIPT, assert_selection_is_the_upload, write

REPO = Path(__file__).resolve().parent.parent
DISGUISES = [".1", ".12", ".", "..", "~", ".bak", ".OLD", " ", "\t", "\r"]
FILLER = st.text(
    alphabet="abcxyzABC019-_.", min_size=0, max_size=8
)  # what a `*` stands for: never a `/`


def test_the_docs_table_is_the_one_the_filter_reads() -> None:
    text = (REPO / "docs" / "security.md").read_text(encoding="utf-8")
    lines = text.split("\n")
    start = lines.index("| left out | patterns |") + 2
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("| "))
    documented = [line for line in lines[start:end] if "`" in line.split("|")[2]]
    assert documented == exclude_table(), (
        "docs/security.md: paste hyperpod_constructs.lifecycle_files.exclude_table()"
    )
    assert tuple(p for kind in DEFAULT_EXCLUDE_KINDS for p in kind.patterns) == DEFAULT_EXCLUDES


ISSUE_40_NAMES = [
    "accessKeys.csv",
    "credentials.csv",
    "rootkey.csv",
    "terraform.tfvars.json",
    "kubeconfig.yaml",
    "key.pem.1",
    "munge.key.1",
    "key.pem.",
    "host.keytab",
    "store.jceks",
    "AuthKey.p8",
    "ssh_host_rsa_key",
    "service-account.json",
]
"""The 13 names of documented kinds that an earlier upload staged (issue 40)."""


def test_the_secret_like_names_measured_in_the_upload_are_left_out(tmp_path: Path) -> None:
    folder = write(
        tmp_path / "lc",
        {"on_create.sh": SCRIPT, "ssh_host_rsa_key.pub": "ssh-rsa AAAA\n"}
        | {name: "secret\n" for name in ISSUE_40_NAMES},
    )
    scripts = LifecycleScripts.from_directory(str(folder))
    assert set(ISSUE_40_NAMES) <= set(scripts.select().left_out)
    uploaded = assert_selection_is_the_upload(tmp_path, scripts)
    assert uploaded == {"on_create.sh", "ssh_host_rsa_key.pub"}


def test_every_example_the_docs_show_is_left_out_of_the_staged_upload(tmp_path: Path) -> None:
    names = [example for kind in DEFAULT_EXCLUDE_KINDS for example in kind.examples]
    files = {
        (f"{name}inside" if name.endswith("/") else name): "secret\n"
        for name in names
        if name != ".git/"  # a folder git itself would treat specially
    }
    folder = write(tmp_path / "lc", {"on_create.sh": SCRIPT} | files)
    scripts = LifecycleScripts.from_directory(str(folder))
    assert assert_selection_is_the_upload(tmp_path, scripts) == {"on_create.sh"}


@st.composite
def secret_like_names(draw: st.DrawFn) -> tuple[str, str, bool]:
    """(kind, name, is a folder): a name one of the kind's patterns matches, in random case,
    with a random disguise at the end."""
    kind = draw(st.sampled_from(DEFAULT_EXCLUDE_KINDS))
    pattern = draw(st.sampled_from(kind.patterns))
    is_dir = pattern.endswith("/")
    parts = pattern.rstrip("/").split("*")
    name = parts[0] + "".join(draw(FILLER) + part for part in parts[1:])
    name = "".join(c.upper() if draw(st.booleans()) else c for c in name)
    name += "".join(draw(st.lists(st.sampled_from(DISGUISES), max_size=3)))
    # Documented exceptions: public keys stay in; "." and ".." are not names.
    assume_ok = name.strip(". \t\r") != "" and not name.lower().rstrip(". ~").endswith(".pub")
    return kind.kind, (name if assume_ok else "_netrc"), is_dir


@pytest.mark.deep
@settings(
    max_examples=examples(300, 60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(case=secret_like_names())
def test_generated_secret_like_names_of_every_kind_are_left_out(
    case: tuple[str, str, bool],
) -> None:
    kind, name, is_dir = case
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "on_create.sh").write_text(SCRIPT)
        if is_dir:
            (root / name).mkdir()
            (root / name / "inside.sh").write_text(SCRIPT)
        else:
            (root / name).write_text("secret\n")
        selection = select_files(str(root))
    assert selection.files == ("on_create.sh",), f"{kind}: {name!r} is uploaded"
