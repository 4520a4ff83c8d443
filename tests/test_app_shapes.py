"""The app shapes organisations deploy with, each synthesizing the example cluster
(examples/fsdp.py) *with its readiness gate*: every stack synthesizer aws-cdk-lib ships and a
user's own, stages, a nested stack, CDK Pipelines, env-agnostic and env-specific stacks, two
clusters, dependants in another stack, a permissions boundary, app-wide tags, cdk.json without
feature flags and with every recommended one, and ``cdk synth --strict`` through the pinned CLI.

Each shape's template is checked as deployed: cfn-lint clean, the gate's resources present and
wired to ``cluster.ready``, and the gate's code pointing at the bucket (and key, role,
qualifier) that the synthesizer wrote into the asset manifest or the template. Expected values
come from aws-cdk-lib's own constants (``DefaultStackSynthesizer.DEFAULT_*``) or from the
shape's own props, never from the library. The shapes share a few synthesized apps (docs/guide.md
"Supported app shapes" lists them).
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import FileSystem, pipelines
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_ssm as ssm
from aws_cdk.cx_api import CloudAssembly, CloudFormationStackArtifact
from constructs import Construct

from examples.fsdp import FsdpTrainingStack, add_fsdp_cluster
from hyperpod_constructs import HyperPodSlurmCluster
from hyperpod_constructs._runtime.hyperpod_gate.contract import RESOURCE_TYPE
from tests.conftest import CDK_CONTEXT, ROOT, new_app
from tests.support.cdk_cli import SYNTH, cdk_env
from tests.template_utils import depends_on, describe_matches, resources
from tests.test_lint import lint_findings

ACCOUNT, REGION = "111111111111", "us-east-1"
ENV = cdk.Environment(account=ACCOUNT, region=REGION)
AZ_CONTEXT = {f"availability-zones:account={ACCOUNT}:region={REGION}": ["us-east-1a"]}
"""The lookup `cdk synth` would make for an env-specific stack's VPC, answered in advance."""
GATE_HANDLERS = {"hyperpod_gate.poll.handler", "hyperpod_gate.arm.handler"}
DEFAULT = cdk.DefaultStackSynthesizer
QUALIFIER = DEFAULT.DEFAULT_QUALIFIER


def qualified(template: str, qualifier: str = QUALIFIER) -> str:
    """One of aws-cdk-lib's ``DefaultStackSynthesizer.DEFAULT_*`` names for ``qualifier``."""
    return template.replace("${Qualifier}", qualifier)


# -- a user's own synthesizers --------------------------------------------------------------


class OrgSynthesizer(cdk.DefaultStackSynthesizer):
    """A platform team's subclass: the default synthesizer with its own bootstrap."""

    QUALIFIER = "orgplat01"

    def __init__(self) -> None:
        super().__init__(qualifier=self.QUALIFIER)


class OrgBucketSynthesizer(cdk.StackSynthesizer):
    """A synthesizer written from scratch, as aws-cdk-lib documents it: assets in the
    organisation's bucket under a prefix, published with the CLI's credentials."""

    BUCKET = "org-hyperpod-assets-${AWS::AccountId}-${AWS::Region}"
    PREFIX = "cdk/"

    def __init__(self) -> None:
        super().__init__()
        self._assets = cdk.AssetManifestBuilder()

    def add_file_asset(self, asset: cdk.FileAssetSource) -> cdk.FileAssetLocation:
        destination = self._assets.default_add_file_asset(
            self._bound_stack,
            asset,
            cdk.AssetManifestFileDestination(bucket_name=self.BUCKET, bucket_prefix=self.PREFIX),
        )
        return self._cloud_formation_location_from_file_asset(
            bucket_name=destination.bucket_name, object_key=destination.object_key
        )

    def add_docker_image_asset(
        self, asset: cdk.DockerImageAssetSource
    ) -> cdk.DockerImageAssetLocation:
        raise NotImplementedError("no container images in this organisation")

    def synthesize(self, session: cdk.ISynthesisSession) -> None:
        self._synthesize_template(session)
        manifest = self._assets.emit_manifest(self._bound_stack, session)
        self._emit_artifact(session, additional_dependencies=[manifest])


ORG_ROLE = "arn:${AWS::Partition}:iam::${AWS::AccountId}:role/"
QUALIFIED = {
    "qualifier": "platf0rm1",
    "file_assets_bucket_name": "org-cdk-assets-${AWS::AccountId}-${AWS::Region}",
    "bucket_prefix": "hyperpod/",
    "file_asset_publishing_role_arn": ORG_ROLE + "org-publish",
    "deploy_role_arn": ORG_ROLE + "org-deploy",
    "cloud_formation_execution_role": ORG_ROLE + "org-cfn",
}
"""A DefaultStackSynthesizer with the organisation's own bootstrap: qualifier, bucket, roles."""


# -- reading what was synthesized -----------------------------------------------------------


@dataclass(frozen=True)
class Synthesized:
    """One synthesized stack: its template, asset manifest entries (``{}`` when its
    synthesizer writes none), artifact (``None`` for a nested stack) and assembly folder."""

    template: dict[str, Any]
    files: dict[str, Any]
    artifact: CloudFormationStackArtifact | None
    directory: Path

    @property
    def stack(self) -> CloudFormationStackArtifact:
        assert self.artifact is not None
        return self.artifact


