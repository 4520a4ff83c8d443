"""The README's example is real: it synthesizes, and its error message is the one users get;
so is the report docs/guide.md shows; and every Python block of docs/*.md runs and
synthesizes."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App

from hyperpod_constructs import report_validation_errors
from tests.conftest import ROOT, new_app
from tests.support.cdk_cli import run_app

README = (ROOT / "README.md").read_text()


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def _run_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> dict[str, Any]:
    (tmp_path / "lifecycle").mkdir()
    (tmp_path / "lifecycle" / "on_create.sh").write_text("#!/bin/bash\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CDK_OUTDIR", str(tmp_path / "out"))
    namespace: dict[str, Any] = {}
    exec(compile(source, "README.md", "exec"), namespace)
    app: App = namespace["app"]
    return app.synth().get_stack_by_name("Training").template  # type: ignore[no-any-return]


def test_the_readme_example_synthesizes_a_gated_cluster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (example,) = _blocks("python")
    template = _run_example(tmp_path, monkeypatch, example)
    resources = template["Resources"]
    (cluster,) = [r for r in resources.values() if r["Type"] == "AWS::SageMaker::Cluster"]
    groups = {g["InstanceGroupName"]: g for g in cluster["Properties"]["InstanceGroups"]}
    assert list(groups) == ["controller", "login", "gpu", "cpu"]
    assert (groups["gpu"]["InstanceCount"], groups["gpu"]["MinInstanceCount"]) == (16, 16)
    (wait_id,) = [
        k for k, r in resources.items() if r["Type"] == "AWS::CloudFormation::WaitCondition"
    ]
    (marker,) = [r for r in resources.values() if r["Type"] == "AWS::SSM::Parameter"]
    assert marker["DependsOn"] == [wait_id]


MISTAKES = {
    "min_instance_count=16": "min_instance_count=17",
    'HyperPodInstanceType.of("ml.m5.xlarge")': 'HyperPodInstanceType.of("ml.m5.xlarg")',
}
"""The mistakes the README's words put into its example."""


OPT_IN = "@report_validation_errors()"
"""The one line the README and the guide give for a report without a traceback: on the
function that builds and synthesizes the app (CDK Pipelines raise while it is built)."""


def _opted_in(app: str) -> str:
    """``app``, construction and synth, as the body of a ``main()`` decorated with
    :data:`OPT_IN`."""
    assert app.endswith("\napp.synth()\n")
    body = "".join(f"    {line}" if line.strip() else line for line in app.splitlines(True))
    return (
        "from hyperpod_constructs import report_validation_errors\n\n\n"
        f"{OPT_IN}\ndef main() -> None:\n{body}\n\nmain()\n"
    )


def test_the_readme_error_message_is_what_a_plain_app_prints(tmp_path: Path) -> None:
    """The example with the README's two mistakes, run as ``python app.py`` with the opt-in
    line the README gives: stderr is exactly the block the README shows, with no traceback,
    status 1."""
    example, shown = _blocks("python")[0], _blocks("text")[0]
    assert f"`{OPT_IN}`" in README
    for right, wrong in MISTAKES.items():
        assert f"`{wrong}`" in README  # the words say which mistakes the block shows
        assert example.count(right) == 1
        example = example.replace(right, wrong)
    example = _opted_in(example)
    (tmp_path / "lifecycle").mkdir()
    (tmp_path / "lifecycle" / "on_create.sh").write_text("#!/bin/bash\n")
    (tmp_path / "app.py").write_text(example)
    result = run_app(tmp_path, CDK_OUTDIR=str(tmp_path / "out"))
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    assert result.stderr == shown
    assert not list((tmp_path / "out").glob("*.template.json"))


GUIDE_APP = """\
from aws_cdk import App, Stack

from hyperpod_constructs import (
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    NodeProvisioningMode,
)

CHECKS = [DeepHealthCheck.INSTANCE_STRESS, DeepHealthCheck.INSTANCE_CONNECTIVITY]
app = App()
HyperPodSlurmCluster(
    Stack(app, "Training"),
    "Cluster",
    node_provisioning_mode=NodeProvisioningMode.STANDARD,
    instance_groups=[
        InstanceGroup.controller("controller", instance_type=HyperPodInstanceType.ML_M5_2XLARGE),
        InstanceGroup.compute(
            "p5", instance_type=HyperPodInstanceType.of("ml.p5.48xlarg"), instance_count=2,
            partition="gpu", deep_health_checks=CHECKS,
        ),
        InstanceGroup.compute(
            "p5", instance_type=HyperPodInstanceType.ML_P5_48XLARGE, instance_count=2,
            min_instance_count=3, partition="gpu", deep_health_checks=CHECKS,
        ),
    ],
)
app.synth()
"""
"""The cluster docs/guide.md describes in words before the report it shows."""


