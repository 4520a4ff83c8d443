"""Bad inputs drawn from the library's own public signatures: every public function and method
of the eager modules (those that answer at once, not in the synth report: sizing, convert) is
called with one argument replaced by a value its annotation does not allow (a wrong type, a
token, a boundary value), and must raise the library's error naming that argument, never a raw
exception, a hang or a silent result. A record that checks nothing itself (``convert.Options``)
is fuzzed where it is used.

The targets are enumerated (``__all__`` of each module in ``EAGER_MODULES``, every public
function, classmethod, staticmethod and constructor of its classes); the wrong values are
derived from each parameter's annotation. A new public function joins by itself; one whose
annotation the test cannot draw for fails ``test_every_public_parameter_can_be_drawn``.
The constructors and factories whose findings go to the synth report are fuzzed by
tests/test_fuzz_entry_points.py.

The sweep below reaches every public callable of the package (the top level and every public
sub-package, from their ``__all__``; a construct is built in a real scope): every required
parameter at once gets one wrong value of each kind, then (hypothesis, sampled in ``make
test``) each parameter, optional ones too, draws its own value of any kind. The refusal must be
clear (the library's error, or a ``TypeError``/``ValueError`` naming a parameter or raised on
purpose by the library), never a raw error from deep inside.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import math
import re
import tempfile
import traceback
from collections.abc import Callable, Iterator
from enum import Enum
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from aws_cdk import App, CfnParameter, Stack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hyperpod_constructs
from hyperpod_constructs import HyperPodInstanceType, HyperPodValidationError, sizing
from hyperpod_constructs.tools import convert
from tests.support.depth import examples
from tests.test_convert import parameters_of, request_of

EAGER_MODULES = (sizing, convert)
"""The modules whose public functions and methods raise at once (no synth report to carry a
finding): ``SizingError`` and ``ConversionError`` are their errors."""
ERRORS = (sizing.SizingError, HyperPodValidationError, convert.ConversionError)
RECORDS = {sizing.SizingError, sizing.SizingProblem, sizing.ParallelLayout, convert.ConversionError}
"""Errors, plain records and protocols: they hold what they are given and check nothing."""
GPU = HyperPodInstanceType.ML_P5_48XLARGE
REQUEST, PARAMETERS = request_of("adt-base-config"), parameters_of("adt-base-config")


def _converting(options: convert.Options) -> object:
    return convert.convert_request(REQUEST, PARAMETERS, options)


CHECKED_WHERE_USED: dict[type, Callable[[Any], object]] = {convert.Options: _converting}
"""Records whose fields are checked by the function that takes them: fuzzed through it."""

VALID: dict[str, object] = {
    "int": 8,
    "HyperPodInstanceType": GPU,
    "IConstruct": None,
    "object": None,
}
"""A valid value per base annotation (for the arguments that are not under test)."""
VALID_BY_NAME: dict[str, object] = {"request": REQUEST, "provisioning_parameters": PARAMETERS}
"""Where the annotation says ``object`` (parsed JSON): a valid value of that parameter."""


def _token(kind: str) -> Any:
    parameter = CfnParameter(Stack(App(), "Tokens"), "P", type=kind)
    return parameter.value_as_number if kind == "Number" else parameter.value_as_string


def _wrong(base: str) -> list[object]:
    """Values a parameter annotated ``base`` must refuse: other types, tokens (a size cannot
    be computed from an unresolved value), and the boundaries of a positive whole number."""
    other_types: list[object] = ["8", 2.5, math.nan, math.inf, True, [8], b"8", {"n": 8}]
    if base == "int":
        return [*other_types, 0, -1, 10**30, _token("Number"), _token("String")]
    if base == "HyperPodInstanceType":
        names = [8, None, ["ml.p5.48xlarge"], {"name": "ml.p5.48xlarge"}]
        wrapped = [HyperPodInstanceType.of(name) for name in names]  # type: ignore[arg-type]
        return ["ml.p5.48xlarge", 8, _token("String"), HyperPodInstanceType, *wrapped]
    if base == "bool":
        return ["yes", "false", 1, 0, math.nan, None]
    if base == "str":
        return [5, 2.5, b"name", ["name"], None]
    if base == "IConstruct":
        return ["Training/Cluster", 5, Stack]
    if base == "Options":
        return ["--continuous", 5, {"continuous": True}]
    return []  # ``object``: parsed JSON, checked against botocore's model (tests/test_convert.py)


def _base(annotation: str) -> tuple[str, bool]:
    """``int | None`` -> (``int``, optional)."""
    parts = [part.strip() for part in annotation.split("|")]
    optional = "None" in parts
    rest = [part for part in parts if part != "None"]
    return (rest[0] if len(rest) == 1 else annotation), optional


def _targets() -> Iterator[tuple[str, Callable[..., object], Callable[[], object] | None]]:
    """(label, callable, how to make ``self`` or ``None``) for every public callable."""
    for module in EAGER_MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isfunction(obj):
                yield name, obj, None
            elif inspect.isclass(obj) and obj in CHECKED_WHERE_USED:
                yield f"{name}() in use", _used(obj, CHECKED_WHERE_USED[obj]), None
            elif inspect.isclass(obj) and obj not in RECORDS:
                yield f"{name}()", obj, None
                for attr, member in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    if isinstance(member, classmethod | staticmethod):
                        yield f"{name}.{attr}", getattr(obj, attr), None
                for attr, member in inspect.getmembers(obj, inspect.isfunction):
                    if not attr.startswith("_"):
                        yield f"{name}.{attr}", member, _example_of(obj)


def _used(cls: type, use: Callable[[Any], object]) -> Callable[..., object]:
    """``cls(**kwargs)`` handed to ``use``, with ``cls``'s signature (so its fields are drawn)."""

    def build_and_use(**kwargs: Any) -> object:
        return use(cls(**kwargs))

    build_and_use.__signature__ = inspect.signature(cls)  # type: ignore[attr-defined]
    return build_and_use


