"""The docs say what ``plan`` says: a change that ``plan`` classifies as refused in place
(hyperpod_constructs/tools/plan/semantics.py, checked against AWS's docs) is never described as
replacing nodes, on a docs page or in a public docstring (the API pages are built from those)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hyperpod_constructs.tools.plan.semantics import GROUP, RULES, Effect
from tests.support.prose import prose

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([*ROOT.glob("docs/*.md"), ROOT / "README.md"])
SOURCES = sorted((ROOT / "hyperpod_constructs").rglob("*.py"))


def _words(pointer: str) -> tuple[str, ...]:
    """``.../ThreadsPerCore`` -> ``threads_per_core``, ``threads per core``."""
    name = pointer.rsplit("/", 1)[1]
    parts = re.findall(r"[A-Z][a-z]*", name)
    lower = [part.lower() for part in parts]
    return ("_".join(lower), " ".join(lower))


REFUSED = [
    rule.pointer
    for rule in RULES
    if rule.effect is Effect.REFUSED and rule.pointer.startswith(f"{GROUP}/")
]
_REPLACES = r"\breplac(?:es|ed|ement)\b"


def _sentences(text: str) -> list[str]:
    """Sentences, table cells and list items (a paragraph, heading or list item ends one)."""
    blocks = re.split(r"\n\s*\n|\n(?=\s*(?:[-*#|>]|```|\d+\.))", text)
    return [
        sentence
        for block in blocks
        for sentence in re.split(r"(?<=[.;])\s+|\|", re.sub(r"\s+", " ", block))
    ]


def _claims(path: Path, words: tuple[str, ...]) -> list[str]:
    return [
        sentence.strip()
        for sentence in _sentences(prose(path))
        if any(
            re.search(rf"\bchang\w*\b.*{word}.*{_REPLACES}", sentence, re.IGNORECASE)
            for word in words
        )
        and not re.search(r"refuse|rename|new group|keeps", sentence, re.IGNORECASE)
    ]


def test_refused_rows_are_derived() -> None:
    assert len(REFUSED) >= 3  # InstanceType, ExecutionRole, ThreadsPerCore at least


@pytest.mark.parametrize("pointer", REFUSED, ids=lambda p: p.rsplit("/", 1)[1])
def test_no_page_says_a_refused_change_replaces_nodes(pointer: str) -> None:
    words = _words(pointer)
    found = {
        str(path.relative_to(ROOT)): claims
        for path in (*PAGES, *SOURCES)
        if (claims := _claims(path, words))
    }
    assert found == {}
