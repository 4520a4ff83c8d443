"""What a validation rule is: its metadata (:class:`Rule`) bound to the pure check that reports
it (:class:`Check`).

Modelled on cdk-nag (a rule's metadata and its check in one place) and AWS ParallelCluster's
validators (one check per unit, failure levels, ids users can suppress): each ``*_rules.py``
module of this package declares a family of tightly related rules and the checks that report
them; :mod:`~hyperpod_constructs.validation.registry` collects them.
"""

from __future__ import annotations

import dataclasses
import enum
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, ParamSpec

from ..enums import NodeProvisioningMode
from .finding import Finding, Severity

P = ParamSpec("P")


class Scope(enum.StrEnum):
    """What a rule looks at (and so where its findings are grouped)."""

    ARGUMENT = "argument"
    """One argument of a public constructor, factory or helper: its type."""
    GROUP = "group"
    """One instance group."""
    CLUSTER = "cluster"
    """The cluster's own props."""
    CROSS_GROUP = "cross-group"
    """The cluster and all its groups together."""
    GATE = "gate"
    """The readiness gate's options and the counts it waits for."""
    BLUEPRINT = "blueprint"
    """A training blueprint's arguments."""


class SourceKind(enum.StrEnum):
    """What a rule's claim rests on."""

    AWS = "aws"
    """An AWS statement: the SageMaker API model (botocore's ``service-2.json``, which the API
    reference shows), the CloudFormation resource schema, or an AWS guide page."""
    LIBRARY = "library"
    """The library's own Python API (the type of an argument, an option of the library's own
    readiness gate or blueprints): no AWS statement is needed."""
    UNCONFIRMED = "unconfirmed"
    """Searched for and not found in AWS's documentation: only a warning may rest on it."""


@dataclass(frozen=True)
class Source:
    """Where a rule's claim comes from: the AWS page or API-model shape, and the gist of what
    it says (``where``: a URL, or ``API <Shape>.<Member>`` for the SageMaker API model,
    ``CloudFormation <Definition>.<Property>`` for the resource schema)."""

    where: str
    says: str
    kind: SourceKind = SourceKind.AWS

    @classmethod
    def api(cls, shape: str, says: str) -> Source:
        """A shape of the SageMaker API model (botocore ``sagemaker/2017-07-24``), e.g.
        ``ClusterInstanceGroupSpecification.InstanceCount``."""
        return cls(f"API {shape}", says)

    @classmethod
    def schema(cls, definition: str, says: str) -> Source:
        """A definition of the ``AWS::SageMaker::Cluster`` resource schema (cfn-lint's copy)."""
        return cls(f"CloudFormation AWS::SageMaker::Cluster {definition}", says)

    @classmethod
    def library(cls, says: str) -> Source:
        """A rule about the library's own Python API (no AWS claim)."""
        return cls("hyperpod-constructs", says, SourceKind.LIBRARY)

    @classmethod
    def unconfirmed(cls, searched: str, says: str) -> Source:
        """No AWS statement found (``searched``: where it was looked for)."""
        return cls(searched, says, SourceKind.UNCONFIRMED)

    def markdown(self) -> str:
        """How docs/validation.md shows it: the place (a link for a URL) and the gist."""
        where = self.where
        if where.startswith("https://"):
            where = f"[{where.rstrip('/').rsplit('/', 1)[-1]}]({where})"
        elif self.kind is SourceKind.AWS:
            where = f"`{where}`"
        prefix = "not confirmed; searched: " if self.kind is SourceKind.UNCONFIRMED else ""
        says = _MARKDOWN.sub(lambda special: "\\" + special[0], self.says).replace("<", "&lt;")
        return f"{prefix}{where}: {says}"


_MARKDOWN = re.compile(r"[\\`*\[\]]")
"""What Markdown would read in a source's words (a pattern such as ``[a-z](-*[a-z])*`` was a
link and emphasis on the rules page, ``\\.`` lost its backslash, ``ml.<family>`` was a tag):
escaped, shown as written."""


_PROPERTY = re.compile(r"`(?P<name>[^`*]+)` / `(?P<cloudformation>[A-Z][^`*]*)`")
"""A rule's :attr:`Rule.field` that names one property: the library's, then CloudFormation's
(no wildcard: ``lifecycle_scripts.*`` is several)."""

E, W = Severity.ERROR, Severity.WARNING
"""The severities' short names, as the rule families declare their rules."""

UNCONFIRMED = "not confirmed by AWS's documentation"
"""The words every warning whose source is :attr:`SourceKind.UNCONFIRMED` says."""


