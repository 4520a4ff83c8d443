"""A fuzz of the public entry points: every bad input gives a clear error, never a crash and
never silent acceptance.

Table-driven (a list of bad values per parameter of every public constructor, factory and
helper) plus hypothesis (random values of random types for the parameters of an instance
group and of the cluster). Each input is classified:

- *clear*: construction records a finding (reported at synth) or raises one of the library's
  errors (``HyperPodValidationError`` / ``HyperPodArgumentError`` / ``SizingError``), and the
  message names the parameter;
- *crash*: any other exception (or a library error that does not name the parameter);
- *silent*: accepted without a word.

docs/validation.md states how many inputs this tries (``TABLE_COUNT`` + the hypothesis
examples); a test checks the number there.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, CfnParameter, Duration, RemovalPolicy, Size, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sns as sns
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hyperpod_constructs import (
    AccountingDatabase,
    AutoPatchStrategy,
    BatchSize,
    BatchSizeType,
    CapacityType,
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    HyperPodValidationError,
    InstanceGroup,
    InstanceStorage,
    LifecycleScripts,
    MinCountGateOptions,
    NetworkInterfaceType,
    NodeProvisioningMode,
    NodeRecovery,
    NodeType,
    ScheduledUpdate,
    SlurmConfigStrategy,
    SlurmLayout,
)
from hyperpod_constructs.instance_group import GROUP_FIELDS
from hyperpod_constructs.sizing import (
    SizingError,
    accelerator_count_of,
    fsdp_world_size,
    instances_for_accelerators,
)
from hyperpod_constructs.validation import RULES
from tests.support.api_model import create_cluster_input, violations
from tests.support.depth import examples
from tests.support.findings import report_of

REPO = Path(__file__).resolve().parent.parent
CPU = HyperPodInstanceType.ML_C5_XLARGE
GPU = HyperPodInstanceType.ML_P5_48XLARGE
NAN, INF = float("nan"), float("inf")

Build = Callable[[Stack, Any], object]


# -- builders: a valid cluster, with one parameter of one entry point replaced -----------


def _cluster(stack: Stack, groups: list[Any] | None = None, **props: Any) -> object:
    chosen = groups if groups is not None else [_controller(), _compute()]
    return HyperPodSlurmCluster(stack, "Cluster", instance_groups=chosen, **props)


def _controller(**props: Any) -> InstanceGroup:
    return InstanceGroup.controller("controller", **{"instance_type": CPU, **props})


def _compute(**props: Any) -> InstanceGroup:
    values: dict[str, Any] = {"instance_type": CPU, "partition": "cpu", "instance_count": 2}
    values.update(props)
    name = values.pop("name", "cpu")
    return InstanceGroup.compute(name, **values)


def cluster_prop(parameter: str) -> Build:
    if parameter == "instance_groups":
        return lambda stack, value: HyperPodSlurmCluster(stack, "Cluster", instance_groups=value)
    return lambda stack, value: _cluster(stack, **{parameter: value})


def compute_prop(parameter: str) -> Build:
    return lambda stack, value: _cluster(stack, [_controller(), _compute(**{parameter: value})])


def controller_prop(parameter: str) -> Build:
    def build(stack: Stack, value: Any) -> object:
        group = (
            InstanceGroup.controller(value, instance_type=CPU)
            if parameter == "name"
            else _controller(**{parameter: value})
        )
        return _cluster(stack, [group, _compute()])

    return build


def login_prop(parameter: str) -> Build:
    def build(stack: Stack, value: Any) -> object:
        login = (
            InstanceGroup.login(value, instance_type=CPU)
            if parameter == "name"
            else InstanceGroup.login("login", **{"instance_type": CPU, parameter: value})
        )
        return _cluster(stack, [_controller(), login, _compute()])

    return build


def storage(factory: Callable[..., InstanceStorage], parameter: str, **valid: Any) -> Build:
    def build(stack: Stack, value: Any) -> object:
        item = factory(**{**valid, parameter: value})
        return _cluster(stack, [_controller(), _compute(storage=[item])], vpc=None)

    return build


def lifecycle_s3(parameter: str) -> Build:
    def build(stack: Stack, value: Any) -> object:
        valid: dict[str, Any] = {
            "bucket": s3.Bucket.from_bucket_name(stack, "B", "sagemaker-x"),
            "on_create": "on_create.sh",
            "prefix": "lifecycle",
        }
        valid[parameter] = value
        bucket = valid.pop("bucket")
        return _cluster(stack, lifecycle_scripts=LifecycleScripts.from_s3(bucket, **valid))

    return build


def lifecycle_directory(stack: Stack, value: Any) -> object:
    return _cluster(stack, lifecycle_scripts=LifecycleScripts.from_directory(value))


def lifecycle_option(parameter: str) -> Build:
    def build(stack: Stack, value: Any) -> object:
        folder = str(REPO / "examples" / "lifecycle")
        scripts = LifecycleScripts.from_directory(folder, **{parameter: value})
        return _cluster(stack, lifecycle_scripts=scripts)

    return build


def accounting(parameter: str) -> Build:
    def build(stack: Stack, value: Any) -> object:
        secret = secretsmanager.Secret.from_secret_name_v2(stack, "S", "db")
        values: dict[str, Any] = {"endpoint": "db.example.com", "secret": secret, parameter: value}
        return _cluster(stack, accounting_database=AccountingDatabase(**values))

    return build


def gate(parameter: str) -> Build:
    def build(stack: Stack, value: Any) -> object:
        options = MinCountGateOptions(**{parameter: value})
        groups = [_controller(), _compute(min_instance_count=1)]
        return _cluster(stack, groups, readiness_gate=options)

    return build


def scheduled_update(parameter: str) -> Build:
    def build(stack: Stack, value: Any) -> object:
        update = ScheduledUpdate(**{"schedule_expression": CRON, parameter: value})
        return _cluster(stack, [_controller(), _compute(scheduled_update=update)])

    return build


def batch_size(factory: Callable[[Any], BatchSize]) -> Build:
    def build(stack: Stack, value: Any) -> object:
        update = ScheduledUpdate(schedule_expression=CRON, maximum_batch_size=factory(value))
        return _cluster(stack, [_controller(), _compute(scheduled_update=update)])

    return build


def lustre_file_system(stack: Stack, value: Any) -> object:
    storage = [InstanceStorage.lustre_file_system(value)]
    return _cluster(stack, [_controller(), _compute(storage=storage)], vpc=None)


def instance_type_of(stack: Stack, value: Any) -> object:
    return _cluster(stack, [_controller(), _compute(instance_type=HyperPodInstanceType.of(value))])


def sized_type_of(stack: Stack, value: Any) -> object:
    group = InstanceGroup.compute(
        "gpu", instance_type=HyperPodInstanceType.of(value), partition="gpu", min_accelerators=8
    )
    return _cluster(stack, [_controller(), group])


def helper(function: Callable[[Any], object]) -> Build:
    return lambda _stack, value: function(value)


# -- objects a value may be (built in the stack under test) ----------------------------


@dataclass(frozen=True)
class Made:
    """A library or CDK object as a random value, built in the stack under test (constructs
    need a scope): a role, a subnet selection, a gate option set, a token, ..."""

    label: str
    make: Callable[[Stack], Any]

    def __repr__(self) -> str:
        return f"<{self.label}>"


def realized(stack: Stack, value: Any) -> Any:
    """``value``, or the object it makes in ``stack``."""
    return value.make(stack) if isinstance(value, Made) else value


def _fresh(stack: Stack, kind: str) -> str:
    return f"{kind}{len(stack.node.children)}"


def _subnet(stack: Stack) -> ec2.ISubnet:
    return ec2.Subnet.from_subnet_id(stack, _fresh(stack, "Subnet"), "subnet-0123456789abcdef0")


def _security_group(stack: Stack) -> ec2.ISecurityGroup:
    return ec2.SecurityGroup.from_security_group_id(
        stack, _fresh(stack, "Sg"), "sg-0123456789abcdef0"
    )


def _parameter(stack: Stack, kind: str) -> Any:
    parameter = CfnParameter(stack, _fresh(stack, "Param"), type=kind)
    if kind == "Number":
        return parameter.value_as_number
    return parameter.value_as_list if kind == "CommaDelimitedList" else parameter.value_as_string


CRON = "cron(0 3 ? * SUN *)"
STRING_TOKEN = Made("string token", lambda s: _parameter(s, "String"))
NUMBER_TOKEN = Made("number token", lambda s: _parameter(s, "Number"))
OBJECTS = [
    Made("explicit subnets", lambda s: ec2.SubnetSelection(subnets=[_subnet(s)])),
    Made("no subnets", lambda s: ec2.SubnetSelection(subnets=[])),
    Made("private subnets", lambda s: ec2.SubnetSelection(
        subnet_type=ec2.SubnetType.PRIVATE_ISOLATED)),
    Made("[security group]", lambda s: [_security_group(s)]),
    Made("security group", _security_group),
    Made("6 security groups", lambda s: [_security_group(s) for _ in range(6)]),
    Made("vpc", lambda s: ec2.Vpc.from_vpc_attributes(
        s, _fresh(s, "Vpc"), vpc_id="vpc-0123456789abcdef0", availability_zones=["us-east-1a"],
        private_subnet_ids=["subnet-0123456789abcdef0"])),
    Made("imported role", lambda s: iam.Role.from_role_arn(
        s, _fresh(s, "Role"), "arn:aws:iam::123456789012:role/x")),
    Made("bucket", lambda s: s3.Bucket.from_bucket_name(s, _fresh(s, "Bucket"), "sagemaker-x")),
    Made("scripts in S3", lambda s: LifecycleScripts.from_s3(
        s3.Bucket.from_bucket_name(s, _fresh(s, "Bucket"), "sagemaker-x"),
        on_create="on_create.sh")),
    Made("scripts by URI", lambda s: LifecycleScripts.from_s3_uri(
        "s3://sagemaker-x/lifecycle", on_create="on_create.sh")),
    Made("gate options", lambda s: MinCountGateOptions(timeout=Duration.hours(4))),
    Made("gate off", lambda s: MinCountGateOptions(enabled=False)),
    Made("scheduled update", lambda s: ScheduledUpdate(schedule_expression=CRON)),
    Made("EBS", lambda s: [InstanceStorage.ebs(volume_size=Size.gibibytes(100))]),
    Made("FSx", lambda s: [InstanceStorage.fsx_open_zfs(
        dns_name="fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com")]),
    Made("database", lambda s: AccountingDatabase(
        endpoint="db.example.com",
        secret=secretsmanager.Secret.from_secret_name_v2(s, _fresh(s, "Secret"), "db"))),
    Made("topic", lambda s: sns.Topic.from_topic_arn(
        s, _fresh(s, "Topic"), "arn:aws:sns:us-east-1:123456789012:t")),
    STRING_TOKEN,
    NUMBER_TOKEN,
    Made("list token", lambda s: _parameter(s, "CommaDelimitedList")),
    Made("groups", lambda s: [_controller(), _compute()]),
    Made("controller group", lambda s: _controller()),
    Made("Size", lambda s: Size.gibibytes(8)),
    Made("Duration", lambda s: Duration.minutes(3)),
]  # fmt: skip
# -- the table ---------------------------------------------------------------------------

WRONG_INTS = [2.5, True, NAN, INF, -INF, "4", [4]]
WRONG_NAMES = ["gpu\n", "", "a" * 64, "gpu_1", "gpu-", "日本", "../x", 5, None, b"gpu"]
WRONG_BOOLS = ["no", "yes", 1, 0, None, NAN]
WRONG_DURATIONS = [60, "1h", None, 2.5]
WRONG_TYPES = ["ml.c5.xlarge", None, 5, HyperPodInstanceType.of("ml.c5.xlarge\n")]
WRONG_LISTS = [None, 5, "InstanceStress", {"a": 1}, [5], ["InstanceStress"]]

# (entry point, parameter name as messages show it, builder, bad values)
TABLE: list[tuple[str, str, Build, list[Any]]] = [
    ("HyperPodSlurmCluster", "cluster_name", cluster_prop("cluster_name"), WRONG_NAMES[:-2]),
    ("HyperPodSlurmCluster", "instance_groups", cluster_prop("instance_groups"),
     [None, "gpu", 5, [None], [5], ["cpu"]]),
    ("HyperPodSlurmCluster", "node_provisioning_mode", cluster_prop("node_provisioning_mode"),
     ["Continuous", 5, True]),
    ("HyperPodSlurmCluster", "node_recovery", cluster_prop("node_recovery"), ["Automatic", 1]),
    ("HyperPodSlurmCluster", "execution_role", cluster_prop("execution_role"),
     ["arn:aws:iam::123456789012:role/x", 5]),
    ("HyperPodSlurmCluster", "vpc", cluster_prop("vpc"), ["vpc-0123", 5]),
    ("HyperPodSlurmCluster", "vpc_subnets", cluster_prop("vpc_subnets"), ["subnet-1", 5]),
    ("HyperPodSlurmCluster", "security_groups", cluster_prop("security_groups"),
     ["sg-1", 5, [5]]),
    ("HyperPodSlurmCluster", "slurm_config_strategy", cluster_prop("slurm_config_strategy"),
     ["Managed", 5]),
    ("HyperPodSlurmCluster", "accounting_database", cluster_prop("accounting_database"),
     ["db.example.com", 5]),
    ("HyperPodSlurmCluster", "lifecycle_scripts", cluster_prop("lifecycle_scripts"),
     ["s3://sagemaker-x/", 5]),
    ("HyperPodSlurmCluster", "tags", cluster_prop("tags"),
     [{"aws:team": "x"}, {"AWS:team": "x"}, {"k": 5}, {5: "v"}, {"k" * 129: "v"},
      {"k": "v" * 257}, {"k\n": "v"}, "k=v", ["k"], 5]),
    ("HyperPodSlurmCluster", "readiness_gate", cluster_prop("readiness_gate"),
     [{"enabled": False}, "off", 5]),
    ("HyperPodSlurmCluster", "slurm_layout", cluster_prop("slurm_layout"),
     ["LIFECYCLE_SCRIPTS", None, 5]),
    ("HyperPodSlurmCluster", "declare_slurm_orchestrator",
     cluster_prop("declare_slurm_orchestrator"), ["yes", None, 1]),
    ("HyperPodSlurmCluster", "removal_policy", cluster_prop("removal_policy"),
     [RemovalPolicy.SNAPSHOT, "Retain", 5]),
    ("HyperPodSlurmCluster", "node_provisioning_mode", cluster_prop("node_provisioning_mode"),
     [None]),
    ("HyperPodSlurmCluster", "cluster_name", cluster_prop("cluster_name"), [NUMBER_TOKEN]),
    ("HyperPodSlurmCluster", "node_recovery", cluster_prop("node_recovery"), [NUMBER_TOKEN]),
    ("InstanceGroup.compute", "name", compute_prop("name"), WRONG_NAMES),
    ("InstanceGroup.compute", "instance_type", compute_prop("instance_type"), WRONG_TYPES),
    ("InstanceGroup.compute", "partition", compute_prop("partition"),
     ["gpu\n", "", "gpu_a", 5, "p" * 1025]),
    ("InstanceGroup.compute", "instance_count", compute_prop("instance_count"),
     [*WRONG_INTS, -1, 6759]),
    ("InstanceGroup.compute", "min_instance_count", compute_prop("min_instance_count"),
     [*WRONG_INTS, -1, 3]),
    ("InstanceGroup.compute", "min_accelerators", compute_prop("min_accelerators"),
     [*WRONG_INTS, 0, -8]),
    ("InstanceGroup.compute", "threads_per_core", compute_prop("threads_per_core"),
     [*WRONG_INTS, 0, 3]),
    ("InstanceGroup.compute", "deep_health_checks", compute_prop("deep_health_checks"),
     WRONG_LISTS),
    ("InstanceGroup.compute", "storage", compute_prop("storage"), [None, 5, "ebs", [5], [None]]),
    ("InstanceGroup.compute", "training_plan_arn", compute_prop("training_plan_arn"),
     [5, "arn:aws:sagemaker:us-east-1:123456789012:training-plan/x\n", ""]),
    ("InstanceGroup.compute", "image_id", compute_prop("image_id"),
     [5, "ami-0123456789abcdef0\n", "ami-1", ""]),
    ("InstanceGroup.compute", "execution_role", compute_prop("execution_role"), ["arn:x", 5]),
    ("InstanceGroup.compute", "lifecycle_scripts", compute_prop("lifecycle_scripts"),
     ["s3://x", 5]),
    ("InstanceGroup.compute", "vpc_subnets", compute_prop("vpc_subnets"),
     ["subnet-0123", 5, ["subnet-0123"]]),
    ("InstanceGroup.compute", "security_groups", compute_prop("security_groups"),
     ["sg-0123", 5, ["sg-0123"]]),
    ("InstanceGroup.compute", "scheduled_update", compute_prop("scheduled_update"),
     ["cron(0 3 ? * SUN *)", 5]),
    ("InstanceGroup.compute", "network_interface", compute_prop("network_interface"),
     ["efa", 5]),
    ("InstanceGroup.compute", "capacity_type", compute_prop("capacity_type"), ["Spot", 5]),
    ("InstanceGroup.compute", "auto_patch", compute_prop("auto_patch"), ["WhenIdle", 5]),
    ("InstanceGroup.compute", "instance_types", compute_prop("instance_types"),
     [[], 5, "ml.p5.48xlarge", ["ml.p5.48xlarge"]]),
    ("InstanceGroup.compute", "name", compute_prop("name"), [NUMBER_TOKEN]),
    ("InstanceGroup.compute", "partition", compute_prop("partition"), [NUMBER_TOKEN]),
    ("InstanceGroup.compute", "instance_count", compute_prop("instance_count"), [STRING_TOKEN]),
    ("InstanceGroup.compute", "min_instance_count", compute_prop("min_instance_count"),
     [STRING_TOKEN]),
    ("InstanceGroup.compute", "threads_per_core", compute_prop("threads_per_core"),
     [STRING_TOKEN]),
    ("InstanceGroup.compute", "training_plan_arn", compute_prop("training_plan_arn"),
     [NUMBER_TOKEN]),
    ("InstanceGroup.compute", "image_id", compute_prop("image_id"), [NUMBER_TOKEN]),
    ("InstanceGroup.compute", "security_groups", compute_prop("security_groups"),
     [Made("[security group]", lambda s: [_security_group(s)])]),
    ("ScheduledUpdate", "schedule_expression", scheduled_update("schedule_expression"),
     [None, 5, "daily", "cron(0 3 * * SUN)", NUMBER_TOKEN]),
    ("ScheduledUpdate", "maximum_batch_size", scheduled_update("maximum_batch_size"),
     [5, "1", BatchSize.instances(0)]),
    ("ScheduledUpdate", "rollback_maximum_batch_size",
     scheduled_update("rollback_maximum_batch_size"), [5, BatchSize.instances(1)]),
    ("ScheduledUpdate", "wait_interval", scheduled_update("wait_interval"),
     [5, "PT5M", Duration.hours(2), Duration.millis(1500)]),
    ("ScheduledUpdate", "rollback_alarms", scheduled_update("rollback_alarms"),
     ["alarm", [5], [""], [" "], ["a" * 256], [f"a{i}" for i in range(11)], None]),
    ("BatchSize.instances", "maximum_batch_size", batch_size(BatchSize.instances),
     [0, -1, 1.5, True, "1"]),
    ("BatchSize.percentage", "maximum_batch_size", batch_size(BatchSize.percentage),
     [0, NAN, None]),
    ("InstanceStorage.lustre_file_system", "file_system", lustre_file_system,
     ["fs-0123456789abcdef0", None, 5]),
    ("InstanceGroup.controller", "name", controller_prop("name"), WRONG_NAMES),
    ("InstanceGroup.controller", "instance_type", controller_prop("instance_type"), WRONG_TYPES),
    ("InstanceGroup.controller", "instance_count", controller_prop("instance_count"),
     [*WRONG_INTS, 0]),
    ("InstanceGroup.controller", "storage", controller_prop("storage"), [None, 5]),
    ("InstanceGroup.login", "instance_count", login_prop("instance_count"), WRONG_INTS),
    ("InstanceGroup.login", "threads_per_core", login_prop("threads_per_core"), [3, "2"]),
    ("HyperPodInstanceType.of", "instance_type", instance_type_of,
     ["p5.48xlarge", "ml.p5.48xlarge\n", " ml.p5.48xlarge", "", 5, None, ["ml.p5.48xlarge"],
      {"name": "ml.p5.48xlarge"}]),
    ("HyperPodInstanceType.of, sized", "instance_type", sized_type_of,
     [["ml.p5.48xlarge"], {"name": "ml.p5.48xlarge"}, 5, None]),
    ("InstanceStorage.ebs", "volume_size",
     storage(InstanceStorage.ebs, "volume_size"), [None, 500, "500", Size.mebibytes(1536)]),
    ("InstanceStorage.ebs", "root_volume",
     storage(InstanceStorage.ebs, "root_volume", volume_size=Size.gibibytes(100)),
     ["yes", 1, 0]),
    ("InstanceStorage.ebs", "kms_key_id",
     storage(InstanceStorage.ebs, "kms_key_id", volume_size=Size.gibibytes(100)),
     [5, "alias/my key", "k\n"]),
    ("InstanceStorage.fsx_lustre", "mount_path",
     storage(InstanceStorage.fsx_lustre, "mount_path",
             dns_name="fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com", mount_name="abc"),
     ["/fsx/..", "/fsx/../etc", "fsx", "/fsx/", "//fsx", "/fsx\n", 5]),
    ("InstanceStorage.fsx_lustre", "mount_name",
     storage(InstanceStorage.fsx_lustre, "mount_name",
             dns_name="fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com"),
     [None, "toolongname", 5, "ab\n"]),
    ("InstanceStorage.fsx_open_zfs", "dns_name",
     storage(InstanceStorage.fsx_open_zfs, "dns_name"), [None, 5, "fsx.example.com"]),
    ("LifecycleScripts.from_s3", "on_create", lifecycle_s3("on_create"),
     [None, "", "bin/on_create.sh", 5, "on_create.sh\n", ".."]),
    ("LifecycleScripts.from_s3", "prefix", lifecycle_s3("prefix"),
     ["../x", "a/../b", "s3://sagemaker-x/y", "a b", "a\tb", "a//b", 5]),
    ("LifecycleScripts.from_s3", "bucket", lifecycle_s3("bucket"), ["sagemaker-x", None, 5]),
    ("LifecycleScripts.from_directory", "path", lifecycle_directory,
     [None, 5, "no-such-folder-anywhere"]),
    ("LifecycleScripts.from_directory", "exclude", lifecycle_option("exclude"),
     [None, 5, "*.md", [5], b"x", {"*.md"}]),
    ("LifecycleScripts.from_directory", "include", lifecycle_option("include"),
     [5, "*.sh", [None], 2.5]),
    ("AccountingDatabase", "endpoint", accounting("endpoint"), [5, "bad_host", "", "db\n"]),
    ("AccountingDatabase", "port", accounting("port"), [True, 0, 65536, "3306", NAN, 2.5]),
    ("AccountingDatabase", "database_name", accounting("database_name"), [5, "a-b", ""]),
    ("AccountingDatabase", "secret", accounting("secret"), ["arn:secret", None]),
    ("MinCountGateOptions", "enabled", gate("enabled"), WRONG_BOOLS),
    ("MinCountGateOptions", "dashboard", gate("dashboard"), WRONG_BOOLS),
    ("MinCountGateOptions", "create_notification_topic", gate("create_notification_topic"),
     WRONG_BOOLS),
    ("MinCountGateOptions", "timeout", gate("timeout"), [*WRONG_DURATIONS, Duration.hours(13)]),
    ("MinCountGateOptions", "poll_interval", gate("poll_interval"),
     [*WRONG_DURATIONS, Duration.seconds(5)]),
    ("MinCountGateOptions", "notification_topic", gate("notification_topic"), ["arn:sns", 5]),
    ("MinCountGateOptions", "metrics_namespace", gate("metrics_namespace"),
     ["AWS/HyperPod", "", ":x", "n" * 256, "a\nb", "tab\t", 5, None]),
    ("instances_for_accelerators", "min_accelerators",
     helper(lambda v: instances_for_accelerators(GPU, v)), [*WRONG_INTS, 0, -1]),
    ("accelerator_count_of", "accelerators_per_instance",
     helper(lambda v: accelerator_count_of(GPU, accelerators_per_instance=v)),
     [*WRONG_INTS, 0, 9]),
    ("fsdp_world_size", "data_parallel", helper(fsdp_world_size), [*WRONG_INTS, 0]),
    ("instances_for_accelerators", "instance_type",
     helper(lambda v: instances_for_accelerators(v, 8)), [*WRONG_TYPES[:3], STRING_TOKEN]),
    ("accelerator_count_of", "instance_type", helper(accelerator_count_of),
     [*WRONG_TYPES[:3], STRING_TOKEN]),
    ("FsdpLayout.nodes_for", "instance_type", helper(fsdp_world_size(8).nodes_for),
     WRONG_TYPES[:3]),
]  # fmt: skip

HELPERS = {
    "instances_for_accelerators",
    "accelerator_count_of",
    "fsdp_world_size",
    "FsdpLayout.nodes_for",
}
CASES = [
    pytest.param(entry, parameter, build, value, id=f"{entry}.{parameter}[{index}]")
    for entry, parameter, build, values in TABLE
    for index, value in enumerate(values)
]
TABLE_COUNT = len(CASES)
HYPOTHESIS_EXAMPLES = 20
"""Per hypothesis test (two of them)."""


@dataclass(frozen=True)
class Outcome:
    kind: str
    """``clear``, ``crash`` or ``silent``."""
    text: str


def outcome(build: Build, value: Any, parameter: str, *, stack: Stack | None = None) -> Outcome:
    """Build the app with ``value`` (in ``stack``, default a new one); classify what
    happened."""
    stack = stack or Stack(App(), "Fuzz")
    try:
        build(stack, realized(stack, value))
        text = report_of(stack)
    except (HyperPodValidationError, SizingError) as error:
        text = str(error)
        return Outcome("clear" if _names(text, parameter) else "crash", text)
    except Exception as error:  # any other exception is what we count
        return Outcome("crash", f"{type(error).__name__}: {error}")
    if not text:
        return Outcome("silent", "")
    return Outcome("clear" if _names(text, parameter) else "crash", text)


def _names(text: str, parameter: str) -> bool:
    """The message names the parameter (a sizing helper may say ``min_accelerators=...``)."""
    return re.search(rf"\b{re.escape(parameter)}\b", text) is not None


@pytest.mark.deep(sample=60)
@pytest.mark.parametrize(("entry", "parameter", "build", "value"), CASES)
def test_bad_input_is_reported_clearly(
    entry: str, parameter: str, build: Build, value: Any
) -> None:
    result = outcome(build, value, parameter)
    assert result.kind == "clear", f"{entry}({parameter}={value!r}): {result}"
    assert "Traceback" not in result.text


def test_a_fuzzed_app_fails_the_synth_without_a_crash(tmp_path: Path) -> None:
    """Construction records the findings; the synth then fails on them (validation), never
    inside the library (rendering a group or option it could not read)."""
    app = App(outdir=str(tmp_path))
    built = 0
    for index, (entry, _parameter, build, values) in enumerate(TABLE):
        if entry in HELPERS:
            continue  # the sizing helpers build no app
        stack = Stack(app, f"S{index}")
        try:
            build(stack, realized(stack, values[0]))
        except HyperPodValidationError:
            continue  # refused at once (a factory's argument): nothing left to synthesize
        built += 1
    assert built > 40
    with pytest.raises(RuntimeError, match="Validation failed with the following errors"):
        app.synth()
    assert list(tmp_path.rglob("*.template.json")) == []


# -- hypothesis: random values of random types, for every public parameter ---------------


ENUM_MEMBERS = [
    member
    for enum in (
        NodeType,
        NodeProvisioningMode,
        NodeRecovery,
        DeepHealthCheck,
        SlurmConfigStrategy,
        SlurmLayout,
        NetworkInterfaceType,
        CapacityType,
        BatchSizeType,
    )
    for member in enum
]
ANYTHING = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=80),
    st.binary(max_size=8),
    st.lists(st.one_of(st.integers(), st.text(max_size=5)), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    st.sampled_from([CPU, GPU, *ENUM_MEMBERS]),
    st.sampled_from(OBJECTS),
    st.lists(st.sampled_from(list(DeepHealthCheck)), max_size=3),
)
HYPOTHESIS_EXAMPLES = 20
"""Per public parameter of the cluster and of a compute group, in ``make test-deep``."""
HEAD_NODE_EXAMPLES = 10
"""Per public parameter of the controller and login factories (the compute group's, less
``partition`` and the sizing and health-check ones), in ``make test-deep``."""
SAMPLED_EXAMPLES = 4
SAMPLED_HEAD_NODE_EXAMPLES = 2
"""``make test`` tries a sample of each, drawn from the run's seed (tests/support/depth.py)."""


