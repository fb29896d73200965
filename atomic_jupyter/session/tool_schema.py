"""A Python function as a tool of the agent: name, description and JSON Schema read from the
function, and the model's JSON arguments checked and turned back into Python values.

Every parameter needs a supported type hint, checked when the tool is made, not at the model's
first call: the model sees nothing of the function but the schema, so a parameter without a
hint would leave it guessing. ``Any`` is a deliberate choice and means any JSON value.

Hints come from ``inspect.signature(fn, eval_str=True)``: like ``typing.get_type_hints`` it
resolves string hints and keeps ``Annotated``, and it also reads a ``functools.partial``, a
bound method and a callable object. A parameter whose default is ``None`` may be null whatever
its hint (as ``get_type_hints`` made it on Python 3.10).
"""

from __future__ import annotations

import copy
import enum
import functools
import inspect
import json
import re
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

__all__ = ["ToolSpec", "coerce_arguments", "tool_spec"]

#: What the model's tool-calling APIs accept as a tool name.
TOOL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]{0,63}")
#: The scalar hints, as an error message names them.
SCALARS = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}
#: The Python types of JSON scalars and their JSON Schema types.
JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null"}
SUPPORTED = (
    "str, int, float, bool, list[X], tuple[X, ...], dict[str, X], Literal[...], an Enum, "
    "X | None, Annotated[X, 'description'] or Any"
)
#: Google-style section headings that start a docstring's parameter descriptions.
GOOGLE_ARGS = ("Args:", "Arguments:", "Parameters:")
GOOGLE_SECTIONS = (*GOOGLE_ARGS, "Returns:", "Raises:", "Yields:", "Example:", "Examples:")
NUMPY_ENTRY = re.compile(r"(?P<names>\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::.*)?")
GOOGLE_ENTRY = re.compile(r"(?P<names>\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(?P<text>.*)")


@dataclass(frozen=True)
class ToolSpec:
    """What the model is told about a tool.

    ``parameters`` is a JSON Schema object: ``properties`` (one per parameter, in order),
    ``required`` and ``additionalProperties: false``.
    """

    name: str
    description: str
    parameters: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        """The tool definition the agent gets: ``name``, ``description``, ``parameters``."""
        parameters = copy.deepcopy(self.parameters)
        return {"name": self.name, "description": self.description, "parameters": parameters}


def tool_spec(
    fn: Callable[..., Any], *, name: str | None = None, description: str | None = None
) -> ToolSpec:
    """Describe ``fn`` as a tool: named ``name`` or ``fn.__name__``, described by
    ``description`` or the docstring's first paragraph; a parameter is described by the first
    string in its ``Annotated`` hint, else by the docstring's ``Parameters`` or ``Args:``.

    Raises
    ------
    ValueError
        The name is not a valid tool name (a lambda's ``<lambda>``, for one).
    TypeError
        A parameter has no type hint or an unsupported one, or is ``*args``, ``**kwargs`` or
        positional-only; the message names the parameter.
    """
    tool_name = name if name is not None else getattr(fn, "__name__", "")
    if not TOOL_NAME.fullmatch(tool_name):
        hint = "choose another" if name is not None else "pass name="
        raise ValueError(
            f"{tool_name!r} cannot be a tool's name (1 to 64 letters, digits and underscores, "
            f"not starting with a digit); {hint}"
        )
    doc = inspect.getdoc(fn.func if isinstance(fn, functools.partial) else fn)
    documented = _parameter_docs(doc)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for parameter, hint, text in _parameters(fn):
        schema = _schema(hint)
        if text or parameter.name in documented:
            schema["description"] = text or documented[parameter.name]
        if parameter.default is parameter.empty:
            required.append(parameter.name)
        else:
            default = parameter.default
            default = default.value if isinstance(default, enum.Enum) else default
            try:
                schema["default"] = json.loads(json.dumps(default, allow_nan=False))
            except (TypeError, ValueError):
                pass  # not JSON: the model is not told the default, which still applies
        properties[parameter.name] = schema
    if description is None:
        description = _summary(doc) or f"Run {tool_name} in the notebook's kernel."
    parameters = {"type": "object", "properties": properties, "required": required}
    return ToolSpec(tool_name, description, {**parameters, "additionalProperties": False})


