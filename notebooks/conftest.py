"""The notebooks under nbval: marked as real-agent, real-kernel tests, run on the agent line
under test (``ATOMIC_TEST_AGENT``, see tests/harness/support.py).

nbval fails a cell only on an ``error`` output. IPython reports some errors another way: a
``UsageError`` (a magic that is not loaded, ``Cell magic `%%x` not found``, ``Line magic
function `%x` not found``, bad magic arguments) is printed on stderr, with no ``error``
output, and nbval passes the cell. So after nbval runs a cell, ``pytest_runtest_call`` below
also fails it on an error that a reader would see there:

* the kernel's ``execute_reply`` says the cell raised (``status: error``), whatever it
  printed: this is how the kernel reports a ``UsageError``; or
* a ``stderr`` stream output has a line that reads as an error: one starting with
  ``UsageError:``, ``Traceback (most recent call last):``, ``ERROR``, ``CRITICAL``,
  ``FATAL`` or ``error:``, or with an exception's name and a colon (``ValueError: ...``,
  ``Error: ...``), or saying that a magic was not found.

Other stderr text passes: warnings (``path:12: UserWarning: ...``), progress and notices are
not errors. The session writes one notice there by design (atomic_jupyter/session/waiting.py:
``The agent exited with code N before the run ended.``), and the notebooks may show it;
whether that ends a run badly is for the cells that follow to check. A cell that nbval is told
to expect an exception from (the ``raises-exception`` tag or ``# NBVAL_RAISES_EXCEPTION``) is
not checked.
"""

from __future__ import annotations

import os
import re
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from nbval.plugin import IPyNbCell

from tests.harness.support import AGENT_HOME, AGENT_LINE, PINNED_AGENT

# The notebooks' kernels inherit this environment: point them at the line under test. The
# current line is found as a user's would be, installed in an agent home (`make` names the
# checkout's too).
os.environ.setdefault("ATOMIC_JUPYTER_AGENT_HOME", str(AGENT_HOME))
if AGENT_LINE != "current":
    os.environ["ATOMIC_AGENT_COMMAND"] = str(PINNED_AGENT)

#: A stderr line a reader takes for an error (see the module docstring).
ERROR_LINE = re.compile(
    r"^(?:UsageError:"
    r"|Traceback \(most recent call last\):"
    r"|(?:ERROR|CRITICAL|FATAL)\b"
    r"|[\w.]*(?:Error|Exception):"
    r"|error:"
    r")"
    r"|(?:Cell|Line) magic(?: function)? `%{1,2}[^`]*` not found"
)
#: Terminal colour codes, dropped before the text is read.
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every notebook cell runs the real agent in a real kernel."""
    for item in items:
        if str(item.path).endswith(".ipynb"):
            item.add_marker(pytest.mark.agent)
            item.add_marker(pytest.mark.kernel)


def visible_error(outputs: list[Any], replies: list[dict[str, Any]]) -> str | None:
    """What says a cell failed although nbval saw no ``error`` output, or None."""
    for reply in replies:
        if reply.get("status") == "error":
            return f"the cell raised {reply.get('ename')}: {reply.get('evalue')}"
    for output in outputs:
        if output.get("output_type") == "stream" and output.get("name") == "stderr":
            for line in ANSI.sub("", output.get("text", "")).splitlines():
                if ERROR_LINE.search(line):
                    return f"the cell wrote an error on stderr: {line}"
    return None


@contextmanager
def execute_replies(kernel: Any) -> Iterator[list[dict[str, Any]]]:
    """Record the content of the ``execute_reply`` messages nbval reads from the kernel
    (nbval waits for the reply but drops it)."""
    replies: list[dict[str, Any]] = []
    get_message = kernel.get_message

    def recording(*args: Any, **kwargs: Any) -> Any:
        msg = get_message(*args, **kwargs)
        if msg.get("msg_type") == "execute_reply":
            replies.append(msg["content"])
        return msg

    kernel.get_message = recording
    try:
        yield replies
    finally:
        kernel.get_message = get_message


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """Run the cell as nbval does, then fail it on an error nbval let pass."""
    if not isinstance(item, IPyNbCell) or item.options.get("check_exception"):
        return (yield)
    with execute_replies(item.parent.kernel) as replies:
        result = yield
    outputs = item.test_outputs or []
    problem = visible_error(outputs, replies)
    if problem:
        stderr = "".join(
            output.get("text", "")
            for output in outputs
            if output.get("output_type") == "stream" and output.get("name") == "stderr"
        )
        item.raise_cell_error(problem, stderr or None)
    return result