def asset_files(directory: Path, artifact_id: str) -> dict[str, Any]:
    path = directory / f"{artifact_id}.assets.json"
    return dict(json.loads(path.read_text())["files"]) if path.exists() else {}


def synthesized(assembly: CloudAssembly, stack: cdk.Stack) -> Synthesized:
    directory = Path(assembly.directory).resolve()
    if stack.nested:
        # A nested stack's template is a file asset of its parent, which hosts its assets.
        parent = stack.nested_stack_parent
        assert parent is not None
        template = json.loads((directory / stack.template_file).read_text())
        return Synthesized(template, asset_files(directory, parent.artifact_id), None, directory)
    artifact = assembly.get_stack_artifact(stack.artifact_id)
    # The template from its file: jsii keeps the first proxy it made of an artifact, and one
    # met first as another stack's dependency is a plain CloudArtifact (no ``template``).
    template = json.loads((directory / stack.template_file).read_text())
    return Synthesized(template, asset_files(directory, stack.artifact_id), artifact, directory)


def from_artifact(artifact: CloudFormationStackArtifact, directory: Path) -> Synthesized:
    return Synthesized(
        dict(artifact.template), asset_files(directory, artifact.id), artifact, directory
    )


def gate_functions(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        logical_id: function
        for logical_id, function in resources(template, "AWS::Lambda::Function").items()
        if function["Properties"].get("Handler") in GATE_HANDLERS
    }


def gate_code(template: dict[str, Any]) -> tuple[Any, Any]:
    """The (S3Bucket, S3Key) both gate functions run (one asset for both)."""
    functions = gate_functions(template)
    assert {f["Properties"]["Handler"] for f in functions.values()} == GATE_HANDLERS
    (code,) = {json.dumps(f["Properties"]["Code"], sort_keys=True) for f in functions.values()}
    parsed = json.loads(code)
    return parsed["S3Bucket"], parsed["S3Key"]


def sub(value: Any) -> str:
    """A template string as written: literal, or the text of an ``Fn::Sub``."""
    if isinstance(value, dict) and set(value) == {"Fn::Sub"}:
        return str(value["Fn::Sub"])
    assert isinstance(value, str), value
    return value


def assert_gated(template: dict[str, Any]) -> None:
    """The gate's resources are there and wired: two functions on one asset, the loop, the
    arm resource, the handle that declares the wait and the wait condition (a creation policy)
    the example's ready marker waits for."""
    assert len(gate_functions(template)) == 2
    for kind in (
        "AWS::StepFunctions::StateMachine",
        "AWS::Events::Rule",
        RESOURCE_TYPE,
    ):
        assert len(resources(template, kind)) == 1, kind
    ((condition_id, condition),) = resources(template, "AWS::CloudFormation::WaitCondition").items()
    # The handle only declares the wait (Metadata): the condition has a CreationPolicy.
    assert len(resources(template, "AWS::CloudFormation::WaitConditionHandle")) == 1
    assert condition["CreationPolicy"]["ResourceSignal"]["Count"] == 1
    assert "Properties" not in condition
    (marker,) = resources(template, "AWS::SSM::Parameter").values()
    assert condition_id in depends_on(marker), "the example's ready marker waits for the gate"


def _legacy_hash_parameter(match: Any, template: dict[str, Any]) -> bool:
    """W2001 (parameter not used) for the ``ArtifactHash`` parameter LegacyStackSynthesizer
    writes with every asset: the CLI fills it, no resource reads it."""
    path = list(match.path)
    return (
        match.rule.id == "W2001"
        and path[:1] == ["Parameters"]
        and bool(re.fullmatch(r"AssetParameters[0-9a-f]{64}ArtifactHash[0-9A-F]{8}", path[1]))
    )


def _env_specific_zone(match: Any, template: dict[str, Any]) -> bool:
    """W3010 (hard-coded availability zone) on the subnets of the example's own VPC in an
    env-specific stack: aws-cdk-lib writes the zones it looked up for the account."""
    path = list(match.path)
    return (
        match.rule.id == "W3010"
        and path[0] == "Resources"
        and template["Resources"][path[1]]["Type"] == "AWS::EC2::Subnet"
    )


def assert_lint_clean(template: dict[str, Any]) -> None:
    found = [
        match
        for match in lint_findings(template)
        if not (_legacy_hash_parameter(match, template) or _env_specific_zone(match, template))
    ]
    assert not found, describe_matches(found)


def asset_entry(stack: Synthesized) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The gate code's asset: its hash, manifest entry and its one destination; the key the
    template names is the destination's, and the staged folder exists."""
    bucket, key = gate_code(stack.template)
    (digest,) = {d for d in stack.files if d in json.dumps(key)}
    entry = stack.files[digest]
    assert entry["source"]["packaging"] == "zip"
    staged = stack.directory / entry["source"]["path"]
    assert FileSystem.fingerprint(str(staged)) == digest, "the hash is the staged folder's"
    (destination,) = entry["destinations"].values()
    assert sub(key) == destination["objectKey"]
    assert sub(bucket) == destination["bucketName"]
    return digest, entry, destination