def coerce_arguments(
    spec: ToolSpec, fn: Callable[..., Any], arguments: Mapping[str, Any]
) -> dict[str, Any]:
    """The model's JSON ``arguments`` for ``fn`` (described by ``spec``) as Python values.

    An int for ``int`` (a JSON number with no fraction, such as ``2.0``, too), a float for
    ``float`` (ints accepted), a list for ``list[X]``, a tuple for ``tuple[X, ...]``, the
    member for an Enum (sent as its value). ``true`` is not a number and ``1`` is not a bool.
    Arguments not sent are left out, so the function's defaults apply.

    Raises
    ------
    ValueError
        Missing, unknown or wrongly typed arguments, all in one message written for the model
        (``argument 'r' must be a number, not 'two'``).
    """
    if not isinstance(arguments, Mapping):
        raise ValueError(f"the arguments of {spec.name} must be an object, not {_show(arguments)}")
    hints = {parameter.name: hint for parameter, hint, _ in _parameters(fn)}
    properties = spec.parameters["properties"]
    if set(hints) != set(properties):
        raise TypeError(f"the spec of {spec.name} was not made from {fn!r}")
    takes = ", ".join(properties) or "no arguments"
    missing = [name for name in spec.parameters["required"] if name not in arguments]
    problems = [f"missing required argument {name!r}" for name in missing]
    unknown = [name for name in arguments if name not in properties]
    problems += [f"unknown argument {name!r} ({spec.name} takes {takes})" for name in unknown]
    converted: dict[str, Any] = {}
    for name, value in arguments.items():
        if name in hints:
            try:
                converted[name] = _coerce(hints[name], value, name)
            except ValueError as error:
                problems.append(str(error))
    if problems:
        raise ValueError("; ".join(problems))
    return converted


class _Unsupported(Exception):
    """``args``: the hint, and why it is not supported (or nothing)."""


def _parameters(fn: Callable[..., Any]) -> list[tuple[inspect.Parameter, Any, str | None]]:
    """``fn``'s parameters with their checked hints (``Annotated`` taken off, ``None`` allowed
    where it is the default) and descriptions from ``Annotated``."""
    if inspect.isclass(fn):
        raise TypeError(f"{fn.__name__} is a class; expose a function")
    try:
        signature = inspect.signature(fn, eval_str=True)
    except (NameError, SyntaxError, AttributeError, ValueError) as error:
        raise TypeError(f"the type hints of {fn!r} cannot be resolved: {error}") from error
    found: list[tuple[inspect.Parameter, Any, str | None]] = []
    for parameter in signature.parameters.values():
        name, kind = parameter.name, parameter.kind
        if kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            stars = "*" if kind is parameter.VAR_POSITIONAL else "**"
            raise TypeError(
                f"parameter {stars}{name} cannot be a tool argument: the model names each one"
            )
        if kind is parameter.POSITIONAL_ONLY:
            raise TypeError(f"parameter {name!r} is positional-only; the model passes by name")
        hint = parameter.annotation
        if hint is parameter.empty:
            raise TypeError(
                f"parameter {name!r} has no type hint; a tool needs one on every parameter, as "
                f"the model sees only the JSON Schema made from them ({name}: Any takes any JSON)"
            )
        try:
            _schema(hint)
        except _Unsupported as error:
            shown, inner = (inspect.formatannotation(h, "__main__") for h in (hint, error.args[0]))
            where = f"the type hint {shown}" if inner == shown else f"{inner} (in {shown})"
            why = "".join(f" ({why})" for why in error.args[1:])
            raise TypeError(
                f"parameter {name!r}: {where} cannot be a tool argument{why}; a tool takes "
                f"{SUPPORTED} (for a kernel object such as a data frame, take its name as a str)"
            ) from None
        shape, arg = _shape(hint)
        hint, text = arg if shape == "annotated" else (hint, None)
        if parameter.default is None and _shape(hint)[0] not in ("optional", "any"):
            hint = hint | None
        found.append((parameter, hint, text))
    return found


def _shape(hint: Any) -> tuple[str, Any]:
    """What kind of hint this is, and what the kind needs (raises ``_Unsupported``)."""
    origin, args = get_origin(hint), get_args(hint)
    if origin is Annotated:
        text = next((item for item in args[1:] if isinstance(item, str)), None)
        return "annotated", (args[0], text)
    if hint is Any:
        return "any", None
    if isinstance(hint, type) and hint in SCALARS:
        return "scalar", hint
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        if not list(hint) or any(type(member.value) not in JSON_TYPES for member in hint):
            raise _Unsupported(hint, "an Enum's values must be str, int, float or bool")
        return "enum", hint
    if origin in (Union, types.UnionType):
        rest = [arg for arg in args if arg is not type(None)]
        if len(rest) != 1 or len(rest) == len(args):
            raise _Unsupported(hint, "the one union a tool takes is X | None")
        return "optional", rest[0]
    if origin is Literal:
        if any(type(value) not in (str, int, bool, type(None)) for value in args):
            raise _Unsupported(hint, "Literal values must be str, int, bool or None")
        return "literal", args
    if hint in (list, tuple, dict) or (origin in (list, tuple, dict) and not args):
        raise _Unsupported(hint, "give the item type, as in list[str]")
    if origin is list:
        return "list", args[0]
    if origin is tuple:
        if len(args) != 2 or args[1] is not Ellipsis:
            raise _Unsupported(hint, "a tuple must be tuple[X, ...]")
        return "tuple", args[0]
    if origin is dict:
        if args[0] is not str:
            raise _Unsupported(hint, "JSON object keys are strings: dict[str, X]")
        return "dict", args[1]
    raise _Unsupported(hint)