def _token(value: object, kind: type) -> bool:
    """A token of the documented kind (a ``str`` parameter, a number parameter)."""
    label = "string token" if kind is str else "number token"
    return isinstance(value, Made) and value.label == label


def _name(value: object, length: int = 63) -> bool:
    if _token(value, str):
        return True
    pattern = r"[a-zA-Z0-9](-*[a-zA-Z0-9])*"
    return isinstance(value, str) and len(value) <= length and bool(re.fullmatch(pattern, value))


def _int_in(low: int, high: int) -> Callable[[object], bool]:
    return lambda v: _token(v, float) or (type(v) is int and low <= v <= high)


def _optional(ok: Callable[[object], bool]) -> Callable[[object], bool]:
    return lambda v: v is None or ok(v)


def _member(*types: type) -> Callable[[object], bool]:
    return lambda v: isinstance(v, types)


def _empty(value: object) -> bool:
    return isinstance(value, list | tuple) and not value


def _tags(value: object) -> bool:
    text = r"[\w\s_.:/=+\-@]"
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) and not k.lower().startswith("aws:")
        and re.fullmatch(f"{text}{{1,128}}", k) and re.fullmatch(f"{text}{{0,256}}", v)
        for k, v in value.items()
    )  # fmt: skip


# What each parameter may be accepted with, silently: written from the documented contract,
# not from the library's rules (a silent outcome with any other value fails the test). The base
# cluster: a controller and a compute group "cpu" (ml.c5.xlarge, partition "cpu", 2
# instances), Continuous mode, no network.
GROUP_ACCEPTS: dict[str, Callable[[object], bool]] = {
    "name": lambda v: _name(v) and v != "controller",
    "instance_type": lambda v: v is CPU or v is GPU,
    "partition": lambda v: v is None or _name(v, 1024),  # None: valid (nodes only in dev)
    "instance_count": _int_in(0, 6758),
    "min_instance_count": _optional(_int_in(0, 2)),
    "min_accelerators": lambda v: v is None,  # ml.c5.xlarge has no accelerators to count
    "threads_per_core": _optional(_int_in(1, 2)),
    "deep_health_checks": lambda v: _empty(v) or v == [DeepHealthCheck.INSTANCE_STRESS],
    "storage": lambda v: _empty(v) or getattr(v, "label", "") == "EBS",
    "training_plan_arn": _optional(lambda v: _token(v, str)),
    "image_id": _optional(lambda v: _token(v, str) or v == "default"),
    "execution_role": _optional(lambda v: getattr(v, "label", "") == "imported role"),
    "lifecycle_scripts": _optional(lambda v: getattr(v, "label", "").startswith("scripts")),
    "vpc_subnets": lambda v: v is None,  # no network to pair subnets with
    "security_groups": lambda v: v is None,  # no subnets to pair security groups with
    "scheduled_update": _optional(lambda v: getattr(v, "label", "") == "scheduled update"),
    "network_interface": _optional(_member(NetworkInterfaceType)),
    "capacity_type": _optional(_member(CapacityType)),
    "instance_types": lambda v: v is None,  # the base group has an instance_type already
    "auto_patch": _optional(_member(AutoPatchStrategy)),
}
CLUSTER_ACCEPTS: dict[str, Callable[[object], bool]] = {
    "instance_groups": lambda v: getattr(v, "label", "") == "groups",
    "cluster_name": _optional(_name),
    "node_provisioning_mode": _member(NodeProvisioningMode),
    "node_recovery": _optional(lambda v: isinstance(v, NodeRecovery) or _token(v, str)),
    "lifecycle_scripts": GROUP_ACCEPTS["lifecycle_scripts"],
    "execution_role": GROUP_ACCEPTS["execution_role"],
    "vpc": _optional(lambda v: getattr(v, "label", "") == "vpc"),
    "vpc_subnets": lambda v: v is None,  # without a vpc: only with security groups too
    "security_groups": lambda v: v is None,
    "slurm_config_strategy": lambda v: v is None,  # Continuous mode
    "slurm_layout": lambda v: v is SlurmLayout.API,
    "declare_slurm_orchestrator": _member(bool),
    "accounting_database": _optional(lambda v: getattr(v, "label", "") == "database"),
    "tags": _optional(_tags),
    "readiness_gate": _optional(lambda v: getattr(v, "label", "").startswith("gate")),
    "removal_policy": _optional(
        lambda v: isinstance(v, RemovalPolicy) and v is not RemovalPolicy.SNAPSHOT
    ),
}


