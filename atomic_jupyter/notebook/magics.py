"""``%atomic_agent`` and ``%%atomic_agent``: argument parsing over the Python API, nothing more."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from atomic_jupyter.errors import AgentNotInstalledError, AtomicAgentError, CommandTimeoutError
from atomic_jupyter.notebook import agent_code, api, conversation_listing, installing, registry
from atomic_jupyter.notebook.config import AtomicAgent, registered_settings
from atomic_jupyter.notebook.presentation import (
    LiveDisplay,
    presentation_of,
    show_panel,
    view_of,
)
from atomic_jupyter.session.commands import bash_result_text, disposition_text
from atomic_jupyter.session.policies import parse_answer
from atomic_jupyter.transport.agent_install import LINES
from atomic_jupyter.ui.ansi import strip_ansi
from atomic_jupyter.ui.live_output import LiveOutput
from atomic_jupyter.ui.prototype_view import PrototypeView
from atomic_jupyter.ui.record import text_record

__all__ = ["AtomicAgentMagics", "AtomicExtensionMagics", "status_text"]

#: Actions whose argument is free text, taken from the line as typed (quotes and all).
TEXT_ACTIONS = {"steer", "follow_up", "bash", "name", "compact"}
#: Actions that send one command without arguments and print its data.
PLAIN_ACTIONS = {
    "abort": "abort",
    "state": "get_state",
    "messages": "get_messages",
    "stats": "get_session_stats",
    "commands": "get_commands",
    "entries": "get_entries",
    "tree": "get_tree",
    "clear_queue": "clear_queue",
    "models": "get_available_models",
    "cycle_thinking": "cycle_thinking_level",
}
ACTIONS = [
    "start", "stop", "restart", "status", "show", "wait", "policy", "new", "cycle_model",
    "install", "doctor", "fix", "conversations", "sessions", "cells",
    "model", "thinking", "export", *sorted(TEXT_ACTIONS), *sorted(PLAIN_ACTIONS),
]  # fmt: skip


#: What ``%atomic_agent fix`` sends: the last failed cell (its source and traceback) cited.
FIX_PROMPT = (
    "Explain the last error in this notebook and fix it: what went wrong, why, and the "
    "corrected code. $`Err`"
)


class MagicUsageError(AtomicAgentError):
    """The magic was called with arguments it does not take."""


def _tokens(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise MagicUsageError(f"could not read the arguments: {exc}") from None


def _split_extra(tokens: list[str]) -> tuple[list[str], list[str]]:
    """Split at a ``--`` token: the magic's own arguments, then the agent's."""
    if "--" not in tokens:
        return tokens, []
    cut = tokens.index("--")
    return tokens[:cut], tokens[cut + 1 :]


def _parse_env(pairs: list[str] | None) -> dict[str, str]:
    env: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise MagicUsageError(f"--env takes KEY=VALUE, not {pair.split('=')[0]!r}")
        env[key] = value
    return env


_LEADING_OPTION = re.compile(r"\s*--(name|timeout)(?:=|\s+)(\S+)")


def _text_action(rest: str) -> tuple[dict[str, str], str]:
    """Leading ``--name X`` / ``--timeout S`` options, then the raw text."""
    options: dict[str, str] = {}
    while True:
        match = _LEADING_OPTION.match(rest)
        if not match:
            return options, rest.strip()
        options[match.group(1)] = match.group(2)
        rest = rest[match.end() :]


_LATER = object()


def _command_result(session: Any, run: Any) -> Any:
    """Wait for a command that may pause on a dialog: its data when it is answered soon,
    else ``_LATER`` once its area (where the dialog and then the result appear) is shown
    under the cell: a running cell would keep the kernel from delivering the click."""
    try:
        result = session.wait(timeout=session.config.request_timeout, run=run, quiet=True)
    except CommandTimeoutError:
        result = None
    if result is not None and result.reason != "dialog":
        return run.data  # raises the agent's error, as a plain command would
    presentation = session.presentation
    if presentation is not None:
        presentation.display_run(run)
    if result is None:
        print(f"Still waiting for the agent's answer to {run.kind!r}; it will show here.")
    return _LATER


def _send(session: Any, kind: str, **fields: Any) -> Any:
    """Send a command that may pause on a dialog (its area prepared, not displayed) and wait
    for it as :func:`_command_result` does; fields given as None are left out."""
    command = {"type": kind, **{k: v for k, v in fields.items() if v is not None}}
    return _command_result(session, session.command(command, display=False, shown=True))


def _config(magics: Magics) -> AtomicAgent:
    return registered_settings(magics.shell)


def _print_later(data: Any) -> None:
    if data is not _LATER:
        _print_data(data)


def _print_queue(data: Any) -> None:
    steering = data.get("steering", []) if isinstance(data, dict) else []
    follow_up = data.get("followUp", []) if isinstance(data, dict) else []
    if not steering and not follow_up:
        print("The queue was empty.")
        return
    print(f"Removed {len(steering)} steering and {len(follow_up)} follow-up message(s):")
    for kind, texts in (("steer", steering), ("follow_up", follow_up)):
        for text in texts:
            print(f"  {kind}: {text}")


def _print_data(data: Any) -> None:
    if data is None:
        print("done")
    else:
        print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


@magics_class
class AtomicAgentMagics(Magics):
    """The ``atomic_agent`` line and cell magic."""

    @magic_arguments()
    @argument("action", nargs="?", choices=ACTIONS, metavar="ACTION", help="what to do; see above")
    @argument("words", nargs="*", help="the action's arguments")
    @argument("--name", default="default", help="the session's name (default: %(default)s)")
    @argument(
        "--command",
        help="start: the agent command (default: $ATOMIC_AGENT_COMMAND, atomic, pi, or the pinned agent)",
    )
    @argument("--provider", help="start: the model provider, passed on as --provider")
    @argument("--model", help="start: the model, passed on as --model")
    @argument(
        "-e",
        "--extension",
        action="append",
        default=[],
        metavar="PATH",
        help="start: an extension file to load (repeatable)",
    )
    @argument("--cwd", help="start: the agent's working directory")
    @argument(
        "--trust-project",
        action="store_true",
        help="start: load the working directory's own .pi extensions and settings (--approve)",
    )
    @argument(
        "--demo",
        action="store_true",
        help="start: run on the offline demo model with the demo extension (no API key)",
    )
    @argument(
        "--env",
        action="append",
        metavar="KEY=VALUE",
        help="start: an environment variable for the agent (repeatable; never shown)",
    )
    @argument(
        "--resume",
        nargs="?",
        const="latest",
        metavar="ID",
        help="start: continue this notebook's latest conversation of the session, or the one ID names",
    )
    @argument(
        "--no-save",
        action="store_true",
        help="start: do not save the conversation (the agent keeps it in memory only)",
    )
    @argument(
        "--kernel-code",
        choices=["ask", "allow", "off"],
        help="start: the agent's python tool runs code in this kernel after asking (ask, the "
        "default), without asking (allow), or is not offered (off)",
    )
    @argument(
        "--notebook-edits",
        choices=["ask", "allow", "off"],
        help="start: the agent's changes to this notebook are shown as diffs you accept or "
        "reject (ask, the default), applied at once (allow), or the notebook tools are not "
        "offered (off)",
    )
    @argument("--run", type=int, metavar="N", help="cells: the code of run N (default: the last)")
    @argument(
        "--print",
        action="store_true",
        dest="print_code",
        help="cells: print the code instead of putting it into a new cell",
    )
    @argument("--timeout", type=float, help="wait: seconds to wait at most")
    @argument(
        "--line",
        choices=LINES,
        default="current",
        help="install: the agent line to install (default: %(default)s)",
    )
    @argument("--force", action="store_true", help="install: install again even if present")
    @argument(
        "--wait",
        action="store_true",
        help="cell magic and fix: block until the run ends (for Run All, nbval, papermill)",
    )
    @argument(
        "--steer",
        action="store_true",
        help="cell magic: while a run is going, deliver the prompt after the current turn",
    )
    @argument(
        "--follow-up",
        action="store_true",
        help="cell magic: while a run is going, deliver the prompt when it ends",
    )
    @argument(
        "--method", help="policy: only dialogs of this method (select, confirm, input, editor)"
    )
    @argument("--title", help="policy: only dialogs whose title matches this regular expression")
    @argument("--clear", action="store_true", help="policy: remove every policy")
    @argument(
        "--full",
        action="store_true",
        help="status: also the process id, command line and session file (local details)",
    )
    @line_cell_magic
    def atomic_agent(self, line: str, cell: str | None = None) -> Any:
        """Run the atomic coding agent in the notebook.

        Cell magic: ``%%atomic_agent [--name NAME] [--wait [--timeout S]] [--steer|--follow-up]``
        sends the cell as a prompt and shows its transcript (streamed answer, tool calls,
        dialogs) below the cell. Without --wait it returns at once.

        Line magic, ``%atomic_agent ACTION [options]``:

        - ``install [--line current|0.73] [--force]``: install the pinned agent (a progress
          bar in the cell; nothing to do when it is there); ``doctor``: which agent would run
          and why, and the versions a bug report needs;
        - ``start [--demo] [--command CMD] [--provider P] [--model M] [-e PATH ...] [--cwd DIR]
          [--trust-project] [--env KEY=VALUE ...] [--resume [ID]] [--no-save]
          [--kernel-code ask|allow|off] [--notebook-edits ask|allow|off] [-- AGENT ARGS]``, ``stop``, ``restart`` (the same
          conversation goes on), ``status``, ``show`` (the panel again);
        - ``cells [--run N] [--print]``: the code the agent ran in this kernel during the
          last run that ran any (or run N), into a new cell below, each call headed by a
          comment naming it;
        - ``conversations``: this notebook's saved conversations, each with a Resume button
          (``sessions``, its older name, does the same);
        - ``wait [--timeout S]``: block until the latest run ends, or a dialog needs you;
        - ``fix [--wait]``: send the last failed cell (source and traceback) and ask the agent
          to explain and fix it;
        - ``steer TEXT``, ``follow_up TEXT``, ``clear_queue``, ``abort``, ``new``;
        - ``bash COMMAND``, ``compact [INSTRUCTIONS]``, ``name NAME``;
        - ``state``, ``messages``, ``entries``, ``tree``, ``stats``, ``commands``, ``models``,
          ``export [PATH]``;
        - ``model PROVIDER MODEL_ID``, ``cycle_model``, ``thinking [LEVEL]`` (without LEVEL:
          the levels the model offers), ``cycle_thinking``;
        - ``policy [--method M] [--title REGEX] ANSWER`` answers matching dialogs without a
          human (ANSWER: an option, text, yes/no, or cancel); ``policy`` lists them and
          ``policy --clear`` removes them.

        Every action takes ``--name NAME`` for a session other than ``default``.
        """
        if cell is not None:
            return self._cell(line, cell)
        first, _, rest = line.strip().partition(" ")
        if first in TEXT_ACTIONS:
            options, text = _text_action(rest)
            return self._text(first, options.get("name", "default"), text)
        own, extra = _split_extra(_tokens(line))
        args = self.atomic_agent.parser.parse_intermixed_args(own)
        if args.action is None:
            print(self.atomic_agent.__doc__)
            return None
        if args.action == "start":
            self._start(args, extra)
            return None
        if args.action == "install":
            installing.install(args.line, force=args.force, home=_config(self).agent_home)
            return None
        if args.action in ("conversations", "sessions"):
            conversation_listing.show_conversations(_config(self))
            return None
        if args.action == "cells":
            assert self.shell is not None
            agent_code.insert_cells(self.shell, args.name, args.run, print_only=args.print_code)
            return None
        if args.action == "fix":
            session = api.session(args.name)
            run = session.prompt(FIX_PROMPT)
            if args.wait:
                session.wait(timeout=args.timeout, run=run)
            return None
        if args.action == "doctor":
            from atomic_jupyter.notebook.doctor import doctor_report

            config = _config(self)
            print(
                doctor_report(
                    configured_command=config.command,
                    agent_home=config.agent_home,
                    conversations_dir=config.conversations_dir,
                ).text()
            )
            return None
        if args.action in ("stop", "restart", "status", "show"):
            return self._lifecycle(args.action, registry.get(args.name, running=False), args)
        session = api.session(args.name)
        if args.action == "wait":
            session.wait(timeout=args.timeout)
        elif args.action == "policy":
            self._policy(session, args)
        elif args.action == "model":
            if len(args.words) != 2:
                raise MagicUsageError("usage: %atomic_agent model PROVIDER MODEL_ID")
            provider, model_id = args.words
            _print_later(_send(session, "set_model", provider=provider, modelId=model_id))
        elif args.action == "thinking":
            if len(args.words) > 1:
                raise MagicUsageError("usage: %atomic_agent thinking [LEVEL]")
            if not args.words:
                print("Thinking levels of this model: " + ", ".join(session.thinking_levels()))
            else:  # the agent may give the model the nearest level it offers, without a word
                session.set_thinking_level(args.words[0])
                level = session.get_state().get("thinkingLevel")
                asked = args.words[0]
                print(
                    f"Thinking level: {level}."
                    if level == asked
                    else f"Thinking level: {level} (this model does not offer {asked})."
                )
        elif args.action == "clear_queue":
            _print_queue(session.clear_queue())
        elif args.action == "export":
            _print_data(session.export_html(args.words[0] if args.words else None))
        elif args.action == "cycle_model":
            _print_later(_send(session, "cycle_model"))
        elif args.action == "new":
            _print_later(_send(session, "new_session"))
        else:
            _print_data(getattr(session, PLAIN_ACTIONS[args.action])())
        return None

    def _start(self, args: Any, extra: list[str]) -> None:
        def start() -> None:
            api.start(
                command=args.command,
                provider=args.provider,
                model=args.model,
                extensions=args.extension,
                cwd=args.cwd,
                name=args.name,
                env=_parse_env(args.env),
                extra_args=extra,
                demo=args.demo,
                trust_project=args.trust_project,
                resume=args.resume,
                save=not args.no_save,
                kernel_code=args.kernel_code,
                notebook_edits=args.notebook_edits,
            )

        try:
            start()
        except AgentNotInstalledError as exc:
            installing.offer_install(exc, start, home=_config(self).agent_home)
            raise

    def _cell(self, line: str, cell: str) -> None:
        args = self.atomic_agent.parser.parse_args(_tokens(line))
        if args.action is not None:
            raise MagicUsageError(
                f"%%atomic_agent sends the cell as a prompt; use the line magic for {args.action!r}"
            )
        if args.steer and args.follow_up:
            raise MagicUsageError("choose one of --steer and --follow-up")
        behavior = "steer" if args.steer else "followUp" if args.follow_up else None
        session = api.session(args.name)
        run = session.prompt(cell.strip("\n"), streaming_behavior=behavior)
        if args.wait:
            session.wait(timeout=args.timeout, run=run)

    def _text(self, action: str, name: str, text: str) -> None:
        session = api.session(name)
        if action in ("steer", "follow_up"):
            data = _send(session, action, message=text)
            if data is not _LATER:
                print(disposition_text(action, data))
        elif action == "bash":
            live = LiveOutput()
            # The live output, then in its place what is left of it: the result, or nothing
            # (the output so far is printed, or kept in the command's area for later).
            shown = LiveDisplay(live.widget, lambda: text_record(""), copy=False, close=live.close)
            shown.display()
            try:
                run = session.bash(text, on_output=live.append, display=False, shown=True)
                data = _command_result(session, run)
            except BaseException:
                if live.text:  # what came before the failure stays in the cell
                    print(live.text.rstrip("\n"))
                shown.make_final()
                raise
            if data is not _LATER:
                result = bash_result_text(data)
                shown.record = lambda: text_record(result, "bash")
            shown.make_final()
        elif action == "name":
            _print_data(session.set_session_name(text))
        elif action == "compact":
            _print_later(_send(session, "compact", customInstructions=text or None))

    def _lifecycle(self, action: str, session: Any, args: Any) -> None:
        if action == "stop":
            session.stop()  # its exit code is the signal's (143): nothing to tell
            if session.presentation is not None:  # now, while this cell's output is read
                session.presentation.make_displays_final()
            print(f"Stopped agent session {session.name!r}.")
        elif action == "restart":
            conversations = session.addon("conversations")
            if conversations is not None:  # the file the agent writes now (after `new`)
                conversations.follow_agent()
            session.restart()
            print(f"Restarted agent session {session.name!r} (pid {session.pid}).")
        elif action == "status":
            print(status_text(session, full=args.full))
        else:
            show_panel(session)

    def _policy(self, session: Any, args: Any) -> None:
        if args.clear:
            session.remove_policy()
            print("No answer policies.")
            return
        if args.words:
            answer = parse_answer(" ".join(args.words), args.method)
            session.answer_with(answer, method=args.method, title=args.title)
        policies = session.policies
        print("\n".join(p.describe() for p in policies) if policies else "No answer policies.")


@magics_class
class AtomicExtensionMagics(Magics):
    """The ``atomic_extension`` line and cell magic."""

    @magic_arguments()
    @argument("words", nargs="*", help="cell: NAME; line: list | show NAME | remove NAME")
    @argument("--name", default="default", help="the session's name (default: %(default)s)")
    @line_cell_magic
    def atomic_extension(self, line: str, cell: str | None = None) -> Any:
        """Prototype an agent extension in a cell.

        Cell magic: ``%%atomic_extension NAME [--name SESSION]``: the cell is a TypeScript (or
        JavaScript) extension. It is type-checked and test-loaded, then loaded into the running
        agent in place of any earlier version of NAME, without restarting the agent. The cell
        shows what it registered, with a button per command, or its errors with file and line.

        Line magic: ``%atomic_extension list``, ``%atomic_extension show NAME``,
        ``%atomic_extension remove NAME`` (each takes ``--name SESSION``).
        """
        args = self.atomic_extension.parser.parse_intermixed_args(_tokens(line))
        session = api.session(args.name)
        if cell is not None:
            if len(args.words) != 1:
                raise MagicUsageError("usage: %%atomic_extension NAME [--name SESSION]")
            result = session.define_extension(args.words[0], cell)
            prototype = PrototypeView(view_of(session), result)
            presentation_of(session).display_live(prototype)
            return None
        action, *rest = args.words or ["list"]
        if action == "list":
            names = session.extensions()
            print("\n".join(names) if names else "No prototype extensions.")
        elif action == "show" and len(rest) == 1:
            print(session.extension_source(rest[0]))
        elif action == "remove" and len(rest) == 1:
            session.remove_extension(rest[0])
            print(f"Removed the extension {rest[0]!r}.")
        else:
            raise MagicUsageError(
                "usage: %atomic_extension list | show NAME | remove NAME [--name SESSION]"
            )
        return None


def status_text(session: Any, full: bool = False) -> str:
    """A readable, plain-text table of a session's state; ``full`` adds what is local to this
    machine (the process id, the command line, the session file), which a saved notebook
    should not carry unless asked."""
    state = session.state if session.state != "exited" else f"exited with code {session.returncode}"
    rows = [("session", session.name), ("state", state), ("agent", str(session.agent))]
    if full:
        rows += [("pid", str(session.pid)), ("command", session.command_line)]
    if session.spec.trust_project:
        rows.append(("project trust", "on (the project's .pi extensions and settings load)"))
    if session.alive:
        try:
            agent = session.get_state()  # AtomicAgent.request_timeout
        except AtomicAgentError as exc:
            agent = None
            rows.append(("agent state", f"unavailable: {exc}"))
        if isinstance(agent, dict):
            model = agent.get("model") or {}
            rows += [
                (
                    "model",
                    f"{model.get('provider', '?')}/{model.get('id', '?')}" if model else "none",
                ),
                ("thinking level", str(agent.get("thinkingLevel", "-"))),
                ("streaming", "yes" if agent.get("isStreaming") else "no"),
                ("messages", str(agent.get("messageCount", "-"))),
                ("session name", str(agent.get("sessionName") or "-")),
            ]
            if full:
                rows.append(("session file", str(agent.get("sessionFile") or "-")))
    rows += [
        ("title", session.title or "-"),
        ("pending dialogs", str(len(session.pending_dialogs))),
        ("answer policies", str(len(session.policies))),
        ("notifications", str(len(session.notifications))),
        ("ignored messages", str(session.diagnostic_count)),
    ]
    rows += [(f"status: {key}", text) for key, text in session.status.items()]
    rows = [(key, strip_ansi(value)) for key, value in rows]  # the theme's colours, as text
    width = max(len(key) for key, _ in rows)
    return "\n".join(f"{key.ljust(width)}  {value}" for key, value in rows)
