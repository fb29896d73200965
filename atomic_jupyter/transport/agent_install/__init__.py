"""The pinned agents: their shipped pins, where they are installed, and installing them.

``atomic-jupyter install-agent``, ``python -m atomic_jupyter install-agent`` and
``%atomic_agent install`` all call :func:`install_agent`; a kernel finds the result with
:func:`find_installed` over :func:`agent_homes`.
"""

from atomic_jupyter.transport.agent_install.homes import (
    AGENT_HOME_ENV,
    AgentHome,
    agent_homes,
    install_home,
)
from atomic_jupyter.transport.agent_install.installer import InstallResult, install_agent
from atomic_jupyter.transport.agent_install.layout import (
    InstalledAgent,
    Search,
    check_install,
    find_installed,
    install_folder,
)
from atomic_jupyter.transport.agent_install.npm_log import Progress
from atomic_jupyter.transport.agent_install.pins import LINES, AgentPin, PinError, pin_of, read_pin

__all__ = [
    "AGENT_HOME_ENV",
    "LINES",
    "AgentHome",
    "AgentPin",
    "InstallResult",
    "InstalledAgent",
    "PinError",
    "Progress",
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
