"""``python -m hyperpod_constructs summary``: the cluster summary of a synthesized cdk.out.

Runs on the example app (synthesized once for the session by ``example_assembly``) in-process
and once through a real ``python -m`` subprocess, and on hand-written folders for the edge
cases: no cluster, non-HyperPod stacks, broken JSON, missing folder, stages, intrinsics.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from aws_cdk.cx_api import CloudAssembly
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hyperpod_constructs.__main__ import main
from hyperpod_constructs.tools.summary import (
    TemplateError,
    render_json,
    render_text,
    render_value,
    summarize,
    summarize_template,
)
from hyperpod_constructs.tools.summary.assembly import AssemblySummary
from hyperpod_constructs.tools.summary.render import format_duration
from tests.support.gate_defaults import human, metrics_namespace, poll_seconds, timeout_seconds

CLUSTER = "AWS::SageMaker::Cluster"
GATE = "Custom::HyperPodMinCountGate"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the CLI in-process; return (exit code, stdout, stderr)."""
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def write_json(path: Path, document: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def stack_manifest(*stacks: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A minimal cloud assembly manifest listing ``stacks`` (templates ``<name>.template.json``)."""
    artifacts: dict[str, Any] = {
        name: {
            "type": "aws:cloudformation:stack",
            "properties": {"templateFile": f"{name}.template.json"},
            "displayName": name,
        }
        for name in stacks
    }
    artifacts["Tree"] = {"type": "cdk:tree", "properties": {"file": "tree.json"}}
    artifacts.update(extra or {})
    return {"version": "55.0.0", "artifacts": artifacts}


def group(name: str, node_type: str, count: object = 1, **extra: object) -> dict[str, object]:
    return {
        "InstanceGroupName": name,
        "InstanceType": "ml.m5.xlarge",
        "InstanceCount": count,
        "SlurmConfig": {
            "NodeType": node_type,
            **({"PartitionNames": [name]} if node_type == "Compute" else {}),
        },
        **extra,
    }


BUCKET_ONLY = {"Resources": {"Bucket": {"Type": "AWS::S3::Bucket"}}}


def section(text: str, cluster_name: str) -> list[str]:
    """The lines of one cluster's block in the plain-text report."""
    blocks = [block.splitlines() for block in text.split("\n\n")]
    return next(b for b in blocks if b[0].startswith(f"{cluster_name}  ("))


def row(lines: list[str], first_cell: str) -> str:
    """A table row's cells (separated by two or more spaces in the table) joined by " | "."""
    line = next(line for line in lines if line.split()[0] == first_cell)
    return " | ".join(re.split(r"\s{2,}", line.strip()))


# --- the synthesized example app ----------------------------------------------------------


@pytest.fixture(scope="module")
def cdk_out(example_assembly: CloudAssembly) -> str:
    return str(example_assembly.directory)


@pytest.fixture(scope="module")
def expected_counts(
    example_assembly: CloudAssembly, example_templates: dict[str, dict[str, Any]]
) -> tuple[int, int]:
    """(clusters, stacks) of the example app, counted independently of the CLI."""
    clusters = sum(
        resource.get("Type") == CLUSTER
        for template in example_templates.values()
        for resource in template.get("Resources", {}).values()
    )
    return clusters, len(example_assembly.stacks_recursively)


def test_plain_text_summary_of_the_example_app(
    cdk_out: str, expected_counts: tuple[int, int], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["summary", cdk_out], capsys)

    assert (code, err) == (0, "")
    clusters, stacks = expected_counts
    assert clusters >= 3
    assert out.startswith(f"{clusters} HyperPod clusters in {cdk_out} ({stacks} stacks read)\n")
    fsdp = section(out, "fsdp-train")
    assert "stack FsdpTraining" in fsdp[0]
    assert "provisioning Continuous" in fsdp[0]
    header = "GROUP | NODE TYPE | INSTANCE TYPE | COUNT | MIN | PARTITION | GATE"
    assert row(fsdp, "GROUP") == header
    assert row(fsdp, "gpu") == "gpu | Compute | ml.p5.48xlarge | 16 | 16 | gpu | min 16 / target 16"
    assert (
        row(fsdp, "controller") == "controller | Controller | ml.m5.2xlarge | 1 | - | - | ungated"
    )
    options = f"timeout {human(timeout_seconds())}; poll every {human(poll_seconds())}"
    assert fsdp[-1] == f"  gate: waits for gpu; {options}; notifications off"

    hetero = section(out, "hetero")
    assert (
        row(hetero, "gpu") == "gpu | Compute | ml.p4d.24xlarge | 10 | 8 | gpu | min 8 / target 10"
    )
    assert row(hetero, "cpu") == "cpu | Compute | ml.c5.4xlarge | 4 | - | cpu | ungated"
    assert hetero[-1].startswith(
        f"  gate: waits for gpu; {options}; notifications on (<Ref ClusterMinCountGateTopic"
    )

    minimal = next(b for b in out.split("\n\n") if "stack MinimalDev" in b).splitlines()
    assert row(minimal, "dev") == "dev | Compute | ml.g5.2xlarge | 2 | - | dev-gpu | ungated"
    assert minimal[-1] == "  gate: no gate"


def test_json_summary_of_the_example_app(
    cdk_out: str, expected_counts: tuple[int, int], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["summary", cdk_out, "--json"], capsys)

    assert (code, err) == (0, "")
    document = json.loads(out)
    assert document["schema_version"] == 1
    assert (document["directory"], document["stacks_read"]) == (cdk_out, expected_counts[1])
    assert len(document["clusters"]) == expected_counts[0]
    clusters = {c["stack"]: c for c in document["clusters"]}
    assert list(clusters)[:3] == ["FsdpTraining", "Heterogeneous", "MinimalDev"]

    fsdp = clusters["FsdpTraining"]
    assert fsdp["cluster_name"] == "fsdp-train"
    assert fsdp["template_file"] == "FsdpTraining.template.json"
    assert fsdp["node_provisioning_mode"] == "Continuous"
    groups = {g["name"]: g for g in fsdp["instance_groups"]}
    assert groups["gpu"] == {
        "name": "gpu",
        "node_type": "Compute",
        "instance_type": "ml.p5.48xlarge",
        "instance_types": ["ml.p5.48xlarge"],
        "auto_patch": None,
        "instance_count": 16,
        "min_instance_count": 16,
        "partitions": ["gpu"],
        "gated": True,
    }
    assert groups["controller"]["min_instance_count"] is None
    assert groups["controller"]["partitions"] == []
    gate = fsdp["gate"]
    assert gate["requirements"] == [{"group": "gpu", "min_count": 16, "target_count": 16}]
    assert gate["timeout_seconds"] == timeout_seconds()
    assert gate["poll_interval_seconds"] == poll_seconds()
    assert (gate["notifications"], gate["topic"]) == (False, None)
    assert gate["metrics_namespace"] == metrics_namespace()
    assert gate["wait_condition_timeout_seconds"] == 12 * 3600

    hetero = clusters["Heterogeneous"]
    hetero_groups = {g["name"]: g for g in hetero["instance_groups"]}
    assert hetero_groups["cpu"]["gated"] is False
    assert hetero_groups["cpu"]["partitions"] == ["cpu"]
    assert hetero["gate"]["requirements"] == [{"group": "gpu", "min_count": 8, "target_count": 10}]
    assert hetero["gate"]["notifications"] is True
    assert hetero["gate"]["topic"].startswith("<Ref ClusterMinCountGateTopic")

    assert clusters["MinimalDev"]["gate"] is None


def test_python_dash_m_runs_clean_without_importing_aws_cdk(cdk_out: str, tmp_path: Path) -> None:
    """The real entry point: exit 0, the table on stdout, nothing else on stderr (``-X
    importtime`` lines aside), and neither aws_cdk nor jsii imported (fast start, no Node)."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "hyperpod_constructs", "summary", cdk_out],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONWARNINGS": "error"},
    )

    stderr = result.stderr.splitlines()
    assert [line for line in stderr if not line.startswith("import time:")] == []
    imported = {line.rsplit("|", 1)[-1].strip() for line in stderr}
    heavy = sorted(m for m in imported if m.split(".")[0] in {"aws_cdk", "jsii", "constructs"})
    assert heavy == [], (
        "the CLI must not import aws_cdk/jsii; hyperpod_constructs/__init__.py has to load its "
        f"CDK exports lazily: {heavy[:5]}"
    )
    assert result.returncode == 0
    assert "fsdp-train  (stack FsdpTraining" in result.stdout
    assert "min 16 / target 16" in result.stdout


# --- command line ------------------------------------------------------------------------


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--help"], capsys)
    assert code == 0
    assert "python -m hyperpod_constructs" in out and "summary" in out

    code, out, _ = run(["summary", "--help"], capsys)
    words = " ".join(out.split())
    assert code == 0
    assert "[--json] [CDK_OUT]" in words and "(default: cdk.out)" in words
    assert "exit codes: 0 report printed (also when no cluster is found); 2 usage error" in words


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run([], capsys)
    assert (code, out) == (2, "")
    assert "required: COMMAND" in err

    code, _, err = run(["summary", "--bogus"], capsys)
    assert code == 2
    assert "unrecognized arguments: --bogus" in err


def test_missing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope"
    code, out, err = run(["summary", str(missing)], capsys)
    assert (code, out, err) == (2, "", f"error: folder not found: {missing}\n")


def test_default_folder_is_cdk_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run(["summary"], capsys) == (2, "", "error: folder not found: cdk.out\n")

    write_json(tmp_path / "cdk.out" / "Web.template.json", BUCKET_ONLY)
    assert run(["summary"], capsys) == (
        0,
        "no HyperPod clusters found in cdk.out (1 stack read)\n",
        "",
    )


def test_a_file_instead_of_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_json(tmp_path / "Web.template.json", BUCKET_ONLY)
    code, out, err = run(["summary", str(path)], capsys)
    assert (code, out) == (2, "")
    assert err.startswith(f"error: not a folder: {path}")


def test_empty_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["summary", str(tmp_path)], capsys) == (
        0,
        f"no HyperPod clusters found in {tmp_path} (0 stacks read)\n",
        "",
    )
    code, out, err = run(["summary", str(tmp_path), "--json"], capsys)
    assert (code, err) == (0, "")
    assert json.loads(out) == {
        "schema_version": 1,
        "directory": str(tmp_path),
        "stacks_read": 0,
        "clusters": [],
    }


def test_only_non_hyperpod_stacks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_json(tmp_path / "manifest.json", stack_manifest("Web", "Db"))
    write_json(tmp_path / "Web.template.json", BUCKET_ONLY)
    write_json(tmp_path / "Db.template.json", {"Resources": {}})
    assert run(["summary", str(tmp_path)], capsys) == (
        0,
        f"no HyperPod clusters found in {tmp_path} (2 stacks read)\n",
        "",
    )


def test_broken_template(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_json(tmp_path / "manifest.json", stack_manifest("Web", "Train"))
    write_json(tmp_path / "Web.template.json", BUCKET_ONLY)
    (tmp_path / "Train.template.json").write_text('{"Resources": {,}', encoding="utf-8")

    for argv in (["summary", str(tmp_path)], ["summary", str(tmp_path), "--json"]):
        code, out, err = run(argv, capsys)
        assert (code, out) == (2, "")
        assert err == (
            f"error: cannot read template {tmp_path / 'Train.template.json'}: not JSON: "
            "Expecting property name enclosed in double quotes at line 1 column 16\n"
        )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "not JSON: Expecting value at line 1 column 1"),
        ("[1, 2]", "not a CloudFormation template: the top level is a list, not an object"),
        ('{"Resources": "x"}', "not a CloudFormation template: Resources is a string"),
    ],
)
def test_unusable_templates_without_manifest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    (tmp_path / "Bad.template.json").write_text(content, encoding="utf-8")
    code, out, err = run(["summary", str(tmp_path)], capsys)
    assert (code, out) == (2, "")
    assert err.startswith(
        f"error: cannot read template {tmp_path / 'Bad.template.json'}: {message}"
    )
    assert len(err.splitlines()) == 1


def test_broken_manifest_and_missing_template(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "manifest.json").write_text("{oops", encoding="utf-8")
    code, _, err = run(["summary", str(tmp_path)], capsys)
    assert code == 2
    assert err.startswith(f"error: cannot read manifest {tmp_path / 'manifest.json'}: not JSON")

    write_json(tmp_path / "manifest.json", stack_manifest("Gone"))
    code, _, err = run(["summary", str(tmp_path)], capsys)
    assert (code, err) == (2, f"error: template not found: {tmp_path / 'Gone.template.json'}\n")


def test_stages_and_nested_stacks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Stacks inside a Stage live in a nested assembly; nested-stack templates sit beside."""
    cluster = {
        "Type": CLUSTER,
        "Properties": {
            "ClusterName": "staged",
            "InstanceGroups": [group("controller", "Controller")],
        },
    }
    write_json(
        tmp_path / "manifest.json",
        stack_manifest(
            "Top",
            extra={
                "assembly-Prod": {
                    "type": "cdk:cloud-assembly",
                    "properties": {"directoryName": "assembly-Prod", "displayName": "Prod"},
                }
            },
        ),
    )
    write_json(tmp_path / "Top.template.json", BUCKET_ONLY)
    stage = tmp_path / "assembly-Prod"
    write_json(
        stage / "manifest.json",
        {
            "version": "55.0.0",
            "artifacts": {
                "ProdTrain1234": {
                    "type": "aws:cloudformation:stack",
                    "properties": {
                        "templateFile": "ProdTrain1234.template.json",
                        "stackName": "Prod-Train",
                    },
                    "displayName": "Prod/Train",
                }
            },
        },
    )
    write_json(stage / "ProdTrain1234.template.json", {"Resources": {"C": cluster}})
    write_json(
        stage / "ProdTrainInnerABCD.nested.template.json",
        {"Resources": {"C": {**cluster, "Properties": {"ClusterName": "in-nested"}}}},
    )

    summary = summarize(tmp_path)

    assert summary.stacks_read == 3
    assert [(c.stack, c.template_file, c.cluster_name) for c in summary.clusters] == [
        ("Prod/Train", "assembly-Prod/ProdTrain1234.template.json", "staged"),
        (
            "ProdTrainInnerABCD",
            "assembly-Prod/ProdTrainInnerABCD.nested.template.json",
            "in-nested",
        ),
    ]
    code, out, _ = run(["summary", str(tmp_path)], capsys)
    assert code == 0
    assert "staged  (stack Prod/Train, resource C)" in out
    assert "in-nested  (stack ProdTrainInnerABCD, resource C)\n  (no instance groups)" in out


# --- the model: intrinsic functions, gate matching, robustness ------------------------------


@pytest.mark.parametrize(
    ("value", "rendered"),
    [
        ("ml.p5.48xlarge", "ml.p5.48xlarge"),
        (16, "16"),
        (None, "null"),
        (True, "true"),
        ({"Ref": "GpuCount"}, "<Ref GpuCount>"),
        ({"Fn::GetAtt": ["Role", "Arn"]}, "<GetAtt Role.Arn>"),
        ({"Fn::GetAtt": "Role.Arn"}, "<GetAtt Role.Arn>"),
        (
            {"Fn::Join": ["", ["s3://", {"Ref": "Bucket"}, "/lifecycle/"]]},
            "s3://<Ref Bucket>/lifecycle/",
        ),
        ({"Fn::Join": "oops"}, "<Join oops>"),
        ({"Fn::Sub": "${Env}-train"}, "${Env}-train"),
        ({"Fn::Sub": ["${Env}-train", {"Env": "x"}]}, "${Env}-train"),
        ({"Fn::Select": [0, {"Fn::GetAZs": ""}]}, "<Select 0 <GetAZs >>"),
        ({"Fn::If": ["IsProd", 16, 2]}, "<If IsProd 16 2>"),
        ({"Fn::ImportValue": "Shared-Count"}, "<ImportValue Shared-Count>"),
        ({"a": 1, "b": [1, "x"]}, "{a: 1, b: [1, x]}"),
        ([{"Ref": "A"}], "[<Ref A>]"),
    ],
)
def test_render_value(value: object, rendered: str) -> None:
    assert render_value(value) == rendered


def test_render_value_of_deep_nesting_is_bounded() -> None:
    value: object = "x"
    for _ in range(5000):
        value = {"Fn::Base64": value}
    assert render_value(value) == "<Base64 " * 8 + "<...>" + ">" * 8


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (12600, "3 h 30 min"),
        (60, "1 min"),
        (45, "45 s"),
        (3600, "1 h"),
        (3725, "1 h 2 min 5 s"),
        (0, "0 s"),
        ("<Ref Timeout>", "<Ref Timeout>"),
        (None, "-"),
    ],
)
def test_format_duration(seconds: int | str | None, text: str) -> None:
    assert format_duration(seconds) == text


