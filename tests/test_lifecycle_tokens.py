"""Tokens in every text parameter of the ``LifecycleScripts`` factories, drawn from their
signatures: a string token (a ``CfnParameter``, an import, a token inside a longer string) is
rendered unchanged where the scripts are already in S3 and reported where the library must
read the value at synth (a local folder, its patterns); a token of the wrong kind (a number,
a list) is reported. Never a raw error, never a silent acceptance.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from aws_cdk import App, CfnParameter, Fn, Stack
from aws_cdk import aws_s3 as s3

from hyperpod_constructs import (
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    LifecycleScripts,
)
from tests.conftest import ROOT
from tests.support.api_model import violations
from tests.support.findings import report_of

FACTORIES = ("from_s3_uri", "from_s3", "from_directory")
IN_S3 = {"from_s3_uri", "from_s3"}
"""The factories whose values HyperPod reads at deploy time: a string token is rendered."""
FOLDER = str(ROOT / "examples" / "lifecycle")
VALID: dict[str, Any] = {
    "uri": "s3://sagemaker-x/lifecycle/",
    "on_create": "on_create.sh",
    "prefix": "lifecycle",
    "path": FOLDER,
}
FIELD = {"uri": "source_s3_uri", "on_init_complete": "on_create"}
"""Where a message names a parameter differently (the field it becomes)."""


def _parameter(stack: Stack, kind: str) -> Any:
    made = CfnParameter(stack, f"P{len(stack.node.children)}", type=kind)
    if kind == "Number":
        return made.value_as_number
    return made.value_as_list if kind == "CommaDelimitedList" else made.value_as_string


TOKENS: dict[str, Callable[[Stack, str], Any]] = {
    "string parameter": lambda stack, _valid: _parameter(stack, "String"),
    "import": lambda _stack, _valid: Fn.import_value("Shared"),
    "inside a string": lambda stack, valid: valid[:-3] + _parameter(stack, "String") + valid[-3:],
    "number parameter": lambda stack, _valid: _parameter(stack, "Number"),
    "list parameter": lambda stack, _valid: _parameter(stack, "CommaDelimitedList"),
}
STRING_KINDS = {"string parameter", "import", "inside a string"}


def _text_parameters(factory: str) -> list[str]:
    signature = inspect.signature(getattr(LifecycleScripts, factory))
    return [
        name
        for name, parameter in signature.parameters.items()
        if str(parameter.annotation) in ("str", "str | None")
    ]


CASES = [
    pytest.param(factory, parameter, kind, id=f"{factory}.{parameter}[{kind}]")
    for factory in FACTORIES
    for parameter in _text_parameters(factory)
    for kind in TOKENS
]


def test_every_text_parameter_is_drawn() -> None:
    drawn = {(factory, parameter) for factory, parameter, _ in (c.values for c in CASES)}
    assert {
        ("from_s3_uri", "uri"),
        ("from_s3_uri", "on_create"),
        ("from_s3_uri", "on_init_complete"),
        ("from_s3", "on_create"),
        ("from_s3", "prefix"),
        ("from_directory", "path"),
        ("from_directory", "on_create"),
    } <= drawn


def _scripts(stack: Stack, factory: str, parameter: str, value: Any) -> LifecycleScripts:
    arguments: dict[str, Any] = {
        name: VALID[name]
        for name in ("uri", "path", "on_create", "prefix")
        if name in _text_parameters(factory) and name != "on_init_complete"
    }
    if parameter == "on_init_complete":
        arguments.pop("on_create")
    arguments[parameter] = value
    if factory == "from_s3":
        arguments["bucket"] = s3.Bucket.from_bucket_name(stack, "Bucket", "sagemaker-x")
    built: LifecycleScripts = getattr(LifecycleScripts, factory)(**arguments)
    return built


@pytest.mark.parametrize(("factory", "parameter", "kind"), CASES)
def test_a_token_is_rendered_or_reported_never_a_crash(
    factory: str, parameter: str, kind: str
) -> None:
    app = App()
    stack = Stack(app, "Tokens")
    valid = VALID.get(parameter, "on_create.sh")
    token = TOKENS[kind](stack, valid)
    HyperPodSlurmCluster(
        stack,
        "Cluster",
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=HyperPodInstanceType.ML_M5_XLARGE)
        ],
        lifecycle_scripts=_scripts(stack, factory, parameter, token),
    )
    report = report_of(stack)
    if factory in IN_S3 and kind in STRING_KINDS:
        assert report == "", report
        template = app.synth().get_stack_by_name("Tokens").template
        (cluster,) = [
            r["Properties"]
            for r in template["Resources"].values()
            if r["Type"] == "AWS::SageMaker::Cluster"
        ]
        assert violations(cluster) == []
        config = json.dumps(cluster["InstanceGroups"][0]["LifeCycleConfig"])
        assert '{"Ref": "P' in config or '"Fn::ImportValue": "Shared"' in config, config
        return
    field = FIELD.get(parameter, parameter)
    assert re.search(rf"\b{field}\b", report), f"{factory}({parameter}=<{kind}>): {report!r}"


@pytest.mark.parametrize("option", ["exclude", "include"])
def test_a_token_pattern_is_reported_not_matched_as_text(option: str) -> None:
    """The upload is chosen at synth: a pattern that is a token has no value yet."""
    stack = Stack(App(), "Tokens")
    pattern = _parameter(stack, "String")
    HyperPodSlurmCluster(
        stack,
        "Cluster",
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=HyperPodInstanceType.ML_M5_XLARGE)
        ],
        lifecycle_scripts=LifecycleScripts.from_directory(FOLDER, **{option: ["*.sh", pattern]}),
    )
    report = report_of(stack)
    assert f"lifecycle_scripts {option} = '<token>'" in report, report