def _public_parameters(function: Callable[..., object]) -> set[str]:
    skip = {"self", "cls", "scope", "id"}
    return {name for name in inspect.signature(function).parameters if name not in skip}


def test_the_random_values_reach_every_public_parameter() -> None:
    """A new parameter of the cluster or a group field must join the fuzz (the group's keys
    are the table's, which tests/test_group_fields.py holds against the factories)."""
    assert _public_parameters(HyperPodSlurmCluster.__init__) == set(CLUSTER_ACCEPTS)
    assert set(GROUP_ACCEPTS) == {field.keyword for field in GROUP_FIELDS if field.nodes}


def _fuzz(build: Build, parameter: str, value: Any, accepts: Callable[[object], bool]) -> None:
    stack = Stack(App(), "Fuzz")
    result = outcome(build, value, parameter, stack=stack)
    if result.kind == "silent":
        assert accepts(value), f"{parameter}={value!r} was accepted silently"
        # Accepted: the template must render, and AWS's own model must take the cluster.
        template = stack.node.root.synth().get_stack_by_name(stack.stack_name).template
        for resource in template["Resources"].values():
            if resource["Type"] == "AWS::SageMaker::Cluster":
                refused = violations(resource["Properties"])
                assert refused == [], f"{parameter}={value!r} accepted, AWS refuses: {refused}"
        return
    assert result.kind == "clear", f"{parameter}={value!r}: {result}"


