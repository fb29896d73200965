"""Constants and the scripted model's turns, shared by the tests (import from here, not conftest).

Import it as ``tests.harness.support``; its fixtures live in ``tests.harness.plugin``.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
import tempfile
from pathlib import Path

from atomic_jupyter.session.citations import CITED_HEADING
from atomic_jupyter.transport.agent_install import LINES, install_folder, pin_of

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
HARNESS = TESTS / "harness"
EXTENSIONS = TESTS / "extensions"
#: The fault-injecting stand-in agent, run as a script: ``STANDIN``.
STANDIN_AGENT = HARNESS / "standin_agent.py"
STANDIN = [sys.executable, str(STANDIN_AGENT)]
#: The checkout's agent home: ``make agent`` installs both pinned lines there.
AGENT_HOME = ROOT / ".agents"
#: The pinned agents, by line: ``current`` (the default) and ``0.73``.
PINNED_AGENTS = {
    line: install_folder(AGENT_HOME, pin_of(line)) / "node_modules" / ".bin" / pin_of(line).bin_name
    for line in LINES
}
#: The line the tests run (``ATOMIC_TEST_AGENT``: ``current`` unless set).
#: Where the sessions of this test run save their conversations (never the user's folder):
#: the kernels, notebooks and JupyterLab servers the tests start inherit it.
CONVERSATIONS = Path(
    os.environ.setdefault(
        "ATOMIC_JUPYTER_CONVERSATIONS", tempfile.mkdtemp(prefix="atomic-test-conversations-")
    )
)
AGENT_LINE = os.environ.get("ATOMIC_TEST_AGENT") or "current"
if AGENT_LINE not in PINNED_AGENTS:
    raise RuntimeError(
        f"ATOMIC_TEST_AGENT is one of {', '.join(PINNED_AGENTS)}, not {AGENT_LINE!r}"
    )
#: The pinned agent of the line under test.
PINNED_AGENT = PINNED_AGENTS[AGENT_LINE]
#: Whether the line under test is the current one (1.x).
CURRENT_LINE = AGENT_LINE == "current"
#: What ``steer``/``follow_up`` answer on the line under test.
QUEUED = {"disposition": "queued"} if CURRENT_LINE else None


def pinned_folder() -> Path:
    """The npm package folder of the pinned agent under test (the nearest folder above its
    command that holds a ``package.json``)."""
    start = PINNED_AGENT.resolve().parent
    for folder in (start, *start.parents):
        if (folder / "package.json").exists():
            return folder
    raise FileNotFoundError(
        f"no package.json above {PINNED_AGENT}: is the pinned agent installed? (make agent)"
    )


def pinned_package() -> dict:
    """The ``package.json`` of the pinned agent under test."""
    return json.loads((pinned_folder() / "package.json").read_text())


def agent_example(name: str) -> Path:
    """An example extension shipped inside the pinned agent under test
    (``examples/extensions/NAME``): the other end of the protocol, written by its authors."""
    return pinned_folder() / "examples" / "extensions" / name


def provider_error(status: int, message: str) -> str:
    """The ``errorMessage`` the agent gives for the scripted model's HTTP error: the current
    line quotes the error body, the 0.73 line its message."""
    if not CURRENT_LINE:
        return f"{status} {message}"
    body = {"message": message, "type": "scripted_error", "code": status}
    return f"{status}: " + json.dumps(body, separators=(",", ":"))


#: The agent settings of the tests: fast retries, and compaction that works on a short
#: conversation (the current line keeps 20,000 recent tokens by default and says "Nothing to
#: compact" below that).
SMALL_SESSION_SETTINGS = '{"retry": {"baseDelayMs": 20}, "compaction": {"keepRecentTokens": 20}}'

#: What the scripted model says for a long answer: several thousand small deltas.
LONG_ANSWER = "".join(
    f"Line {i}: the quick brown fox jumps over the lazy dog.\n" for i in range(600)
)


def long_markdown(size: int, seed: int = 3) -> str:
    """Varied Markdown of about ``size`` characters: lists that go on over many lines, code
    fences with blank lines inside, tables, quotes and paragraphs."""
    rng = random.Random(seed)
    parts: list[str] = []
    total, i = 0, 0
    while total < size:
        i += 1
        kind = rng.randrange(5)
        if kind == 0:
            part = "".join(f"- item {i}.{j} with `code`\n" for j in range(rng.randrange(1, 9)))
        elif kind == 1:
            part = f"```python\ndef f_{i}(x):\n\n    return x * {i}\n```\n"
        elif kind == 2:
            part = f"| a | b |\n|---|--:|\n| {i} | **{i * 2}** |\n"
        elif kind == 3:
            part = f"> quoted {i}\nlazy continuation\n"
        else:
            part = f"Paragraph {i} with *emphasis* and a [link](https://example.com/{i}).\n"
        parts.append(part + "\n")
        total += len(part) + 1
    return "".join(parts)


#: What the scripted model says for a long Markdown answer: about 80 KB of varied blocks.
LONG_MARKDOWN = long_markdown(80_000)
#: A megabyte of answer: Markdown lines with no blank line between them (one paragraph, which
#: no update settles), the hardest for the renders kept while it streams.
MEGABYTE_ANSWER = "".join(
    f"Line {n} of a megabyte answer, about nothing.\n" for n in range(24_000)
)[: 1 << 20]
MARKDOWN_PAYLOAD = (
    "# Title\n\nSome **bold** text and a list:\n\n- one\n- two\n\n"
    "<script>window.__pwned='script'</script>\n\n"
    "<img src=x onerror=\"window.__pwned='img'\">\n\n"
    "[click](javascript:window.__pwned='link')\n\n"
    "```python\nprint('highlighted')\n```\n"
)


#: Prompts that make the scripted model call one tool each (the tool cards' tests create the
#: files they touch in the agent's working directory first).
CARD_TOOL_CALLS = {
    "change the greeting": (
        "edit",
        {"path": "greeting.txt", "edits": [{"oldText": "hello world", "newText": "goodbye world"}]},
    ),
    "write a python script": (
        "write",
        {"path": "script.py", "content": "def main():\n    print('hi')\n\n\nmain()\n"},
    ),
    "look at the picture": ("read", {"path": "dot.png"}),
}


#: A prompt that makes the scripted model call a tool: ``kernel call NAME {"arg": 1}``.
KERNEL_CALL = re.compile(r"kernel call (\w+) (\{.*\})")


def conversation_script(request):
    """The scripted model's turns, chosen by keywords in the last user message."""
    from atomic_jupyter.addons.model_server import Fail, Text, Thinking, ToolCall, Turn, Usage
    from atomic_jupyter.addons.model_server.request import content_text

    prompt = request.last_user_text.lower()
    turn = request.turn_index
    if CITED_HEADING.lower() in prompt:  # a prompt citing kernel values (its text may say "fail")
        return Turn([Text("I read the values you cited.")], usage=Usage(40, 6))
    call = KERNEL_CALL.search(request.last_user_text)
    if call:  # "kernel call NAME {json}": call that tool, then say what it answered
        if turn == 0:
            return Turn([ToolCall(call.group(1), json.loads(call.group(2)))], usage=Usage(40, 8))
        result = request.tool_results[-1] if request.tool_results else {}
        said = content_text(result.get("content"))
        return Turn([Text(f"The tool answered: {said}")], usage=Usage(50, 8))
    if "long markdown" in prompt:
        return Turn([Text(LONG_MARKDOWN, chunk=40, delay=0.0005)], usage=Usage(100, 20000))
    if "long answer" in prompt:
        return Turn([Text(LONG_ANSWER, chunk=8)], usage=Usage(1200, 9000))
    if "think" in prompt:
        return Turn(
            [Thinking("Let me think step by step."), Text("Thought it through.")],
            usage=Usage(50, 10),
        )
    if "dangerous" in prompt:
        if turn == 0:
            return Turn(
                [ToolCall("bash", {"command": "echo dangerous-but-fine"})], usage=Usage(80, 10)
            )
        return Turn([Text("The command ran (or was blocked).")], usage=Usage(90, 8))
    if "print the secret" in prompt:
        if turn == 0:
            return Turn(
                [ToolCall("bash", {"command": 'printf "tool %s" "$AJ_SECRET_TOKEN"'})],
                usage=Usage(80, 10),
            )
        return Turn([Text("Printed it.")], usage=Usage(90, 8))
    if "coloured output" in prompt:
        if turn == 0:
            return Turn(
                [ToolCall("bash", {"command": r"printf '\033[1;31mFAILED\033[0m 1 test\n'"})],
                usage=Usage(80, 10),
            )
        return Turn([Text("One test failed.")], usage=Usage(90, 8))
    for keyword, call in CARD_TOOL_CALLS.items():  # one call of each built-in tool kind
        if keyword in prompt:
            if turn == 0:
                return Turn([ToolCall(*call)], usage=Usage(60, 10))
            return Turn([Text("Done with the file.")], usage=Usage(70, 5))
    if "wipe" in prompt:  # a command the agent's rpc-demo.ts example guards with a select
        if turn == 0:
            return Turn(
                [ToolCall("bash", {"command": "rm -rf ./no-such-scratch-folder"})],
                usage=Usage(80, 10),
            )
        return Turn([Text("The wipe was allowed or blocked.")], usage=Usage(90, 8))
    if "long tool" in prompt:
        if turn == 0:
            return Turn(
                [Text("Checking first."), ToolCall("bash", {"command": "seq 1 3"})],
                usage=Usage(100, 20),
            )
        return Turn([Text(LONG_ANSWER, chunk=8)], usage=Usage(300, 9000))
    if "tool" in prompt:
        if turn == 0:
            return Turn(
                [Text("Let me check."), ToolCall("bash", {"command": "echo hello-from-tool"})],
                usage=Usage(100, 20),
            )
        return Turn([Text("The tool said hello.")], usage=Usage(150, 12))
    if "fail" in prompt:
        return Fail(400, "scripted failure for the test")
    if "payload" in prompt:
        return Turn([Text(MARKDOWN_PAYLOAD)], usage=Usage(30, 60))
    if "slow" in prompt:
        return Turn([Text("slow " * 400, chunk=5, delay=0.01)], usage=Usage(20, 400))
    if "crawl" in prompt:  # a minute of streaming: long enough to be stopped, never to end
        return Turn([Text("crawl " * 1200, chunk=6, delay=0.05)], usage=Usage(20, 1200))
    if "megabyte answer" in prompt:  # in big pieces, over 4 s: long enough to be redrawn
        return Turn([Text(MEGABYTE_ANSWER, chunk=4096, delay=0.015)], usage=Usage(20, 250_000))
    return Turn([Text(f"You said: {request.last_user_text}")], usage=Usage(10, 5))