def test_intrinsic_functions_are_rendered_not_crashed_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = {
        "Parameters": {"GpuCount": {"Type": "Number"}},
        "Resources": {
            "Cluster": {
                "Type": CLUSTER,
                "Properties": {
                    "ClusterName": {"Fn::Join": ["-", [{"Ref": "Env"}, "train"]]},
                    "InstanceGroups": [
                        group("controller", "Controller"),
                        group(
                            "gpu",
                            "Compute",
                            {"Ref": "GpuCount"},
                            MinInstanceCount={"Fn::If": ["IsProd", {"Ref": "GpuCount"}, 0]},
                            InstanceType={"Fn::FindInMap": ["Types", {"Ref": "Env"}, "gpu"]},
                        ),
                        "not a group",
                    ],
                },
            },
            "Gate": {
                "Type": GATE,
                "DependsOn": "Cluster",
                "Properties": {
                    "ClusterName": {"Fn::Join": ["-", [{"Ref": "Env"}, "train"]]},
                    "Requirements": [
                        {"GroupName": "gpu", "MinCount": {"Ref": "GpuCount"}, "TargetCount": "16"}
                    ],
                    "TimeoutSeconds": {"Ref": "GateTimeout"},
                    "PollIntervalSeconds": "30",
                    "TopicArn": {"Fn::ImportValue": "AlertsTopic"},
                },
            },
        },
    }
    write_json(tmp_path / "Train.template.json", template)

    code, out, err = run(["summary", str(tmp_path)], capsys)
    assert (code, err) == (0, "")
    lines = section(out, "<Ref Env>-train")
    assert row(lines, "gpu") == (
        "gpu | Compute | <FindInMap Types <Ref Env> gpu> | <Ref GpuCount> "
        "| <If IsProd <Ref GpuCount> 0> | gpu | min <Ref GpuCount> / target 16"
    )
    assert lines[-1] == (
        "  gate: waits for gpu; timeout <Ref GateTimeout>; poll every 30 s; "
        "notifications on (<ImportValue AlertsTopic>)"
    )

    code, out, _ = run(["summary", str(tmp_path), "--json"], capsys)
    cluster = json.loads(out)["clusters"][0]
    assert cluster["instance_groups"][1]["instance_count"] == "<Ref GpuCount>"
    assert cluster["gate"]["requirements"] == [
        {"group": "gpu", "min_count": "<Ref GpuCount>", "target_count": 16}
    ]
    assert cluster["gate"]["timeout_seconds"] == "<Ref GateTimeout>"
    assert cluster["gate"]["wait_condition_timeout_seconds"] is None


