"""Shared driver of the benchmark apps (each app is run as its own process by bench/run.py).

An app script imports this module first, calls :func:`start`, imports aws-cdk-lib and whatever
it needs, then calls :func:`run` with a function that adds its stack to an ``App``. The harness
synthesizes into a temporary folder and prints one JSON line on stdout:

- ``import_s``, ``build_s``, ``synth_s``: seconds spent importing (including the start of the
  jsii kernel), constructing, and in ``app.synth()``;
- ``jsii_build``, ``jsii_synth``: jsii round trips (requests sent to the Node kernel, callbacks
  included) during construction and synthesis;
- ``py_rss_kib``, ``node_rss_kib``: peak resident set size of this Python process and of the
  jsii Node process (stopped and reaped before it is read);
- ``library_modules``: how many ``hyperpod_constructs`` modules the process imported (the L1
  apps must import none: their figures are the baseline without the library).
"""

from __future__ import annotations

import ast
import json
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = "hyperpod_constructs"
OUTDIR_VARIABLE = "HYPERPOD_BENCH_OUTDIR"

_started = time.perf_counter()
_calls = 0


def start() -> None:
    """Count jsii round trips from now on (call before aws-cdk-lib is imported)."""
    global _started
    _started = time.perf_counter()
    from jsii._kernel.providers import process

    send = process._NodeProcess.send

    def counting_send(self: Any, request: Any, response_type: Any) -> Any:
        global _calls
        _calls += 1
        return send(self, request, response_type)

    process._NodeProcess.send = counting_send  # type: ignore[method-assign]


def library_literal(module: str, name: str) -> Any:
    """The value of ``name = <literal>`` in ``hyperpod_constructs/<module>.py``, read from the
    source without importing the library: the L1 apps reuse the library's lists (e.g. the IAM
    actions HyperPod needs) but must not pay for its import."""
    tree = ast.parse((ROOT / LIBRARY / f"{module}.py").read_text(encoding="utf-8"))
    literals: dict[str, Any] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            if isinstance(target, ast.Name):
                try:
                    literals[target.id] = _literal(node.value, literals)
                except ValueError:
                    continue
    if name not in literals:
        raise LookupError(f"{LIBRARY}/{module}.py has no literal assignment to {name}")
    return literals[name]


def _literal(node: ast.expr, known: dict[str, Any]) -> Any:
    """``ast.literal_eval`` that also expands ``*NAME`` in a tuple or list with an earlier
    literal of the same module (``A = (*B, "x")``)."""
    if isinstance(node, ast.Tuple | ast.List):
        items: list[Any] = []
        for element in node.elts:
            if isinstance(element, ast.Starred) and isinstance(element.value, ast.Name):
                if element.value.id not in known:
                    raise ValueError(element.value.id)
                items.extend(known[element.value.id])
            else:
                items.append(_literal(element, known))
        return tuple(items) if isinstance(node, ast.Tuple) else items
    return ast.literal_eval(node)


def _library_modules() -> int:
    return sum(1 for module in sys.modules if module.split(".")[0] == LIBRARY)


def _stop_kernel() -> None:
    import jsii

    provider: Any = jsii.kernel.provider
    provider._process.stop()


def run(define: Callable[[Any], None]) -> None:
    """Build ``define(app)`` and synthesize it; print the measurements as one JSON line."""
    from aws_cdk import App

    imported = time.perf_counter()
    calls_before_build = _calls
    with tempfile.TemporaryDirectory(prefix="hyperpod-bench-") as temporary:
        # HYPERPOD_BENCH_OUTDIR keeps the cloud assembly (the floor apps read its template).
        app = App(outdir=os.environ.get(OUTDIR_VARIABLE) or temporary)
        define(app)
        built = time.perf_counter()
        calls_after_build = _calls
        app.synth()
        synthesized = time.perf_counter()
        calls_after_synth = _calls
    _stop_kernel()
    report = {
        "import_s": imported - _started,
        "build_s": built - imported,
        "synth_s": synthesized - built,
        "jsii_build": calls_after_build - calls_before_build,
        "jsii_synth": calls_after_synth - calls_after_build,
        "py_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "node_rss_kib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
        "library_modules": _library_modules(),
    }
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
