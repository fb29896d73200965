"""The agent's code in the kernel, one layer at a time (no agent, no kernel process): the
runner against a real IPython shell, the built-in tools' calls on the session's side, the
history that ``Agent[n]`` and ``Err`` cite, and the cell ``%atomic_agent cells`` makes."""

from __future__ import annotations

import atexit
import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from atomic_jupyter.notebook import agent_code
from atomic_jupyter.notebook.code_runner import MAX_DISPLAYS, STREAM_HEAD, run_code
from atomic_jupyter.protocol.messages import EditorRequest, UIResponse
from atomic_jupyter.session import kernel_tools
from atomic_jupyter.session.kernel_tools import (
    CALL_PREFIX,
    BuiltinTool,
    CallInfo,
    KernelTools,
    ToolReply,
)


@pytest.fixture(autouse=True)
def running_shell(shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness's fresh shell (``shell``) is the one the tools find running."""
    monkeypatch.setattr(agent_code, "_shell_or_none", lambda: shell)


# --------------------------------------------------------------------------- the runner


def test_the_code_shares_the_notebooks_namespace_and_its_output_is_caught_in_order(shell):
    shell.user_ns["base"] = 40
    result = run_code(
        shell, "made = base + 2\nprint('one')\nimport sys\nsys.stderr.write('two')\nmade"
    )
    assert result.error is None and shell.user_ns["made"] == 42
    assert [(o.kind, o.name, o.text) for o in result.outputs] == [
        ("stream", "stdout", "one\n"),
        ("stream", "stderr", "two"),
        ("value", "", "42"),
    ]
    assert "Out" not in shell.user_ns or 42 not in shell.user_ns["Out"].values()
    assert sys.stdout is not None and "made" not in str(shell.user_ns.get("_", ""))


def test_a_syntax_error_runs_nothing_and_names_the_line(shell):
    result = run_code(shell, "ran = 1\ndef broken(:\n", filename="<Agent[1]>")
    assert "ran" not in shell.user_ns
    assert "SyntaxError" in result.error and "line 2" in result.error


def test_an_exception_is_the_error_with_only_the_codes_frames(shell):
    result = run_code(shell, "def f():\n    return 1 / 0\nf()", filename="<Agent[7]>")
    assert result.error.startswith("Traceback")
    assert 'File "<Agent[7]>", line 2, in f' in result.error
    assert "ZeroDivisionError: division by zero" in result.error
    assert "code_runner" not in result.error and "\x1b[" not in result.error


@pytest.mark.parametrize(
    ("code", "said"),
    [
        ("input('name?')", "stdin is not available to the agent"),
        ("import getpass\ngetpass.getpass()", "stdin is not available to the agent"),
        ("import sys\nsys.stdin.readline()", "stdin is not available to the agent"),
        ("import sys\nsys.exit(2)", "sys.exit(2)"),
        ("raise SystemExit", "kernel keeps running"),
        ("import sys\nsys.stdout.close()\nprint('after')", "closed sys.stdout"),
    ],
)
def test_stdin_exit_and_closing_stdout_are_errors_and_the_shell_goes_on(shell, code, said):
    import builtins

    before = (sys.stdout, sys.stderr, sys.stdin, builtins.input)
    result = run_code(shell, code)
    assert said in result.error
    assert (sys.stdout, sys.stderr, sys.stdin, builtins.input) == before
    assert run_code(shell, "1 + 1").error is None


def test_ipythons_exit_ends_the_code_not_the_kernel(shell):
    result = run_code(shell, "exit()")
    assert "called exit()" in result.error
    assert shell.exit_now is False and "ask_exit" not in vars(shell)


def test_an_ask_exit_set_on_the_shell_itself_is_there_again_after_the_code(shell):
    def own() -> None:
        """Someone's own exit hook."""

    shell.ask_exit = own
    assert "called exit()" in run_code(shell, "exit()").error
    assert vars(shell)["ask_exit"] is own


def test_a_flood_of_output_keeps_its_start_and_its_end(shell):
    result = run_code(shell, "for i in range(200_000):\n    print(i)")
    kinds = [o.kind for o in result.outputs]
    assert kinds == ["stream", "note", "stream"]
    head, note, tail = result.outputs
    assert len(head.text) == STREAM_HEAD and head.text.startswith("0\n1\n")
    assert "characters of output left out" in note.text
    assert tail.text.endswith("199999\n") and len(tail.text) <= 8_100


@pytest.fixture
def running_singleton(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    """IPython's singleton shell, which ``display()`` publishes through; cleared afterwards,
    else ``get_ipython()`` would find it in every later test of this process."""
    assert not InteractiveShell.initialized(), "a test left IPython's singleton shell behind"
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    config = Config()
    config.HistoryManager.enabled = False
    made = InteractiveShell.instance(config=config)
    yield made
    atexit.unregister(made.atexit_operations)
    made.atexit_operations()
    InteractiveShell.clear_instance()


def test_displays_are_caught_updated_by_id_and_bounded(running_singleton: InteractiveShell):
    shell = running_singleton
    code = (
        "from IPython.display import display, HTML\n"
        "handle = display('first', display_id=True)\n"
        "handle.update('updated')\n"
        "display(HTML('<b>bold</b>'))\n"
        f"for i in range({MAX_DISPLAYS + 5}):\n    display(i)\n"
    )
    result = run_code(shell, code)
    texts = [o.text for o in result.outputs if o.kind == "display"]
    assert texts[:2] == ["'updated'", "<IPython.core.display.HTML object>"]
    assert [o.html for o in result.outputs if o.kind == "display"][1] == "<b>bold</b>"
    assert len(texts) == MAX_DISPLAYS
    assert result.outputs[-1].kind == "note" and "7 more displays" in result.outputs[-1].text


def test_new_figures_are_drawn_once_scaled_and_closed(shell):
    pytest.importorskip("matplotlib")
    run_code(shell, "import matplotlib\nmatplotlib.use('agg')")
    result = run_code(
        shell,
        "import matplotlib.pyplot as plt\nkept = plt.figure()\n"
        "fig = plt.figure(figsize=(40, 20))\nplt.plot([1, 2])\nfig",
    )
    images = [o.image for o in result.outputs if o.image is not None]
    assert len(images) == 2  # the value's figure is not drawn twice
    import base64
    import io

    from PIL import Image

    sizes = [Image.open(io.BytesIO(base64.b64decode(data))).size for _mime, data in images]
    assert all(max(size) <= 1024 for size in sizes)
    assert run_code(shell, "print(plt.get_fignums())").outputs[0].text.strip() == "[]"


# --------------------------------------------------------------------------- the tool


def test_the_python_tool_answers_with_text_images_and_details_and_keeps_the_call(shell):
    pytest.importorskip("matplotlib")
    run_code(shell, "import matplotlib\nmatplotlib.use('agg')")
    info = CallInfo("call-1", "default", 3, "plot it")
    reply = agent_code.run_python(
        {"code": "import matplotlib.pyplot as plt\nprint('hi')\nplt.plot([1, 2])\n41 + 1"}, info
    )
    assert reply.error is None
    assert reply.text.startswith("Agent[1] ran in ") and "[stdout]\nhi" in reply.text
    assert "image 1 attached" in reply.text and "int: 42" in reply.text
    assert [mime for mime, _ in reply.images] == ["image/png"]
    kinds = [o["type"] for o in reply.details["outputs"]]
    assert kinds == ["stream", "display", "value"] and reply.details["agent_cell"] == 1
    assert reply.details["outputs"][1]["image"] == 0
    (kept,) = agent_code.history_of(shell).calls("default")
    assert (kept.number, kept.run_number, kept.failed) == (1, 3, False)


def test_a_failing_call_is_the_tools_error_with_what_it_showed_first(shell):
    reply = agent_code.run_python(
        {"code": "print('before')\nraise ValueError('bad')"}, CallInfo("c", "s")
    )
    assert reply.details is None and reply.images == ()
    assert "failed" in reply.error and "before" in reply.error and "ValueError: bad" in reply.error
    assert agent_code.run_python({}, CallInfo("c", "s")).error.startswith("python needs")


def test_agent_n_is_cited_and_err_is_whichever_failed_last(shell):
    agent_code.run_python({"code": "agent_fails()"}, CallInfo("c", "default", 1))
    assert "agent_fails()" in agent_code.cite_with_agent("Agent[1]", shell)
    assert "Agent[1]" in agent_code.cite_with_agent("Err", shell)
    shell.run_cell("person_fails = 1 / 0", store_history=True)
    assert "person_fails" in agent_code.cite_with_agent("Err", shell)
    agent_code.run_python({"code": "again()"}, CallInfo("c", "default", 2))
    assert "again()" in agent_code.cite_with_agent("Err", shell)
    with pytest.raises(Exception, match="no code Agent\\[9\\]"):
        agent_code.cite_with_agent("Agent[9]", shell)


def test_cells_puts_one_runs_code_below_each_call_headed_and_says_when_there_is_none(shell, capsys):
    assert agent_code.insert_cells(shell, "default") is None
    assert "has run no code" in capsys.readouterr().out
    for run, code in ((1, "a = 1"), (2, "b = a + 1"), (2, "c = b * 2")):
        agent_code.run_python({"code": code}, CallInfo("c", "default", run))
    text = agent_code.insert_cells(shell, "default")
    assert (
        text
        == "# Agent[2]: run 2, call 1 of 2\nb = a + 1\n\n# Agent[3]: run 2, call 2 of 2\nc = b * 2"
    )
    assert shell.rl_next_input == text  # a kernel's shell sends it as set_next_input
    assert agent_code.insert_cells(shell, "default", 1).startswith("# Agent[1]: run 1")
    assert agent_code.insert_cells(shell, "default", 5) is None
    assert "Runs that did: 1, 2" in capsys.readouterr().out


@pytest.mark.parametrize(
    "allow_stdin, inserted", [(True, True), (False, False)], ids=["a person's", "nbconvert's"]
)
def test_cells_says_where_the_code_is_for_the_client_that_ran_the_cell(
    shell, capsys, monkeypatch, allow_stdin, inserted
):
    """JupyterLab sends its cells with stdin allowed and inserts the cell; nbconvert and
    papermill allow no stdin and insert nothing, so the code is printed where it can be read."""
    request = {"header": {"msg_type": "execute_request"}, "content": {"allow_stdin": allow_stdin}}
    monkeypatch.setattr(shell, "parent_header", request, raising=False)
    agent_code.run_python({"code": "a = 1"}, CallInfo("c", "default", 1))
    text = agent_code.insert_cells(shell, "default")
    said = capsys.readouterr().out
    assert ("is in a new cell below" in said) is inserted, said
    assert ("this run inserts no cells" in said and text in said) is not inserted, said


# --------------------------------------------------------------------------- the session's side


class Channel:
    secret: str | None = "s3cret"

    def __init__(self) -> None:
        self.published: list[list[dict[str, Any]]] = []

    def publish(self, specs: list[dict[str, Any]]) -> None:
        self.published.append(specs)


def fake_builtins(monkeypatch, ran: list) -> None:
    def run(arguments: dict[str, Any], info: CallInfo) -> ToolReply:
        ran.append((arguments, info))
        return ToolReply(text="done", images=(("image/png", "AAAA"),), details={"outputs": []})

    tools = [
        BuiltinTool("python", "runs code", {"type": "object"}, run, runs_code=True,
                    approval_title="Run it?", approval_message="It runs."),
        BuiltinTool("notebook_variables", "lists", {"type": "object"}, run),
    ]  # fmt: skip
    monkeypatch.setattr(kernel_tools, "_builtins", tools)


def made(mode: str, accepting: bool = True, progress: list | None = None):
    channel, answers, queued = Channel(), [], []
    tools = KernelTools(
        channel=lambda: channel,
        answer=answers.append,
        run_on_main=lambda: queued.append,
        wake=lambda: None,
        diagnose=lambda _text: None,
        kernel_code=mode,
        call_info=lambda call_id: CallInfo(call_id, "default", 4, "the prompt"),
        accepting=lambda: accepting,
        progress=lambda call_id, text: (progress if progress is not None else []).append(text),
    )
    tools.offer_builtins()
    return tools, channel, answers, queued


def request(tool: str, args: dict[str, Any]) -> EditorRequest:
    prefill = json.dumps({"tool": tool, "id": "call_9", "args": args})
    return EditorRequest("r1", title=CALL_PREFIX + "s3cret", prefill=prefill)


def answer_of(answers: list[UIResponse]) -> dict[str, Any]:
    (only,) = answers
    return json.loads(only.to_dict()["value"])


@pytest.mark.parametrize(
    ("mode", "offered", "asks"),
    [
        ("ask", ["python", "notebook_variables"], True),
        ("allow", ["python", "notebook_variables"], False),
        ("off", ["notebook_variables"], None),
    ],
)
def test_kernel_code_decides_whether_python_is_offered_and_asked_for(
    monkeypatch, mode, offered, asks
):
    fake_builtins(monkeypatch, [])
    tools, channel, _answers, _queued = made(mode)
    specs = channel.published[-1]
    assert [spec["name"] for spec in specs] == offered
    if asks is not None:
        assert specs[0]["approval"] is asks and specs[0]["approvalTitle"] == "Run it?"
    assert specs[-1]["approval"] is False  # the read-only tools never ask


def test_python_off_refuses_a_call_and_runs_nothing(monkeypatch):
    ran: list = []
    fake_builtins(monkeypatch, ran)
    tools, _channel, answers, queued = made("off")
    assert tools.claims(request("python", {"code": "1"}))
    assert queued == [] and ran == [] and answer_of(answers)["ok"] is False


def test_a_builtin_call_runs_on_the_main_thread_with_where_it_came_from(monkeypatch):
    ran: list = []
    fake_builtins(monkeypatch, ran)
    progress: list = []
    tools, _channel, answers, queued = made("ask", progress=progress)
    tools.claims(request("python", {"code": "1"}))
    assert ran == [] and len(queued) == 1  # not on the reader thread
    queued[0]()
    ((arguments, info),) = ran
    assert arguments == {"code": "1"} and (info.call_id, info.run_number) == ("call_9", 4)
    assert progress == ["running in the kernel…"]
    assert answer_of(answers) == {
        "ok": True,
        "text": "done",
        "images": [{"mimeType": "image/png", "data": "AAAA"}],
        "details": {"outputs": []},
    }


def test_a_call_while_the_session_stops_is_refused_and_runs_nothing(monkeypatch):
    ran: list = []
    fake_builtins(monkeypatch, ran)
    _tools, _channel, answers, queued = made("allow", accepting=False)
    _tools.claims(request("python", {"code": "1"}))
    assert queued == [] and ran == []
    assert "stopping" in answer_of(answers)["error"]


def test_a_function_cannot_be_exposed_under_a_builtins_name(monkeypatch):
    fake_builtins(monkeypatch, [])
    tools, *_ = made("ask")

    def python(code: str) -> str:
        """Shadows the built-in."""
        return code

    with pytest.raises(ValueError, match="built-in"):
        tools.expose(python)