def test_the_guide_report_is_what_a_plain_app_prints(tmp_path: Path) -> None:
    guide = (ROOT / "docs" / "guide.md").read_text()
    errors = guide[guide.index("## Errors\n") :]
    (shown,) = re.findall(r"```text\n(.*?)```", errors, flags=re.DOTALL)[:1]
    for words in ("STANDARD mode", "two groups named `p5`", '`"ml.p5.48xlarg"`'):
        assert words in errors
    assert f"{OPT_IN}\ndef main() -> None:" in errors
    (tmp_path / "app.py").write_text(_opted_in(GUIDE_APP))
    result = run_app(tmp_path, CDK_OUTDIR=str(tmp_path / "out"))
    assert result.returncode == 1, result.stderr
    assert result.stderr == shown


# -- every code block of the docs ---------------------------------------------------------
# Each ```python block of docs/*.md runs, in page order, in one namespace per page; a block
# may use a name a later block of its page defines (it runs after that block). What a snippet
# leaves out (the stack, a VPC, a cluster, a function) is supplied, in a fresh stack per block
# (PRELUDE); every App is then synthesized. An expression whose comment states its value
# (``layout.world_size  # 128``) must have that value. A block that shows an error is
# followed by the error's text (an unlabelled block starting with ``SomeError:``): the error
# must be that one.
# Blocks of output (```text, ```json, unlabelled) are what a command prints: the CLI tests
# compare real output with them. Shell blocks are checked below as far as they can be without
# an AWS account; the install commands are followed by tests/test_packaging.py.

