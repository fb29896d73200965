"""atomic-jupyter: the atomic coding agent in Jupyter notebooks.

Load the magics (``%atomic_agent``, ``%%atomic_extension``) with ``%load_ext atomic_jupyter``,
or use the Python API::

    import atomic_jupyter as aj
    s = aj.start(extensions=["my_extension.ts"])
    s.prompt("/my-command")
    s.pending_dialogs[0].respond("Allow")

Importing the package is light: it loads no widget library and no IPython. The public names
below are imported when first used, and ``atomic_jupyter/wiring.py`` (the addons, the
notebook's presentation, citations and the built-in tools) when the first session is made or
the extension is loaded.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from atomic_jupyter._version import __version__
from atomic_jupyter.errors import (
    AgentInstallError,
    AgentNotInstalledError,
    AgentNotRunningError,
    AgentStartError,
    AgentVersionError,
    AtomicAgentError,
    CitationError,
    CommandError,
    CommandTimeoutError,
    DialogNotPendingError,
    SessionNotFoundError,
)
from atomic_jupyter.session.plugins import use_wiring as _use_wiring
from atomic_jupyter.session.plugins import wire as _wire

if TYPE_CHECKING:
    from atomic_jupyter.notebook.api import session, start
    from atomic_jupyter.notebook.config import AtomicAgent
    from atomic_jupyter.session.dialogs import Dialog
    from atomic_jupyter.session.runs import PromptRun
    from atomic_jupyter.session.session import AgentSession, WaitResult
    from atomic_jupyter.session.standing import ModelChoice, Standing

__all__ = [
    "AgentInstallError",
    "AgentNotInstalledError",
    "AgentNotRunningError",
    "AgentVersionError",
    "AgentSession",
    "AgentStartError",
    "AtomicAgent",
    "AtomicAgentError",
    "CitationError",
    "CommandError",
    "CommandTimeoutError",
    "Dialog",
    "DialogNotPendingError",
    "ModelChoice",
    "PromptRun",
    "SessionNotFoundError",
    "Standing",
    "WaitResult",
    "__version__",
    "load_ipython_extension",
    "session",
    "start",
]

#: The public names imported on first use, and the module each comes from.
_LAZY = {
    "session": "atomic_jupyter.notebook.api",
    "start": "atomic_jupyter.notebook.api",
    "AtomicAgent": "atomic_jupyter.notebook.config",
    "Dialog": "atomic_jupyter.session.dialogs",
    "PromptRun": "atomic_jupyter.session.runs",
    "AgentSession": "atomic_jupyter.session.session",
    "WaitResult": "atomic_jupyter.session.session",
    "Standing": "atomic_jupyter.session.standing",
    "ModelChoice": "atomic_jupyter.session.standing",
}

# Importing `atomic_jupyter.session.plugins` (above) bound the name `session` here to the
# subpackage; the public `session` is the function, found by __getattr__. A subpackage is
# bound once, when first imported, so nothing binds the name again.
globals().pop("session", None)


def __getattr__(name: str) -> Any:
    """Import a public name on first use (and keep it, so this runs once per name)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def _import_wiring() -> None:
    importlib.import_module("atomic_jupyter.wiring")


_use_wiring(_import_wiring)  # run by the first session made (the session layer calls wire())


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%atomic_agent`` (called by ``%load_ext atomic_jupyter``)."""
    from atomic_jupyter.notebook.kernel_values import install_error_log
    from atomic_jupyter.notebook.magics import AtomicAgentMagics, AtomicExtensionMagics

    _wire()  # the notebook's presentation, citations and built-in tools, before any session
    from atomic_jupyter.ui.dispatch import remember_main_loop

    remember_main_loop()  # for views made on a subshell's thread (a click that starts one)
    install_error_log(ipython)  # $`Err` and %atomic_agent fix: the cells that failed from now
    from atomic_jupyter.notebook.notebook_tools import attach_kernel

    attach_kernel()  # the open notebook's page links to this kernel (the notebook tools)
    from atomic_jupyter.notebook.config import registered_settings

    registered_settings(ipython)  # %config AtomicAgent lists the settings
    ipython.register_magics(AtomicAgentMagics)
    ipython.register_magics(AtomicExtensionMagics)
