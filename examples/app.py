"""The example app ``cdk synth`` runs (see cdk.json): every example stack, checked by cdk-nag."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from aws_cdk import App, Validations
from cdk_nag import AwsSolutionsChecks

from examples.blueprints import FsdpBlueprintStack, MegatronBlueprintStack
from examples.fsdp import FsdpTrainingStack
from examples.heterogeneous import HeterogeneousStack
from examples.minimal import MinimalDevStack


def build(app: App) -> None:
    """Add every example stack to ``app``."""
    FsdpTrainingStack(app, "FsdpTraining")
    HeterogeneousStack(app, "Heterogeneous")
    MinimalDevStack(app, "MinimalDev")
    FsdpBlueprintStack(app, "FsdpBlueprint")
    MegatronBlueprintStack(app, "MegatronBlueprint")


def main() -> None:
    app = App()
    Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    build(app)
    app.synth()


if __name__ == "__main__":
    main()
