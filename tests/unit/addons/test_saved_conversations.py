"""Saved conversations, one layer at a time: where a notebook's conversations are kept
(``transport/conversation_store.py``), the addon that saves and continues them
(``addons/saved_conversations/``), the listing with its Resume buttons, and one kernel at a time
on each."""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from atomic_jupyter.addons.saved_conversations.runtime import ConversationsAddon
from atomic_jupyter.errors import AgentStartError, AtomicAgentError
from atomic_jupyter.protocol.messages import AgentEvent
from atomic_jupyter.protocol.session_file import PROMPT_CHARS, forked_header, read_session
from atomic_jupyter.session.earlier import earlier_runs
from atomic_jupyter.session.observers import Listeners
from atomic_jupyter.session.transcript import AssistantBlock, ToolBlock
from atomic_jupyter.transport.conversation_store import (
    ConversationStore,
    conversations_root,
    describe_time,
    notebook_of,
)
from atomic_jupyter.transport.launch import LaunchSpec
from atomic_jupyter.ui.record import EARLIER_SHOWN, Record, earlier_record

STARTED = "2026-12-02T01:18:37.556Z"
SYSTEM = {"role": "system", "content": "", "sections": {}}
TOOL_TURN = [
    json.loads(line)
    for line in """\
{"role": "user", "content": [{"type": "text", "text": "use a tool please"}]}
{"role": "assistant", "content": [{"type": "text", "text": "Let me check."}, {"type": "toolCall", \
"id": "call_0_0", "name": "bash", "arguments": {"command": "echo hi"}}], "stopReason": "toolUse"}
{"role": "toolResult", "toolCallId": "call_0_0", "toolName": "bash", \
"content": [{"type": "text", "text": "hi\\n"}], "isError": false}
{"role": "assistant", "content": [{"type": "text", "text": "ok done"}], "stopReason": "stop"}
""".splitlines()
]


def header(session_id):
    return {"type": "session", "version": 3, "id": session_id, "timestamp": STARTED, "cwd": "/x"}


def session_text(session_id="01a23455-07f3-74a2", messages=TOOL_TURN, extra=()):
    entries = [header(session_id)]
    for n, msg in enumerate(messages):
        entries.append({"type": "message", "id": f"e{n:07d}", "message": msg})
        entries[-1]["timestamp"] = f"2026-12-02T02:00:{n:02d}.000Z"
    return "".join(json.dumps(e) + "\n" for e in [*entries, *extra])


# --------------------------------------------------------------------------- session files


def test_read_session_counts_messages_and_reads_prompt_model_name_thinking():
    extra = [
        {"type": "model_change", "provider": "old", "modelId": "one"},
        {"type": "model_change", "provider": "scripted", "modelId": "scripted"},
        {"type": "thinking_level_change", "thinkingLevel": "low"},
        {"type": "session_info", "name": "nm1", "timestamp": "2026-12-02T03:00:00.000Z"},
    ]
    saved = read_session(session_text("abc", [SYSTEM, *TOOL_TURN], extra))
    assert (saved.id, saved.started, saved.updated) == ("abc", STARTED, "2026-12-02T03:00:00.000Z")
    assert saved.messages == 4  # the system message is not counted
    assert saved.first_prompt == "use a tool please"
    assert (saved.model, saved.name, saved.thinking) == ("scripted/scripted", "nm1", "low")
    assert saved.problem is None and saved.torn is False
    long = {"role": "user", "content": "  " + "x" * (PROMPT_CHARS + 50)}
    assert read_session(session_text(messages=[long])).first_prompt == "x" * PROMPT_CHARS
    only = read_session(json.dumps(header("h1")) + "\n")
    assert (only.id, only.messages, only.updated, only.problem) == ("h1", 0, STARTED, None)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "it is empty"),
        ("\n  \n", "it is empty"),
        ("hello, not json\n", "its first line is not a session header"),
        ('{"type": "message", "id": "x"}\n', "its first line is not a session header"),
        ('{"type": "session", "id": ""}\n', "its first line is not a session header"),
        ("[1, 2]\n" + session_text(), "its first line is not a session header"),
    ],
)
def test_read_session_reports_files_that_cannot_be_continued(text, problem):
    saved = read_session(text)
    assert saved.problem == problem
    assert (saved.id, saved.messages, saved.first_prompt) == ("", 0, "")


