"""Sizing from the training topology: the accelerator table, min_accelerators, FSDP and
Megatron layouts, and the errors that name the nearest valid choice."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hyperpod_constructs import (
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
)
from hyperpod_constructs.instance_type import ACCELERATORS_PER_INSTANCE, known_names
from hyperpod_constructs.sizing import (
    FsdpLayout,
    MegatronLayout,
    ParallelLayout,
    SizingError,
    accelerator_count_of,
    fsdp_world_size,
    instances_for_accelerators,
)
from hyperpod_constructs.validation import validate_group
from tests.conftest import ROOT, new_app

T = HyperPodInstanceType
P5 = T.ML_P5_48XLARGE
ACCELERATOR_FACTS = """
## Accelerators per instance (GPUs or Trainium chips, from the EC2 instance type pages)
p4d.24xlarge 8, p4de.24xlarge 8, p5.48xlarge 8, p5.4xlarge 1, p5e.48xlarge 8,
p5en.48xlarge 8, p6-b200.48xlarge 8, p6-b300.48xlarge 8, p6e-gb200.36xlarge 4,
g5/g6/g6e/g7e.48xlarge 8, g5/g6/g6e.12xlarge and .24xlarge 4, g7e.24xlarge 4,
g7e.12xlarge 2, g4dn.12xlarge 4, g7.48xlarge 8, g7.2xlarge and .4xlarge and .8xlarge 1,
smaller g4dn/g5/g6/g6e/g7e/gr6 1, trn1.32xlarge / trn1n.32xlarge 16 chips,
trn2.48xlarge 16 chips, trn2.3xlarge 1 chip (all prefixed `ml.`).
min instances = ceil(world_size / accelerators_per_instance).
"""
"""The accelerator facts the table is checked against, written independently of the table in
the notation of the project's facts sheet. ``ml.g7.12xlarge`` and ``ml.g7.24xlarge`` are
missing on purpose: their counts are not documented, and the table must not invent them."""


# -- the accelerator table against the facts file -----------------------------------------


def parse_accelerator_facts(text: str) -> tuple[dict[str, int], dict[str, int]]:
    """The facts file's accelerator section as (exact type -> count, family -> count for
    the "smaller" sizes of that family not listed exactly)."""
    match = re.search(r"^## Accelerators per instance.*?\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, "no '## Accelerators per instance' section in the facts file"
    body = match.group(1).split("min instances", 1)[0]
    body = re.sub(r"\(all prefixed `ml\.`\)\.?", "", " ".join(body.split()))
    exact: dict[str, int] = {}
    smaller: dict[str, int] = {}
    for item in (part.strip() for part in body.split(",")):
        if not item:
            continue
        found = re.fullmatch(r"(smaller\s+)?(.+?)\s+(\d+)(?:\s+chips?)?", item)
        assert found, f"cannot parse accelerator fact {item!r}"
        is_smaller, names, count = found.group(1), found.group(2), int(found.group(3))
        if is_smaller:
            for family in names.split("/"):
                smaller[f"ml.{family.strip()}"] = count
            continue
        families: list[str] = []
        for piece in re.split(r"\s+and\s+|\s+/\s+", names):
            piece = piece.strip()
            prefix, _, size = piece.rpartition(".")
            if prefix:
                families = prefix.split("/")
            assert families and size, f"cannot parse {piece!r} in {item!r}"
            for family in families:
                exact[f"ml.{family}.{size}"] = count
    return exact, smaller


@pytest.fixture(scope="module")
def facts() -> tuple[dict[str, int], dict[str, int]]:
    return parse_accelerator_facts(ACCELERATOR_FACTS)


def _family(name: str) -> str:
    return name.rsplit(".", 1)[0]


def test_parser_reads_the_compressed_notation() -> None:
    exact, smaller = parse_accelerator_facts(
        "## Accelerators per instance (x)\np5.48xlarge 8, g5/g6.12xlarge and .24xlarge 4,"
        "\nsmaller g5/gr6 1, trn1.32xlarge / trn1n.32xlarge 16 chips,\ntrn2.3xlarge 1 chip "
        "(all prefixed `ml.`).\nmin instances = ceil(...)\n## Next\np4d.24xlarge 99,"
    )
    assert exact == {
        "ml.p5.48xlarge": 8,
        "ml.g5.12xlarge": 4,
        "ml.g6.12xlarge": 4,
        "ml.g5.24xlarge": 4,
        "ml.g6.24xlarge": 4,
        "ml.trn1.32xlarge": 16,
        "ml.trn1n.32xlarge": 16,
        "ml.trn2.3xlarge": 1,
    }
    assert smaller == {"ml.g5": 1, "ml.gr6": 1}


def test_every_fact_is_in_the_table_with_its_count(
    facts: tuple[dict[str, int], dict[str, int]],
) -> None:
    exact, _ = facts
    assert len(exact) >= 25, f"parsed suspiciously few facts: {sorted(exact)}"
    for name, count in exact.items():
        assert ACCELERATORS_PER_INSTANCE.get(name) == count, name
        assert T.of(name).accelerator_count == count, name


def test_every_table_entry_is_backed_by_a_fact(
    facts: tuple[dict[str, int], dict[str, int]],
) -> None:
    exact, smaller = facts
    for name, count in ACCELERATORS_PER_INSTANCE.items():
        expected = exact.get(name, smaller.get(_family(name)))
        assert expected == count, f"{name}: table says {count}, facts say {expected}"


def test_smaller_sizes_of_listed_families_all_have_their_count(
    facts: tuple[dict[str, int], dict[str, int]],
) -> None:
    exact, smaller = facts
    constants = [T.of(name) for name in known_names()]
    covered = [t for t in constants if _family(t.name) in smaller and t.name not in exact]
    assert len(covered) >= 15
    for instance_type in covered:
        assert instance_type.accelerator_count == smaller[_family(instance_type.name)], (
            instance_type.name
        )


def test_every_table_entry_has_a_constant() -> None:
    assert set(ACCELERATORS_PER_INSTANCE) <= set(known_names())


@pytest.mark.parametrize(
    ("instance_type", "expected"),
    [
        (T.ML_C5_4XLARGE, None),
        (T.ML_G7_12XLARGE, None),
        (T.ML_G7E_2XLARGE, 1),
        (T.ML_G4DN_12XLARGE, 4),
        (T.of("ml.p9.96xlarge"), None),
        (T.ML_P6E_GB200_36XLARGE, 4),
        (T.ML_TRN2_48XLARGE, 16),
        (T.ML_G7E_12XLARGE, 2),
    ],
)
def test_accelerator_count_is_none_when_unknown(
    instance_type: HyperPodInstanceType, expected: int | None
) -> None:
    assert instance_type.accelerator_count == expected


# -- accelerator_count_of ---------------------------------------------------------------


def test_accelerator_count_of_uses_the_table_or_a_smaller_explicit_count() -> None:
    assert accelerator_count_of(P5) == 8
    assert accelerator_count_of(P5, accelerators_per_instance=4) == 4
    assert accelerator_count_of(T.of("ml.p9.96xlarge"), accelerators_per_instance=16) == 16


@pytest.mark.parametrize(
    ("instance_type", "explicit", "expected_text"),
    [
        (T.of("ml.p9.96xlarge"), None, "pass accelerators_per_instance="),
        (T.ML_G7_12XLARGE, None, "does not know how many accelerators an ml.g7.12xlarge"),
        (T.ML_C5_4XLARGE, None, "not in a GPU or Trainium family"),
        (P5, 16, "accelerators_per_instance=16 is more than the 8 accelerators"),
        (P5, 0, "accelerators_per_instance=0 must be a positive whole number"),
        (P5, True, "must be a positive whole number"),
    ],
)
def test_accelerator_count_of_errors(
    instance_type: HyperPodInstanceType, explicit: int | None, expected_text: str
) -> None:
    with pytest.raises(SizingError, match=re.escape(expected_text)):
        accelerator_count_of(instance_type, accelerators_per_instance=explicit)


# -- instances_for_accelerators and InstanceGroup.compute(min_accelerators=...) ------------


@pytest.mark.parametrize(
    ("instance_type", "accelerators", "instances"),
    [
        (P5, 128, 16),
        (P5, 129, 17),
        (P5, 1, 1),
        (T.ML_TRN1_32XLARGE, 64, 4),
        (T.ML_G5_12XLARGE, 6, 2),
        (T.ML_P6E_GB200_36XLARGE, 72, 18),
        (T.ML_G5_XLARGE, 3, 3),
    ],
)
def test_instances_for_accelerators_rounds_up(
    instance_type: HyperPodInstanceType, accelerators: int, instances: int
) -> None:
    assert instances_for_accelerators(instance_type, accelerators) == instances


@pytest.mark.parametrize(
    ("instance_type", "accelerators", "expected_text"),
    [
        (P5, 0, "positive whole number"),
        (P5, -8, "positive whole number"),
        (P5, True, "positive whole number"),
        (P5, 1.5, "positive whole number"),
        (T.ML_C5_4XLARGE, 8, "give min_instance_count and instance_count instead"),
    ],
)
def test_instances_for_accelerators_errors(
    instance_type: HyperPodInstanceType, accelerators: object, expected_text: str
) -> None:
    with pytest.raises(SizingError, match=expected_text):
        instances_for_accelerators(instance_type, accelerators)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("min_accelerators", "instance_count", "expected_min", "expected_count"),
    [(128, None, 16, 16), (128, 18, 16, 18), (100, None, 13, 13), (8, None, 1, 1)],
)
def test_compute_group_sized_from_min_accelerators(
    min_accelerators: int, instance_count: int | None, expected_min: int, expected_count: int
) -> None:
    group = InstanceGroup.compute(
        "gpu",
        instance_type=P5,
        partition="gpu",
        min_accelerators=min_accelerators,
        instance_count=instance_count,
    )
    assert (group.min_instance_count, group.instance_count) == (expected_min, expected_count)
    assert group.min_accelerators == min_accelerators
    assert group.problems == ()
    assert group.is_gated


@pytest.mark.parametrize(
    ("kwargs", "expected_text"),
    [
        (
            {"instance_type": P5, "min_accelerators": 64, "min_instance_count": 8},
            "min_accelerators or min_instance_count, not both",
        ),
        (
            {"instance_type": T.ML_C5_4XLARGE, "min_accelerators": 8},
            "only on an instance type whose accelerators per instance the library knows "
            "(ml.c5.4xlarge is not one",
        ),
        ({"instance_type": P5}, "required unless min_accelerators is given"),
        ({"instance_type": P5, "min_accelerators": 0}, "a whole number of accelerators >= 1"),
    ],
)
def test_compute_group_sizing_errors_are_recorded(
    kwargs: dict[str, object], expected_text: str
) -> None:
    group = InstanceGroup.compute("gpu", partition="gpu", **kwargs)  # type: ignore[arg-type]
    assert [(f.rule, f.group) for f in group.problems] == [("HP-SIZING", "gpu")]
    assert expected_text in group.problems[0].message()


def test_a_sizing_error_fails_when_the_group_joins_a_cluster() -> None:
    from aws_cdk import Stack

    stack = Stack(new_app(), "Sizing")
    cluster = HyperPodSlurmCluster(
        stack,
        "Cluster",
        instance_groups=[InstanceGroup.controller("controller", instance_type=T.ML_M5_XLARGE)],
    )
    group = InstanceGroup.compute(
        "cpu", instance_type=T.ML_C5_4XLARGE, partition="cpu", min_accelerators=8
    )
    cluster.add_instance_group(group)
    assert [f.rule for f in cluster.findings()] == ["HP-SIZING"]
    assert "ml.c5.4xlarge" in cluster.findings()[0].message()


@pytest.mark.parametrize("accelerators", [10**9, 10**30])
def test_a_count_no_cluster_holds_is_in_the_report_not_raised(accelerators: int) -> None:
    """The group is sized exactly (no float overflow) and the instance count rules report it
    with the cluster's other findings."""
    group = InstanceGroup.compute(
        "gpu", instance_type=P5, partition="gpu", min_accelerators=accelerators
    )
    assert group.min_instance_count == -(-accelerators // 8)
    assert {"HP-COUNT-RANGE", "HP-MIN-RANGE"} <= {f.rule for f in validate_group(group)}


# -- FSDP --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data_parallel", "shard", "instance_type", "per", "nodes"),
    [
        (128, None, P5, None, 16),
        (64, None, T.ML_P5EN_48XLARGE, None, 8),
        (128, 8, P5, None, 16),
        (128, 16, P5, None, 16),
        (128, 4, P5, None, 16),
        (32, None, T.ML_TRN1_32XLARGE, None, 2),
        (4, None, P5, 4, 1),
        (12, None, P5, 4, 3),
        (16, None, T.of("ml.p9.96xlarge"), 16, 1),
        (8, None, T.ML_G5_48XLARGE, None, 1),
    ],
)
def test_fsdp_nodes(
    data_parallel: int,
    shard: int | None,
    instance_type: HyperPodInstanceType,
    per: int | None,
    nodes: int,
) -> None:
    layout = FsdpLayout(data_parallel, shard)
    assert layout.world_size == data_parallel
    assert layout.nodes_for(instance_type, accelerators_per_instance=per) == nodes
    assert layout.problems_for(instance_type, accelerators_per_instance=per) == ()
    layout.validate_for(instance_type, accelerators_per_instance=per)