def test_gate_goes_to_the_cluster_it_names() -> None:
    """A construct dependency makes every child of cluster B depend on cluster A too: the
    ClusterName decides, DependsOn is only the last resort."""
    a = {
        "Type": CLUSTER,
        "Properties": {
            "ClusterName": "a",
            "InstanceGroups": [group("controller", "Controller"), group("gpu", "Compute", 4)],
        },
    }
    b = {
        "Type": CLUSTER,
        "Properties": {
            "ClusterName": "b",
            "InstanceGroups": [group("controller", "Controller"), group("gpu", "Compute", 8)],
        },
    }
    gate_b = {
        "Type": GATE,
        "DependsOn": ["A", "B"],
        "Properties": {
            "ClusterName": "b",
            "Requirements": [{"GroupName": "gpu", "MinCount": "8", "TargetCount": "8"}],
        },
    }
    by_ref = {"Type": GATE, "Properties": {"ClusterName": {"Ref": "A"}, "Requirements": []}}

    clusters = summarize_template(
        {"Resources": {"A": a, "B": b, "GateB": gate_b}}, stack="S", template_file="S.template.json"
    )
    assert [(c.cluster_name, c.gate and c.gate.logical_id) for c in clusters] == [
        ("a", None),
        ("b", "GateB"),
    ]
    assert clusters[1].instance_groups[1].gate is not None
    assert clusters[0].instance_groups[1].gate is None

    clusters = summarize_template(
        {"Resources": {"A": a, "G": by_ref}}, stack="S", template_file="S.template.json"
    )
    assert clusters[0].gate is not None and clusters[0].gate.requirements == ()
    text = render_text(AssemblySummary("d", 1, tuple(clusters)))
    assert "gate: waits for no group;" in text


