"""What a validation rule reports, its severity, and the error raised for it."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

_LONG = 64
"""Strings longer than this are shortened in messages (their length is what matters)."""


class Severity(enum.StrEnum):
    """How a broken rule is reported: one vocabulary for the library's rules and the
    organisation policy (:class:`~hyperpod_constructs.policy.HyperPodPolicy`).

    ``ERROR`` stops the synth (no template is written); ``WARNING`` is a CDK annotation that
    can be acknowledged. Members compare equal to their values (``Severity.ERROR == "error"``).
    """

    ERROR = "error"
    WARNING = "warning"

    @classmethod
    def of(cls, value: object) -> Severity:
        """``value`` as a severity: a member, or its value as a string (any case).

        :raises TypeError: anything else (a policy must never fail open on a typo).
        """
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            for member in cls:
                if value.strip().lower() == member.value:
                    return member
        raise TypeError(
            f"severity = {shown(value)} ({type(value).__name__}) is not a severity; expected "
            "Severity.ERROR / Severity.WARNING (or 'error' / 'warning')"
        )


def shown(value: object) -> str:
    """How a message shows a value: its repr, shortened when it is a long string, with
    control characters escaped (``repr`` does that for strings)."""
    if isinstance(value, str) and len(value) > _LONG:
        return f"{value[: _LONG // 2]!r}... ({len(value)} characters)"
    text = repr(value)
    if len(text) > 4 * _LONG:
        return f"{text[: 2 * _LONG]}... ({type(value).__name__})"
    return text


@dataclass(frozen=True, kw_only=True)
class Finding:
    """One broken rule: where, which field, what was given, what is allowed, how to fix it.

    The one result type of every check: the library's rules, the blueprints, the gate's
    options and the organisation policy (:class:`~hyperpod_constructs.policy.HyperPodPolicy`).
    Build it with keywords. A library rule's finding is built by its rule
    (:meth:`~hyperpod_constructs.validation.Rule.finding`), which gives it the rule's id and
    severity; one built directly is an error unless it says ``severity``.

    A library rule names ``field``, ``value`` and ``allowed``; a policy rule may describe the
    problem in words instead (``problem``), with the cluster's ``path``.

    Example:

    ```python
    Finding(
        rule="ACME-GROUP-PREFIX",
        severity="warning",
        path="Training/Cluster",
        group="gpu",
        problem="name does not start with 'acme-'",
        fix="rename the group to acme-gpu",
    ).message()
    ```
    """

    rule: str
    """Stable rule id, e.g. ``HP-MIN-ABOVE-COUNT`` (docs/validation.md) or ``HPP-VPC``
    (docs/policies.md)."""
    field: str = ""
    """The library's property name, with the CloudFormation name in parentheses."""
    value: object = None
    """The value given (shown with ``repr``). Default: none."""
    allowed: str = ""
    """What is allowed (an error) or recommended (a warning)."""
    fix: str
    """How to fix it, in words: what to change the value to."""
    group: str | None = None
    """The instance group it belongs to. Default: none (a cluster-wide finding)."""
    severity: Severity | None = None
    """Default: error (``Rule.finding`` gives its rule's severity; a direct construction does
    not look the id up)."""
    problem: str | None = None
    """What is wrong, in words (a policy rule's finding), instead of field / value / allowed.
    Default: none."""
    path: str | None = None
    """The construct path of the cluster, when the check knows it (policy rules do).
    Default: none (the report adds the path)."""
    policy: str | None = None
    """The name of the policy that found it (set by ``HyperPodPolicy``). Default: none."""
    exemption: str | None = None
    """The reason given with ``HyperPodPolicy.exempt``, when the finding is exempted.
    Default: none."""
    positions: tuple[int, ...] = ()
    """Where ``group`` is in the cluster (1 = the first group added), shown only when two
    groups share the name. Default: none (the cluster adds it where the name is ambiguous)."""
    also: tuple[Finding, ...] = ()
    """Other rules broken by the same field and value, reported on this one line (see
    ``merge_findings``). Default: none."""

    def __post_init__(self) -> None:
        if self.problem is None and not (self.field and self.allowed):
            raise ValueError(f"a {self.rule} finding needs field and allowed, or a problem")
        severity = Severity.ERROR if self.severity is None else Severity.of(self.severity)
        object.__setattr__(self, "severity", severity)

    @property
    def rule_id(self) -> str:
        """The rule id (``rule``), as policy rules name it."""
        return self.rule

    @property
    def rules(self) -> tuple[str, ...]:
        """Every rule id this line reports: ``rule``, then those of :attr:`also`."""
        return tuple(dict.fromkeys((self.rule, *(other.rule for other in self.also))))

    @property
    def is_error(self) -> bool:
        """Whether this finding stops the synth."""
        return self.severity is Severity.ERROR

    def message(self) -> str:
        """One line: ``instance group 'gpu': field = value is not allowed; allowed: ...``.

        Warnings read ``field = value: recommended: ...`` instead. A finding with a
        ``problem`` reads ``[rule] policy: path: instance group 'g': problem. Fix: fix``.
        A finding that merged others (:attr:`also`) names every reason and fix on its line,
        joined by ``; and``, then each rule id in its brackets: ``[HP-A] [HP-B]``.
        """
        if self.problem is not None:
            return self._problem_message()
        reasons = (self, *self.also)
        allowed = "; and ".join(finding.allowed for finding in reasons)
        if self.severity is Severity.WARNING:
            verdict = f": recommended: {allowed}"
        else:
            verdict = f" is not allowed; allowed: {allowed}"
        fix = "; and ".join(finding.fix for finding in reasons)
        stop = "" if verdict.endswith(("?", ".")) else "."
        return (
            f"{self._where()}{self.field} = {shown(self.value)}{verdict}{stop} Fix: {fix} "
            + " ".join(f"[{rule}]" for rule in self.rules)
        )

    def _where(self) -> str:
        if self.group is None:
            return ""
        if not self.positions:
            return f"instance group {shown(self.group)}: "
        noun = "position" if len(self.positions) == 1 else "positions"
        numbers = ", ".join(str(position) for position in self.positions)
        return f"instance group {shown(self.group)} ({noun} {numbers}): "

    def _problem_message(self) -> str:
        policy = f"{self.policy}: " if self.policy else ""
        path = f"{self.path}: " if self.path is not None else ""
        group = self._where() if self.group is not None else ""
        text = f"[{self.rule}] {policy}{path}{group}{self.problem}. Fix: {self.fix}"
        if self.exemption is not None:
            text += f" (exempted: {self.exemption})"
        return text


