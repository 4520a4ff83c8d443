"""Every rule says what it rests on, and its check does what its summary claims.

- The registry: every rule has a source; every error rests on AWS (an API-model shape, the
  CloudFormation schema, or an AWS page) or on the library's own Python API; a claim AWS's
  documentation does not confirm is at most a warning, and says so. The API shapes and schema
  definitions a source names exist in the installed botocore and cfn-lint.
- The claims, checked against what nobody here wrote: the instance-type catalogue for the
  deep health check rules (every catalogued type), botocore's CloudWatch model for the gate's
  namespace, botocore's SageMaker model and cfn-lint's schema for the two rendering fixes.
- The layout AWS's pages state is enforced as they state it, per provisioning mode; a compute
  group without a partition (which the API allows) is valid.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import botocore.session
import pytest
import regex
from aws_cdk import App, Size, Stack
from aws_cdk.assertions import Annotations, Match, Template

from hyperpod_constructs import (
    BatchSizeType,
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    InstanceStorage,
    MinCountGateOptions,
    NodeProvisioningMode,
    NodeRecovery,
    NodeType,
    SlurmConfigStrategy,
)
from hyperpod_constructs._core.rule import UNCONFIRMED, SourceKind
from hyperpod_constructs.enums import NetworkInterfaceType, SlurmLayout
from hyperpod_constructs.instance_type import known_names
from hyperpod_constructs.tools.convert import Options, convert_request
from hyperpod_constructs.updates import BatchSize, ScheduledUpdate
from hyperpod_constructs.validation import RULES, Severity, validate_group
from hyperpod_constructs.validation.gate_rules import gate_option_findings
from tests.conftest import ROOT, new_app
from tests.support import api_model
from tests.support.findings import errors_in
from tests.template_utils import CLUSTER_TYPE, cfn_lint, describe_matches, only
from tests.test_tokens import vpc

CPU = HyperPodInstanceType.ML_C5_XLARGE
GPU = HyperPodInstanceType.ML_P5_48XLARGE
KMS_ARN = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
PLAN_ARN = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/reserved-p5-capacity"
FSX_DNS = "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com"


def _sagemaker() -> Any:
    return botocore.session.get_session().get_service_model("sagemaker")


def _schema() -> dict[str, Any]:
    from cfnlint.schema.manager import PROVIDER_SCHEMA_MANAGER

    schema = PROVIDER_SCHEMA_MANAGER.get_resource_schema("us-east-1", CLUSTER_TYPE).schema
    return dict(schema)


# -- the registry: a source for every rule -----------------------------------------------------


def test_every_error_rests_on_aws_or_on_the_library_api() -> None:
    for rule in RULES.values():
        assert rule.source is not None, f"{rule.id} has no source"
        assert rule.source.says, rule.id
        if Severity.ERROR in {rule.severity_in(mode) for mode in NodeProvisioningMode}:
            assert rule.source.kind in (SourceKind.AWS, SourceKind.LIBRARY), (
                f"{rule.id}: an error needs an AWS source (or is about the library's own API)"
            )
        if rule.source.kind is SourceKind.UNCONFIRMED:
            assert rule.severity is Severity.WARNING, rule.id
            assert UNCONFIRMED in rule.summary, f"{rule.id}: the summary must say {UNCONFIRMED!r}"


def test_library_sources_are_only_for_the_library_api() -> None:
    """An error marked as the library's own names no AWS field it would be guessing about."""
    library = sorted(
        rule.id
        for rule in RULES.values()
        if rule.source is not None and rule.source.kind is SourceKind.LIBRARY
    )
    assert library == [
        "HP-ARG-TYPE",
        "HP-BLUEPRINT-ARGS",
        "HP-BLUEPRINT-SIZING",
        "HP-COUNT-INT",
        "HP-DHC-DISTINCT",
        "HP-GATE-POLL",
        "HP-GATE-TOKEN-DURATION",
        "HP-LIFECYCLE-FILES",
        "HP-SIZING",
        "HP-WARN-FLEX-MIXED",
        "HP-WARN-ROLE-IMMUTABLE",
    ]


