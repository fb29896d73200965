"""User settings, as traitlets, so ``%config AtomicAgent.command = ...`` and config files work."""

from __future__ import annotations

import math
import re
from typing import Any

from traitlets import Bool, CaselessStrEnum, Dict, Float, List, TraitError, Unicode, Union, validate
from traitlets.config import Configurable

from atomic_jupyter.session.settings import SessionSettings

__all__ = ["AtomicAgent", "POLICY_KEYS", "registered_settings"]

#: The keys of an entry of ``AtomicAgent.answer_policies``.
POLICY_KEYS = frozenset({"method", "title", "answer", "cancel"})


class AtomicAgent(Configurable):
    """Settings of atomic-jupyter's agent sessions.

    Set them with ``%config AtomicAgent.<name> = value`` in a notebook, or as
    ``c.AtomicAgent.<name> = value`` in ``ipython_config.py`` (a user's own profile, or the
    environment's ``etc/ipython/ipython_config.py`` for every user of a shared environment).
    ``%config AtomicAgent`` lists them with their current values.
    """

    command = Union(
        [Unicode(), List(Unicode())],
        default_value=None,
        allow_none=True,
        help=(
            "The agent command, as a string or a list of arguments. When unset, "
            "$ATOMIC_AGENT_COMMAND, then `atomic` and `pi` on PATH, then the pinned agent "
            "installed by `%atomic_agent install` are tried. `--mode rpc` is added unless "
            "the command has --mode."
        ),
    ).tag(config=True)

    agent_home = Unicode(
        None,
        allow_none=True,
        help=(
            "A folder of pinned agents installed by `atomic-jupyter install-agent --dir`, "
            "looked in before $ATOMIC_JUPYTER_AGENT_HOME, the user data folder and the Python "
            "environment's share/atomic-jupyter/agents. `%atomic_agent install` installs here "
            "when set."
        ),
    ).tag(config=True)

    conversations_dir = Unicode(
        None,
        allow_none=True,
        help=(
            "Where each notebook's conversations with the agent are saved, one folder per "
            "notebook. When unset, $ATOMIC_JUPYTER_CONVERSATIONS, else the user data folder "
            "(~/.local/share/atomic-jupyter/conversations on Linux)."
        ),
    ).tag(config=True)

    kernel_code = CaselessStrEnum(
        ["ask", "allow", "off"],
        default_value=SessionSettings.kernel_code,
        help=(
            "Whether the agent's python tool runs code in this kernel: 'ask' before each call "
            "(a rule or a policy can answer), 'allow' without asking, 'off' (not offered). "
            "`%atomic_agent start --kernel-code` sets it for one session."
        ),
    ).tag(config=True)

    notebook_edits = CaselessStrEnum(
        ["ask", "allow", "off"],
        default_value=SessionSettings.notebook_edits,
        help=(
            "Whether the agent edits the open notebook (JupyterLab 4 or Notebook 7): 'ask' shows "
            "each change as a diff in the cells, accepted or rejected there or in the run's card "
            "(a rule or a policy can answer), 'allow' applies changes without asking, 'off' "
            "does not offer the notebook tools (reading, editing and running cells). "
            "`%atomic_agent start --notebook-edits` sets it for one session."
        ),
    ).tag(config=True)

    kernel_code_when_read_only = Bool(
        SessionSettings.kernel_code_when_read_only,
        help=(
            "Keep python, notebook_edit and notebook_run on while another extension makes the "
            "agent read-only (its edit and write tools off, as the agent's plan mode does). "
            "Off by default: they are off then too (else the model could still change files "
            "through Python) and come back with edit and write. Read when a session starts."
        ),
    ).tag(config=True)

    idle_sleep_minutes = Float(
        SessionSettings.idle_sleep_minutes,
        help=(
            "Minutes with no run, no open dialog and no command waiting before the agent is "
            "stopped, its conversation kept (about 130 MB back per agent); the next prompt, "
            "from a cell or the panel, starts it again on the same conversation and says so. "
            "0: never. Meanwhile the kernel tells the Jupyter server it is active while the "
            "agent works or waits on a dialog, so an idle culler does not stop it mid-run."
        ),
    ).tag(config=True)

    reader_turn_ms = Float(
        SessionSettings.reader_turn_ms,
        min=0.0,
        help=(
            "While the agent writes faster than the kernel reads it (a long answer on the "
            "older agent line is a stream of a hundred megabytes), the thread reading it lets "
            "the kernel's own thread, your cells and the outputs, run at least every this many "
            "milliseconds. Smaller: cells answer sooner during such a stream; larger: the "
            "stream is read sooner (BENCHMARKS.md, figure 2, has both). 0: after every read; "
            "from 5 (Python's switch interval) on, no more often than Python switches "
            "threads anyway. Read when an agent starts."
        ),
    ).tag(config=True)

    provider = Unicode(
        None,
        allow_none=True,
        help=(
            "The model provider every session starts with (passed on as --provider) unless "
            "`%atomic_agent start --provider` or the demo says otherwise; None: the agent's own "
            "default."
        ),
    ).tag(config=True)

    model = Unicode(
        None,
        allow_none=True,
        help=(
            "The model every session starts with (passed on as --model) unless "
            "`%atomic_agent start --model` or the demo says otherwise; None: the agent's own "
            "default."
        ),
    ).tag(config=True)

    answer_policies = List(
        Dict(),
        default_value=[],
        help=(
            "Answers every new session gives without asking, first match wins: each a dict "
            'with "answer" (a string for select, input and editor; true or false for '
            'confirm) or "cancel": true, and optionally "method" (select, confirm, input, '
            'editor) and "title" (a regular expression searched in the dialog\'s title). '
            'For example [{"method": "select", "title": "Dangerous command", "answer": '
            '"Block"}]. Rules a person makes from a dialog come after them.'
        ),
    ).tag(config=True)

    @validate("reader_turn_ms")
    def _valid_turn(self, proposal: Any) -> float:
        value = float(proposal["value"])
        if math.isnan(value):
            raise TraitError("AtomicAgent.reader_turn_ms must be a number of milliseconds, not nan")
        return value

    @validate("answer_policies")
    def _valid_policies(self, proposal: Any) -> list[dict[str, Any]]:
        for index, entry in enumerate(proposal["value"]):
            where = f"AtomicAgent.answer_policies[{index}]"
            unknown = set(entry) - POLICY_KEYS
            if unknown:
                raise TraitError(
                    f"{where} has unknown keys {sorted(unknown)}; allowed: {sorted(POLICY_KEYS)}"
                )
            if ("answer" in entry) == bool(entry.get("cancel")):
                raise TraitError(f'{where} needs one of "answer" and "cancel": true')
            try:
                re.compile(str(entry.get("title") or ""))
            except re.error as exc:
                raise TraitError(f"{where}: title is not a regular expression ({exc})") from None
            method = entry.get("method")
            if method is not None and method not in ("select", "confirm", "input", "editor"):
                raise TraitError(
                    f"{where}: method {method!r} is not select, confirm, input or editor"
                )
        return list(proposal["value"])

    startup_timeout = Float(
        SessionSettings.startup_timeout,
        help="Seconds to wait for a new agent to answer its first command.",
    ).tag(config=True)

    prototyping = Bool(
        SessionSettings.prototyping,
        help=(
            "Load atomic-jupyter's prototype hub extension into each agent, so extensions "
            "written in %%atomic_extension cells load without restarting the agent."
        ),
    ).tag(config=True)

    request_timeout = Float(
        SessionSettings.request_timeout,
        help="Seconds to wait for the agent to answer a command sent with request().",
    ).tag(config=True)


def registered_settings(shell: Any) -> AtomicAgent:
    """The ``AtomicAgent`` settings of ``shell``, registered with it on first use so
    ``%config AtomicAgent`` lists them (and ``%config AtomicAgent.x = ...`` updates them)."""
    for each in getattr(shell, "configurables", []):
        if isinstance(each, AtomicAgent):
            return each
    settings = AtomicAgent(parent=shell)
    configurables = getattr(shell, "configurables", None)
    if isinstance(configurables, list):
        configurables.append(settings)
    return settings
