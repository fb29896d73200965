"""The widget thread guard: no widget is built, changed or closed off the kernel's thread.

ipywidgets are built and changed on the kernel's thread (the main thread); the agent's reader
thread and the dialog ticker hand that work to ``atomic_jupyter.ui.dispatch.UiDispatcher``
(see ARCHITECTURE.md, "Which thread runs what"). The guard wraps ``Widget.__init__``,
``Widget.send_state``, ``Widget._send`` and ``Widget.close`` (of an open widget: the garbage
collector closes dropped widgets again, on any thread, which touches nothing) and records each
call made on any other thread; a test fails at teardown listing them (an autouse fixture in
``tests.harness.plugin``). What strict dispatchers refused (``dispatch.refused``) fails it too.

The allowed exception: widget work inside ``atomic_jupyter.ui.dispatch.thread_safe_update()``,
each output rendered under its own lock: ``LiveOutput.append`` (``%atomic_agent bash``'s live
output, set from the reader thread while its cell blocks), ``SessionView.render_while_busy``
(from the dispatcher's stand-in thread ``atomic-ui-stand-in`` while a person's cell blocks the
loop, a kernel call's timer, the agent's code's ticker), and a page's message handled on the
shell thread that received it: the main thread, or a kernel subshell's (``subshell-<id>``,
JupyterLab's comms over subshells).

The guard knows those threads by kind (:func:`thread_kind`): a violation names it, and what
was done inside ``thread_safe_update()`` off the main thread is counted by kind
(:func:`marked`), so a test can show that a page's message really was handled on a subshell
while a cell ran.

In a real kernel (``BrowserLikeKernel(thread_guard=True)``) the same guard is installed at
kernel start from :data:`KERNEL_INSTALL` (an ``exec_lines`` of the kernel), and
:func:`assert_no_offthread_widget_work` reads what it recorded.

This module imports nothing from the test suite: the kernel imports it too.
"""

from __future__ import annotations

import functools
import json
import re
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "KERNEL_INSTALL",
    "assert_no_offthread_widget_work",
    "install",
    "installed",
    "marked",
    "pump_until",
    "report",
    "take",
    "thread_kind",
    "uninstall",
]

#: The repository's root (the kernel puts it on ``sys.path`` to import this module).
ROOT = Path(__file__).resolve().parents[2]
#: The line a kernel runs at start to install the guard (see ``BrowserLikeKernel``).
KERNEL_INSTALL = (
    f"__import__('sys').path.append({str(ROOT)!r}); "
    "__import__('tests.harness.thread_guard', fromlist=['install']).install()"
)
#: The most distinct violations kept (each with its count).
KEPT = 50

_lock = threading.Lock()
_seen: Counter[str] = Counter()
_marked: Counter[str] = Counter()
_originals: dict[str, Callable[..., Any]] = {}
_local = threading.local()


def thread_kind(thread: threading.Thread) -> str:
    """What a thread is, for the guard's reports: ``"main"``, ``"subshell"`` (a kernel
    subshell's shell thread, ipykernel's ``subshell-<id>``), ``"stand-in"`` (a dispatcher's),
    or the thread's name without its trailing number or process id.

    Parameters
    ----------
    thread : threading.Thread
        The thread.

    Returns
    -------
    str
        Its kind.
    """
    if thread is threading.main_thread():
        return "main"
    if thread.name.startswith("subshell-"):
        return "subshell"
    if thread.name == "atomic-ui-stand-in":
        return "stand-in"
    return re.sub(r"[-_ ]?\d+$", "", thread.name) or thread.name


def marked() -> dict[str, int]:
    """How many widget calls were made inside ``thread_safe_update()`` off the main thread,
    by :func:`thread_kind`, since the guard was installed (or :func:`take` last ran).

    Returns
    -------
    dict
        Kind -> calls.
    """
    with _lock:
        return dict(_marked)


def _allowed() -> bool:
    """Whether widget work on the calling thread is allowed right now."""
    if threading.current_thread() is threading.main_thread():
        return True
    from atomic_jupyter.ui.dispatch import in_thread_safe_update

    return in_thread_safe_update()


def _where() -> str:
    """The innermost frame of the package (or of a test) that led here."""
    frames = traceback.extract_stack()[:-3]
    for frame in reversed(frames):
        path = frame.filename.replace("\\", "/")
        if "/atomic_jupyter/" in path or re.search(r"/tests/(.+/)?test_", path):
            return f"{_shown_path(path)}:{frame.lineno} in {frame.name}"
    for frame in reversed(frames):  # a cell's code, in a kernel
        path = frame.filename.replace("\\", "/")
        if "/site-packages/" not in path and "/lib/python" not in path:
            return f"{path}:{frame.lineno} in {frame.name}"
    return "(unknown)"


def _shown_path(path: str) -> str:
    """A frame's file as the report names it: from the checkout's root when it is in the
    checkout (``tests/unit/ui/test_dispatch.py``), else its folder and name."""
    root = ROOT.as_posix() + "/"
    if path.startswith(root):
        return path[len(root) :]
    return "/".join(path.rsplit("/", 2)[-2:])