def test_read_session_skips_a_corrupt_middle_line_and_marks_a_torn_last_one():
    lines = session_text().split("\n")
    lines[2:2] = ['{"type": "message", "message": {"role": "user", "cont', "[1, 2, 3]", "null"]
    saved = read_session("\n".join(lines))
    assert (saved.messages, saved.first_prompt) == (4, "use a tool please")
    assert saved.problem is None and saved.torn is False
    torn = read_session(session_text() + '{"type": "message", "message": {"role": "user", "con')
    assert torn.torn is True and torn.problem is None and torn.messages == 4


def test_forked_header_keeps_cwd_and_names_the_parent():
    line = forked_header(session_text("old-id"), "new-id", "2027-01-01T00:00:00.000Z", "/p/a.jsonl")
    assert "\n" not in line
    assert json.loads(line) == {
        **header("new-id"),
        "timestamp": "2027-01-01T00:00:00.000Z",
        "parentSession": "/p/a.jsonl",
    }
    with pytest.raises(ValueError):
        forked_header("garbage\n" + session_text(), "n", "t", "p")


# --------------------------------------------------------------------------- the store


@pytest.fixture
def store(tmp_path):
    return ConversationStore(tmp_path / "conversations", "/home/me/work/analysis.ipynb")


def saved_file(store, text, mtime, name="default", stem=None):
    path = store.new_path(name)
    if stem is not None:
        path = path.with_name(f"{stem}.jsonl")
    path.write_text(text, encoding="utf-8")
    os.utime(path, (mtime, mtime))
    return path


def test_new_path_makes_a_private_session_folder_and_names_the_notebook(store):
    first, second = store.new_path("my session"), store.new_path("my session")
    assert first != second and first.suffix == ".jsonl" and not first.exists()
    assert first.parent == second.parent == store.session_folder("my session")
    assert first.parent.parent == store.folder and store.folder.parent == store.root
    assert stat.S_IMODE(first.parent.stat().st_mode) == 0o700
    assert (store.folder / "notebook.txt").read_text() == "/home/me/work/analysis.ipynb\n"
    assert store.folder.name.startswith("analysis-")
    assert ConversationStore(store.root, store.notebook).folder == store.folder
    assert ConversationStore(store.root, "/other/analysis.ipynb").folder != store.folder
    for name in ("../../escape", "/etc", "..", ""):
        assert store.session_folder(name).parent == store.folder


def test_conversations_are_listed_newest_first_and_latest_skips_problems(store):
    assert store.latest("default") is None
    old = saved_file(store, session_text("a1"), 1_000_000)
    new = saved_file(store, session_text("b2"), 3_000_000)
    mid = saved_file(store, session_text("c3"), 2_000_000)
    other = saved_file(store, session_text("d4"), 2_500_000, name="other")
    (store.session_folder("default") / "notes.txt").write_text("not a conversation")
    assert [c.path for c in store.conversations("default")] == [new, mid, old]
    assert [c.path for c in store.conversations()] == [new, other, mid, old]
    assert [(c.id, c.session) for c in store.conversations("other")] == [("d4", "other")]
    assert store.conversations("nothing-saved") == []
    assert store.latest("default").path == new
    saved_file(store, "garbage\n", 5_000_000)
    saved_file(store, "", 4_000_000)
    assert store.conversations("default")[0].saved.problem is not None
    assert store.latest("default").path == new


