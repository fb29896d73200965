"""Tests of the :mod:`tests.harness.kernel_client` harness against plain ipywidgets (and one
of our output widgets) in a real kernel."""

from __future__ import annotations

import socket
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.harness.kernel_client import BrowserLikeKernel, CellError, ExecResult, KernelTimeout
from tests.harness.kernel_widgets import page_of, texts_of

pytestmark = [pytest.mark.kernel, pytest.mark.one_line]  # the harness alone: no agent


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserLikeKernel]:
    """One kernel for the module, started in a scratch directory."""
    cwd = tmp_path_factory.mktemp("kernel-cwd")
    with BrowserLikeKernel(cwd, env={"HARNESS_MARKER": "from-test"}) as k:
        k.execute("import ipywidgets as w")
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


def test_click_runs_handler_and_updates_label(kernel: BrowserLikeKernel) -> None:
    result = run(
        kernel,
        """
        clicked = 0
        go = w.Button(description="Go")
        name = w.Text(description="Name")
        status = w.Label(value="not clicked")

        def on_go(button):
            global clicked
            clicked += 1
            status.value = f"clicked {clicked}"

        go.on_click(on_go)
        box = w.VBox([go, name, status])
        display(box)
        """,
    )
    assert result.ok and result.stdout == ""
    (box_id,) = result.widget_ids
    box = kernel.widget(box_id)
    assert box.model_name == "VBoxModel"
    assert [c.model_name for c in kernel.descendants(box_id)] == [
        "ButtonModel",
        "TextModel",
        "LabelModel",
    ]

    button = kernel.find("Button", description="Go", within=box_id)
    label = kernel.find("LabelModel", within=box_id)
    assert label.state["value"] == "not clicked"

    kernel.click(button.comm_id)
    kernel.wait_for(lambda: label.state["value"] == "clicked 1", what="label after first click")

    msg_id = button.click()
    kernel.wait_idle(msg_id)
    assert label["value"] == "clicked 2"

    assert run(kernel, "print(clicked)").stdout == "2\n"


def test_set_value_reaches_kernel_observers(kernel: BrowserLikeKernel) -> None:
    run(
        kernel,
        """
        seen = []
        entry = w.Text(description="Entry")
        entry.observe(lambda change: seen.append(change["new"]), names="value")
        display(entry)
        """,
    )
    entry = kernel.find("Text", description="Entry")

    kernel.set_value(entry.comm_id, value="hello")
    # The browser model changes at once; the kernel learns about it later.
    assert entry.state["value"] == "hello"
    assert run(kernel, "print(repr(entry.value), seen)").stdout == "'hello' ['hello']\n"

    # Two quick edits: the echo of the first must not roll the model back.
    kernel.set_value(entry.comm_id, value="a")
    last = kernel.set_value(entry.comm_id, value="ab")
    kernel.wait_idle(last)
    kernel.drain()
    assert entry.state["value"] == "ab"
    echoes = [
        m
        for m in kernel.iter_messages("comm_msg")
        if m["content"]["comm_id"] == entry.comm_id
        and m["content"]["data"]["method"] == "echo_update"
    ]
    assert [m["content"]["data"]["state"]["value"] for m in echoes] == ["hello", "a", "ab"]
    assert run(kernel, "print(entry.value, seen)").stdout == "ab ['hello', 'a', 'ab']\n"


def test_background_thread_updates_arrive_while_idle(kernel: BrowserLikeKernel) -> None:
    # The thread waits for the test to connect, which the test does only after the cell has
    # gone idle: its update is sent while the kernel is idle, by construction, not by timing.
    result = run(
        kernel,
        """
        import socket, threading
        ticker = w.Label(value="waiting")
        go_ahead = socket.create_server(("127.0.0.1", 0))
        go_ahead.settimeout(30)

        def worker():
            with go_ahead, go_ahead.accept()[0]:
                ticker.value = "from thread"
                print("thread done")

        threading.Thread(target=worker, daemon=True).start()
        display(ticker)
        print(go_ahead.getsockname()[1])
        """,
    )
    ticker = kernel.find("Label", value="waiting")
    port = int(result.stdout)
    # The cell has finished (``execute`` returned on its idle status): now let the thread go.
    with socket.create_connection(("127.0.0.1", port), timeout=30):
        kernel.wait_for(lambda: ticker.state["value"] == "from thread", what="the thread's update")
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
        if (
            m["header"]["msg_type"] == "comm_msg"
            and content["comm_id"] == ticker.comm_id
            and content["data"]["state"].get("value") == "from thread"
        ):
            return "thread update"
        if m["header"]["msg_type"] == "stream" and content["text"] == "thread done\n":
            return "thread print"
        return None

    order = [k for k in map(kind, kernel.messages) if k is not None]
    assert order == ["cell busy", "cell idle", "thread update", "thread print"]

    # The thread's print belongs to a finished cell: JupyterLab shows it nowhere.
    assert (late.parent_msg_id, late.shown_in) == (result.msg_id, "dropped")