# -- boundary values from botocore's model ----------------------------------------------


def api_members() -> dict[str, str]:
    """Parameter -> the API member it renders, as the rule registry's field column names
    the pair (instance_count / InstanceCount): the library's own table, not this test's."""
    pairs = (re.fullmatch(r"`(\w+)` / `(\w+)`", rule.field) for rule in RULES.values())
    return {match[1]: match[2] for match in pairs if match}


LIST_ITEMS: dict[str, Callable[[int], Any]] = {
    "instance_groups": lambda i: _compute(name=f"g{i}") if i else _controller(),
    "storage": lambda _i: InstanceStorage.ebs(volume_size=Size.gibibytes(100)),
    "deep_health_checks": lambda i: list(DeepHealthCheck)[i % len(DeepHealthCheck)],
    "tags": lambda i: (f"team{i}", "ml"),
}
"""An item of each list parameter (a tag as a key and value), to build lists of the sizes
the model allows and one past them."""


def _items(parameter: str, count: int) -> Any:
    items = [LIST_ITEMS[parameter](i) for i in range(count)]
    return dict(items) if parameter == "tags" else items


def boundary_values() -> list[tuple[str, str, Any]]:
    """(``cluster`` or ``group``, parameter, value): for every parameter whose API member
    the model bounds, the values at and one past each bound (an integer's range, a string's
    length, a list's size), and an enum's first value in the other case."""
    members = api_members()
    shapes = {
        "cluster": (create_cluster_input(), CLUSTER_ACCEPTS),
        "group": (create_cluster_input().members["InstanceGroups"].member, GROUP_ACCEPTS),
    }
    found: list[tuple[str, str, Any]] = []
    for where, (shape, accepts) in shapes.items():
        for parameter in sorted(accepts):
            member = members.get(parameter)
            if member not in shape.members:
                continue
            model = shape.members[member]
            low, high = model.metadata.get("min"), model.metadata.get("max")
            if model.type_name == "integer":
                found += [(where, parameter, v) for v in (low - 1, low, high, high + 1)]
            elif model.type_name == "string" and model.enum:
                found.append((where, parameter, model.enum[0].swapcase()))
            elif model.type_name == "string":
                found += [(where, parameter, "a" * n) for n in (high, high + 1)]
            elif model.type_name == "list":
                sizes = [n for n in (low - 1, low, high, high + 1) if n >= 0]
                found += [(where, parameter, _items(parameter, n)) for n in sizes]
    return found


