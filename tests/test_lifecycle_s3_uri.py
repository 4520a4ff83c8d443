"""``LifecycleScripts.from_s3_uri``: a token URI (a Service Catalog product's ``CfnParameter``)
is rendered unchanged and its grants are resolved by CloudFormation; a bucket name S3 does
not take is the library's report, never aws-cdk-lib's raw ``InvalidBucketNameValue``.

The bucket names are generated, and aws-cdk-lib's own check of a bucket name
(``Bucket.from_bucket_name``) is the oracle: what it refuses, the library reports.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk import App, CfnParameter, Fn, Stack
from aws_cdk import aws_s3 as s3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hyperpod_constructs import (
    HyperPodInstanceType,
    HyperPodSlurmCluster,
    InstanceGroup,
    LifecycleScripts,
)
from tests.support.depth import examples
from tests.support.findings import report_of


def _cluster(stack: Stack, uri: str) -> HyperPodSlurmCluster:
    return HyperPodSlurmCluster(
        stack,
        "Cluster",
        instance_groups=[
            InstanceGroup.controller("controller", instance_type=HyperPodInstanceType.ML_M5_XLARGE)
        ],
        lifecycle_scripts=LifecycleScripts.from_s3_uri(uri, on_create="on_create.sh"),
    )


def _template(uri_of: Any) -> dict[str, Any]:
    app = App()
    stack = Stack(app, "Uri")
    _cluster(stack, uri_of(stack))
    assert report_of(stack) == ""
    template: dict[str, Any] = app.synth().get_stack_by_name("Uri").template
    return template


def _of_type(template: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r["Properties"] for r in template["Resources"].values() if r["Type"] == kind]


TOKENS = {
    "CfnParameter": lambda stack: CfnParameter(stack, "ScriptsUri").value_as_string,
    "Fn.import_value": lambda stack: Fn.import_value("ScriptsUri"),
    "a token bucket": lambda stack: f"s3://{CfnParameter(stack, 'Bucket').value_as_string}/lc/",
}


@pytest.mark.parametrize("kind", sorted(TOKENS))
def test_a_token_uri_is_rendered_unchanged_and_read_access_follows_it(kind: str) -> None:
    template = _template(TOKENS[kind])
    (cluster,) = _of_type(template, "AWS::SageMaker::Cluster")
    config = cluster["InstanceGroups"][0]["LifeCycleConfig"]
    expected = {
        "CfnParameter": {"Ref": "ScriptsUri"},
        "Fn.import_value": {"Fn::ImportValue": "ScriptsUri"},
        "a token bucket": {"Fn::Join": ["", ["s3://", {"Ref": "Bucket"}, "/lc/"]]},
    }[kind]
    assert config == {"OnCreate": "on_create.sh", "SourceS3Uri": expected}
    statements = {
        statement["Sid"]: statement
        for policy in _of_type(template, "AWS::IAM::Policy")
        for statement in policy["PolicyDocument"]["Statement"]
    }
    read = json.dumps(statements["ReadLifecycleScripts"]["Resource"])
    listing = json.dumps(statements["ListLifecycleScripts"]["Resource"])
    # The grants are built from the same value CloudFormation resolves, never a wildcard bucket.
    source = json.dumps(expected if kind != "a token bucket" else {"Ref": "Bucket"})
    assert source in read and source in listing
    assert '":s3:::*"' not in read


BUCKET_CHARACTERS = "abcz019.-_A\n "


def _cdk_refuses(name: str) -> bool:
    """aws-cdk-lib's own check of a bucket name (the oracle)."""
    try:
        s3.Bucket.from_bucket_name(Stack(App(), "Oracle"), "B", name)
    except RuntimeError:
        return True
    return False


def _outcome(name: str) -> str:
    """``report`` (the library's finding on the URI), ``ok`` or the raw error."""
    stack = Stack(App(), "Uri")
    try:
        _cluster(stack, f"s3://{name}/scripts/")
    except Exception as error:  # the raw error this test is here to find
        return f"raw {type(error).__name__}: {error}"
    report = report_of(stack)
    if not report:
        return "ok"
    assert "lifecycle_scripts.source_s3_uri" in report, report
    return "report"


@pytest.mark.parametrize(
    "name", ["ab", "a" * 64, "a..b", "-ab", "ab-", "192.168.1.1", "a.-b", "sagemaker x", "x\n"]
)
def test_a_bucket_name_s3_does_not_take_is_the_librarys_report(name: str) -> None:
    assert _cdk_refuses(name)
    assert _outcome(name) == "report"


@pytest.mark.deep
@settings(
    max_examples=examples(60, 10),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    name=st.one_of(
        st.text(alphabet=BUCKET_CHARACTERS, min_size=1, max_size=70),
        st.from_regex(r"[a-z0-9][a-z0-9.-]{0,66}[a-z0-9]", fullmatch=True),
    ).filter(lambda name: "/" not in name)
)
def test_generated_bucket_names_the_library_and_aws_cdk_lib_agree(name: str) -> None:
    """Every name aws-cdk-lib refuses is reported by the library; every name it takes is
    taken (no raw error either way)."""
    expected = "report" if _cdk_refuses(name) else "ok"
    assert _outcome(name) == expected, name
