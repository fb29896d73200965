"""A kernel function as a tool of the agent: the schema made from its hints and docstring,
the hints refused when the tool is made, and the model's JSON arguments checked and turned into
Python values."""

from __future__ import annotations

import enum
import functools
import json
import math
import typing
from collections.abc import Callable
from typing import Annotated, Any, Literal, Optional

import pytest

from atomic_jupyter.session.tool_schema import ToolSpec, coerce_arguments, tool_spec


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Mixed(enum.Enum):
    ONE = 1
    TWO = "two"


class Shapeless(enum.Enum):
    POINT = (0, 0)


class DataFrame:
    """Stands in for a kernel object a tool cannot take."""


def taking(hint: Any) -> Callable[..., Any]:
    """A function with one parameter ``x`` hinted ``hint``."""

    def fn(x):  # type: ignore[no-untyped-def]
        return x

    fn.__annotations__ = {"x": hint}
    return fn


def schema_of(hint: Any) -> dict[str, Any]:
    return tool_spec(taking(hint)).parameters["properties"]["x"]


def coerce(hint: Any, value: Any) -> Any:
    fn = taking(hint)
    return coerce_arguments(tool_spec(fn), fn, {"x": value})["x"]


# Schemas


@pytest.mark.parametrize(
    ("hint", "schema"),
    [
        (str, {"type": "string"}),
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (int | None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
        (Optional[str], {"anyOf": [{"type": "string"}, {"type": "null"}]}),  # noqa: UP045
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (typing.List[str], {"type": "array", "items": {"type": "string"}}),  # noqa: UP006
        (tuple[float, ...], {"type": "array", "items": {"type": "number"}}),
        (dict[str, bool], {"type": "object", "additionalProperties": {"type": "boolean"}}),
        (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
        (Literal[1, "a"], {"enum": [1, "a"]}),
        (Colour, {"type": "string", "enum": ["red", "green"]}),
        (Level, {"type": "integer", "enum": [1, 2]}),
        (Mixed, {"enum": [1, "two"]}),
        (Annotated[int, "how many"], {"type": "integer", "description": "how many"}),
        (Annotated[int, 3, "the count"], {"type": "integer", "description": "the count"}),
        (Annotated[int, 3], {"type": "integer"}),
        (Any, {}),
        (
            list[list[Annotated[float, "metres"]]],
            {
                "type": "array",
                "items": {"type": "array", "items": {"type": "number", "description": "metres"}},
            },
        ),
        (
            dict[str, list[Literal["x"]] | None],
            {
                "type": "object",
                "additionalProperties": {
                    "anyOf": [
                        {"type": "array", "items": {"type": "string", "enum": ["x"]}},
                        {"type": "null"},
                    ]
                },
            },
        ),
    ],
)
def test_each_supported_hint_has_its_schema(hint, schema):
    assert schema_of(hint) == schema


def test_the_parameters_schema_lists_required_parameters_and_defaults():
    def area(
        r: float,
        unit: str = "m",
        *,
        colour: Colour = Colour.GREEN,
        level: Level = Level.HIGH,
        label: str | None = None,
        corners: tuple[int, ...] = (1, 2),
        scale: float = math.nan,
        origin: Any = None,
    ) -> float:
        return r

    assert tool_spec(area).parameters == {
        "type": "object",
        "properties": {
            "r": {"type": "number"},
            "unit": {"type": "string", "default": "m"},
            "colour": {"type": "string", "enum": ["red", "green"], "default": "green"},
            "level": {"type": "integer", "enum": [1, 2], "default": 2},
            "label": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "corners": {"type": "array", "items": {"type": "integer"}, "default": [1, 2]},
            "scale": {"type": "number"},  # NaN is not JSON: the default is left out
            "origin": {"default": None},
        },
        "required": ["r"],
        "additionalProperties": False,
    }


def test_a_none_default_makes_null_acceptable_whatever_the_hint():
    def pick(
        n: int = None,  # type: ignore[assignment]
        tag: Annotated[str, "a tag"] = None,  # type: ignore[assignment]
    ) -> None:
        """Pick."""

    spec = tool_spec(pick)
    assert spec.parameters["properties"] == {
        "n": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None},
        "tag": {
            "anyOf": [{"type": "string"}, {"type": "null"}],
            "description": "a tag",
            "default": None,
        },
    }
    assert coerce_arguments(spec, pick, {"n": None, "tag": None}) == {"n": None, "tag": None}


def test_an_optional_without_a_default_is_required_and_may_be_null():
    def f(x: int | None) -> None:
        pass

    spec = tool_spec(f)
    assert spec.parameters["required"] == ["x"]
    assert coerce_arguments(spec, f, {"x": None}) == {"x": None}


def test_the_spec_is_plain_json_and_to_json_is_a_copy():
    def f(xs: list[int], mode: Literal["a"] = "a") -> None:
        """Do f."""

    spec = tool_spec(f)
    out = spec.to_json()
    assert out == {"name": "f", "description": "Do f.", "parameters": spec.parameters}
    assert json.loads(json.dumps(out)) == out
    out["parameters"]["properties"].clear()
    assert spec.parameters["properties"]["xs"] == {"type": "array", "items": {"type": "integer"}}
    assert isinstance(spec, ToolSpec)


# Names


def test_the_name_is_the_functions():
    def load_table(path: str) -> None:
        pass

    assert tool_spec(load_table).name == "load_table"


def test_a_lambda_needs_a_name():
    with pytest.raises(ValueError, match=r"'<lambda>'.*pass name="):
        tool_spec(lambda x: x)
    fn = lambda x: x  # noqa: E731
    fn.__annotations__ = {"x": int}
    assert tool_spec(fn, name="double").name == "double"


@pytest.mark.parametrize("name", ["", "1st", "has-dash", "has space", "é", "x" * 65])
def test_a_bad_name_given_is_refused(name):
    def f(x: int) -> None:
        pass

    with pytest.raises(ValueError, match="choose another"):
        tool_spec(f, name=name)


@pytest.mark.parametrize("name", ["_", "a", "A1_b", "x" * 64])
def test_good_names_are_taken(name):
    def f(x: int) -> None:
        pass

    assert tool_spec(f, name=name).name == name


def test_a_bad_function_name_is_refused():
    def f(x: int) -> None:
        pass

    f.__name__ = "not-a-name"
    with pytest.raises(ValueError, match="pass name="):
        tool_spec(f)


def test_a_bound_method_leaves_self_out():
    class Store:
        def fetch(self, key: str) -> str:
            """Fetch a value."""
            return key

    store = Store()
    spec = tool_spec(store.fetch)
    assert (spec.name, list(spec.parameters["properties"])) == ("fetch", ["key"])
    assert coerce_arguments(spec, store.fetch, {"key": "k"}) == {"key": "k"}


def test_a_partial_keeps_its_functions_docstring_and_drops_bound_parameters():
    def query(frame: DataFrame, column: str) -> None:
        """Summarise one column."""

    bound = functools.partial(query, DataFrame())
    with pytest.raises(ValueError, match="pass name="):
        tool_spec(bound)
    spec = tool_spec(bound, name="summarise")
    assert spec.description == "Summarise one column."
    assert list(spec.parameters["properties"]) == ["column"]


# Descriptions


def test_the_description_is_the_docstrings_first_paragraph_on_one_line():
    def f(x: int) -> None:
        """Compute the area
        of a circle.

        More detail that the model does not get.
        """

    assert tool_spec(f).description == "Compute the area of a circle."


def test_without_a_docstring_the_description_says_what_the_tool_runs():
    def f(x: int) -> None:
        pass

    assert tool_spec(f).description == "Run f in the notebook's kernel."
    assert tool_spec(f, name="g").description == "Run g in the notebook's kernel."


def test_a_docstring_that_starts_with_a_section_is_no_description():
    def numpy(x: int) -> None:
        """Parameters
        ----------
        x : int
            The x.
        """

    def google(x: int) -> None:
        """Args:
        x: The x.
        """

    assert tool_spec(numpy).description == "Run numpy in the notebook's kernel."
    assert tool_spec(numpy).parameters["properties"]["x"]["description"] == "The x."
    assert tool_spec(google).description == "Run google in the notebook's kernel."


def test_a_description_given_replaces_the_docstring():
    def f(x: int) -> None:
        """Docstring."""

    assert tool_spec(f, description="Given.").description == "Given."


def descriptions(fn: Callable[..., Any]) -> dict[str, str | None]:
    properties = tool_spec(fn).parameters["properties"]
    return {name: schema.get("description") for name, schema in properties.items()}


def test_parameter_descriptions_come_from_a_numpy_parameters_section():
    def f(r: float, x: int, y: int, unit: str = "m", quiet: bool = False) -> float:
        """Area of a circle.

        Parameters
        ----------
        r : float
            The radius,
            in metres.
        x, y : int
            A corner.

        unit
            The unit.
        undocumented_elsewhere : str
            Not a parameter.

        Returns
        -------
        quiet : bool
            Not a parameter: this is the Returns section.
        """
        return r

    assert descriptions(f) == {
        "r": "The radius, in metres.",
        "x": "A corner.",
        "y": "A corner.",
        "unit": "The unit.",
        "quiet": None,
    }


def test_parameter_descriptions_come_from_a_google_args_section():
    def f(r: float, unit: str, quiet: bool = False, n: int = 1) -> float:
        """Area of a circle.

        Args:
            r (float): The radius,
                in metres.
            unit: The unit.
            quiet (bool, optional):
                Say nothing.

        Returns:
            n: not a parameter, this is the Returns section.
        """
        return r

    assert descriptions(f) == {
        "r": "The radius, in metres.",
        "unit": "The unit.",
        "quiet": "Say nothing.",
        "n": None,
    }


def test_an_annotated_description_wins_over_the_docstring():
    def f(r: Annotated[float, "radius in metres"]) -> None:
        """Area.

        Parameters
        ----------
        r : float
            The radius.
        """

    assert descriptions(f) == {"r": "radius in metres"}


# Refused when the tool is made


@pytest.mark.parametrize(
    ("hint", "shown"),
    [
        (set[int], "the type hint set[int]"),
        (DataFrame, "DataFrame"),
        (Callable[[int], int], "Callable"),
        (int | str, "the one union a tool takes is X | None"),
        (list, "give the item type"),
        (dict, "give the item type"),
        (typing.List, "give the item type"),  # noqa: UP006
        (dict[int, str], "dict[str, X]"),
        (tuple[int, str], "tuple[X, ...]"),
        (tuple[int], "tuple[X, ...]"),
        (Shapeless, "values must be str, int, float or bool"),
        (Literal[1.5], "Literal values must be"),
        (list[set[int]], "set[int] (in list[set[int]])"),
        (dict[str, DataFrame] | None, "DataFrame (in "),
        (None, "the type hint None"),
        (object, "the type hint object"),
    ],
)
def test_an_unsupported_hint_is_refused_when_the_tool_is_made(hint, shown):
    with pytest.raises(TypeError, match="parameter 'x'") as raised:
        tool_spec(taking(hint))
    assert shown in str(raised.value)


def test_a_parameter_without_a_hint_is_refused():
    def f(a: int, b) -> None:  # type: ignore[no-untyped-def]
        pass

    with pytest.raises(TypeError, match="parameter 'b' has no type hint"):
        tool_spec(f)


def test_star_args_kwargs_and_positional_only_parameters_are_refused():
    def star(*args: int) -> None:
        pass

    def stars(**options: int) -> None:
        pass

    def positional(a: int, /) -> None:
        pass

    for fn, named in [(star, r"\*args"), (stars, r"\*\*options"), (positional, "'a'")]:
        with pytest.raises(TypeError, match=f"parameter {named}"):
            tool_spec(fn)


def test_a_hint_that_cannot_be_resolved_is_refused():
    def f(x: NoSuchType) -> None:  # type: ignore[name-defined]  # noqa: F821
        pass

    with pytest.raises(TypeError, match="NoSuchType"):
        tool_spec(f)


def test_a_class_is_refused():
    class Tool:
        def __init__(self, x: int) -> None:
            pass

    with pytest.raises(TypeError, match="is a class"):
        tool_spec(Tool)


# Arguments from the model


def test_good_arguments_become_python_values():
    def f(
        name: str,
        n: int,
        r: float,
        flag: bool,
        grid: list[list[int]],
        point: tuple[float, ...],
        weights: dict[str, float],
        colour: Colour,
        mode: Literal["fast", "slow"],
        extra: Any = None,
    ) -> None:
        pass

    arguments = {
        "name": "a",
        "n": 2,
        "r": 3,
        "flag": False,
        "grid": [[1, 2], []],
        "point": [1, 2.5],
        "weights": {"w": 1},
        "colour": "red",
        "mode": "slow",
        "extra": {"any": [1, None]},
    }
    got = coerce_arguments(tool_spec(f), f, arguments)
    assert got == {
        "name": "a",
        "n": 2,
        "r": 3.0,
        "flag": False,
        "grid": [[1, 2], []],
        "point": (1.0, 2.5),
        "weights": {"w": 1.0},
        "colour": Colour.RED,
        "mode": "slow",
        "extra": {"any": [1, None]},
    }
    assert type(got["r"]) is float and type(got["weights"]["w"]) is float
    assert type(got["point"][0]) is float


def test_an_int_widens_to_float_and_a_whole_float_is_an_int():
    assert type(coerce(float, 2)) is float
    assert coerce(int, 2.0) == 2 and type(coerce(int, 2.0)) is int
    with pytest.raises(ValueError, match="argument 'x' must be an integer, not 2.5"):
        coerce(int, 2.5)


@pytest.mark.parametrize(
    ("hint", "value", "message"),
    [
        (float, "two", "argument 'x' must be a number, not 'two'"),
        (int, True, "argument 'x' must be an integer, not true"),
        (float, False, "argument 'x' must be a number, not false"),
        (bool, 1, "argument 'x' must be true or false, not 1"),
        (bool, "true", "argument 'x' must be true or false, not 'true'"),
        (str, 5, "argument 'x' must be a string, not 5"),
        (str, None, "argument 'x' must be a string, not null"),
        (int | None, "1", "argument 'x' must be an integer or null, not '1'"),
        (list[int], "1,2", "argument 'x' must be a list, not '1,2'"),
        (list[list[int]], [[1], [2, "3"]], "argument 'x[1][1]' must be an integer, not '3'"),
        (tuple[str, ...], {"a": 1}, "argument 'x' must be a list, not {\"a\": 1}"),
        (dict[str, int], [1], "argument 'x' must be an object, not [1]"),
        (dict[str, int], {"k": "v"}, "argument 'x[\"k\"]' must be an integer, not 'v'"),
        (Colour, "RED", "argument 'x' must be one of 'red', 'green', not 'RED'"),
        (Level, True, "argument 'x' must be one of 1, 2, not true"),
        (Literal["a", "b"], "c", "argument 'x' must be one of 'a', 'b', not 'c'"),
        (Literal[1], True, "argument 'x' must be one of 1, not true"),
        (Literal[True], 1, "argument 'x' must be one of true, not 1"),
        (int, "y" * 100, "argument 'x' must be an integer, not '" + "y" * 56 + "..."),
    ],
)
def test_a_wrong_type_is_an_error_for_the_model(hint, value, message):
    with pytest.raises(ValueError) as raised:
        coerce(hint, value)
    assert str(raised.value) == message


def test_enum_members_and_literals_are_matched_by_value():
    assert coerce(Colour, "green") is Colour.GREEN
    assert coerce(Level, 2) is Level.HIGH
    assert coerce(Level, 2.0) is Level.HIGH
    assert coerce(Literal["a", 1], 1) == 1
    assert coerce(Literal[True, "auto"], True) is True


def test_missing_and_unknown_arguments_are_all_reported_at_once():
    def f(a: int, b: str, c: float = 1.0) -> None:
        pass

    with pytest.raises(ValueError) as raised:
        coerce_arguments(tool_spec(f), f, {"a": "one", "z": 1})
    assert str(raised.value) == (
        "missing required argument 'b'; unknown argument 'z' (f takes a, b, c); "
        "argument 'a' must be an integer, not 'one'"
    )


def test_arguments_not_sent_are_left_to_the_functions_defaults():
    def f(a: int, c: float = 1.0) -> None:
        pass

    assert coerce_arguments(tool_spec(f), f, {"a": 1}) == {"a": 1}


def test_arguments_that_are_not_an_object_are_refused():
    def f(a: int) -> None:
        pass

    with pytest.raises(ValueError, match=r"the arguments of f must be an object, not \[1\]"):
        coerce_arguments(tool_spec(f), f, [1])  # type: ignore[arg-type]


def test_a_spec_from_another_function_is_a_programming_error():
    def f(a: int) -> None:
        pass

    def g(b: int) -> None:
        pass

    with pytest.raises(TypeError, match="not made from"):
        coerce_arguments(tool_spec(f), g, {"a": 1})