def assert_default_bootstrap(
    stack: Synthesized,
    *,
    qualifier: str = QUALIFIER,
    bucket: str | None = None,
    prefix: str = "",
    publishing_role: str | None = None,
    deploy_role: str | None = None,
) -> str:
    """A DefaultStackSynthesizer's asset and roles for ``qualifier`` (aws-cdk-lib's default
    names unless given); the gate code's hash."""
    digest, entry, destination = asset_entry(stack)
    assert destination["bucketName"] == (
        bucket or qualified(DEFAULT.DEFAULT_FILE_ASSETS_BUCKET_NAME, qualifier)
    )
    assert destination["objectKey"] == f"{prefix}{digest}.zip"
    assert destination["assumeRoleArn"] == (
        publishing_role or qualified(DEFAULT.DEFAULT_FILE_ASSET_PUBLISHING_ROLE_ARN, qualifier)
    )
    assert stack.stack.assume_role_arn == (
        deploy_role or qualified(DEFAULT.DEFAULT_DEPLOY_ROLE_ARN, qualifier)
    )
    version = stack.template["Parameters"]["BootstrapVersion"]["Default"]
    assert version == qualified(DEFAULT.DEFAULT_BOOTSTRAP_STACK_VERSION_SSM_PARAMETER, qualifier)
    assert entry["displayName"].endswith("Cluster/MinCountGate/CheckFunction/Code")
    return digest


def assert_shape(stack: Synthesized) -> None:
    assert_gated(stack.template)
    assert_lint_clean(stack.template)


# -- the shared apps ------------------------------------------------------------------------


@dataclass
class Matrix:
    """One app holding most shapes (a stack each), synthesized once."""

    assembly: CloudAssembly
    stacks: dict[str, cdk.Stack]
    stages: dict[str, cdk.Stage]
    clusters: dict[str, HyperPodSlurmCluster]

    def get(self, name: str) -> Synthesized:
        return synthesized(self.assembly, self.stacks[name])

    def in_stage(self, stage: str) -> Synthesized:
        staged = self.stages[stage]
        (stack,) = (c for c in staged.node.children if isinstance(c, cdk.Stack))
        return synthesized(staged.synth(), stack)


class TrainingStage(cdk.Stage):
    """A stage holding the example stack, as an app or a pipeline deploys it."""

    def __init__(self, scope: Construct, id: str, **props: Any) -> None:
        super().__init__(scope, id, **props)
        self.stack = FsdpTrainingStack(self, "Training")


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Matrix:
    app = cdk.App(
        context={**CDK_CONTEXT, **AZ_CONTEXT}, outdir=str(tmp_path_factory.mktemp("shapes"))
    )
    stacks: dict[str, cdk.Stack] = {}
    clusters: dict[str, HyperPodSlurmCluster] = {}
    synthesizers: dict[str, cdk.IStackSynthesizer | None] = {
        "Default": None,
        "ExplicitDefault": cdk.DefaultStackSynthesizer(),
        "Qualified": cdk.DefaultStackSynthesizer(**QUALIFIED),
        "CliCredentials": cdk.CliCredentialsStackSynthesizer(),
        "Legacy": cdk.LegacyStackSynthesizer(),
        "OrgSubclass": OrgSynthesizer(),
        "OrgBucket": OrgBucketSynthesizer(),
    }
    for name, synthesizer in synthesizers.items():
        stack = FsdpTrainingStack(app, name, synthesizer=synthesizer)
        stacks[name], clusters[name] = stack, stack.cluster
    env_specific = FsdpTrainingStack(app, "EnvSpecific", env=ENV)
    stacks["EnvSpecific"] = env_specific
    stacks["Protected"] = FsdpTrainingStack(app, "Protected", termination_protection=True)

    parent = cdk.Stack(app, "Parent")
    nested = cdk.NestedStack(parent, "Training")
    clusters["Nested"] = add_fsdp_cluster(nested)
    stacks["Parent"], stacks["Nested"] = parent, nested
    ssm.StringParameter(parent, "AfterNested", string_value="ready").node.add_dependency(
        clusters["Nested"].ready
    )

    two = cdk.Stack(app, "TwoClusters")
    for name in ("a", "b"):
        clusters[f"Two-{name}"] = add_fsdp_cluster(
            Construct(two, name.upper()), name=f"train-{name}"
        )
    stacks["TwoClusters"] = two
    for name in ("a", "b"):
        stack = cdk.Stack(app, f"Training{name.upper()}")
        clusters[stack.stack_name] = add_fsdp_cluster(stack, name=f"train-{name}")
        stacks[stack.stack_name] = stack
    consumers = cdk.Stack(app, "Consumers")
    marker = ssm.StringParameter(
        consumers, "UsesClusterA", string_value=clusters["TrainingA"].cluster_arn
    )
    marker.node.add_dependency(clusters["TrainingA"].ready)
    stacks["Consumers"] = consumers

    bounded = FsdpTrainingStack(app, "Bounded")
    iam.PermissionsBoundary.of(bounded).apply(
        iam.ManagedPolicy.from_managed_policy_name(bounded, "Boundary", "org-boundary")
    )
    stacks["Bounded"] = bounded

    stages = {
        "WithEnv": TrainingStage(app, "WithEnv", env=ENV),
        "NoEnv": TrainingStage(app, "NoEnv"),
    }
    return Matrix(app.synth(), stacks, stages, clusters)


