"""Every Python code sample of the docs (docs/*.md) and of README.md runs, so a page that
disagrees with the code fails.

The ```` ```python ```` blocks of a page run in order, in one namespace (a later block may use
what an earlier one defined, as a reader follows the page); then every ``App`` the page built
is synthesized, so a sample that builds a cluster the library refuses fails too. A line that
states a value (``layout.world_size  # 128``) is checked: the expression must equal it.

A block that needs what the page only talks about (the app's stack, a VPC, a cluster) says so
in an HTML comment on the line before it, which the site and GitHub do not show:

- ``<!-- sample: given stack, vpc -->``: the block runs with those names bound to new, real
  objects (``_given`` below: an app, its stack, a VPC, a valid gated cluster, ...; a block
  that names ``stack`` starts a new app, so two blocks may each show a cluster "Cluster").
  A given name that is none of those is imported: a name of ``hyperpod_constructs`` or of
  ``aws_cdk``, or an aws-cdk-lib module by its usual alias (``ec2`` for ``aws_cdk.aws_ec2``);
- ``<!-- sample: raises SizingError -->``: the block shows a mistake, and must raise that error
  (``given`` may follow, after a semicolon);
- ``<!-- sample: fragment -->``: a piece of a larger program (a class body's call with
  ``self``): only compiled.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

FENCE = re.compile(
    r"(?:^<!-- sample: (?P<marker>[^>]*?) -->\n)?^```python\n(?P<code>.*?)^```$",
    re.MULTILINE | re.DOTALL,
)
STATED = re.compile(r"^(?P<expr>[^#\n]+?)\s+#\s+(?P<value>[^\s:(]+)")
"""``expression  # value`` (the value up to a space, ':' or '('), at the start of a line."""


@dataclasses.dataclass(frozen=True)
class Sample:
    page: str
    line: int
    code: str
    given: tuple[str, ...]
    fragment: bool
    raises: str | None = None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def samples(path: Path) -> list[Sample]:
    """The Python blocks of a Markdown file, with their markers."""
    text = path.read_text()
    found = []
    for match in FENCE.finditer(text):
        parts = {
            part.strip().partition(" ")[0]: part.strip().partition(" ")[2].strip()
            for part in (match["marker"] or "").split(";")
            if part.strip()
        }
        if set(parts) - {"given", "raises", "fragment"}:
            raise AssertionError(f"{path.name}: unknown sample marker {match['marker']!r}")
        given = parts.get("given", "")
        found.append(
            Sample(
                page=path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name,
                line=text[: match.start("code")].count("\n"),
                code=match["code"],
                given=tuple(name.strip() for name in given.split(",") if name.strip()),
                fragment="fragment" in parts,
                raises=parts.get("raises"),
            )
        )
    return found


PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PAGES_WITH_SAMPLES = [page for page in PAGES if samples(page)]


# -- what a page may take as given -------------------------------------------------------------


def _given() -> dict[str, Callable[[dict[str, Any]], Any]]:
    """Name -> how to make it from the names made before it (in this order)."""
    from aws_cdk import App, Stack
    from aws_cdk import aws_ec2 as ec2
    from aws_cdk import aws_fsx as fsx
    from aws_cdk import aws_kms as kms
    from aws_cdk import aws_lambda as lambda_

    from hyperpod_constructs import HyperPodInstanceType, HyperPodSlurmCluster, InstanceGroup
    from tests.conftest import new_app

    cpu = HyperPodInstanceType.ML_C5_4XLARGE

    def cluster(given: dict[str, Any]) -> HyperPodSlurmCluster:
        return HyperPodSlurmCluster(
            given["stack"],
            "GivenCluster",
            instance_groups=[
                InstanceGroup.controller("controller", instance_type=cpu),
                InstanceGroup.compute(
                    "gpu", instance_type=cpu, instance_count=2, min_instance_count=2, partition="a"
                ),
            ],
        )

    def build(given: dict[str, Any]) -> Callable[[App], None]:
        def build(app: App) -> None:
            nested: dict[str, Any] = {"app": app}
            nested["stack"] = Stack(app, "Built")
            cluster(nested)

        return build

    return {
        "app": lambda given: new_app(),
        "stack": lambda given: Stack(given["app"], "Stack"),
        "self": lambda given: given["stack"],  # the scope, in a Stack subclass's __init__
        "vpc": lambda given: ec2.Vpc(given["stack"], "GivenVpc", max_azs=2),
        "cluster": cluster,
        "key": lambda given: kms.Key(given["stack"], "GivenKey"),
        "file_system": lambda given: fsx.LustreFileSystem(
            given["stack"],
            "GivenFileSystem",
            vpc=given["vpc"],
            vpc_subnet=given["vpc"].private_subnets[0],
            storage_capacity_gib=1200,
            lustre_configuration=fsx.LustreConfiguration(
                deployment_type=fsx.LustreDeploymentType.PERSISTENT_2,
                per_unit_storage_throughput=125,
            ),
        ),
        "my_function": lambda given: lambda_.Function(
            given["stack"],
            "GivenFunction",
            runtime=lambda_.Runtime.PYTHON_3_12,
            handler="index.handler",
            code=lambda_.Code.from_inline("def handler(event, context): pass"),
        ),
        "cluster_arn": lambda given: (
            "arn:aws:sagemaker:us-east-1:123456789012:cluster/abcd12345678"
        ),
        "build": build,
    }


