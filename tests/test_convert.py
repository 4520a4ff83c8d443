"""``python -m hyperpod_constructs convert``: real-shaped CreateCluster requests
(tests/fixtures/convert, sources.md) round-trip to an equal ``AWS::SageMaker::Cluster``.

Each request is converted, the generated app is written to disk, imported and built, and the
cluster's synthesized properties must equal the request (the CreateCluster and CloudFormation
field names are the same; ``Tags`` compare as a set). The generated apps must be clean for
ruff and ``mypy --strict``, and their templates clean for cfn-lint.
"""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hyperpod_constructs.__main__ import main
from hyperpod_constructs.tools.convert import ConversionError, Options, convert_request
from tests.conftest import ROOT, new_app
from tests.template_utils import CLUSTER_TYPE, describe_matches, only, resources
from tests.test_lint import unaccepted

FIXTURES = ROOT / "tests" / "fixtures" / "convert"
REFUSED = {"eks-workshop"}
ROUND_TRIP = sorted(
    path.stem
    for path in FIXTURES.glob("*.json")
    if ".provisioning_parameters" not in path.name and path.stem not in REFUSED
)


def request_of(name: str) -> dict[str, Any]:
    return dict(json.loads((FIXTURES / f"{name}.json").read_text()))


def parameters_of(name: str) -> dict[str, Any] | None:
    path = FIXTURES / f"{name}.provisioning_parameters.json"
    return json.loads(path.read_text()) if path.exists() else None


def synth_app(path: Path) -> dict[str, Any]:
    """Import a generated app and build it in this process; its one stack's template."""
    namespace = runpy.run_path(str(path))
    app = new_app()
    stack = namespace["build"](app)
    return dict(app.synth().get_stack_by_name(stack.stack_name).template)


def converted_cluster(source: str, folder: Path) -> dict[str, Any]:
    """The ``AWS::SageMaker::Cluster`` of the app ``source``, written to ``folder`` and built."""
    path = folder / "app.py"
    path.write_text(source)
    _, cluster = only(synth_app(path), CLUSTER_TYPE)
    return dict(cluster)


def comparable(properties: dict[str, Any]) -> dict[str, Any]:
    """Tags are a set (CloudFormation renders them sorted by key)."""
    result = dict(properties)
    if "Tags" in result:
        result["Tags"] = sorted(result["Tags"], key=lambda tag: tag["Key"])
    return result