# -- every stack synthesizer aws-cdk-lib ships, and a user's own ------------------------------


def test_default_synthesizer(matrix: Matrix) -> None:
    stack = matrix.get("Default")
    assert_shape(stack)
    assert_default_bootstrap(stack)


def test_explicit_default_synthesizer(matrix: Matrix) -> None:
    """An explicit synthesizer object (the shape most easily broken)."""
    stack = matrix.get("ExplicitDefault")
    assert_shape(stack)
    assert_default_bootstrap(stack)
    assert gate_code(stack.template) == gate_code(matrix.get("Default").template)


def test_default_synthesizer_with_qualifier_bucket_and_roles(matrix: Matrix) -> None:
    stack = matrix.get("Qualified")
    assert_shape(stack)
    assert_default_bootstrap(
        stack,
        qualifier=QUALIFIED["qualifier"],
        bucket=QUALIFIED["file_assets_bucket_name"],
        prefix=QUALIFIED["bucket_prefix"],
        publishing_role=QUALIFIED["file_asset_publishing_role_arn"],
        deploy_role=QUALIFIED["deploy_role_arn"],
    )
    assert (
        stack.stack.cloud_formation_execution_role_arn
        == QUALIFIED["cloud_formation_execution_role"]
    )
    assert QUALIFIER not in json.dumps(stack.template), "nothing of the default bootstrap left"


def test_cli_credentials_synthesizer(matrix: Matrix) -> None:
    stack = matrix.get("CliCredentials")
    assert_shape(stack)
    _, _, destination = asset_entry(stack)
    assert destination["bucketName"] == qualified(DEFAULT.DEFAULT_FILE_ASSETS_BUCKET_NAME)
    assert "assumeRoleArn" not in destination, "published with the CLI's own credentials"
    assert stack.stack.assume_role_arn is None


def test_legacy_synthesizer(matrix: Matrix) -> None:
    """Legacy: no asset manifest; three CloudFormation parameters per asset, named in the
    stack's ``aws:cdk:asset`` metadata, which the gate's code references."""
    stack = matrix.get("Legacy")
    assert_shape(stack)
    assert stack.files == {}
    bucket, key = gate_code(stack.template)
    (asset,) = [a for a in stack.stack.assets if a.s3_bucket_parameter == bucket["Ref"]]
    assert asset.packaging == "zip"
    parameters = stack.template["Parameters"]
    assert {
        asset.s3_bucket_parameter,
        asset.s3_key_parameter,
        asset.artifact_hash_parameter,
    } <= set(parameters)
    assert asset.s3_key_parameter in json.dumps(key)
    assert (stack.directory / asset.path).is_dir()
    assert FileSystem.fingerprint(str(stack.directory / asset.path)) == asset.id


def test_a_users_default_synthesizer_subclass(matrix: Matrix) -> None:
    stack = matrix.get("OrgSubclass")
    assert_shape(stack)
    assert_default_bootstrap(stack, qualifier=OrgSynthesizer.QUALIFIER)


def test_a_users_own_stack_synthesizer(matrix: Matrix) -> None:
    stack = matrix.get("OrgBucket")
    assert_shape(stack)
    digest, _, destination = asset_entry(stack)
    assert destination["bucketName"] == OrgBucketSynthesizer.BUCKET
    assert destination["objectKey"] == f"{OrgBucketSynthesizer.PREFIX}{digest}.zip"
    assert "BootstrapVersion" not in stack.template.get("Parameters", {})


def test_every_synthesizer_stages_the_same_gate_code(matrix: Matrix) -> None:
    """One hash for the gate's code whatever the synthesizer (the staged files are the same)."""
    digests = {
        name: asset_entry(matrix.get(name))[0]
        for name in (
            "Default",
            "ExplicitDefault",
            "Qualified",
            "CliCredentials",
            "OrgSubclass",
            "OrgBucket",
        )
    }
    assert len(set(digests.values())) == 1, digests


# -- stages, nested stacks, environments -----------------------------------------------------


def test_stage_with_env(matrix: Matrix) -> None:
    stack = matrix.in_stage("WithEnv")
    assert_shape(stack)
    assert stack.stack.environment.account == ACCOUNT
    # An env-specific stack names its account and region in the bucket, as the manifest does.
    assert_default_bootstrap(
        stack,
        bucket=qualified(DEFAULT.DEFAULT_FILE_ASSETS_BUCKET_NAME)
        .replace("${AWS::AccountId}", ACCOUNT)
        .replace("${AWS::Region}", REGION),
        publishing_role=qualified(DEFAULT.DEFAULT_FILE_ASSET_PUBLISHING_ROLE_ARN)
        .replace("${AWS::AccountId}", ACCOUNT)
        .replace("${AWS::Region}", REGION),
        deploy_role=qualified(DEFAULT.DEFAULT_DEPLOY_ROLE_ARN)
        .replace("${AWS::AccountId}", ACCOUNT)
        .replace("${AWS::Region}", REGION),
    )


