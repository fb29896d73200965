"""The pinned agents: their shipped pins, where they are installed, and installing them.

``atomic-jupyter install-agent``, ``python -m atomic_jupyter install-agent`` and
``%atomic_agent install`` all call :func:`install_agent`; a kernel finds the result with
:func:`find_installed` over :func:`agent_homes`. On a terminal, :class:`ProgressPrinter` shows
an install's progress.

The installer itself (:func:`install_agent`, :class:`InstallResult`) is imported on first use:
it needs ``subprocess``, npm's configuration and log, and the secrets, which the command
line's parser and a kernel's search for an install do not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from atomic_jupyter.transport.agent_install.homes import (
    AGENT_HOME_ENV,
    AgentHome,
    agent_homes,
    install_home,
)
from atomic_jupyter.transport.agent_install.layout import (
    InstalledAgent,
    Search,
    check_install,
    find_installed,
    install_folder,
)
from atomic_jupyter.transport.agent_install.npm_log import Progress
from atomic_jupyter.transport.agent_install.pins import LINES, AgentPin, PinError, pin_of, read_pin
from atomic_jupyter.transport.agent_install.terminal import ProgressPrinter

if TYPE_CHECKING:
    from atomic_jupyter.transport.agent_install.installer import InstallResult, install_agent

__all__ = [
    "AGENT_HOME_ENV",
    "LINES",
    "AgentHome",
    "AgentPin",
    "InstallResult",
    "InstalledAgent",
    "PinError",
    "Progress",
    "ProgressPrinter",
    "Search",
    "agent_homes",
    "check_install",
    "find_installed",
    "install_agent",
    "install_folder",
    "install_home",
    "pin_of",
    "read_pin",
]

#: The names imported on first use (from ``installer.py``).
_INSTALLER = ("InstallResult", "install_agent")


def __getattr__(name: str) -> object:
    """Import the installer's names on first use (and keep them)."""
    if name not in _INSTALLER:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from atomic_jupyter.transport.agent_install import installer

    value = getattr(installer, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_INSTALLER})