BOUNDARIES = boundary_values()


def test_the_model_bounds_reach_the_parameters_it_should() -> None:
    """A derivation that silently found nothing would pass every case below."""
    covered = {(where, parameter) for where, parameter, _ in BOUNDARIES}
    assert {
        ("group", "instance_count"),
        ("group", "min_instance_count"),
        ("group", "threads_per_core"),
        ("group", "name"),
        ("group", "storage"),
        ("group", "deep_health_checks"),
        ("cluster", "cluster_name"),
        ("cluster", "instance_groups"),
        ("cluster", "tags"),
        ("cluster", "node_recovery"),
    } <= covered


@pytest.mark.parametrize(
    ("where", "parameter", "value"),
    BOUNDARIES,
    ids=[
        f"{where}.{parameter}[{len(v) if isinstance(v, list | dict | str) else v}]"
        for where, parameter, v in BOUNDARIES
    ],
)
def test_a_boundary_value_of_the_api_model_is_taken_only_when_aws_takes_it(
    where: str, parameter: str, value: Any
) -> None:
    build, accepts = (
        (cluster_prop(parameter), CLUSTER_ACCEPTS[parameter])
        if where == "cluster"
        else (compute_prop(parameter), GROUP_ACCEPTS[parameter])
    )
    _fuzz(build, parameter, value, lambda v: True)  # the model decides, not the contract
    assert accepts is not None


