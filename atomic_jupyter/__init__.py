"""atomic-jupyter: the atomic coding agent in Jupyter notebooks.

Load the magics (``%atomic_agent``, ``%%atomic_extension``) with ``%load_ext atomic_jupyter``,
or use the Python API::

    import atomic_jupyter as aj
    s = aj.start(extensions=["my_extension.ts"])
    s.prompt("/my-command")
    s.pending_dialogs[0].respond("Allow")
"""

from __future__ import annotations

from typing import Any

from atomic_jupyter import wiring as _wiring  # noqa: F401  (plugs addons and views in)
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
from atomic_jupyter.notebook.api import session, start
from atomic_jupyter.notebook.config import AtomicAgent
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.session.session import AgentSession, WaitResult

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
    "PromptRun",
    "SessionNotFoundError",
    "WaitResult",
    "__version__",
    "load_ipython_extension",
    "session",
    "start",
]


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%atomic_agent`` (called by ``%load_ext atomic_jupyter``)."""
    from atomic_jupyter.notebook.kernel_values import install_error_log
    from atomic_jupyter.notebook.magics import AtomicAgentMagics, AtomicExtensionMagics

    install_error_log(ipython)  # $`Err` and %atomic_agent fix: the cells that failed from now
    ipython.register_magics(AtomicAgentMagics)
    ipython.register_magics(AtomicExtensionMagics)
