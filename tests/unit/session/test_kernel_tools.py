"""The session's side of kernel calls, one layer alone (no agent, no kernel): which editor
requests are kernel calls, what a forged or malformed one gets, where a call runs."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from atomic_jupyter.protocol.messages import EditorRequest, UIResponse
from atomic_jupyter.session import kernel_tools
from atomic_jupyter.session.kernel_tools import CALL_PREFIX, KernelTools


class Channel:
    def __init__(self) -> None:
        self.secret: str | None = "s3cret"
        self.published: list[list[dict[str, Any]]] = []

    def publish(self, specs: list[dict[str, Any]]) -> None:
        self.published.append(specs)


def twice(x: int) -> int:
    """Twice x."""
    return 2 * x


@pytest.fixture
def tools(monkeypatch) -> tuple[KernelTools, Channel, list[UIResponse], list]:
    monkeypatch.setattr(kernel_tools, "_summary", [])  # results as a plain repr
    monkeypatch.setattr(kernel_tools, "_builtins", [])  # the exposed functions alone
    channel, answers, queued, notes = Channel(), [], [], []
    made = KernelTools(
        channel=lambda: channel,
        answer=answers.append,
        run_on_main=lambda: queued.append,
        wake=lambda: None,
        diagnose=notes.append,
    )
    made.expose(twice)
    return made, channel, answers, queued


def call(title: str, prefill: str) -> EditorRequest:
    return EditorRequest("r1", title=title, prefill=prefill)


def answer_of(answers: list[UIResponse]) -> dict[str, Any]:
    (only,) = answers
    return json.loads(only.to_dict()["value"])


def test_a_call_with_the_secret_is_queued_for_the_main_thread_then_answered(tools):
    made, channel, answers, queued = tools
    assert channel.published[-1][0]["name"] == "twice"
    payload = json.dumps({"tool": "twice", "args": {"x": 21}})
    assert made.claims(call(CALL_PREFIX + "s3cret", payload))
    assert answers == [] and len(queued) == 1  # not run on this (the reader) thread
    queued[0]()
    assert answer_of(answers) == {"ok": True, "text": "42"}


@pytest.mark.parametrize("title", [CALL_PREFIX + "wrong", CALL_PREFIX, CALL_PREFIX + "s3cret2"])
def test_a_call_without_the_secret_is_refused_and_nothing_runs(tools, title):
    made, _channel, answers, queued = tools
    assert made.claims(call(title, json.dumps({"tool": "twice", "args": {"x": 1}})))
    assert queued == []
    assert answer_of(answers)["ok"] is False and "secret" in answer_of(answers)["error"]


def test_a_function_not_exposed_cannot_be_called(tools):
    made, _channel, answers, queued = tools
    assert made.claims(call(CALL_PREFIX + "s3cret", json.dumps({"tool": "print", "args": {}})))
    assert queued == []
    assert answer_of(answers) == {
        "ok": False,
        "error": "'print' is not a function the notebook exposed",
    }


def test_other_editors_are_dialogs_for_a_person(tools):
    made, *_ = tools
    assert not made.claims(call("Edit the plan", "atomic-kernel-call s3cret"))
    assert not made.claims(call("atomic-kernel-callx", "{}"))


def test_bad_arguments_and_malformed_calls_are_errors_for_the_model(tools):
    made, _channel, answers, queued = tools
    made.claims(call(CALL_PREFIX + "s3cret", json.dumps({"tool": "twice", "args": {"x": "a"}})))
    queued[0]()
    assert answer_of(answers)["ok"] is False and "x" in answer_of(answers)["error"]
    answers.clear()
    made.claims(call(CALL_PREFIX + "s3cret", "not json"))
    assert "not {tool, args}" in answer_of(answers)["error"]


def test_unexpose_publishes_what_is_left(tools):
    made, channel, *_ = tools
    made.unexpose("twice")
    assert channel.published[-1] == [] and made.exposed == {}
    with pytest.raises(KeyError):
        made.unexpose("twice")


def test_an_interrupted_call_is_answered_before_the_interrupt_goes_on(tools):
    made, _channel, answers, queued = tools

    def stuck(x: int) -> int:
        """Interrupted."""
        raise KeyboardInterrupt

    made.expose(stuck)
    made.claims(call(CALL_PREFIX + "s3cret", json.dumps({"tool": "stuck", "args": {"x": 1}})))
    with pytest.raises(KeyboardInterrupt):
        queued[0]()
    assert answer_of(answers)["ok"] is False and "KeyboardInterrupt" in answer_of(answers)["error"]


def test_expose_returns_nothing_so_a_cells_last_line_prints_nothing(tools):
    made, channel, *_ = tools

    def thrice(x: int) -> int:
        """Thrice x."""
        return 3 * x

    assert made.expose(thrice) is None
    assert [spec["name"] for spec in channel.published[-1]] == ["twice", "thrice"]


def test_a_kernel_call_queued_behind_an_interrupted_one_still_gets_its_answer(monkeypatch):
    """Two calls wait for the kernel's thread in one batch; the first is interrupted: it is
    answered and the interrupt goes on, and the second still runs at the next flush and is
    answered (it was dropped with the batch, and the agent's tool call waited for ever)."""
    from atomic_jupyter.ui.dispatch import UiDispatcher

    monkeypatch.setattr(kernel_tools, "_summary", [])
    monkeypatch.setattr(kernel_tools, "_builtins", [])
    main_work = UiDispatcher()  # this thread is the kernel's; no loop: flushes run the work
    answers: list[UIResponse] = []
    made = KernelTools(
        channel=lambda: Channel(),
        answer=answers.append,
        run_on_main=lambda: main_work.call,
        wake=lambda: None,
        diagnose=lambda _note: None,
    )

    def stuck(x: int) -> int:
        """Interrupted."""
        raise KeyboardInterrupt

    made.expose(stuck)
    made.expose(twice)

    def the_agent_calls() -> None:  # on the reader thread: both queued for the kernel's
        for rid, tool in (("r1", "stuck"), ("r2", "twice")):
            payload = json.dumps({"tool": tool, "args": {"x": 21}})
            assert made.claims(EditorRequest(rid, title=CALL_PREFIX + "s3cret", prefill=payload))

    reader = threading.Thread(target=the_agent_calls, name="reader")
    reader.start()
    reader.join(30)
    assert answers == [] and main_work.pending
    with pytest.raises(KeyboardInterrupt):
        main_work.flush()
    assert [a.to_dict()["id"] for a in answers] == ["r1"]
    main_work.flush()
    (_interrupted, second) = answers
    assert second.to_dict()["id"] == "r2"
    assert json.loads(second.to_dict()["value"]) == {"ok": True, "text": "42"}
    assert not main_work.pending