def _example_of(cls: type) -> Callable[[], object]:
    return lambda: cls(**_valid_arguments(cls))


def _parameters(function: Callable[..., object]) -> list[inspect.Parameter]:
    skip = {"self", "cls"}
    return [p for p in inspect.signature(function).parameters.values() if p.name not in skip]


def _valid_arguments(function: Callable[..., object]) -> dict[str, object]:
    values = {}
    for parameter in _parameters(function):
        if parameter.default is inspect.Parameter.empty:
            base = _base(str(parameter.annotation))[0]
            values[parameter.name] = VALID_BY_NAME.get(parameter.name, VALID.get(base))
    return values


UNBOUNDED = {"accelerators"}
"""Counts with no upper bound of their own: ``instances_for_accelerators`` answers exactly for
any count, and the group it sizes reports an instance count HyperPod cannot hold in the
synth report (so an instance group never raises for it)."""


def _wrong_for(parameter: inspect.Parameter) -> list[object]:
    """:func:`_wrong` of the parameter's annotation (``None`` left out where it is allowed)."""
    base, optional = _base(str(parameter.annotation))
    return [
        value
        for value in _wrong(base)
        if not (optional and value is None)
        and not (parameter.name in UNBOUNDED and value == 10**30)
    ]


TARGETS = sorted(_targets(), key=lambda target: target[0])
CASES = [
    pytest.param(label, function, make, parameter.name, id=f"{label}.{parameter.name}")
    for label, function, make in TARGETS
    for parameter in _parameters(function)
    if _wrong_for(parameter)
]


def test_every_public_parameter_can_be_drawn() -> None:
    """A public parameter whose annotation has no valid or wrong values here fails: add
    them, so that the new parameter is fuzzed too."""
    missing = [
        f"{label}({parameter.name}: {parameter.annotation})"
        for label, function, _make in TARGETS
        for parameter in _parameters(function)
        if _base(str(parameter.annotation))[0] not in VALID
        and parameter.default is inspect.Parameter.empty
        and parameter.name not in VALID_BY_NAME
    ]
    assert missing == []
    assert len(CASES) >= 15


def _call(function: Callable[..., object], make: Callable[[], object] | None, **kw: Any) -> object:
    arguments = {**_valid_arguments(function), **kw}
    if make is None:
        return function(**arguments)
    return function(make(), **arguments)


def test_the_valid_arguments_are_valid() -> None:
    """Each target with its valid values returns (so a refusal below is the bad value's)."""
    for _label, function, make in TARGETS:
        _call(function, make)


def _names(text: str, parameter: str) -> bool:
    # instances_for_accelerators names its count as the group's parameter, min_accelerators
    aliases = {"accelerators": "min_accelerators"}
    names = {parameter, aliases.get(parameter, parameter)}
    return any(re.search(rf"\b{re.escape(name)}\b", text) for name in names)


