"""A team on a real JupyterHub (``docs/guides/jupyterhub.md``): every command of the guide run,
a hub on 127.0.0.1 with real UNIX users, each user's agent working in their own server.

The shared environment is the guide's ``/opt/atomic``, made by its commands
(:mod:`tests.harness.hub`); the hub runs the guide's configuration with the test's settings
after it (a free port, the dummy authenticator, an admin token, a 2 s activity interval and
a 15 s culler). As root, three users made with ``useradd`` (homes ``0755``, as many systems
make them: only the package's own modes keep a user's files from the others) start their
servers through the REST API at once; in each, over the kernel's websocket as JupyterLab
talks to it, ``%atomic_agent start --demo``, a dangerous command the site settings' answer
policy blocks, and ``/demo-select``, whose dialog is answered through the output widget's comm.
Not as root, those tests are skipped and the same-account variant (one user,
``SimpleLocalProcessSpawner``) runs alone; it runs as root too.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from traitlets.config import Config

from tests.harness.hub import (
    PROXY_LEFT,
    Hub,
    HubKernel,
    HubUser,
    SharedEnvironment,
    all_pids,
    guide_block,
    guide_lines,
    is_root,
    listing,
    made_users,
    proc_cmdline,
    proc_environ,
    proc_ppid,
    proc_uid,
    processes_of_uid,
    running_hub,
    same_account_user,
    shared_environment,
    start_concurrently,
)
from tests.harness.kernel_runs import wait_done
from tests.harness.kernel_widgets import dialog_in, outcome_of, page_of, run_state
from tests.harness.support import CURRENT_LINE
from tests.harness.widget_text import visible_text

pytestmark = [
    pytest.mark.build,
    pytest.mark.agent,
    pytest.mark.kernel,
    pytest.mark.one_line,
    # Making the shared environment (pip, npm) and a hub with three users: minutes when loaded.
    pytest.mark.timeout(900),
    # It installs the default line whatever the line under test: once is enough.
    pytest.mark.skipif(not CURRENT_LINE, reason="installs the current line only"),
]

needs_root = pytest.mark.skipif(
    not is_root(),
    reason="real UNIX users need root (useradd, and LocalProcessSpawner switching to each "
    "user); test_same_account_hub runs instead",
)

#: The team's users: atomichub-<letter>-<suffix>.
LETTERS = ("a", "b", "c")
#: The culler's --timeout and --cull-every, and JUPYTERHUB_ACTIVITY_INTERVAL (seconds), of the
#: culler's own hub (the guide's 3600, 300 and 60, scaled down).
CULL_TIMEOUT, CULL_EVERY, ACTIVITY_INTERVAL = 15, 3, 2
#: The team's hub culls too, later: its servers must outlive the tests that look at them.
TEAM_CULL_TIMEOUT = 600

START = "%load_ext atomic_jupyter\n%atomic_agent start --demo"
#: The demo runs ``rm -rf ./demo-scratch``, which its extension guards with "Dangerous
#: command": the guide's site settings answer Block.
BLOCKED = "%%atomic_agent --wait\ndo something dangerous"
#: The demo extension's command that asks "Pick a planet" (no policy answers it).
ASK = "%%atomic_agent\n/demo-select"
#: What the kernel knows of its agent.
FACTS = """
import json, os, atomic_jupyter as aj
_s = aj.session()
_tools = _s.addon("kernel-tools")
print(json.dumps({
    "kernel": os.getpid(),
    "agent": _s.pid,
    "argv": list(_s.agent_install.argv),
    "secret": _tools.secret,
    "tools": str(_tools.folder),
    "conversation": str(_s.addon("conversations").path),
}))
"""


@dataclass
class UserRun:
    """One user's notebook on the hub, after the demo's runs."""

    user: HubUser
    kernel: HubKernel
    facts: dict[str, Any]
    #: The blocked run's output as the page shows it.
    blocked_page: str
    #: The /demo-select dialog's outcome line.
    outcome: str
    status_full: str
    settings: str


def run_demo(hub: Hub, user: HubUser, notebook: str = "hub.ipynb") -> UserRun:
    """In the user's server, through the websocket: start the demo, the blocked dangerous
    command, then /demo-select answered "Earth" through the output's comm."""
    kernel = hub.open_kernel(user.name, notebook)
    try:
        return _demo_runs(kernel, user)
    except BaseException:
        kernel.close()
        raise