@pytest.mark.parametrize(
    ("data_parallel", "shard", "per", "field", "nearest"),
    [
        (100, None, None, "data_parallel", (96, 104)),
        (4, None, None, "data_parallel", (8,)),
        (12, None, None, "data_parallel", (8, 16)),
        (96, 12, None, "shard_group_size", (8, 16)),
        (96, 24, None, "", ()),  # 24 is three whole instances: fine
        (36, 12, None, "data_parallel", (24, 48)),  # multiples of lcm(8, 12) = 24
        (24, 3, 4, "shard_group_size", (2, 4)),
    ],
)
def test_fsdp_problems_name_the_number_and_the_nearest_choice(
    data_parallel: int, shard: int | None, per: int | None, field: str, nearest: tuple[int, ...]
) -> None:
    problems = FsdpLayout(data_parallel, shard).problems_for(P5, accelerators_per_instance=per)
    if not field:
        assert problems == ()
        return
    assert problems[0].field == field
    assert problems[0].nearest == nearest
    assert problems[0].value == (data_parallel if field == "data_parallel" else shard)


def test_fsdp_error_message_reads_well() -> None:
    with pytest.raises(SizingError) as caught:
        FsdpLayout(100).nodes_for(P5)
    message = str(caught.value)
    assert message.startswith("FSDP dp=100 does not fit ml.p5.48xlarge (8 accelerators per ")
    assert "data_parallel=100 is not a multiple of the 8 accelerators per instance" in message
    assert "nearest valid data_parallel: 96 or 104 (96 = 12 instances, 104 = 13 instances)" in (
        message
    )
    assert [p.field for p in caught.value.problems] == ["data_parallel"]


