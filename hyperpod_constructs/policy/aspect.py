"""The organisation policy as a CDK Aspect: ``Aspects.of(app).add(HyperPodPolicy(...))``."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

import jsii
from aws_cdk import Annotations, IAspect, Stage
from constructs import Construct, IConstruct, IValidation

from .._core.arguments import (
    check,
    is_bool,
    is_int,
    is_number,
    is_sequence,
    is_str,
    raise_if_any,
)
from .._core.expect import require
from .._core.finding import Finding, Severity
from ..cluster import HyperPodSlurmCluster
from ..enums import DeepHealthCheck
from ..instance_type import HyperPodInstanceType
from .rules import (
    AllowedInstanceTypes,
    ClusterFacts,
    EbsCustomerManagedKey,
    MaxInstanceCount,
    MinInstanceFloor,
    PolicyRule,
    PolicyRuleId,
    PolicySeverity,
    RequiredDeepHealthChecks,
    RequiredTags,
    VpcRequired,
    fail_closed,
)

EXEMPTION_METADATA = "hyperpod-policy:exemption"
"""Construct metadata type under which :meth:`HyperPodPolicy.exempt` records exemptions
(it also lands in the cloud assembly manifest, as an audit trail)."""

WARNING_ID_PREFIX = "hyperpod-policy:"
"""Warnings are added as ``hyperpod-policy:<rule id>`` (the id to acknowledge)."""


@dataclasses.dataclass(frozen=True)
class PolicyExemption:
    """A recorded exemption: ``rule_id`` does not apply below the construct it was added to
    (to every group, or only to ``group``)."""

    rule_id: str
    """The rule it exempts from, e.g. ``HPP-VPC``."""
    reason: str
    """Why, in words (shown in the finding it silences)."""
    group: str | None = None
    """Only this instance group. Default: every group."""


def _exemptions(construct: IConstruct) -> list[PolicyExemption]:
    found: list[PolicyExemption] = []
    for scope in construct.node.scopes:
        for entry in scope.node.metadata:
            if entry.type != EXEMPTION_METADATA or not isinstance(entry.data, Mapping):
                continue
            data: Mapping[str, Any] = entry.data
            found.append(PolicyExemption(str(data["rule"]), str(data["reason"]), data.get("group")))
    return found


def _is_severity(value: object) -> bool:
    try:
        Severity.of(value)
    except TypeError:
        return False
    return True


def _argument_findings(arguments: Mapping[str, Any]) -> list[Finding]:
    """Wrong types among :class:`HyperPodPolicy`'s arguments (``HP-ARG-TYPE``)."""
    severity_text = "Severity.ERROR / Severity.WARNING (or 'error' / 'warning')"
    severities = arguments["severities"]
    return [
        *check("name", arguments["name"], is_str, "a str"),
        *check(
            "max_instance_count",
            arguments["max_instance_count"],
            is_int,
            "an int >= 0 or None",
            optional=True,
        ),
        *check(
            "min_instance_fraction",
            arguments["min_instance_fraction"],
            is_number,
            "a number in (0, 1] or None",
            optional=True,
        ),
        *check(
            "required_deep_health_checks",
            arguments["required_deep_health_checks"],
            lambda v: is_bool(v) or is_sequence(v) or isinstance(v, frozenset | set),
            "True / False or a list of DeepHealthCheck",
        ),
        *check(
            "require_customer_managed_key",
            arguments["require_customer_managed_key"],
            is_bool,
            "True or False (a bool)",
        ),
        *check("require_vpc", arguments["require_vpc"], is_bool, "True or False (a bool)"),
        *check("severity", arguments["severity"], _is_severity, severity_text),
        *check(
            "severities",
            severities,
            lambda v: isinstance(v, Mapping) and all(_is_severity(x) for x in v.values()),
            f"a dict of rule id to {severity_text}",
            optional=True,
        ),
        *check("rules", arguments["rules"], is_sequence, "a list of PolicyRule"),
    ]