def _demo_runs(kernel: HubKernel, user: HubUser) -> UserRun:
    kernel.execute(START, timeout=120)
    blocked = kernel.execute(BLOCKED, timeout=120)
    (blocked_area,) = blocked.widget_ids

    def settled() -> str | None:  # the policy answered, or (without it) the person is asked
        if kernel.tracker.pages[blocked_area].content.dialogs:
            return "asked"
        return "answered" if run_state(kernel, blocked_area) == "done" else None

    if kernel.wait_for(settled, timeout=60, what="the dangerous command's run") == "asked":
        guard = dialog_in(kernel, blocked_area, "select")  # no site policy: Block by hand
        guard.choose(guard.description["options"].index("Block"))
    wait_done(kernel, blocked_area, timeout=60)
    asked = kernel.execute(ASK, timeout=60)
    (area,) = asked.widget_ids
    dialog = dialog_in(kernel, area, "select")
    assert dialog.description["title"] == "Pick a planet"
    dialog.choose(dialog.description["options"].index("Earth"))
    outcome = outcome_of(kernel, dialog)
    wait_done(kernel, area, timeout=60)
    facts = json.loads(kernel.execute(FACTS).stdout)
    status = kernel.execute("%atomic_agent status --full").stdout
    listed = kernel.execute("%config AtomicAgent", check=False)  # checked by a test of its own
    settings = listed.stdout or f"{listed.ename}: {listed.evalue}"
    return UserRun(
        user, kernel, facts, visible_text(page_of(kernel, blocked_area)), outcome, status, settings
    )


def agent_checks(run: UserRun, shared: SharedEnvironment) -> None:
    """The user's agent runs as that user, a child of their kernel, started from the shared
    environment's agents, with their own key."""
    agent, kernel = run.facts["agent"], run.facts["kernel"]
    assert proc_uid(kernel) == run.user.uid, f"{run.user.name}'s kernel runs as {proc_uid(kernel)}"
    assert proc_uid(agent) == run.user.uid, f"{run.user.name}'s agent runs as {proc_uid(agent)}"
    assert proc_ppid(agent) == kernel, "the agent is not a child of the user's kernel"
    # The agent renames its process ("pi"): what was started is the kernel's record of it.
    started = run.facts["argv"]
    assert any(Path(part).is_relative_to(shared.agents) for part in started), started
    assert str(shared.agents / "current") in run.status_full, run.status_full
    node = Path(os.readlink(f"/proc/{agent}/exe"))
    assert node.name.startswith("node"), node
    assert os.readlink(f"/proc/{agent}/cwd") == str(run.user.home)
    assert proc_environ(agent).get("ANTHROPIC_API_KEY") == run.user.key  # the hub's hook
    assert run.outcome.endswith("→ Earth (clicked)"), run.outcome


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def shared(request: pytest.FixtureRequest) -> SharedEnvironment:
    started = time.monotonic()
    env = shared_environment(request)
    how = "found it made" if env.reused else f"made it in {env.seconds:.0f} s"
    print(f"\nshared environment {env.folder}: {how} ({time.monotonic() - started:.0f} s here)")
    return env


@dataclass
class Team:
    hub: Hub
    runs: dict[str, UserRun]
    #: The shared folder before the users' servers started.
    before: dict[str, tuple]

    def run(self, letter: str) -> UserRun:
        (found,) = [r for r in self.runs.values() if r.user.name.startswith(f"atomichub-{letter}-")]
        return found


@pytest.fixture(scope="module")
def users(shared: SharedEnvironment) -> Iterator[list[HubUser]]:
    """The team: three real UNIX users (root only), removed with ``userdel -r`` at the end."""
    if not is_root():
        pytest.skip("real UNIX users need root")
    with made_users(shared, LETTERS) as made:
        yield made