def test_fsdp_below_one_instance_suggests_fewer_ranks_per_instance() -> None:
    (problem,) = FsdpLayout(4).problems_for(P5)
    assert "accelerators_per_instance=4" in problem.hint


@pytest.mark.parametrize(
    ("args", "expected_text"),
    [
        ((0,), "data_parallel=0 must be a positive"),
        ((True,), "data_parallel=True must"),
        (
            (96, 7),
            "shard_group_size=7 does not divide data_parallel=96; nearest valid "
            "shard_group_size: 6 or 8",
        ),
        ((96, 0), "shard_group_size=0 must be a positive"),
    ],
)
def test_fsdp_layout_rejects_bad_values(args: tuple[int, ...], expected_text: str) -> None:
    with pytest.raises(SizingError, match=re.escape(expected_text)):
        FsdpLayout(*args)


def test_fsdp_world_size_helper_and_replica_groups() -> None:
    assert fsdp_world_size(128) == FsdpLayout(128)
    assert fsdp_world_size(128, shard_group_size=8).replica_groups == 16
    assert FsdpLayout(128).replica_groups == 1
    assert FsdpLayout(128, 8).describe() == "HSDP dp=128 shard=8"
    assert FsdpLayout(64).describe() == "FSDP dp=64"


# -- Megatron / NeMo ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("layout", "instance_type", "world", "nodes"),
    [
        (MegatronLayout(8, 4, 4), P5, 128, 16),
        (MegatronLayout(8, 1, 16), T.ML_P5EN_48XLARGE, 128, 16),
        (MegatronLayout(4, 2, 8), T.ML_TRN1_32XLARGE, 64, 4),
        (MegatronLayout(2, 1, 4), T.ML_G5_12XLARGE, 8, 2),
        (MegatronLayout(4, 3, 2), P5, 24, 3),
        (MegatronLayout(8, 2, 2, context_parallel=2), P5, 64, 8),
        (MegatronLayout(1, 1, 8), P5, 8, 1),
        (MegatronLayout(4, 4, 2), T.ML_P6E_GB200_36XLARGE, 32, 8),
    ],
)
def test_megatron_nodes(
    layout: MegatronLayout, instance_type: HyperPodInstanceType, world: int, nodes: int
) -> None:
    assert layout.world_size == world
    assert layout.nodes_for(instance_type) == nodes
    assert layout.problems_for(instance_type) == ()


