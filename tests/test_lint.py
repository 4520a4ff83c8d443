"""cfn-lint (errors and warnings, us-east-1) on every template of the example app.

cfn-lint runs through ``tests.template_utils.cfn_lint``: the same rules and configuration as
``cfnlint.api.lint(text, config=ManualArgs(regions=["us-east-1"]))`` (checked below), with
the rule collection loaded once instead of once per template (~1 s each).

Zero findings with cfn-lint's default rules, warnings included: no finding is filtered. The
library writes no ``DependsOn`` that a ``Ref`` / ``Fn::GetAtt`` of the same resource already
implies (W3005), its teardown order included.
"""

from __future__ import annotations

import json
from typing import Any

from cfnlint.api import lint
from cfnlint.config import ManualArgs

from tests.support.parameterized import DEFAULTS, parameterized_assembly
from tests.template_utils import (
    CLUSTER_TYPE,
    cfn_lint,
    depends_on,
    describe_matches,
    references,
    resources,
)

REGIONS = ["us-east-1"]


def lint_findings(template: dict[str, Any]) -> list[Any]:
    """Every cfn-lint finding (errors and warnings) of ``template``."""
    return cfn_lint(template, REGIONS)


def test_every_example_template_is_lint_clean(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    assert example_templates
    findings = {name: lint_findings(t) for name, t in sorted(example_templates.items())}
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
    found = lint_findings(template)
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
    found = {(m.rule.id, "/".join(map(str, m.path[-2:]))) for m in lint_findings(template)}
    assert {
        ("E3034", "0/InstanceCount"),
        ("E3034", "0/ThreadsPerCore"),
        ("E3031", "Properties/ClusterName"),
    } <= found


def test_the_cached_runner_is_cfn_lints_api(example_templates: dict[str, dict[str, Any]]) -> None:
    template = json.loads(json.dumps(example_templates["MinimalDev"]))
    for resource in template["Resources"].values():  # findings to compare: W3005 on each
        resource["DependsOn"] = sorted(depends_on(resource) | references(resource))
    via_api = lint(json.dumps(template), config=ManualArgs(regions=REGIONS))
    assert {m.rule.id for m in via_api} == {"W3005"}

    def key(m: Any) -> tuple[str, str, str]:
        return (m.rule.id, "/".join(map(str, m.path)), m.message)

    assert sorted(map(key, cfn_lint(template, REGIONS))) == sorted(map(key, via_api))


def test_the_teardown_order_is_kept_where_no_reference_implies_it(
    example_templates: dict[str, dict[str, Any]],
) -> None:
    """Only what a reference implies is left out: the cluster still waits for its role's
    policy and the network it does not name, each gate function for its role's policy."""
    template = example_templates["FsdpTraining"]
    (cluster,) = resources(template, CLUSTER_TYPE).values()
    named = references(cluster)
    assert not depends_on(cluster) & named
    kept = depends_on(cluster)
    types = {template["Resources"][logical_id]["Type"] for logical_id in kept}
    assert {"AWS::IAM::Policy", "AWS::EC2::Route", "AWS::EC2::NatGateway"} <= types
    functions = resources(template, "AWS::Lambda::Function")
    for function in functions.values():
        assert not depends_on(function) & references(function)
    gate = [f for logical_id, f in functions.items() if "MinCountGate" in logical_id]
    assert gate
    for function in gate:
        policies = {
            d
            for d in depends_on(function)
            if template["Resources"][d]["Type"] == "AWS::IAM::Policy"
        }
        assert policies, "a function waits for its role's policy"


unaccepted = lint_findings
"""The name other test modules import (every finding counts: none is accepted)."""
