"""Rules for the training blueprints' arguments. The blueprint factories check them
(:mod:`hyperpod_constructs.blueprints.training`) and raise their findings."""

from __future__ import annotations

from .._core.rule import E, Rule, Scope, Source

BLUEPRINT_ARGS = Rule(
    "HP-BLUEPRINT-ARGS",
    E,
    Scope.BLUEPRINT,
    "blueprint arguments",
    "what the platform defaults allow (instance types, spare instances, tags)",
    checked_by="hyperpod_constructs.blueprints.training",
    source=Source.library("the arguments of the library's own blueprints"),
)

BLUEPRINT_SIZING = Rule(
    "HP-BLUEPRINT-SIZING",
    E,
    Scope.BLUEPRINT,
    "blueprint layout",
    "a parallel layout that fits the instance type",
    checked_by="hyperpod_constructs.blueprints.training",
    source=Source.library("the layouts of the library's own blueprints"),
)

RULES = (BLUEPRINT_ARGS, BLUEPRINT_SIZING)
"""This family's rules, in documentation order."""