def test_find_by_id_prefix_file_name_and_path(store):
    first = saved_file(store, session_text("01aa-1111"), 1_000_000)
    second = saved_file(store, session_text("01bb-2222"), 2_000_000, name="other")
    broken = saved_file(store, "garbage\n", 3_000_000, stem="broken-one")
    assert store.find("01aa").path == first
    assert store.find("01bb-2222").path == second
    assert store.find("01bb", name="other").path == second
    assert store.find(first.name).path == first
    assert store.find(str(second)).path == second
    assert store.find("broken-one").path == broken  # no header: known by its file name
    saved_file(store, session_text("01ab-3333"), 4_000_000)
    with pytest.raises(KeyError) as ambiguous:
        store.find("01a")
    assert "matches 2 conversations; give more of the id" in ambiguous.value.args[0]
    with pytest.raises(KeyError) as unknown:
        store.find("zz")
    assert "no saved conversation 'zz'" in unknown.value.args[0]
    with pytest.raises(KeyError):
        store.find("01aa", name="other")


HOLD = """\
import sys; from pathlib import Path
from atomic_jupyter.transport.file_locks import acquire_lock
print("held" if acquire_lock(Path(sys.argv[1])) is not None else "refused", flush=True)
sys.stdin.readline()
"""


@contextlib.contextmanager
def held_elsewhere(conversation: Path):
    """Another process holding ``conversation``'s lock until the block ends."""
    lock_file = str(conversation.with_suffix(".lock"))
    with subprocess.Popen(
        [sys.executable, "-c", HOLD, lock_file],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            assert proc.stdout.readline().strip() == "held"
            yield proc
        finally:
            proc.stdin.close()
            assert proc.wait(timeout=60) == 0


def test_a_second_lock_in_the_same_process_is_refused_until_released_then_cleaned_up(store):
    path = saved_file(store, session_text(), 1_000_000)
    lock = store.lock(path)
    assert lock is not None and lock.held
    assert store.lock(path) is None
    assert store.holder(path) == "in another session of this kernel"
    lock.release()
    lock.release()  # a second release does nothing
    assert not lock.held and store.holder(path) == "in another kernel"
    store.lock(path).release()
    assert path.with_suffix(".lock").exists()  # a written conversation keeps its lock file
    unwritten = store.new_path("other")
    store.lock(unwritten).release()  # its lock file goes with it
    assert [p.name for p in unwritten.parent.iterdir()] == ["session.txt"]  # no lock file


def test_a_lock_held_by_another_process_is_refused_and_names_it(store):
    path = saved_file(store, session_text(), 1_000_000)
    with held_elsewhere(path) as proc:
        assert store.lock(path) is None
        assert store.holder(path) == f"in another kernel (process {proc.pid})"
    store.lock(path).release()


def test_fork_gives_a_new_header_drops_a_torn_line_and_keeps_the_original(store):
    text = session_text("orig-id")
    original = saved_file(store, text, 1_000_000)
    copy = store.fork(store.find("orig-id"), "other")
    assert copy.parent == store.session_folder("other")
    assert original.read_bytes() == text.encode()
    first, rest = copy.read_text().split("\n", 1)
    assert rest == text.split("\n", 1)[1]
    forked = json.loads(first)
    assert forked["id"] not in ("orig-id", "") and forked["cwd"] == "/x"
    assert forked["parentSession"] == str(original)
    assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    text = session_text("torn-id") + '{"type": "message", "mess'
    original = saved_file(store, text, 1_000_000)
    copied = store.fork(store.find("torn-id"), "default").read_text()
    assert original.read_bytes() == text.encode()
    assert copied.split("\n", 1)[1] == session_text("torn-id").split("\n", 1)[1]
    assert read_session(copied).torn is False


def test_notebook_of_prefers_the_server_s_notebook_path_and_describe_time(tmp_path):
    assert notebook_of({"JPY_SESSION_NAME": "/srv/nb.ipynb"}, str(tmp_path)) == "/srv/nb.ipynb"
    assert notebook_of({"JPY_SESSION_NAME": "  "}, str(tmp_path)) == str(tmp_path)
    assert notebook_of({}, str(tmp_path)) == str(tmp_path)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", describe_time(STARTED))
    assert describe_time("yesterday") == "yesterday"


def test_conversations_root_precedence(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "platform", "linux")
    environ = {"ATOMIC_JUPYTER_CONVERSATIONS": str(tmp_path / "env"), "XDG_DATA_HOME": "/xdg"}
    assert conversations_root(str(tmp_path / "cfg"), environ) == tmp_path / "cfg"
    assert conversations_root(None, environ) == tmp_path / "env"
    assert conversations_root("", environ) == tmp_path / "env"
    environ.pop("ATOMIC_JUPYTER_CONVERSATIONS")
    assert conversations_root(None, environ) == Path("/xdg/atomic-jupyter/conversations")
    assert conversations_root("~/c", {}) == Path.home() / "c"


# --------------------------------------------------------------------------- earlier turns


def test_earlier_runs_turn_messages_into_finished_runs():
    junk = ["garbage", 5, None, [], {"role": "weird"}, {"content": "no role"}]
    second = [{"role": "user", "content": "and now?"}, {"role": "assistant", "content": 7}]
    runs = earlier_runs([SYSTEM, *TOOL_TURN[:3], *junk, TOOL_TURN[3], *second])
    assert [r.message for r in runs] == ["use a tool please", "and now?"]
    assert all(r.finished and r.answered and r.shown for r in runs)
    blocks = runs[0].transcript.snapshot()
    assert [type(b) for b in blocks] == [AssistantBlock, ToolBlock, AssistantBlock]
    tool = blocks[1]
    assert (tool.name, tool.args, tool.result) == ("bash", {"command": "echo hi"}, "hi\n")
    assert tool.done and not tool.is_error
    assert runs[0].text == "Let me check.\n\nok done"
    assert runs[1].text == ""


@pytest.mark.parametrize("messages", [None, "text", 5, {"messages": []}, [], [TOOL_TURN[1]]])
def test_earlier_runs_of_anything_else_are_none(messages):
    assert earlier_runs(messages) == []


def test_earlier_record_escapes_hostile_text():
    hostile = [
        {"role": "user", "content": "<script>alert(1)</script>"},
        {"role": "assistant", "content": [{"type": "text", "text": "<img src=x onerror=1>"}]},
    ]
    note = "<b onmouseover=alert(3)>note</b>"
    record = earlier_record("continued: 2 messages since <now>", [note], earlier_runs(hostile))
    lowered = record.html.lower()
    assert "<script" not in lowered and "<img" not in lowered and "<b " not in lowered
    assert "&lt;script&gt;" in record.html and "<now>" not in record.html
    assert "<script>alert(1)</script>" in record.plain and note in record.plain
    assert re.search(r"<details[^>]*><summary>Earlier in this conversation \(1 turn\)", record.html)
    assert record.html.index("<details") < record.html.index("&lt;script&gt;")


def test_earlier_record_shows_only_the_newest_turns():
    messages = [{"role": "user", "content": f"ask-{i:02d}-end"} for i in range(EARLIER_SHOWN + 5)]
    record = earlier_record("", [], earlier_runs(messages))
    assert f"Earlier in this conversation ({EARLIER_SHOWN + 5} turns)" in record.html
    assert "(5 older turns not shown)" in record.html
    shown = [i for i in range(EARLIER_SHOWN + 5) if f"ask-{i:02d}-end" in record.html]
    assert shown == list(range(5, EARLIER_SHOWN + 5))
    assert "ask-04-end" not in record.plain and "ask-05-end" in record.plain
    few = earlier_record("", [], earlier_runs(messages[:3]))
    assert "older turns" not in few.html and "(3 turns)" in few.html
    assert earlier_record("", ["", ""], []) == earlier_record("", [], []) == Record("", "")
    only = earlier_record("continued: 0 messages since x", [], [])
    assert "<details" not in only.html and only.plain == "continued: 0 messages since x"


# --------------------------------------------------------------------------- the addon


@pytest.fixture
def make_addon(tmp_path, monkeypatch):
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "nb.ipynb"))
    asked = []

    def make(argv=("pi",), answer=None, **spec):
        def request(command, timeout=None):
            asked.append(command)
            if isinstance(answer, Exception):
                raise answer
            return SimpleNamespace(data=answer)

        config = SimpleNamespace(conversations_dir=str(tmp_path / "saved"))
        resolved = SimpleNamespace(argv=tuple(argv))
        session = SimpleNamespace(spec=LaunchSpec(**spec), resolved=resolved, name="default")
        session.config, session.request = config, request
        session.addon = lambda name: None  # no other addons (prototypes)
        session.event_listeners = Listeners()
        session.on_event = session.event_listeners.add
        return ConversationsAddon(session)

    make.asked = asked
    make.store = ConversationStore(tmp_path / "saved", str(tmp_path / "nb.ipynb"))
    return make