def user(users: list[HubUser], letter: str) -> HubUser:
    (found,) = [u for u in users if u.name.startswith(f"atomichub-{letter}-")]
    return found


@pytest.fixture(scope="module")
def team(shared: SharedEnvironment, users: list[HubUser]) -> Iterator[Team]:
    """The team's hub, their three servers started at once through the REST API, and the
    demo's runs in each, at once."""
    with running_hub(
        shared,
        users,
        cull_timeout=TEAM_CULL_TIMEOUT,
        cull_every=CULL_EVERY,
        activity_interval=ACTIVITY_INTERVAL,
    ) as hub:
        before = listing(shared.folder)
        started = time.monotonic()
        hub.start_servers([u.name for u in users])
        ready = time.monotonic() - started
        runs = start_concurrently([lambda u=u: run_demo(hub, u) for u in users])
        print(
            f"\nthree servers ready in {ready:.1f} s; their demo runs done "
            f"{time.monotonic() - started:.1f} s after the start"
        )
        try:
            yield Team(hub, {r.user.name: r for r in runs}, before)
        finally:
            for run in runs:
                run.kernel.close()


# --------------------------------------------------------------------------- a team


@needs_root
def test_each_user_runs_their_own_agent_from_the_shared_environment(
    team: Team, shared: SharedEnvironment
) -> None:
    assert len(team.runs) == 3
    for run in team.runs.values():
        agent_checks(run, shared)
    agents = {run.facts["agent"] for run in team.runs.values()}
    assert len(agents) == 3  # three agents, not one shared
    after = listing(shared.folder)
    changed = sorted(
        path for path in set(team.before) | set(after) if team.before.get(path) != after.get(path)
    )
    assert changed == [], f"the users' servers changed the shared environment: {changed[:20]}"


@needs_root
def test_the_site_settings_reach_every_users_kernel(team: Team) -> None:
    for run in team.runs.values():
        # The guide's answer policy blocked the dangerous command; no one was asked.
        assert "→ Block (answer policy: select titled /Dangerous command/" in run.blocked_page
        assert "Blocked by the demo guard" in run.blocked_page
        for name, value in (
            ("idle_sleep_minutes", "30.0"),
            ("kernel_code", "'ask'"),
            ("notebook_edits", "'ask'"),
            ("provider", "'anthropic'"),
        ):
            found = re.search(
                rf"AtomicAgent\.{name}=.*?\n    Current: ([^\n]*)\n", run.settings, re.S
            )
            assert found and found.group(1) == value, (name, found and found.group(1))


def as_user(user: HubUser, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["runuser", "-u", user.name, "--", "/usr/bin/python3", "-c", script, *args],
        capture_output=True, text=True, timeout=60, cwd="/",
    )  # fmt: skip


#: Run as another user: try to read each path (a folder: list it); print what happened.
TRY_READING = """
import errno, json, os, sys
said = {}
for path in json.loads(sys.argv[1]):
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            with open(path, "rb") as f:
                f.read(1)
        said[path] = "read"
    except OSError as exc:
        said[path] = errno.errorcode.get(exc.errno, str(exc.errno))
print(json.dumps(said))
"""


def agent_files(run: UserRun) -> list[Path]:
    """The user's atomic-jupyter folders and everything in them: the saved conversations (with
    the agent's own session file, its lock and the notebook's notes), the kernel tools'
    folder (its secret, read and deleted by the extension at load, named too), the demo's
    agent home and the prototypes' folder."""
    env = proc_environ(run.facts["agent"])
    roots = [
        run.user.home / ".local" / "share" / "atomic-jupyter",
        Path(run.facts["tools"]),
        Path(env["PI_CODING_AGENT_DIR"]),
        Path(env["ATOMIC_JUPYTER_PROTOTYPES"]),
    ]
    found = [Path(run.facts["tools"]) / "secret"]
    for root in roots:
        assert root.exists(), root
        found += [root, *root.rglob("*")]
    return found


