"""The prototype-extension methods of a session (a mixin of AgentSession).

The work is done by the session's ``"prototypes"`` addon
(:class:`~atomic_jupyter.addons.prototype.manager.PrototypeManager`); these methods find it
and say so plainly when prototyping is off.
"""

from __future__ import annotations

from typing import Any

from atomic_jupyter.errors import PrototypeError

__all__ = ["PrototypeMethods"]


class PrototypeMethods:
    """``define_extension`` and friends, on top of the session's ``addon()``."""

    def addon(self, name: str) -> Any:
        raise NotImplementedError  # provided by AgentSession

    @property
    def prototypes(self) -> Any:
        """Extensions defined in notebook cells (None when ``AtomicAgent.prototyping`` is off)."""
        return self.addon("prototypes")

    def _prototypes(self) -> Any:
        if self.prototypes is None:
            raise PrototypeError("prototyping is off for this session (AtomicAgent.prototyping)")
        return self.prototypes

    def define_extension(self, name: str, source: str) -> Any:
        """Load ``source`` as the extension ``name``, replacing its earlier version.

        The code is type-checked and test-loaded first; errors come back in the result, each
        with the extension's file name and line, and leave the earlier version loaded.
        """
        return self._prototypes().define(name, source)

    def remove_extension(self, name: str) -> None:
        """Unload the prototype extension ``name``."""
        self._prototypes().remove(name)

    def extensions(self) -> list[str]:
        """The prototype extensions defined in this session."""
        return list(self._prototypes().names())

    def extension_source(self, name: str) -> str:
        """The code of the prototype extension ``name``, as loaded."""
        return str(self._prototypes().source(name))