@pytest.mark.parametrize(
    ("layout", "instance_type", "expected"),
    [
        (MegatronLayout(3, 1, 8), P5, {"tensor_parallel": (2, 4)}),
        (MegatronLayout(16, 1, 1), P5, {"tensor_parallel": (8,)}),
        (MegatronLayout(6, 1, 4), P5, {"tensor_parallel": (4, 8)}),
        (MegatronLayout(8, 1, 1), T.ML_P6E_GB200_36XLARGE, {"tensor_parallel": (4,)}),
        (MegatronLayout(2, 3, 5), P5, {"data_parallel": (4, 8)}),
        (MegatronLayout(3, 1, 5), P5, {"tensor_parallel": (2, 4), "data_parallel": (8,)}),
        (MegatronLayout(4, 1, 3), P5, {"data_parallel": (2, 4)}),
    ],
)
def test_megatron_problems_name_the_number_and_the_nearest_choice(
    layout: MegatronLayout,
    instance_type: HyperPodInstanceType,
    expected: dict[str, tuple[int, ...]],
) -> None:
    problems = layout.problems_for(instance_type)
    assert {p.field: p.nearest for p in problems} == expected
    with pytest.raises(SizingError) as caught:
        layout.nodes_for(instance_type)
    for field, nearest in expected.items():
        choices = " or ".join(str(n) for n in nearest)
        assert f"nearest valid {field}: {choices}" in str(caught.value)