@needs_root
def test_another_user_cannot_read_a_users_agent_files(team: Team) -> None:
    a, b = team.run("a"), team.run("b")
    paths = agent_files(a)
    conversation = Path(a.facts["conversation"])
    assert conversation in paths and conversation.stat().st_size > 0
    assert any(p.suffix == ".lock" for p in paths)
    said = as_user(b.user, TRY_READING, json.dumps([str(p) for p in paths]))
    assert said.returncode == 0, said.stderr
    outcome = json.loads(said.stdout)
    readable = {path: what for path, what in outcome.items() if what != "EACCES"}
    assert readable == {}, f"{b.user.name} got at {a.user.name}'s files: {readable}"
    # The shared environment: read by every user, written by none.
    shared = team.hub.shared
    writing = as_user(
        b.user,
        "import os, sys\nfor folder in sys.argv[1:]:\n"
        "    try:\n        open(os.path.join(folder, 'x'), 'w')\n        print('wrote', folder)\n"
        "    except PermissionError:\n        pass\n",
        str(shared.folder), str(shared.agents), str(shared.site_settings.parent),
    )  # fmt: skip
    assert writing.returncode == 0 and writing.stdout == "", writing.stdout + writing.stderr
    keys = as_user(b.user, TRY_READING, json.dumps([str(shared.keys / b.user.name)]))
    assert json.loads(keys.stdout) == {str(shared.keys / b.user.name): "EACCES"}


@needs_root
def test_a_users_agent_files_are_private_0600_and_0700(team: Team) -> None:
    """Every file under the user's atomic-jupyter folders is 0600 and every folder 0700 (the
    agent's own files included), whatever the folders above allow."""
    for run in team.runs.values():
        wrong = {}
        for path in agent_files(run):
            if not path.exists():
                continue
            mode = path.stat().st_mode & 0o7777
            want = 0o700 if path.is_dir() else 0o600
            if mode != want or path.stat().st_uid != run.user.uid:
                wrong[str(path)] = f"{mode:o} uid {path.stat().st_uid}"
        assert wrong == {}, f"{run.user.name}: {wrong}"


def hub_secrets(hub: Hub) -> dict[str, str]:
    """Every secret of a hub's processes: the tokens in their environments, the proxy's token,
    the cookie secret, each kernel's connection key."""
    found = {"admin token": hub.token}
    cookie = (hub.state / "jupyterhub_cookie_secret").read_text().strip()
    found["cookie secret"] = cookie
    for pid in hub.processes():
        env = proc_environ(pid)
        for key in ("JUPYTERHUB_API_TOKEN", "JPY_API_TOKEN", "CONFIGPROXY_AUTH_TOKEN"):
            if env.get(key):
                found[f"{key} of {pid}"] = env[key]
        argv = proc_cmdline(pid)
        if "-f" in argv and "ipykernel_launcher" in " ".join(argv):
            connection = json.loads(Path(argv[argv.index("-f") + 1]).read_text())
            found[f"kernel key of {pid}"] = connection["key"]
    return found


@needs_root
def test_no_key_or_secret_is_on_any_command_line(team: Team) -> None:
    wanted = hub_secrets(team.hub)
    for run in team.runs.values():
        wanted[f"key of {run.user.name}"] = run.user.key
        wanted[f"kernel-tools secret of {run.user.name}"] = run.facts["secret"]
    assert sum(k.startswith("kernel key") for k in wanted) >= 3
    assert sum(k.startswith("JUPYTERHUB_API_TOKEN") for k in wanted) >= 4  # servers, culler
    assert any(k.startswith("CONFIGPROXY_AUTH_TOKEN") for k in wanted)
    seen = []
    for pid in all_pids():
        line = " ".join(proc_cmdline(pid))
        seen += [(what, pid, line[:200]) for what, value in wanted.items() if value in line]
    assert seen == [], seen
    assert len(all_pids()) > 10  # the scan saw the processes