SETTINGS = settings(
    max_examples=examples(HYPOTHESIS_EXAMPLES, SAMPLED_EXAMPLES),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors],
)


@pytest.mark.deep
@pytest.mark.parametrize("parameter", sorted(GROUP_ACCEPTS))
@SETTINGS
@given(value=ANYTHING)
def test_random_values_for_a_group_never_crash_or_pass_silently(parameter: str, value: Any) -> None:
    _fuzz(compute_prop(parameter), parameter, value, GROUP_ACCEPTS[parameter])


HEAD_NODE_CASES = [
    (node_type.name.lower(), field.keyword)
    for node_type in (NodeType.CONTROLLER, NodeType.LOGIN)
    for field in sorted(GROUP_FIELDS, key=lambda field: field.keyword)
    if field.takes(node_type)
]
HEAD_NODE_BUILDS = {"controller": controller_prop, "login": login_prop}
HEAD_NODE_ACCEPTS = {
    # Continuous mode (the base cluster's): one controller node, no multi-head
    # (HP-MULTI-HEAD-IN-CONTINUOUS); 0 is HP-CONTROLLER-COUNT.
    ("controller", "instance_count"): _int_in(1, 1),
}
"""Where a head node group's contract is narrower than a compute group's."""


@pytest.mark.deep
@pytest.mark.parametrize(("factory", "parameter"), HEAD_NODE_CASES)
@settings(SETTINGS, max_examples=examples(HEAD_NODE_EXAMPLES, SAMPLED_HEAD_NODE_EXAMPLES))
@given(value=ANYTHING)
def test_random_values_for_a_head_node_group_never_crash_or_pass_silently(
    factory: str, parameter: str, value: Any
) -> None:
    accepts = HEAD_NODE_ACCEPTS.get((factory, parameter), GROUP_ACCEPTS[parameter])
    _fuzz(HEAD_NODE_BUILDS[factory](parameter), parameter, value, accepts)