@pytest.fixture(scope="session")
def generated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Fixture name -> the app converted from it, written to one folder."""
    folder = tmp_path_factory.mktemp("converted")
    apps: dict[str, Path] = {}
    for name in ROUND_TRIP:
        source, _notes = convert_request(
            request_of(name), parameters_of(name), Options(source_name=f"{name}.json")
        )
        apps[name] = folder / f"{name.replace('-', '_')}.py"
        apps[name].write_text(source)
    return apps


@pytest.fixture(scope="session")
def templates(generated: dict[str, Path]) -> dict[str, dict[str, Any]]:
    return {name: synth_app(path) for name, path in generated.items()}


def test_at_least_eight_real_shaped_requests_round_trip() -> None:
    assert len(ROUND_TRIP) >= 8
    sources = (FIXTURES / "sources.md").read_text()
    for name in [*ROUND_TRIP, *REFUSED]:
        assert f"`{name}.json`" in sources, f"{name}.json does not name the config it mirrors"


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_synthesized_cluster_equals_the_request(
    name: str, templates: dict[str, dict[str, Any]]
) -> None:
    _, cluster = only(templates[name], CLUSTER_TYPE)
    assert comparable(cluster["Properties"]) == comparable(request_of(name))


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_existing_resources_are_imported_not_created(
    name: str, templates: dict[str, dict[str, Any]]
) -> None:
    """Roles, subnets, security groups and buckets come from the request (the readiness gate
    of a cluster with MinInstanceCount brings its own function roles)."""
    template = templates[name]
    kinds = ("AWS::IAM::Role", "AWS::IAM::Policy", "AWS::EC2::SecurityGroup", "AWS::S3::Bucket")
    for kind in kinds:
        created = [key for key in resources(template, kind) if "MinCountGate" not in key]
        assert created == [], f"{name} creates {kind} {created}"


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_converted_templates_are_cfn_lint_clean(
    name: str, templates: dict[str, dict[str, Any]]
) -> None:
    """cfn-lint's default rules; only the W3005 findings tests/test_lint.py accepts (CDK's
    own DependsOn on function roles of the readiness gate) are allowed."""
    matches = unaccepted(templates[name])
    assert not matches, describe_matches(matches)


def lint_generated(folder: Path, apps: list[Path]) -> list[subprocess.CompletedProcess[str]]:
    """ruff check (the project's rules), ruff format --check and mypy --strict on generated
    apps, run in their folder as in a user's project (hyperpod_constructs a third-party
    package); the failed runs."""
    ruff = [sys.executable, "-m", "ruff"]
    commands = [
        [*ruff, "check", "--isolated", "--line-length", "100", "--select", "E,F,W,I,UP,B,SIM,RUF"],
        [*ruff, "format", "--isolated", "--check", "--diff"],
    ]
    runs = [[*command, str(folder)] for command in commands]
    mypy = [sys.executable, "-m", "mypy", "--strict", "--python-version", "3.11"]
    runs.append([*mypy, "--cache-dir", str(ROOT / ".mypy_cache"), *map(str, apps)])
    results = [
        subprocess.run(
            command,
            capture_output=True,
            text=True,
            cwd=folder,
            # The editable install is an import hook mypy does not follow: point it at the source.
            env={**os.environ, "MYPYPATH": str(ROOT)},
        )
        for command in runs
    ]
    return [result for result in results if result.returncode != 0]


def test_generated_apps_are_ruff_and_mypy_strict_clean(generated: dict[str, Path]) -> None:
    apps = list(generated.values())
    failed = lint_generated(apps[0].parent, apps)
    assert not failed, "\n".join(r.stdout[-4000:] + r.stderr[-2000:] for r in failed)


# -- the command line ----------------------------------------------------------------------


def run_cli(*argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["convert", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_writes_the_app_and_prints_notes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "app.py"
    code, out, err = run_cli(
        str(FIXTURES / "adt-base-config.json"),
        "--provisioning-parameters",
        str(FIXTURES / "adt-base-config.provisioning_parameters.json"),
        "-o",
        str(output),
        "--stack-name",
        "Imported",
        capsys=capsys,
    )
    assert (code, out) == (0, "")
    assert err == (
        f"converted {str(FIXTURES / 'adt-base-config.json')!r}: cluster 'ml-cluster', "
        f"2 instance groups, app written to {str(output)!r}\n"
    )
    assert 'STACK_NAME = "Imported"' in output.read_text()


def test_cli_refuses_to_overwrite_without_force_and_replaces_atomically_with_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "app.py"
    output.write_text("# mine\n")
    request = str(FIXTURES / "docs-continuous-slurm.json")
    code, out, err = run_cli(request, "-o", str(output), capsys=capsys)
    assert (code, out, output.read_text()) == (2, "", "# mine\n")
    assert err == f"error: --output: {str(output)!r} exists: pass --force to replace it\n"
    code, _, _ = run_cli(request, "-o", str(output), "--force", capsys=capsys)
    assert code == 0 and "HyperPodSlurmCluster(" in output.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["app.py"]  # no temporary file left


def test_a_failed_conversion_leaves_the_output_as_it_was(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output, request = tmp_path / "app.py", tmp_path / "bad.json"
    output.write_text("# mine\n")
    request.write_text('{"ClusterName": "\\ud800", "InstanceGroups": []}')
    code, _, err = run_cli(str(request), "-o", str(output), "--force", capsys=capsys)
    assert (code, output.read_text()) == (2, "# mine\n")
    assert err.startswith("error: REQUEST_JSON: ") and "lone surrogate" in err


def test_legacy_layout_is_inferred_from_group_names_with_a_note(tmp_path: Path) -> None:
    """Without --provisioning-parameters, names such as controller-machine / compute-nodes
    give the layout; the template equals the request all the same."""
    name = "adt-terraform-slurm"
    source, notes = convert_request(request_of(name), None)
    assert notes == [
        "no --provisioning-parameters: assumed the layout of the group names (controller "
        "'controller-machine', login 'login-nodes', workers 'compute-nodes' in partition "
        "'compute-nodes'); the template is the same either way, pass the lifecycle scripts' "
        "provisioning_parameters.json if the partitions differ"
    ]
    cluster = converted_cluster(source, tmp_path)
    assert comparable(cluster["Properties"]) == comparable(request_of(name))


def test_legacy_layout_with_names_that_say_nothing_needs_the_parameters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    request = request_of("adt-base-config")
    for group, name in zip(request["InstanceGroups"], ("alpha", "beta"), strict=True):
        group["InstanceGroupName"] = name
    path = tmp_path / "request.json"
    path.write_text(json.dumps(request))
    code, out, err = run_cli(str(path), capsys=capsys)
    assert (code, out) == (2, "")
    assert err.startswith("error: InstanceGroups[].SlurmConfig: no group has one")


def test_a_login_group_that_names_no_group_gets_a_note() -> None:
    parameters = parameters_of("adt-base-config")
    assert parameters is not None
    parameters["login_group"] = "login-nodes"
    _, notes = convert_request(request_of("adt-base-config"), parameters)
    assert notes == [
        "provisioning_parameters.json.login_group 'login-nodes' names no instance group of the "
        "request (groups: 'controller-machine', 'compute-nodes')"
    ]


@pytest.mark.parametrize(
    ("argv", "field"),
    [
        ((str(FIXTURES / "eks-workshop.json"),), "Orchestrator.Eks"),
        ((str(FIXTURES / "missing.json"),), "REQUEST_JSON"),
        (
            (
                str(FIXTURES / "docs-deep-health-checks.json"),
                "--provisioning-parameters",
                str(FIXTURES / "adt-base-config.provisioning_parameters.json"),
            ),
            "InstanceGroups[0].InstanceGroupName",
        ),
    ],
    ids=["eks", "missing-file", "group-not-in-parameters"],
)
def test_cli_refuses_with_exit_code_2_naming_the_field(
    argv: tuple[str, ...], field: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(*argv, capsys=capsys)
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {field}: ")
    assert "Traceback" not in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda r: r["InstanceGroups"][1].update(KubernetesConfig={}), "KubernetesConfig"),
        (lambda r: r["InstanceGroups"][1].update(InstanceRequirements={}), "InstanceRequirements"),
        (lambda r: r["InstanceGroups"][1].update(Unknown=1), "InstanceGroups[1].Unknown"),
        (lambda r: r.update(TieredStorageConfig={"Mode": "Enable"}), "TieredStorageConfig"),
        (lambda r: r["InstanceGroups"][1]["SlurmConfig"].update(X=1), "SlurmConfig.X"),
        (lambda r: r["VpcConfig"].update(Extra=[]), "VpcConfig.Extra"),
        (lambda r: r["InstanceGroups"][1].pop("SlurmConfig"), "InstanceGroups[1].SlurmConfig"),
    ],
    ids=["eks-labels", "flexible", "unknown", "tiered", "slurm-extra", "vpc-extra", "mixed"],
)
def test_no_field_is_dropped_silently(change: Any, field: str) -> None:
    request = request_of("training-plan-override-vpc")
    change(request)
    with pytest.raises(ConversionError) as raised:
        convert_request(request)
    assert field in raised.value.field


def test_strategy_in_continuous_mode_is_refused() -> None:
    request = request_of("docs-continuous-slurm")
    request["Orchestrator"] = {"Slurm": {"SlurmConfigStrategy": "Managed"}}
    with pytest.raises(ConversionError) as raised:
        convert_request(request)
    assert raised.value.field == "Orchestrator.Slurm.SlurmConfigStrategy"


def test_minimum_in_standard_mode_is_refused() -> None:
    request = request_of("training-plan-override-vpc")
    request["InstanceGroups"][1]["MinInstanceCount"] = 1
    with pytest.raises(ConversionError, match="Continuous"):
        convert_request(request)


def test_continuous_option_gates_accelerator_groups(tmp_path: Path) -> None:
    """--continuous on a legacy request: SlurmConfig from provisioning_parameters.json,
    MinInstanceCount = InstanceCount on the GPU group, the readiness gate, and notes."""
    name = "docs-deep-health-checks"
    source, notes = convert_request(request_of(name), parameters_of(name), Options(continuous=True))
    path = tmp_path / "app.py"
    path.write_text(source)
    template = synth_app(path)
    _, cluster = only(template, CLUSTER_TYPE)
    groups = {g["InstanceGroupName"]: g for g in cluster["Properties"]["InstanceGroups"]}
    assert cluster["Properties"]["NodeProvisioningMode"] == "Continuous"
    assert groups["controller-group"]["SlurmConfig"] == {"NodeType": "Controller"}
    assert groups["worker-group"]["SlurmConfig"] == {
        "NodeType": "Compute",
        "PartitionNames": ["ml-p4d-24xlarge"],
    }
    assert groups["worker-group"]["MinInstanceCount"] == 4
    assert "MinInstanceCount" not in groups["controller-group"]
    assert resources(template, "AWS::CloudFormation::WaitCondition")
    assert any("renamed 'ml-p4d-24xlarge'" in note for note in notes)
    assert any("MinInstanceCount set to InstanceCount (4)" in note for note in notes)


def test_generated_app_runs_as_a_program(tmp_path: Path) -> None:
    """``python app.py`` writes the assembly (cdk.out) with the same cluster."""
    name = "cli-scheduled-update"
    source, _ = convert_request(request_of(name), parameters_of(name))
    (tmp_path / "app.py").write_text(source)
    result = subprocess.run(
        [sys.executable, "app.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "CDK_OUTDIR": str(tmp_path / "cdk.out")},
    )
    assert result.returncode == 0, result.stderr
    template = json.loads(
        (tmp_path / "cdk.out" / "patched-slurm-cluster.template.json").read_text()
    )
    _, cluster = only(template, CLUSTER_TYPE)
    assert comparable(cluster["Properties"]) == comparable(request_of(name))


def test_continuous_option_leaves_the_strategy_out_with_a_note() -> None:
    source, notes = convert_request(
        request_of("training-plan-override-vpc"), None, Options(continuous=True)
    )
    assert "slurm_config_strategy" not in source
    assert "declare_slurm_orchestrator=True" in source
    assert any(note.startswith("Orchestrator.Slurm.SlurmConfigStrategy left out") for note in notes)


def test_real_cdk_synth_strict_takes_the_generated_app(tmp_path: Path) -> None:
    """The pinned ``cdk`` CLI synthesizes a converted app with ``--strict`` (warnings fail
    it): the imports' warnings are acknowledged, nothing else warns, the output stays empty."""
    cdk = ROOT / "node_modules" / ".bin" / "cdk"
    if not cdk.exists():
        pytest.skip("the cdk CLI is not installed (run `make setup`)")
    name = "training-plan-override-vpc"
    source, _ = convert_request(request_of(name), parameters_of(name))
    (tmp_path / "app.py").write_text(source)
    context = json.loads((ROOT / "cdk.json").read_text())["context"]
    app = {"app": f"{sys.executable} app.py", "context": context}
    (tmp_path / "cdk.json").write_text(json.dumps(app))
    env = {**os.environ, "CDK_DISABLE_CLI_TELEMETRY": "true"}
    env["PATH"] = f"{cdk.parent}{os.pathsep}{env.get('PATH', '')}"
    for variable in ("CDK_OUTDIR", "CDK_CONTEXT_JSON", "PYTEST_CURRENT_TEST", "PYTEST_VERSION"):
        env.pop(variable, None)
    command = [str(cdk), "synth", "--strict", "--quiet", "--no-notices", "--no-version-reporting"]
    result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout + result.stderr == ""
    stack = request_of(name)["ClusterName"]  # the stack is named after the cluster
    template = json.loads((tmp_path / "cdk.out" / f"{stack}.template.json").read_text())
    _, cluster = only(template, CLUSTER_TYPE)
    assert comparable(cluster["Properties"]) == comparable(request_of(name))