def test_every_api_shape_and_schema_definition_a_source_names_exists() -> None:
    model, definitions = _sagemaker(), _schema()["definitions"]
    for rule in RULES.values():
        assert rule.source is not None
        where = rule.source.where
        if where.startswith("API "):
            shape_name, _, member = where.removeprefix("API ").partition(".")
            if shape_name.endswith("Request"):
                shape = model.operation_model(shape_name.removesuffix("Request")).input_shape
            else:
                shape = model.shape_for(shape_name)
            if member:
                assert member in shape.members, f"{rule.id}: {where} is not in the API model"
        elif where.startswith("CloudFormation "):
            for part in where.split(" ", 2)[2].split(" / "):
                name, _, prop = part.partition(".")
                assert prop in definitions[name]["properties"], f"{rule.id}: {where}"
        elif rule.source.kind is SourceKind.AWS:
            assert where.startswith(("https://docs.aws.amazon.com/", "https://aws.amazon.com/"))


def _api_member(where: str) -> Any | None:
    """The API-model member an ``API Shape.Member`` source names (None for a whole shape)."""
    shape_name, _, member = where.removeprefix("API ").partition(".")
    if not member:
        return None
    model = _sagemaker()
    if shape_name.endswith("Request"):
        shape = model.operation_model(shape_name.removesuffix("Request")).input_shape
    else:
        shape = model.shape_for(shape_name)
    return shape.members[member]


CROSS_FIELD = {
    "HP-MIN-ABOVE-COUNT": "at most instance_count; HP-MIN-RANGE states 0..6758",
    "HP-GROUP-UNIQUE": "names, not how many; HP-GROUPS-COUNT states 1..100",
}
"""Rules whose source member has a range the rule is not about (another rule states it)."""


def test_a_rule_states_the_range_of_the_api_member_it_rests_on() -> None:
    """Where a rule rests on an API member with a range (a count, a length, a list size), its
    summary states that range's upper end as the model has it today."""
    checked = 0
    for rule in RULES.values():
        assert rule.source is not None
        if not rule.source.where.startswith("API ") or rule.severity is not Severity.ERROR:
            continue
        if rule.id in CROSS_FIELD:
            continue
        member = _api_member(rule.source.where)
        if member is None or "max" not in member.metadata:
            continue
        if member.type_name == "string" and "characters" not in rule.summary:
            continue  # a length implied by a pattern the summary states instead
        low, high = member.metadata.get("min", 0), member.metadata["max"]
        stated = (f"{low}..{high}", f"..{high}", f"up to {high}", f"at most {high}")
        if (low, high) == (1, 2):
            stated += ("1 or 2",)
        assert any(text in rule.summary for text in stated), (rule.id, low, high, rule.summary)
        checked += 1
    assert checked >= 10


def test_docs_table_shows_each_source() -> None:
    docs = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    for rule in RULES.values():
        assert rule.source is not None
        assert rule.source.markdown().replace("|", "\\|") in docs, rule.id


# -- deep health checks: the claims against every catalogued type ------------------------------


def _group(itype: HyperPodInstanceType, *checks: DeepHealthCheck, count: int = 2) -> InstanceGroup:
    return InstanceGroup.compute(
        "g", instance_type=itype, instance_count=count, partition="p", deep_health_checks=checks
    )


@pytest.mark.parametrize("name", known_names())
def test_instance_connectivity_needs_an_accelerator_type_with_efa(name: str) -> None:
    """HP-DHC-CONNECTIVITY: 'InstanceConnectivity only on a GPU or Trainium type with EFA',
    for each type of the catalogue (accelerators and EFA as the catalogue lists them)."""
    itype = HyperPodInstanceType.of(name)
    rules = [f.rule for f in validate_group(_group(itype, DeepHealthCheck.INSTANCE_CONNECTIVITY))]
    refused = "HP-DHC-CONNECTIVITY" in rules
    assert refused is not (itype.is_accelerated and bool(itype.efa_capable)), (name, rules)


@pytest.mark.parametrize(
    ("name", "refused"),
    [
        ("ml.g5.xlarge", True),  # a GPU, no EFA
        ("ml.c5n.18xlarge", True),  # EFA, no GPU
        ("ml.g5.8xlarge", False),
        ("ml.p5.48xlarge", False),
        ("ml.trn1.32xlarge", False),
        ("ml.p9.96xlarge", False),  # newer than the catalogue: EFA unknown, not refused
    ],
)
def test_instance_connectivity_examples(name: str, refused: bool) -> None:
    group = _group(HyperPodInstanceType.of(name), DeepHealthCheck.INSTANCE_CONNECTIVITY)
    assert ("HP-DHC-CONNECTIVITY" in [f.rule for f in validate_group(group)]) is refused