def test_gate_requirement_for_an_unknown_group_is_shown() -> None:
    template = {
        "Resources": {
            "C": {
                "Type": CLUSTER,
                "Properties": {"ClusterName": "c", "InstanceGroups": [group("gpu", "Compute", 2)]},
            },
            "G": {
                "Type": GATE,
                "Properties": {
                    "ClusterName": "c",
                    "Requirements": [{"GroupName": "ghost", "MinCount": "1", "TargetCount": "1"}],
                },
            },
        }
    }
    clusters = summarize_template(template, stack="S", template_file="t")
    text = render_text(AssemblySummary("d", 1, tuple(clusters)))
    assert "gate: waits for ghost (min 1 / target 1, not a group of this cluster);" in text


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(["Ref", "Fn::Join", "Fn::GetAtt", "Fn::Sub", "x"]), children, max_size=2
        )
    ),
    max_leaves=6,
)
"""Any JSON value, biased towards intrinsic-function shapes."""


def _group(wild: bool) -> st.SearchStrategy[dict[str, object]]:
    name = st.sampled_from(["gpu", "cpu"]) | _json if wild else st.sampled_from(["gpu", "cpu"])
    return st.fixed_dictionaries(
        {"InstanceGroupName": name},
        optional={
            "InstanceType": _json,
            "InstanceCount": st.integers(0, 20) | _json,
            "MinInstanceCount": st.sampled_from([0, 4, "8"]) | _json,
            "SlurmConfig": st.fixed_dictionaries(
                {},
                optional={"NodeType": _json, "PartitionNames": st.lists(name, max_size=2) | _json},
            )
            | _json,
        },
    )


