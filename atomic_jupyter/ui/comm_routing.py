"""Where the kernel hands a page's messages for one of our comms: to the shell the page
addressed them to. No widget library is imported here (the command line's doctor reads the
notebook link, which uses this, without ipywidgets)."""

from __future__ import annotations

from typing import Any

__all__ = ["answer_where_addressed"]


def answer_where_addressed(comm: Any) -> None:
    """Have the kernel hand each of the page's messages for ``comm`` to the shell the page
    addressed it to (its header's ``subshell_id``: JupyterLab's subshell for widget comms,
    or the main shell), and nowhere else.

    ipykernel 7.4 routes a comm's incoming messages to the subshell of the last message the
    kernel *sent* on it (``BaseComm._reply_subshell_for``, for a kernel that awaits a reply
    in the subshell that asked). Our outputs await no reply, and their renders go out from
    the main thread, in a cell: that routing would send the next click to the main shell,
    where it waits behind a person's computing cell. A kernel without that routing needs
    nothing.
    """
    if comm is not None and hasattr(comm, "_reply_subshell_for"):
        comm._reply_subshell_for = _as_addressed


def _as_addressed(_data: Any, addressed: str | None) -> str | None:
    return addressed
