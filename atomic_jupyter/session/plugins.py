"""How the layers above the session plug into it, without the session importing them.

* An :class:`Addon` adds arguments and environment to each launch of the agent, hears when
  the agent exits, and is closed with the session (the offline demo model, extension
  prototyping: ``atomic_jupyter.addons``).
* A :class:`Presentation` shows a session: its panel, the output area of each prompt, and
  the work a blocking wait must do on the main thread (``atomic_jupyter.notebook``).

``atomic_jupyter/wiring.py`` registers their factories with
:meth:`~atomic_jupyter.session.session.AgentSession.register_addon` and
:meth:`~atomic_jupyter.session.session.AgentSession.use_presentation`; a session creates its
addons when it is made and its presentation when one is first needed.

That module imports the widget libraries and IPython, so importing the package does not
import it: the package root hands :func:`use_wiring` the import, and the first session made
(or ``%load_ext atomic_jupyter``) runs it through :func:`wire`, once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from atomic_jupyter.session.dialogs import Dialog
    from atomic_jupyter.session.runs import PromptRun

__all__ = ["Addon", "LaunchAdditions", "Presentation", "use_wiring", "wire"]

#: What :func:`wire` has still to run, in order; taken under the lock.
_wiring: list[Callable[[], object]] = []
_wiring_lock = threading.RLock()


def use_wiring(hook: Callable[[], object]) -> None:
    """Have :func:`wire` call ``hook()`` once, before the first session is made (the package
    root registers the import of ``atomic_jupyter/wiring.py``)."""
    with _wiring_lock:
        if hook not in _wiring:
            _wiring.append(hook)


def wire() -> None:
    """Run the hooks given to :func:`use_wiring` that have not run yet, each once.

    Every new session calls it first, so its addons, presentation, citations and built-in
    tools are those the wiring registers. Any thread may call it: another thread waits until
    the wiring is done; a call made by a hook itself does not run that hook again. A hook
    that raises stays to run again at the next call.
    """
    with _wiring_lock:
        while _wiring:
            hook = _wiring.pop(0)
            try:
                hook()
            except BaseException:
                _wiring.insert(0, hook)
                raise


@dataclass(frozen=True)
class LaunchAdditions:
    """What an addon adds to one launch: agent arguments and environment variables."""

    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)


class Addon(Protocol):
    """A part that adds to each launch and is closed with its session.

    An addon that keeps the agent's conversation in a file also says so with a
    ``keeps_conversation`` attribute (true while it holds the file): only then may an idle
    agent be put to sleep.
    """

    #: The addon's name (``session.addon(name)`` finds it).
    name: str

    def launch(self) -> LaunchAdditions:
        """Called before each start of the agent; may start servers or write files."""

    def agent_exited(self) -> None:
        """Called once the agent has exited (or failed to start)."""

    def close(self) -> None:
        """Called when the session is stopped for good: remove every file and thread."""


class Presentation(Protocol):
    """What shows a session (created on first use, on the main thread)."""

    @property
    def panel(self) -> Any:
        """The session's panel (a widget)."""

    @property
    def displays(self) -> bool:
        """Whether :meth:`display_run` can show anything (an IPython display hook is there)."""

    def prepare_run(self, run: PromptRun) -> None:
        """Build the area of a run that will be shown, before its prompt goes out."""

    def display_run(self, run: PromptRun) -> None:
        """Show a run's area in the current cell (after its prompt went out)."""

    def display_panel(self) -> None:
        """Show the panel in the current cell."""

    def notice_dialog(self, dialog: Dialog) -> None:
        """Say in the current cell that a wait stopped for ``dialog`` (kept current: once the
        dialog is settled, the notice says how)."""

    def make_displays_final(self) -> None:
        """Replace the session's live outputs by their records (the session is stopped)."""

    def pump(self) -> None:
        """During a blocking wait, on the main thread: do the view work that is due."""

    def run_on_main(self, work: Callable[[], None]) -> None:
        """Run ``work`` on the kernel's main thread: at once there, else when the kernel is
        idle, or at the next :meth:`pump` of a blocking wait (any thread may ask)."""

    def while_running(self, tick: Callable[[], None], every: float) -> Callable[[], None]:
        """While the main thread runs the agent's code (so the kernel's loop cannot render):
        every ``every`` seconds call ``tick()`` from another thread, then render what is shown
        from there; return the function that stops it (and waits for a tick under way)."""

    def close(self) -> None:
        """Stop observing the session."""
