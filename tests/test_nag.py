"""cdk-nag on the example app, with every pack an organisation may run (AwsSolutions, HIPAA
Security, NIST 800-53 R4 and R5, PCI DSS 3.2.1, Serverless): no unacknowledged finding, and
every finding the library acknowledges is acknowledged with a reason and actually occurs."""

from __future__ import annotations

import importlib.util
import json
import re
import tarfile
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Acknowledgment, Stack, Validations
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_s3 as s3
from aws_cdk.cx_api import CloudAssembly, SynthesisMessageLevel
from cdk_nag import AwsSolutionsChecks
from constructs import IConstruct

from examples.app import build
from hyperpod_constructs import (
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    LifecycleScripts,
    MinCountGateOptions,
)
from hyperpod_constructs._cdk.nag import COMPLIANCE_PACKS, RULE_PACKS
from tests.conftest import ROOT, new_app

PLUGIN = "AwsSolutions"
ACK_PREFIX = "AwsSolutions::"
ACK_KEY = Validations.ACKNOWLEDGED_RULES_METADATA_KEY


def validation_report(directory: str | Path) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((Path(directory) / "validation-report.json").read_text())
    return report


def plugin_report(report: dict[str, Any]) -> dict[str, Any]:
    (found,) = (p for p in report["pluginReports"] if p["pluginName"] == PLUGIN)
    return dict(found)


def assembly_acknowledgments(assembly: CloudAssembly) -> dict[tuple[str, str], str]:
    """(construct path, acknowledged id) -> reason, for every AwsSolutions acknowledgment
    recorded in the synthesized construct tree (the stacks' metadata in the assembly)."""
    directory = Path(assembly.directory)
    manifest = json.loads((directory / "manifest.json").read_text())
    found: dict[tuple[str, str], str] = {}
    for artifact in manifest["artifacts"].values():
        if artifact["type"] != "aws:cloudformation:stack":
            continue
        metadata = dict(artifact.get("metadata", {}))
        if "additionalMetadataFile" in artifact:
            metadata.update(
                json.loads((directory / artifact["additionalMetadataFile"]).read_text())
            )
        for path, entries in metadata.items():
            for entry in entries:
                if entry["type"] != ACK_KEY:
                    continue
                for rule, reason in entry["data"].items():
                    if rule.startswith(ACK_PREFIX):
                        found[(path.lstrip("/"), rule)] = reason
    return found


def tree_acknowledgments(root: IConstruct) -> dict[tuple[str, str], str]:
    """The same, read from a live construct tree."""
    found: dict[tuple[str, str], str] = {}
    for construct in root.node.find_all():
        for entry in construct.node.metadata:
            if entry.type == ACK_KEY:
                for rule, reason in entry.data.items():
                    if rule.startswith(ACK_PREFIX):
                        found[(construct.node.path, rule)] = reason
    return found


def test_example_app_has_no_unacknowledged_findings(example_assembly: CloudAssembly) -> None:
    report = plugin_report(validation_report(example_assembly.directory))
    assert report["violations"] == [], json.dumps(report["violations"], indent=1)[:4000]
    assert report["conclusion"] == "success"


def test_example_app_has_no_error_annotations(example_assembly: CloudAssembly) -> None:
    errors = [
        (stack.stack_name, message.id, message.entry.data)
        for stack in example_assembly.stacks
        for message in stack.messages
        if message.level == SynthesisMessageLevel.ERROR
    ]
    assert errors == []


def test_every_acknowledgment_has_a_reason_and_is_used(example_assembly: CloudAssembly) -> None:
    acknowledged = assembly_acknowledgments(example_assembly)
    assert acknowledged, "the examples need acknowledgments (the default role's managed policy)"
    for (path, rule), reason in acknowledged.items():
        assert isinstance(reason, str) and len(reason.split()) >= 5, (path, rule, reason)
    report = plugin_report(validation_report(example_assembly.directory))
    used = {(s["acknowledgedAt"], s["acknowledgedId"]) for s in report["suppressedViolations"]}
    assert set(acknowledged) - used == set(), "acknowledgments that suppress nothing"
    for suppressed in report["suppressedViolations"]:
        assert suppressed["reason"].strip(), suppressed["acknowledgedId"]


def test_acknowledgments_name_exact_findings(example_assembly: CloudAssembly) -> None:
    """Wildcard findings (IAM5) are acknowledged per resource or action, never wholesale."""
    for _, rule in assembly_acknowledgments(example_assembly):
        finding = rule.removeprefix(ACK_PREFIX)
        if finding.startswith(("AwsSolutions-IAM4", "AwsSolutions-IAM5")):
            assert finding.endswith("]") and "[" in finding, rule


