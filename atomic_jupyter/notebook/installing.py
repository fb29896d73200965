"""``%atomic_agent install`` and the offer to install made when ``start`` finds no agent: the
pinned agent installed with its progress shown in the cell."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_jupyter.errors import AgentInstallError, AgentNotInstalledError
from atomic_jupyter.notebook.presentation import LiveDisplay, in_ipython, in_place_of
from atomic_jupyter.transport.agent_install import (
    InstallResult,
    ProgressPrinter,
    install_agent,
    install_home,
    pin_of,
)

if TYPE_CHECKING:
    from atomic_jupyter.ui.install_view import InstallProgress, InstallView

__all__ = ["install", "offer_install"]


def install(
    line: str = "current",
    *,
    force: bool = False,
    home: str | None = None,
    progress: InstallProgress | None = None,
) -> InstallResult:
    """Install the pinned agent of ``line`` (nothing to do when it is there), with a progress
    bar in the cell under IPython; the cell keeps what was installed where, as text.

    Parameters
    ----------
    line:
        ``"current"`` or ``"0.73"``.
    force:
        Install again even when a complete install is there.
    home:
        The agent home (``AtomicAgent.agent_home``); None: ``$ATOMIC_JUPYTER_AGENT_HOME``,
        else the user data folder.
    progress:
        Where to show the progress (the offer's, below its button); None: an output of its
        own in the current cell, replaced by the result once it is over.

    Raises
    ------
    AgentInstallError
        When it fails; nothing half-installed is left.
    """
    if not _in_kernel():  # plain Python or a terminal IPython: the command line's output
        printer = ProgressPrinter(sys.stdout)
        result = install_agent(line, home, force=force, on_progress=printer)
        print(result.describe())
        return result
    if progress is not None:
        return _install_showing(line, home, force, progress)
    from atomic_jupyter.ui.install_view import InstallView

    view = InstallView(pin_of(line).describe())
    shown = LiveDisplay(view.widget, view.record, copy=False)  # over before the cell ends
    shown.display()
    try:
        return _install_showing(line, home, force, view)
    finally:
        shown.make_final()
        view.close()


def _install_showing(
    line: str, home: str | None, force: bool, progress: InstallProgress | InstallView
) -> InstallResult:
    try:
        result = install_agent(line, home, force=force, on_progress=progress.update)
    except BaseException as exc:  # an interrupt too: the bar must not stay "Installing"
        failed = "The install did not finish; nothing was installed."
        progress.finish(False, str(exc) if isinstance(exc, AgentInstallError) else failed)
        raise
    progress.finish(True, result.describe())
    return result


def _in_kernel() -> bool:
    if not in_ipython():
        return False
    from IPython import get_ipython

    return getattr(get_ipython(), "kernel", None) is not None


def _writable(folder: Path) -> bool:
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            return os.access(candidate, os.W_OK)
    return False


def offer_install(
    error: AgentNotInstalledError, start: Callable[[], Any], home: str | None = None
) -> bool:
    """Show a button that installs the pinned agent and then calls ``start``, when that is
    safe: in a kernel (where widgets have a page), and into a home this user can write.

    Returns whether the offer was shown.
    """
    if not _in_kernel() or not _writable(install_home(home).path):
        return False  # outside a kernel there is nothing to click
    from atomic_jupyter.ui.install_view import InstallOffer

    pin = pin_of(error.line)

    def install_then_start(progress: InstallProgress) -> None:
        install(error.line, home=home, progress=progress)
        in_place_of(shown, offer.close, start)  # the session's panel takes the offer's place

    offer = InstallOffer(
        f"Install {pin.package} {pin.version} and start", pin.describe(), install_then_start
    )
    shown = LiveDisplay(offer.widget, offer.record)
    shown.display()
    return True
