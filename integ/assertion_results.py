"""Exit non-zero unless every integ-tests assertion passed, read from ``cdk deploy --outputs-file``.

An ``AwsApiCall.expect(...)`` assertion does not fail its deployment: its custom resource
succeeds and writes ``{"status": "success"}`` or ``{"status": "fail", "message": ...}`` into
an ``AssertionResults...`` output of the assertion stack, and ``integ-runner`` reads those
outputs to decide. This script does the same for the ``cdk deploy`` commands of docs/integ.md::

    python integ/assertion_results.py cdk.out-integ/assertion-results.json

Exit 0 when there is at least one result and every result is a success; 1 otherwise, naming
each failed output. No result at all (the assertion stack was not deployed, or deployed
without ``--outputs-file``) and an unreadable result are failures, never a pass.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path

PREFIX = "AssertionResults"
"""The output name integ-tests-alpha gives each assertion's result (integ-runner's filter too)."""


def failures(outputs: Mapping[str, Mapping[str, str]]) -> list[str]:
    """One line per assertion that did not pass, for ``outputs`` as ``cdk deploy
    --outputs-file`` writes them (stack name -> output name -> value). A single line when
    there is no assertion result at all."""
    results = {
        f"{stack}.{name}": value
        for stack, stack_outputs in outputs.items()
        for name, value in stack_outputs.items()
        if name.startswith(PREFIX)
    }
    if not results:
        return [f"no {PREFIX}* output: deploy the assertion stack with --outputs-file"]
    found = []
    for where, value in sorted(results.items()):
        try:
            result = json.loads(value)
        except json.JSONDecodeError:
            found.append(f"{where}: not a JSON result: {value!r}")
            continue
        if not isinstance(result, dict) or result.get("status") != "success":
            message = result.get("message", value) if isinstance(result, dict) else value
            found.append(f"{where}: {message}")
    return found


def main(argv: list[str]) -> int:
    """``assertion_results.py OUTPUTS_FILE``: print each failure, return the exit code."""
    if len(argv) != 1:
        print("usage: python integ/assertion_results.py OUTPUTS_FILE", file=sys.stderr)
        return 2
    path = Path(argv[0])
    try:
        outputs = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        print(f"{path}: cannot read the deploy outputs: {error}", file=sys.stderr)
        return 1
    found = failures(outputs)
    for line in found:
        print(f"FAILED {line}", file=sys.stderr)
    if not found:
        print(f"{path}: every assertion passed")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