def test_stage_without_env(matrix: Matrix) -> None:
    stack = matrix.in_stage("NoEnv")
    assert_shape(stack)
    assert_default_bootstrap(stack)
    assert gate_code(stack.template) == gate_code(matrix.get("Default").template)


def test_env_specific_stack(matrix: Matrix) -> None:
    stack = matrix.get("EnvSpecific")
    assert_shape(stack)
    bucket, _ = gate_code(stack.template)
    assert bucket == f"cdk-{QUALIFIER}-assets-{ACCOUNT}-{REGION}", "a literal, no Fn::Sub"


def test_env_agnostic_stack(matrix: Matrix) -> None:
    bucket, _ = gate_code(matrix.get("Default").template)
    assert bucket == {"Fn::Sub": qualified(DEFAULT.DEFAULT_FILE_ASSETS_BUCKET_NAME)}


def test_nested_stack(matrix: Matrix) -> None:
    """The gate inside a nested stack: its code is the parent's asset, and its handle and
    wait condition are the nested stack's own, which the gate reads with the nested
    stack's id; a dependant in the parent waits for the nested stack."""
    nested = matrix.get("Nested")
    parent = matrix.get("Parent")
    assert_shape(nested)
    assert_lint_clean(parent.template)
    bucket, key = gate_code(nested.template)
    assert sub(bucket) == qualified(DEFAULT.DEFAULT_FILE_ASSETS_BUCKET_NAME)
    # The parent's synthesizer hosts the asset: it is in the parent's manifest.
    digest = re.sub(r"\.zip$", "", sub(key))
    assert digest in parent.files
    assert parent.files[digest]["displayName"].endswith(
        "Training/Cluster/MinCountGate/CheckFunction/Code"
    )
    # The arm resource names the nested stack's own wait condition; the functions read and
    # signal it in the stack they run in.
    ((_, arm),) = resources(nested.template, RESOURCE_TYPE).items()
    properties = arm["Properties"]
    assert properties["WaitConditionLogicalId"] in resources(
        nested.template, "AWS::CloudFormation::WaitCondition"
    )
    reads = [
        s
        for policy in resources(nested.template, "AWS::IAM::Policy").values()
        for s in policy["Properties"]["PolicyDocument"]["Statement"]
        if "cloudformation:SignalResource" in s["Action"]
    ]
    assert len(reads) == 2 and all(s["Resource"] == {"Ref": "AWS::StackId"} for s in reads)
    ((nested_id, _),) = resources(parent.template, "AWS::CloudFormation::Stack").items()
    (after,) = resources(parent.template, "AWS::SSM::Parameter").values()
    assert nested_id in depends_on(after)
    # The nested template the parent publishes is the one written: aws-cdk-lib hashes it when
    # the app is prepared, so nothing may change it later (a validation writing an override did).
    (published,) = (
        digest
        for digest, entry in parent.files.items()
        if entry["source"].get("path", "").endswith(".nested.template.json")
    )
    written = json.dumps(nested.template, separators=(",", ":"), ensure_ascii=False)
    assert hashlib.sha256(written.encode()).hexdigest() == published


def test_termination_protection(matrix: Matrix) -> None:
    stack = matrix.get("Protected")
    assert_shape(stack)
    assert_default_bootstrap(stack)
    assert stack.stack.termination_protection is True


# -- more than one cluster, and dependants elsewhere ----------------------------------------


def test_two_clusters_in_one_stack(matrix: Matrix) -> None:
    stack = matrix.get("TwoClusters")
    assert_lint_clean(stack.template)
    template = stack.template
    assert len(gate_functions(template)) == 4
    assert len(resources(template, RESOURCE_TYPE)) == 2
    assert len(resources(template, "AWS::CloudFormation::WaitCondition")) == 2
    # Both gates run the same code: one asset in the manifest, one key in the template.
    keys = {json.dumps(f["Properties"]["Code"]) for f in gate_functions(template).values()}
    assert len(keys) == 1
    gate_assets = [
        e
        for e in stack.files.values()
        if e["displayName"].endswith("MinCountGate/CheckFunction/Code")
    ]
    assert len(gate_assets) == 1
    # Each ready marker waits for its own cluster's gate.
    markers = resources(template, "AWS::SSM::Parameter")
    conditions = set(resources(template, "AWS::CloudFormation::WaitCondition"))
    waits = [depends_on(m) & conditions for m in markers.values()]
    assert sorted(len(w) for w in waits) == [1, 1] and waits[0] != waits[1]


def test_two_clusters_in_two_stacks(matrix: Matrix) -> None:
    a, b = matrix.get("TrainingA"), matrix.get("TrainingB")
    for stack in (a, b):
        assert_shape(stack)
    assert asset_entry(a)[0] == asset_entry(b)[0]
    names = {
        sub(c["Properties"]["ClusterName"])
        for s in (a, b)
        for c in resources(s.template, "AWS::SageMaker::Cluster").values()
    }
    assert names == {"train-a", "train-b"}