def test_without_a_notebook_named_the_notes_speak_of_the_working_folder(
    make_addon, monkeypatch, tmp_path
):
    """A kernel no Jupyter server started (nbclient, nbconvert) knows no notebook file: its
    conversations are the working folder's, and the notes say so, never "This notebook"."""
    monkeypatch.delenv("JPY_SESSION_NAME")
    monkeypatch.chdir(tmp_path)
    addon = make_addon(resume="latest")
    addon.launch()
    assert addon.notes == [
        "No notebook file is known (no Jupyter server named one), so conversations are kept for "
        "the kernel's working folder, which has no saved conversation of session 'default' yet: "
        "a new one starts."
    ]
    addon.close()
    saved_file(ConversationStore(tmp_path / "saved", str(tmp_path)), session_text("s1"), 1_000_000)
    addon = make_addon()
    addon.launch()
    (note,) = addon.notes
    assert note.startswith(
        "No notebook file is known (no Jupyter server named one), so conversations are kept for "
        "the kernel's working folder, which has 1 saved conversation of session 'default': "
    )
    addon.close()


def launched_path(additions):
    assert additions.args[0] == "--session" and len(additions.args) == 2
    return Path(additions.args[1])


def test_launch_saves_in_a_new_file_a_restart_keeps_it_and_close_lets_go(make_addon):
    addon = make_addon()
    path = launched_path(addon.launch())
    assert path.parent == make_addon.store.session_folder("default")
    assert addon.path == path and addon.resumed is None and addon.notes == []
    assert make_addon.store.lock(path) is None
    assert launched_path(addon.launch()) == path  # a restart of the agent
    addon.close()
    addon.close()  # twice: nothing more
    make_addon.store.lock(path).release()  # closed: another can take it


