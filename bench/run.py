"""Benchmarks of hyperpod_constructs: ``make bench`` (or ``.venv/bin/python bench/run.py``).

Every measurement is a whole process (``python bench/apps/<app>.py``: interpreter start,
imports, jsii kernel start, construction, ``app.synth()`` into a temporary folder, exit).
Per run: CPU time (user + system of the Python process and of the jsii Node process it
reaps, from ``os.wait4``), wall time, and peak RSS (``ru_maxrss``: the larger of the two
processes; the apps also report each one). After one untimed warm-up run of each case, the
cases run in rounds: every round runs each case once, rotated by one position per round, so
the library and the L1 apps alternate and no case always runs first. Ratios are the median of
the per-round ratios (runs of the same round are close in time, which cancels slow drifts in
the machine's load); absolute values are medians (min..max).

The targets are judged on CPU time: on a shared machine, wall time mostly measures the other
processes (see docs/performance.md). Sections: the gate's synth cost (the smallest gated
cluster, gate on, vs the same cluster in L1 ``CfnCluster``), synth overhead (the FSDP example
vs the same cluster written with the L1 ``CfnCluster``), both with ``CDK_VALIDATION`` off and
on, scale (1..100 instance groups), the readiness gate's cost per 3-hour wait
(``bench/gate_cost.py``), the floor (a gated cluster with a dependant, the FSDP example and 20
clusters against their own templates written as plain ``CfnResource``s, CPU and jsii round
trips), the import of the library's public names, and PASS/MISS per target. The L1 apps
import nothing of the library (checked after every run), so they are the baseline a team pays
without it. ``--record`` also writes the output to docs/performance.md.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import json
import os
import platform
import pstats
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
APPS = ROOT / "bench" / "apps"
OUTDIR_VARIABLE = "HYPERPOD_BENCH_OUTDIR"
"""Where an app keeps its cloud assembly (``bench/apps/_harness.py``)."""
NODE_BIN = ROOT / "node_modules" / ".bin"
PERFORMANCE_DOC = ROOT / "docs" / "performance.md"
BEGIN_MARK = "<!-- bench:begin -->"
END_MARK = "<!-- bench:end -->"

OVERHEAD_TARGET = 1.25
"""The library's FSDP app may cost at most this times the bare L1 app; so may the smallest
gated cluster (validation off)."""
SCALE_TARGET = 1.3
"""100 groups may cost at most this times 2 groups (CPU time and peak memory)."""
SCALE_SIZES = (1, 2, 10, 50, 100)
BYTECODE_DIR = Path(tempfile.gettempdir()) / "hyperpod-bench-bytecode"
"""Where the apps' Python bytecode is cached (``PYTHONPYCACHEPREFIX``), outside the checkout.
An installed package is compiled by pip when it is installed; a checkout run with
``PYTHONDONTWRITEBYTECODE=1`` would compile the library's modules from source in every
process while aws-cdk-lib's come precompiled from its wheel. Each case's warm-up run fills
the cache, so every measured run loads every module from bytecode, as users' processes do."""
FLOOR_APPS = (
    ("clusters-1", "a gated cluster and a dependant", "clusters.py", ("1",), "Clusters", 1.3),
    ("fsdp", "the FSDP example (examples/fsdp.py)", "fsdp_library.py", (), "FsdpTraining", 1.5),
    ("clusters-20", "20 gated clusters, each a dependant", "clusters.py", ("20",), "Clusters", 1.3),
)
"""Each app judged against its floor (``bench/apps/floor.py``: the app's own template written
as plain ``CfnResource``s): key, label, script, arguments, the stack whose template the floor
writes, and the most CPU time the library may cost, as a multiple of the floor's."""
PEERS = {"clusters-1": ("1",), "clusters-20": ("20",)}
"""The apps of :data:`FLOOR_APPS` that have a peer: ``bench/apps/peer.py`` with these
arguments, the same clusters written with the L1 ``CfnCluster`` and waited for by
aws-cdk-lib's Provider framework (issue 37's peer)."""
PEER_TARGET = 1.0
"""Each app of :data:`PEERS` may cost at most this times its peer's CPU time."""
ROUND_TRIP_TARGET = 2.0
"""Each app of :data:`FLOOR_APPS` may make at most this times its floor's jsii round trips."""
IMPORT_TARGET_S = 0.2
"""Importing every public name of the library may cost at most this much CPU time (s) over
``import aws_cdk`` and an ``App`` with a ``Stack``, which every CDK app pays anyway."""
LINEARITY_TOLERANCE = 1.15
"""Python calls per added group between 50 and 100 groups may exceed those between 10 and 50
by this factor before the growth counts as super-linear (the counts are deterministic)."""


