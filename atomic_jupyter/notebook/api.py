"""The Python API: ``start`` a session, get the running ``session`` by name."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from atomic_jupyter.notebook import registry
from atomic_jupyter.notebook.config import AtomicAgent, registered_settings
from atomic_jupyter.notebook.notebook_tools import show_link
from atomic_jupyter.notebook.presentation import show_panel
from atomic_jupyter.session.policies import CANCEL
from atomic_jupyter.session.session import AgentSession
from atomic_jupyter.transport.launch import LaunchSpec

__all__ = ["session", "start"]


def start(
    *,
    command: str | Sequence[str] | None = None,
    provider: str | None = None,
    model: str | None = None,
    extensions: Sequence[str] = (),
    cwd: str | None = None,
    name: str = "default",
    env: Mapping[str, str] | None = None,
    extra_args: Sequence[str] = (),
    config: AtomicAgent | None = None,
    timeout: float | None = None,
    display: bool = True,
    demo: bool = False,
    trust_project: bool = False,
    resume: str | None = None,
    save: bool = True,
    kernel_code: str | None = None,
    notebook_edits: str | None = None,
) -> AgentSession:
    """Start an agent session and, in IPython, display its panel.

    A running session of the same name is stopped first and replaced.

    Parameters
    ----------
    command:
        The agent command (a string split like a shell does, or a list). When None:
        ``AtomicAgent.command``, ``$ATOMIC_AGENT_COMMAND``, ``atomic`` or ``pi`` on PATH,
        then the project's pinned agent. ``--mode rpc`` is added unless present.
    provider, model:
        Passed on as ``--provider`` and ``--model``.
    extensions:
        Extension files, passed on as ``-e`` with absolute paths.
    cwd:
        The agent's working directory.
    name:
        The session's name (``"default"``).
    env:
        Extra environment variables for the agent (not shown anywhere).
    extra_args:
        More arguments for the agent.
    config:
        Settings; the IPython configuration when None and IPython runs.
    timeout:
        Seconds to wait for the agent to become ready (``AtomicAgent.startup_timeout``).
    display:
        Whether to display the panel in IPython.
    demo:
        Run on the offline demo model (no API key needed) with the bundled demo extension:
        a scripted model server on 127.0.0.1 and a private agent configuration directory,
        both gone when the session stops.
    trust_project:
        Let the agent load the working directory's own ``.pi`` extensions and settings
        (``--approve``). Off by default: the current agent line skips a project's own code
        and settings in RPC mode unless trusted. Shown in the panel when on. The 0.73 line
        has no project trust (it loads them without asking) and refuses the option.
    resume:
        Continue a saved conversation of this notebook: ``"latest"`` (its most recent one
        of this session name; a new one when there is none, and the panel says so), or an
        id (a prefix is enough) or a file listed by ``%atomic_agent conversations``. The panel
        says "continued: N messages since DATE" and shows the earlier turns, folded.
    save:
        Save the conversation with the notebook, so it can be continued (False: the agent
        keeps it in memory only, ``--no-session``).
    kernel_code:
        Whether the agent's ``python`` tool runs code in this kernel: ``"ask"`` before each
        call (a rule or a policy can answer), ``"allow"`` without asking, ``"off"`` (the tool
        is not offered); None: ``AtomicAgent.kernel_code`` (``"ask"``).
    notebook_edits:
        Whether the agent's changes to the open notebook are shown as diffs a person accepts
        or rejects (``"ask"``), applied at once (``"allow"``), or its notebook tools are not
        offered (``"off"``); None: ``AtomicAgent.notebook_edits`` (``"ask"``).

    Returns
    -------
    AgentSession
        The running session.

    Raises
    ------
    AgentStartError
        When the agent cannot be started; the message names the command and shows its stderr.
    """
    config = config or _ipython_config()
    if not demo:  # the site's or the user's model, unless this start names one
        provider = provider or getattr(config, "provider", None)
        model = model or getattr(config, "model", None)
    spec = LaunchSpec(
        command=command,
        provider=provider,
        model=model,
        extensions=tuple(extensions),
        cwd=cwd,
        env=dict(env or {}),
        extra_args=tuple(extra_args),
        demo=demo,
        trust_project=trust_project,
        save=save,
        resume=resume,
        kernel_code=kernel_code,
        notebook_edits=notebook_edits,
    )
    new = AgentSession(name, spec, config=config)
    # The site's and the user's answers, before any dialog can come.
    for entry in getattr(config, "answer_policies", None) or []:
        answer = CANCEL if entry.get("cancel") else entry.get("answer")
        new.answer_with(answer, method=entry.get("method"), title=entry.get("title"))
    try:
        old = registry.get(name, running=False)
    except KeyError:
        old = None
    if old is not None:
        old.stop()  # also when its agent had exited: its addons' files go with it
    try:
        new.start(timeout=timeout)
        conversations = new.addon("conversations")
        if conversations is not None:
            conversations.load_earlier()
    except BaseException:
        new.stop()  # its addons let go: the conversation's lock, servers, folders
        raise
    registry.put(new)
    show_link(new)  # the panel says whether the agent can work on the open notebook
    if display:
        show_panel(new)
    return new


def session(name: str = "default") -> AgentSession:
    """The running session called ``name``.

    Raises
    ------
    SessionNotFoundError
        When no such session was started, or its agent is no longer running.
    """
    return registry.get(name)


def _ipython_config() -> AtomicAgent:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return AtomicAgent()
    shell = get_ipython()
    return registered_settings(shell) if shell is not None else AtomicAgent()