@pytest.mark.parametrize("name", known_names())
def test_deep_health_checks_on_cpu_types_warn(name: str) -> None:
    """HP-WARN-DHC-CPU: AWS lists every deep health check for GPU and Trainium types only."""
    itype = HyperPodInstanceType.of(name)
    found = validate_group(_group(itype, DeepHealthCheck.INSTANCE_STRESS))
    warned = [f for f in found if f.rule == "HP-WARN-DHC-CPU"]
    assert bool(warned) is not itype.is_accelerated, name
    assert all(f.severity is Severity.WARNING for f in warned)


def test_no_cpu_warning_without_checks() -> None:
    assert [f.rule for f in validate_group(_group(CPU))] == []


# -- the gate's metrics namespace, against CloudWatch's model ---------------------------------

NAMESPACES = [
    "HyperPod/MinCountGate",
    "HyperPod Gate (prod)",
    "team=ml,env=prod",
    "a" * 255,
    "a" * 256,
    ":leading-colon",
    "AWS/HyperPod",
    "tab\there",
    "",
    "   ",
]


@pytest.mark.parametrize("namespace", NAMESPACES)
def test_gate_namespace_follows_put_metric_data(namespace: str) -> None:
    """HP-GATE-NAMESPACE accepts what CloudWatch's ``PutMetricData`` Namespace accepts (length,
    pattern, 'ASCII without control characters'), except the AWS/ namespaces of services."""
    model = botocore.session.get_session().get_service_model("cloudwatch")
    shape = model.operation_model("PutMetricData").input_shape.members["Namespace"]
    low, high, pattern = shape.metadata["min"], shape.metadata["max"], shape.metadata["pattern"]
    api_accepts = (
        low <= len(namespace) <= high
        and bool(regex.fullmatch(pattern, namespace))
        and namespace.isascii()
        and namespace.isprintable()
    )
    expected = api_accepts and not namespace.startswith("AWS/")
    found = gate_option_findings(MinCountGateOptions(metrics_namespace=namespace))
    assert (found == []) is expected, (namespace, [f.message() for f in found])


# -- the two rendering fixes, judged by botocore's model and cfn-lint's schema ----------------


def _cluster_properties(groups: list[InstanceGroup]) -> dict[str, Any]:
    """The ``AWS::SageMaker::Cluster`` properties of a synthesized cluster (no gate)."""
    app = new_app()
    stack = Stack(app, "Claims")
    HyperPodSlurmCluster(
        stack, "Cluster", readiness_gate=MinCountGateOptions(enabled=False), instance_groups=groups
    )
    _, cluster = only(app.synth().get_stack_by_name("Claims").template, CLUSTER_TYPE)
    return dict(cluster["Properties"])


def _rendered(*storage: InstanceStorage, update: ScheduledUpdate | None = None) -> dict[str, Any]:
    gpu = InstanceGroup.compute(
        "gpu",
        instance_type=GPU,
        instance_count=2,
        partition="gpu",
        deep_health_checks=[DeepHealthCheck.INSTANCE_STRESS],
        storage=storage,
        scheduled_update=update,
    )
    return _cluster_properties([InstanceGroup.controller("controller", instance_type=CPU), gpu])


def _oracles(properties: dict[str, Any]) -> tuple[list[str], str]:
    """What botocore's model and cfn-lint (on this one resource) say about ``properties``."""
    template = {"Resources": {"Cluster": {"Type": CLUSTER_TYPE, "Properties": properties}}}
    resolved = json.loads(json.dumps(properties))
    for group in resolved["InstanceGroups"]:
        group["ExecutionRole"] = "arn:aws:iam::123456789012:role/hyperpod"
    template["Resources"]["Cluster"]["Properties"] = resolved
    matches = [m for m in cfn_lint(template) if m.rule.id != "E3644"]  # per-region type list
    return api_model.violations(resolved), describe_matches(matches)


def _batch(properties: dict[str, Any]) -> dict[str, Any]:
    group = properties["InstanceGroups"][1]
    return dict(group["ScheduledUpdateConfig"]["DeploymentConfig"]["RollingUpdatePolicy"])