def test_the_file_the_agent_writes_is_made_private_after_each_run_until_close(make_addon):
    addon = make_addon()
    path = launched_path(addon.launch())
    listeners = addon._session.event_listeners
    old = os.umask(0o022)
    try:
        path.write_text(session_text("s1"))  # as the agent writes it: 0644 under umask 022
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    listeners.emit(AgentEvent("message_end", {}))
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # not at every event
    listeners.emit(AgentEvent("agent_end", {}))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    addon.close()
    assert len(listeners) == 0  # closed: it no longer follows the agent


def test_launch_notes_saved_conversations_or_none_to_resume(make_addon):
    addon = make_addon(resume="latest")
    assert not launched_path(addon.launch()).exists() and addon.resumed is None
    assert addon.notes == [
        "This notebook has no saved conversation of session 'default' yet: a new one starts."
    ]
    addon.close()
    saved_file(make_addon.store, session_text("s1"), 1_000_000)
    addon = make_addon()
    assert not launched_path(addon.launch()).exists()
    assert len(addon.notes) == 1 and "1 saved conversation of session 'default'" in addon.notes[0]
    # A note is shown as plain text: no Markdown backquotes to show as they are.
    assert "`" not in addon.notes[0] and "%atomic_agent conversations lists" in addon.notes[0]
    addon.close()


