"""Cluster blueprints: a platform team's defaults and policy, instantiated by ML teams with a
few arguments. See ``docs/blueprints.md``."""

from .defaults import BlueprintDefaults
from .props import (
    FsdpTrainingClusterProps,
    MegatronTrainingClusterProps,
    TrainingClusterOptions,
    TrainingClusterProps,
)
from .training import (
    ARGUMENT_RULE,
    BLUEPRINT_TAG,
    LAYOUT_TAG,
    SIZING_RULE,
    FsdpTrainingCluster,
    MegatronTrainingCluster,
    TrainingClusterBlueprint,
)

__all__ = [
    "ARGUMENT_RULE",
    "BLUEPRINT_TAG",
    "LAYOUT_TAG",
    "SIZING_RULE",
    "BlueprintDefaults",
    "FsdpTrainingCluster",
    "FsdpTrainingClusterProps",
    "MegatronTrainingCluster",
    "MegatronTrainingClusterProps",
    "TrainingClusterBlueprint",
    "TrainingClusterOptions",
    "TrainingClusterProps",
]
