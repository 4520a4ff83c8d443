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

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Duration, Size, Stack
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hyperpod_constructs import (
    AccountingDatabase,
    DeepHealthCheck,
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    HyperPodValidationError,
    InstanceGroup,
    InstanceStorage,
    LifecycleScripts,
    MinCountGateOptions,
)
from hyperpod_constructs.sizing import (
    SizingError,
    accelerator_count_of,
    fsdp_world_size,
    instances_for_accelerators,
)
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
        login = InstanceGroup.login("login", **{"instance_type": CPU, parameter: value})
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
        return _cluster(stack, groups, min_count_gate=options)

    return build


def instance_type_of(stack: Stack, value: Any) -> object:
    return _cluster(stack, [_controller(), _compute(instance_type=HyperPodInstanceType.of(value))])


def helper(function: Callable[[Any], object]) -> Build:
    return lambda _stack, value: function(value)


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
    ("HyperPodSlurmCluster", "min_count_gate", cluster_prop("min_count_gate"),
     [{"enabled": False}, "off", 5]),
    ("HyperPodSlurmCluster", "readiness_gate", cluster_prop("readiness_gate"),
     [{"enabled": False}, "off", 5]),
    ("HyperPodSlurmCluster", "slurm_layout", cluster_prop("slurm_layout"),
     ["LIFECYCLE_SCRIPTS", None, 5]),
    ("HyperPodSlurmCluster", "declare_slurm_orchestrator",
     cluster_prop("declare_slurm_orchestrator"), ["yes", None, 1]),
    ("InstanceGroup.compute", "name", compute_prop("name"), WRONG_NAMES),
    ("InstanceGroup.compute", "instance_type", compute_prop("instance_type"), WRONG_TYPES),
    ("InstanceGroup.compute", "partition", compute_prop("partition"),
     ["gpu\n", "", "gpu_a", 5, None, "p" * 1025]),
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
    ("InstanceGroup.controller", "name", controller_prop("name"), WRONG_NAMES),
    ("InstanceGroup.controller", "instance_type", controller_prop("instance_type"), WRONG_TYPES),
    ("InstanceGroup.controller", "instance_count", controller_prop("instance_count"),
     [*WRONG_INTS, 0]),
    ("InstanceGroup.controller", "storage", controller_prop("storage"), [None, 5]),
    ("InstanceGroup.login", "instance_count", login_prop("instance_count"), WRONG_INTS),
    ("InstanceGroup.login", "threads_per_core", login_prop("threads_per_core"), [3, "2"]),
    ("HyperPodInstanceType.of", "instance_type", instance_type_of,
     ["p5.48xlarge", "ml.p5.48xlarge\n", " ml.p5.48xlarge", "", 5, None]),
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
     ["AWS/HyperPod", "aws/x", "", " ", ":x", "n" * 256, "a\nb", 5, None]),
    ("instances_for_accelerators", "min_accelerators",
     helper(lambda v: instances_for_accelerators(GPU, v)), [*WRONG_INTS, 0, -1]),
    ("accelerator_count_of", "accelerators_per_instance",
     helper(lambda v: accelerator_count_of(GPU, accelerators_per_instance=v)),
     [*WRONG_INTS, 0, 9]),
    ("fsdp_world_size", "data_parallel", helper(fsdp_world_size), [*WRONG_INTS, 0]),
]  # fmt: skip

HELPERS = {"instances_for_accelerators", "accelerator_count_of", "fsdp_world_size"}
CASES = [
    pytest.param(entry, parameter, build, value, id=f"{entry}.{parameter}[{index}]")
    for entry, parameter, build, values in TABLE
    for index, value in enumerate(values)
]
TABLE_COUNT = len(CASES)
HYPOTHESIS_EXAMPLES = 60
"""Per hypothesis test (two of them)."""


@dataclass(frozen=True)
class Outcome:
    kind: str
    """``clear``, ``crash`` or ``silent``."""
    text: str