@dataclass(frozen=True)
class Rule:
    """One validation rule: a stable id, its severity, what it looks at, a one-line summary,
    and the checks that report it (:attr:`checks`, bound by :func:`reports`)."""

    id: str
    """The stable rule id, e.g. ``HP-MIN-ABOVE-COUNT``."""
    severity: Severity
    """An error (synth fails) or a warning."""
    scope: Scope
    """What it looks at: a group, the cluster, the gate, a blueprint."""
    field: str
    """The library property (with the CloudFormation name) the rule checks."""
    summary: str
    """One line: what is allowed (an error) or recommended (a warning)."""
    checked_by: str = ""
    """Where the check lives when it is not a :class:`Check` of this package (a construct or
    factory that reports the rule itself). Default: empty (a :class:`Check` reports it)."""
    source: Source | None = None
    """What the claim rests on (a ``Source``). Every error has an AWS source or is about the
    library's own API (a test checks it); a warning may rest on an unconfirmed claim, and then
    says so in its summary (``UNCONFIRMED``). Default: none."""
    modes: tuple[tuple[NodeProvisioningMode, Severity | None], ...] = ()
    """Where the severity depends on the cluster's ``NodeProvisioningMode``: (mode, severity)
    pairs that differ from :attr:`severity`, None where the rule does not apply in that mode
    (e.g. ``HP-MIN-NEEDS-CONTINUOUS`` in Continuous mode). The id is the same in every mode.
    Default: :attr:`severity` in every mode."""
    checks: tuple[Check[...], ...] = dataclasses.field(
        default=(), init=False, compare=False, repr=False
    )
    """The checks that report this rule (bound by :func:`reports`): one, or a few that look
    at the same setting from different places (a group alone, the group in its cluster)."""

    def severity_in(self, mode: NodeProvisioningMode) -> Severity | None:
        """The rule's severity for a cluster in ``mode``; None where it does not apply."""
        return dict(self.modes).get(mode, self.severity)

    @property
    def finding_field(self) -> str | None:
        """The field its findings name by default, read from :attr:`field`: a rule whose
        field is ``name`` / ``InstanceGroupName`` (each in backticks) names
        ``name (InstanceGroupName)``, as messages show it. None when :attr:`field` is not one
        property and its CloudFormation name (a finding then names its field itself)."""
        matched = _PROPERTY.fullmatch(self.field)
        return None if matched is None else f"{matched['name']} ({matched['cloudformation']})"

    def finding(
        self,
        *,
        value: object,
        allowed: str,
        fix: str,
        field: str | None = None,
        group: str | None = None,
        positions: tuple[int, ...] = (),
        mode: NodeProvisioningMode | None = None,
    ) -> Finding:
        """A :class:`Finding` of this rule, with its severity (:meth:`severity_in` ``mode``
        when the cluster's mode is given).

        :param field: the field it names, when not :attr:`finding_field` (an item of a list,
            ``instance_groups[2]``, or a rule about several fields). Default:
            :attr:`finding_field`.
        :param mode: the cluster's provisioning mode, for a rule whose severity depends on it
            (:attr:`modes`). Default: :attr:`severity`.
        :raises ValueError: no ``field`` for a rule without :attr:`finding_field`, or a
            ``mode`` the rule does not apply in (both mistakes of a check).
        """
        named = self.finding_field if field is None else field
        if named is None:
            raise ValueError(f"a {self.id} finding names its field (the rule's is {self.field})")
        severity = self.severity if mode is None else self.severity_in(mode)
        if severity is None:
            raise ValueError(f"{self.id} does not apply with {mode}")
        return Finding(
            rule=self.id,
            field=named,
            value=value,
            allowed=allowed,
            fix=fix,
            group=group,
            severity=severity,
            positions=positions,
        )


class Check(Generic[P]):
    """A pure check (ParallelCluster's validator): called like the function it wraps, it
    returns the findings of :attr:`rules`, and of no other rule (but ``HP-ARG-TYPE``: a value
    of the wrong type, which any check may meet).

    :param function: the check: a pure function that returns findings.
    :param rules: the rules it reports.
    :param group_order: deprecated and ignored: the registry declares the checks of one
        instance group and their order once (``validation.registry.GROUP_CHECKS``). Default:
        None.
    """

    def __init__(
        self,
        function: Callable[P, list[Finding]],
        rules: tuple[Rule, ...],
        group_order: int | None = None,
    ) -> None:
        if not callable(function):
            raise TypeError(f"Check() argument 'function' must be callable, not {function!r}")
        if not isinstance(rules, tuple) or not all(isinstance(rule, Rule) for rule in rules):
            raise TypeError(f"Check() argument 'rules' must be a tuple of Rule, not {rules!r}")
        self.function = function
        """The wrapped check."""
        self.rules = rules
        """The rules it reports."""
        if group_order is not None:
            warnings.warn(
                "group_order is deprecated and ignored: the registry lists the checks of one "
                "instance group in their order (validation.registry.GROUP_CHECKS)",
                DeprecationWarning,
                stacklevel=3,
            )
        self.__doc__ = function.__doc__
        self.__name__ = function.__name__
        self.__wrapped__ = function

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> list[Finding]:
        return self.function(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Check({self.__name__}: {', '.join(rule.id for rule in self.rules)})"


def reports(
    *rules: Rule, group_order: int | None = None
) -> Callable[[Callable[P, list[Finding]]], Check[P]]:
    """Bind a check function to the rules it reports (one or a few tightly related ones):

    ```python
    THREADS = Rule("HP-THREADS", Severity.ERROR, Scope.GROUP, "`threads_per_core`", "1 or 2")

    @reports(THREADS)
    def threads(group: InstanceGroup) -> list[Finding]: ...
    ```

    :param rules: the rules the function reports (and no other but ``HP-ARG-TYPE``; none for
        a check of types only).
    :param group_order: deprecated and ignored (see :class:`Check`). Default: None.
    """

    def bind(function: Callable[P, list[Finding]]) -> Check[P]:
        check = Check(function, rules, group_order)
        for rule in rules:
            object.__setattr__(rule, "checks", (*rule.checks, check))
        return check

    return bind