def test_dependants_of_cluster_ready_in_another_stack(matrix: Matrix) -> None:
    """A resource in another stack that depends on ``cluster.ready`` makes its stack deploy
    after the cluster's stack (CloudFormation cannot wait across stacks any other way), and
    reads the cluster's ARN through an export."""
    consumers = matrix.get("Consumers")
    assert_lint_clean(consumers.template)
    dependencies = {d.id for d in consumers.stack.dependencies}
    assert matrix.stacks["TrainingA"].artifact_id in dependencies
    (marker,) = resources(consumers.template, "AWS::SSM::Parameter").values()
    value = json.dumps(marker["Properties"]["Value"])
    # An export (strong) or Fn::GetStackOutput (cdk.json's weak cross-stack references).
    outputs = matrix.get("TrainingA").template["Outputs"]
    assert any(output_id in value for output_id in outputs), value
    assert "Fn::ImportValue" in value or "Fn::GetStackOutput" in value


def test_permissions_boundary(matrix: Matrix) -> None:
    """``PermissionsBoundary.of(stack)`` reaches every role, the gate's included."""
    stack = matrix.get("Bounded")
    assert_shape(stack)
    roles = resources(stack.template, "AWS::IAM::Role")
    assert len(roles) >= 4
    for logical_id, role in roles.items():
        boundary = json.dumps(role["Properties"].get("PermissionsBoundary"))
        assert "policy/org-boundary" in boundary, logical_id


# -- CDK Pipelines --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pipeline(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[CloudAssembly, cdk.Stack, TrainingStage]:
    app = cdk.App(
        context={**CDK_CONTEXT, **AZ_CONTEXT}, outdir=str(tmp_path_factory.mktemp("pipeline"))
    )
    stack = cdk.Stack(app, "Delivery", env=ENV)
    source = pipelines.CodePipelineSource.connection(
        "org/training",
        "main",
        connection_arn=f"arn:aws:codeconnections:{REGION}:{ACCOUNT}:connection/0123abcd",
    )
    delivery = pipelines.CodePipeline(
        stack,
        "Pipeline",
        synth=pipelines.ShellStep("Synth", input=source, commands=["npx cdk synth"]),
    )
    stage = TrainingStage(app, "Prod", env=ENV)
    delivery.add_stage(stage)
    return app.synth(), stack, stage


def test_cdk_pipelines_stage(
    pipeline: tuple[CloudAssembly, cdk.Stack, TrainingStage],
) -> None:
    """A pipelines.CodePipeline stage holding the cluster: the stage's stack has its gate,
    and the pipeline publishes the gate's code from the stage's asset manifest."""
    assembly, delivery, stage = pipeline
    staged = synthesized(stage.synth(), stage.stack)
    assert_shape(staged)
    digest, _, _ = asset_entry(staged)
    template = assembly.get_stack_artifact(delivery.artifact_id).template
    buildspecs = [
        json.dumps(project["Properties"]["Source"].get("BuildSpec", ""))
        for project in resources(template, "AWS::CodeBuild::Project").values()
    ]
    publishers = [b for b in buildspecs if "cdk-assets" in b and digest in b]
    assert len(publishers) == 1, "one publishing action for the gate's code"
    assert f"{staged.stack.id}.assets.json" in publishers[0]


# -- tags, feature flags --------------------------------------------------------------------


def one_stack_app(outdir: Path, context: dict[str, Any]) -> tuple[CloudAssembly, cdk.Stack]:
    app = cdk.App(context=context, outdir=str(outdir))
    stack = FsdpTrainingStack(app, "FsdpTraining")
    return app.synth(), stack


def test_tags_of_app(tmp_path: Path) -> None:
    app = new_app(outdir=str(tmp_path))
    stack = FsdpTrainingStack(app, "FsdpTraining")
    cdk.Tags.of(app).add("cost-center", "ml-platform")
    result = synthesized(app.synth(), stack)
    assert_shape(result)
    template = result.template
    tagged_types = {
        "AWS::Lambda::Function",
        "AWS::StepFunctions::StateMachine",
        "AWS::Logs::LogGroup",
        "AWS::IAM::Role",
        "AWS::Events::Rule",
        "AWS::SageMaker::Cluster",
    }
    for kind in tagged_types:
        # The library's resources (aws-cdk-lib's own custom-resource providers are raw
        # CfnResources, which Tags.of cannot reach).
        own = {i: r for i, r in resources(template, kind).items() if i.startswith("Cluster")}
        assert own, kind
        for logical_id, resource in own.items():
            tags = resource["Properties"].get("Tags", [])
            assert {"Key": "cost-center", "Value": "ml-platform"} in tags, (kind, logical_id)


def recommended_flags() -> dict[str, Any]:
    """Every feature flag the installed aws-cdk-lib recommends for new projects (its own
    ``recommended-feature-flags.json``, what ``cdk init`` writes)."""
    import importlib.util

    spec = importlib.util.find_spec("aws_cdk")
    assert spec is not None and spec.origin is not None
    (archive,) = (Path(spec.origin).parent / "_jsii").glob("aws-cdk-lib@*.jsii.tgz")
    with tarfile.open(archive) as tar:
        extracted = tar.extractfile("package/recommended-feature-flags.json")
        assert extracted is not None
        flags: dict[str, Any] = json.loads(extracted.read())
    return flags


