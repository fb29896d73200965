"""``%atomic_agent install`` and the offer to install made when ``start`` finds no agent: the
pinned agent installed with its progress shown in the cell."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from atomic_jupyter.errors import AgentInstallError, AgentNotInstalledError
from atomic_jupyter.notebook.presentation import in_ipython
from atomic_jupyter.transport.agent_install import (
    InstallResult,
    ProgressPrinter,
    install_agent,
    install_home,
    pin_of,
)

__all__ = ["install", "offer_install"]


def _display(obj: Any, **kwargs: Any) -> Any:
    from IPython.display import display

    return display(obj, **kwargs)


def install(
    line: str = "current", *, force: bool = False, home: str | None = None, in_place: bool = True
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
    in_place:
        Replace the progress with the result by its display id (a cell); False inside an
        ``Output`` widget, which takes no display updates.

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
    from atomic_jupyter.ui.install_view import InstallView

    view = InstallView(pin_of(line).describe())
    handle = _display(view.widget, display_id=True) if in_place else _display(view.widget)
    try:
        result = install_agent(line, home, force=force, on_progress=view.update)
    except BaseException as exc:  # an interrupt too: the bar must not stay "Installing"
        failed = "The install did not finish; nothing was installed."
        view.finish(False, str(exc) if isinstance(exc, AgentInstallError) else failed)
        _replace(handle, failed)
        view.close()
        raise
    view.finish(True, result.describe())
    _replace(handle, result.describe())
    view.close()
    return result


def _replace(handle: Any, text: str) -> None:
    """Put ``text`` where the progress was: by its display id in a cell, or (in an Output
    widget, which ignores display updates) by clearing the output and printing."""
    if handle is not None:
        handle.update({"text/plain": text}, raw=True)
        return
    from IPython.display import clear_output

    clear_output()
    print(text)


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

    def install_then_start() -> None:
        install(error.line, home=home, in_place=False)
        start()

    offer = InstallOffer(f"Install {pin.package} {pin.version} and start", install_then_start)
    _display(offer.widget)
    return True