@pytest.mark.deep
@pytest.mark.parametrize("parameter", sorted(CLUSTER_ACCEPTS))
@SETTINGS
@given(value=ANYTHING)
def test_random_values_for_the_cluster_never_crash_or_pass_silently(
    parameter: str, value: Any
) -> None:
    _fuzz(cluster_prop(parameter), parameter, value, CLUSTER_ACCEPTS[parameter])


def test_the_docs_state_how_many_inputs_the_fuzz_tries() -> None:
    docs = (REPO / "docs" / "validation.md").read_text(encoding="utf-8")
    total = (
        TABLE_COUNT
        + HYPOTHESIS_EXAMPLES * (len(GROUP_ACCEPTS) + len(CLUSTER_ACCEPTS))
        + HEAD_NODE_EXAMPLES * len(HEAD_NODE_CASES)
    )
    assert f"{TABLE_COUNT} table-driven bad inputs" in docs
    parameters = len(GROUP_ACCEPTS) + len(CLUSTER_ACCEPTS)
    assert f"{HYPOTHESIS_EXAMPLES} hypothesis examples for each of the {parameters}" in docs
    head = f"{HEAD_NODE_EXAMPLES} for each of the {len(HEAD_NODE_CASES)} parameters of the"
    assert head in docs
    assert f"{total} inputs in all" in docs
    sampled = f"a sample of {SAMPLED_EXAMPLES} and {SAMPLED_HEAD_NODE_EXAMPLES} of these"
    assert sampled in " ".join(docs.split())
    assert f"{len(BOUNDARIES)} boundary values" in " ".join(docs.split())
    assert not math.isnan(total)