# --------------------------------------------------------------------------- helpers for tests

import threading  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from typing import Any  # noqa: E402


def wait_until(
    predicate: Callable[[], Any], what: str = "the condition", timeout: float = 30.0
) -> Any:
    """Poll ``predicate`` until it returns something truthy, and return that; fail naming
    ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        pause.wait(0.01)


def unique_name(prefix: str) -> str:
    """A session name no other test uses."""
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def stop_quietly(session: Any) -> None:
    """Stop a session in a finalizer, without hiding the test's own failure."""
    try:
        session.stop()
    except Exception:
        pass


def cancel_pending(session: Any) -> None:
    """Cancel every dialog still waiting, ignoring those settled meanwhile."""
    for dialog in session.pending_dialogs:
        try:
            dialog.cancel()
        except Exception:
            pass


def abort_unfinished(session: Any) -> None:
    """Abort the session's last run if it has not finished, and wait for it (quietly: a failed
    test must not leave a run going for the next one)."""
    if session.runs and not session.runs[-1].finished:
        try:
            session.abort()
            session.wait(timeout=10, quiet=True)
        except Exception:
            pass


@contextmanager
def scripted_agent_home(
    home: Path, script: Any, settings: str = SMALL_SESSION_SETTINGS, **server_options: Any
) -> Iterator[Any]:
    """A running scripted model that answers with ``script`` (``server_options`` go to
    :class:`~atomic_jupyter.addons.model_server.ScriptedModelServer`), and ``home`` made an
    agent home that selects it: its ``models.json``, and ``settings`` as its
    ``settings.json``. Yields the server."""
    from atomic_jupyter.addons.model_server import ScriptedModelServer, write_models_json

    with ScriptedModelServer(script, **server_options) as server:
        write_models_json(home, server)
        (home / "settings.json").write_text(settings)
        yield server