@pytest.mark.parametrize(("label", "function", "make", "parameter"), CASES)
def test_a_wrong_value_gives_the_librarys_error_naming_the_argument(
    label: str, function: Callable[..., object], make: Callable[[], object] | None, parameter: str
) -> None:
    declared = next(p for p in _parameters(function) if p.name == parameter)
    for value in _wrong_for(declared):
        with pytest.raises(ERRORS) as caught:
            _call(function, make, **{parameter: value})
        assert _names(str(caught.value), parameter), f"{label}({parameter}={value!r}): {caught}"


@pytest.mark.deep
@settings(
    max_examples=examples(200, 30),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    case=st.sampled_from(CASES),
    value=st.one_of(
        st.integers(min_value=-(10**6), max_value=10**40),
        st.floats(),
        st.text(max_size=20),
        st.none(),
        st.booleans(),
    ),
)
def test_any_value_is_a_result_or_the_librarys_error(case: Any, value: object) -> None:
    """Random values of random types: a positive whole number in range may be accepted (with
    a whole number of instances as the answer); anything else is the library's error."""
    label, function, make, parameter = case.values
    try:
        result = _call(function, make, **{parameter: value})
    except ERRORS:
        return
    except Exception as error:  # the crash this test is here to find
        pytest.fail(f"{label}({parameter}={value!r}): {type(error).__name__}: {error}")
    annotation = next(p.annotation for p in _parameters(function) if p.name == parameter)
    base, optional = _base(str(annotation))
    if value is None:
        assert optional, f"{label}({parameter}=None) was accepted"
    elif base == "int":
        assert type(value) is int and value >= 1, f"{label}({parameter}={value!r}) accepted"
    elif base in ("bool", "str"):
        assert type(value).__name__ == base, f"{label}({parameter}={value!r}) accepted"
    if isinstance(result, int):
        assert result >= 0


# Every public callable of the package: the top level's ``__all__`` and each public
# sub-package's (``hyperpod_constructs._SUBPACKAGES``), with every required parameter given the
# same wrong value at once. No valid values are needed: whatever the callable checks first, its
# refusal must be clear (the library's error, or a ``TypeError``/``ValueError`` naming one of
# its parameters), never a raw error from deep inside.


def _public_modules() -> list[ModuleType]:
    """The top level and each public sub-package: docs/versioning.md, the public API is every
    name in their ``__all__`` (one with no ``__all__``, such as ``watch``, exports none)."""
    subpackages = [
        importlib.import_module(name, hyperpod_constructs.__name__)
        for name in hyperpod_constructs._SUBPACKAGES
    ]
    return [hyperpod_constructs, *subpackages]


def _is_construct(obj: type) -> bool:
    return any(base.__name__ == "Construct" for base in inspect.getmro(obj))


def _sweep_targets() -> Iterator[tuple[str, Callable[..., object]]]:
    seen: set[int] = set()
    for module in _public_modules():
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            label = f"{module.__name__.removeprefix('hyperpod_constructs')}.{name}".lstrip(".")
            if inspect.isfunction(obj):
                yield label, obj
            elif inspect.isclass(obj) and not issubclass(obj, BaseException):
                # An Enum's constructor is Python's lookup by value ("None is not a valid
                # NodeType"); the library's ``.of()`` enum-likes are fuzzed as classmethods.
                if _is_construct(obj) and not inspect.isabstract(obj):
                    yield f"{label}()", _in_a_scope(obj)
                elif not _is_protocol(obj) and not issubclass(obj, Enum):
                    yield f"{label}()", obj
                for attr, member in vars(obj).items():
                    if not attr.startswith("_") and isinstance(member, classmethod | staticmethod):
                        yield f"{label}.{attr}", getattr(obj, attr)


def _in_a_scope(cls: type) -> Callable[..., object]:
    """A construct's constructor with a real scope and id: its other parameters are drawn
    (what it cannot hold raises at once or is a finding in the synth report)."""

    def construct(**kwargs: Any) -> object:
        return cls(Stack(App(), "Sweep"), "Target", **kwargs)

    signature = inspect.signature(cls.__init__)  # jsii's metaclass hides the class's own
    rest = [p for name, p in signature.parameters.items() if name not in ("self", "scope", "id")]
    construct.__signature__ = signature.replace(parameters=rest)  # type: ignore[attr-defined]
    return construct


def _is_protocol(obj: type) -> bool:
    return bool(getattr(obj, "_is_protocol", False))