def test_no_users_key_is_written_to_disk(team: Team, shared: SharedEnvironment) -> None:
    """A user's key comes from the spawner's environment and stays there: no file under any
    user's home, the users' own entries in /tmp, or the shared environment holds it (but the
    admin's key files)."""
    keys = {run.user.key.encode(): run.user.name for run in team.runs.values()}
    uids = {run.user.uid for run in team.runs.values()}
    theirs = [e for e in Path("/tmp").iterdir() if _owner(e) in uids]
    roots = [run.user.home for run in team.runs.values()] + theirs + [shared.folder]
    found = []
    for root in roots:
        walked = [(str(root.parent), [], [root.name])] if root.is_file() else os.walk(root)
        for folder, _dirs, files in walked:
            if Path(folder) == shared.keys:
                continue
            for name in files:
                path = Path(folder, name)
                try:
                    if path.is_symlink() or path.stat().st_size > 50_000_000:
                        continue
                    data = path.read_bytes()
                except OSError:
                    continue
                found += [(keys[k], str(path)) for k in keys if k in data]
    assert found == [], found


def _owner(entry: Path) -> int | None:
    """Who owns ``entry`` (None when it went meanwhile: /tmp is shared with every process)."""
    try:
        return entry.lstat().st_uid
    except FileNotFoundError:
        return None


# --------------------------------------------------------------------------- the guide's other set-ups


def hub_config_values(shared: SharedEnvironment) -> Config:
    """The guide's hub configuration, run as JupyterHub runs it."""
    c = Config()
    exec(shared.substituted(guide_block("hub-config")), {"get_config": lambda: c})  # noqa: S102
    return c


def culler_timeout(command: list[str]) -> int:
    (timeout,) = [int(a.split("=", 1)[1]) for a in command if a.startswith("--timeout=")]
    return timeout


def test_the_guides_commands_made_the_shared_environment(shared: SharedEnvironment) -> None:
    commands = shared.ran_for("hub-environment")
    assert [r.guide.split("] ", 1)[1] for r in commands] == guide_lines("hub-environment")
    doctor = commands[-1]
    assert doctor.argv[1:] == ["doctor"]
    assert "Problems: none found" in doctor.stdout, doctor.stdout
    assert str(shared.agents / "current") in doctor.stdout
    installed = commands[-2]
    assert "Installed @earendil-works/pi-coding-agent " in installed.stdout
    assert f"Where: {shared.agents / 'current'}" in installed.stdout
    assert (shared.folder / "lib/node_modules/configurable-http-proxy/bin").is_dir()
    # Every user reads it; only root writes it; root's keys and state are root's alone.
    assert shared.folder.stat().st_mode & 0o777 == 0o755
    for private in (shared.keys, shared.state):
        assert private.stat().st_mode & 0o777 == 0o700
    entries = listing(shared.folder)
    others_write = [
        p for p, (kind, _, mode, *_rest) in entries.items() if kind != "l" and mode & 0o002
    ]
    unreadable = [
        p for p, (kind, _, mode, *_rest) in entries.items() if kind != "l" and not mode & 0o004
    ]
    assert others_write == [] and unreadable == [], (others_write[:10], unreadable[:10])


def test_the_docker_stacks_and_tljh_lines_add_nothing_to_an_installed_environment(
    shared: SharedEnvironment,
) -> None:
    """The Dockerfile's RUN line and TLJH's first two lines, run in the environment the guide's
    commands made: pip finds the package installed, install-agent says it is there and does
    nothing."""
    for block in ("hub-dockerfile", "hub-tljh"):
        pip, agent = shared.ran_for(block)
        said = "atomic-jupyter is already installed with the same version as the provided wheel"
        assert said in pip.stdout, pip.stdout[-2000:]
        assert "is already installed; nothing to do." in agent.stdout, agent.output
        assert f"Where: {shared.agents / 'current'}" in agent.stdout
    installs = [p for p in (shared.agents / "current").iterdir() if not p.name.startswith(".")]
    assert len(installs) == 1, installs  # one agent, not three
    site = guide_block("hub-dockerfile")
    assert "COPY ipython_config.py /opt/conda/etc/ipython/ipython_config.py" in site
    assert shared.site_settings.read_text() == shared.substituted(guide_block("hub-site-settings"))


