"""The FSDP example (``examples/fsdp.py``) synthesized through the library, as is.

With ``--no-gate``: the same cluster with its readiness gate disabled (a diagnostic that
separates the construct's own overhead from the cost of the gate's extra resources).
"""

from __future__ import annotations

import _harness

_harness.start()

import sys  # noqa: E402
from typing import Any  # noqa: E402

from examples.fsdp import FsdpTrainingStack  # noqa: E402
from hyperpod_constructs import MinCountGateOptions  # noqa: E402


def define(app: Any) -> None:
    """Add the FSDP stack to ``app``."""
    gate = MinCountGateOptions(enabled=False) if "--no-gate" in sys.argv[1:] else None
    FsdpTrainingStack(app, "FsdpTraining", readiness_gate=gate)


if __name__ == "__main__":
    _harness.run(define)
