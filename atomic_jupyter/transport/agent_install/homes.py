"""Where pinned agents are installed: agent homes, each holding ``<line>/<version>-<digest>/``.

An install goes into one home: the one named (``--dir``, ``--sys-prefix``), else
``$ATOMIC_JUPYTER_AGENT_HOME``, else the per-user data folder (``~/.local/share/atomic-jupyter/
agents`` on Linux, its equivalents elsewhere). A kernel looks in every home, in this order:
``AtomicAgent.agent_home``, ``$ATOMIC_JUPYTER_AGENT_HOME``, the user's, then the Python
environment's (``<sys.prefix>/share/atomic-jupyter/agents``, where an image or Binder puts one
for everybody).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

__all__ = [
    "AGENT_HOME_ENV",
    "USER_HOME_SOURCE",
    "AgentHome",
    "agent_homes",
    "install_home",
    "sys_prefix_home",
    "user_data_folder",
    "user_home",
]

#: The environment variable that names the agent home (for installs and look-ups).
AGENT_HOME_ENV = "ATOMIC_JUPYTER_AGENT_HOME"
#: The source of the per-user home, the default.
USER_HOME_SOURCE = "the user data folder"


@dataclass(frozen=True)
class AgentHome:
    """A folder of installed agents, and why it is looked at (``source``, in words)."""

    path: Path
    source: str


def user_data_folder(environ: Mapping[str, str] | None = None) -> Path:
    """atomic-jupyter's per-user data folder (honours ``$XDG_DATA_HOME`` on Linux):
    ``~/.local/share/atomic-jupyter`` there."""
    environ = os.environ if environ is None else environ
    xdg = environ.get("XDG_DATA_HOME")
    if sys.platform.startswith("linux") and xdg:
        return Path(xdg) / "atomic-jupyter"
    return Path(platformdirs.user_data_dir("atomic-jupyter", appauthor=False))


def user_home(environ: Mapping[str, str] | None = None) -> Path:
    """The per-user agent home, in the user data folder."""
    return user_data_folder(environ) / "agents"


def sys_prefix_home() -> Path:
    """The Python environment's agent home, shared by everyone who uses the environment."""
    return Path(sys.prefix) / "share" / "atomic-jupyter" / "agents"


def install_home(
    explicit: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> AgentHome:
    """The home an install goes into: ``explicit``, else ``$ATOMIC_JUPYTER_AGENT_HOME``, else
    the user's."""
    environ = os.environ if environ is None else environ
    if explicit:
        return AgentHome(Path(explicit).expanduser().absolute(), "the folder given")
    if environ.get(AGENT_HOME_ENV):
        return AgentHome(
            Path(environ[AGENT_HOME_ENV]).expanduser().absolute(), f"${AGENT_HOME_ENV}"
        )
    return AgentHome(user_home(environ), USER_HOME_SOURCE)


def agent_homes(
    configured: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> list[AgentHome]:
    """Every home a kernel looks in, in order, each once."""
    environ = os.environ if environ is None else environ
    found: list[AgentHome] = []
    candidates = [
        (configured, "AtomicAgent.agent_home"),
        (environ.get(AGENT_HOME_ENV), f"${AGENT_HOME_ENV}"),
        (user_home(environ), USER_HOME_SOURCE),
        (sys_prefix_home(), "the Python environment"),
    ]
    for path, source in candidates:
        if not path:
            continue
        home = Path(path).expanduser().absolute()
        if all(home != other.path for other in found):
            found.append(AgentHome(home, source))
    return found
