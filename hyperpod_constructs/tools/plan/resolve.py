"""A template evaluated as CloudFormation will deploy it (pure).

Parameters (the deployed stack's values, ``--parameter`` overrides, else each ``Default``),
pseudo parameters the caller knows (``AWS::StackName``, ``AWS::Region``...), ``Mappings`` and
``Conditions`` are applied: a resource whose ``Condition`` is false is left out, ``Fn::If``
picks its branch, ``AWS::NoValue`` removes the property or list item, and ``Fn::Sub`` (both
forms), ``Fn::Join``, ``Fn::Select``, ``Fn::Split``, ``Fn::FindInMap``, ``Fn::Equals``,
``Fn::And``, ``Fn::Or``, ``Fn::Not`` and ``Ref`` give their values.

What cannot be known offline (a ``Fn::GetAtt`` or ``Ref`` of a resource, ``Fn::ImportValue``,
an SSM parameter type without its resolved value, an unknown pseudo parameter) stays an
expression in one normal form: ``Fn::GetAtt`` as a list, a text with such parts (from
``Fn::Sub`` or ``Fn::Join``) as ``{"Fn::Join": ["", [parts]]}``, an undecided ``Fn::If`` with
its condition written out. Two equal expressions therefore compare equal however they were
written; :func:`unresolved` says whether a value still holds one ("cannot tell").

cfn-lint's resolvers (``cfnlint.jsonschema._resolvers_cfn``) answer a different question (every
value a template MAY take: both branches of each ``Fn::If``, each allowed value of a
parameter, for linting) and are not installed with the library, so this module is its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

_MAX_DEPTH = 64
_NO_VALUE: Any = object()
"""``AWS::NoValue``: the property (or list item) is left out."""
_SUB = re.compile(r"\$\{([^}]*)\}")
_DIGITS = re.compile(r"[0-9]{1,9}")
_LIST_TYPES = ("CommaDelimitedList", "List<")
_SSM_TYPE = "AWS::SSM::Parameter::Value<"
_CONDITION_FUNCTIONS = ("Fn::Equals", "Fn::And", "Fn::Or", "Fn::Not", "Condition")


def parameter_values(
    template: Mapping[str, Any], given: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Each parameter the template declares -> its value: ``given`` (the deployed stack's, or
    ``--parameter``), else its ``Default`` (not for an SSM parameter type: its default names
    the SSM parameter, whose value only CloudFormation reads); a list type's value is a list.
    A parameter with neither is left out (its ``Ref`` stays an expression)."""
    declared = template.get("Parameters")
    values: dict[str, Any] = {}
    if not isinstance(declared, Mapping):
        return values
    for name, declaration in declared.items():
        if not isinstance(name, str) or not isinstance(declaration, Mapping):
            continue
        kind = declaration.get("Type")
        kind = kind if isinstance(kind, str) else "String"
        if given is not None and name in given:
            value: Any = given[name]
        elif "Default" in declaration and not kind.startswith(_SSM_TYPE):
            value = declaration["Default"]
        else:
            continue
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            continue
        value = str(value)
        if kind.startswith(_LIST_TYPES) or kind.startswith(_SSM_TYPE + "List<"):
            value = [part.strip() for part in value.split(",")]
        values[name] = value
    return values


@dataclass
class _Context:
    parameters: Mapping[str, Any]
    pseudo: Mapping[str, str]
    mappings: Mapping[str, Any]
    conditions: Mapping[str, Any]
    decided: dict[str, Any] = field(default_factory=dict)


def unresolved(value: Any, depth: int = 0) -> bool:
    """The value still holds an expression plan cannot evaluate offline."""
    if depth > _MAX_DEPTH:
        return True
    if isinstance(value, list):
        return any(unresolved(item, depth + 1) for item in value)
    if isinstance(value, Mapping):
        if _function(value) is not None:
            return True
        return any(unresolved(item, depth + 1) for item in value.values())
    return False