@pytest.fixture(scope="module")
def control(tmp_path_factory: pytest.TempPathFactory) -> tuple[Stack, Path, Exception | None]:
    """A cluster outside the examples (VPC, lifecycle, gate with topic) next to a bare bucket
    and a VPC without flow logs, which cdk-nag must flag."""
    outdir = tmp_path_factory.mktemp("nag-control")
    app = new_app(outdir=str(outdir))
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    stack = Stack(app, "Control")
    s3.Bucket(stack, "Bare")
    HyperPodSlurmCluster(
        stack,
        "Cluster",
        vpc=ec2.Vpc(stack, "Vpc", max_azs=1),
        lifecycle_scripts=LifecycleScripts.from_directory(str(ROOT / "examples" / "lifecycle")),
        readiness_gate=MinCountGateOptions(create_notification_topic=True),
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=HyperPodInstanceType.ML_M5_XLARGE),
            InstanceGroup.compute(
                "gpu",
                instance_type=HyperPodInstanceType.ML_C5_4XLARGE,
                instance_count=2,
                min_instance_count=1,
                partition="gpu",
            ),
        ],
    )
    error: Exception | None = None
    try:
        app.synth()
    except Exception as raised:
        error = raised
    return stack, outdir, error


def test_cdk_nag_fails_synthesis_on_findings(
    control: tuple[Stack, Path, Exception | None],
) -> None:
    """Control: the plugin does run and does fail, so a clean example app means something."""
    _, outdir, error = control
    assert error is not None and "ValidationFailed" in str(error)
    report = plugin_report(validation_report(outdir))
    assert report["conclusion"] == "failure"
    flagged = {
        (v["ruleName"], c["constructPath"])
        for v in report["violations"]
        for c in v["violatingConstructs"]
    }
    assert ("AwsSolutions-S10", "Control/Bare/Resource") in flagged
    assert ("AwsSolutions-VPC7", "Control/Vpc/Resource") in flagged
    # ...while nothing the cluster construct creates is flagged.
    assert not [f for f in flagged if f[1].startswith("Control/Cluster/")], flagged


def test_library_acknowledgments_in_the_construct_tree_have_reasons(
    control: tuple[Stack, Path, Exception | None],
) -> None:
    stack, _, _ = control
    acknowledged = tree_acknowledgments(stack)
    paths = {path for path, _ in acknowledged}
    for expected in (
        "Control/Cluster/ExecutionRole",
        "Control/Cluster/VpcAccess",
        "Control/Cluster/LifecycleScripts/Bucket",
        "Control/Cluster/MinCountGate/PollLoop/Role",
        "Control/Cluster/MinCountGate/CheckFunctionRole",
    ):
        assert expected in paths, expected
    for (path, rule), reason in acknowledged.items():
        assert isinstance(reason, str) and len(reason.split()) >= 5, (path, rule, reason)


# -- the compliance packs: HIPAA Security, NIST 800-53 R4 and R5, PCI DSS 3.2.1, Serverless --

COMPLIANCE_PLUGINS = set(COMPLIANCE_PACKS)
GATE = "/Cluster/MinCountGate/"
"""The readiness gate's resources (it acknowledges its findings with reasons)."""
GATE_ACKNOWLEDGED = {
    "LambdaDLQ",
    "LambdaConcurrency",
    "LambdaInsideVPC",
    "LambdaTracing",
    "CloudWatchLogGroupEncrypted",
    "EventBusDLQ",
    "IAMNoInlinePolicy",
}
EXAMPLE_VPC_RULES = (
    "VPCSubnetAutoAssignPublicIpDisabled",
    "VPCNoUnrestrictedRouteToIGW",
    "IAMNoInlinePolicy",
    "CloudWatchLogGroupEncrypted",
)
"""What the packs find on the examples' own VPC (not the library's)."""


def pack_rules() -> dict[str, set[str]]:
    """Pack name -> the names of the rules it applies, read from cdk-nag's own pack sources
    (``lib/packs/*.js`` in the installed cdk-nag package)."""
    spec = importlib.util.find_spec("cdk_nag")
    assert spec is not None and spec.origin is not None
    (archive,) = (Path(spec.origin).parent / "_jsii").glob("cdk-nag@*.jsii.tgz")
    found: dict[str, set[str]] = {}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if not re.fullmatch(r"package/lib/packs/[a-z0-9-]+\.js", member.name):
                continue
            extracted = tar.extractfile(member)
            assert extracted is not None
            source = extracted.read().decode()
            (name,) = re.findall(r"packName = '([^']+)'", source)
            found[name] = set(re.findall(r"rule: *\w+\.(\w+)", source))
    return found


def test_the_library_acknowledges_rules_in_exactly_the_packs_that_have_them() -> None:
    packs = pack_rules()
    assert COMPLIANCE_PLUGINS | {PLUGIN} == set(packs), sorted(packs)
    for rule, listed in RULE_PACKS.items():
        having = {pack for pack in COMPLIANCE_PACKS if rule in packs[pack]}
        assert set(listed) == having, rule