DOCS = sorted((ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"^```(?P<language>[\w-]*)\n(?P<body>.*?)^```$", re.DOTALL | re.MULTILINE)
SHOWN_ERROR = re.compile(r"(?P<type>\w+(?:Error|Exception)): (?P<message>.*)", re.DOTALL)


def _stack(ns: dict[str, Any]) -> Any:
    from aws_cdk import Stack

    ns["_blocks"] = ns.get("_blocks", 0) + 1
    return Stack(ns["_app"], f"Block{ns['_blocks']}")


def _vpc(ns: dict[str, Any]) -> Any:
    from aws_cdk import aws_ec2 as ec2

    return ec2.Vpc(ns["stack"], "Vpc", max_azs=1)


def _cluster(ns: dict[str, Any]) -> Any:
    from hyperpod_constructs import HyperPodInstanceType, HyperPodSlurmCluster, InstanceGroup

    cpu = HyperPodInstanceType.ML_M5_2XLARGE
    groups = [
        InstanceGroup.controller("controller", instance_type=cpu),
        InstanceGroup.compute("burn-in", instance_type=cpu, instance_count=1, partition="b"),
    ]
    return HyperPodSlurmCluster(ns["stack"], "Cluster", instance_groups=groups)


def _file_system(ns: dict[str, Any]) -> Any:
    from aws_cdk import aws_fsx as fsx

    vpc = _need(ns, "vpc")
    return fsx.LustreFileSystem(
        ns["stack"],
        "Fsx",
        vpc=vpc,
        vpc_subnet=vpc.private_subnets[0],
        storage_capacity_gib=1200,
        lustre_configuration=fsx.LustreConfiguration(
            deployment_type=fsx.LustreDeploymentType.SCRATCH_2
        ),
    )


def _function(ns: dict[str, Any]) -> Any:
    from aws_cdk import aws_lambda as lambda_

    return lambda_.Function(
        ns["stack"],
        "Function",
        runtime=lambda_.Runtime.PYTHON_3_12,
        handler="index.handler",
        code=lambda_.Code.from_inline("def handler(event, context): pass"),
    )


def _build(ns: dict[str, Any]) -> Any:
    def build(app: Any) -> None:
        from aws_cdk import Stack

        from hyperpod_constructs import HyperPodInstanceType, HyperPodSlurmCluster, InstanceGroup

        stack = Stack(app, "Built")
        controller = InstanceGroup.controller(
            "controller", instance_type=HyperPodInstanceType.ML_M5_2XLARGE
        )
        HyperPodSlurmCluster(stack, "Cluster", instance_groups=[controller])

    return build


def _key(ns: dict[str, Any]) -> Any:
    from aws_cdk import aws_kms as kms

    return kms.Key(ns["stack"], "Key")


PRELUDE: dict[str, Callable[[dict[str, Any]], Any]] = {
    "vpc": _vpc,
    "cluster": _cluster,
    "file_system": _file_system,
    "key": _key,
    "my_function": _function,
    "cluster_arn": lambda ns: "arn:aws:sagemaker:us-east-1:111122223333:cluster/abcdefgh1234",
    "build": _build,
    "app": lambda ns: ns["_app"],
}
"""What snippets use without defining it, made on first use in the block's own stack."""

IMPORTS = """\
from aws_cdk import Annotations, App, Aspects, Duration, Size, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_ssm as ssm
from hyperpod_constructs import *
from hyperpod_constructs.blueprints import *
from hyperpod_constructs.policy import *
from hyperpod_constructs.sizing import *
from hyperpod_constructs.validation import Finding, Rule, Scope, Severity, reports
"""
"""The imports a snippet leaves out (a page's blocks show their own where they matter)."""


def _free_names(source: str) -> set[str]:
    """The names a block reads without defining them itself."""
    tree = ast.parse(source)
    defined = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    }
    defined |= {
        a.asname or a.name
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
    }
    defined |= {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    loaded = {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }
    return loaded - defined


def _need(ns: dict[str, Any], name: str) -> Any:
    if name not in ns:
        ns[name] = PRELUDE[name](ns)
        ns["_made"].add(name)
    return ns[name]


def _run_block(ns: dict[str, Any], source: str, where: str) -> None:
    """Run one block; what it reads and no block defined comes from PRELUDE, in a new stack
    (``self`` too: a snippet from a Stack subclass's ``__init__``)."""
    free = _free_names(source)
    missing = free & set(PRELUDE) - set(ns)
    if free & {"stack", "self"} or missing:
        for name in ns["_made"]:
            ns.pop(name, None)
        ns["_made"] = set()
        ns["stack"] = ns["self"] = _stack(ns)
    for name in sorted(free & set(PRELUDE)):
        _need(ns, name)
    lines = source.splitlines()
    for statement in ast.parse(source).body:
        stated = _stated_value(lines[(statement.end_lineno or statement.lineno) - 1])
        if isinstance(statement, ast.Expr) and stated is not None:
            actual = eval(compile(ast.Expression(statement.value), where, "eval"), ns)
            assert actual == stated[0], (
                f"{where}, line {statement.lineno}: {ast.unparse(statement.value)} is "
                f"{actual!r}, the docs say {stated[1]}"
            )
            continue
        exec(compile(ast.Module([statement], type_ignores=[]), where, "exec"), ns)


STATED = re.compile(r"#\s+(?P<value>[^\s:(,;]+)")
"""A line's comment that states its expression's value: ``layout.world_size  # 128``,
``....accelerator_count  # None: CPU only``."""


def _stated_value(line: str) -> tuple[object, str] | None:
    """(value, as written) of the Python literal a line's comment starts with, if any."""
    _, hash_, comment = line.partition("  #")
    match = STATED.match(f"#{comment}") if hash_ else None
    if match is None:
        return None
    try:
        return ast.literal_eval(match["value"]), match["value"]
    except (ValueError, SyntaxError):
        return None  # a comment in words


def _warnings(assembly: Any) -> list[str]:
    """The warnings of a synthesized app: an example shows code that synthesizes cleanly."""
    return [
        f"{message.id}: {message.entry.data}"
        for stack in assembly.stacks
        for message in stack.messages
        if str(message.level).lower().endswith("warning")
    ]


def _fenced(page: Path) -> list[tuple[str, str]]:
    """(language, body) of each fenced block; a block right after the one before it (nothing
    but blank lines between) gets the language "output" when it is unlabelled."""
    text, found, end = page.read_text(), [], -1
    for match in FENCE.finditer(text):
        adjacent = not text[end : match.start()].strip()
        language = "output" if adjacent and not match["language"] else match["language"]
        found.append((language, match["body"]))
        end = match.end()
    return found


@pytest.mark.parametrize("page", DOCS, ids=lambda p: p.name)
def test_every_python_block_of_the_docs_runs_and_synthesizes(
    page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocks = _fenced(page)
    python = [i for i, (language, _) in enumerate(blocks) if language == "python"]
    if not python:
        pytest.skip(f"{page.name} has no Python block")
    (tmp_path / "lifecycle").mkdir()
    (tmp_path / "lifecycle" / "on_create.sh").write_text("#!/bin/bash\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CDK_OUTDIR", str(tmp_path / "out"))
    ns: dict[str, Any] = {"_app": new_app(outdir=str(tmp_path / "prelude")), "_made": set()}
    exec(IMPORTS, ns)
    pending = list(python)
    while pending:
        deferred: list[int] = []
        for index in pending:
            where = f"{page.name} block {index + 1}"
            shown = blocks[index + 1] if index + 1 < len(blocks) else ("", "")
            expected = SHOWN_ERROR.fullmatch(shown[1].strip()) if shown[0] == "output" else None
            try:
                _run_block(ns, blocks[index][1], where)
            except NameError:
                deferred.append(index)
                continue
            except Exception as error:
                assert expected, f"{where} raised {error!r}"
                assert type(error).__name__ == expected["type"], where
                assert " ".join(str(error).split()) == " ".join(expected["message"].split())
                continue
            assert expected is None, f"{where} should raise {expected['type']}"
        assert deferred != pending, f"{page.name}: blocks {deferred} use names nothing defines"
        pending = deferred
    apps = [value for value in ns.values() if isinstance(value, App)]
    with report_validation_errors():
        for app in {id(a): a for a in apps}.values():
            assert _warnings(app.synth()) == [], page.name


def _docstring_examples() -> list[tuple[str, str]]:
    """(public name, source) of every ```python block in a public name's docstring (and its
    public methods'): the examples of the API reference."""
    import pkgutil

    import hyperpod_constructs

    # The public namespaces as docs/hooks.py counts them (that module needs mkdocs, which the
    # lowest-supported venv of `make test-min` does not have).
    packages = [m.name for m in pkgutil.iter_modules(hyperpod_constructs.__path__) if m.ispkg]
    modules = [name.lstrip(".") for name in hyperpod_constructs._SUBPACKAGES]
    namespaces = ["hyperpod_constructs"] + [
        f"hyperpod_constructs.{name}"
        for name in sorted({*packages, *modules})
        if not name.startswith("_")
    ]
    found: list[tuple[str, str]] = []
    public = [
        (package, name)
        for package in namespaces
        for name in getattr(importlib.import_module(package), "__all__", [])
    ]
    for namespace, name in public:
        value = getattr(importlib.import_module(namespace), name)
        members = [value, *(vars(value).values() if isinstance(value, type) else ())]
        for member in members:
            doc = inspect.getdoc(getattr(member, "__func__", member)) or ""
            if member is not value and not callable(getattr(member, "__func__", member)):
                continue
            found += [
                (f"{namespace}.{name}", m["body"])
                for m in FENCE.finditer(doc)
                if m["language"] == "python"
            ]
    return found


EXAMPLES = _docstring_examples()


@pytest.mark.parametrize(("name", "source"), EXAMPLES, ids=[n for n, _ in EXAMPLES])
def test_every_docstring_example_runs_and_synthesizes(
    name: str, source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "lifecycle").mkdir()
    (tmp_path / "lifecycle" / "on_create.sh").write_text("#!/bin/bash\n")
    monkeypatch.chdir(tmp_path)
    ns: dict[str, Any] = {"_app": new_app(outdir=str(tmp_path / "out")), "_made": set()}
    exec(IMPORTS, ns)
    _run_block(ns, source, f"the docstring of {name}")
    with report_validation_errors():
        assert _warnings(ns["_app"].synth()) == [], name


# -- the shell commands of the README and the docs ---------------------------------------
# What they run cannot run here (an AWS account, a terminal, the whole suite), so each is
# checked as far as it can be without one: the library's own commands parse with its CLI,
# and `cdk deploy` / `cdk synth` name a stack the app they synthesize defines.

CDK_OPTIONS_WITH_VALUE = {"--app", "-a", "--output", "-o", "--outputs-file", "--require-approval"}


def _shell_lines() -> list[tuple[str, list[str]]]:
    found: list[tuple[str, list[str]]] = []
    for page in [ROOT / "README.md", *DOCS]:
        for language, body in _fenced(page):
            if language != "sh":
                continue
            for line in body.replace("\\\n", " ").splitlines():
                command = line.split(" #", 1)[0].split(" > ", 1)[0].split(" | ", 1)[0]
                if command.strip():
                    found.append((page.name, shlex.split(command)))
    return found


SHELL = _shell_lines()


def test_the_library_commands_in_the_docs_parse() -> None:
    from hyperpod_constructs.__main__ import _parser

    commands = [words for _, words in SHELL if words[:3] == ["python", "-m", "hyperpod_constructs"]]
    assert len(commands) >= 3
    for words in commands:
        _parser().parse_args(words[3:])  # exits (SystemExit) on an unknown option


def test_cdk_commands_in_the_docs_name_stacks_their_app_defines(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    """README's stacks come from its example (``Training``), the guides' from examples/app.py;
    a command with ``--app`` runs another app (integ/, checked by tests/test_integ.py)."""
    stacks = {"README.md": {"Training"}}
    checked = 0
    for page, words in SHELL:
        if words[:2] not in (["cdk", "deploy"], ["cdk", "synth"]) or "--app" in words:
            continue
        named, skip = [], False
        for word in words[2:]:
            if skip or word.startswith("-"):
                skip = word in CDK_OPTIONS_WITH_VALUE
                continue
            named.append(word)
        known = stacks.get(page, set(example_templates))
        assert set(named) <= known, f"{page}: {' '.join(words)} names a stack its app lacks"
        checked += 1
    assert checked >= 2
