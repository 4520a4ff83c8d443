"""Python source text for generated apps: calls and lists laid out as ``ruff format`` keeps
them (one line when it fits, else one argument per line with a trailing comma)."""

from __future__ import annotations

from dataclasses import dataclass, field

LINE_LENGTH = 88
"""ruff's default; what fits here also fits a project's longer limit."""
INDENT = "    "


class Code:
    """A Python expression."""

    def render(self, indent: int, column: int) -> str:
        """The expression as written on a line indented ``indent`` levels, starting at
        ``column`` (what precedes it on that line, indentation included)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Raw(Code):
    """An expression written as is (a name, a number, an attribute)."""

    text: str

    def render(self, indent: int, column: int) -> str:
        return self.text


_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(char: str, quote: str) -> str:
    if char == quote:
        return "\\" + char
    if char in _ESCAPES:
        return _ESCAPES[char]
    if " " <= char <= "~":
        return char
    code = ord(char)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


def string_literal(value: str) -> str:
    """``value`` as a Python string literal that ``ruff format`` keeps and ``ruff check`` passes:
    printable ASCII as is, everything else escaped (``\\u202e``, ``\\x85``, ``\\U0001f600``:
    no bidi control, line break or look-alike letter reaches the source), in double quotes unless
    the value holds more double than single quotes (ruff's choice). Evaluates to ``value``."""
    quote = "'" if value.count('"') > value.count("'") else '"'
    return quote + "".join(_escaped(char, quote) for char in value) + quote


def literal(value: str | int | float | bool | None) -> Code:
    """A Python literal (strings as :func:`string_literal` writes them)."""
    if isinstance(value, str):
        return Raw(string_literal(value))
    return Raw(repr(value))


@dataclass(frozen=True)
class Call(Code):
    """``function(arg, ..., name=value, ...)``."""

    function: str
    args: tuple[Code, ...] = ()
    kwargs: tuple[tuple[str, Code], ...] = field(default=())

    def _items(self) -> list[tuple[str, Code]]:
        return [("", arg) for arg in self.args] + [(f"{key}=", value) for key, value in self.kwargs]

    def render(self, indent: int, column: int) -> str:
        return _bracketed(f"{self.function}(", ")", self._items(), indent, column)


@dataclass(frozen=True)
class ListOf(Code):
    """``[item, ...]``."""

    items: tuple[Code, ...]

    def render(self, indent: int, column: int) -> str:
        return _bracketed("[", "]", [("", item) for item in self.items], indent, column)


@dataclass(frozen=True)
class DictOf(Code):
    """``{"key": value, ...}``."""

    items: tuple[tuple[str, Code], ...]

    def render(self, indent: int, column: int) -> str:
        entries = [(f"{string_literal(key)}: ", value) for key, value in self.items]
        return _bracketed("{", "}", entries, indent, column)


def _bracketed(
    opening: str, closing: str, items: list[tuple[str, Code]], indent: int, column: int
) -> str:
    # Inline only when every item is itself one line and the whole fits, with one character
    # to spare for what follows it (a comma or a closing bracket).
    inline = [prefix + code.render(indent, 0) for prefix, code in items]
    one_line = opening + ", ".join(inline) + closing
    if "\n" not in one_line and column + len(one_line) + 1 <= LINE_LENGTH:
        return one_line
    pad = INDENT * (indent + 1)
    body = "".join(
        f"{pad}{prefix}{code.render(indent + 1, len(pad) + len(prefix))},\n"
        for prefix, code in items
    )
    return f"{opening}\n{body}{INDENT * indent}{closing}"


def assignment(name: str, value: Code, indent: int = 1) -> str:
    """``name = value`` as a statement at ``indent`` levels (with its newline)."""
    lead = f"{INDENT * indent}{name} = "
    return f"{lead}{value.render(indent, len(lead))}\n"


def statement(value: Code, indent: int = 1) -> str:
    """An expression statement at ``indent`` levels (with its newline)."""
    return f"{INDENT * indent}{value.render(indent, len(INDENT * indent))}\n"