@pytest.fixture(scope="module")
def compliance_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The example app and a bare control bucket, checked by every compliance pack."""
    import cdk_nag

    outdir = tmp_path_factory.mktemp("nag-compliance")
    app = new_app(outdir=str(outdir))
    Validations.of(app).add_plugins(
        cdk_nag.HIPAASecurityChecks(app),
        cdk_nag.NIST80053R4Checks(app),
        cdk_nag.NIST80053R5Checks(app),
        cdk_nag.PCIDSS321Checks(app),
        cdk_nag.ServerlessChecks(app),
    )
    build(app)
    s3.Bucket(Stack(app, "ComplianceControl"), "Bare")
    for stack in app.node.children:
        vpc = stack.node.try_find_child("Vpc")
        if vpc is not None:
            # The examples' own VPC (not the library's): a public subnet for the NAT gateway.
            Validations.of(vpc).acknowledge(
                *(
                    Acknowledgment(id=f"{pack}::{pack}-{rule}", reason=EXAMPLE_VPC_REASON)
                    for pack in COMPLIANCE_PLUGINS
                    for rule in EXAMPLE_VPC_RULES
                )
            )
    with pytest.raises(Exception, match="ValidationFailed"):
        app.synth()
    return validation_report(outdir)


EXAMPLE_VPC_REASON = (
    "The examples' VPC: its public subnet only holds the NAT gateway the private subnets "
    "use, and its flow log is CDK's default (role policy and log group)"
)


def compliance_findings(report: dict[str, Any], key: str) -> set[tuple[str, str]]:
    return {
        (v["ruleName"], c["constructPath"])
        for p in report["pluginReports"]
        if p["pluginName"] in COMPLIANCE_PLUGINS
        for v in p[key]
        for c in v["violatingConstructs"]
    }


def test_compliance_packs_flag_nothing_the_library_creates(
    compliance_report: dict[str, Any],
) -> None:
    plugins = {p["pluginName"] for p in compliance_report["pluginReports"]}
    assert plugins >= COMPLIANCE_PLUGINS
    flagged = compliance_findings(compliance_report, "violations")
    # Control: the packs do run and flag a bare bucket.
    control = {rule for rule, path in flagged if path == "ComplianceControl/Bare/Resource"}
    assert {
        "HIPAA.Security-S3BucketVersioningEnabled",
        "NIST.800.53.R4-S3BucketDefaultLockEnabled",
        "NIST.800.53.R5-S3BucketLoggingEnabled",
        "PCI.DSS.321-S3DefaultEncryptionKMS",
    } <= control
    library = {(rule, path) for rule, path in flagged if not path.startswith("ComplianceControl/")}
    assert library == set(), sorted(library)


def test_every_pack_reports_no_unacknowledged_warning_either(
    compliance_report: dict[str, Any],
) -> None:
    """The Serverless pack's warnings (LambdaTracing) are acknowledged too: an org that
    fails on warnings (``cdk synth --strict``) gets a clean report."""
    for plugin in compliance_report["pluginReports"]:
        if plugin["pluginName"] in COMPLIANCE_PLUGINS:
            outside_control = [
                v
                for v in plugin["violations"]
                if any(
                    not c["constructPath"].startswith("ComplianceControl/")
                    for c in v["violatingConstructs"]
                )
            ]
            assert outside_control == [], plugin["pluginName"]


def test_the_gate_acknowledges_exactly_its_compliance_findings(
    compliance_report: dict[str, Any],
) -> None:
    suppressed = compliance_findings(compliance_report, "suppressedViolations")
    on_gate = {rule.split("-", 1)[1] for rule, path in suppressed if GATE in path}
    assert on_gate == GATE_ACKNOWLEDGED


def test_compliance_acknowledgments_have_reasons_and_are_used(
    compliance_report: dict[str, Any],
) -> None:
    suppressed = [
        s
        for p in compliance_report["pluginReports"]
        if p["pluginName"] in COMPLIANCE_PLUGINS
        for s in p["suppressedViolations"]
    ]
    assert suppressed
    for finding in suppressed:
        assert len(finding["reason"].split()) >= 5, finding["acknowledgedId"]
    used = {s["acknowledgedId"] for s in suppressed}
    # Every rule the library acknowledges is used in every pack that has it.
    for rule, packs in RULE_PACKS.items():
        for pack in packs:
            assert f"{pack}::{pack}-{rule}" in used, (pack, rule)
    # The cluster's own resources are among the suppressed ones, each with its reason.
    paths = {c["constructPath"] for s in suppressed for c in s["violatingConstructs"]}
    for expected in (
        "FsdpTraining/Cluster/VpcAccess/Resource",
        "FsdpTraining/Cluster/ExecutionRole/DefaultPolicy/Resource",
        "FsdpTraining/Cluster/LifecycleScripts/Bucket/Resource",
    ):
        assert expected in paths, expected