def _function(value: Mapping[str, Any]) -> str | None:
    if len(value) != 1:
        return None
    (key,) = value
    if isinstance(key, str) and (key == "Ref" or key.startswith("Fn::") or key == "Condition"):
        return key
    return None


def _text(value: Any) -> str | None:
    """A resolved scalar as the text CloudFormation passes (numbers as written)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | str):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else str(value)
    return None


def _joined(parts: list[Any]) -> Any:
    """Text parts (strings and expressions) as one string, or the one normal form of a text
    with expressions in it (nested texts flattened, neighbouring strings merged)."""
    flat: list[Any] = []
    for part in parts:
        if isinstance(part, Mapping) and _function(part) == "Fn::Join" and _is_text(part):
            flat += part["Fn::Join"][1]
        else:
            flat.append(part)
    merged: list[Any] = []
    for part in flat:
        text = _text(part)
        if text is None:
            merged.append(part)
        elif merged and isinstance(merged[-1], str):
            merged[-1] += text
        elif text:
            merged.append(text)
    if not merged:
        return ""
    if len(merged) == 1:
        return merged[0]
    return {"Fn::Join": ["", merged]}


def _is_text(value: Mapping[str, Any]) -> bool:
    argument = value["Fn::Join"]
    return (
        isinstance(argument, list)
        and len(argument) == 2
        and argument[0] == ""
        and isinstance(argument[1], list)
    )


class _Evaluator:
    def __init__(self, context: _Context) -> None:
        self.context = context
        self.functions: dict[str, Callable[[Any, int], Any]] = {
            "Ref": self._ref,
            "Fn::GetAtt": self._get_att,
            "Fn::Sub": self._sub,
            "Fn::Join": self._join,
            "Fn::Select": self._select,
            "Fn::Split": self._split,
            "Fn::FindInMap": self._find_in_map,
            "Fn::If": self._if,
        }

    def value(self, value: Any, depth: int = 0) -> Any:
        if depth > _MAX_DEPTH:
            return value
        if isinstance(value, list):
            items = (self.value(item, depth + 1) for item in value)
            return [item for item in items if item is not _NO_VALUE]
        if not isinstance(value, Mapping):
            return value
        name = _function(value)
        if name is not None:
            argument = value[name]
            if name in self.functions:
                return self.functions[name](argument, depth + 1)
            if name in _CONDITION_FUNCTIONS:
                return self.condition(value, depth + 1)
            return {name: self.value(argument, depth + 1)}
        resolved = {str(k): self.value(v, depth + 1) for k, v in value.items()}
        return {k: v for k, v in resolved.items() if v is not _NO_VALUE}

    # -- values --------------------------------------------------------------------------------

    def _ref(self, argument: Any, depth: int) -> Any:
        if argument == "AWS::NoValue":
            return _NO_VALUE
        if isinstance(argument, str):
            if argument in self.context.parameters:
                return self.context.parameters[argument]
            if argument in self.context.pseudo:
                return self.context.pseudo[argument]
        return {"Ref": self.value(argument, depth)}

    def _get_att(self, argument: Any, depth: int) -> Any:
        if isinstance(argument, str) and "." in argument:
            resource, attribute = argument.split(".", 1)
            return {"Fn::GetAtt": [resource, attribute]}
        return {"Fn::GetAtt": self.value(argument, depth)}

    def _variable(self, name: str, variables: Mapping[str, Any], depth: int) -> Any:
        if name in variables:
            return variables[name]
        if "." in name:
            return self._get_att(name, depth)
        return self._ref(name, depth)

    def _sub(self, argument: Any, depth: int) -> Any:
        pattern, variables = argument, {}
        if isinstance(argument, list) and len(argument) == 2:
            pattern, variables = argument[0], self.value(argument[1], depth)
        if not isinstance(pattern, str) or not isinstance(variables, Mapping):
            return {"Fn::Sub": self.value(argument, depth)}
        parts: list[Any] = []
        position = 0
        for match in _SUB.finditer(pattern):
            parts.append(pattern[position : match.start()])
            name = match[1]
            if name.startswith("!"):
                parts.append("${" + name[1:] + "}")
            else:
                value = self._variable(name.strip(), variables, depth)
                if isinstance(value, list) or value is _NO_VALUE:
                    return {"Fn::Sub": self.value(argument, depth)}
                parts.append(value)
            position = match.end()
        parts.append(pattern[position:])
        return _joined(parts)

    def _join(self, argument: Any, depth: int) -> Any:
        resolved = self.value(argument, depth)
        if not (isinstance(resolved, list) and len(resolved) == 2):
            return {"Fn::Join": resolved}
        delimiter, items = resolved
        if not isinstance(delimiter, str) or not isinstance(items, list):
            return {"Fn::Join": resolved}
        if any(isinstance(item, list) for item in items):
            return {"Fn::Join": resolved}
        parts: list[Any] = []
        for index, item in enumerate(items):
            parts += [delimiter, item] if index else [item]
        return _joined(parts)

    def _select(self, argument: Any, depth: int) -> Any:
        resolved = self.value(argument, depth)
        if isinstance(resolved, list) and len(resolved) == 2:
            index, items = resolved
            text = _text(index)
            if (
                text is not None
                and _DIGITS.fullmatch(text) is not None
                and isinstance(items, list)
                and int(text) < len(items)
            ):
                return items[int(text)]
        return {"Fn::Select": resolved}

    def _split(self, argument: Any, depth: int) -> Any:
        resolved = self.value(argument, depth)
        if isinstance(resolved, list) and len(resolved) == 2:
            delimiter, text = resolved
            if isinstance(delimiter, str) and delimiter and isinstance(text, str):
                return text.split(delimiter)
        return {"Fn::Split": resolved}

    def _find_in_map(self, argument: Any, depth: int) -> Any:
        resolved = self.value(argument, depth)
        if isinstance(resolved, list) and len(resolved) in (3, 4):
            keys = [_text(key) for key in resolved[:3]]
            if None not in keys:
                found: Any = self.context.mappings
                for key in keys:
                    found = found.get(key) if isinstance(found, Mapping) else None
                if found is not None:
                    return self.value(found, depth)
                options = resolved[3] if len(resolved) == 4 else None
                if isinstance(options, Mapping) and "DefaultValue" in options:
                    return options["DefaultValue"]
        return {"Fn::FindInMap": resolved}

    def _if(self, argument: Any, depth: int) -> Any:
        if not (isinstance(argument, list) and len(argument) == 3):
            return {"Fn::If": self.value(argument, depth)}
        decided = self.named_condition(argument[0], depth)
        if decided is True:
            return self.value(argument[1], depth)
        if decided is False:
            return self.value(argument[2], depth)
        branches = [self.value(branch, depth) for branch in argument[1:]]
        shown = [{"Ref": "AWS::NoValue"} if b is _NO_VALUE else b for b in branches]
        return {"Fn::If": [decided, *shown]}

    # -- conditions ----------------------------------------------------------------------------

    def named_condition(self, name: Any, depth: int) -> Any:
        """True, False, or (cannot tell) the condition's expression, evaluated as far as it
        goes."""
        if not isinstance(name, str):
            return {"Condition": self.value(name, depth)}
        if name not in self.context.decided:
            definition = self.context.conditions.get(name)
            self.context.decided[name] = {"Condition": name}  # a cycle stays undecided
            self.context.decided[name] = (
                {"Condition": name} if definition is None else self.condition(definition, depth + 1)
            )
        return self.context.decided[name]

    def condition(self, expression: Any, depth: int) -> Any:
        if depth > _MAX_DEPTH or not isinstance(expression, Mapping):
            return expression if isinstance(expression, bool) else {"Condition": expression}
        name = _function(expression)
        argument = expression.get(name) if name is not None else None
        if name == "Condition":
            return self.named_condition(argument, depth)
        if name == "Fn::Equals" and isinstance(argument, list) and len(argument) == 2:
            left, right = (self.value(side, depth) for side in argument)
            if unresolved(left) or unresolved(right):
                return (
                    True if canonical(left) == canonical(right) else {"Fn::Equals": [left, right]}
                )
            return canonical(left) == canonical(right)
        if name == "Fn::Not" and isinstance(argument, list) and len(argument) == 1:
            inner = self.condition(argument[0], depth + 1)
            return (not inner) if isinstance(inner, bool) else {"Fn::Not": [inner]}
        if name in ("Fn::And", "Fn::Or") and isinstance(argument, list) and argument:
            deciding = name == "Fn::Or"
            values = [self.condition(item, depth + 1) for item in argument]
            if deciding in values:
                return deciding
            open_ = [v for v in values if not isinstance(v, bool)]
            return {name: open_} if open_ else not deciding
        return {"Condition": self.value(expression, depth)}


def evaluate(
    template: Mapping[str, Any],
    parameters: Mapping[str, str] | None = None,
    pseudo: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``template`` as CloudFormation deploys it (a new object): its resources with their
    ``Condition`` applied (false: left out; cannot tell: kept, ``Condition`` holding the
    expression) and every value evaluated as far as it can be offline.

    :param template: the template, parsed.
    :param parameters: parameter values that win over the defaults (the deployed stack's,
        ``--parameter``).
    :param pseudo: pseudo parameter values known to the caller (``AWS::StackName``...).
    """
    mappings = template.get("Mappings")
    conditions = template.get("Conditions")
    evaluator = _Evaluator(
        _Context(
            parameters=parameter_values(template, parameters),
            pseudo={**_derived(pseudo or {}), **(pseudo or {})},
            mappings=mappings if isinstance(mappings, Mapping) else {},
            conditions=conditions if isinstance(conditions, Mapping) else {},
        )
    )
    result = dict(template)
    resources = template.get("Resources")
    if not isinstance(resources, Mapping):
        return result
    evaluated: dict[str, Any] = {}
    for logical_id, resource in resources.items():
        if not isinstance(resource, Mapping):
            evaluated[str(logical_id)] = resource
            continue
        body = {k: v for k, v in resource.items() if k != "Condition"}
        if "Condition" in resource:
            decided = evaluator.named_condition(resource["Condition"], 0)
            if decided is False:
                continue
            if decided is not True:
                body["Condition"] = decided
        evaluated[str(logical_id)] = evaluator.value(body)
    result["Resources"] = evaluated
    return result