@contextmanager
def thread_switch_interval(seconds: float) -> Iterator[None]:
    """Have the interpreter switch threads every ``seconds`` inside (``sys.setswitchinterval``):
    a microsecond makes races show up, a long time lets no other thread run until this one
    blocks."""
    import sys

    before = sys.getswitchinterval()
    sys.setswitchinterval(seconds)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie does not count)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def group_alive(pgid: int) -> bool:
    """Whether process group ``pgid`` has a process left (a zombie counts)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def processes_where(field: str, value: int) -> list[int]:
    """Pids of live processes whose ppid (``field="ppid"``) or pgrp (``"pgrp"``) is ``value``."""
    index = {"ppid": 1, "pgrp": 2}[field]
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ..." - comm may hold spaces and parentheses.
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[index]) == value:
            found.append(int(entry))
    return found


def gone(pid: int, timeout: float = 10) -> bool:
    """Wait until a process has ended; return whether it did."""
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        threading.Event().wait(0.02)
    return not alive(pid)


#: The install line an example notebook's opening Markdown gives when it needs more than the
#: package: ``pip install atomic-jupyter pandas matplotlib`` in a code span.
INSTALL_LINE = re.compile(r"`pip install (atomic-jupyter(?: [A-Za-z0-9_.\-\[\]]+)*)`")


def install_line(path: Path) -> list[str]:
    """The packages a notebook's opening Markdown cell asks to install (``[]`` when it names
    none): ``["atomic-jupyter", "pandas", ...]``."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    opening = next((c.source for c in nb.cells if c.cell_type == "markdown"), "")
    found = INSTALL_LINE.search(opening)
    return found.group(1).split() if found else []
