"""cfn-lint (errors and warnings, us-east-1) on every template of the example app.

cfn-lint runs through ``tests.template_utils.cfn_lint``: the same rules and configuration as
``cfnlint.api.lint(text, config=ManualArgs(regions=["us-east-1"]))`` (checked below), with
the rule collection loaded once instead of once per template (~1 s each).

Zero findings, except one documented CDK pattern (``ACCEPTED``), matched per finding: the
rule id, the resource type, the property path the dependency is already enforced through.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from cfnlint.api import lint
from cfnlint.config import ManualArgs

from tests.support.parameterized import DEFAULTS, parameterized_assembly
from tests.template_utils import CLUSTER_TYPE, cfn_lint, describe_matches

REGIONS = ["us-east-1"]

_W3005 = re.compile(
    r"^'(?P<target>[A-Za-z0-9]+)' dependency already enforced by a '(?:GetAtt|Ref)' at "
    r"'Resources/(?P<source>[A-Za-z0-9]+)/(?P<path>[^']+)'$"
)

# W3005 "DependsOn is redundant with a Ref/GetAtt". Accepted only where the explicit
# DependsOn is deliberate and the reference it duplicates is the one named here:
# - Lambda functions and state machines: CDK itself always adds DependsOn on the execution
#   role *and* its DefaultPolicy, so the policy exists before the first invocation; the role
#   half duplicates Properties/Role (Properties/RoleArn). Not ours to change.
# - The HyperPod cluster: the library adds teardown dependencies on the execution role, its
#   policies and every network resource (so they are deleted after the cluster, which
#   SageMaker needs while deleting). The role, subnets and security groups among them are
#   also referenced from the properties, which cfn-lint reports as redundant.
_ACCEPTED_W3005: dict[str, re.Pattern[str]] = {
    "AWS::Lambda::Function": re.compile(r"^Properties/Role$"),
    "AWS::StepFunctions::StateMachine": re.compile(r"^Properties/RoleArn$"),
    CLUSTER_TYPE: re.compile(
        r"^Properties/(InstanceGroups/\d+/ExecutionRole|VpcConfig/(Subnets|SecurityGroupIds)/\d+)$"
    ),
}


def _accepted_w3005(match: Any, template: dict[str, Any]) -> bool:
    parsed = _W3005.match(match.message)
    if parsed is None or list(match.path[:2]) != ["Resources", parsed["source"]]:
        return False
    source_type = template["Resources"][parsed["source"]]["Type"]
    pattern = _ACCEPTED_W3005.get(source_type)
    return pattern is not None and bool(pattern.match(parsed["path"]))


ACCEPTED: dict[str, Callable[[Any, dict[str, Any]], bool]] = {"W3005": _accepted_w3005}


def _never(match: Any, template: dict[str, Any]) -> bool:
    return False


def unaccepted(template: dict[str, Any]) -> list[Any]:
    return [
        match
        for match in cfn_lint(template, REGIONS)
        if not ACCEPTED.get(match.rule.id, _never)(match, template)
    ]


def test_every_example_template_is_lint_clean(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    assert example_templates
    findings = {name: unaccepted(t) for name, t in sorted(example_templates.items())}
    assert not any(findings.values()), "\n".join(
        f"{name}:\n{describe_matches(found)}" for name, found in findings.items() if found
    )


def test_a_template_whose_counts_are_parameters_is_lint_clean() -> None:
    """The counts as ``Ref``s to Number parameters, in the cluster and in the gate."""
    template = (
        parameterized_assembly("Product", cluster_name="train")
        .get_stack_by_name("Product")
        .template
    )
    assert set(DEFAULTS) <= set(template["Parameters"])
    found = unaccepted(template)
    assert not found, describe_matches(found)


def test_cfn_lint_checks_the_cluster_against_its_schema(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    """Control: the same call flags a broken cluster, so a clean result means something."""
    template = json.loads(json.dumps(example_templates["MinimalDev"]))
    (cluster,) = (r for r in template["Resources"].values() if r["Type"] == CLUSTER_TYPE)
    group = cluster["Properties"]["InstanceGroups"][0]
    group["InstanceCount"] = 6759
    group["ThreadsPerCore"] = 3
    cluster["Properties"]["ClusterName"] = "-bad"
    found = {(m.rule.id, "/".join(map(str, m.path[-2:]))) for m in unaccepted(template)}
    assert {
        ("E3034", "0/InstanceCount"),
        ("E3034", "0/ThreadsPerCore"),
        ("E3031", "Properties/ClusterName"),
    } <= found


def test_the_cached_runner_is_cfn_lints_api(example_templates: dict[str, dict[str, Any]]) -> None:
    template = example_templates["MinimalDev"]
    via_api = lint(json.dumps(template), config=ManualArgs(regions=REGIONS))
    assert via_api, "the example has accepted W3005 findings to compare"

    def key(m: Any) -> tuple[str, str, str]:
        return (m.rule.id, "/".join(map(str, m.path)), m.message)

    assert sorted(map(key, cfn_lint(template, REGIONS))) == sorted(map(key, via_api))


def test_accepted_findings_are_only_the_documented_ones() -> None:
    """The acceptance is narrow: the same rule on another property is still a finding."""
    template = {
        "Resources": {
            "Topic": {"Type": "AWS::SNS::Topic"},
            "Queue": {
                "Type": "AWS::SQS::Queue",
                "DependsOn": ["Topic"],
                "Properties": {"QueueName": {"Fn::GetAtt": ["Topic", "TopicName"]}},
            },
        }
    }
    assert [m.rule.id for m in unaccepted(template)] == ["W3005"]
