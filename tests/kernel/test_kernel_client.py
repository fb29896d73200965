"""Tests of the :mod:`tests.harness.kernel_client` harness against our output widget in a real
kernel: what the page draws, what a person's click sends, where outputs go."""

from __future__ import annotations

import socket
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from atomic_jupyter.ui.page_protocol import PROTOCOL_VERSION
from tests.harness.kernel_client import BrowserLikeKernel, CellError, ExecResult, KernelTimeout
from tests.harness.kernel_widgets import displayed, page_of, texts_of

pytestmark = [pytest.mark.kernel, pytest.mark.one_line]  # the harness alone: no agent


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserLikeKernel]:
    """One kernel for the module, started in a scratch directory."""
    cwd = tmp_path_factory.mktemp("kernel-cwd")
    with BrowserLikeKernel(cwd, env={"HARNESS_MARKER": "from-test"}) as k:
        k.execute(
            "from atomic_jupyter.ui.output_widget import OutputWidget; from atomic_jupyter.ui.page_protocol import PageContent as Content"
        )
        yield k


def run(kernel: BrowserLikeKernel, code: str, *, check: bool = True) -> ExecResult:
    """Execute ``code`` after dedenting it."""
    return kernel.execute(textwrap.dedent(code), check=check)


def test_kernel_runs_in_cwd_with_env(kernel: BrowserLikeKernel) -> None:
    result = run(
        kernel,
        """
        import os, sys
        print(os.getcwd()); print(os.environ["HARNESS_MARKER"]); print(sys.executable)
        """,
    )
    cwd, marker, executable = result.stdout.splitlines()
    assert Path(cwd).name.startswith("kernel-cwd")
    assert marker == "from-test"
    assert executable == sys.executable


def test_a_click_reaches_the_widgets_listeners_and_what_they_change_is_drawn(
    kernel: BrowserLikeKernel,
) -> None:
    result = run(
        kernel,
        """
        clicks = []
        out = OutputWidget("atomic-probe")

        def clicked(message):
            clicks.append(message.name)
            out.update_page(Content(["n"], {"n": f'<p class="count">clicked {len(clicks)}</p>'}))

        out.on_action.add(clicked)
        out.update_page(Content(["n"], {"n": '<p class="count">not clicked</p>'}))
        display(out)
        """,
    )
    assert result.ok and result.stdout == ""
    (output,) = result.widget_ids
    assert kernel.models[output]["root_class"] == "atomic-probe"
    kernel.wait_for(lambda: texts_of(kernel, output, "count") == ["not clicked"], what="drawn")
    kernel.send_custom(output, {"type": "command", "name": "go"})
    kernel.wait_for(lambda: texts_of(kernel, output, "count") == ["clicked 1"], what="a click")
    msg_id = kernel.send_custom(output, {"type": "command", "name": "again"})
    kernel.wait_idle(msg_id)
    assert texts_of(kernel, output, "count") == ["clicked 2"]
    assert run(kernel, "print(clicks)").stdout == "['go', 'again']\n"


def test_background_thread_display_updates_arrive_while_idle(kernel: BrowserLikeKernel) -> None:
    # The thread waits for the test to connect, which the test does only after the cell has
    # gone idle: its update is sent while the kernel is idle, by construction, not by timing.
    result = run(
        kernel,
        """
        import socket, threading
        go_ahead = socket.create_server(("127.0.0.1", 0))
        go_ahead.settimeout(30)

        def worker():
            with go_ahead, go_ahead.accept()[0]:
                ticker.update("from thread")
                print("thread done")

        threading.Thread(target=worker, daemon=True).start()
        ticker = display("waiting", display_id=True)
        print(go_ahead.getsockname()[1])
        """,
    )
    (shown,) = [o for o in result.outputs if o["output_type"] == "display_data"]
    port = int(result.stdout)
    # The cell has finished (``execute`` returned on its idle status): now let the thread go.
    with socket.create_connection(("127.0.0.1", port), timeout=30):
        kernel.wait_for(
            lambda: displayed(kernel, shown)["text/plain"] == "'from thread'",
            what="the thread's update",
        )
        (late,) = kernel.wait_for(
            lambda: [s for s in kernel.streams if s.text == "thread done\n"], what="thread print"
        )

    def kind(m: dict) -> str | None:
        content = m["content"]
        if (
            m["parent_header"].get("msg_id") == result.msg_id
            and m["header"]["msg_type"] == "status"
        ):
            return f"cell {content['execution_state']}"
        if m["header"]["msg_type"] == "update_display_data":
            return "thread update"
        if m["header"]["msg_type"] == "stream" and content["text"] == "thread done\n":
            return "thread print"
        return None

    order = [k for k in map(kind, kernel.messages) if k is not None]
    assert order == ["cell busy", "cell idle", "thread update", "thread print"]

    # The thread's print belongs to a finished cell: JupyterLab shows it nowhere.
    assert (late.parent_msg_id, late.shown_in) == (result.msg_id, "dropped")


