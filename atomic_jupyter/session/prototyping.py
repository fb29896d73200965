"""Extensions defined in notebook cells: the prototyping part of a session (:class:`Prototypes`).

The work is done by the session's ``"prototypes"`` addon
(:class:`~atomic_jupyter.addons.prototype.manager.PrototypeManager`); this part holds it and
says so plainly when prototyping is off.
"""

from __future__ import annotations

from typing import Any

from atomic_jupyter.errors import PrototypeError

__all__ = ["Prototypes"]


class Prototypes:
    """``define_extension`` and friends.

    Parameters
    ----------
    manager:
        The session's ``"prototypes"`` addon, or None when prototyping is off.
    """

    def __init__(self, manager: Any | None) -> None:
        self._manager = manager

    @property
    def manager(self) -> Any:
        """Extensions defined in notebook cells (None when ``AtomicAgent.prototyping`` is off)."""
        return self._manager

    def _required(self) -> Any:
        if self._manager is None:
            raise PrototypeError("prototyping is off for this session (AtomicAgent.prototyping)")
        return self._manager

    def define_extension(self, name: str, source: str) -> Any:
        """Load ``source`` as the extension ``name``, replacing its earlier version.

        The code is type-checked and test-loaded first; errors come back in the result, each
        with the extension's file name and line, and leave the earlier version loaded.
        """
        return self._required().define(name, source)

    def remove_extension(self, name: str) -> None:
        """Unload the prototype extension ``name``."""
        self._required().remove(name)

    def extensions(self) -> list[str]:
        """The prototype extensions defined in this session."""
        return list(self._required().names())

    def extension_source(self, name: str) -> str:
        """The code of the prototype extension ``name``, as loaded."""
        return str(self._required().source(name))
