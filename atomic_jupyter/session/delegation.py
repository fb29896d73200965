"""A facade's methods that are its parts' methods, written once.

``steer = Delegated("_commands", AgentCommands.steer)`` in a class body makes
``facade.steer`` the bound method ``facade._commands.steer``: its signature and docstring
(for ``help()``, ``?`` and completion) are the part's, and so are its types for mypy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, cast, overload

__all__ = ["Delegated"]

P = ParamSpec("P")
R = TypeVar("R")


class Delegated(Generic[P, R]):
    """A method of a facade that calls its part's method of the same name.

    Parameters
    ----------
    part:
        The name of the facade's attribute that holds the part.
    method:
        The part's method (as its class has it); the facade's method has its name,
        signature and docstring.
    """

    def __init__(self, part: str, method: Callable[Concatenate[Any, P], R]) -> None:
        self.part = part
        self.name = method.__name__
        self.__doc__ = method.__doc__
        self.__wrapped__ = method

    def __repr__(self) -> str:
        return f"<method {self.name} of {self.part}>"

    def __call__(self, facade: Any, /, *args: P.args, **kwargs: P.kwargs) -> R:
        """Call it on ``facade`` as a plain function would be (``Facade.method(facade, ...)``)."""
        method: Callable[P, R] = getattr(getattr(facade, self.part), self.name)
        return method(*args, **kwargs)

    @overload
    def __get__(self, facade: None, owner: type) -> Delegated[P, R]: ...

    @overload
    def __get__(self, facade: object, owner: type) -> Callable[P, R]: ...

    def __get__(self, facade: object, owner: type) -> Delegated[P, R] | Callable[P, R]:
        if facade is None:
            return self
        return cast("Callable[P, R]", getattr(getattr(facade, self.part), self.name))