def test_resume_latest_continues_the_newest_file_and_load_earlier_shows_it(make_addon):
    saved_file(make_addon.store, session_text("old"), 1_000_000)
    newest = saved_file(make_addon.store, session_text("new"), 2_000_000)
    addon = make_addon(answer={"messages": [SYSTEM, *TOOL_TURN]}, resume="latest")
    assert launched_path(addon.launch()) == newest
    assert addon.resumed.id == "new" and addon.notes == []
    addon.load_earlier()
    assert make_addon.asked == [{"type": "get_messages"}]
    assert addon.continued == f"continued: 4 messages since {describe_time(STARTED)}"
    assert [run.message for run in addon.earlier] == ["use a tool please"]
    addon.close()


def test_load_earlier_does_nothing_for_a_new_conversation_and_notes_failures(make_addon):
    fresh = make_addon(answer={"messages": TOOL_TURN})
    fresh.launch()
    fresh.load_earlier()
    assert make_addon.asked == [] and fresh.continued == "" and fresh.earlier == []
    fresh.close()
    saved_file(make_addon.store, session_text("s1"), 1_000_000)
    failing = make_addon(answer=AtomicAgentError("the agent exited"), resume="latest")
    failing.launch()
    failing.load_earlier()
    assert failing.notes == ["The earlier messages could not be read: the agent exited"]
    assert failing.continued == "" and failing.earlier == []
    failing.close()


def test_resume_of_a_conversation_held_elsewhere_continues_in_a_copy(make_addon):
    text = session_text("busy-id")
    original = saved_file(make_addon.store, text, 1_000_000)
    addon = make_addon(resume="busy")
    with held_elsewhere(original) as proc:
        copy = launched_path(addon.launch())
    assert copy != original and original.read_bytes() == text.encode()
    assert json.loads(copy.read_text().split("\n", 1)[0])["parentSession"] == str(original)
    assert (
        len(addon.notes) == 1 and f"open in another kernel (process {proc.pid})" in addon.notes[0]
    )
    assert "copy" in addon.notes[0] and addon.resumed.path == original
    addon.close()


def test_resume_of_a_torn_conversation_continues_in_a_copy(make_addon):
    text = session_text("torn-id") + '{"type": "mess'
    original = saved_file(make_addon.store, text, 1_000_000)
    addon = make_addon(resume="latest")
    copy = launched_path(addon.launch())
    assert copy != original and original.read_bytes() == text.encode()
    assert read_session(copy.read_text()).torn is False
    assert addon.notes == ["Its last line was cut short: it is continued in a copy."]
    assert make_addon.store.lock(copy) is None  # the copy is held, the original is not
    make_addon.store.lock(original).release()
    addon.close()


@pytest.mark.parametrize(
    ("key", "error"),
    [
        ("unknown", "no saved conversation 'unknown'"),
        ("junk", "junk.jsonl cannot be continued: its first line .*left as it is"),
        ("junk.jsonl", "junk.jsonl cannot be continued"),
        ("path", "junk.jsonl cannot be continued"),
    ],
)
def test_resume_of_an_unknown_or_garbage_conversation_raises_and_changes_nothing(
    make_addon, key, error
):
    garbage = b"this is not\x00 a session\n{"
    path = saved_file(make_addon.store, "", 1_000_000, stem="junk")
    path.write_bytes(garbage)
    before = sorted(p.name for p in path.parent.iterdir())
    addon = make_addon(resume=str(path) if key == "path" else key)
    with pytest.raises(AgentStartError, match=error):
        addon.launch()
    assert path.read_bytes() == garbage and addon.path is None
    assert sorted(p.name for p in path.parent.iterdir()) == before