def merge_findings(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per mistake: findings of the same severity about the same group, field and
    value (two rules, or two reasons of one rule, broken by one value) become one, the first
    with the others in :attr:`Finding.also`; a reason already on the line is kept once.
    Order: first occurrence."""
    merged: dict[tuple[object, ...], Finding] = {}
    for finding in findings:
        if finding.problem is not None:
            key: tuple[object, ...] = (finding.message(),)
        else:
            key = (
                finding.severity,
                finding.group,
                finding.positions,
                finding.field,
                shown(finding.value),
            )
        first = merged.get(key)
        if first is None:
            merged[key] = finding
        elif finding.problem is None and not any(
            (kept.rule, kept.allowed, kept.fix) == (finding.rule, finding.allowed, finding.fix)
            for kept in (first, *first.also)
        ):
            merged[key] = replace(first, also=(*first.also, finding))
    return list(merged.values())


class HyperPodValidationError(ValueError):
    """Invalid HyperPod props, raised when the library cannot go on (a wrong type where a
    construct is needed, a blueprint whose arguments do not fit). No template is written.

    ``findings`` holds every problem found, ``path`` the construct path they belong to.

    :param path: the construct path the findings belong to.
    :param findings: every problem found, one line each in the message.
    """

    def __init__(self, path: str, findings: Sequence[Finding]) -> None:
        self.path = path
        self.findings = tuple(findings)
        lines = [f"[{path}] {finding.message()}" for finding in self.findings]
        super().__init__("\n".join(lines))


class HyperPodArgumentError(HyperPodValidationError, TypeError):
    """An argument of the wrong type at a public entry point, where the library cannot go on
    to collect more findings. Also a ``TypeError``.

    :param path: the construct path (or the entry point's name) the findings belong to.
    :param findings: every wrong argument, one line each in the message.
    """
