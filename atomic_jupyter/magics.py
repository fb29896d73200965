"""``%atomic_agent`` and ``%%atomic_agent``: argument parsing over the Python API, nothing more."""

from __future__ import annotations

import shlex
from typing import Any

from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from . import api, registry
from .errors import AtomicAgentError

__all__ = ["AtomicAgentMagics"]


class MagicUsageError(AtomicAgentError):
    """The magic was called with arguments it does not take."""


def _split_extra(line: str) -> tuple[list[str], list[str]]:
    """Split ``line`` like a POSIX shell, then at a ``--`` token: the magic's own arguments
    and the agent's."""
    try:
        tokens = shlex.split(line)
    except ValueError as exc:
        raise MagicUsageError(f"could not read the arguments: {exc}") from None
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


@magics_class
class AtomicAgentMagics(Magics):
    """The ``atomic_agent`` line and cell magic."""

    @magic_arguments()
    @argument(
        "action",
        nargs="?",
        choices=["start", "stop", "restart", "status", "show"],
        help="start, stop or restart the agent; status prints its state; show displays its panel. "
        "As a cell magic (%%%%atomic_agent) the cell is sent as a prompt and no action is given.",
    )
    @argument("--name", default="default", help="the session's name (default: %(default)s)")
    @argument(
        "--command",
        help="the agent command (default: $ATOMIC_AGENT_COMMAND, atomic, pi, or the pinned agent)",
    )
    @argument("--provider", help="the model provider, passed on as --provider")
    @argument("--model", help="the model, passed on as --model")
    @argument(
        "-e",
        "--extension",
        action="append",
        default=[],
        metavar="PATH",
        help="an extension file to load (repeatable)",
    )
    @argument("--cwd", help="the agent's working directory")
    @argument(
        "--env",
        action="append",
        metavar="KEY=VALUE",
        help="an environment variable for the agent (repeatable)",
    )
    @line_cell_magic
    def atomic_agent(self, line: str, cell: str | None = None) -> Any:
        """Run the atomic coding agent: start it, prompt it, answer its extensions' dialogs.

        Line magic: ``%atomic_agent start|stop|restart|status|show [options] [-- AGENT ARGS]``.
        Arguments after ``--`` are passed to the agent as they are.

        Cell magic: ``%%atomic_agent [--name NAME]`` sends the cell as a prompt and returns
        at once; dialogs the agent raises appear below the cell.
        """
        own, extra = _split_extra(line)
        args = self.atomic_agent.parser.parse_args(own)
        if cell is not None:
            if args.action is not None:
                raise MagicUsageError(
                    f"%%atomic_agent sends the cell as a prompt; use the line magic for {args.action!r}"
                )
            api.session(args.name).prompt(cell.strip("\n"))
            return None
        if args.action is None:
            print(self.atomic_agent.__doc__)
            return None
        if args.action == "start":
            api.start(
                command=args.command,
                provider=args.provider,
                model=args.model,
                extensions=args.extension,
                cwd=args.cwd,
                name=args.name,
                env=_parse_env(args.env),
                extra_args=extra,
            )
            return None
        session = registry.get(args.name, running=False)
        if args.action == "stop":
            code = session.stop()
            print(f"Stopped agent session {session.name!r} (exit code {code}).")
        elif args.action == "restart":
            session.restart()
            print(f"Restarted agent session {session.name!r} (pid {session.pid}).")
        elif args.action == "status":
            print(status_text(session))
        elif args.action == "show":
            from IPython.display import display

            display(session.panel)
        return None


def status_text(session: Any) -> str:
    """A readable, plain-text table of a session's state."""
    state = session.state if session.state != "exited" else f"exited with code {session.returncode}"
    rows = [
        ("session", session.name),
        ("state", state),
        ("pid", str(session.pid)),
        ("command", session.command_line),
        ("title", session.title or "-"),
        ("pending dialogs", str(len(session.pending_dialogs))),
        ("notifications", str(len(session.notifications))),
        ("ignored messages", str(session.diagnostic_count)),
    ]
    rows += [(f"status: {key}", text) for key, text in session.status.items()]
    width = max(len(key) for key, _ in rows)
    return "\n".join(f"{key.ljust(width)}  {value}" for key, value in rows)