def test_percentage_batches_render_the_value_both_oracles_accept() -> None:
    update = ScheduledUpdate(
        schedule_expression="cron(0 3 ? * SUN *)",
        maximum_batch_size=BatchSize.percentage(25),
        rollback_maximum_batch_size=BatchSize.percentage(50),
    )
    properties = _rendered(update=update)
    assert _oracles(properties) == ([], "")
    # The oracles can disagree: the endpoints' value CAPACITY_PERCENT fails both.
    policy = _batch(properties)
    policy["MaximumBatchSize"]["Type"] = "CAPACITY_PERCENT"
    properties["InstanceGroups"][1]["ScheduledUpdateConfig"]["DeploymentConfig"][
        "RollingUpdatePolicy"
    ] = policy
    api, schema = _oracles(properties)
    assert any("NodeUnavailabilityType" in line for line in api), api
    assert "CAPACITY_PERCENT" in schema and "MaximumBatchSize" in schema, schema
    assert BatchSizeType.CAPACITY_PERCENT is BatchSizeType.CAPACITY_PERCENTAGE  # the old name


def test_a_root_volume_renders_its_key_and_no_size() -> None:
    root = InstanceStorage.ebs(root_volume=True, kms_key_id=KMS_ARN)
    extra = InstanceStorage.ebs(volume_size=Size.gibibytes(500))
    properties = _rendered(root, extra)
    configs = properties["InstanceGroups"][1]["InstanceStorageConfigs"]
    assert configs == [
        {"EbsVolumeConfig": {"RootVolume": True, "VolumeKmsKeyId": KMS_ARN}},
        {"EbsVolumeConfig": {"VolumeSizeInGB": 500}},
    ]
    assert _oracles(properties) == ([], "")


@pytest.mark.parametrize(
    ("storage", "fields"),
    [
        pytest.param(
            InstanceStorage.ebs(root_volume=True, volume_size=Size.gibibytes(100), kms_key_id="k"),
            ["storage[].volume_size (EbsVolumeConfig.VolumeSizeInGB)"],
            id="root-volume-with-a-size",
        ),
        pytest.param(
            InstanceStorage.ebs(root_volume=True),
            ["storage[].kms_key_id (EbsVolumeConfig.VolumeKmsKeyId)"],
            id="root-volume-without-a-key",
        ),
    ],
)
def test_root_volume_rule(storage: InstanceStorage, fields: list[str]) -> None:
    group = InstanceGroup.compute(
        "g", instance_type=CPU, instance_count=1, partition="p", storage=[storage]
    )
    found = [f for f in validate_group(group) if f.rule == "HP-EBS-ROOT-VOLUME"]
    assert [f.field for f in found] == fields
    assert all(f.is_error for f in found)


def test_convert_reads_percentage_batches_and_root_volumes(tmp_path: Path) -> None:
    """A real-shaped request (the AWS CLI reference's) with CAPACITY_PERCENTAGE batches and a
    root volume converts, and the generated app synthesizes the same cluster."""
    from tests.test_convert import comparable, synth_app

    request = json.loads(
        (ROOT / "tests" / "fixtures" / "convert" / "cli-scheduled-update.json").read_text()
    )
    worker = request["InstanceGroups"][1]
    worker["InstanceStorageConfigs"].insert(
        0, {"EbsVolumeConfig": {"RootVolume": True, "VolumeKmsKeyId": KMS_ARN}}
    )
    policy = worker["ScheduledUpdateConfig"]["DeploymentConfig"]["RollingUpdatePolicy"]
    policy["MaximumBatchSize"] = {"Type": "CAPACITY_PERCENTAGE", "Value": 10}
    source, _notes = convert_request(request, None, Options(source_name="request.json"))
    path = tmp_path / "converted.py"
    path.write_text(source)
    _, cluster = only(synth_app(path), CLUSTER_TYPE)
    assert comparable(cluster["Properties"]) == comparable(request)


# -- a training plan on any group (the API allows it) -------------------------------------------


def test_training_plans_on_controller_and_login_groups() -> None:
    properties = _cluster_properties(
        [
            InstanceGroup.controller("controller", instance_type=CPU, training_plan_arn=PLAN_ARN),
            InstanceGroup.login("login", instance_type=CPU, training_plan_arn=PLAN_ARN),
            InstanceGroup.compute("cpu", instance_type=CPU, instance_count=1, partition="cpu"),
        ]
    )
    plans = {g["InstanceGroupName"]: g.get("TrainingPlanArn") for g in properties["InstanceGroups"]}
    assert plans == {"controller": PLAN_ARN, "login": PLAN_ARN, "cpu": None}


