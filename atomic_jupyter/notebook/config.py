"""User settings, as traitlets, so ``%config AtomicAgent.command = ...`` and config files work."""

from __future__ import annotations

from traitlets import Bool, CaselessStrEnum, Float, List, Unicode, Union
from traitlets.config import Configurable

from atomic_jupyter.session.settings import SessionSettings

__all__ = ["AtomicAgent"]


class AtomicAgent(Configurable):
    """Settings of atomic-jupyter's agent sessions.

    Set them with ``%config AtomicAgent.<name> = value`` in a notebook, or as
    ``c.AtomicAgent.<name> = value`` in ``ipython_config.py``.
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