@dataclass(frozen=True)
class Case:
    """One app configuration, run as its own process."""

    key: str
    script: str
    args: tuple[str, ...] = ()
    validation: bool = False
    l1: bool = False
    """An L1 baseline: the process must not import the library (checked after each run)."""


@dataclass
class Run:
    """One finished process."""

    cpu_s: float
    wall_s: float
    rss_kib: int
    app: dict[str, float]


@dataclass
class Samples:
    """The runs of one case, in round order."""

    runs: list[Run] = field(default_factory=list)

    def median(self, metric: Callable[[Run], float]) -> float:
        return statistics.median(metric(run) for run in self.runs)

    def cell(self, metric: Callable[[Run], float], width: int = 5, digits: int = 2) -> str:
        values = [metric(run) for run in self.runs]
        median = statistics.median(values)
        return f"{median:{width}.{digits}f} ({min(values):.{digits}f}..{max(values):.{digits}f})"

    def rss_mib(self) -> float:
        return self.median(lambda run: run.rss_kib / 1024)

    def rss_cell(self) -> str:
        py = self.median(lambda run: run.app["py_rss_kib"] / 1024)
        node = self.median(lambda run: run.app["node_rss_kib"] / 1024)
        return f"{self.rss_mib():4.0f} (py {py:3.0f}, node {node:3.0f})"

    def jsii_cell(self) -> str:
        build = self.median(lambda run: run.app["jsii_build"])
        synth = self.median(lambda run: run.app["jsii_synth"])
        return f"{build:5.0f} + {synth:3.0f}"


def paired_ratio(a: Samples, b: Samples, metric: Callable[[Run], float]) -> float:
    """Median over rounds of ``metric(a) / metric(b)`` for the runs of the same round."""
    return statistics.median(metric(x) / metric(y) for x, y in zip(a.runs, b.runs, strict=True))


def cpu(run: Run) -> float:
    return run.cpu_s


def wall(run: Run) -> float:
    return run.wall_s


def rss(run: Run) -> float:
    return float(run.rss_kib)


# -- running the apps -----------------------------------------------------------------------


def child_env(validation: bool) -> dict[str, str]:
    """The environment of an app process: Node 22 first on PATH, the repo importable, every
    module loaded from bytecode (see :data:`BYTECODE_DIR`)."""
    env = dict(os.environ)
    env["PATH"] = f"{NODE_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(BYTECODE_DIR)
    env["CDK_VALIDATION"] = "true" if validation else "false"
    for name in ("CDK_OUTDIR", "CDK_CONTEXT_JSON"):
        env.pop(name, None)
    return env