@jsii.implements(IValidation)
class _DeferredCheck:
    """Runs the policy on one cluster at validation time: after every aspect (including the
    ``Tags.of()`` aspects, whatever their priority) has run.

    The errors are the validation's result, so they fail every synth (``python app.py``,
    ``cdk synth``, an in-process ``app.synth()``), whatever the app's feature flags, and no
    template is written. They are kept: a second ``app.synth()`` fails again (the policy
    never fails open), while the annotations are added only once."""

    def __init__(self, policy: HyperPodPolicy, cluster: HyperPodSlurmCluster) -> None:
        self._policy = policy
        self._cluster = cluster
        self._errors: list[str] | None = None

    @property
    def cluster(self) -> HyperPodSlurmCluster:
        """The checked cluster."""
        return self._cluster

    def validate(self) -> list[str]:
        if self._errors is None:
            self._errors = self._policy._report(self._cluster)
        return list(self._errors)


@jsii.implements(IValidation)
class _LateCheck:
    """The policy's checks of clusters in Stages below its scope that were synthesized
    before the policy was added (``pipelines.CodePipeline.add_stage`` synthesizes its Stage
    at once): run at the synth of the policy's own scope, which they fail on an error. The
    Stage's templates are already written then; the report says so."""

    def __init__(self, checks: Sequence[_DeferredCheck]) -> None:
        self._checks = checks

    def validate(self) -> list[str]:
        return [
            f"[{check.cluster.node.path}] {error} (checked after its Stage was synthesized: "
            "its template is in the output; add the policy before the Stage is synthesized, "
            "e.g. before pipeline.add_stage)"
            for check in self._checks
            for error in check.validate()
        ]


def _clusters_in_stages_below(stage: IConstruct) -> list[HyperPodSlurmCluster]:
    """The clusters in the Stages nested (at any depth) in ``stage``, not in ``stage``'s own
    tree."""
    return [
        cluster
        for cluster in stage.node.find_all()
        if isinstance(cluster, HyperPodSlurmCluster) and Stage.of(cluster) is not stage
    ]


