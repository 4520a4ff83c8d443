"""``report_validation_errors``: every kind of validation failure becomes a short report.

In-process and fast; tests/test_cdk_cli.py checks the same through the real ``cdk synth``.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import jsii
import pytest
from aws_cdk import (
    Annotations,
    App,
    Aspects,
    IAspect,
    IPolicyValidationContext,
    IPolicyValidationPlugin,
    PolicyValidationPluginReport,
    PolicyViolatingResource,
    PolicyViolation,
    Stack,
    Validations,
)
from aws_cdk import aws_ssm as ssm
from constructs import IConstruct

from hyperpod_constructs import (
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    HyperPodValidationError,
    InstanceGroup,
    NodeProvisioningMode,
    report_validation_errors,
)
from hyperpod_constructs.reporting import ValidationFailure, classify, validation_messages
from tests.support.groups import Groups

CPU = HyperPodInstanceType.ML_C5_4XLARGE


GROUPS = Groups(
    controller_type=HyperPodInstanceType.ML_M5_2XLARGE,
    compute_type=CPU,
    instance_count=2,
    partition="cpu",
    deep_health_checks=(),
)
controller, compute = GROUPS.controller, GROUPS.compute


def reported(run: Any) -> tuple[str, int | str | None]:
    """Run ``run()`` inside ``report_validation_errors``; return (report, exit code)."""
    stream = io.StringIO()
    with pytest.raises(SystemExit) as exit_info, report_validation_errors(stream):
        run()
    return stream.getvalue(), exit_info.value.code


def problem_lines(report: str) -> list[str]:
    return [line.strip() for line in report.splitlines() if line.startswith("  ")]


def templates(outdir: Path) -> list[Path]:
    return sorted(outdir.rglob("*.template.json"))


def test_eager_error_one_line_per_problem(tmp_path: Path) -> None:
    def build() -> None:
        app = App(outdir=str(tmp_path))
        stack = Stack(app, "Bad")
        HyperPodSlurmCluster(
            stack,
            "Cluster",
            instance_groups=[controller(), compute("gpu_1", min_instance_count=3)],
        )
        app.synth()

    report, code = reported(build)

    assert code == 1
    lines = report.splitlines()
    assert lines[0] == "HyperPod validation failed (2 errors); no template was written:"
    problems = problem_lines(report)
    assert len(problems) == 2
    assert all(line.startswith("[Bad/Cluster] instance group 'gpu_1': ") for line in problems)
    assert problems[0].endswith("[HP-NAME-GROUP]")
    assert problems[1].endswith("[HP-MIN-ABOVE-COUNT]")
    assert "Traceback" not in report
    assert templates(tmp_path) == []


def test_cross_group_errors_at_synth_each_once(tmp_path: Path) -> None:
    def build() -> None:
        app = App(outdir=str(tmp_path))
        stack = Stack(app, "Bad")
        HyperPodSlurmCluster(
            stack,
            "Cluster",
            instance_groups=[compute("a"), compute("a")],
        )
        app.synth()

    report, code = reported(build)

    assert code == 1
    header = "HyperPod validation failed (2 errors); no template was written:"
    assert report.splitlines()[0] == header
    problems = problem_lines(report)
    assert [line.rsplit(" ", 1)[1] for line in problems] == [
        "[HP-CONTROLLER-REQUIRED]",
        "[HP-GROUP-UNIQUE]",
    ]
    assert all(line.startswith("[Bad/Cluster] ") for line in problems)
    assert "at Kernel" not in report
    assert "Traceback" not in report
    assert templates(tmp_path) == []


@jsii.implements(IPolicyValidationPlugin)
class _RejectParameters:
    """A policy validation plugin (like cdk-nag's) that rejects the ``Marker`` parameter."""

    @property
    def name(self) -> str:
        return "RejectParameters"

    @property
    def rule_ids(self) -> list[str] | None:
        return None

    @property
    def version(self) -> str | None:
        return None

    def validate(self, context: IPolicyValidationContext) -> PolicyValidationPluginReport:
        return PolicyValidationPluginReport(
            success=False,
            violations=[
                PolicyViolation(
                    rule_name="no-parameters",
                    description="parameters are not allowed",
                    violating_resources=[
                        PolicyViolatingResource(
                            resource_logical_id="Marker",
                            template_path=path,
                            locations=["Properties"],
                        )
                        for path in context.template_paths
                    ],
                )
            ],
        )


def test_policy_plugin_failure_report_once(tmp_path: Path) -> None:
    """In aws-cdk-lib's "inmemory" app mode the error carries the report: print it once.

    (Run as a plain process, aws-cdk-lib prints the report itself and raises a one-line
    error; under ``cdk synth`` it does not raise at all and the CLI prints the report.)
    """

    def build() -> None:
        app = App(outdir=str(tmp_path), context={"@aws-cdk/core:appMode": "inmemory"})
        Validations.of(app).add_plugins(_RejectParameters())
        stack = Stack(app, "Checked")
        ssm.CfnParameter(stack, "Marker", type="String", value="x").override_logical_id("Marker")
        app.synth()

    report, code = reported(build)

    assert code == 1
    lines = report.splitlines()
    assert lines[0] == "Policy validation failed:"
    assert report.count("parameters are not allowed") == 1
    assert "Acknowledge with 'RejectParameters::no-parameters'" in report
    # aws-cdk-lib prints the path relative to the working directory when that is shorter.
    prefix, suffix = "A copy of this report is in ", "."
    assert lines[-1].startswith(prefix)
    assert lines[-1].endswith(suffix)
    printed = Path(lines[-1].removeprefix(prefix).removesuffix(suffix))
    assert (Path.cwd() / printed).resolve() == (tmp_path / "validation-report.json").resolve()
    assert "Traceback" not in report


def test_an_invalid_group_added_by_an_aspect_is_reported_like_the_others(tmp_path: Path) -> None:
    """An aspect adds an invalid group during synth: nothing raises inside the jsii callback;
    the cluster's node validation (after every aspect) reports it, from the recorded
    finding, and no template is written."""

    @jsii.implements(IAspect)
    class AddInvalidGroup:
        def __init__(self, cluster: HyperPodSlurmCluster) -> None:
            self.cluster = cluster

        def visit(self, node: IConstruct) -> None:
            if node is self.cluster:
                self.cluster.add_instance_group(compute("bad_name"))

    def build() -> None:
        app = App(outdir=str(tmp_path))
        stack = Stack(app, "Bad")
        cluster = HyperPodSlurmCluster(
            stack, "Cluster", instance_groups=[controller(), compute("a")]
        )
        Aspects.of(stack).add(AddInvalidGroup(cluster))
        app.synth()

    report, code = reported(build)

    assert code == 1
    assert report.splitlines()[0] == (
        "HyperPod validation failed (1 error); no template was written:"
    )
    (problem,) = problem_lines(report)
    assert problem.startswith("[Bad/Cluster] instance group 'bad_name': ")
    assert problem.endswith("[HP-NAME-GROUP]")
    assert list(tmp_path.glob("*.template.json")) == []


def test_other_errors_propagate_unchanged() -> None:
    stream = io.StringIO()
    with (
        pytest.raises(ValueError, match="not a validation failure"),
        report_validation_errors(stream),
    ):
        raise ValueError("not a validation failure")
    with pytest.raises(RuntimeError, match="boom"), report_validation_errors(stream):
        raise RuntimeError("boom")
    assert stream.getvalue() == ""


def test_default_stream_is_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    error = HyperPodValidationError("App/Cluster", [])
    with pytest.raises(SystemExit), report_validation_errors():
        raise error
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "Validation failed (0 errors); no template was written:\n"


def test_classify_construct_errors_drops_stack_and_duplicates() -> None:
    error = RuntimeError(
        "ValidationFailedWithErrors: Validation failed with the following errors:\n"
        "  [S/C] first [HP-A]\n"
        "  [S/C] first [HP-A]\n"
        "  [S/D] second\n"
        "      at Kernel._Kernel_ensureSync (/tmp/x/lib/program.js:1:72922)\n"
        "  [S/E] after the stack\n"
    )
    failure = classify(error)
    assert failure == ValidationFailure("construct", ("[S/C] first [HP-A]", "[S/D] second"))
    assert failure.lines()[0] == "Validation failed (2 errors); no template was written:"
    assert validation_messages(error) == ["[S/C] first [HP-A]", "[S/D] second"]


def test_classify_plugin_failure() -> None:
    error = RuntimeError(
        "ValidationFailed: Validation failed. A copy of this report can be found in: "
        "/tmp/out/validation-report.json"
    )
    failure = classify(error)
    assert failure == ValidationFailure("plugin", (), "/tmp/out/validation-report.json")
    assert failure.lines() == [
        "Policy validation failed: see the report above; "
        "a copy is in /tmp/out/validation-report.json."
    ]
    assert validation_messages(error) is None


@pytest.mark.parametrize(
    "error",
    [
        # A user's own error around a validation failure is theirs: never reformatted.
        RuntimeError(
            "team-x deploy failed, OPS-123: ValidationFailedWithErrors: Validation failed with "
            "the following errors:\n  [S/C] first [HP-A]"
        ),
        RuntimeError(
            "team-x: ValidationFailed: Validation failed. A copy of this report can be found "
            "in: /tmp/out/validation-report.json"
        ),
        RuntimeError("Something else: [S/C] looks like a finding but no rule id"),
        RuntimeError(""),
        ValueError("Validation failed with the following errors:\n  [S/C] x"),
        KeyError("x"),
    ],
)
def test_classify_leaves_other_errors_alone(error: BaseException) -> None:
    assert classify(error) is None
    assert validation_messages(error) is None


def test_sizing_errors_and_wrong_scopes_are_reported_without_a_traceback() -> None:
    """Errors raised where the library cannot go on go through the same short report."""
    from hyperpod_constructs.sizing import fsdp_world_size
    from hyperpod_constructs.validation import HyperPodArgumentError

    report, code = reported(lambda: fsdp_world_size(0))
    assert code == 1
    assert report.splitlines()[0] == (
        "HyperPod validation failed (1 error); no template was written:"
    )
    assert "data_parallel=0" in report

    def wrong_scope() -> None:
        HyperPodSlurmCluster("not a scope", "Cluster")  # type: ignore[arg-type]

    report, code = reported(wrong_scope)
    assert code == 1
    (problem,) = problem_lines(report)
    assert problem.startswith("[HyperPodSlurmCluster] scope = 'not a scope' is not allowed")
    assert "(got str)" in problem and problem.endswith("[HP-ARG-TYPE]")
    with pytest.raises(HyperPodArgumentError):
        wrong_scope()


def test_warnings_follow_the_errors_once_and_acknowledged_ones_stay_out(tmp_path: Path) -> None:
    """A failing synth writes no template, so no one else would print the warnings: the
    report lists them after the errors, except those the app acknowledged."""
    gpu = HyperPodInstanceType.ML_P5_48XLARGE

    def build() -> None:
        app = App(outdir=str(tmp_path))
        stack = Stack(app, "Bad")
        cluster = HyperPodSlurmCluster(
            stack,
            "Cluster",
            instance_groups=[
                controller(),
                InstanceGroup.compute("gpu", instance_type=gpu, instance_count=1, partition="g"),
                InstanceGroup.compute(
                    "typo",
                    instance_type=HyperPodInstanceType.of("ml.c5.4xlarg"),
                    instance_count=1,
                    partition="c",
                ),
                compute("bad", threads_per_core=3),
            ],
        )
        Annotations.of(cluster).acknowledge_warning("hyperpod:HP-WARN-DHC", "CPU-only test")
        app.synth()

    report, code = reported(build)

    assert code == 1
    assert report.splitlines()[0] == (
        "HyperPod validation failed (1 error, 1 warning); no template was written:"
    )
    threads, typo = problem_lines(report)
    assert threads.startswith("[Bad/Cluster] instance group 'bad': threads_per_core")
    assert typo.startswith("[Bad/Cluster] instance group 'typo': instance_type")
    assert typo.endswith("[HP-WARN-INSTANCE-TYPE]")
    assert "HP-WARN-DHC" not in report


def test_one_value_breaking_two_rules_is_one_line_naming_both(tmp_path: Path) -> None:
    def build() -> None:
        app = App(outdir=str(tmp_path))
        HyperPodSlurmCluster(
            Stack(app, "Bad"),
            "Cluster",
            node_provisioning_mode=NodeProvisioningMode.STANDARD,
            instance_groups=[controller(), compute("a", min_instance_count=3)],
        )
        app.synth()

    report, _ = reported(build)

    assert report.splitlines()[0] == (
        "HyperPod validation failed (1 error); no template was written:"
    )
    (line,) = problem_lines(report)
    assert line.startswith(
        "[Bad/Cluster] instance group 'a': min_instance_count (MinInstanceCount) = 3 is not "
        "allowed; allowed: 0..instance_count (2); and 0 or omitted with "
        "node_provisioning_mode=STANDARD"
    )
    assert "Fix: lower min_instance_count to at most 2" in line
    assert "; and use node_provisioning_mode=NodeProvisioningMode.CONTINUOUS" in line
    assert line.endswith("[HP-MIN-ABOVE-COUNT] [HP-MIN-NEEDS-CONTINUOUS]")


def test_a_policy_error_is_in_the_report_of_a_failing_synth(tmp_path: Path) -> None:
    """A policy's error is an annotation, which a failing synth would never show."""
    from hyperpod_constructs.policy import HyperPodPolicy

    def build() -> None:
        app = App(outdir=str(tmp_path))
        stack = Stack(app, "Bad")
        HyperPodSlurmCluster(
            stack, "Cluster", instance_groups=[controller(), compute("a", threads_per_core=3)]
        )
        Aspects.of(app).add(HyperPodPolicy(name="acme", require_vpc=True))
        app.synth()

    report, _ = reported(build)

    threads, policy = problem_lines(report)
    assert threads.endswith("[HP-THREADS]")
    assert policy.startswith("[Bad/Cluster] [HPP-VPC] acme: ")


# -- Stages: aws-cdk-lib synthesizes each on its own and stops at the first that fails -------


def test_a_failing_stage_is_reported_exactly(tmp_path: Path) -> None:
    """Dev is written before Prod fails; Qa and the App's own stack are never checked by
    aws-cdk-lib. The report names the failing Stage, the templates already written, the
    Stages not checked, and the library's own errors in those (one report where it can)."""
    from aws_cdk import Stage

    def cluster(scope: Stage | App, minimum: int) -> None:
        HyperPodSlurmCluster(
            Stack(scope, "Training"),
            "Cluster",
            instance_groups=[controller(), compute("gpu", min_instance_count=minimum)],
        )

    def build() -> None:
        app = App(outdir=str(tmp_path))
        cluster(Stage(app, "Dev"), 2)
        cluster(Stage(app, "Prod"), 3)
        cluster(Stage(app, "Qa"), 4)
        cluster(app, 5)
        app.synth()

    report, code = reported(build)

    assert code == 1
    lines = report.splitlines()
    assert (
        lines[0]
        == "HyperPod validation failed (1 error) in Stage Prod; its templates were not written:"
    )
    assert "no template was written" not in report
    written = [str(path.relative_to(tmp_path)) for path in templates(tmp_path)]
    assert written and all(path.startswith("assembly-Dev/") for path in written)
    assert f"stops at the first that fails): {', '.join(written)}" in report
    assert (
        "Not checked yet (fix the errors above and synthesize again): "
        "the App's own stacks, Stage Qa" in report
    )
    also = lines[lines.index(next(line for line in lines if line.startswith("Also wrong"))) + 1 :]
    assert [line.split("]")[0] for line in also] == [
        "  [Qa/Training/Cluster",
        "  [Training/Cluster",
    ]
    assert all("min_instance_count (MinInstanceCount)" in line for line in also)


def test_a_single_stack_app_keeps_the_short_header(tmp_path: Path) -> None:
    def build() -> None:
        app = App(outdir=str(tmp_path))
        HyperPodSlurmCluster(
            Stack(app, "Training"),
            "Cluster",
            instance_groups=[controller(), compute("gpu", min_instance_count=3)],
        )
        app.synth()

    report, _ = reported(build)
    assert (
        report.splitlines()[0] == "HyperPod validation failed (1 error); no template was written:"
    )
    assert len(report.splitlines()) == 2


# -- every app shape: one report, whatever raised it -----------------------------------------


def _pipeline(app: App) -> Any:
    """A CDK Pipelines pipeline (real aws_cdk.pipelines) in its own stack, across accounts."""
    from aws_cdk import pipelines

    env = {"account": "111111111111", "region": "us-east-1"}
    source = pipelines.CodePipelineSource.connection(
        "org/training",
        "main",
        connection_arn="arn:aws:codeconnections:us-east-1:111111111111:connection/0123abcd",
    )
    return pipelines.CodePipeline(
        Stack(app, "Delivery", env=env),
        "Pipeline",
        cross_account_keys=True,
        synth=pipelines.ShellStep("Synth", input=source, commands=["npx cdk synth"]),
    )


SHAPES = ["app", "stage", "nested-stage", "pipeline-add-stage", "pipeline-add-wave", "late"]


def _shape_main(shape: str, outdir: Path, steps: list[str]) -> Any:
    """An app's ``main()`` in ``shape``: a cluster with a minimum above its count and no VPC
    under an App-level policy requiring one; ``steps`` records how far it got."""
    from aws_cdk import Stage

    from hyperpod_constructs.policy import HyperPodPolicy

    def main() -> None:
        app = App(outdir=str(outdir))
        policy = HyperPodPolicy(name="acme", require_vpc=True)
        if shape != "late":
            Aspects.of(app).add(policy)
        env = {"account": "222222222222", "region": "us-east-1"}
        scope: App | Stage = app
        minimum = 2 if shape == "late" else 3  # late: only the policy's error
        if shape == "nested-stage":
            scope = Stage(Stage(app, "Org"), "Prod")
        elif shape != "app":
            scope = Stage(app, "Prod", env=env)
        HyperPodSlurmCluster(
            Stack(scope, "Training"),
            "Cluster",
            instance_groups=[controller(), compute("gpu", min_instance_count=minimum)],
        )
        if shape in ("pipeline-add-stage", "late"):
            _pipeline(app).add_stage(scope)
        elif shape == "pipeline-add-wave":
            _pipeline(app).add_wave("Wave").add_stage(scope)
        steps.append("constructed")
        if shape == "late":
            Aspects.of(app).add(policy)
        app.synth()
        steps.append("synthesized")

    return main


@pytest.mark.parametrize("shape", SHAPES)
def test_one_report_in_every_app_shape(shape: str, tmp_path: Path) -> None:
    """The decorator on ``main()`` (the documented way) reports what ``app.synth()`` raises and
    what ``CodePipeline.add_stage`` / ``add_wave`` raise while the app is constructed: one line
    per mistake, its rule id, the cluster's path once."""
    stream = io.StringIO()
    steps: list[str] = []
    main = report_validation_errors(stream)(_shape_main(shape, tmp_path, steps))

    with pytest.raises(SystemExit) as exit_info:
        main()

    report = stream.getvalue()
    assert exit_info.value.code == 1
    # CDK Pipelines synthesizes the Stage in add_stage: the error comes before app.synth().
    assert steps == ([] if shape.startswith("pipeline-") else ["constructed"])
    assert "Traceback" not in report
    assert "at Kernel" not in report
    path = {"app": "Training/Cluster", "nested-stage": "Org/Prod/Training/Cluster"}.get(
        shape, "Prod/Training/Cluster"
    )
    problems = problem_lines(report)
    if shape == "late":  # the policy came after the Stage was synthesized: only its error
        assert [line.split("] ")[1] for line in problems] == ["[HPP-VPC"], report
        # The Stage's templates were written: the App's synth failed, not the Stage's.
        assert report.startswith("Validation failed (1 error) in the App's own stacks;")
        assert "assembly-Prod/" in report.splitlines()[2]
    else:
        rules = sorted(re.findall(r"\[(HPP?-[A-Z-]+)\]", "\n".join(problems)))
        assert rules == ["HP-MIN-ABOVE-COUNT", "HPP-VPC"], report
    for line in problems:
        assert line.startswith(f"[{path}] ")
        assert line.count(path) == 1, line
        assert len(re.findall(r"\[HPP?-[A-Z-]+\]", line)) == 1, line