def test_click_reaches_an_awaiting_async_cell(kernel: BrowserLikeKernel) -> None:
    shown = run(
        kernel,
        """
        import asyncio
        answer = OutputWidget("atomic-probe")
        display(answer)
        """,
    )
    (answer,) = shown.widget_ids
    cell = kernel.submit(
        textwrap.dedent(
            """
            reply = asyncio.get_running_loop().create_future()
            answer.on_action.add(lambda m: reply.done() or reply.set_result(m.name))
            print("asking")
            print("got", await reply)
            """
        )
    )
    kernel.wait_for(
        # The cell's output so far ("asking" and its line break may come in two messages).
        lambda: "".join(s.text for s in kernel.streams if s.parent_msg_id == cell) == "asking\n",
        what="the cell to start waiting",
    )
    click = kernel.send_custom(answer, {"type": "command", "name": "yes"})
    result = kernel.collect(cell, timeout=10)
    assert result.stdout == "asking\ngot yes\n"
    # ipykernel 7.4 dispatches this comm message beside the running cell and
    # publishes no busy/idle status for it (so wait_idle would time out).
    statuses = [
        m for m in kernel.iter_messages("status") if m["parent_header"].get("msg_id") == click
    ]
    assert statuses == []


def test_cell_error_reports_ename(kernel: BrowserLikeKernel) -> None:
    result = run(kernel, "print('before'); {}['missing']", check=False)
    assert result.status == "error"
    assert result.ename == "KeyError"
    assert result.evalue == "'missing'"
    assert result.stdout == "before\n"
    assert "KeyError" in result.plain_traceback
    assert "\x1b[" not in result.plain_traceback

    with pytest.raises(CellError, match="ZeroDivisionError") as info:
        run(kernel, "1 / 0")
    assert info.value.result.ename == "ZeroDivisionError"
    # The kernel is still usable afterwards.
    assert run(kernel, "6 * 7").result == "42"


def test_our_outputs_are_kept_as_their_page_draws_them_even_after_they_closed(
    kernel: BrowserLikeKernel,
) -> None:
    """The tracker keeps what the page's module holds for each of our output widgets, from
    their custom messages; a page that missed one asks for the whole output (as the module
    does), and what it last drew stays readable once the widget is closed."""
    result = run(
        kernel,
        """
        out = OutputWidget("atomic-run")
        out.update_page(Content(["a"], {"a": '<p class="said">one</p>'}))
        display(out)
        """,
    )
    (output,) = result.widget_ids
    assert output in kernel.tracker.pages
    kernel.wait_for(
        lambda: texts_of(kernel, output, "said") == ["one"], what="the first block on the page"
    )
    # The page's model was made after the first patch was sent: it asked, and got it whole.
    kernel.wait_for(
        lambda: (
            [m.get("type") for c, m, _ in kernel.tracker.custom_messages if c == output]
            == ["patch", "snapshot"]
        ),
        what="the snapshot the new model asked for",
    )
    asked = len(kernel.tracker.custom_messages)
    # A message lost on the way: the next one is out of order, and the page asks again.
    run(
        kernel,
        """
        out._seq += 1
        out.update_page(Content(["a", "b"], {"a": '<p class="said">one</p>', "b": '<p class="said">two</p>'}))
        """,
    )
    kernel.wait_for(
        lambda: texts_of(kernel, output, "said") == ["one", "two"],
        what="the whole output, sent again",
    )
    kinds = [m.get("type") for c, m, _ in kernel.tracker.custom_messages[asked:] if c == output]
    assert kinds == ["patch", "snapshot"], kinds
    readies = [m for m in kernel.tracker.pages[output].sent if m["type"] == "ready"]
    assert readies == [
        {"type": "ready", "v": PROTOCOL_VERSION, "seq": 0},  # made
        {"type": "ready", "v": PROTOCOL_VERSION, "seq": 1},  # missed the second patch
    ]
    run(kernel, "out.empty_and_close()")
    kernel.wait_for(lambda: output not in kernel.models, what="the output to close")
    assert page_of(kernel, output) == '<p class="said">one</p><p class="said">two</p>'


def test_callback_exceptions_and_streams_are_recorded(kernel: BrowserLikeKernel) -> None:
    shown = run(
        kernel,
        """
        def explode(widget, content, buffers):
            if content.get("type") == "ready":  # the page's own (see OutputWidget)
                return
            print("about to fail")
            raise RuntimeError("boom in callback")

        bad = OutputWidget("atomic-probe")
        bad.on_msg(explode)
        display(bad)
        """,
    )
    (bad,) = shown.widget_ids
    before = len(kernel.errors)
    msg_id = kernel.send_custom(bad, {"type": "go"})
    kernel.wait_idle(msg_id)
    new_errors = kernel.errors[before:]
    assert [(e["ename"], e["parent_msg_type"]) for e in new_errors] == [
        ("RuntimeError", "comm_msg")
    ]
    printed = [s for s in kernel.streams if s.parent_msg_id == msg_id]
    # A callback's output lands in JupyterLab's log console.
    assert [(s.text, s.shown_in) for s in printed] == [("about to fail\n", "log")]
    assert new_errors[0]["shown_in"] == "log"
    assert "about to fail" in kernel.stdout_text


def test_failures_explain_themselves(kernel: BrowserLikeKernel) -> None:
    run(kernel, "lonely = OutputWidget('atomic-lonely'); display(lonely)")
    with pytest.raises(KernelTimeout, match="the impossible") as waited:
        kernel.wait_for(lambda: False, timeout=0.2, what="the impossible")
    assert "root_class='atomic-lonely'" in str(waited.value)  # what the page holds