def _schema(hint: Any) -> dict[str, Any]:
    kind, arg = _shape(hint)
    if kind == "annotated":
        schema = _schema(arg[0])
        return {**schema, "description": arg[1]} if arg[1] else schema
    if kind == "any":
        return {}
    if kind == "scalar":
        return {"type": JSON_TYPES[arg]}
    if kind == "optional":
        return {"anyOf": [_schema(arg), {"type": "null"}]}
    if kind in ("list", "tuple"):
        return {"type": "array", "items": _schema(arg)}
    if kind == "dict":
        return {"type": "object", "additionalProperties": _schema(arg)}
    values = list(arg) if kind == "literal" else [member.value for member in arg]
    json_types = {JSON_TYPES[type(value)] for value in values}
    return {"type": json_types.pop(), "enum": values} if len(json_types) == 1 else {"enum": values}


def _coerce(hint: Any, value: Any, path: str, or_null: bool = False) -> Any:
    """``value`` (decoded JSON) as ``hint`` says; ``path`` names it in an error message."""
    kind, arg = _shape(hint)
    if kind == "annotated":
        return _coerce(arg[0], value, path, or_null)
    if kind == "any":
        return value
    if kind == "optional":
        return None if value is None else _coerce(arg, value, path, or_null=True)
    expected = "a list" if kind in ("list", "tuple") else "an object"
    if kind == "scalar":
        expected = SCALARS[arg]
        if (arg is bool and isinstance(value, bool)) or (arg is str and isinstance(value, str)):
            return value
        if arg in (int, float) and isinstance(value, (int, float)) and not isinstance(value, bool):
            if arg is float:
                return float(value)
            if isinstance(value, int) or value.is_integer():
                return int(value)
    elif kind in ("list", "tuple") and isinstance(value, list):
        items = [_coerce(arg, item, f"{path}[{i}]") for i, item in enumerate(value)]
        return items if kind == "list" else tuple(items)
    elif kind == "dict" and isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: _coerce(arg, item, f"{path}[{json.dumps(k)}]") for k, item in value.items()}
    elif kind in ("literal", "enum"):
        choices = list(arg)
        values = choices if kind == "literal" else [member.value for member in choices]
        for choice, choice_value in zip(choices, values, strict=True):
            if _same(choice_value, value):
                return choice
        expected = "one of " + ", ".join(_show(v) for v in values)
    null = " or null" if or_null else ""
    raise ValueError(f"argument {path!r} must be {expected}{null}, not {_show(value)}")


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values: ``1 == 1.0``, but ``true`` is not ``1``."""
    return bool(a == b) and isinstance(a, bool) == isinstance(b, bool)


def _show(value: Any) -> str:
    """A value the model sent, as the model would recognise it, cut short."""
    text = repr(value) if isinstance(value, str) else json.dumps(value, default=repr)
    return text if len(text) <= 60 else text[:57] + "..."


def _summary(doc: str | None) -> str | None:
    """The docstring's first paragraph on one line, unless it is a section."""
    lines = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0].splitlines() if doc else []
    if not lines or lines[0].strip() in GOOGLE_SECTIONS or _dashes(lines, 1):
        return None
    return " ".join(line.strip() for line in lines)


def _dashes(lines: list[str], i: int) -> bool:
    return i < len(lines) and len(lines[i].strip()) >= 3 and set(lines[i].strip()) == {"-"}


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _parameter_docs(doc: str | None) -> dict[str, str]:
    """Parameter descriptions from a numpy ``Parameters`` or a Google ``Args:`` section."""
    lines = (doc or "").splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "Parameters" and _dashes(lines, i + 1):
            return _entries(lines[i + 2 :], _indent(line), numpy=True)
        if line.strip() in GOOGLE_ARGS:
            return _entries(lines[i + 1 :], _indent(line), numpy=False)
    return {}


def _entries(lines: list[str], header: int, numpy: bool) -> dict[str, str]:
    """``name : type`` (numpy, at the heading's indent) or ``name (type): text`` (Google,
    indented under it) entries, each with the more deeply indented lines that follow it."""
    found: dict[str, list[str]] = {}
    text: list[str] = []
    entry: int | None = None
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        indent = _indent(line)
        if indent < header or (indent == header and (_dashes(lines, i + 1) or not numpy)):
            break  # the next section
        entry = indent if entry is None else entry
        if indent > entry:
            text.append(line.strip())
            continue
        match = (NUMPY_ENTRY if numpy else GOOGLE_ENTRY).fullmatch(line.strip())
        if indent < entry or match is None:
            break
        text = [] if numpy else [match["text"]]
        for name in match["names"].split(","):
            found[name.strip().lstrip("*")] = text
    return {name: " ".join(filter(None, parts)) for name, parts in found.items() if any(parts)}