def outcome(build: Build, value: Any, parameter: str) -> Outcome:
    """Build the app with ``value``; classify what happened."""
    stack = Stack(App(), "Fuzz")
    try:
        build(stack, value)
    except (HyperPodValidationError, SizingError) as error:
        text = str(error)
        return Outcome("clear" if _names(text, parameter) else "crash", text)
    except Exception as error:  # any other exception is what we count
        return Outcome("crash", f"{type(error).__name__}: {error}")
    text = report_of(stack)
    if not text:
        return Outcome("silent", "")
    return Outcome("clear" if _names(text, parameter) else "crash", text)


def _names(text: str, parameter: str) -> bool:
    """The message names the parameter (a sizing helper may say ``min_accelerators=...``)."""
    return re.search(rf"\b{re.escape(parameter)}\b", text) is not None


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
        build(Stack(app, f"S{index}"), values[0])
        built += 1
    assert built > 40
    with pytest.raises(RuntimeError, match="Validation failed with the following errors"):
        app.synth()
    assert list(tmp_path.rglob("*.template.json")) == []


# -- hypothesis: random values of random types ---------------------------------------------

ANYTHING = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=80),
    st.binary(max_size=8),
    st.lists(st.one_of(st.integers(), st.text(max_size=5)), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    st.sampled_from([DeepHealthCheck.INSTANCE_STRESS, CPU, Duration.minutes(1)]),
)
GROUP_PARAMETERS = [
    "name",
    "instance_type",
    "partition",
    "instance_count",
    "min_instance_count",
    "threads_per_core",
    "deep_health_checks",
    "storage",
    "training_plan_arn",
    "image_id",
]
CLUSTER_PARAMETERS = ["cluster_name", "tags", "instance_groups", "min_count_gate", "vpc"]


def _valid_for(parameter: str, value: Any) -> bool:
    """Values that are legitimately fine for the parameter (not to be counted as silent)."""
    if value is None and parameter in (
        "min_instance_count",
        "threads_per_core",
        "training_plan_arn",
        "image_id",
        "cluster_name",
        "tags",
        "min_count_gate",
        "vpc",
    ):
        return True
    if parameter in ("deep_health_checks", "storage", "instance_groups", "tags") and value in (
        [],
        {},
        (),
    ):
        return parameter != "instance_groups"
    return False


def _fuzz(build: Build, parameter: str, value: Any) -> None:
    result = outcome(build, value, parameter)
    if result.kind == "silent":
        # Accepted: the value must be one HyperPod takes (then the group renders).
        assert _valid_for(parameter, value) or _plausible(parameter, value), (parameter, value)
        return
    assert result.kind == "clear", f"{parameter}={value!r}: {result}"


def _plausible(parameter: str, value: Any) -> bool:
    """A random value that happens to be valid (e.g. the text 'a' as a name)."""
    if parameter in ("name", "partition", "cluster_name") and isinstance(value, str):
        return bool(re.fullmatch(r"[a-zA-Z0-9](-*[a-zA-Z0-9])*", value)) and len(value) <= 63
    if parameter in ("instance_count", "min_instance_count") and type(value) is int:
        return 0 <= value <= 2
    if parameter == "threads_per_core" and type(value) is int:
        return value in (1, 2)
    if parameter == "instance_type":
        return value is CPU
    if parameter == "deep_health_checks" and isinstance(value, list):
        return not value
    return False


@settings(
    max_examples=HYPOTHESIS_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(parameter=st.sampled_from(GROUP_PARAMETERS), value=ANYTHING)
def test_random_values_for_a_group_never_crash_or_pass_silently(parameter: str, value: Any) -> None:
    _fuzz(compute_prop(parameter), parameter, value)


@settings(
    max_examples=HYPOTHESIS_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
)
@given(parameter=st.sampled_from(CLUSTER_PARAMETERS), value=ANYTHING)
def test_random_values_for_the_cluster_never_crash_or_pass_silently(
    parameter: str, value: Any
) -> None:
    _fuzz(cluster_prop(parameter), parameter, value)


def test_the_docs_state_how_many_inputs_the_fuzz_tries() -> None:
    docs = (REPO / "docs" / "validation.md").read_text(encoding="utf-8")
    total = TABLE_COUNT + 2 * HYPOTHESIS_EXAMPLES
    assert f"{TABLE_COUNT} table-driven bad inputs" in docs
    assert f"{total} inputs in all" in docs
    assert not math.isnan(total)
