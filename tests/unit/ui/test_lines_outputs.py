"""The outputs of lines and buttons without a kernel (the saved conversations' listing, an
install and its offer, the bash live view): what the page draws, what a click does, and the
record each leaves. Through a real kernel: tests/kernel/test_saved_conversations.py,
tests/kernel/test_install.py, tests/kernel/test_agent_lines.py."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from atomic_jupyter.transport.agent_install import Progress
from atomic_jupyter.ui.conversations_view import ConversationsView
from atomic_jupyter.ui.install_view import InstallOffer, InstallProgress, InstallView
from atomic_jupyter.ui.live_output import LIVE_CHARS, LiveOutput
from tests.harness.output_page import page_tree, press


def buttons(output: ConversationsView | InstallOffer) -> list[tuple[str, bool]]:
    """Each button the page draws: its text, and whether it can be pressed."""
    tree = page_tree(output.widget)
    return [(b.text, "disabled" not in b.attrs) for b in tree.find_all("jupyter-button")]


def texts(output: object, cls: str) -> list[str]:
    return [e.text for e in page_tree(output.widget).find_all(cls)]  # type: ignore[attr-defined]


def listing(actions: list[Callable[[], str] | None]) -> ConversationsView:
    rows = [(f"conversation {i} <b>", action) for i, action in enumerate(actions)]
    return ConversationsView("Saved conversations:", rows)


def test_the_listing_draws_a_resume_button_for_each_conversation_that_can_go_on() -> None:
    view = listing([lambda: "one", None])
    assert texts(view, "atomic-conversation") == ["conversation 0 <b>", "conversation 1 <b>"]
    assert buttons(view) == [("Resume", True)]  # the second cannot be continued
    record = view.record()
    assert record.plain == "Saved conversations:\nconversation 0 <b>\nconversation 1 <b>"
    assert "<button" not in record.html and "conversation 0 &lt;b&gt;" in record.html


def test_a_resume_says_what_it_did_and_the_record_keeps_it() -> None:
    said: list[list[tuple[str, bool]]] = []
    view = listing([lambda: "first", lambda: said.append(buttons(view)) or "Session 'x' went on."])
    press(view.widget, {"type": "resume", "row": "1"})
    assert said == [[("Resume", False), ("Resuming…", False)]]  # both wait while it runs
    assert buttons(view) == [("Resume", True), ("Resumed", True)]
    assert texts(view, "atomic-conversations-said") == ["Session 'x' went on."]
    assert view.record().plain.endswith("Session 'x' went on.")


def test_a_failed_resume_is_shown_below_and_the_buttons_come_back() -> None:
    def fails() -> str:
        raise RuntimeError("the agent <would not> start")

    view = listing([fails])
    press(view.widget, {"type": "resume", "row": "0"})
    assert texts(view, "atomic-conversations-error") == [
        "RuntimeError: the agent <would not> start"
    ]
    assert buttons(view) == [("Resume", True)]


@pytest.mark.parametrize(
    "message",
    [
        {"type": "resume", "row": "7"},  # no such row
        {"type": "resume", "row": "x"},
        {"type": "resume"},
        {"type": "resume", "row": "1"},  # a row that cannot be continued
        {"type": "install", "row": "0"},  # another output's message
    ],
)
def test_a_message_for_no_row_resumes_nothing(message: dict[str, str]) -> None:
    ran: list[str] = []
    view = listing([lambda: ran.append("ran") or "ok", None])
    press(view.widget, message)
    assert ran == [] and buttons(view) == [("Resume", True)]


def test_a_second_click_while_a_resume_runs_does_nothing() -> None:
    ran: list[str] = []

    def resume() -> str:
        ran.append("ran")
        press(view.widget, {"type": "resume", "row": "0"})  # a click on its way meanwhile
        return "done"

    view = listing([resume])
    press(view.widget, {"type": "resume", "row": "0"})
    assert ran == ["ran"]


def test_an_install_shows_its_bar_moving_forward_then_its_result() -> None:
    view = InstallView("pi 1.6.0")
    view.update(Progress("downloading", "12 of 40 packages", 12, 40))
    view.update(Progress("preparing", "going back?"))  # the bar never moves back
    (bar,) = page_tree(view.widget).find_all("atomic-install-bar")
    assert float(bar.attrs["value"]) == pytest.approx(0.05 + 0.85 * 12 / 40, abs=1e-3)
    assert texts(view, "atomic-install-status") == ["going back?"]
    assert view.progress.steps == ["downloading", "preparing"]
    view.finish(True, "Installed pi 1.6.0\ninto /somewhere")
    assert texts(view, "atomic-install-result") == ["Installed pi 1.6.0\ninto /somewhere"]
    assert view.record().plain == "Installed pi 1.6.0\ninto /somewhere"
    view.close()
    assert view.widget.comm is None


def test_the_offer_installs_once_then_says_so_and_a_failure_offers_another_try() -> None:
    calls: list[InstallProgress] = []
    outcome: list[BaseException] = [RuntimeError("registry unreachable")]

    def install(progress: InstallProgress) -> None:
        calls.append(progress)
        progress.update(Progress("downloading", "1 of 2", 1, 2))
        if outcome:
            raise outcome.pop()

    offer = InstallOffer("Install pi and start", "pi 1.6.0", install)
    assert buttons(offer) == [("Install pi and start", True)]
    press(offer.widget, {"type": "install"})
    assert buttons(offer) == [("Try again", True)]
    assert texts(offer, "atomic-install-error") == ["RuntimeError: registry unreachable"]
    press(offer.widget, {"type": "install"})
    assert buttons(offer) == [("Installed and started", False)]
    assert texts(offer, "atomic-install-error") == []
    press(offer.widget, {"type": "install"})  # a late click: nothing more
    assert len(calls) == 2


def test_the_live_view_keeps_the_newest_text_as_text_and_leaves_no_record() -> None:
    live = LiveOutput()
    live.append("<script>x</script>\n")
    (shown,) = texts(live, "atomic-live-text")
    assert shown == "<script>x</script>\n"
    live.append("y" * LIVE_CHARS)
    assert len(live.text) == LIVE_CHARS and live.text.endswith("y")
    assert live.record().html == ""  # the command's result is the record
    live.close()
    live.append("late")  # after the answer: nothing
    assert live.text.endswith("y")


def test_a_display_made_final_closes_its_output_once_in_ipython_or_not() -> None:
    """A ``LiveDisplay`` is the one owner of its output's life: made final (its record in its
    place, in IPython), it closes what made the output, once, however often it is made final
    (a stop sends the records again)."""
    from atomic_jupyter.notebook.presentation import LiveDisplay
    from atomic_jupyter.ui.record import text_record

    live = LiveOutput()
    shown = LiveDisplay(live.widget, lambda: text_record("done"), close=live.close)
    live.append("some output\n")
    shown.make_final()
    assert live.closed and live.widget.finished  # outside IPython too: nothing keeps it
    live.closed = False  # a second close would show here
    shown.make_final(again=True)
    assert not live.closed
