"""Prompts, the commands sent like them, their runs, and waiting for a run: the prompts
part of a session (:class:`Prompts`). It builds the runs and sends them through the
session's :class:`~atomic_jupyter.session.commands.CommandChannel`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import replace
from typing import Any, TypeVar

from atomic_jupyter.errors import AgentNotRunningError, AtomicAgentError, CommandTimeoutError
from atomic_jupyter.protocol.messages import AgentEvent, Response
from atomic_jupyter.session.citations import citation_resolver, expand
from atomic_jupyter.session.commands import CommandChannel, as_command, command_result_text
from atomic_jupyter.session.dialog_registry import DialogRegistry
from atomic_jupyter.session.lifecycle import Lifecycle
from atomic_jupyter.session.observers import Listeners, WakeSignal
from atomic_jupyter.session.plugins import Presentation
from atomic_jupyter.session.prompt_images import image_contents
from atomic_jupyter.session.run_tracker import RunTracker
from atomic_jupyter.session.runs import CommandRun, PromptRun
from atomic_jupyter.session.waiting import WaitResult, wait_for_run

__all__ = ["Prompts"]

RunT = TypeVar("RunT", bound=PromptRun)


class Prompts:
    """``prompt``, ``command`` and the commands an extension may pause on a dialog
    (``new_session``, ``bash``, ...), ``stop_run``, ``abort`` and ``wait``: runs sent, shown
    and waited for.

    Parameters
    ----------
    channel:
        Sends the commands (and says when the agent is not running).
    lifecycle:
        Which agent runs and how it ended.
    tracker:
        Follows each run.
    dialogs:
        The session's dialogs (a wait stops for one that needs a person).
    wake:
        Pinged on every change a blocking wait may care about.
    events:
        The listeners of the agent's events (a ``bash`` run's output is forwarded from them).
    presentation:
        Gives the session's presentation (made on first use), or None.
    redact:
        Takes secrets out of the agent's texts.
    wake_note:
        The line saying the agent was just started again after sleeping, once (else None):
        the run of the command that woke it shows it.
    """

    def __init__(
        self,
        channel: CommandChannel,
        lifecycle: Lifecycle,
        tracker: RunTracker,
        dialogs: DialogRegistry,
        wake: WakeSignal,
        events: Listeners[Callable[[AgentEvent], None]],
        *,
        presentation: Callable[[], Presentation | None],
        redact: Callable[[str], str],
        wake_note: Callable[[], str | None] = lambda: None,
    ) -> None:
        self._channel = channel
        self._lifecycle = lifecycle
        self._tracker = tracker
        self._dialogs = dialogs
        self._wake = wake
        self._events = events
        self._presentation = presentation
        self._redact = redact
        self._wake_note = wake_note

    def prompt(
        self,
        /,
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
            The prompt. Values cited in it as ``$`name``` (a name or expression of the
            kernel, ``In[n]``, ``Out[n]``, ``Err``, ``Err[n]``) are sent as readable
            summaries after it; a prompt without citations is sent as written.
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

        Raises
        ------
        CitationError
            When a cited value cannot be given (nothing is sent).
        """
        if not isinstance(text, str):
            raise TypeError(f"a prompt is a str, not {type(text).__name__}")
        if streaming_behavior not in (None, "steer", "followUp"):
            raise ValueError('streaming_behavior is "steer" or "followUp"')
        expanded = expand(text, citation_resolver())
        command = {"type": "prompt", "message": expanded.sent, **fields}
        if images is not None:
            command["images"] = image_contents(images)
        if streaming_behavior is not None:
            command["streamingBehavior"] = streaming_behavior
        run = PromptRun("", text)
        run.sent = expanded.sent
        run.cited = tuple(dict.fromkeys(c.expression for c in expanded.citations))
        return self._send_run(run, command, display=display, shown=shown)

    def command(
        self,
        /,
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
        command = as_command(command, fields)
        kind = str(command.get("type", ""))
        self._lifecycle.agent.require_command(kind)
        run = CommandRun("", command, label or kind)
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
        presentation = self._presentation() if display or shown else None
        run.shown = shown if shown is not None else bool(presentation and presentation.displays)
        if run.shown and presentation is not None:
            presentation.prepare_run(run)  # built before the prompt goes out: no event is missed
        pending = self._channel.prepare(command)
        run.id = pending.id
        self._tracker.sent(run)  # before the answer can come, and before any event of the run
        woke = self._wake_note()
        if woke:
            run.transcript.note(woke)

        def settle(future: Future[Response]) -> None:
            error = future.exception()
            response = None if error is not None else future.result()
            if response is not None and response.error:
                response = replace(response, error=self._redact(response.error))
            if isinstance(run, CommandRun) and response is not None and response.success:
                text = command_result_text(run.kind, response.data)
                if text:
                    run.transcript.note(self._redact(text), kind="result")
            self._tracker.answered(run, response, None if error is None else str(error))

        # Before the write: the answer, and the whole run after it, may come before this
        # thread runs again, and the run's end is only recognised once it is answered.
        pending.add_done_callback(settle)
        try:
            self._channel.write(pending)
        except AgentNotRunningError:  # the future is forgotten: settle never runs
            self._tracker.discard(run)
            raise
        if display and presentation is not None:
            presentation.display_run(run)
        return run

    # ------------------------------------------------------------------ commands sent as runs

    def _pausable(self, kind: str, display: bool, shown: bool | None, **fields: Any) -> CommandRun:
        command = as_command(kind, fields, given=True)
        return self.command(command, display=display, shown=shown)

    def new_session(
        self,
        parent_session: str | None = None,
        *,
        display: bool = True,
        shown: bool | None = None,
    ) -> CommandRun:
        """Start a fresh conversation; returns at once (an extension may ask first, in a
        dialog under the cell). ``.result()`` is ``{"cancelled": bool}``."""
        return self._pausable("new_session", display, shown, parentSession=parent_session)

    def switch_session(
        self, session_path: str, *, display: bool = True, shown: bool | None = None
    ) -> CommandRun:
        """Load another session file; returns at once, as :meth:`new_session` does."""
        return self._pausable("switch_session", display, shown, sessionPath=session_path)

    def fork(self, entry_id: str, *, display: bool = True, shown: bool | None = None) -> CommandRun:
        """Branch the conversation at an earlier user message (``get_fork_messages`` lists
        them); returns at once. ``.result()`` is ``{"text": ..., "cancelled": bool}``."""
        return self._pausable("fork", display, shown, entryId=entry_id)

    def clone(self, *, display: bool = True, shown: bool | None = None) -> CommandRun:
        """Copy the current branch into a new session; returns at once."""
        return self._pausable("clone", display, shown)

    def compact(
        self,
        custom_instructions: str | None = None,
        *,
        display: bool = True,
        shown: bool | None = None,
    ) -> CommandRun:
        """Summarise the conversation to free context (a model call; an extension may ask
        first or do it itself); returns at once. ``.result()`` has the summary and
        ``tokensBefore``."""
        return self._pausable("compact", display, shown, customInstructions=custom_instructions)

    def bash(
        self,
        command: str,
        *,
        on_output: Callable[[str], None] | None = None,
        display: bool = True,
        shown: bool | None = None,
    ) -> CommandRun:
        """Run a shell command; its output joins the context of the next prompt. Returns at
        once (a ``user_bash`` handler of an extension may ask first).

        ``.result()`` is ``{"output", "exitCode", "cancelled", "truncated"[,
        "fullOutputPath"]}``. ``on_output(text)`` is called with each piece of output as it
        comes (the current agent line streams it as ``bash_execution_update``; the 0.73 line
        does not, so then the output comes only in the result). It runs on the reader
        thread: keep it short.
        """
        if on_output is None:
            return self._pausable("bash", display, shown, command=command)
        cid = f"aj-bash-{uuid.uuid4().hex[:12]}"

        def forward(event: AgentEvent) -> None:
            if event.type == "bash_execution_update" and event.get("id") == cid:
                delta = event.get("delta")
                if isinstance(delta, str) and delta:
                    on_output(delta)

        subscription = self._events.add(forward)
        try:
            run = self._pausable("bash", display, shown, command=command, id=cid)
        except BaseException:
            subscription.remove()
            raise
        run.when_answered(lambda _run: subscription.remove())
        return run

    # ------------------------------------------------------------------ stopping

    def abort(self, timeout: float | None = None) -> Any:
        """Abort the current run; its pending dialogs are cancelled first.

        The agent's abort waits for an extension's open dialog, so the dialogs go first.
        """
        self.cancel_dialogs(None, "abort")
        return self._channel.abort(timeout)

    def stop_run(self, run: PromptRun | None = None) -> None:
        """Abort without waiting (the Stop button): cancel the run's dialogs, send ``abort``."""
        self.cancel_dialogs(run, "stop")
        pending = self._channel.send({"type": "abort"})

        def settle(future: Future[Response]) -> None:
            error = future.exception()
            response = None if error is not None else future.result()
            if run is not None and (error or (response is not None and not response.success)):
                why = error or (response.error if response is not None else "")
                run.transcript.note(f"could not stop the run: {why}", "error")
                self._tracker.changed.emit(run, "stream")

        pending.add_done_callback(settle)

    def cancel_dialogs(self, run: PromptRun | None, by: str) -> None:
        """Cancel the pending dialogs of ``run`` and those of no run (every one when ``run``
        is None); ``by`` says who (``"stop"``, ``"abort"``)."""
        for dialog in self._dialogs.pending():
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
        presentation = self._presentation()
        run = run or self._latest_run()
        pending = self._dialogs.pending
        try:
            result = wait_for_run(
                run,
                timeout=timeout,
                wake=self._wake,
                pending_dialogs=(
                    (lambda: [d for d in pending() if d.host is run])
                    if isinstance(run, CommandRun)
                    else pending
                ),
                alive=lambda: self._channel.alive,
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
                result.tell(self._lifecycle.exit_code)
        return result

    def _latest_run(self) -> PromptRun | None:
        """The run a wait without one waits for: the newest, unless it is a command that is
        over (the prompt before it may still be going)."""
        runs = self._tracker.runs
        going = [r for r in runs if not (isinstance(r, CommandRun) and r.finished)]
        return going[-1] if going else (runs[-1] if runs else None)

    def _ended_while_idle(self, run: PromptRun) -> bool:
        """A wait ran out of time: if the agent is idle with nothing queued, the run is over
        whatever the events said (a way to end that the tracker did not foresee)."""
        if not run.answered or not self._channel.alive:
            return False
        self._tracker.end_if_idle(run)
        return run.wait_done(5)