@pytest.mark.parametrize(
    ("argv", "extra", "save", "args"),
    [
        (("pi",), (), False, ["--no-session"]),
        (("pi", "--no-session"), (), True, []),
        (("pi",), ("--session=/x.jsonl",), True, []),
        (("pi",), ("--continue",), True, []),
        (("pi",), ("--fork", "abc"), False, []),
        (("pi",), ("-r",), True, []),
    ],
)
def test_no_save_or_a_command_line_that_says_how_sessions_are_kept_saves_nothing(
    make_addon, tmp_path, argv, extra, save, args
):
    addon = make_addon(argv=argv, extra_args=extra, save=save)
    additions = addon.launch()
    assert list(additions.args) == args and dict(additions.env) == {}
    assert addon.path is None and not (tmp_path / "saved").exists()


def test_resume_switches_to_another_conversation_and_lets_go_of_the_first(make_addon):
    other = saved_file(make_addon.store, session_text("other-id"), 1_000_000)
    addon = make_addon()
    first = launched_path(addon.launch())
    addon.resume("other")
    assert make_addon.store.lock(first) is None  # held until the next start (its agent runs)
    assert launched_path(addon.launch()) == other
    assert addon.resumed.id == "other-id"
    make_addon.store.lock(first).release()  # then let go
    addon.close()


def test_resuming_the_conversation_a_session_holds_keeps_it_without_a_copy(make_addon):
    held = saved_file(make_addon.store, session_text("held-id"), 1_000_000)
    addon = make_addon(resume="held")
    assert launched_path(addon.launch()) == held
    addon.resume(str(held))
    assert launched_path(addon.launch()) == held and addon.notes == []
    addon.close()


def test_a_session_that_saves_nothing_refuses_to_resume_and_changes_nothing(make_addon):
    addon = make_addon(save=False)
    assert list(addon.launch().args) == ["--no-session"]
    with pytest.raises(AgentStartError, match="does not save its conversation"):
        addon.resume("latest")
    assert list(addon.launch().args) == ["--no-session"]


def test_a_folder_that_cannot_be_made_gives_an_unsaved_conversation_and_says_so(
    make_addon, tmp_path
):
    (tmp_path / "saved").write_text("a file where the folder should be")
    addon = make_addon()
    assert list(addon.launch().args) == ["--no-session"]
    assert addon.notes and "This conversation is not saved" in addon.notes[0]


def test_a_damaged_file_is_listed_with_its_problem_and_hides_no_other(store):
    bad = session_text("bad-id").replace('"text": "use a tool please"', '"text": null')
    assert '"text": null' in bad
    saved_file(store, bad, 2_000_000)
    deep_text = json.dumps(header("deep-id")) + "\n" + "[" * 200_000 + "\n"
    deep = saved_file(store, deep_text, 3_000_000)
    good = saved_file(store, session_text("good-id"), 1_000_000)
    listed = {c.path: c.saved for c in store.conversations("default")}
    assert listed[good].problem is None and len(listed) == 3
    assert listed[deep].problem is None or "cannot be read" in listed[deep].problem


def test_the_folders_and_the_notebook_note_are_private_however_deep(tmp_path):
    store = ConversationStore(tmp_path / "a" / "b" / "conversations", "/home/me/x.ipynb")
    store.new_path("default")
    for folder in (tmp_path / "a", store.root, store.folder, store.session_folder("default")):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert stat.S_IMODE((store.folder / "notebook.txt").stat().st_mode) == 0o600


def test_a_header_only_file_without_its_newline_is_continued_in_a_whole_copy(make_addon):
    text = session_text("lonely-id", messages=[]).rstrip("\n")
    original = saved_file(make_addon.store, text, 1_000_000)
    addon = make_addon(resume="lonely")
    copy = launched_path(addon.launch())
    assert copy != original and original.read_text() == text
    (line,) = copy.read_text().splitlines()
    assert copy.read_text().endswith("\n") and json.loads(line)["parentSession"] == str(original)
    addon.close()