def _requirement(wild: bool) -> st.SearchStrategy[dict[str, object]]:
    name = st.sampled_from(["gpu", "cpu"]) | _json if wild else st.sampled_from(["gpu", "cpu"])
    return st.fixed_dictionaries(
        {"GroupName": name}, optional={"MinCount": _json, "TargetCount": _json}
    )


def _props(wild: bool) -> st.SearchStrategy[dict[str, object]]:
    """Properties of a cluster, gate or wait condition; ``wild`` puts any JSON anywhere."""

    def field(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return strategy | _json if wild else strategy

    return st.fixed_dictionaries(
        {
            "ClusterName": field(
                st.sampled_from(["a", "b", {"Ref": "A"}, {"Fn::GetAtt": ["B", "Arn"]}])
            ),
            "InstanceGroups": field(st.lists(field(_group(wild)), max_size=3)),
            "Requirements": field(st.lists(field(_requirement(wild)), max_size=2)),
            "WaitConditionLogicalId": field(st.sampled_from(["A", "B", "C"])),
            "WaitHandleLogicalId": field(st.just("H")),  # a gate from before SignalResource
            "Handle": field(st.just({"Ref": "H"})),
        },
        optional={"TimeoutSeconds": _json, "TopicArn": _json, "Timeout": _json},
    )


def _resource(wild: bool) -> st.SearchStrategy[dict[str, object]]:
    return st.fixed_dictionaries(
        {
            "Type": st.sampled_from([CLUSTER, GATE, "AWS::CloudFormation::WaitCondition", "X"]),
            "Properties": _props(wild) | _json if wild else _props(wild),
        },
        optional={
            "DependsOn": st.sampled_from(["A", ["A", "B"]]) | _json,
            "CreationPolicy": st.just({"ResourceSignal": {"Count": 1, "Timeout": "PT12H"}}) | _json,
        },
    )


_ids = st.sampled_from(["A", "B", "C"])
_template = st.one_of(
    st.dictionaries(_ids, _resource(False), max_size=3).map(lambda r: {"Resources": r}),
    st.dictionaries(_ids, _resource(True) | _json, max_size=3).map(lambda r: {"Resources": r}),
    _json,
)
"""Templates shaped like HyperPod ones with any JSON in any place, and any JSON at all."""


@settings(
    max_examples=75, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(_template)
def test_any_json_is_summarized_or_rejected_cleanly(template: object) -> None:
    try:
        clusters = summarize_template(template, stack="S", template_file="S.template.json")
    except TemplateError:
        return
    summary = AssemblySummary("d", 1, tuple(clusters))
    render_text(summary)
    json.loads(render_json(summary))


# -- hostile input: what a manifest names, and what a template holds ------------------------


def _manifest_naming(tmp_path: Path, template_file: str) -> None:
    manifest = stack_manifest()
    manifest["artifacts"]["Evil"] = {
        "type": "aws:cloudformation:stack",
        "properties": {"templateFile": template_file},
    }
    write_json(tmp_path / "manifest.json", manifest)


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        pytest.param(lambda d: "/dev/zero", "it is outside the assembly folder", id="dev-zero"),
        pytest.param(lambda d: "../outside.json", "it is outside the assembly folder", id="dotdot"),
        pytest.param(
            lambda d: (os.mkfifo(d / "fifo.template.json"), "fifo.template.json")[1],
            "not a regular file",
            id="fifo",
        ),
        pytest.param(
            lambda d: (os.symlink("loop.json", d / "loop.json"), "loop.json")[1],
            "",
            id="symlink-loop",
        ),
        pytest.param(
            lambda d: (os.symlink("/etc/hostname", d / "link.json"), "link.json")[1],
            "it is outside the assembly folder",
            id="symlink-outside",
        ),
        pytest.param(lambda d: (d / "sub").mkdir() or "sub", "not a regular file", id="folder"),
    ],
)
def test_only_regular_files_inside_the_assembly_are_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Any, reason: str
) -> None:
    assembly = tmp_path / "cdk.out"
    assembly.mkdir()
    (tmp_path / "outside.json").write_text("{}", encoding="utf-8")
    _manifest_naming(assembly, make(assembly))
    code, out, err = run(["summary", str(assembly)], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("error: cannot read template ") and reason in err, err
    assert len(err.splitlines()) == 1


def test_a_file_over_the_size_cap_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from hyperpod_constructs.tools._assembly import files

    monkeypatch.setattr(files, "MAX_FILE_BYTES", 1024)
    write_json(tmp_path / "Big.template.json", {"Resources": {}, "Pad": "x" * 2000})
    code, out, err = run(["summary", str(tmp_path)], capsys)
    assert (code, out) == (2, "")
    assert "larger than" in err and len(err.splitlines()) == 1


def test_a_5000_digit_number_is_an_error_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "Num.template.json").write_text(
        '{"Resources": {"C": {"Type": "AWS::SageMaker::Cluster", "Properties": '
        '{"InstanceGroups": [{"InstanceCount": ' + "9" * 5000 + "}]}}}}",
        encoding="utf-8",
    )
    code, out, err = run(["summary", str(tmp_path)], capsys)
    assert (code, out) == (2, "")
    assert "an integer of 5000 digits (at most 32 accepted) at line 1 column 109" in err
    assert len(err.splitlines()) == 1


def test_control_characters_in_names_are_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    forged = "gpu\nFAKE LINE\x1b[31m"
    template = {
        "Resources": {
            "C": {
                "Type": CLUSTER,
                "Properties": {
                    "ClusterName": "c\nforged",
                    "InstanceGroups": [group(forged, "Compute")],
                },
            }
        }
    }
    write_json(tmp_path / "Ctl.template.json", template)
    code, out, err = run(["summary", str(tmp_path)], capsys)
    assert (code, err) == (0, "")
    assert "\x1b" not in out
    assert not any(line.startswith("FAKE LINE") or line == "forged" for line in out.splitlines())
    assert "gpu\\nFAKE LINE\\x1b[31m" in out and "c\\nforged" in out
