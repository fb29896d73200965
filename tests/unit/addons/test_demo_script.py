"""The offline demo model's script, tested as a pure function of ``ChatRequest`` objects.

Requests are built the way the scripted model server builds them from what the pinned agent
(pi 0.73.1) sends: ``ChatRequest(body)`` with the ``messages`` (system, user, assistant with
``tool_calls``, ``tool`` results as strings) and the ``tools`` the agent offers. The tool
schemas below are the agent's own (captured from its requests), so the arguments the script
sends are checked against what the agent accepts.
"""

from __future__ import annotations

import builtins
import json
import math
import re
import time
from typing import Any

import pytest

from atomic_jupyter.addons.demo import DEMO_PROMPTS, KEYWORDS, demo_script, intent_of
from atomic_jupyter.addons.demo.script import (
    FALLBACK,
    MARKDOWN,
    SCRATCH_COMMAND,
    THINKING,
    THOUGHT,
)
from atomic_jupyter.addons.model_server import ChatRequest, Text, Thinking, ToolCall, Turn
from atomic_jupyter.notebook.magics import FIX_PROMPT
from atomic_jupyter.session.citations import expand
from atomic_jupyter.ui.markdown import render_markdown

#: pi 0.73.1's built-in tools: name -> (required arguments, all arguments). ``read``, ``bash``,
#: ``edit`` and ``write`` are offered by default; ``ls`` only with ``--tools``.
PI_TOOLS: dict[str, tuple[set[str], set[str]]] = {
    "read": ({"path"}, {"path", "offset", "limit"}),
    "bash": ({"command"}, {"command", "timeout"}),
    "edit": ({"path", "edits"}, {"path", "edits"}),
    "write": ({"path", "content"}, {"path", "content"}),
    "ls": (set(), {"path", "limit"}),
    "notebook_read": (set(), {"cell_id"}),
    "notebook_edit": ({"operations"}, {"operations"}),
    "notebook_run": ({"cell_ids"}, {"cell_ids"}),
}
DEFAULT_TOOLS = ("read", "bash", "edit", "write")

LS_LA = """\
total 28
drwxr-xr-x  3 ada ada 4096 Nov 29 12:00 .
drwxr-xr-x 12 ada ada 4096 Nov 29 11:00 ..
-rw-r--r--  1 ada ada   30 Nov 29 12:00 .hidden
-rw-r--r--  1 ada ada  120 Nov 29 12:00 README.md
-rw-r--r--  1 ada ada 2048 Nov 29 12:00 analysis notes.ipynb
drwxr-xr-x  2 ada ada 4096 Nov 29 12:00 demo-scratch
lrwxrwxrwx  1 ada ada    9 Nov 29 12:00 link -> README.md
-rw-r--r--  1 ada ada   10 Nov 29 12:00 data.csv
"""
#: What the ``ls`` tool returns for the same folder.
LS_TOOL = ".hidden\nREADME.md\nanalysis notes.ipynb\ndata.csv\ndemo-scratch/\nlink\n"


def tool_schema(name: str) -> dict[str, Any]:
    required, names = PI_TOOLS[name]
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"the {name} tool",
            "parameters": {
                "type": "object",
                "required": sorted(required),
                "properties": {n: {"type": "string"} for n in sorted(names)},
            },
        },
    }