# -- the Slurm layout AWS states ------------------------------------------------------


@pytest.mark.parametrize("name", ["docs-continuous-slurm", "training-plan-override-vpc"])
def test_a_compute_group_without_a_partition_round_trips(name: str, tmp_path: Path) -> None:
    """The API requires only NodeType: a Compute group without PartitionNames converts, in
    either mode, to an app whose cluster equals the request (no partition invented)."""
    request = request_of(name)
    compute = [g for g in request["InstanceGroups"] if g["SlurmConfig"]["NodeType"] == "Compute"]
    for group in compute:
        del group["SlurmConfig"]["PartitionNames"]
    source, _ = convert_request(request)
    assert "partition=" not in source
    cluster = converted_cluster(source, tmp_path)
    assert comparable(cluster["Properties"]) == comparable(request)


@pytest.mark.parametrize(
    ("node_type", "change", "problem"),
    [
        ("Controller", {"SlurmConfig": {"NodeType": "Controller"}}, "exactly one Controller group"),
        ("Login", {"SlurmConfig": {"NodeType": "Login"}}, "at most one Login group"),
        (
            "Controller",
            {"SlurmConfig": {"NodeType": "Controller", "PartitionNames": ["ctl"]}},
            "takes no partition",
        ),
    ],
)
def test_a_layout_the_reference_refuses_is_not_converted(
    node_type: str, change: dict[str, Any], problem: str
) -> None:
    """The same statement of the layout as validation's (hyperpod_constructs._core.layout)."""
    request = request_of("docs-continuous-slurm")
    first = next(g for g in request["InstanceGroups"] if g["SlurmConfig"]["NodeType"] == node_type)
    if "PartitionNames" in change["SlurmConfig"]:
        first.update(change)
    else:
        request["InstanceGroups"].append({**first, "InstanceGroupName": "second", **change})
    with pytest.raises(ConversionError, match=problem):
        convert_request(request)