@pytest.mark.deep(sample=1)
@pytest.mark.parametrize("flags", ["none", "recommended"])
def test_feature_flags(flags: str, tmp_path: Path) -> None:
    context = {} if flags == "none" else recommended_flags()
    if flags == "recommended":
        assert len(context) > 50
    assembly, stack = one_stack_app(tmp_path, context)
    result = synthesized(assembly, stack)
    assert_shape(result)
    assert_default_bootstrap(result)


# -- a synthesizer that cannot host assets ---------------------------------------------------


class NoAssetsSynthesizer(cdk.StackSynthesizer):
    """A user's synthesizer for a locked-down account: templates only, no assets."""

    def add_file_asset(self, asset: cdk.FileAssetSource) -> cdk.FileAssetLocation:
        raise RuntimeError("this account takes no assets")

    def add_docker_image_asset(
        self, asset: cdk.DockerImageAssetSource
    ) -> cdk.DockerImageAssetLocation:
        raise RuntimeError("this account takes no assets")

    def synthesize(self, session: cdk.ISynthesisSession) -> None:
        self._synthesize_template(session)
        self._emit_artifact(session)


@pytest.mark.parametrize(
    ("synthesizer", "name"),
    [
        (cdk.BootstraplessSynthesizer, "BootstraplessSynthesizer"),
        (NoAssetsSynthesizer, "NoAssetsSynthesizer"),
    ],
)
def test_a_synthesizer_without_assets_is_a_finding(
    synthesizer: type[cdk.IStackSynthesizer], name: str, tmp_path: Path
) -> None:
    """BootstraplessSynthesizer (or a user's own) refuses file assets: the gate's code and the
    lifecycle scripts' upload are each a finding that names the synthesizer and the fix; no
    traceback from jsii, no template."""
    app = new_app(outdir=str(tmp_path))
    stack = cdk.Stack(app, "NoAssets", synthesizer=synthesizer())
    # An imported VPC: the example's own VPC needs an asset too (CDK's default-security-group
    # custom resource), which aws-cdk-lib refuses with its own error.
    vpc = ec2.Vpc.from_vpc_attributes(
        stack,
        "Vpc",
        vpc_id="vpc-0123456789abcdef0",
        availability_zones=["us-east-1a"],
        private_subnet_ids=["subnet-0123456789abcdef0"],
    )
    cluster = add_fsdp_cluster(stack, vpc=vpc)
    found = [f for f in cluster.findings() if f.rule == "HP-SYNTHESIZER-ASSETS"]
    assert len(found) == 2
    for finding in found:
        assert finding.value == name
        assert "DefaultStackSynthesizer" in finding.fix
    assert {"readiness gate" in f.allowed for f in found} == {True, False}
    with pytest.raises(RuntimeError) as raised:
        app.synth()
    message = str(raised.value)
    # One value (the synthesizer) breaking one rule twice: one line naming both reasons.
    assert message.count("[HP-SYNTHESIZER-ASSETS]") == 1
    (line,) = [line for line in message.splitlines() if "[HP-SYNTHESIZER-ASSETS]" in line]
    for reason in found:
        assert reason.allowed in line
    assert name in message
    assert list(tmp_path.glob("*.template.json")) == []


# -- the pinned cdk CLI, --strict ------------------------------------------------------------

CLI_APP = '''\
"""The example cluster, default and with the organisation's own bootstrap."""
import os

os.environ.setdefault("CDK_VALIDATION", "false")

from aws_cdk import App, DefaultStackSynthesizer

from examples.fsdp import FsdpTrainingStack

app = App()
FsdpTrainingStack(app, "Default")
FsdpTrainingStack(app, "Qualified", synthesizer=DefaultStackSynthesizer(qualifier="platf0rm1"))
app.synth()
'''