def run_once(case: Case) -> Run:
    """Run ``case`` once as a process and measure it."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, str(APPS / case.script), *case.args],
            stdout=out,
            stderr=err,
            env=child_env(case.validation),
            cwd=ROOT,
        )
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if process.returncode != 0 or stderr.strip():
        raise SystemExit(
            f"bench: {case.script} {' '.join(case.args)} (CDK_VALIDATION={case.validation}) "
            f"exited {process.returncode}; its stderr must be empty:\n{stderr}"
        )
    report: dict[str, float] = json.loads(stdout.strip().splitlines()[-1])
    if case.l1 and report["library_modules"]:
        raise SystemExit(
            f"bench: the L1 baseline {case.script} {' '.join(case.args)} imported "
            f"{report['library_modules']:.0f} hyperpod_constructs modules; it must import none"
        )
    return Run(usage.ru_utime + usage.ru_stime, elapsed, usage.ru_maxrss, report)


def measure(
    cases: Sequence[Case], runs: int, progress: Callable[[str], None]
) -> dict[str, Samples]:
    """Run every case ``runs`` times, in rotated rounds, after one untimed warm-up each."""
    results = {case.key: Samples() for case in cases}
    for case in cases:
        run_once(case)
    for round_index in range(runs):
        shift = round_index % len(cases)
        for case in [*cases[shift:], *cases[:shift]]:
            results[case.key].runs.append(run_once(case))
        progress(f"round {round_index + 1}/{runs}")
    return results


# -- Python call counts: a deterministic linearity check --------------------------------------


def library_calls(groups: int) -> int:
    """Python function calls inside hyperpod_constructs while building an N-group cluster."""
    from aws_cdk import App

    scale = importlib.import_module("scale")
    app = App()
    profile = cProfile.Profile()
    profile.enable()
    scale.define_groups(app, groups)
    profile.disable()
    stats: dict[tuple[str, int, str], tuple[Any, ...]] = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    package = f"{os.sep}hyperpod_constructs{os.sep}"
    return sum(entry[1] for (filename, _, _), entry in stats.items() if package in filename)


def call_counts(sizes: Sequence[int]) -> dict[int, int]:
    """:func:`library_calls` per size, measured in this process."""
    os.environ["PATH"] = f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    os.environ.setdefault("CDK_VALIDATION", "false")
    sys.path[:0] = [str(ROOT), str(APPS)]
    library_calls(3)  # imports and first-use caches stay out of the counted builds
    return {size: library_calls(size) for size in sizes}


# -- the report -------------------------------------------------------------------------------


@dataclass
class Report:
    """The printed table and the verdict of each target."""

    lines: list[str] = field(default_factory=list)
    verdicts: list[tuple[str, bool, str]] = field(default_factory=list)

    def add(self, line: str = "") -> None:
        self.lines.append(line.rstrip())

    def verdict(self, target: str, passed: bool, detail: str) -> None:
        self.verdicts.append((target, passed, detail))

    def text(self) -> str:
        return "\n".join(self.lines)


def machine() -> dict[str, str]:
    """What the absolute numbers depend on."""
    node = subprocess.run(
        ["node", "--version"], capture_output=True, text=True, env=child_env(False), check=False
    ).stdout.strip()
    return {
        "cpus": str(os.cpu_count()),
        "arch": platform.machine(),
        "python": platform.python_version(),
        "node": node,
        "aws-cdk-lib": version("aws-cdk-lib"),
        "jsii": version("jsii"),
        "load": f"{os.getloadavg()[0]:.1f}",
    }


def verdict_text(passed: bool) -> str:
    return "PASS" if passed else "MISS"


GATED_ROWS = (
    ("gated", "library, gate on"),
    ("gated-l1", "L1 CfnCluster, same cluster"),
    ("gated-nogate", "library, gate disabled (*)"),
)


def gated_section(report: Report, results: dict[str, Samples]) -> None:
    report.add(
        "1. The gate's synth cost: a controller and one gated group (bench/apps/scale.py 2), "
        "library vs L1"
    )
    report.add(
        "   validation  app                           CPU s median (min..max)  "
        "wall s median (min..max)  peak RSS MiB (py, node)  jsii calls build + synth"
    )
    for validation in ("off", "on"):
        for prefix, label in GATED_ROWS:
            samples = results.get(f"{prefix}-{validation}")
            if samples is not None:
                report.add(
                    f"   {validation:<10}  {label:<29} {samples.cell(cpu):<24} "
                    f"{samples.cell(wall):<25} {samples.rss_cell():<24} {samples.jsii_cell()}"
                )
        lib, l1 = results[f"gated-{validation}"], results[f"gated-l1-{validation}"]
        ratio = paired_ratio(lib, l1, cpu)
        judged = validation == "off"
        verdict = (
            f" (target <= {OVERHEAD_TARGET}x: {verdict_text(ratio <= OVERHEAD_TARGET)})"
            if judged
            else " (reported)"
        )
        report.add(
            f"   {validation:<10}  ratio gate on / L1            CPU {ratio:.2f}x{verdict}, "
            f"wall {paired_ratio(lib, l1, wall):.2f}x"
        )
        nogate = results.get(f"gated-nogate-{validation}")
        if nogate is not None:
            report.add(
                f"   {validation:<10}  ratio gate disabled / L1 (*)  "
                f"CPU {paired_ratio(nogate, l1, cpu):.2f}x"
            )
        if judged:
            report.verdict(
                f"gate on: one gated group <= {OVERHEAD_TARGET}x L1, validation off",
                ratio <= OVERHEAD_TARGET,
                f"CPU {ratio:.2f}x",
            )
    report.add()


OVERHEAD_ROWS = (
    ("lib", "library: examples/fsdp.py"),
    ("l1", "L1 CfnCluster, same cluster"),
    ("nogate", "library, gate disabled (*)"),
)


def overhead_section(report: Report, results: dict[str, Samples]) -> None:
    report.add("2. Synth overhead: the FSDP example through the library vs the same cluster in L1")
    report.add(
        "   validation  app                           CPU s median (min..max)  "
        "wall s median (min..max)  peak RSS MiB (py, node)  jsii calls build + synth"
    )
    for validation in ("on", "off"):
        for prefix, label in OVERHEAD_ROWS:
            samples = results.get(f"{prefix}-{validation}")
            if samples is None:
                continue
            report.add(
                f"   {validation:<10}  {label:<29} {samples.cell(cpu):<24} "
                f"{samples.cell(wall):<25} {samples.rss_cell():<24} {samples.jsii_cell()}"
            )
        lib, l1 = results[f"lib-{validation}"], results[f"l1-{validation}"]
        ratio = paired_ratio(lib, l1, cpu)
        report.add(
            f"   {validation:<10}  ratio library / L1            CPU {ratio:.2f}x "
            f"(target <= {OVERHEAD_TARGET}x: {verdict_text(ratio <= OVERHEAD_TARGET)}), "
            f"wall {paired_ratio(lib, l1, wall):.2f}x, peak RSS {paired_ratio(lib, l1, rss):.2f}x"
        )
        nogate = results.get(f"nogate-{validation}")
        if nogate is not None:
            diagnostic_cpu = paired_ratio(nogate, l1, cpu)
            diagnostic_wall = paired_ratio(nogate, l1, wall)
            report.add(
                f"   {validation:<10}  ratio gate disabled / L1 (*)  "
                f"CPU {diagnostic_cpu:.2f}x, wall {diagnostic_wall:.2f}x"
            )
        report.verdict(
            f"synth overhead <= {OVERHEAD_TARGET}x L1, validation {validation}",
            ratio <= OVERHEAD_TARGET,
            f"CPU {ratio:.2f}x",
        )
    if any(key.startswith("nogate") for key in results):
        report.add("   (*) diagnostic: the construct's own overhead, without the gate's resources")
    report.add()


def scale_section(report: Report, results: dict[str, Samples], calls: dict[int, int]) -> None:
    report.add("3. Scale: 1 controller + N-1 gated compute groups, no VPC, CDK_VALIDATION=false")
    report.add(
        "         groups  CPU s median (min..max)  x 2 groups  wall s median  "
        "peak RSS MiB (py, node)  x 2 groups  jsii build + synth  Python calls"
    )
    base = results["scale-2"]
    for size in SCALE_SIZES:
        samples = results[f"scale-{size}"]
        report.add(
            f"   {size:>12}  {samples.cell(cpu):<24} {paired_ratio(samples, base, cpu):9.2f}x  "
            f"{samples.median(wall):13.2f}  {samples.rss_cell():<24} "
            f"{paired_ratio(samples, base, rss):9.2f}x  {samples.jsii_cell():<18}  "
            f"{calls.get(size, '-')!s:>12}"
        )
    for key, label in (
        ("scale-l1-2", "2 (L1)"),
        ("scale-l1-100", "100 (L1)"),
        ("scale-on-2", "2 (val on)"),
        ("scale-on-100", "100 (val on)"),
    ):
        extra = results.get(key)
        if extra is not None:
            report.add(
                f"   {label:>12}  {extra.cell(cpu):<24} {'':>10}  {extra.median(wall):13.2f}  "
                f"{extra.rss_cell():<24} {'':>10}  {extra.jsii_cell():<18}"
            )
    time_ratio = paired_ratio(results["scale-100"], base, cpu)
    rss_ratio = paired_ratio(results["scale-100"], base, rss)
    report.verdict(
        f"scale: 100 groups <= {SCALE_TARGET}x 2 groups, CPU time",
        time_ratio <= SCALE_TARGET,
        f"{time_ratio:.2f}x",
    )
    report.verdict(
        f"scale: 100 groups <= {SCALE_TARGET}x 2 groups, peak RSS",
        rss_ratio <= SCALE_TARGET,
        f"{rss_ratio:.2f}x",
    )
    if "scale-on-2" in results and "scale-on-100" in results:
        on_ratio = paired_ratio(results["scale-on-100"], results["scale-on-2"], cpu)
        report.verdict(
            f"scale: 100 groups <= {SCALE_TARGET}x 2 groups, CPU, validation on",
            on_ratio <= SCALE_TARGET,
            f"{on_ratio:.2f}x",
        )

    low = (calls[50] - calls[10]) / 40
    high = (calls[100] - calls[50]) / 50
    linear = high <= low * LINEARITY_TOLERANCE
    report.add(
        f"   Python calls in hyperpod_constructs per added group: {low:.0f} (10..50 groups), "
        f"{high:.0f} (50..100 groups): {'linear' if linear else 'SUPER-LINEAR'}"
    )
    report.verdict(
        "scale: linear growth (Python calls per group constant)",
        linear,
        f"{high:.0f} vs {low:.0f} calls per group",
    )
    jsii = {
        size: results[f"scale-{size}"].median(lambda run: run.app["jsii_build"])
        for size in SCALE_SIZES
    }
    per_group = (jsii[100] - jsii[10]) / 90
    line = f"   jsii round trips per added group: {per_group:.1f} (library)"
    if "scale-l1-2" in results and "scale-l1-100" in results:
        l1 = {
            size: results[f"scale-l1-{size}"].median(lambda run: run.app["jsii_build"])
            for size in (2, 100)
        }
        line += f", {(l1[100] - l1[2]) / 98:.1f} (L1 with property structs)"
    report.add(line)
    report.verdict(
        "scale: no per-group jsii round trips", per_group < 0.5, f"{per_group:.1f} per group"
    )
    report.add()


def floor_template(script: str, args: Sequence[str], stack: str, folder: Path) -> Path:
    """The template ``script args`` writes for ``stack`` (synthesized once, untimed)."""
    outdir = folder / "-".join([Path(script).stem, *args])
    env = {**child_env(False), OUTDIR_VARIABLE: str(outdir)}
    command = [sys.executable, str(APPS / script), *args]
    subprocess.run(command, env=env, cwd=ROOT, check=True, capture_output=True)
    return outdir / f"{stack}.template.json"


def floor_cases(folder: Path) -> list[Case]:
    """Each app of :data:`FLOOR_APPS` and its floor, the floor's template written into
    ``folder``."""
    cases = []
    for key, _, script, args, stack, _ in FLOOR_APPS:
        template = floor_template(script, args, stack, folder)
        cases.append(Case(key, script, args))
        cases.append(Case(f"{key}-floor", "floor.py", (str(template),), l1=True))
        cases.append(Case(f"{key}-l1floor", "floor_l1.py", (str(template),), l1=True))
        if key in PEERS:
            cases.append(Case(f"{key}-peer", "peer.py", PEERS[key], l1=True))
    return cases


def round_trips(samples: Samples) -> float:
    return samples.median(lambda run: run.app["jsii_build"] + run.app["jsii_synth"])


def floor_section(report: Report, results: dict[str, Samples]) -> None:
    report.add(
        "5. The floor: each app against its own template written as plain CfnResources "
        "(bench/apps/floor.py), CDK_VALIDATION=false"
    )
    report.add(
        "   app                                  CPU s library (min..max)  CPU s floor  "
        "library / floor  jsii round trips library / floor"
    )
    for key, label, *_, target in FLOOR_APPS:
        lib, floor = results[key], results[f"{key}-floor"]
        ratio = paired_ratio(lib, floor, cpu)
        trips, floor_trips = round_trips(lib), round_trips(floor)
        report.add(
            f"   {label:<36} {lib.cell(cpu):<25} {floor.median(cpu):11.2f}  {ratio:14.2f}x  "
            f"{trips:6.0f} / {floor_trips:.0f} = {trips / floor_trips:.2f}x"
        )
        report.verdict(f"{label} <= {target}x its floor, CPU", ratio <= target, f"{ratio:.2f}x")
        report.verdict(
            f"{label}: jsii round trips <= {ROUND_TRIP_TARGET}x the floor's",
            trips <= ROUND_TRIP_TARGET * floor_trips,
            f"{trips:.0f} vs {floor_trips:.0f}",
        )
    report.add(
        "   against the same template in aws-cdk-lib's L1 classes (bench/apps/floor_l1.py: their "
        "modules imported, CfnInclude; reported, not a target)"
    )
    for key, label, *_ in FLOOR_APPS:
        lib, l1_floor = results[key], results[f"{key}-l1floor"]
        report.add(
            f"   {label:<36} {lib.median(cpu):5.2f} vs {l1_floor.cell(cpu)}  "
            f"{paired_ratio(lib, l1_floor, cpu):5.2f}x"
        )
    labels = {key: label for key, label, *_ in FLOOR_APPS}
    report.add(
        "   against the peer (bench/apps/peer.py: L1 CfnCluster + the Provider framework's waiter)"
    )
    for key in PEERS:
        lib, peer = results[key], results[f"{key}-peer"]
        ratio = paired_ratio(lib, peer, cpu)
        report.add(
            f"   {labels[key]:<36} {lib.median(cpu):5.2f} vs {peer.cell(cpu)}  {ratio:5.2f}x  "
            f"jsii round trips {round_trips(lib):.0f} vs {round_trips(peer):.0f}"
        )
        report.verdict(
            f"{labels[key]} <= {PEER_TARGET}x its peer, CPU", ratio <= PEER_TARGET, f"{ratio:.2f}x"
        )
    added = [
        statistics.median(
            (b.cpu_s - a.cpu_s) / 19 * 1000
            for a, b in zip(
                results[f"clusters-1{kind}"].runs, results[f"clusters-20{kind}"].runs, strict=True
            )
        )
        for kind in ("", "-floor", "-peer", "-l1floor")
    ]
    report.add(
        f"   each added gated cluster with its dependant (1 -> 20 clusters): CPU {added[0]:.0f} ms "
        f"(library), {added[1]:.0f} ms (floor), {added[2]:.0f} ms (peer), "
        f"{added[3]:.0f} ms (L1 floor)"
    )
    report.add()


def importtime_library_s() -> float:
    """Seconds ``python -X importtime`` attributes to the library's own modules (self time)
    when every public name is imported. (aws-cdk-lib loads its submodules through a module
    ``__getattr__``, which ``-X importtime`` does not see: their cost is in the CPU figure.)"""
    command = [sys.executable, "-X", "importtime", str(APPS / "imports.py"), "--library"]
    process = subprocess.run(
        command, env=child_env(False), cwd=ROOT, capture_output=True, text=True, check=True
    )
    total = 0
    for line in process.stderr.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if len(fields) == 3 and fields[2].strip().split(".")[0] == "hyperpod_constructs":
            total += int(fields[0])
    return total / 1e6


def imports_section(report: Report, results: dict[str, Samples]) -> None:
    report.add(
        "6. Imports: every public name of the library over `import aws_cdk`, an App and a Stack "
        "(bench/apps/imports.py)"
    )
    cdk, library = results["import-cdk"], results["import-library"]
    extra = statistics.median(
        b.cpu_s - a.cpu_s for a, b in zip(cdk.runs, library.runs, strict=True)
    )
    report.add(f"   aws_cdk, App, Stack                    CPU s {cdk.cell(cpu)}")
    report.add(f"   the same + the library's public names  CPU s {library.cell(cpu)}")
    report.add(
        f"   the library's part: CPU {extra:.2f} s (median of per-round differences); its own "
        f"modules {importtime_library_s():.2f} s of it (-X importtime, self)"
    )
    report.verdict(
        f"import: the library's names <= {IMPORT_TARGET_S} s over import aws_cdk",
        extra <= IMPORT_TARGET_S,
        f"{extra:.2f} s",
    )
    report.add()


def _gate_value(name: str, value: float) -> str:
    if name.endswith("_usd"):
        return f"USD {value:.4f}"
    text = f"{value:.0f}" if float(value).is_integer() else f"{value:.3f}"
    return f"{text} s" if name.endswith("_seconds") else text


def gate_section(report: Report) -> None:
    report.add("4. Readiness gate: one 3-hour wait, polling every 60 s (bench/gate_cost.py)")
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        gate_cost = importlib.import_module("gate_cost")
    except ModuleNotFoundError as error:
        if error.name != "gate_cost":
            raise
        report.add("   gate: n/a (bench/gate_cost.py is missing)")
        report.add()
        return
    costs: dict[str, float] = gate_cost.measure()
    for name, value in costs.items():
        report.add(f"   gate: {name:<32} {_gate_value(name, value):>14}")
    report.add()


def verdict_section(report: Report) -> None:
    report.add("Targets")
    for target, passed, detail in report.verdicts:
        report.add(f"   {verdict_text(passed)}  {target:<58} {detail}")


# -- main -------------------------------------------------------------------------------------


def overhead_cases(diagnostics: bool) -> list[Case]:
    cases = []
    for validation in (True, False):
        flag = "on" if validation else "off"
        cases.append(Case(f"lib-{flag}", "fsdp_library.py", (), validation))
        cases.append(Case(f"l1-{flag}", "fsdp_l1.py", (), validation, l1=True))
        if diagnostics:
            cases.append(Case(f"nogate-{flag}", "fsdp_library.py", ("--no-gate",), validation))
    return cases


def gated_cases(diagnostics: bool) -> list[Case]:
    cases = []
    for validation in (False, True):
        flag = "on" if validation else "off"
        cases.append(Case(f"gated-{flag}", "scale.py", ("2",), validation))
        cases.append(Case(f"gated-l1-{flag}", "scale.py", ("2", "--l1"), validation, l1=True))
        if diagnostics:
            cases.append(Case(f"gated-nogate-{flag}", "scale.py", ("2", "--no-gate"), validation))
    return cases


def scale_cases(diagnostics: bool) -> list[Case]:
    cases = [Case(f"scale-{size}", "scale.py", (str(size),)) for size in SCALE_SIZES]
    cases += [
        Case(f"scale-l1-{size}", "scale.py", (str(size), "--l1"), l1=True) for size in (2, 100)
    ]
    if diagnostics:
        cases += [Case(f"scale-on-{size}", "scale.py", (str(size),), True) for size in (2, 100)]
    return cases


IMPORT_CASES = (
    Case("import-cdk", "imports.py", (), l1=True),
    Case("import-library", "imports.py", ("--library",)),
)


def record(text: str, info: dict[str, str]) -> None:
    """Replace the measured block of docs/performance.md with this run."""
    block = (
        f"{BEGIN_MARK}\nMeasured {time.strftime('%Y-%m-%d')} on {info['cpus']} CPUs "
        f"({info['arch']}), Python {info['python']}, Node {info['node']}, aws-cdk-lib "
        f"{info['aws-cdk-lib']}, jsii {info['jsii']}; load average {info['load']} at the "
        f"start.\n\n```text\n{text}\n```\n{END_MARK}"
    )
    document = PERFORMANCE_DOC.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(BEGIN_MARK) + ".*?" + re.escape(END_MARK), re.DOTALL)
    if not pattern.search(document):
        raise SystemExit(f"bench: {PERFORMANCE_DOC} has no {BEGIN_MARK} ... {END_MARK} block")
    PERFORMANCE_DOC.write_text(pattern.sub(lambda _: block, document), encoding="utf-8")


SECTIONS = ("gated", "overhead", "scale", "gate", "floor", "imports")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmarks; print the table. Exit status 1 only with ``--check`` and a MISS."""
    parser = argparse.ArgumentParser(description="Benchmarks of hyperpod_constructs.")
    parser.add_argument("--runs", type=int, default=5, help="runs per case (at least 5)")
    parser.add_argument(
        "--only",
        choices=SECTIONS,
        action="append",
        help="run only this section (repeatable)",
    )
    parser.add_argument(
        "--diagnostics",
        action="store_true",
        help="also run the apps with the gate disabled and the scale apps with validation",
    )
    parser.add_argument(
        "--check", action="store_true", help="exit with status 1 when a target is missed"
    )
    parser.add_argument(
        "--record", action="store_true", help="also write the output to docs/performance.md"
    )
    args = parser.parse_args(argv)
    if args.runs < 5:
        parser.error("--runs must be at least 5 (targets are judged on medians of >= 5 runs)")
    sections = set(args.only or SECTIONS)

    def progress(message: str) -> None:
        print(f"bench: {message}", file=sys.stderr, flush=True)

    info = machine()
    report = Report()
    report.add(
        f"hyperpod_constructs benchmark: whole processes, {args.runs} runs per case in "
        "alternating rounds"
    )
    report.add(
        f"machine: {info['cpus']} CPUs {info['arch']}, Python {info['python']}, Node "
        f"{info['node']}, aws-cdk-lib {info['aws-cdk-lib']}, load average {info['load']}"
    )
    report.add(
        "absolute values (s, MiB) hold for this machine only; ratios (x, median of per-round "
        "ratios) are portable"
    )
    report.add()
    if "gated" in sections:
        progress("the gate's synth cost: one gated group vs L1")
        gated_section(report, measure(gated_cases(args.diagnostics), args.runs, progress))
    if "overhead" in sections:
        progress("synth overhead: FSDP example vs L1")
        overhead_section(report, measure(overhead_cases(args.diagnostics), args.runs, progress))
    if "scale" in sections:
        progress("scale: 1..100 instance groups")
        results = measure(scale_cases(args.diagnostics), args.runs, progress)
        scale_section(report, results, call_counts((10, 50, 100)))
    if "gate" in sections:
        gate_section(report)
    if "floor" in sections:
        progress("the floor: one cluster, the FSDP example and 20 clusters vs their templates")
        with tempfile.TemporaryDirectory(prefix="hyperpod-bench-floor-") as folder:
            results = measure(floor_cases(Path(folder)), args.runs, progress)
        floor_section(report, results)
    if "imports" in sections:
        progress("imports: the library's public names over import aws_cdk")
        imports_section(report, measure(IMPORT_CASES, args.runs, progress))
    verdict_section(report)
    text = report.text()
    print(text)
    if args.record:
        record(text, info)
        progress(f"recorded in {PERFORMANCE_DOC.relative_to(ROOT)}")
    missed = not all(passed for _, passed, _ in report.verdicts)
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