def test_the_z2jh_and_tljh_values_match_the_hub_config(shared: SharedEnvironment) -> None:
    values = yaml.safe_load(guide_block("hub-z2jh-values"))
    config = hub_config_values(shared)
    interval = config.Spawner.environment["JUPYTERHUB_ACTIVITY_INTERVAL"]
    assert values["singleuser"]["extraEnv"]["JUPYTERHUB_ACTIVITY_INTERVAL"] == interval
    key = values["singleuser"]["extraEnv"]["ANTHROPIC_API_KEY"]
    assert set(key["valueFrom"]["secretKeyRef"]) == {"name", "key"}
    (culler,) = [s for s in config.JupyterHub.services if s["name"] == "idle-culler"]
    timeout = culler_timeout(culler["command"])
    assert values["cull"]["enabled"] is True
    assert values["cull"]["timeout"] == timeout
    tljh = [line for line in guide_lines("hub-tljh") if "services.cull.timeout" in line]
    assert tljh == [f"sudo tljh-config set services.cull.timeout {timeout}"]
    # "Keep it well under the culler's --timeout": the interval and the culler's period.
    assert int(interval) * 10 <= timeout and values["cull"]["every"] < timeout
    roles = {r["name"]: r for r in config.JupyterHub.load_roles}
    assert "delete:servers" in roles["idle-culler"]["scopes"]


@needs_root
def test_the_running_hub_has_the_guides_activity_interval_and_culler_scaled_down(
    team: Team,
) -> None:
    pids = team.hub.processes()
    culler = [p for p in pids if "jupyterhub_idle_culler" in " ".join(proc_cmdline(p))]
    assert len(culler) == 1
    argv = proc_cmdline(culler[0])
    assert culler_timeout(argv) == TEAM_CULL_TIMEOUT and f"--cull-every={CULL_EVERY}" in argv
    for run in team.runs.values():
        env = proc_environ(run.facts["kernel"])
        assert env["JUPYTERHUB_ACTIVITY_INTERVAL"] == str(ACTIVITY_INTERVAL)
        assert env["ANTHROPIC_API_KEY"] == run.user.key
    assert ACTIVITY_INTERVAL * 5 <= CULL_TIMEOUT  # scaled as the guide's 60 s and 3600 s
    assert hub_config_values(team.hub.shared).Spawner.pre_spawn_hook.__name__ == (
        "give_user_their_key"
    )


# --------------------------------------------------------------------------- one account


def test_same_account_hub_runs_the_agent_and_stops_leaving_nothing_behind(
    shared: SharedEnvironment,
) -> None:
    """The variant that needs no root: one user, every server as this account
    (SimpleLocalProcessSpawner), home under the hub's state. Run as root, it also shows the
    package writes nothing into the shared environment even where it could. Then the guide's
    hub, stopped as an admin stops it (SIGTERM), ends what it started: the proxy and the
    culler."""
    user = same_account_user(shared, shared.state / "same-account-homes")
    try:
        with running_hub(shared, [user], same_account=True) as hub:
            assert hub.proxies(), "no configurable-http-proxy of the hub found"
            before = listing(shared.folder)
            hub.start_servers([user.name])
            run = run_demo(hub, user)
            try:
                agent_checks(run, shared)
            finally:
                run.kernel.close()
            after = listing(shared.folder)
            changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
            assert changed == [], changed[:20]
            assert hub.user_api(user.name, "GET", "/api/status").status_code == 200
    finally:
        (shared.keys / user.name).unlink(missing_ok=True)
    assert hub.left_behind == [], f"{PROXY_LEFT}:\n" + "\n".join(hub.left_behind)


# --------------------------------------------------------------------------- the culler