def test_click_reaches_an_awaiting_async_cell(kernel: BrowserLikeKernel) -> None:
    run(
        kernel,
        """
        import asyncio
        answer = w.Button(description="Answer")
        display(answer)
        """,
    )
    cell = kernel.submit(
        textwrap.dedent(
            """
            reply = asyncio.get_running_loop().create_future()
            answer.on_click(lambda b: reply.done() or reply.set_result("yes"))
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
    click = kernel.find("Button", description="Answer").click()
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


def test_output_widget_captures_like_jupyterlab(kernel: BrowserLikeKernel) -> None:
    result = run(
        kernel,
        """
        log = w.Output()
        display(log)
        with log:
            print("inside")
        print("outside")

        @log.capture()
        def on_log_click(button):
            print("from callback")

        log_button = w.Button(description="Log")
        log_button.on_click(on_log_click)
        display(log_button)
        """,
    )
    assert result.stdout == "outside\n"
    log = kernel.find("Output")
    assert log.state["outputs"] == [{"output_type": "stream", "name": "stdout", "text": "inside\n"}]
    captured = [s for s in kernel.streams if s.captured_by == log.comm_id]
    assert [(s.text, s.shown_in) for s in captured] == [("inside\n", "output")]

    kernel.find("Button", description="Log").click()
    kernel.wait_for(
        lambda: "from callback" in log.state["outputs"][-1]["text"],
        what="callback output in the Output widget",
    )
    # The captured outputs were synced back to the kernel, as the browser does.
    shown = run(kernel, "print([o['text'] for o in log.outputs])").stdout
    assert shown == "['inside\\nfrom callback\\n']\n"


def test_our_outputs_are_kept_as_their_page_draws_them_even_after_they_closed(
    kernel: BrowserLikeKernel,
) -> None:
    """The tracker keeps what the page's module holds for each of our output widgets, from
    their custom messages; a page that missed one asks for the whole output (as the module
    does), and what it last drew stays readable once the widget is closed."""
    result = run(
        kernel,
        """
        from atomic_jupyter.ui.output_widget import Content, OutputWidget
        out = OutputWidget("atomic-run")
        out.show(Content(["a"], {"a": '<p class="said">one</p>'}))
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
        out.show(Content(["a", "b"], {"a": '<p class="said">one</p>', "b": '<p class="said">two</p>'}))
        """,
    )
    kernel.wait_for(
        lambda: texts_of(kernel, output, "said") == ["one", "two"],
        what="the whole output, sent again",
    )
    kinds = [m.get("type") for c, m, _ in kernel.tracker.custom_messages[asked:] if c == output]
    assert kinds == ["patch", "snapshot"], kinds
    assert kernel.tracker.pages[output].missed == 1
    run(kernel, "out.finish()")
    kernel.wait_for(lambda: output not in kernel.models, what="the output to close")
    assert page_of(kernel, output) == '<p class="said">one</p><p class="said">two</p>'


def test_callback_exceptions_and_streams_are_recorded(kernel: BrowserLikeKernel) -> None:
    run(
        kernel,
        """
        def explode(button):
            print("about to fail")
            raise RuntimeError("boom in callback")

        bad = w.Button(description="Bad")
        bad.on_click(explode)
        display(bad)
        """,
    )
    before = len(kernel.errors)
    msg_id = kernel.find("Button", description="Bad").click()
    kernel.wait_idle(msg_id)
    new_errors = kernel.errors[before:]
    assert [(e["ename"], e["parent_msg_type"]) for e in new_errors] == [
        ("RuntimeError", "comm_msg")
    ]
    printed = [s for s in kernel.streams if s.parent_msg_id == msg_id]
    # Callback output without an Output widget lands in JupyterLab's log console.
    assert [(s.text, s.shown_in) for s in printed] == [("about to fail\n", "log")]
    assert new_errors[0]["shown_in"] == "log"
    assert "about to fail" in kernel.stdout_text


def test_failures_explain_themselves(kernel: BrowserLikeKernel) -> None:
    run(kernel, "display(w.Button(description='Lonely'))")
    with pytest.raises(AssertionError, match=r"expected exactly one DropdownModel") as info:
        kernel.find("Dropdown", description="nope")
    assert "ButtonModel description='Lonely'" in str(info.value)

    with pytest.raises(KernelTimeout, match="the impossible") as waited:
        kernel.wait_for(lambda: False, timeout=0.2, what="the impossible")
    assert "Lonely" in str(waited.value)

    assert kernel.widgets("Button", description=lambda d: d.startswith("Lone"))