@jsii.implements(IAspect)
class HyperPodPolicy:
    """An organisation's rules for every HyperPod cluster in a scope, applied as an aspect.

    ```python
    Aspects.of(app).add(
        HyperPodPolicy(
            name="acme",
            allowed_instance_types=[HyperPodInstanceType.ML_P5_48XLARGE],
            max_instance_count=64,
            min_instance_fraction=0.9,
            required_deep_health_checks=True,
            required_tags=["team"],
            require_customer_managed_key=True,
            require_vpc=True,
            severities={PolicyRuleId.REQUIRED_TAGS: PolicySeverity.WARNING},
        )
    )
    ```

    Every HyperPod cluster (:class:`HyperPodSlurmCluster` and its subclasses) in the scope is
    checked at synth, after all aspects ran, so tags from ``Tags.of(app)`` count. Each
    violation is an annotation on the cluster (which names its path) naming the rule, the
    group and the fix: an error (also the policy's node validation error, so every synth fails and
    no template is written, whatever the app's feature flags) or a warning with id
    ``hyperpod-policy:<rule id>``. Rules left at their default (``None`` / ``False``) are
    off. Exempt a construct from a rule with :meth:`exempt`.

    :param name: shown in every message. Default: ``"HyperPod policy"``.
    :param allowed_instance_types: :class:`AllowedInstanceTypes`. Default: off.
    :param max_instance_count: :class:`MaxInstanceCount`. Default: off.
    :param min_instance_fraction: :class:`MinInstanceFloor`. Default: off.
    :param required_deep_health_checks: :class:`RequiredDeepHealthChecks`; ``True`` requires
        both checks. Default: off.
    :param required_tags: :class:`RequiredTags` (keys, or key -> allowed values). Default: off.
    :param require_customer_managed_key: :class:`EbsCustomerManagedKey`. Default: off.
    :param require_vpc: :class:`VpcRequired`. Default: off.
    :param severity: severity of the rules built from the arguments above. Default: ERROR.
    :param severities: per-rule severity (rule id -> severity), overriding ``severity``.
    :param rules: more rules (built-in rule objects, or your own :class:`PolicyRule`).
    """

    def __init__(
        self,
        *,
        name: str = "HyperPod policy",
        allowed_instance_types: Collection[HyperPodInstanceType | str] | None = None,
        max_instance_count: int | None = None,
        min_instance_fraction: float | None = None,
        required_deep_health_checks: bool | Collection[DeepHealthCheck] = False,
        required_tags: Mapping[str, Collection[str] | None] | Collection[str] | None = None,
        require_customer_managed_key: bool = False,
        require_vpc: bool = False,
        severity: PolicySeverity = PolicySeverity.ERROR,
        severities: Mapping[str, PolicySeverity] | None = None,
        rules: Sequence[PolicyRule] = (),
    ) -> None:
        raise_if_any("HyperPodPolicy", _argument_findings(locals()))
        # Strings ("error", "warning") work; anything else was rejected above.
        severity = Severity.of(severity)
        overrides = {str(key): Severity.of(value) for key, value in (severities or {}).items()}
        unknown = sorted(set(overrides) - {str(rule_id) for rule_id in PolicyRuleId})
        if unknown:
            raise ValueError(
                f"HyperPodPolicy: unknown rule id(s) in severities: {', '.join(unknown)}; "
                f"known: {', '.join(str(rule_id) for rule_id in PolicyRuleId)}"
            )

        def level(rule_id: PolicyRuleId) -> PolicySeverity:
            return overrides.get(str(rule_id), severity)

        built: list[PolicyRule] = []
        if allowed_instance_types is not None:
            built.append(
                AllowedInstanceTypes(
                    allowed_instance_types, severity=level(PolicyRuleId.INSTANCE_TYPE)
                )
            )
        if max_instance_count is not None:
            built.append(
                MaxInstanceCount(
                    max_instance_count, severity=level(PolicyRuleId.MAX_INSTANCE_COUNT)
                )
            )
        if min_instance_fraction is not None:
            built.append(
                MinInstanceFloor(
                    min_instance_fraction, severity=level(PolicyRuleId.MIN_INSTANCE_FLOOR)
                )
            )
        if required_deep_health_checks is not False:
            checks = (
                RequiredDeepHealthChecks()
                if required_deep_health_checks is True
                else RequiredDeepHealthChecks(tuple(required_deep_health_checks))
            )
            built.append(
                dataclasses.replace(checks, severity=level(PolicyRuleId.DEEP_HEALTH_CHECKS))
            )
        if required_tags is not None:
            built.append(RequiredTags(required_tags, severity=level(PolicyRuleId.REQUIRED_TAGS)))
        if require_customer_managed_key:
            built.append(EbsCustomerManagedKey(severity=level(PolicyRuleId.EBS_CUSTOMER_KEY)))
        if require_vpc:
            built.append(VpcRequired(severity=level(PolicyRuleId.VPC_REQUIRED)))
        raise_if_any(
            "HyperPodPolicy",
            [
                finding
                for index, rule in enumerate(rules)
                for finding in check(
                    f"rules[{index}]",
                    rule,
                    lambda v: isinstance(v, PolicyRule),
                    "a PolicyRule (rule_id, severity, check)",
                )
            ],
        )
        self._name = name
        self._rules: tuple[PolicyRule, ...] = (*built, *rules)
        # Keyed by id(); the values keep the clusters alive so an id is never reused.
        self._seen: dict[int, HyperPodSlurmCluster] = {}
        self._violations: list[Finding] = []

    @property
    def name(self) -> str:
        """The policy's name, shown in every message."""
        return self._name

    @property
    def rules(self) -> tuple[PolicyRule, ...]:
        """The rules the policy checks, in order."""
        return self._rules

    @property
    def violations(self) -> tuple[Finding, ...]:
        """Every violation reported so far (exempted ones included, with their reason)."""
        return tuple(self._violations)

    def evaluate(self, cluster: ClusterFacts) -> list[Finding]:
        """Run every rule on ``cluster``: pure, no annotations, no exemptions. Each finding
        names the policy, and the cluster's path when its rule did not."""
        return [
            dataclasses.replace(
                violation,
                policy=self._name,
                path=cluster.path if violation.path is None else violation.path,
            )
            for rule in self._rules
            for violation in rule.check(cluster)
        ]

    def visit(self, node: IConstruct) -> None:
        """Aspect entry point: schedule the check of each HyperPod cluster (once); at a
        Stage (the App included), check the clusters of the Stages below that were
        synthesized without this policy."""
        if isinstance(node, HyperPodSlurmCluster):
            if id(node) not in self._seen:
                self._seen[id(node)] = node
                node.node.add_validation(_DeferredCheck(self, node))
        elif Stage.is_stage(node):
            late = [
                _DeferredCheck(self, cluster)
                for cluster in _clusters_in_stages_below(node)
                if id(cluster) not in self._seen
            ]
            for check in late:
                self._seen[id(check.cluster)] = check.cluster
            if late:
                node.node.add_validation(_LateCheck(late))

    def check_across_stage(self, cluster: HyperPodSlurmCluster) -> list[str]:
        """Check ``cluster``, in a Stage below the scope this policy was added to (aws-cdk-lib
        runs only a Stage's own aspects when it synthesizes): its cluster validation calls
        this, so the Stage's synth fails on an error and writes no template. Once per
        cluster."""
        if id(cluster) in self._seen:
            return []
        self._seen[id(cluster)] = cluster
        return _DeferredCheck(self, cluster).validate()

    @staticmethod
    def exempt(scope: Construct, rule_id: str, *, reason: str, group: str | None = None) -> None:
        """Exempt every cluster at or below ``scope`` from ``rule_id`` (or only its group
        ``group``). The violation is still reported, as an info annotation with the reason,
        and the exemption is recorded in the construct metadata.

        :raises TypeError: an argument of another type (``group``: a ``str`` or ``None``).
        :raises ValueError: ``reason`` is empty.
        """
        where = "HyperPodPolicy.exempt"
        require(where, "scope", scope, Construct)
        require(where, "rule_id", rule_id, str)
        require(where, "reason", reason, str)
        require(where, "group", group, (str, type(None)))
        if not reason or not reason.strip():
            raise ValueError("HyperPodPolicy.exempt: give the reason for the exemption")
        data: dict[str, str] = {"rule": str(rule_id), "reason": reason}
        if group is not None:
            data["group"] = group
        scope.node.add_metadata(EXEMPTION_METADATA, data)

    # -- internals -----------------------------------------------------------------------

    def _apply_exemptions(
        self, violations: Iterable[Finding], exemptions: Sequence[PolicyExemption]
    ) -> list[Finding]:
        result: list[Finding] = []
        for violation in violations:
            reason = next(
                (
                    e.reason
                    for e in exemptions
                    if e.rule_id == violation.rule_id and e.group in (None, violation.group)
                ),
                None,
            )
            result.append(dataclasses.replace(violation, exemption=reason))
        return result

    def _report(self, cluster: HyperPodSlurmCluster) -> list[str]:
        """Annotate ``cluster`` with its violations; return the errors' messages."""
        violations = self._apply_exemptions(
            self.evaluate(ClusterFacts.of(cluster)), _exemptions(cluster)
        )
        annotations = Annotations.of(cluster)
        errors: list[str] = []
        for violation in violations:
            self._violations.append(violation)
            # The annotation (and every report line) names the cluster's path: once.
            own = violation.path == cluster.node.path
            message = (dataclasses.replace(violation, path=None) if own else violation).message()
            if violation.exemption is not None:
                annotations.add_info(message)
            elif fail_closed(violation.severity) is PolicySeverity.ERROR:
                annotations.add_error(message)
                errors.append(message)
            else:
                annotations.add_warning_v2(f"{WARNING_ID_PREFIX}{violation.rule_id}", message)
        return errors
