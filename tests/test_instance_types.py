"""The instance-type catalogue: checked against botocore's SageMaker model and kept consistent
with itself (one source for the constants, the accelerator counts and "is accelerated")."""

from __future__ import annotations

import botocore.session
import pytest

from hyperpod_constructs import HyperPodInstanceType
from hyperpod_constructs.instance_type import (
    ACCELERATORS_PER_INSTANCE,
    constant_name,
    known_names,
)

T = HyperPodInstanceType

UNDOCUMENTED_COUNTS = {"ml.g7.12xlarge", "ml.g7.24xlarge"}
"""Accelerated types whose accelerators per instance AWS does not document (yet)."""


@pytest.fixture(scope="module")
def api_instance_types() -> set[str]:
    model = botocore.session.get_session().get_service_model("sagemaker")
    return set(model.shape_for("ClusterInstanceType").enum)


def test_the_catalogue_is_the_api_models_list(api_instance_types: set[str]) -> None:
    catalogue = set(known_names())
    assert sorted(api_instance_types - catalogue) == [], "in the API model, not catalogued"
    assert sorted(catalogue - api_instance_types) == [], "catalogued, not in the API model"


def test_every_catalogued_type_has_its_constant() -> None:
    for name in known_names():
        constant = getattr(T, constant_name(name))
        assert isinstance(constant, HyperPodInstanceType)
        assert constant.name == name
        assert constant == T.of(name)
        assert constant.is_known


def test_constant_names_follow_the_api_names() -> None:
    assert constant_name("ml.p6-b200.48xlarge") == "ML_P6_B200_48XLARGE"
    assert T.ML_P6_B200_48XLARGE.name == "ml.p6-b200.48xlarge"


def test_accelerated_and_counted_agree() -> None:
    """The family of a type and its count come from one catalogue line, so the 15 types a regex
    and a count table could disagree on (g4dn, g7, small g7e) have one answer; only the
    undocumented counts stay unknown."""
    accelerated = {name for name in known_names() if T.of(name).is_accelerated}
    counted = set(ACCELERATORS_PER_INSTANCE)
    assert accelerated - counted == UNDOCUMENTED_COUNTS
    assert counted <= accelerated
    for name in ("ml.g4dn.xlarge", "ml.g4dn.16xlarge", "ml.g7.8xlarge", "ml.g7e.4xlarge"):
        assert T.of(name).accelerator_count == 1, name
    assert T.ML_G4DN_12XLARGE.accelerator_count == 4
    assert T.ML_G7_48XLARGE.accelerator_count == 8


@pytest.mark.parametrize(
    ("instance_type", "kind", "efa"),
    [
        (T.ML_P5_48XLARGE, "gpu", True),
        (T.ML_TRN2_48XLARGE, "trainium", True),
        (T.ML_G5_2XLARGE, "gpu", False),
        (T.ML_G6E_8XLARGE, "gpu", True),
        (T.ML_M5_2XLARGE, None, False),
        (T.ML_C5N_18XLARGE, None, True),
    ],
)
def test_kind_and_efa_of_catalogued_types(
    instance_type: HyperPodInstanceType, kind: str | None, efa: bool
) -> None:
    assert instance_type.accelerator_kind == kind
    assert instance_type.is_accelerated is (kind is not None)
    assert instance_type.efa_capable is efa


def test_multi_gpu_training_types_are_efa_capable() -> None:
    """Types with 8 or more accelerators are the multi-node training types; all have EFA."""
    for name, count in ACCELERATORS_PER_INSTANCE.items():
        if count >= 8:
            assert T.of(name).efa_capable, name


def test_a_new_size_of_a_known_family_is_accelerated_but_not_counted() -> None:
    newer = T.of("ml.p5.96xlarge")
    assert not newer.is_known
    assert (newer.accelerator_kind, newer.accelerator_count, newer.efa_capable) == (
        "gpu",
        None,
        None,
    )
    unknown_family = T.of("ml.x99.large")
    assert (unknown_family.is_accelerated, unknown_family.efa_capable) == (False, None)


@pytest.mark.parametrize(
    ("name", "kind"),
    [("ml.p9.96xlarge", "gpu"), ("ml.trn3.48xlarge", "trainium"), ("ml.m9.large", None)],
)
def test_a_new_generation_takes_the_kind_of_its_series(name: str, kind: str | None) -> None:
    """Every catalogued p / g / gr family is a GPU family and every trn one Trainium, so a
    new generation of those series is accelerated; a mixed or CPU series is not."""
    assert T.of(name).accelerator_kind == kind
    assert T.of(name).accelerator_count is None


@pytest.mark.parametrize(
    ("name", "well_formed"),
    [
        ("ml.p5.48xlarge", True),
        ("ml.p6-b200.48xlarge", True),
        ("p5.48xlarge", False),
        ("ml.p5.48xlarge\n", False),
        ("ML.P5.48XLARGE", False),
    ],
)
def test_well_formed_is_the_pattern_the_rules_check(name: str, well_formed: bool) -> None:
    from hyperpod_constructs._core import limits

    assert T.of(name).is_well_formed is well_formed
    assert (limits.INSTANCE_TYPE.fullmatch(name) is not None) is well_formed
