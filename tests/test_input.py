"""The one reader (``_aws.input``) and the one sanitizer (``_core.sanitize``), table-driven."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hyperpod_constructs._core.sanitize import printable
from hyperpod_constructs.tools._aws.input import InputError, parse_json, read_json


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"a": 1,\n "a": 2}', 'duplicate key "a" in the object starting at line 1 column 1'),
        ("[1, NaN]", "NaN is not a JSON number at line 1 column 5"),
        ('{"x": [Infinity]}', "Infinity is not a JSON number at line 1 column 8"),
        ("[1,\n -Infinity]", "-Infinity is not a JSON number at line 2 column 2"),
        ("1e999", "the number 1e999 is out of range at line 1 column 1"),
        ('["ok", "\\ud800"]', "a lone surrogate (\\ud800-\\udfff) in a string at line 1 column 8"),
        ('{"\\udc00": 1}', 'a lone surrogate in the key "\\udc00" of the object starting at line'),
        ("[" * 65 + "]" * 65, "nested deeper than 64 levels at line 1 column 65"),
        ("[" * 100_000, "nested deeper than 64 levels at line 1 column 65"),
        ("9" * 33, "an integer of 33 digits (at most 32 accepted) at line 1 column 1"),
        ('{"a": "x",}', "not JSON: Expecting property name enclosed in double quotes at line 1"),
        ('"a\x01"', "not JSON: Invalid control character at line 1 column 3"),
        ("", "not JSON: Expecting value at line 1 column 1"),
    ],
)
def test_strict_json_refuses_with_the_position(text: str, problem: str) -> None:
    with pytest.raises(InputError) as raised:
        parse_json(text, "T")
    assert str(raised.value).startswith(f"T: {problem}")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"k": "\\ud83d\\ude00"}', {"k": "\U0001f600"}),
        ("[[[]]]", [[[]]]),
        ("-" + "9" * 32, -int("9" * 32)),
        ('{"a": {"b": [1.5, true, null]}}', {"a": {"b": [1.5, True, None]}}),
    ],
)
def test_strict_json_keeps_what_json_allows(text: str, value: object) -> None:
    assert parse_json(text, "T") == value


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (lambda d: (os.mkfifo(d / "f"), d / "f")[1], "cannot read a FIFO (named pipe)"),
        (lambda d: Path("/dev/zero"), "cannot read a character device"),
        (lambda d: d, "cannot read a folder"),
        (lambda d: d / "missing", "cannot open: No such file or directory"),
        (lambda d: (d / "l").write_bytes(b"\xff") and d / "l", "not UTF-8 text: byte 0xff"),
        (lambda d: (d / "b").write_bytes(b"x" * 11) and d / "b", "larger than 10 bytes"),
    ],
)
def test_only_bounded_regular_utf8_files_are_read(
    tmp_path: Path, make: object, problem: str
) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    with pytest.raises(InputError) as raised:
        read_json(path, "IN", max_bytes=10)
    assert problem in str(raised.value) and str(raised.value).isprintable()


def test_a_byte_order_mark_is_dropped(tmp_path: Path) -> None:
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf{}")
    assert read_json(tmp_path / "bom.json", "IN") == {}


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\x1b]0;title\x07b", "a\\x1b]0;title\\x07b"),
        ("\x1b[2J\x9b31m", "\\x1b[2J\\x9b31m"),
        ("x\u202ey\u2066", "x\\u202ey\\u2066"),
        ("nel\x85ls\u2028", "nel\\x85ls\\u2028"),
        ("\ud800", "\\ud800"),
        ("tab\tnl\n", "tab\\tnl\\n"),
        ("café 日本 ü \"'\\", "café 日本 ü \"'\\"),
    ],
)
def test_the_sanitizer_escapes_what_a_terminal_would_interpret(text: str, shown: str) -> None:
    assert printable(text) == shown


@given(st.text())
def test_sanitized_text_is_printable_and_stable(text: str) -> None:
    shown = printable(text)
    assert shown.isprintable() and printable(shown) == shown