def request(
    prompt: str,
    results: list[tuple[ToolCall, str]] = (),  # type: ignore[assignment]
    *,
    tools: tuple[str, ...] = DEFAULT_TOOLS,
    history: list[dict[str, Any]] | None = None,
) -> ChatRequest:
    """A request for ``prompt``, after the given tool calls and their results (one a turn)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are pi."}]
    messages += history or []
    messages.append({"role": "user", "content": [{"type": "text", "text": prompt}]})
    for i, (call, result) in enumerate(results):
        call_id = f"call_{i}_0"
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "content": result, "tool_call_id": call_id})
    body = {
        "model": "offline-demo",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": messages,
        "tools": [tool_schema(name) for name in tools],
    }
    return ChatRequest(body=body)


def kinds(turn: Turn) -> list[type]:
    return [type(part) for part in turn.items]


def tool_calls(turn: Turn) -> list[ToolCall]:
    return [part for part in turn.items if isinstance(part, ToolCall)]


def text_of(turn: Turn) -> str:
    return "".join(part.text for part in turn.items if isinstance(part, Text))


def assert_accepted(call: ToolCall, tools: tuple[str, ...] = DEFAULT_TOOLS) -> None:
    """The call names a tool the agent offers, with arguments its schema accepts."""
    assert call.name in tools, call
    required, names = PI_TOOLS[call.name]
    assert required <= set(call.arguments) <= names, call
    json.dumps(dict(call.arguments))  # plain JSON


def run_files(prompt: str, listing: str = LS_LA) -> tuple[Turn, Turn]:
    first = demo_script(request(prompt))
    (call,) = tool_calls(first)
    return first, demo_script(request(prompt, [(call, listing)]))


# --------------------------------------------------------------------------- keywords


def test_every_example_prompt_chooses_its_keywords_intent() -> None:
    assert set(DEMO_PROMPTS) == {form for forms in KEYWORDS.values() for form in forms} - {
        "cleanup",
        "file",
        "thinking",
        "planning",
        "introduction",
        "introduce",
    }
    for keyword, prompt in DEMO_PROMPTS.items():
        expected = next(intent for intent, forms in KEYWORDS.items() if keyword in forms)
        assert intent_of(prompt) == expected, (keyword, prompt)
        assert keyword in prompt.lower()


@pytest.mark.parametrize(
    ("prompt", "intent"),
    [
        ("HELLO there", "markdown"),
        ("Show me some Markdown, please", "markdown"),
        ("a quick INTRO?", "markdown"),
        ("Think it over", "think"),
        ("make a PLAN", "think"),
        ("which FILES are here", "files"),
        ("List everything", "files"),
        ("READ something", "read"),
        ("read the files", "read"),  # read wins over files
        ("Clean up the scratch files", "clean"),  # clean wins over files
        ("please DELETE it", "clean"),
        ("something Dangerous", "clean"),
        ("are you ready?", "fallback"),  # whole words only: not "read"
        ("a playlist", "fallback"),
        ("what is 2 + 2?", "fallback"),
        ("", "fallback"),
    ],
)
def test_keywords_are_case_insensitive_whole_words(prompt: str, intent: str) -> None:
    assert intent_of(prompt) == intent


# --------------------------------------------------------------------------- text turns


def test_markdown_turn_streams_real_markdown_in_small_chunks() -> None:
    for prompt in ("hello", "show me some markdown", "give me a short intro"):
        turn = demo_script(request(prompt))
        assert kinds(turn) == [Text]
        (part,) = turn.items
        assert isinstance(part, Text) and part.text == MARKDOWN
    assert 300 <= len(MARKDOWN) <= 1000
    lines = MARKDOWN.splitlines()
    assert lines[0].startswith("# ")
    assert any(line.startswith("- ") for line in lines)
    assert any(re.fullmatch(r"\|(-+\|)+", line) for line in lines)  # a table's rule
    assert "```python\n" in MARKDOWN and MARKDOWN.rstrip().endswith("```")
    assert turn.finish == "stop"


def test_think_turn_is_thinking_then_text() -> None:
    for prompt in ("think about it", "plan a refactoring"):
        turn = demo_script(request(prompt))
        assert kinds(turn) == [Thinking, Text]
        thinking, text = turn.items
        assert isinstance(thinking, Thinking) and thinking.text == THINKING
        assert isinstance(text, Text) and text.text == THOUGHT


def test_every_streamed_part_is_visible_but_quick() -> None:
    prompts = [*DEMO_PROMPTS.values(), "anything else"]
    for prompt in prompts:
        turn = demo_script(request(prompt))
        for part in turn.items:
            if isinstance(part, (Text, Thinking)):
                assert 1 <= part.chunk <= 8 and 0 < part.delay <= 0.01, part
                assert math.ceil(len(part.text) / part.chunk) * part.delay < 2, part


# --------------------------------------------------------------------------- tools


def test_files_lists_with_bash_then_summarises_the_listing() -> None:
    first, second = run_files("list the files here")
    assert kinds(first) == [Text, ToolCall]
    (call,) = tool_calls(first)
    assert (call.name, dict(call.arguments)) == ("bash", {"command": "ls -la"})
    assert_accepted(call)
    assert first.finish == "tool_calls"

    assert kinds(second) == [Text]
    assert second.finish == "stop"
    summary = text_of(second)
    assert f"{len(LS_LA.splitlines())} lines" in summary
    assert "4 file(s) and 1 folder(s) (and 1 other entry)" in summary  # the link
    for name in ("README.md", "analysis notes.ipynb", "data.csv", ".hidden"):
        assert f"`{name}`" in summary


def test_files_uses_the_ls_tool_when_the_agent_offers_it() -> None:
    tools = (*DEFAULT_TOOLS, "ls")
    first = demo_script(request("what files are here?", tools=tools))
    (call,) = tool_calls(first)
    assert (call.name, dict(call.arguments)) == ("ls", {"path": "."})
    assert_accepted(call, tools)
    second = demo_script(request("what files are here?", [(call, LS_TOOL)], tools=tools))
    summary = text_of(second)
    assert "6 lines" in summary and "5 file(s) and 1 folder(s)" in summary
    assert "`analysis notes.ipynb`" in summary and "`demo-scratch`" not in summary


def test_read_lists_then_reads_the_first_notebook_then_summarises() -> None:
    prompt = "read a file from this folder"
    first = demo_script(request(prompt))
    (ls_call,) = tool_calls(first)
    assert dict(ls_call.arguments) == {"command": "ls -la"}

    second = demo_script(request(prompt, [(ls_call, LS_LA)]))
    assert kinds(second) == [Text, ToolCall]
    (read_call,) = tool_calls(second)
    assert read_call.name == "read"
    assert read_call.arguments["path"] == "analysis notes.ipynb"  # a name with a space
    assert_accepted(read_call)

    content = '{\n "cells": [],\n "nbformat": 4\n}\n'
    third = demo_script(request(prompt, [(ls_call, LS_LA), (read_call, content)]))
    assert kinds(third) == [Text] and third.finish == "stop"
    summary = text_of(third)
    assert "`analysis notes.ipynb`" in summary and "4 line(s)" in summary
    assert "starts with `{`" in summary


@pytest.mark.parametrize(
    ("listing", "expected"),
    [
        (LS_LA.replace("analysis notes.ipynb", "analysis.txt"), "README.md"),
        (
            "total 8\n-rw-r--r-- 1 a a 1 Nov 1 10:00 notes.md\n-rw-r--r-- 1 a a 1 Nov 1 10:00 a.py\n",
            "notes.md",
        ),
        ("total 4\n-rw-r--r-- 1 a a 1 Nov 1 10:00 .env\n", ".env"),
        ("data.csv\nsub/\n", "data.csv"),
    ],
)
def test_read_prefers_a_notebook_then_a_readme_then_markdown(listing: str, expected: str) -> None:
    prompt = "read something"
    ls_call = tool_calls(demo_script(request(prompt)))[0]
    (read_call,) = tool_calls(demo_script(request(prompt, [(ls_call, listing)])))
    assert read_call.arguments["path"] == expected


def test_read_with_nothing_to_read_says_so() -> None:
    prompt = "read a file"
    ls_call = tool_calls(demo_script(request(prompt)))[0]
    empty = "total 8\ndrwxr-xr-x 2 a a 4096 Nov 1 10:00 .\ndrwxr-xr-x 9 a a 4096 Nov 1 10:00 ..\n"
    turn = demo_script(request(prompt, [(ls_call, empty)]))
    assert kinds(turn) == [Text] and "no file to read" in text_of(turn)


def test_clean_sends_the_guarded_bash_call() -> None:
    for prompt in (
        "clean up the scratch files",
        "delete the scratch folder",
        "do something dangerous",
    ):
        turn = demo_script(request(prompt))
        assert kinds(turn) == [Text, ToolCall]
        (call,) = tool_calls(turn)
        assert (call.name, dict(call.arguments)) == ("bash", {"command": "rm -rf ./demo-scratch"})
        assert call.arguments["command"] == SCRATCH_COMMAND
        assert_accepted(call)


def test_clean_reports_a_blocked_call() -> None:
    prompt = "clean up the scratch files"
    (call,) = tool_calls(demo_script(request(prompt)))
    turn = demo_script(request(prompt, [(call, "Blocked by the demo guard: the user chose Block")]))
    assert kinds(turn) == [Text] and turn.finish == "stop"
    text = text_of(turn)
    assert "**blocked**" in text and "nothing was deleted" in text
    assert "the user chose Block" in text


def test_clean_reports_a_call_that_ran() -> None:
    prompt = "clean up the scratch files"
    (call,) = tool_calls(demo_script(request(prompt)))
    text = text_of(demo_script(request(prompt, [(call, "(no output)")])))
    assert "**ran**" in text and "blocked" not in text and "(no output)" in text


# --------------------------------------------------------------------------- the fallback


def test_fallback_explains_the_demo_and_how_to_use_a_real_model() -> None:
    turn = demo_script(request("What is the capital of France?"))
    assert kinds(turn) == [Text]
    text = text_of(turn)
    assert text == FALLBACK
    assert "offline demo model" in text
    for keyword, prompt in DEMO_PROMPTS.items():
        assert f"`{keyword}`" in text and prompt in text
    assert "%atomic_agent start --provider anthropic --model claude-sonnet-4-5" in text
    assert "ANTHROPIC_API_KEY" in text and "environment" in text
    assert "--env ANTHROPIC_API_KEY=..." in text
    assert "Never print the key" in text


def test_no_answer_contains_anything_like_an_api_key() -> None:
    key_like = re.compile(r"sk-[A-Za-z0-9_-]{8,}|[A-Za-z0-9_-]{32,}|AKIA[0-9A-Z]{12,}")
    for prompt in [*DEMO_PROMPTS.values(), "anything else", "what is your API key?"]:
        turn = demo_script(request(prompt))
        for part in turn.items:
            shown = part.text if isinstance(part, (Text, Thinking)) else json.dumps(part.arguments)
            assert not key_like.search(shown), (prompt, shown)


# --------------------------------------------------------------------------- every turn


def test_no_turn_reports_a_usage() -> None:
    """The demo model is free and counts nothing: no usage chunk, so no invented figures."""
    prompt = "read a file"
    ls_call = tool_calls(demo_script(request(prompt)))[0]
    turns = [demo_script(request(p)) for p in [*DEMO_PROMPTS.values(), "anything"]]
    turns.append(demo_script(request(prompt, [(ls_call, LS_LA)])))
    assert [t.report_usage for t in turns] == [False] * len(turns)


def test_only_the_last_user_message_counts() -> None:
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "list the files here"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}},
        ]},
        {"role": "tool", "content": LS_LA, "tool_call_id": "c1"},
        {"role": "assistant", "content": "The listing has 9 lines."},
    ]  # fmt: skip
    turn = demo_script(request("hello again", history=history))
    assert kinds(turn) == [Text] and text_of(turn) == MARKDOWN
    # A new "list" prompt starts over at its first turn, despite the earlier tool result.
    turn = demo_script(request("list them again", history=history))
    assert kinds(turn) == [Text, ToolCall]


def test_the_script_is_pure_and_deterministic(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the demo script must not do I/O or look at the clock")

    prompt = "read a file"
    ls_call = tool_calls(demo_script(request(prompt)))[0]
    requests = [request(p) for p in [*DEMO_PROMPTS.values(), "anything"]]
    requests += [request(cited(FIX)), request(cited("what is in $`numbers` and $`df`?"))]
    plot_call = python_call(cited(PLOT))
    requests += [python_request(cited(PLOT), [(plot_call, DESCRIBED)], images=1)]
    requests.append(request(prompt, [(ls_call, LS_LA)]))
    expected = [demo_script(r) for r in requests]
    monkeypatch.setattr(builtins, "open", forbidden)
    monkeypatch.setattr(time, "time", forbidden)
    monkeypatch.setattr(time, "monotonic", forbidden)
    monkeypatch.setattr(time, "sleep", forbidden)
    assert [demo_script(r) for r in requests] == expected
    # And a fresh but equal request gets the same turn.
    assert demo_script(request(prompt, [(ls_call, LS_LA)])) == expected[-1]


# --------------------------------------------------------------------------- cited values

#: What ``%atomic_agent fix`` writes (it cites ``Err``, the last failed cell).
FIX = FIX_PROMPT
#: Summaries in the shape the notebook's resolver gives them: the type line first.
SUMMARIES = {
    "numbers": "list of 5 items:\n[3, 1, 4, 1, 5]",
    "df": "pandas.DataFrame: 3 rows × 2 columns\n\n|   | a | b |\n|---|---|---|\n| 0 | 1 | x |",
    "Err": (
        "Cell [7] failed.\n\n```python\nx = 0\n1 / x\n```\n\nTraceback:\n```\n"
        "---------------------------------------------------------------------------\n"
        "ZeroDivisionError                         Traceback (most recent call last)\n"
        "Cell In[7], line 2\n      1 x = 0\n----> 2 1 / x\n\n"
        "ZeroDivisionError: division by zero\n```"
    ),
}


def cited(prompt: str, summaries: dict[str, str] = SUMMARIES) -> str:
    """``prompt`` as the agent gets it once the notebook has expanded its citations."""
    return expand(prompt, summaries.__getitem__).sent


def test_a_cited_prompt_names_the_values_and_describes_them() -> None:
    turn = demo_script(request(cited("what is in $`numbers`, and how big is $`df`?")))
    assert kinds(turn) == [Text] and turn.finish == "stop"
    text = text_of(turn)
    lines = text.splitlines()
    assert lines[0] == "I got 2 values from your kernel: `numbers` and `df`."
    assert lines[2].startswith("- `numbers`: a list of 5 items: `[3, 1, 4, 1, 5]`. ")
    assert lines[3].startswith("- `df`: a pandas.DataFrame: `3 rows × 2 columns`. ")
    assert "not the live object" in lines[2] and "not the live object" in lines[3]
    assert "computed nothing" in lines[2]
    # Nothing computed is pretended: no sum (14), no mean (2.8), no table rows quoted.
    assert "14" not in text and "2.8" not in text and "| 0 |" not in text
    assert "offline demo model" in text
    assert text == text_of(
        demo_script(request(cited("what is in $`numbers`, and how big is $`df`?")))
    )


@pytest.mark.parametrize(
    "prompt",
    [
        "what is in $`numbers`?",
        "list the files in $`numbers`",
        "read $`numbers` and think",
        "clean up $`numbers`",
        "hello, $`numbers`!",
    ],
)
def test_a_cited_prompt_is_matched_before_the_keywords(prompt: str) -> None:
    turn = demo_script(request(cited(prompt)))
    assert kinds(turn) == [Text]  # no ls, no read, no rm -rf, no thinking
    text = text_of(turn)
    assert text.startswith("I got 1 value from your kernel: `numbers`.\n")
    assert text not in (FALLBACK, MARKDOWN)


def test_a_cited_value_counts_once_and_many_values_are_counted_not_listed() -> None:
    names = [f"v{i}" for i in range(9)]
    summaries = {name: f"int: {i}" for i, name in enumerate(names)}
    prompt = " ".join(f"$`{name}`" for name in [*names, "v0"])
    turn = demo_script(request(cited(prompt, summaries)))
    text = text_of(turn)
    first = text.splitlines()[0]
    assert first.startswith("I got 9 values from your kernel: `v0`, `v1`, ")
    assert first.endswith("`v5` and 3 more.")
    assert text.count("\n- ") == 6 and "`v6`" not in text
    (part,) = turn.items
    assert isinstance(part, Text) and math.ceil(len(part.text) / part.chunk) * part.delay < 2


def test_a_summary_line_that_looks_like_a_cited_name_stays_in_its_summary() -> None:
    summaries = {"note": "str of 30 characters:\n\n`secret`:\nnot a cited value"}
    text = text_of(demo_script(request(cited("summarise $`note`", summaries))))
    assert text.startswith("I got 1 value from your kernel: `note`.\n")
    assert "`secret`" not in text


def test_a_cited_answer_is_safe_to_render() -> None:
    summaries = {
        "<b>x</b>": "str: '`<script>alert(1)</script>` [link](javascript:alert(1))'",
        "y": "",
    }
    text = text_of(demo_script(request(cited("$`<b>x</b>` and $`y`", summaries))))
    assert text.startswith("I got 2 values from your kernel: `<b>x</b>` and `y`.")
    assert "'<script>alert(1)</script>' [link](javascript:alert(1))'`" in text  # one code span
    assert "- `y`: an empty summary." in text
    html = render_markdown(text)
    assert "<script" not in html and "<b>" not in html and "href" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "&lt;b&gt;x&lt;/b&gt;" in html


def test_the_fix_prompt_names_the_cell_and_the_exception() -> None:
    turn = demo_script(request(cited(FIX)))
    assert kinds(turn) == [Text] and turn.finish == "stop"
    text = text_of(turn)
    assert text.startswith(
        "The cell [7] failed with `ZeroDivisionError: division by zero`. To fix it, "
    )
    assert text.count(". ") == 1 and text.endswith(".\n")  # one fix sentence after it


def test_the_fix_prompt_reads_a_plain_coloured_traceback() -> None:
    err = (
        "Cell [12] failed.\n```python\nd = {}\nd['`a`']\n```\n"
        "\x1b[31mKeyError\x1b[0m Traceback (most recent call last)\n----> 2 d['a']\n"
        "\x1b[31mKeyError\x1b[0m: \"'`a`'\"\n\n"
    )
    text = text_of(demo_script(request(cited(FIX, {"Err": err}))))
    assert text.startswith("The cell [12] failed with `KeyError: \"''a''\"`.")


def test_the_fix_prompt_without_a_failed_cell_gets_the_cited_answer() -> None:
    text = text_of(demo_script(request(cited(FIX, {"Err": "NoneType: None"}))))
    assert text.startswith("I got 1 value from your kernel: `Err`.\n")
    assert "- `Err`: `None`." in text
    # A failed cell cited without the fix prompt is described, with a pointer to the fix.
    text = text_of(demo_script(request(cited("look at $`Err`"))))
    assert "- `Err`: cell [7], which failed. " in text and "%atomic_agent fix" in text


def test_prompts_without_citations_keep_their_old_answers() -> None:
    for prompt in [*DEMO_PROMPTS.values(), "what is in `numbers`?", "echo $HOME", "$x^2$"]:
        turn = demo_script(request(prompt))
        intent = intent_of(prompt)
        if intent == "markdown":
            assert text_of(turn) == MARKDOWN
        elif intent == "think":
            assert [p.text for p in turn.items if isinstance(p, (Text, Thinking))] == [
                THINKING,
                THOUGHT,
            ]
        elif intent == "fallback":
            assert text_of(turn) == FALLBACK, prompt
        elif intent == "plot":  # this agent offers no python tool: said, not called
            assert kinds(turn) == [Text] and "`python` tool" in text_of(turn), prompt
        else:
            assert kinds(turn) == [Text, ToolCall], prompt
        assert "from your kernel" not in text_of(turn)


# --------------------------------------------------------------------------- kernel tools

AREA_TOOL = {
    "type": "function",
    "function": {
        "name": "circle_area",
        "description": "The area of a circle.",
        "parameters": {
            "type": "object",
            "properties": {"radius": {"type": "number"}, "unit": {"type": "string"}},
            "required": ["radius"],
        },
    },
}


def test_a_prompt_naming_an_exposed_function_calls_it_with_arguments_from_the_prompt():
    from atomic_jupyter.addons.demo.script import demo_script
    from atomic_jupyter.addons.model_server import ToolCall
    from atomic_jupyter.addons.model_server.request import ChatRequest

    ask = {"role": "user", "content": "use circle_area for a radius of 2.5 in 'cm'"}
    body = {"messages": [ask], "tools": [AREA_TOOL], "stream": True}
    first = demo_script(ChatRequest(body))
    (call,) = [p for p in first.parts if isinstance(p, ToolCall)]
    assert call.name == "circle_area" and call.arguments == {"radius": 2.5, "unit": "cm"}
    called = {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function"}]}
    answered = {"role": "tool", "tool_call_id": "c1", "content": "float: 19.63"}
    second = demo_script(ChatRequest({**body, "messages": [ask, called, answered]}))
    said = "".join(getattr(p, "text", "") for p in second.parts)
    assert said.startswith("Your kernel's `circle_area` answered: `float: 19.63`.")
    bash_only = {**body, "tools": [{"type": "function", "function": {"name": "bash"}}]}
    assert not any(isinstance(p, ToolCall) for p in demo_script(ChatRequest(bash_only)).parts)


def test_a_string_result_is_quoted_with_its_value_not_only_its_type_line():
    from atomic_jupyter.addons.demo.script import demo_script
    from atomic_jupyter.addons.model_server.request import ChatRequest

    ask = {"role": "user", "content": "use circle_area for a radius of 1"}
    called = {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function"}]}
    answered = {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "str, 12 characters:\nsaved note 1",
    }
    body = {"messages": [ask, called, answered], "tools": [AREA_TOOL], "stream": True}
    said = "".join(getattr(p, "text", "") for p in demo_script(ChatRequest(body)).parts)
    assert "answered: `str, 12 characters: saved note 1`." in said


# --------------------------------------------------------------------------- cited values, read


def test_a_cited_value_reads_as_words_and_a_preview_of_its_value() -> None:
    """Real summaries (the notebook's ``summarize``) give "a list of 6 items: `[...]`", not the
    summary's first line with its dangling colon."""
    import pandas as pd

    from atomic_jupyter.notebook.kernel_values import summarize

    kernel = {
        "primes": [2, 3, 5, 7, 11, 13],
        "name": "Ada Lovelace",
        "area": 12.566370614359172,
        "df": pd.DataFrame({"a": [1, 2, 3], "b": [4.0, 5.0, 6.0]}),
        "re": re,
        "nothing": None,
    }
    summaries = {name: summarize(value) for name, value in kernel.items()}
    prompt = "what are $`primes`, $`name`, $`area`, $`df`, $`re` and $`nothing`?"
    text = text_of(demo_script(request(cited(prompt, summaries))))
    lines = {line.split(":", 1)[0]: line for line in text.splitlines() if line.startswith("- ")}
    assert lines["- `primes`"].startswith("- `primes`: a list of 6 items: `[2, 3, 5, 7, 11, 13]`. ")
    assert "computed nothing from them" in lines["- `primes`"]  # the list's own hint
    assert lines["- `name`"].startswith("- `name`: a str, 12 characters: `Ada Lovelace`. ")
    assert "not the live string" in lines["- `name`"]
    assert lines["- `area`"].startswith("- `area`: a float: `12.566370614359172`. ")
    assert lines["- `df`"].startswith("- `df`: a pandas.DataFrame: `3 rows × 2 columns`. ")
    assert "int64" not in text and "4.0" not in text  # no table rows quoted for a frame
    assert lines["- `re`"].startswith("- `re`: a module `re (")
    assert lines["- `nothing`"].startswith("- `nothing`: `None`. ")
    assert ":." not in text and ":`." not in text and "'list'" not in text


def test_a_long_cited_value_is_previewed_on_one_short_line() -> None:
    from atomic_jupyter.notebook.kernel_values import summarize

    summaries = {"rows": summarize([f"row {i}" for i in range(500)]), "text": summarize("a\nb")}
    text = text_of(demo_script(request(cited("see $`rows` and $`text`", summaries))))
    (rows,) = [line for line in text.splitlines() if line.startswith("- `rows`")]
    assert rows.startswith("- `rows`: a list of 500 items: `['row 0', 'row 1', ")
    assert "…`. " in rows and "left out" not in rows and len(rows.split("`. ")[0]) < 120
    assert "- `text`: a str, 3 characters: `a b`. " in text


# --------------------------------------------------------------------------- the python tool

#: The notebook's ``python`` tool (its code runs in the live kernel, after the person approves).
PYTHON_TOOL = {
    "type": "function",
    "function": {
        "name": "python",
        "description": "Run Python code in the notebook's kernel.",
        "parameters": {
            "type": "object",
            "required": ["code"],
            "properties": {"code": {"type": "string"}},
        },
    },
}
PLOT = "describe $`df` and plot its first column"
#: What the python tool answers when the demo's code ran (``notebook/agent_code.py``): its
#: stdout, then the figure as a display whose image the agent attaches.
DESCRIBED = """\
Agent[1] ran in 0.31 s.
[stdout]
              a         b
count  3.000000  3.000000
mean   2.000000  5.000000
std    1.000000  1.000000
min    1.000000  4.000000
25%    1.500000  4.500000
50%    2.000000  5.000000
75%    2.500000  5.500000
max    3.000000  6.000000
[display 1, image 1 attached]
<Figure size 640x480 with 1 Axes>
"""


def python_request(
    prompt: str, results: list[tuple[ToolCall, str]] = (), *, images: int = 0, offered: bool = True
) -> ChatRequest:  # type: ignore[assignment]
    """A request of a notebook session (its tools include ``python``); ``images``: the figures
    the tool returned, which the agent attaches in a user message after the results."""
    body = dict(request(prompt, results).body)
    body["tools"] = [*body["tools"], PYTHON_TOOL] if offered else body["tools"]
    if images:
        image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
        attached = [{"type": "text", "text": "Attached image(s) from tool result:"}]
        body["messages"] = [
            *body["messages"],
            {"role": "user", "content": attached + [image] * images},
        ]
    return ChatRequest(body=body)


def python_call(prompt: str) -> ToolCall:
    (call,) = tool_calls(demo_script(python_request(prompt)))
    return call


@pytest.mark.filterwarnings("ignore:FigureCanvasAgg is non-interactive")
def test_describe_and_plot_a_cited_frame_calls_the_python_tool_with_code_that_runs() -> None:
    import contextlib
    import io

    import matplotlib
    import pandas as pd

    turn = demo_script(python_request(cited(PLOT)))
    assert kinds(turn) == [Text, ToolCall] and turn.finish == "tool_calls"
    assert text_of(turn) == "I'll look at `df` in your kernel and plot its first column."
    (call,) = tool_calls(turn)
    assert call.name == "python" and set(call.arguments) == {"code"}
    code = call.arguments["code"]
    assert "df.describe()" in code and "matplotlib.use" not in code  # the kernel's backend
    # The code works on any DataFrame named df: it prints the description and plots column 0.
    import matplotlib.pyplot as plt

    backend = matplotlib.get_backend()
    plt.switch_backend("agg")
    try:
        frame = pd.DataFrame({"height": [1.0, 3.0, 2.0], "name": ["a", "b", "c"]})
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(compile(code, "<python tool>", "exec"), {"df": frame})
        assert printed.getvalue().strip() == frame.describe().to_string().strip()
        (axes,) = plt.gcf().axes
        assert axes.get_title() == "height" and list(axes.lines[0].get_ydata()) == [1, 3, 2]
    finally:
        plt.close("all")
        plt.switch_backend(backend)


@pytest.mark.parametrize(
    "prompt",
    [
        "plot $`df`",
        "describe $`df` and plot it with python",  # "python" is the tool, not a kernel function
        "clean up $`df`'s first column and plot it",  # plot before the cited answer
    ],
)
def test_a_cited_prompt_that_asks_for_a_plot_calls_python_before_the_cited_answer(prompt):
    call = python_call(cited(prompt))
    assert call.name == "python" and "print(df.describe().to_string())" in call.arguments["code"]


def test_the_plot_uses_the_first_cited_frame_and_an_expression_in_parentheses() -> None:
    summaries = {**SUMMARIES, "sales[['a']]": "pandas.DataFrame: 9 rows × 1 columns"}
    call = python_call(cited("plot $`numbers` against $`sales[['a']]`", summaries))
    assert "(sales[['a']]).describe()" in call.arguments["code"]
    call = python_call(cited("plot $`numbers`"))  # no frame cited: the first value
    assert "numbers.describe()" in call.arguments["code"]


def test_after_the_python_tool_ran_the_answer_quotes_its_output_and_points_to_the_figure():
    prompt = cited(PLOT)
    call = python_call(prompt)
    turn = demo_script(python_request(prompt, [(call, DESCRIBED)], images=1))
    assert kinds(turn) == [Text] and turn.finish == "stop"
    text = text_of(turn)
    assert text.startswith(
        "Here are the first lines of what `df.describe()` printed in your kernel:"
    )
    assert "```text\n              a         b\ncount  3.000000  3.000000\n" in text
    assert "min    1.000000" in text and "25%" not in text  # the first lines only
    assert "Agent[1]" not in text and "[stdout]" not in text
    assert "The plot of its first column is in the `python` tool's card above." in text
    html = render_markdown(text)
    assert "<pre" in html and "count  3.000000" in html
    # The figure is seen in the attached image alone, too.
    without_label = DESCRIBED.replace(", image 1 attached", "")
    text = text_of(demo_script(python_request(prompt, [(call, without_label)], images=1)))
    assert "tool's card above" in text
    # No figure came back: it says so, and how to get one.
    text = text_of(demo_script(python_request(prompt, [(call, without_label)])))
    assert "figure" in text and "%matplotlib inline" in text and "card above" not in text
    # Nothing printed (a short output is quoted whole; none is said).
    text = text_of(demo_script(python_request(prompt, [(call, "Agent[2] ran in 0.1 s.")])))
    assert text.startswith("The code ran, but `df.describe()` printed nothing.")


@pytest.mark.parametrize(
    ("result", "said"),
    [
        (
            "The person declined to run python in the kernel.",
            "You declined to run the code, so I did not describe or plot `df`.",
        ),
        (
            "Agent[4] failed after 0.01 s.\n"
            'Traceback (most recent call last):\n  File "<Agent[4]>", line 3, in <module>\n'
            "NameError: name 'df' is not defined",
            "The code failed in your kernel: `NameError: name 'df' is not defined`.",
        ),
        (
            "Agent[5] failed after 0.02 s.\nWhat it showed first:\n[stdout]\ncount 3\n"
            "Traceback (most recent call last):\n  ...\n"
            "TypeError: no numeric data to plot",
            "The code failed in your kernel: `TypeError: no numeric data to plot`.",
        ),
        ("Tool python not found", "The code did not run: `Tool python not found`."),
        (
            "The kernel did not answer (is the notebook's kernel running?)",
            "The code did not run: `The kernel did not answer (is the notebook's kernel ",
        ),
    ],
)
def test_a_declined_or_failed_python_call_is_said_plainly(result: str, said: str) -> None:
    prompt = cited(PLOT)
    call = python_call(prompt)
    text = text_of(demo_script(python_request(prompt, [(call, result)])))
    assert text.startswith(said)
    assert "card above" not in text and "```" not in text


def test_a_plot_prompt_without_a_citation_names_a_variable_or_asks_for_one() -> None:
    assert "sales.describe()" in python_call("describe `sales` and plot it").arguments["code"]
    assert "sales.describe()" in python_call("please plot sales for me").arguments["code"]
    turn = demo_script(python_request("plot the first column"))
    assert kinds(turn) == [Text]
    assert "$`df`" in text_of(turn) and "DataFrame" in text_of(turn)
    # An agent without the python tool: said, not called.
    turn = demo_script(python_request(cited(PLOT), offered=False))
    assert kinds(turn) == [Text] and "`python` tool" in text_of(turn)


# --------------------------------------------------------------------------- the open notebook

NOTEBOOK_TOOLS = (*DEFAULT_TOOLS, "notebook_read", "notebook_edit", "notebook_run")
LISTING = (
    "Notebook a.ipynb (JupyterLab): 3 cells. Showing cells 1–3.\n"
    "--- cell 1 · id aa · code · ran as [1]\nimport math\n[outputs]\n[stdout] hi\n"
    "--- cell 2 · id bb · code · not run\ndef area(r):\n    return math.pi * r ** 2\n"
    "--- cell 3 · id cc · markdown\n(empty)"
)


def parts(turn: Turn) -> tuple[str, list[ToolCall]]:
    text = "".join(getattr(p, "text", "") for p in turn.parts if isinstance(p, Text))
    return text, [p for p in turn.parts if isinstance(p, ToolCall)]


@pytest.mark.parametrize(
    ("prompt", "wanted"),
    [
        (
            "change cell 2 to `x = 2\\ny = 3`",
            {"operations": [{"op": "replace", "cell_id": "bb", "source": "x = 2\ny = 3"}]},
        ),
        (
            "add a markdown cell after cell 1: `# Setup`",
            {
                "operations": [
                    {"op": "insert", "cell_type": "markdown", "source": "# Setup", "after": "aa"}
                ]
            },
        ),
        (
            "add a code cell at the top: `import os`",
            {
                "operations": [
                    {"op": "insert", "cell_type": "code", "source": "import os", "after": "start"}
                ]
            },
        ),
        ("delete cell 3", {"operations": [{"op": "delete", "cell_id": "cc"}]}),
        ("run cell 1", {"cell_ids": ["aa"]}),
    ],
)
def test_the_demo_reads_the_notebook_then_proposes_the_change_the_prompt_names(prompt, wanted):
    first = demo_script(request(prompt, tools=NOTEBOOK_TOOLS))
    assert parts(first)[1] == [ToolCall("notebook_read", {})]
    read = ToolCall("notebook_read", {})
    _text, calls = parts(demo_script(request(prompt, [(read, LISTING)], tools=NOTEBOOK_TOOLS)))
    assert [c.arguments for c in calls] == [wanted]


def test_explain_inserts_a_markdown_cell_that_names_what_the_code_defines():
    read = ToolCall("notebook_read", {})
    turn = demo_script(request("explain cell 2", [(read, LISTING)], tools=NOTEBOOK_TOOLS))
    (call,) = parts(turn)[1]
    (operation,) = call.arguments["operations"]
    assert operation["op"] == "insert" and operation["after"] == "bb"
    assert operation["source"].startswith("**Cell 2** has 2 lines of code and defines `area`.")


def test_the_demo_says_what_came_of_the_change_and_knows_no_missing_cell():
    read = ToolCall("notebook_read", {})
    missing = demo_script(request("delete cell 9", [(read, LISTING)], tools=NOTEBOOK_TOOLS))
    assert parts(missing) == ("The notebook has no cell 9: it has 3 cells.", [])
    edit = ToolCall("notebook_edit", {"operations": []})
    done = [(read, LISTING), (edit, "Applied to a.ipynb (JupyterLab) (accepted): 1 cell deleted.")]
    said = parts(demo_script(request("delete cell 3", done, tools=NOTEBOOK_TOOLS)))[0]
    assert said == "Done: I deleted cell 3."
    rejected = [(read, LISTING), (edit, "The person rejected the change to the notebook")]
    said = parts(demo_script(request("delete cell 3", rejected, tools=NOTEBOOK_TOOLS)))[0]
    assert said == "You rejected the change, so I left the notebook as it was."


#: What ``notebook_read`` answers while a cell blocks the kernel (a prompt sent with --wait):
#: the tool's error, as the model gets it.
BLOCKED_READ = (
    "The notebook cannot be read or changed while a cell runs and blocks the kernel "
    "(the prompt was sent with --wait, session.wait() or Run All): the page's answer "
    "cannot reach the kernel until that cell ends. Nothing was done. Tell the person "
    "to send the prompt without --wait to let you work on the notebook; the python "
    "and notebook_cells tools still work."
)


@pytest.mark.parametrize("prompt", ["change cell 2 to `x = 7`", "delete cell 2", "run cell 1"])
def test_a_read_that_failed_is_said_with_its_reason_never_as_a_missing_cell(prompt):
    read = ToolCall("notebook_read", {})
    turn = demo_script(request(prompt, [(read, BLOCKED_READ)], tools=NOTEBOOK_TOOLS))
    said, calls = parts(turn)
    assert calls == []  # nothing is tried on a notebook it could not read
    assert said.startswith(
        "I could not read the notebook, so I changed nothing. The `notebook_read` tool said:\n\n"
        "> The notebook cannot be read or changed while a cell runs and blocks the kernel"
    )
    assert "Nothing was done." in said
    assert "no cell" not in said
    assert "Tell the person" not in said  # the tool's words to the model: said in its own
    assert said.endswith(
        "Send the prompt again without `--wait` (the cell then ends at once and the page can "
        "answer), and I can work on the notebook."
    )
    other = demo_script(
        request(prompt, [(read, "The notebook cannot be reached: no page.")], tools=NOTEBOOK_TOOLS)
    )
    assert parts(other)[0] == (
        "I could not read the notebook, so I changed nothing. The `notebook_read` tool said:\n\n"
        "> The notebook cannot be reached: no page."
    )


def test_a_cell_past_what_a_long_notebook_read_showed_is_not_called_missing():
    read = ToolCall("notebook_read", {})
    listing = LISTING.replace("3 cells. Showing cells 1–3.", "40 cells. Showing cells 1–3.")
    turn = demo_script(request("delete cell 30", [(read, listing)], tools=NOTEBOOK_TOOLS))
    assert parts(turn) == (
        "Cell 30 was not in what I read of the notebook, so I changed nothing.",
        [],
    )


APPLIED = "Applied to a.ipynb (JupyterLab) (accepted): 1 cell changed."
RAN = "Ran 1 cell of a.ipynb (JupyterLab):\n--- cell id aa ran as [4]\n[stdout]\nhi\n"


@pytest.mark.parametrize(
    ("prompt", "outcome", "said"),
    [
        ("change cell 2 to `x = 7`", APPLIED, "Done: cell 2 now reads `x = 7`."),
        (
            "change cell 2 to `x = 2\\ny = 3`",
            APPLIED,
            "Done: I changed cell 2; it now starts with `x = 2`.",
        ),
        (
            "add a markdown cell after cell 1: `# Setup`",
            APPLIED,
            "Done: I added a Markdown cell after cell 1.",
        ),
        (
            "add a code cell at the top: `import os`",
            APPLIED,
            "Done: I added a code cell at the top of the notebook.",
        ),
        (
            "add a code cell at the end: `x`",
            APPLIED,
            "Done: I added a code cell at the end of the notebook.",
        ),
        ("explain cell 2", APPLIED, "Done: I added a Markdown cell after cell 2 that explains it."),
        ("run cell 1", RAN, "Done: I ran cell 1. Its first line of output is `hi`."),
        (
            "run cell 1",
            "Ran 1 cell of a.ipynb (JupyterLab):\n--- cell id aa ran as [4]",
            "Done: I ran cell 1. It showed no output.",
        ),
        (
            "run cell 1",
            "Ran 1 cell of a.ipynb (JupyterLab):\n--- cell id aa ran as [4]\n[value]\n[1, 2]",
            "Done: I ran cell 1. Its first line of output is `[1, 2]`.",
        ),
        (
            "run cell 1",
            "The person declined to run cell 1; nothing ran.",
            "You declined to run cell 1, so nothing ran.",
        ),
        (
            "run cell 1",
            "A cell failed in a.ipynb (JupyterLab) (the cells after it did not run):\n"
            "--- cell id aa ran as [5]: error\n[error]\nTraceback\nNameError: name 'y'",
            "Cell 1 failed when it ran. Its last line is `NameError: name 'y'`.",
        ),
        (
            "run cell 1",
            "Cells cannot be run while a cell runs and blocks the kernel (the prompt was sent "
            "with --wait, session.wait() or Run All): they would wait for that cell. Nothing was "
            "run. Tell the person to run the cells, or to send the prompt without --wait.",
            "That did not work. The `notebook_run` tool said:\n\n"
            "> Cells cannot be run while a cell runs and blocks the kernel (the prompt was sent "
            "with --wait, session.wait() or Run All): they would wait for that cell. Nothing was "
            "run.\n\nSend the prompt again without `--wait` (the cell then ends at once and the "
            "page can answer), and I can work on the notebook.",
        ),
        (
            "delete cell 3",
            "The change was not applied: the run ended. Nothing was changed.",
            "That did not work. The `notebook_edit` tool said:\n\n"
            "> The change was not applied: the run ended. Nothing was changed.",
        ),
    ],
)
def test_what_came_of_a_change_or_a_run_is_one_plain_sentence(prompt, outcome, said):
    """Said in the demo's own words: never the tool's first line glued after "Done:" ("Done:
    Ran 1 cell of a.ipynb (JupyterLab): (I am the offline demo model.)")."""
    read = ToolCall("notebook_read", {})
    name = "notebook_run" if prompt.startswith("run") else "notebook_edit"
    results = [(read, LISTING), (ToolCall(name, {}), outcome)]
    answer = parts(demo_script(request(prompt, results, tools=NOTEBOOK_TOOLS)))[0]
    assert answer == said
    assert "offline demo model.)" not in answer and ": (" not in answer


def test_without_the_notebook_tools_a_cell_prompt_is_not_a_notebook_prompt():
    assert intent_of("delete cell 3") == "clean"
    _text, calls = parts(demo_script(request("delete cell 3")))
    assert [c.name for c in calls] == ["bash"]
