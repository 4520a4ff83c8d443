"""A CloudFormation template's text, parsed: strict JSON (the one input reader), or YAML with
CloudFormation's short forms (``!Ref``, ``!GetAtt``, ``!Sub``...) through cfn-lint's own loader
(``cfnlint.decode.decode_str``), the format ``GetTemplate`` returns for a stack deployed from
YAML. cfn-lint is not a dependency of the library: without it a YAML template is refused with
the command that installs it."""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from .._aws.input import InputError, parse_json

INSTALL_HINT = "pip install cfn-lint"


def _plain(value: Any, depth: int = 0) -> Any:
    """cfn-lint's nodes (``dict``/``str`` subclasses with line numbers) as plain values."""
    if depth > 200:
        raise InputError("the template", "nested too deeply")
    if isinstance(value, Mapping):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        return value
    if isinstance(value, datetime.date):
        return value.isoformat()
    return str(value)


def parse_template(text: str, what: str) -> object:
    """``text`` as a template: JSON when it starts with ``{``, else YAML (cfn-lint's loader).

    :param text: the template's text.
    :param what: names it in errors (``baseline 'main.yaml'``).
    :raises InputError: not JSON, not YAML, or YAML without cfn-lint installed.
    """
    if text.lstrip().startswith("{"):
        return parse_json(text, what)
    try:
        from cfnlint.decode import decode_str  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        raise InputError(
            what, f"not JSON, and reading a YAML template needs cfn-lint: {INSTALL_HINT}"
        ) from None
    template, problems = decode_str(text)
    if problems or not isinstance(template, Mapping):
        problem = str(problems[0].message) if problems else "not a YAML mapping"
        raise InputError(what, f"neither JSON nor a YAML template ({problem})")
    return _plain(template)