def _derived(pseudo: Mapping[str, str]) -> dict[str, str]:
    region = pseudo.get("AWS::Region")
    if region is None:
        return {}
    partition = "aws-cn" if region.startswith("cn-") else "aws-us-gov" if "gov" in region else "aws"
    suffix = "amazonaws.com.cn" if partition == "aws-cn" else "amazonaws.com"
    return {"AWS::Partition": partition, "AWS::URLSuffix": suffix}


def _normalized(value: Any) -> Any:
    text = _text(value)
    if text is not None:
        return text
    if value is None:
        return None
    if isinstance(value, Mapping):
        return {str(key): _normalized(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_normalized(item) for item in value]
    return repr(value)


def canonical(value: Any, *, unordered: bool = False) -> str:
    """A text that is equal for two values CloudFormation deploys the same: a number and its
    text alike (``16`` and ``"16"``: parameters are texts), texts exactly (``"007"`` is not
    ``"7"``), object keys in any order; with ``unordered``, a list in any order (the schema's
    ``insertionOrder: false``)."""
    normalized = _normalized(value)
    if unordered and isinstance(normalized, list):
        normalized = sorted(json.dumps(item, sort_keys=True) for item in normalized)
    return json.dumps(normalized, sort_keys=True)


def as_count(value: Any) -> int | None:
    """A whole number from a resolved value (``16``, ``"16"``), else None (an expression)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?[0-9]{1,18}\s*", value):
        return int(value)
    return None