def test_megatron_tensor_parallel_message_explains_the_node_rule() -> None:
    with pytest.raises(SizingError) as caught:
        MegatronLayout(3, 2, 4).validate_for(P5)
    assert (
        "tensor_parallel=3 does not divide the 8 accelerators per instance (a "
        "tensor-parallel group must stay inside one instance); nearest valid "
        "tensor_parallel: 2 or 4"
    ) in str(caught.value)


@pytest.mark.parametrize(
    ("world", "tp", "pp", "cp", "dp"),
    [(128, 8, 4, 1, 4), (256, 8, 1, 1, 32), (64, 4, 2, 2, 4), (16, 1, 1, 1, 16)],
)
def test_megatron_from_world_size_derives_data_parallel(
    world: int, tp: int, pp: int, cp: int, dp: int
) -> None:
    layout = MegatronLayout.from_world_size(
        world, tensor_parallel=tp, pipeline_parallel=pp, context_parallel=cp
    )
    assert layout.data_parallel == dp
    assert layout.world_size == world


@pytest.mark.parametrize(
    ("world", "tp", "pp", "nearest"),
    [(100, 8, 4, (96, 128)), (20, 8, 1, (16, 24)), (6, 8, 1, (8,))],
)
def test_megatron_from_world_size_names_the_nearest_world_sizes(
    world: int, tp: int, pp: int, nearest: tuple[int, ...]
) -> None:
    with pytest.raises(SizingError) as caught:
        MegatronLayout.from_world_size(world, tensor_parallel=tp, pipeline_parallel=pp)
    (problem,) = caught.value.problems
    assert (problem.field, problem.value, problem.nearest) == ("world_size", world, nearest)
    assert f"TP x CP x PP = {tp} x 1 x {pp} = {tp * pp}" in str(caught.value)


@pytest.mark.parametrize(
    "field", ["tensor_parallel", "pipeline_parallel", "data_parallel", "context_parallel"]
)
def test_megatron_rejects_non_positive_sizes(field: str) -> None:
    values = {
        "tensor_parallel": 1,
        "pipeline_parallel": 1,
        "data_parallel": 1,
        "context_parallel": 1,
        field: 0,
    }
    with pytest.raises(SizingError, match=f"{field}=0 must be a positive"):
        MegatronLayout(**values)


