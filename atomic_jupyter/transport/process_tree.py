"""Ending what is left of an agent's process tree once the agent has exited. No threads.

The agent runs in a process group (and session) of its own, so a kernel interrupt does not
reach it. Its tools do not stay in that group: both agent lines start the ``bash`` tool's
shell detached, in a process group of its own, and kill those groups themselves when they
get SIGTERM (the current line also when its input ends; the 0.73 line then exits and leaves
them running). So :meth:`AgentProcess.stop` first sends SIGTERM to the agent alone and gives
it ``grace`` seconds to clean up; then closes its stdin (for an agent that only ends at the
end of its input), then signals its group with SIGTERM and SIGKILL.

Whatever is left once the agent has exited (by a stop, a crash or by itself) is ended too,
SIGTERM then SIGKILL within :data:`TREE_DEADLINE_S`: every process that carries the agent's
mark in its environment (:data:`TREE_ENV`, unique to one launch, inherited by every
descendant that keeps its environment, in whatever group or session it runs: a crashed
agent's tools, a daemon a tool started), and the agent's own group while a marked member
shows it is still the agent's. Zombies do not count (a container's PID 1 may never reap
them). Without ``/proc`` only the group is ended, shortly after the exit.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time

__all__ = ["POLL_S", "TREE_DEADLINE_S", "TREE_ENV", "TREE_TERM_S", "end_tree"]

log = logging.getLogger(__name__)

#: The environment variable that marks every process of one agent's tree (its value is unique
#: to one launch).
TREE_ENV = "ATOMIC_JUPYTER_AGENT_TREE"
#: Seconds what is left of an exited agent's tree gets, from SIGTERM to the end of SIGKILL.
TREE_DEADLINE_S = 3.0
#: Of that, seconds between SIGTERM and SIGKILL.
TREE_TERM_S = 0.5
#: Seconds between two looks at what is left of a tree (or whether the agent has exited).
POLL_S = 0.02
#: Where to read processes (Linux); without it only the agent's group is checked, by signal 0.
_PROC = "/proc"


class _Tree:
    """What is left of one exited agent's process tree.

    Attributes
    ----------
    group:
        Whether the agent's process group still has live members that are the agent's (then
        the group is signalled as a whole).
    marked:
        Live processes outside the group that carry the agent's mark.
    """

    def __init__(self, group: bool = False, marked: list[int] | None = None) -> None:
        self.group = group
        self.marked = marked or []

    def __bool__(self) -> bool:
        return self.group or bool(self.marked)

    def pids(self, pgid: int) -> list[int]:
        """The group (by its id) and the marked processes."""
        return ([pgid] if self.group else []) + self.marked


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _find_tree(pgid: int, mark: bytes, group_by_signal: bool) -> _Tree:
    """What is left of the tree of the agent that led group ``pgid`` and marked its
    environment with ``mark``; zombies are left out.

    With ``/proc`` (Linux), a process counts when it carries the mark; the group counts when
    one of its live members carries the mark, which shows that the group id was not reused
    since (a group's id is not reused while the group has members; members that cleared
    their environment go with it). Without ``/proc``, the group counts when signal 0 reaches
    it, and only if ``group_by_signal`` (soon after the agent exited, before its id could be
    reused).
    """
    if not os.path.isdir(_PROC):
        if not group_by_signal:
            return _Tree()
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return _Tree()
        return _Tree(group=True)
    me = os.getpid()
    tree = _Tree()
    for name in os.listdir(_PROC):
        if not name.isdigit() or int(name) == me:
            continue
        stat = _read(f"{_PROC}/{name}/stat")
        fields = stat.rsplit(b")", 1)[-1].split() if stat else []
        if len(fields) < 3 or fields[0] in (b"Z", b"X"):
            continue
        environ = _read(f"{_PROC}/{name}/environ")
        if environ is None or mark not in environ:
            continue
        if int(fields[2]) == pgid:
            tree.group = True
        else:
            tree.marked.append(int(name))
    return tree


def _signal_tree(pgid: int, tree: _Tree, sig: int) -> None:
    """Send ``sig`` to what is left of a tree (see :func:`_find_tree`)."""
    if tree.group:
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass
    for pid in tree.marked:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def end_tree(pgid: int, tree_id: str, soon: bool, lock: threading.Lock) -> bool:
    """End what is left of the tree of the exited agent that led group ``pgid`` and marked
    its environment with ``TREE_ENV=tree_id``: SIGTERM, then SIGKILL after
    :data:`TREE_TERM_S`, all within :data:`TREE_DEADLINE_S`; return whether nothing is left
    (see :func:`_find_tree` for what counts). ``soon``: the agent exited moments ago (its
    group id cannot have been reused). ``lock`` keeps two enders of one tree apart."""
    mark = f"{TREE_ENV}={tree_id}\0".encode()
    with lock:
        deadline = time.monotonic() + TREE_DEADLINE_S
        for sig, until in (
            (signal.SIGTERM, time.monotonic() + TREE_TERM_S),
            (signal.SIGKILL, deadline),
        ):
            tree = _find_tree(pgid, mark, soon)
            if not tree:
                return True
            _signal_tree(pgid, tree, sig)
            while tree and time.monotonic() < until:
                time.sleep(POLL_S)
                tree = _find_tree(pgid, mark, soon)
        left = _find_tree(pgid, mark, soon)
        if left:
            log.warning(
                "atomic-jupyter: processes %s of the agent (pid %s) did not end",
                left.pids(pgid),
                pgid,
            )
        return not left