@pytest.mark.parametrize("messages", [5, True, "x", {"role": "user"}])
def test_load_earlier_takes_a_malformed_answer_for_no_messages(make_addon, messages):
    saved_file(make_addon.store, session_text("s1"), 1_000_000)
    addon = make_addon(answer={"messages": messages}, resume="latest")
    addon.launch()
    addon.load_earlier()
    assert addon.earlier == [] and addon.continued.startswith("continued: 0 messages since")
    addon.close()


def test_an_interpreter_s_short_option_does_not_turn_saving_off(make_addon):
    addon = make_addon(argv=("node", "-r", "./preload.js", "cli.js"))
    assert launched_path(addon.launch()).suffix == ".jsonl"
    addon.close()


def test_resume_with_a_command_that_says_how_sessions_are_kept_is_an_error(make_addon, tmp_path):
    addon = make_addon(argv=("pi", "--no-session"), resume="latest")
    with pytest.raises(AgentStartError, match="--resume cannot continue"):
        addon.launch()
    with pytest.raises(AgentStartError, match="one of --resume and --no-save"):
        make_addon(save=False, resume="latest").launch()
    assert not (tmp_path / "saved").exists()


def test_a_start_that_fails_lets_go_of_the_conversation(tmp_path, monkeypatch):
    """The agent cannot start: the conversation it was to continue is free again at once."""
    import atomic_jupyter as aj
    from atomic_jupyter.errors import AgentStartError as StartError

    monkeypatch.setenv("ATOMIC_JUPYTER_CONVERSATIONS", str(tmp_path / "saved"))
    store = ConversationStore(tmp_path / "saved", os.getcwd())
    saved = saved_file(store, session_text("free-id"), 1_000_000)
    with pytest.raises(StartError):
        aj.start(command=["false"], resume="free", display=False, timeout=5)
    lock = store.lock(saved)
    assert lock is not None
    lock.release()


def test_earlier_runs_take_a_malformed_usage_for_none():
    (run,) = earlier_runs(
        [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "text", "text": "yo"}], "usage": True},
        ]
    )
    assert run.finished and run.text == "yo" and run.transcript.usage.input == 0


def test_the_listing_redacts_a_secret_before_it_cuts_the_prompt(tmp_path):
    from atomic_jupyter.notebook.conversation_listing import conversation_line
    from atomic_jupyter.transport.secrets import Redactor

    secret = "sk-proj-" + "7" * 60
    prompt = "x" * 60 + " use key " + secret
    store = ConversationStore(tmp_path, "/nb.ipynb")
    text = session_text(
        "s", messages=[{"role": "user", "content": [{"type": "text", "text": prompt}]}]
    )
    saved_file(store, text, 1_000_000)
    (conversation,) = store.conversations()
    line = conversation_line(conversation, Redactor([secret]))
    assert "sk-proj" not in line and "[redac" in line


def test_an_earlier_turn_takes_its_time_from_its_messages():
    first, second = earlier_runs(
        [
            {"role": "user", "content": "a", "timestamp": 1_000},
            {"role": "assistant", "content": [{"type": "text", "text": "b"}], "timestamp": 3_500},
            {"role": "user", "content": "c", "timestamp": 9_000},
        ]
    )
    assert first.transcript.elapsed == 2.5 and second.transcript.elapsed is None


def test_a_session_name_that_is_not_a_file_name_is_kept_as_given(store):
    path = store.new_path("my session: draft")
    path.write_text(session_text("named-id"), encoding="utf-8")
    (conversation,) = store.conversations()
    assert path.parent.name == "my-session-draft"
    assert conversation.session == "my session: draft"
    assert store.conversations("my session: draft")[0].path == path
