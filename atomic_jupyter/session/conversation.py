"""Prompts, their runs and the dialogs they raise: the conversation methods of a session
(a mixin of AgentSession, on top of its client, run tracker, policies and presentation).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from atomic_jupyter.errors import AgentNotRunningError, AtomicAgentError, CommandTimeoutError
from atomic_jupyter.protocol.messages import Response, SelectRequest
from atomic_jupyter.session.commands import AgentCommands, command_result_text
from atomic_jupyter.session.dialogs import Dialog
from atomic_jupyter.session.images import image_contents
from atomic_jupyter.session.observers import Listeners, WakeSignal
from atomic_jupyter.session.policies import CANCEL, Policy, PolicyBook
from atomic_jupyter.session.runs import CommandRun, PromptRun
from atomic_jupyter.session.waiting import WaitResult, wait_for_run

if TYPE_CHECKING:
    from atomic_jupyter.session.extension_ui import ExtensionUiState
    from atomic_jupyter.session.plugins import Presentation
    from atomic_jupyter.session.run_tracker import RunTracker
    from atomic_jupyter.transport.client import AgentClient, PendingCommand

__all__ = ["ConversationMethods"]

RunT = TypeVar("RunT", bound=PromptRun)


class ConversationMethods(AgentCommands):
    """``prompt``, ``abort``, ``stop_run``, ``wait`` and the answer policies."""

    client: AgentClient
    tracker: RunTracker
    extension_ui: ExtensionUiState
    _policies: PolicyBook
    _wake: WakeSignal

    # Provided by AgentSession.
    pending_dialogs: list[Dialog]
    runs: list[PromptRun]
    returncode: int | None

    @property
    def presentation(self) -> Presentation | None:
        raise NotImplementedError

    @property
    def alive(self) -> bool:
        raise NotImplementedError

    def _check_running(self) -> None:
        raise NotImplementedError

    def _not_running_error(self) -> AgentNotRunningError:
        raise NotImplementedError

    def _send(self, command: Mapping[str, Any]) -> PendingCommand:
        raise NotImplementedError

    def prompt(
        self,
        text: str,
        *,
        images: Any = None,
        streaming_behavior: str | None = None,
        display: bool = True,
        shown: bool | None = None,
        **fields: Any,
    ) -> PromptRun:
        """Send a prompt (or an extension command such as ``"/name"``) and return at once.

        The run's transcript (streamed text, tool calls, dialogs) is shown in the run's
        output area, displayed in the current cell when ``display`` is true and IPython
        runs. Use :meth:`wait` to block until the run ends.

        Parameters
        ----------
        text:
            The prompt.
        images:
            Images sent with it: paths, bytes or PIL images (one, or a list).
        streaming_behavior:
            ``"steer"`` or ``"followUp"``: how to queue the prompt while a run is going.
        display:
            Display the run's area in the current cell.
        shown:
            Whether the run's area will be on the page (by default, when it is displayed);
            a view that places the area itself (the panel's Send) passes True.
        fields:
            More fields for the ``prompt`` command.
        """
        if not isinstance(text, str):
            raise TypeError(f"a prompt is a str, not {type(text).__name__}")
        if streaming_behavior not in (None, "steer", "followUp"):
            raise ValueError('streaming_behavior is "steer" or "followUp"')
        command = {"type": "prompt", "message": text, **fields}
        if images is not None:
            command["images"] = image_contents(images)
        if streaming_behavior is not None:
            command["streamingBehavior"] = streaming_behavior
        return self._send_run(PromptRun("", text), command, display=display, shown=shown)

    def command(
        self,
        command: Mapping[str, Any] | str,
        *,
        display: bool = True,
        shown: bool | None = None,
        label: str | None = None,
        **fields: Any,
    ) -> CommandRun:
        """Send a command that the agent may pause on an extension's dialog, and return at once.

        ``new_session``, ``switch_session``, ``fork``, ``clone``, ``compact`` and ``bash``
        let extensions intercept them (``session_before_switch``, ``session_before_compact``,
        ``user_bash``, ...), and an extension may ask a person first. So the command is
        sent like a prompt: its area (shown in the current cell when ``display`` is true)
        holds its dialogs and then its result, and the returned
        :class:`~atomic_jupyter.session.runs.CommandRun` gives the result
        (:meth:`~atomic_jupyter.session.runs.CommandRun.result`); :meth:`wait` waits for it
        and stops early when one of its dialogs needs a person. Any command can be sent this
        way; the magic sends ``steer`` and ``follow_up`` (an extension's ``input`` hook may
        ask first) and ``set_model`` and ``cycle_model`` (``model_select`` hooks) so too.

        Parameters
        ----------
        command:
            The command as a dict, or its type with the other fields as keyword arguments.
        display, shown:
            As for :meth:`prompt`.
        label:
            The line that heads its area (by default, the command's type).
        """
        if isinstance(command, str):
            command = {"type": command, **fields}
        elif fields:
            command = {**command, **fields}
        kind = str(command.get("type", ""))
        self.agent.require_command(kind)
        if kind in ("steer", "follow_up") and isinstance(command.get("message"), str):
            self.tracker.injected(command["message"])  # not a prompt of its own
        run = CommandRun("", dict(command), label or kind)
        return self._send_run(run, command, display=display, shown=shown)

    def _send_run(
        self,
        run: RunT,
        command: Mapping[str, Any],
        *,
        display: bool,
        shown: bool | None,
    ) -> RunT:
        """Write a prompt's or a command's run, its area prepared first; return it."""
        presentation = self.presentation if display or shown else None
        run.shown = shown if shown is not None else bool(presentation and presentation.displays)
        if run.shown and presentation is not None:
            presentation.prepare_run(run)  # built before the prompt goes out: no event is missed
        self._check_running()
        pending = self.client.prepare(command)
        run.id = pending.id
        self.tracker.sent(run)  # before the answer can come, and before any event of the run
        redact = self.extension_ui.redact

        def settle(future: Future[Response]) -> None:
            error = future.exception()
            response = None if error is not None else future.result()
            if response is not None and response.error:
                response = replace(response, error=redact(response.error))
            if isinstance(run, CommandRun) and response is not None and response.success:
                text = command_result_text(run.kind, response.data)
                if text:
                    run.transcript.note(redact(text), kind="result")
            self.tracker.answered(run, response, None if error is None else str(error))

        # Before the write: the answer, and the whole run after it, may come before this
        # thread runs again, and the run's end is only recognised once it is answered.
        pending.add_done_callback(settle)
        try:
            self.client.write(pending)
        except AgentNotRunningError:  # the future is forgotten: settle never runs
            self.tracker.discard(run)
            raise self._not_running_error() from None
        if display and presentation is not None:
            presentation.display_run(run)
        return run

    def abort(self, timeout: float | None = None) -> Any:
        """Abort the current run; its pending dialogs are cancelled first.

        The agent's abort waits for an extension's open dialog, so the dialogs go first.
        """
        self._cancel_dialogs(None, "abort")
        return super().abort(timeout)

    def stop_run(self, run: PromptRun | None = None) -> None:
        """Abort without waiting (the Stop button): cancel the run's dialogs, send ``abort``."""
        self._cancel_dialogs(run, "stop")
        pending = self._send({"type": "abort"})

        def settle(future: Future[Response]) -> None:
            error = future.exception()
            response = None if error is not None else future.result()
            if run is not None and (error or (response is not None and not response.success)):
                why = error or (response.error if response is not None else "")
                run.transcript.note(f"could not stop the run: {why}", "error")
                self.tracker.changed.emit(run, "stream")

        pending.add_done_callback(settle)

    def _cancel_dialogs(self, run: PromptRun | None, by: str) -> None:
        for dialog in self.pending_dialogs:
            if run is None or dialog.host is run or dialog.host is None:
                try:
                    dialog.cancel(by=by)
                except AtomicAgentError:
                    pass

    def wait(
        self, timeout: float | None = None, *, run: PromptRun | None = None, quiet: bool = False
    ) -> WaitResult:
        """Block until the latest run ends; keep its transcript updating meanwhile.

        A running cell keeps the kernel from delivering clicks, so the wait also ends early
        when a dialog needs an answer that no policy gives, and says so (a notice on stdout;
        an agent that exited, on stderr, unless ``quiet``): answer it where it is shown, then
        wait again. Use it for "Run All", nbval and papermill.

        Returns
        -------
        WaitResult
            ``reason`` is ``"finished"``, ``"dialog"`` (with the ``dialog``), or ``"exited"``;
            it is true only when the run finished.

        Raises
        ------
        CommandTimeoutError
            When the run is still going after ``timeout`` seconds.
        """
        presentation = self.presentation
        run = run or self._latest_run()
        try:
            result = wait_for_run(
                run,
                timeout=timeout,
                wake=self._wake,
                pending_dialogs=(
                    (lambda: [d for d in self.pending_dialogs if d.host is run])
                    if isinstance(run, CommandRun)
                    else lambda: self.pending_dialogs
                ),
                alive=lambda: self.alive,
                pump=presentation.pump if presentation is not None else lambda: None,
            )
        except CommandTimeoutError:
            if run is None or not self._ended_while_idle(run):
                raise
            result = WaitResult("finished", run)
        if not quiet:
            if (
                result.reason == "dialog"
                and result.dialog is not None
                and presentation is not None
                and presentation.displays
            ):
                presentation.notice_dialog(result.dialog)  # updated once the dialog is settled
            else:
                result.tell(self.returncode)
        return result

    def _latest_run(self) -> PromptRun | None:
        """The run a wait without one waits for: the newest, unless it is a command that is
        over (the prompt before it may still be going)."""
        runs = self.runs
        going = [r for r in runs if not (isinstance(r, CommandRun) and r.finished)]
        return going[-1] if going else (runs[-1] if runs else None)

    def _ended_while_idle(self, run: PromptRun) -> bool:
        """A wait ran out of time: if the agent is idle with nothing queued, the run is over
        whatever the events said (a way to end that the tracker did not foresee)."""
        if not run.answered or not self.alive:
            return False
        self.tracker.end_if_idle(run)
        return run.wait_done(5)

    # ------------------------------------------------------------------ answer policies

    def answer_with(
        self, answer: Any, *, method: str | None = None, title: str | None = None
    ) -> Policy:
        """Answer future dialogs without a human.

        Parameters
        ----------
        answer:
            A value (str for select, input and editor; bool for confirm), ``"cancel"`` or
            :data:`~atomic_jupyter.session.policies.CANCEL`, or a callable that gets the
            request dict and returns one of those, or None to leave the dialog to a person.
        method:
            Only dialogs of this method (``"select"``, ``"confirm"``, ``"input"``, ``"editor"``).
        title:
            Only dialogs whose title matches this regular expression (``re.search``).

        Returns
        -------
        Policy
            The policy added (remove it with :meth:`remove_policy`). Dialogs already
            pending that it covers are answered at once.
        """
        policy = Policy(CANCEL if answer == "cancel" else answer, method=method, title=title)
        self._policies.add(policy, pending=self.pending_dialogs)
        return policy

    @property
    def policy_changes(self) -> Listeners[Callable[[], None]]:
        """Listeners called after an answer policy (or rule) is added or removed."""
        return self._policies.changed

    def make_rule(self, dialog: Dialog) -> Policy:
        """Make a dialog's answer the rule for the rest of the session: later dialogs of the
        same method and title are answered the same way, with no click (their outcome says
        "(rule)"). The rule is listed in :attr:`policies` and in the panel, where it can be
        removed (or use :meth:`remove_policy`).

        Raises
        ------
        ValueError
            When the dialog was not answered or cancelled (there is nothing to repeat).
        """
        if dialog.state == "cancelled":
            answer: Any = CANCEL
        elif dialog.state == "answered" and dialog.answer is not None:
            answer = dialog.answer
        else:
            raise ValueError(f"the dialog {dialog.title!r} was {dialog.state}: no answer to repeat")
        shown, exact = dialog.shown, dialog.typed
        if (
            isinstance(shown, SelectRequest)
            and isinstance(exact, SelectRequest)
            and (answer not in exact.options or list(shown.options).count(answer) != 1)
        ):
            raise ValueError(
                "the option chosen had a secret taken out of it, or looks like another: "
                "it cannot be repeated safely"
            )
        policy = Policy.exactly(dialog.method, dialog.title, answer)
        self._policies.add(policy, pending=self.pending_dialogs)
        dialog.add_note("made the rule for this session")
        return policy

    def remove_policy(self, policy: Policy | None = None) -> None:
        """Remove one policy, or all of them when ``policy`` is None."""
        self._policies.remove(policy)