def _namespace(names: set[str]) -> dict[str, Any]:
    """The given names a page asks for (and those they are made from)."""
    given: dict[str, Any] = {}
    factories = _given()
    needed = set(names) & set(factories)
    order = list(factories)
    for name in sorted(set(names) - needed):
        given[name] = _imported(name)
    # What each given is made from: every given before it that it reads.
    dependencies = {"stack": {"app"}, "self": {"stack"}, "vpc": {"stack"}, "cluster": {"stack"}}
    dependencies |= {"key": {"stack"}}
    dependencies |= {"file_system": {"vpc"}, "my_function": {"stack"}}
    while True:
        more = set().union(*(dependencies.get(name, set()) for name in needed)) - needed
        if not more:
            break
        needed |= more
    for name in order:
        if name in needed:
            given[name] = factories[name](given)
    return given


def _imported(name: str) -> Any:
    """A name of the library or of aws-cdk-lib, or an aws-cdk-lib module by its alias."""
    import importlib

    import aws_cdk

    import hyperpod_constructs

    for module in (hyperpod_constructs, aws_cdk):
        if hasattr(module, name):
            return getattr(module, name)
    try:
        return importlib.import_module(f"aws_cdk.aws_{name.rstrip('_')}")
    except ImportError:
        raise AssertionError(f"no given or importable name {name!r}") from None


# -- running a page ----------------------------------------------------------------------------


def _check_stated_values(sample: Sample, namespace: dict[str, Any]) -> list[str]:
    """Each ``expression  # value`` line whose value is a Python literal: evaluated after the
    block ran (the expressions read nothing the block changes afterwards)."""
    wrong = []
    for number, line in enumerate(sample.code.splitlines(), start=sample.line + 1):
        match = STATED.match(line)
        if match is None:
            continue
        try:
            stated = ast.literal_eval(match["value"].rstrip(",;"))
            ast.parse(match["expr"], mode="eval")
        except (ValueError, SyntaxError):
            continue  # a comment, not a stated value
        actual = eval(match["expr"], namespace)  # the docs' own expression
        if actual != stated:
            wrong.append(f"{sample.page}:{number}: {match['expr'].strip()} is {actual!r}")
    return wrong


@pytest.mark.parametrize("page", PAGES_WITH_SAMPLES, ids=lambda page: page.name)
def test_every_python_sample_of_the_page_runs(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from aws_cdk import App

    monkeypatch.chdir(tmp_path)  # a sample's lifecycle/ folder, its cdk.out
    monkeypatch.setenv("CDK_OUTDIR", str(tmp_path / "cdk.out"))
    (tmp_path / "lifecycle").mkdir()
    (tmp_path / "lifecycle" / "on_create.sh").write_text("#!/bin/bash\n")
    module = types.ModuleType(f"docs_sample_{page.stem}")  # a real module, as dataclasses need
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    apps: list[App] = []
    wrong: list[str] = []
    for sample in samples(page):
        compiled = compile(sample.code, sample.where, "exec")
        if sample.fragment:
            continue
        namespace.update(_namespace(set(sample.given)))
        try:
            exec(compiled, namespace)
        except Exception as error:
            if sample.raises is not None and type(error).__name__ == sample.raises:
                continue
            raise AssertionError(f"{sample.where}: the sample fails: {error!r}") from error
        assert sample.raises is None, f"{sample.where}: no {sample.raises} raised"
        wrong += _check_stated_values(sample, namespace)
        apps += [v for v in namespace.values() if isinstance(v, App) and v not in apps]
    assert wrong == []
    for app in apps:
        app.synth()  # raises on any error the library or aws-cdk-lib reports


def test_the_markers_parse_and_name_givens(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Text\n\n<!-- sample: given stack, vpc -->\n```python\nx = 1\n```\n\n"
        "<!-- sample: fragment -->\n```python\nself.x\n```\n\n```python\ny = 2  # 2\n```\n"
    )
    found = [(s.given, s.fragment, s.raises, s.code) for s in samples(page)]
    assert found == [
        (("stack", "vpc"), False, None, "x = 1\n"),
        ((), True, None, "self.x\n"),
        ((), False, None, "y = 2  # 2\n"),
    ]
    page.write_text("<!-- sample: raises ValueError; given app -->\n```python\nint('x')\n```\n")
    assert [(s.given, s.raises) for s in samples(page)] == [(("app",), "ValueError")]
    sample = Sample("page.md", 10, "y = 3\ny  # 2\nz = 'a'  # comment\n", (), False)
    namespace: dict[str, Any] = {}
    exec(sample.code, namespace)
    assert _check_stated_values(sample, namespace) == ["page.md:12: y is 3"]
