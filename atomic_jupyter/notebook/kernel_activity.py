"""The kernel's side of "this kernel is in use": a message on its IOPub channel, which the
Jupyter server counts as the kernel's activity (and JupyterHub's single-user server reports
to the hub, whose idle culler reads it).

Sent by the session's idle watch (:mod:`atomic_jupyter.session.idle`) while its agent works or
waits on a dialog, from the watch's thread: ipykernel's IOPub socket takes messages from any
thread. It is a ``comm_msg`` to a comm that no page opened, so every frontend drops it
(JupyterLab, Notebook 7, nbclient and VS Code ignore a message for a comm they do not know),
and it is no widget message: nothing is drawn and no widget state changes.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ACTIVITY_COMM", "signal_activity"]

#: The comm id of the activity messages (no frontend opens a comm of that id).
ACTIVITY_COMM = "atomic-jupyter-activity"


def _kernel() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return None
    shell = get_ipython()
    return getattr(shell, "kernel", None) if shell is not None else None


def signal_activity() -> bool:
    """Tell the Jupyter server this kernel is in use; return whether a message went out (not
    in a kernel: nothing to tell)."""
    kernel = _kernel()
    session = getattr(kernel, "session", None)
    socket = getattr(kernel, "iopub_socket", None)
    if session is None or socket is None:
        return False
    content = {"comm_id": ACTIVITY_COMM, "data": {"agent": "working"}}
    session.send(socket, "comm_msg", content, ident=f"comm-{ACTIVITY_COMM}".encode())
    return True