@pytest.fixture(scope="module")
def strict_synth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str, Path]]:
    folder = tmp_path_factory.mktemp("cdk-strict")
    (folder / "app.py").write_text(CLI_APP)
    (folder / "cdk.json").write_text(
        json.dumps({"app": f"{sys.executable} app.py", "context": CDK_CONTEXT})
    )
    result = subprocess.run(
        [*SYNTH, "--strict"],
        cwd=folder,
        env=cdk_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    yield result.returncode, result.stdout + result.stderr, folder / "cdk.out"


@pytest.mark.deep(
    why="the real cdk CLI over the 20-stack matrix; in make test the matrix is synthesized "
    "in-process (this module) and the real cdk synth runs in tests/test_one_synth.py "
    "and tests/test_convert.py"
)
def test_cdk_synth_strict(strict_synth: tuple[int, str, Path]) -> None:
    """``cdk synth --strict`` (warnings fail) through the pinned CLI, which also asks for the
    assets' metadata (``aws:asset:*``, for SAM) on the gate's functions."""
    returncode, output, outdir = strict_synth
    assert returncode == 0, output
    assert "Traceback" not in output, output
    assembly = CloudAssembly(str(outdir))
    for name, qualifier in (("Default", QUALIFIER), ("Qualified", "platf0rm1")):
        stack = from_artifact(assembly.get_stack_by_name(name), outdir.resolve())
        assert_shape(stack)
        digest = assert_default_bootstrap(stack, qualifier=qualifier)
        for function in gate_functions(stack.template).values():
            metadata = function["Metadata"]
            assert metadata["aws:asset:property"] == "Code"
            assert metadata["aws:asset:path"] == f"asset.{digest}"
            assert metadata["aws:asset:is-bundled"] is False


def test_no_shape_here_reaches_a_synthesizer_from_python() -> None:
    """The library never calls a synthesizer itself (style anchors: a bound copy stands in
    for the user's object, so a Python call reaches an unbound synthesizer)."""
    sources = "\n".join(path.read_text() for path in (ROOT / "hyperpod_constructs").rglob("*.py"))
    assert not re.search(r"\.add_file_asset\(", sources)


# -- an App-level organisation policy reaches every cluster, whatever the shape -------------


def delivery_pipeline(app: cdk.App) -> pipelines.CodePipeline:
    """A CDK Pipelines pipeline in its own stack of ``app``, to add stages to."""
    delivery = cdk.Stack(app, "Delivery", env=ENV)
    source = pipelines.CodePipelineSource.connection(
        "org/training",
        "main",
        connection_arn=f"arn:aws:codeconnections:{REGION}:{ACCOUNT}:connection/0123abcd",
    )
    return pipelines.CodePipeline(
        delivery, "Pipeline", synth=pipelines.ShellStep("Synth", input=source, commands=["x"])
    )


def _policy_shape(shape: str, outdir: Path) -> cdk.App:
    """The example cluster (a 16-node gpu group) in ``shape``, under an App-level policy
    allowing 8 instances per group."""
    from hyperpod_constructs.policy import HyperPodPolicy

    app = cdk.App(context={**CDK_CONTEXT, **AZ_CONTEXT}, outdir=str(outdir))
    policy = HyperPodPolicy(name="org", max_instance_count=8)
    if shape == "pipeline-late":  # the policy added after add_stage synthesized the stage
        delivery_pipeline(app).add_stage(TrainingStage(app, "Prod", env=ENV))
        cdk.Aspects.of(app).add(policy)
        return app
    cdk.Aspects.of(app).add(policy)
    if shape == "app":
        FsdpTrainingStack(app, "Training")
    elif shape == "stage":
        TrainingStage(app, "Prod")
    elif shape == "nested-stage":
        TrainingStage(cdk.Stage(app, "Org"), "Prod")
    elif shape == "nested-stack":
        add_fsdp_cluster(cdk.NestedStack(cdk.Stack(app, "Parent"), "Training"))
    elif shape == "pipeline":
        delivery_pipeline(app).add_stage(TrainingStage(app, "Prod", env=ENV))
    return app


@pytest.mark.parametrize(
    ("shape", "path"),
    [
        ("app", "Training/Cluster"),
        ("stage", "Prod/Training/Cluster"),
        ("nested-stage", "Org/Prod/Training/Cluster"),
        ("nested-stack", "Parent/Training/Cluster"),
        ("pipeline", "Prod/Training/Cluster"),
        ("pipeline-late", "Prod/Training/Cluster"),
    ],
)
def test_an_app_level_policy_reaches_every_shape(shape: str, path: str, tmp_path: Path) -> None:
    """``Aspects.of(app).add(HyperPodPolicy(...))`` checks the cluster in every shape; a
    violation fails the synth (aws-cdk-lib runs an App's aspects in no Stage)."""
    from hyperpod_constructs.reporting import validation_messages

    with pytest.raises(RuntimeError) as raised:
        app = _policy_shape(shape, tmp_path)
        app.synth()
    messages = validation_messages(raised.value) or [str(raised.value)[:3000]]
    violations = [m for m in messages if "HPP-MAX-COUNT" in m]
    assert violations, messages
    assert all(m.startswith(f"[{path}] ") and m.count(path) == 1 for m in violations), violations
    late = shape == "pipeline-late"  # the stage was synthesized before the policy came
    assert all(("checked after its Stage was synthesized" in m) is late for m in violations)


def test_a_policy_on_the_app_and_on_a_stage_checks_a_cluster_once(tmp_path: Path) -> None:
    from hyperpod_constructs.policy import HyperPodPolicy
    from hyperpod_constructs.reporting import validation_messages

    app = cdk.App(context={**CDK_CONTEXT, **AZ_CONTEXT}, outdir=str(tmp_path))
    policy = HyperPodPolicy(name="org", max_instance_count=8)
    stage = TrainingStage(app, "Prod")
    cdk.Aspects.of(app).add(policy)
    cdk.Aspects.of(stage).add(policy)
    with pytest.raises(RuntimeError) as raised:
        app.synth()
    messages = validation_messages(raised.value) or []
    assert len([m for m in messages if "HPP-MAX-COUNT" in m]) == 1, messages
    assert len(policy.violations) == 1