# -- the enums the library offers are the API model's ----------------------------------------

NOT_EXPRESSIBLE = {"MultiNodeTrainingValidation": "DeepHealthCheckType"}
"""API enum values CloudFormation cannot take yet: the value -> the schema definition whose
enum lacks it (a test fails once the schema has it: then support it)."""

GROUP = "InstanceGroups[]"
ENUMS: list[tuple[str, type[Any]]] = [
    (f"{GROUP}.OnStartDeepHealthChecks[]", DeepHealthCheck),
    (
        f"{GROUP}.ScheduledUpdateConfig.DeploymentConfig.RollingUpdatePolicy.MaximumBatchSize.Type",
        BatchSizeType,
    ),
    (f"{GROUP}.SlurmConfig.NodeType", NodeType),
    (f"{GROUP}.NetworkInterface.InterfaceType", NetworkInterfaceType),
    ("NodeRecovery", NodeRecovery),
    ("Orchestrator.Slurm.SlurmConfigStrategy", SlurmConfigStrategy),
]
"""Where the library renders a value of one of its enums, as a path in ``CreateCluster``."""


def _enum_at(path: str) -> set[str]:
    shape = api_model.create_cluster_input()
    for part in path.split("."):
        name, listed = part.removesuffix("[]"), part.endswith("[]")
        shape = shape.members[name]
        if listed:
            shape = shape.member
    return set(shape.enum)


@pytest.mark.parametrize(("path", "enum"), ENUMS, ids=[path for path, _ in ENUMS])
def test_library_enums_are_the_api_models(path: str, enum: type[Any]) -> None:
    allowed = _enum_at(path)
    offered = {member.value for member in enum}
    assert offered <= allowed, f"{enum.__name__} offers values the API does not take"
    missing = allowed - offered - set(NOT_EXPRESSIBLE)
    assert not missing, f"{path}: {missing} neither offered by the library nor documented"


def test_provisioning_mode_enum_is_the_api_models() -> None:
    # STANDARD is the library's name for leaving NodeProvisioningMode out.
    assert _enum_at("NodeProvisioningMode") == {NodeProvisioningMode.CONTINUOUS.value}


