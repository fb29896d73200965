"""Futures of the notebook tools: a page's reply turned into the model's answer, and a
callback that answers with the error instead of failing silently (a future swallows what its
callbacks raise)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from atomic_jupyter.notebook.page_link import PageError
from atomic_jupyter.session.kernel_tools import ToolReply

__all__ = ["guarded", "then"]


def then(future: Future[Any], make: Callable[[Any], ToolReply]) -> Future[ToolReply]:
    """A future of ``make(result)``; a page's refusal or a bug becomes the model's error."""
    result: Future[ToolReply] = Future()

    def done(settled: Future[Any]) -> None:
        try:
            reply = make(settled.result())
        except PageError as exc:
            reply = ToolReply(error=str(exc))
        except Exception as exc:  # a bug of ours: the model is told, the kernel goes on
            reply = ToolReply(error=f"{type(exc).__name__}: {exc}")
        result.set_result(reply)

    future.add_done_callback(done)
    return result


def guarded(
    result: Future[ToolReply], callback: Callable[[Future[Any]], None]
) -> Callable[[Future[Any]], None]:
    """``callback`` for a page's reply; a bug in it (an odd reply) answers the call with the
    error instead of leaving it unanswered (a future swallows what its callbacks raise)."""

    def guarded(done: Future[Any]) -> None:
        try:
            callback(done)
        except Exception as exc:
            if not result.done():
                result.set_result(ToolReply(error=f"{type(exc).__name__}: {exc}"))

    return guarded