def _required(function: Callable[..., object]) -> list[inspect.Parameter]:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # a jsii enum-like or builtin with no Python signature
        return []
    return [
        p
        for p in parameters
        if p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]


SWEEP = sorted(
    ((label, function) for label, function in _sweep_targets() if _required(function)),
    key=lambda target: target[0],
)
SWEEP_VALUES: list[object] = [None, 7, -1, 2.5, math.nan, "x", b"x", [object()], {"x": 1}]
"""One wrong value of each kind for every required parameter at once: most parameters take
none of these (a string is a folder name or a cluster name for some: their refusal or answer
is fine, as long as it is not a raw error)."""


def _clear(error: BaseException, parameters: list[inspect.Parameter]) -> bool:
    """The library's own error, a ``TypeError``/``ValueError`` that names a parameter, or
    one the library raises itself on purpose (a ``raise`` statement of the package, not an
    operation on a value of the wrong type deep inside)."""
    if type(error).__module__.startswith("hyperpod_constructs"):
        return True
    if not isinstance(error, TypeError | ValueError):
        return False
    if any(re.search(rf"\b{re.escape(p.name)}\b", str(error)) for p in parameters):
        return True
    last = traceback.extract_tb(error.__traceback__)[-1]
    package = Path(hyperpod_constructs.__file__).parent
    return Path(last.filename).is_relative_to(package) and (last.line or "").startswith("raise")


def test_the_sweep_covers_every_public_module() -> None:
    """The sweep's targets are derived, not listed: every public module gives some."""
    modules = {label.removeprefix("tools.").split(".")[0] for label, _ in SWEEP if "." in label}
    assert len(SWEEP) >= 40
    assert {"summary", "validation", "sizing", "convert", "gate", "plan", "policy"} <= modules


@pytest.mark.parametrize(("label", "function"), SWEEP, ids=[label for label, _f in SWEEP])
def test_a_wrong_value_anywhere_is_refused_clearly(
    label: str, function: Callable[..., object], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # a folder or file name among the values stays in here
    parameters = _required(function)
    for value in [*SWEEP_VALUES, _token("String"), _token("Number")]:
        arguments = {p.name: value for p in parameters if p.kind != p.POSITIONAL_ONLY}
        positional = [value for p in parameters if p.kind == p.POSITIONAL_ONLY]
        try:
            function(*positional, **arguments)
        except Exception as error:
            assert _clear(error, parameters), f"{label}(all={value!r}): {error!r}"


def _keyword_parameters(function: Callable[..., object]) -> list[inspect.Parameter]:
    """Every parameter that can be passed by name (required and optional)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return []
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [p for p in parameters if p.kind in kinds]


MIXED = sorted(
    ((label, function) for label, function in _sweep_targets() if _keyword_parameters(function)),
    key=lambda target: target[0],
)
"""Every public callable with a parameter to draw (optional ones too: a construct whose props
are all optional is built in a real scope with random props)."""

_EMPTY_FOLDER = tempfile.mkdtemp(prefix="hyperpod-fuzz-")
"""Where the callables run: a file or folder name among the values stays in here."""

_ANY_VALUE = st.one_of(
    st.sampled_from([*SWEEP_VALUES, True, 0, 10**30, -math.inf, (), "", "x" * 300]),
    st.integers(min_value=-(10**6), max_value=10**6),
    st.text(max_size=12),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)
"""Values of every kind, for any parameter: a few may be right for some parameter; the
others are wrong in type or bounds."""


@pytest.mark.deep
@settings(
    max_examples=examples(600, 40),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(case=st.sampled_from(MIXED), data=st.data())
def test_any_mix_of_values_anywhere_is_a_result_or_a_clear_refusal(
    case: tuple[str, Callable[..., object]], data: st.DataObject
) -> None:
    """Each parameter (required, and optional ones at random) draws its own value: a mix of
    right and wrong values reaches deeper than the sweep above, and the refusal must still be
    clear. Runs in an empty folder (a drawn string may be taken as a file or folder name)."""
    label, function = case
    parameters = _keyword_parameters(function)
    arguments = {
        p.name: data.draw(_ANY_VALUE, label=p.name)
        for p in parameters
        if p.default is inspect.Parameter.empty or data.draw(st.booleans(), label=f"{p.name}?")
    }
    try:
        with contextlib.chdir(_EMPTY_FOLDER):
            function(**arguments)
    except Exception as error:
        assert _clear(error, parameters), f"{label}(**{arguments!r}): {error!r}"