@pytest.mark.parametrize(("value", "definition"), sorted(NOT_EXPRESSIBLE.items()))
def test_values_cloudformation_cannot_express_yet(value: str, definition: str) -> None:
    """MultiNodeTrainingValidation is in the API's DeepHealthCheckType, not in the schema's:
    a template with it fails cfn-lint (and CloudFormation). Documented in docs/validation.md."""
    assert value not in _schema()["definitions"][definition]["enum"]
    assert f"`{value}`" in (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")


# -- the layout AWS's pages state, per provisioning mode ----------------------------------


def _controller(**props: Any) -> InstanceGroup:
    return InstanceGroup.controller("controller", instance_type=CPU, **props)


def _compute(name: str = "cpu", **props: Any) -> InstanceGroup:
    values: dict[str, Any] = {"instance_type": CPU, "instance_count": 1, "partition": name}
    values.update(props)
    return InstanceGroup.compute(name, **values)


Build = Callable[[Stack], list[InstanceGroup]]
CONTINUOUS, STANDARD = NodeProvisioningMode.CONTINUOUS, NodeProvisioningMode.STANDARD

LAYOUT_ERRORS: list[tuple[str, Build]] = [
    (
        "HP-PARTITION-HEAD-NODE",
        lambda s: [
            InstanceGroup(
                name="controller",
                node_type=NodeType.CONTROLLER,
                instance_type=CPU,
                instance_count=1,
                partition="ctl",
            ),
            _compute(),
        ],
    ),
    (
        "HP-CONTROLLER-ONE",
        lambda s: [_controller(), InstanceGroup.controller("c2", instance_type=CPU), _compute()],
    ),
    (
        "HP-LOGIN-MAX",
        lambda s: [
            _controller(),
            InstanceGroup.login("l1", instance_type=CPU),
            InstanceGroup.login("l2", instance_type=CPU),
            _compute(),
        ],
    ),
    (
        "HP-FSX-NEEDS-VPC",
        lambda s: [
            _controller(),
            _compute(storage=[InstanceStorage.fsx_lustre(dns_name=FSX_DNS, mount_name="abc")]),
        ],
    ),
]
"""What the Slurm configuration reference refuses, in either mode."""


def _warnings_and_errors(stack: Stack) -> tuple[list[str], list[str]]:
    found = Annotations.from_stack(stack).find_warning("*", Match.any_value())
    return [str(m.entry.data) for m in found], [f.rule for f in errors_in(stack)]


@pytest.mark.parametrize("mode", [CONTINUOUS, STANDARD], ids=["continuous", "standard"])
@pytest.mark.parametrize(("rule", "groups"), LAYOUT_ERRORS, ids=[r for r, _ in LAYOUT_ERRORS])
def test_layout_the_reference_refuses_is_an_error(
    rule: str, groups: Build, mode: NodeProvisioningMode
) -> None:
    stack = Stack(App(), "Test")
    cluster = HyperPodSlurmCluster(
        stack, "Cluster", instance_groups=groups(stack), node_provisioning_mode=mode
    )
    (finding,) = cluster.findings()  # the errors (a failing synth shows no warnings)
    assert finding.rule == rule and finding.severity is Severity.ERROR, finding.message()
    assert RULES[rule].severity_in(mode) is Severity.ERROR


MODE_ERRORS: list[tuple[str, dict[str, Any], Build]] = [
    (
        "HP-LAYOUT-NEEDS-STANDARD",
        {"slurm_layout": SlurmLayout.LIFECYCLE_SCRIPTS},
        lambda s: [_controller(), _compute()],
    ),
    (
        "HP-STRATEGY-IN-CONTINUOUS",
        {"slurm_config_strategy": SlurmConfigStrategy.MERGE},
        lambda s: [_controller(), _compute()],
    ),
    (
        "HP-MULTI-HEAD-IN-CONTINUOUS",
        {},
        lambda s: [_controller(instance_count=2), _compute()],
    ),
]
"""What the continuous provisioning guide refuses in Continuous mode, and Standard allows."""


@pytest.mark.parametrize(("rule", "props", "groups"), MODE_ERRORS, ids=[r for r, *_ in MODE_ERRORS])
def test_continuous_limits_are_errors_in_continuous_mode_only(
    rule: str, props: dict[str, Any], groups: Build
) -> None:
    stack = Stack(App(), "Test")
    cluster = HyperPodSlurmCluster(stack, "Cluster", instance_groups=groups(stack), **props)
    (finding,) = cluster.findings()
    assert finding.rule == rule and finding.severity is Severity.ERROR, finding.message()
    # The fix is AWS's: never more controller nodes in Continuous mode.
    assert "raise" not in finding.fix and "acknowledge" not in finding.fix, finding.fix

    standard = Stack(App(), "Test")
    HyperPodSlurmCluster(
        standard,
        "Cluster",
        instance_groups=groups(standard),
        node_provisioning_mode=STANDARD,
        **props,
    )
    assert _warnings_and_errors(standard)[1] == []
    assert RULES[rule].severity_in(STANDARD) is None
    assert RULES[rule].severity_in(CONTINUOUS) is Severity.ERROR


def test_two_controller_groups_are_not_fixed_by_more_controller_nodes() -> None:
    """In Continuous mode the fix never advises more controller nodes (no multi-head there)."""
    stack = Stack(App(), "Test")
    cluster = HyperPodSlurmCluster(
        stack,
        "Cluster",
        instance_groups=[_controller(), InstanceGroup.controller("c2", instance_type=CPU)],
    )
    (finding,) = [f for f in cluster.findings() if f.rule == "HP-CONTROLLER-ONE"]
    assert "instance_count" not in finding.fix and "multi-head" in finding.fix, finding.fix


def test_no_rule_rests_on_an_unconfirmed_layout_claim() -> None:
    """The re-audit: every layout, partition and mode rule cites the AWS page that states it,
    quoting its sentence; only HP-WARN-FLEX-REPEAT is still unconfirmed."""
    unconfirmed = sorted(
        rule.id
        for rule in RULES.values()
        if rule.source is not None and rule.source.kind is SourceKind.UNCONFIRMED
    )
    assert unconfirmed == ["HP-WARN-FLEX-REPEAT"]
    for rule_id in (
        "HP-CONTROLLER-ONE",
        "HP-LOGIN-MAX",
        "HP-MULTI-HEAD-IN-CONTINUOUS",
        "HP-PARTITION-HEAD-NODE",
        "HP-WARN-PARTITION-MISSING",
        "HP-WARN-PARTITION-DEV",
        "HP-FSX-NEEDS-VPC",
        "HP-LAYOUT-NEEDS-STANDARD",
        "HP-STRATEGY-IN-CONTINUOUS",
    ):
        source = RULES[rule_id].source
        assert source is not None and source.where.startswith("https://docs.aws.amazon.com/")
        assert '"' in source.says, f"{rule_id}: quote the page's sentence"


def test_a_compute_group_without_a_partition_is_valid() -> None:
    """The API requires only NodeType: the group renders no PartitionNames, synthesizes, and
    gets one warning that says what Slurm does with its nodes (they join dev only)."""
    stack = Stack(App(), "Test")
    group = InstanceGroup.compute("cpu", instance_type=CPU, instance_count=1)
    HyperPodSlurmCluster(stack, "Cluster", instance_groups=[_controller(), group])
    warnings, errors = _warnings_and_errors(stack)
    assert errors == []
    (warning,) = warnings
    assert "[HP-WARN-PARTITION-MISSING]" in warning and "'dev'" in warning, warning
    assert UNCONFIRMED not in warning
    properties = only(Template.from_stack(stack).to_json(), CLUSTER_TYPE)[1]["Properties"]
    assert properties["InstanceGroups"][1]["SlurmConfig"] == {"NodeType": "Compute"}
    assert api_model.violations(properties) == []  # botocore's CreateCluster shapes agree


def test_compute_partition_is_typed_optional() -> None:
    """``partition`` defaults to None and its annotation says so (mypy accepts None)."""
    import inspect

    parameter = inspect.signature(InstanceGroup.compute).parameters["partition"]
    assert parameter.default is None
    assert parameter.annotation == "str | None"  # postponed annotations: the source text


def test_fsx_with_a_vpc_warns_only_about_the_ports_it_cannot_open() -> None:
    """Given by names, the file system's Lustre ports are the owner's to open: that warning
    (HP-FSX-PORTS) alone, no VPC finding."""
    stack = Stack(App(), "Test")
    groups = [
        _controller(),
        _compute(storage=[InstanceStorage.fsx_lustre(dns_name=FSX_DNS, mount_name="abc")]),
    ]
    HyperPodSlurmCluster(stack, "Cluster", vpc=vpc(stack), instance_groups=groups)
    warnings, errors = _warnings_and_errors(stack)
    assert errors == []
    assert [re.findall(r"\[(HP-[A-Z-]+)\]", warning) for warning in warnings] == [["HP-FSX-PORTS"]]


def _template(groups: list[InstanceGroup]) -> dict[str, Any]:
    app = App()
    stack = Stack(app, "Plan")
    HyperPodSlurmCluster(stack, "Cluster", cluster_name="plan", instance_groups=groups)
    return dict(app.synth().get_stack_by_name("Plan").template)


def test_plan_reads_the_one_statement_of_the_layout() -> None:
    """plan compares a Compute group without a partition like any other group, and its note on
    removing the controller group is the layout's own sentence (not a copy of it)."""
    from hyperpod_constructs._core import layout
    from hyperpod_constructs.tools.plan import GroupChange, plan_stack

    old = _template([_controller(), _compute("gpu")])
    new = _template([_controller(), _compute("gpu"), _compute("cpu", partition=None)])
    added = plan_stack(old, new, stack="Plan", baseline="Plan")
    (cluster,) = added.clusters
    (cpu,) = [g for g in cluster.groups if g.name == "cpu"]
    assert cpu.change is GroupChange.ADDED and cpu.node_type == "Compute"
    assert added.exit_code == 0

    headless = json.loads(json.dumps(new))
    (resource,) = [r for r in headless["Resources"].values() if r["Type"] == CLUSTER_TYPE]
    groups = resource["Properties"]["InstanceGroups"]
    resource["Properties"]["InstanceGroups"] = [
        g for g in groups if g["InstanceGroupName"] != "controller"
    ]
    removed = plan_stack(new, headless, stack="Plan", baseline="Plan")
    (controller,) = [g for g in removed.clusters[0].groups if g.name == "controller"]
    assert controller.change is GroupChange.REFUSED
    assert f"a cluster has {layout.CONTROLLER.groups()}:" in controller.notes[1]
    assert layout.CONTROLLER.groups() == "exactly one Controller group"