def _collected() -> bool:
    """Whether ipywidgets' ``Widget.__del__`` (the garbage collector) made the call."""
    return any(frame.name == "__del__" for frame in traceback.extract_stack()[-8:])


def _record(action: str, widget: Any) -> None:
    if action == "closed" and _collected():
        action = "closed (dropped open, by the garbage collector)"
    thread = threading.current_thread()
    kind = thread_kind(thread)
    on = (
        f"a kernel subshell's thread {thread.name!r}"
        if kind == "subshell"
        else (f"thread {thread.name!r}")
    )
    entry = f"{action} {type(widget).__name__} on {on} at {_where()}"
    with _lock:
        if entry in _seen or len(_seen) < KEPT:
            _seen[entry] += 1


def _touches(action: str, widget: Any) -> bool:
    """Whether the call reaches the widget's model: closing a widget already closed (its
    comm is gone; the garbage collector's ``Widget.__del__`` does it, on any thread) does not."""
    return action != "closed" or getattr(widget, "comm", None) is not None


def _guarded(action: str, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        depth = getattr(_local, "depth", 0)
        # The outermost call says what was done.
        if depth == 0 and _touches(action, self):
            if not _allowed():
                _record(action, self)
            elif threading.current_thread() is not threading.main_thread():
                with _lock:
                    _marked[thread_kind(threading.current_thread())] += 1
        _local.depth = depth + 1
        try:
            return original(self, *args, **kwargs)
        finally:
            _local.depth = depth

    return wrapper


_ACTIONS = {"__init__": "built", "send_state": "changed", "_send": "sent", "close": "closed"}


def install() -> None:
    """Wrap ipywidgets' ``Widget`` methods to record widget work off the main thread (once)."""
    from ipywidgets import Widget

    with _lock:
        if _originals:
            return
        for name, action in _ACTIONS.items():
            original = Widget.__dict__[name]
            _originals[name] = original
            setattr(Widget, name, _guarded(action, original))


def uninstall() -> None:
    """Put ipywidgets' own methods back."""
    from ipywidgets import Widget

    with _lock:
        for name, original in _originals.items():
            setattr(Widget, name, original)
        _originals.clear()


def installed() -> bool:
    """Whether the guard is installed.

    Returns
    -------
    bool
        True once :func:`install` ran (and :func:`uninstall` did not since).
    """
    return bool(_originals)


def take() -> list[str]:
    """Return and forget what was recorded: widget work off the main thread (with counts), and
    what strict dispatchers refused.

    Returns
    -------
    list of str
        One line per distinct violation; empty when there was none.
    """
    from atomic_jupyter.ui import dispatch

    with _lock:
        found = [f"{entry} ({count}x)" for entry, count in _seen.items()]
        _seen.clear()
    refused = list(dispatch.refused)
    dispatch.refused.clear()
    return found + [f"dispatcher refused: {message}" for message in refused]


def report(found: list[str]) -> str:
    """A failure message listing ``found``.

    Parameters
    ----------
    found : list of str
        What :func:`take` returned.

    Returns
    -------
    str
        The message.
    """
    lines = "\n".join(f"  - {entry}" for entry in found)
    return (
        "widget work off the kernel's main thread outside thread_safe_update() (see "
        f"ARCHITECTURE.md, 'Which thread may touch what'):\n{lines}"
    )


def assert_no_offthread_widget_work(kernel: Any, timeout: float = 30.0) -> None:
    """Fail when the guard installed in a real kernel recorded widget work off its main thread.

    Parameters
    ----------
    kernel : BrowserLikeKernel
        A kernel started with ``thread_guard=True``.
    timeout : float
        Seconds the reading cell may take.

    Raises
    ------
    AssertionError
        Listing the violations.
    """
    result = kernel.execute(
        "print(__import__('json').dumps("
        "__import__('sys').modules['tests.harness.thread_guard'].take()))",
        timeout=timeout,
    )
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert not found, report(found)


def pump_until(
    dispatcher: Any,
    predicate: Callable[[], Any],
    what: str = "the condition",
    timeout: float = 30.0,
) -> Any:
    """On the kernel (main) thread, with no event loop to run the widget work: run what the
    dispatcher has queued until ``predicate()`` is truthy, and return that value.

    Between two pumps it waits for new work (or 20 ms, for conditions that need none), never
    past the deadline.

    Parameters
    ----------
    dispatcher : UiDispatcher
        The view's dispatcher (``SessionView.dispatcher``).
    predicate : callable
        The condition, checked after each pump.
    what : str
        What is waited for, for the failure message.
    timeout : float
        Seconds before failing.

    Raises
    ------
    AssertionError
        When the deadline passes first.
    """
    deadline = time.monotonic() + timeout
    while True:
        dispatcher.pump()
        value = predicate()
        if value:
            return value
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        dispatcher.wait_for_work(min(left, 0.02))