@needs_root
def test_the_culler_stops_an_idle_server_not_one_whose_agent_waits_on_a_dialog(
    shared: SharedEnvironment, users: list[HubUser]
) -> None:
    """On a hub of its own (the guide's culler with a 15 s timeout, a 2 s activity interval):
    A's agent waits on a dialog nobody answers; C's server has a kernel, idle, with no agent.
    Once the timeout has passed for both, C's server is culled and A's is not: A's kernel
    tells its server it is active while its agent waits."""
    a, c = user(users, "a"), user(users, "c")
    with running_hub(
        shared,
        [a, c],
        cull_timeout=CULL_TIMEOUT,
        cull_every=CULL_EVERY,
        activity_interval=ACTIVITY_INTERVAL,
    ) as hub:
        (culler,) = [
            p for p in hub.processes() if "jupyterhub_idle_culler" in " ".join(proc_cmdline(p))
        ]
        argv = proc_cmdline(culler)
        assert culler_timeout(argv) == CULL_TIMEOUT and f"--cull-every={CULL_EVERY}" in argv
        hub.start_servers([a.name, c.name])
        waiting = hub.open_kernel(a.name, "waiting.ipynb")
        try:
            waiting.execute(START, timeout=120)
            area = waiting.execute(ASK, timeout=60).widget_ids[0]
            dialog = dialog_in(waiting, area, "select")
            asked_at = time.monotonic()  # A's kernel runs nothing from here on
            idle = hub.open_kernel(c.name, "idle.ipynb")
            idle.execute("%load_ext atomic_jupyter\n1 + 1")
            idle.close()
            deadline = CULL_TIMEOUT + CULL_EVERY + ACTIVITY_INTERVAL + 45
            waited = time.monotonic()
            while hub.server(c.name) is not None:
                assert time.monotonic() - waited < deadline, (
                    f"{c.name}'s idle server was not culled in {deadline} s:\n{hub.log_tail()}"
                )
                assert hub.server(a.name) is not None, (
                    f"{a.name}'s server, whose agent waits on a dialog, was culled "
                    f"{time.monotonic() - asked_at:.0f} s after the dialog opened:\n"
                    + hub.log_tail()
                )
                pause(0.5)
            assert time.monotonic() - asked_at > CULL_TIMEOUT  # A had time to be culled too
            server = hub.server(a.name)
            assert server is not None and server["ready"], (
                f"{a.name}'s server, whose agent waits on a dialog, was culled:\n{hub.log_tail()}"
            )
            # The dialog is still there to answer, and the run ends.
            dialog.choose(0)
            assert outcome_of(waiting, dialog).endswith("→ Mercury (clicked)")
            wait_done(waiting, area, timeout=60)
        finally:
            waiting.close()


def pause(seconds: float) -> None:
    """A pause between two polls of the hub's REST API (the condition is checked again
    after it)."""
    threading.Event().wait(seconds)


def user_rss(uid: int) -> int:
    """Summed RSS of every process of ``uid`` (server, kernel, agent), in bytes."""
    total = 0
    for pid in processes_of_uid(uid):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        total += sum(
            int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmRSS:")
        )
    return total


@needs_root
def test_an_idle_agent_on_the_hub_sleeps_and_the_next_prompt_continues_its_conversation(
    team: Team,
) -> None:
    """The last of the team's tests (it starts user c's agent again): a short idle time, read
    live by the running session; the agent's process gone and its memory back to the user;
    the next prompt starts it again, as that user, on the same conversation, and says so."""
    run = team.run("c")
    kernel, agent = run.kernel, run.facts["agent"]
    awake = user_rss(run.user.uid)
    kernel.execute("%config AtomicAgent.idle_sleep_minutes = 0.01")
    try:
        kernel.wait_for(
            lambda: not Path(f"/proc/{agent}").exists(), timeout=60, what="the agent asleep"
        )
        asleep = user_rss(run.user.uid)
        assert awake - asleep > 50e6, (awake, asleep)  # an agent holds about 130 MB
        woken = kernel.execute("%%atomic_agent --wait\nhello again", timeout=120)
        (area,) = woken.widget_ids
        said = visible_text(page_of(kernel, area))
        assert "was asleep" in said and "same conversation" in said, said
        facts = json.loads(kernel.execute(FACTS).stdout)
        assert facts["agent"] != agent and proc_uid(facts["agent"]) == run.user.uid
        assert facts["conversation"] == run.facts["conversation"]
    finally:
        kernel.execute("%config AtomicAgent.idle_sleep_minutes = 30")