def test_megatron_describe_and_protocol() -> None:
    assert MegatronLayout(8, 4, 4).describe() == "Megatron tp=8 pp=4 dp=4"
    assert MegatronLayout(8, 2, 2, 2).describe() == "Megatron tp=8 cp=2 pp=2 dp=2"
    assert MegatronLayout(8, 2, 2, 2).model_parallel_size == 32
    assert isinstance(MegatronLayout(8), ParallelLayout)
    assert isinstance(FsdpLayout(8), ParallelLayout)
    assert not isinstance(object(), ParallelLayout)


# -- properties ---------------------------------------------------------------------------

KNOWN = sorted(ACCELERATORS_PER_INSTANCE)


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(KNOWN), data_parallel=st.integers(1, 4096))
def test_fsdp_suggestions_always_fit(name: str, data_parallel: int) -> None:
    instance_type = T.of(name)
    per = ACCELERATORS_PER_INSTANCE[name]
    problems = FsdpLayout(data_parallel).problems_for(instance_type)
    assert bool(problems) == (data_parallel % per != 0)
    for problem in problems:
        for choice in problem.nearest:
            assert FsdpLayout(choice).nodes_for(instance_type) * per == choice
            assert abs(choice - data_parallel) < per


@settings(max_examples=200, deadline=None)
@given(
    name=st.sampled_from(KNOWN),
    tp=st.integers(1, 32),
    pp=st.integers(1, 16),
    cp=st.integers(1, 4),
    dp=st.integers(1, 64),
)
def test_megatron_suggestions_always_fit(name: str, tp: int, pp: int, cp: int, dp: int) -> None:
    instance_type = T.of(name)
    per = ACCELERATORS_PER_INSTANCE[name]
    layout = MegatronLayout(tp, pp, dp, cp)
    problems = {p.field: p for p in layout.problems_for(instance_type)}
    assert ("tensor_parallel" in problems) == (per % tp != 0)
    assert ("data_parallel" in problems) == (layout.world_size % per != 0)
    if not problems:
        assert layout.nodes_for(instance_type) * per == layout.world_size
    if "tensor_parallel" in problems:
        assert all(per % choice == 0 for choice in problems["tensor_parallel"].nearest)
    if "data_parallel" in problems:
        for choice in problems["data_parallel"].nearest:
            assert (MegatronLayout(tp, pp, choice, cp).world_size % per) == 0


def test_a_sizing_error_names_the_construct_it_sizes() -> None:
    """Given ``scope=``, the error starts with the construct path, as the library's others."""
    from aws_cdk import Stack

    stack = Stack(new_app(), "Training")
    with pytest.raises(SizingError) as not_divisible:
        MegatronLayout.from_world_size(100, tensor_parallel=8, scope=stack)
    assert str(not_divisible.value).startswith(
        "[Training] Megatron layout: world_size=100 is not divisible by TP x CP x PP = 8"
    )
    assert [p.field for p in not_divisible.value.problems] == ["world_size"]
    with pytest.raises(SizingError, match=r"^\[Training\] FSDP dp=100 does not fit ml\.p5"):
        FsdpLayout(100).nodes_for(HyperPodInstanceType.ML_P5_48XLARGE, scope=stack)
    # Without a scope: the message as before.
    with pytest.raises(SizingError, match=r"^Megatron layout: world_size=100"):
        MegatronLayout.from_world_size(100, tensor_parallel=8)


def test_the_docs_state_the_largest_size_the_library_takes() -> None:
    """docs/sizing.md's bound is the library's (the largest cluster HyperPod allows)."""
    from hyperpod_constructs import sizing
    from hyperpod_constructs._core import limits

    text = " ".join((ROOT / "docs" / "sizing.md").read_text(encoding="utf-8").split())
    most = max(ACCELERATORS_PER_INSTANCE.values())
    assert f"from 1 to {sizing._MAX_RANKS}" in text
    groups, count = limits.MAX_INSTANCE_GROUPS, limits.MAX_INSTANCE_COUNT
    assert f"({groups} groups of {count} instances of {most} accelerators)" in text
    with pytest.raises(SizingError, match=f"at most {sizing._MAX_RANKS}"):
        fsdp_world_size(sizing._MAX_RANKS + 8)
    assert fsdp_world_size(sizing._MAX_RANKS).world_size == sizing._MAX_RANKS