def test_multi_head_is_not_converted_to_continuous() -> None:
    request = request_of("docs-continuous-slurm")
    controller = next(
        g for g in request["InstanceGroups"] if g["SlurmConfig"]["NodeType"] == "Controller"
    )
    controller["InstanceCount"] = 2
    with pytest.raises(ConversionError, match="multi-head"):
        convert_request(request)


def test_continuous_option_notes_every_lifecycle_folder_with_the_legacy_file() -> None:
    """--continuous on a legacy request: each lifecycle folder holds provisioning_parameters.json,
    which continuous provisioning is not compatible with: one note per folder says to delete
    it there (after a backup)."""
    name = "docs-deep-health-checks"
    request = request_of(name)
    request["InstanceGroups"][-1]["LifeCycleConfig"] = {
        **request["InstanceGroups"][-1]["LifeCycleConfig"],
        "SourceS3Uri": "s3://sagemaker-other-bucket/worker-scripts/",
    }
    folders = {g["LifeCycleConfig"]["SourceS3Uri"] for g in request["InstanceGroups"]}
    assert len(folders) == 2
    _, notes = convert_request(request, parameters_of(name), Options(continuous=True))
    for folder in folders:
        (note,) = [n for n in notes if f"lifecycle folder {folder!r}" in n]
        assert "holds the provisioning_parameters.json" in note and "delete it" in note, note
        assert "not compatible with continuous provisioning" in note, note


def test_continuous_option_refuses_a_multi_head_parameters_file() -> None:
    name = "docs-deep-health-checks"
    parameters = {**(parameters_of(name) or {}), "slurm_configurations": {}}
    with pytest.raises(ConversionError, match="multi-head"):
        convert_request(request_of(name), parameters, Options(continuous=True))


def _continuous_without_slurm_config() -> dict[str, Any]:
    """A legacy-layout request (no group SlurmConfig) sent in Continuous mode."""
    request = request_of("adt-terraform-slurm")
    request["NodeProvisioningMode"] = "Continuous"
    assert all("SlurmConfig" not in group for group in request["InstanceGroups"])
    return request


def test_a_continuous_request_without_slurm_config_needs_the_parameters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Continuous mode takes the layout from each group's SlurmConfig: without the file the
    converter cannot know it and refuses, rather than guess one from the group names."""
    path = tmp_path / "request.json"
    path.write_text(json.dumps(_continuous_without_slurm_config()))
    code, out, err = run_cli(str(path), capsys=capsys)
    assert (code, out) == (2, "")
    assert err.startswith("error: InstanceGroups[].SlurmConfig: NodeProvisioningMode 'Continuous'")
    assert "--provisioning-parameters" in err


def test_a_continuous_request_without_slurm_config_says_what_the_app_adds(
    tmp_path: Path,
) -> None:
    """With the file: a SlurmConfig on every group, each named in a note, and the notes of
    --continuous (the renamed partition, the file to delete); nothing else changes."""
    name = "adt-terraform-slurm"
    request = _continuous_without_slurm_config()
    source, notes = convert_request(request, parameters_of(name))
    added = (
        "NodeProvisioningMode 'Continuous' and no group has a SlurmConfig: continuous "
        "provisioning takes the Slurm layout from each group's SlurmConfig, not from "
        "provisioning_parameters.json, so the app adds one to every group, with the layout of "
        "the provisioning_parameters.json given: 'controller-machine' Controller, "
        "'login-nodes' Login, 'compute-nodes' Compute in partition 'ml.g5.8xlarge'; the "
        "template differs from the request by these SlurmConfig"
    )
    assert notes[0] == added
    assert any("partition 'ml.g5.8xlarge' renamed 'ml-g5-8xlarge'" in note for note in notes)
    assert any("delete it from that folder" in note for note in notes)
    assert not any("the same either way" in note for note in notes)
    cluster = converted_cluster(source, tmp_path)
    properties = cluster["Properties"]
    configs = {g["InstanceGroupName"]: g.pop("SlurmConfig") for g in properties["InstanceGroups"]}
    assert configs == {
        "controller-machine": {"NodeType": "Controller"},
        "login-nodes": {"NodeType": "Login"},
        "compute-nodes": {"NodeType": "Compute", "PartitionNames": ["ml-g5-8xlarge"]},
    }
    assert comparable(properties) == comparable(request)  # only the SlurmConfig were added


TERRAFORM_MODULE_PARAMETERS = {
    "version": "1.0.0",
    "workload_manager": "slurm",
    "controller_group": "controller-machine",
    "login_group": "login-nodes",
    "worker_groups": [
        {"instance_group_name": "compute-nodes", "partition_name": "dev"},
        {"instance_group_name": "login-nodes", "partition_name": "dev"},
    ],
}
"""provisioning_parameters.json as AWS's Terraform module for HyperPod writes it: every group
but the controller is a worker of partition ``dev``, the login group included."""


def test_a_login_group_listed_among_the_workers_converts_as_the_login_group(
    tmp_path: Path,
) -> None:
    name = "adt-terraform-slurm"
    source, notes = convert_request(request_of(name), TERRAFORM_MODULE_PARAMETERS)
    assert notes == [
        "provisioning_parameters.json.worker_groups[1]: 'login-nodes' is also the login_group: "
        "converted as the Login group, as the lifecycle scripts decide it (its partition 'dev' "
        "is left out: a Login group takes no partition, and its nodes are in dev)"
    ]
    assert "InstanceGroup.login(" in source and "InstanceGroup.compute(" in source
    cluster = converted_cluster(source, tmp_path)
    assert comparable(cluster["Properties"]) == comparable(request_of(name))
    continuous, _ = convert_request(
        request_of(name), TERRAFORM_MODULE_PARAMETERS, Options(continuous=True)
    )
    cluster = converted_cluster(continuous, tmp_path)
    groups = {g["InstanceGroupName"]: g for g in cluster["Properties"]["InstanceGroups"]}
    assert groups["login-nodes"]["SlurmConfig"] == {"NodeType": "Login"}
    assert groups["compute-nodes"]["SlurmConfig"] == {
        "NodeType": "Compute",
        "PartitionNames": ["dev"],
    }


@pytest.mark.parametrize("name", ["bad name!", "1cluster", "a" * 129, "stack_1"])
def test_a_stack_name_cloudformation_refuses_is_refused_before_the_app_is_written(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "app.py"
    request = str(FIXTURES / "cli-scheduled-update.json")
    code, out, err = run_cli(request, "-o", str(output), "--stack-name", name, capsys=capsys)
    assert (code, out, output.exists()) == (2, "", False)
    assert err.startswith("error: options.stack_name (--stack-name): ") and repr(name) in err
