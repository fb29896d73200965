"""Real-browser harness: JupyterLab on 127.0.0.1, Debian's Chromium driven by Playwright.

- :class:`LabServer` starts ``jupyter lab`` with a random port and token in a scratch root
  directory, with private Jupyter/IPython config, data, runtime, settings and workspace
  directories (so nothing of the user's own set-up is read). Nothing may open a JupyterLab
  dialog (``.jp-Dialog``) on its own: the news and update checks are off (``LAB_SETTINGS``),
  the "Build Recommended" check is off (``PAGE_CONFIG``), autosave is off (no "File Changed"
  dialog), and each notebook file is written once and opened by one page, with a kernel
  named in its metadata. Every notebook cell is attached to the page (no windowing). The
  kernels get the environment it is given on top of the suite's: which agent to run
  (``ATOMIC_AGENT_COMMAND``) and a private agent directory (``PI_CODING_AGENT_DIR``).
- :class:`NotebookPage` is one notebook open in a Chromium tab: wait until its kernel is
  connected and idle, run cells the way a person does (select the cell, press Ctrl+Enter),
  take readable screenshots. A JupyterLab dialog is never clicked away: one that is open when
  the page should be usable fails the test at once with its text (:class:`JupyterDialogError`),
  and every dialog the page showed is logged (:meth:`NotebookPage.dialog_log`).
- :func:`write_notebook` writes a notebook with nbformat.

Every wait is on a condition (an HTTP answer, a DOM state, the page's own kernel state), with
a deadline; there are no fixed sleeps.
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import nbformat
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from tests.harness.support import ROOT

__all__ = ["JupyterDialogError", "LabServer", "NotebookPage", "write_notebook"]

ARTIFACTS = ROOT / "artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
#: Set to 1, the browser tests that make the docs' pictures write them into docs/ (with the
#: text each shows) instead of checking that they are current.
UPDATE_DOC_SCREENSHOTS = "ATOMIC_UPDATE_DOC_SCREENSHOTS"


#: The script that makes the documentation's pictures (its cells, its text of a shot).
SCREENSHOTS_SCRIPT = ROOT / "scripts" / "screenshots.py"


@functools.cache
def screenshots_script() -> ModuleType:
    """``scripts/screenshots.py`` as a module, loaded once."""
    spec = importlib.util.spec_from_file_location("atomic_screenshots", SCREENSHOTS_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def shot_text(text: str) -> str:
    """The text a picture shows, as kept beside it: the script's own masking
    (``scripts/screenshots.py`` ``normalised``), so the suite and the script never differ."""
    result: str = screenshots_script().normalised(text)
    return result


#: What a failing browser test leaves behind (see ``conftest.py``).
FAILURES = ARTIFACTS / "browser-failures"
CHROMIUM = "/usr/bin/chromium"
#: Flags that keep Chromium off the network and quiet in a container.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-default-apps",
    "--disable-extensions",
]
VIEWPORT = {"width": 1280, "height": 1000}

#: Seconds (and milliseconds) allowed for things that take a while on a loaded machine.
SERVER_START_S = 90
PAGE_MS = 60_000
WAIT_MS = 30_000

#: Defined in every frame before any page script: ``window.__pwned`` stays undefined unless a
#: payload runs, and every assignment is also recorded in ``window.__pwnedHits``.
PWNED_INIT_SCRIPT = """
(() => {
  const hits = [];
  let value = undefined;
  Object.defineProperty(window, "__pwnedHits", { value: hits, configurable: false });
  Object.defineProperty(window, "__pwned", {
    configurable: false,
    get() { return value; },
    set(v) { hits.push(String(v)); value = v; },
  });
})();
"""

#: Defined in the top frame before any page script: ``window.__jpDialogLog`` lists every
#: JupyterLab dialog (``.jp-Dialog``) the page showed, with its text and when it opened and
#: closed (milliseconds since the page started), for the evidence of a failure.
JP_DIALOG_LOG_SCRIPT = """
(() => {
  if (window.top !== window) return;
  const log = [];
  Object.defineProperty(window, "__jpDialogLog", { value: log, configurable: false });
  const open = new Map();
  const scan = () => {
    const now = Math.round(performance.now());
    const present = new Set(document.querySelectorAll(".jp-Dialog"));
    for (const el of present) {
      let entry = open.get(el);
      if (!entry) {
        entry = { text: "", opened_ms: now, closed_ms: null };
        open.set(el, entry);
        log.push(entry);
      }
      const text = el.innerText.trim();
      if (text) entry.text = text;
    }
    for (const [el, entry] of open) {
      if (!present.has(el)) {
        entry.closed_ms = now;
        open.delete(el);
      }
    }
  };
  const watch = () =>
    new MutationObserver(scan).observe(document.body, { childList: true, subtree: true, characterData: true });
  if (document.body) watch();
  else document.addEventListener("DOMContentLoaded", watch);
})();
"""

#: JupyterLab settings for the test server (user settings, JSON). Each one keeps a dialog
#: or a notification from opening on its own, or keeps every cell on the page.
LAB_SETTINGS = {
    # No "Would you like to receive official Jupyter news?" and no update check.
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    # No autosave: a save is the only way to a "File Changed" (changed on disk) dialog.
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    # Attach every cell to the page, so the locators see all of them.
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}

#: Page options (``labconfig/page_config.json`` in the private config directory): no
#: "Build Recommended" dialog (the build check also costs seconds of CPU on each page load).
PAGE_CONFIG = {"buildCheck": False, "buildAvailable": False}


class JupyterDialogError(AssertionError):
    """A JupyterLab dialog (``.jp-Dialog``) is open where the page should be usable."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --------------------------------------------------------------------------- the server


class LabServer:
    """``jupyter lab`` (or, with ``app="notebook"``, Jupyter Notebook 7) in a scratch
    directory; :meth:`stop` ends it and its kernels.

    ``kernel_env`` is added to the environment of the server, which its kernels inherit.
    """

    def __init__(
        self, scratch: Path, python: str, kernel_env: dict[str, str], app: str = "lab"
    ) -> None:
        self.app = app
        self.scratch = scratch
        self.root = scratch / "notebooks"
        self.root.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.token = secrets.token_hex(24)
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = scratch / "jupyter-lab.log"
        settings = scratch / "lab-user-settings"
        for name, value in LAB_SETTINGS.items():
            path = settings / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value), encoding="utf-8")
        dirs = {
            "JUPYTER_CONFIG_DIR": scratch / "jupyter-config",
            "JUPYTER_DATA_DIR": scratch / "jupyter-data",
            "JUPYTER_RUNTIME_DIR": scratch / "jupyter-runtime",
            "IPYTHONDIR": scratch / "ipython",
        }
        for d in dirs.values():
            d.mkdir(parents=True, exist_ok=True)
        labconfig = dirs["JUPYTER_CONFIG_DIR"] / "labconfig"
        labconfig.mkdir()
        (labconfig / "page_config.json").write_text(json.dumps(PAGE_CONFIG), encoding="utf-8")
        env = dict(os.environ)
        env.update({k: str(v) for k, v in dirs.items()})
        env.update(kernel_env)
        env.update({"JUPYTER_PLATFORM_DIRS": "1", "PYTHONDONTWRITEBYTECODE": "1"})
        env.pop("JUPYTER_TOKEN", None)
        settings_app = "LabApp" if app == "lab" else "JupyterNotebookApp"
        self.argv = [
            str(Path(python).parent / "jupyter"),
            app,
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            "--no-browser",
            "--allow-root",
            f"--ServerApp.root_dir={self.root}",
            f"--{settings_app}.user_settings_dir={settings}",
            f"--{settings_app}.workspaces_dir={scratch / 'lab-workspaces'}",
            # window.jupyterapp: the page's own kernel state, to wait on (as JupyterLab's
            # own browser tests do).
            f"--{settings_app}.expose_app_in_browser=True",
        ]
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> LabServer:
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            self.argv,
            cwd=self.root,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + SERVER_START_S
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"jupyter {self.app} exited with code {self.proc.returncode}:\n{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(self.api_url("/api/status"), timeout=5) as r:
                    if r.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"jupyter {self.app} did not answer in {SERVER_START_S} s:\n{self.log_tail()}"
                )
            # Polling an HTTP endpoint: a short pause between attempts, not a wait for an effect.
            time.sleep(0.2)

    def api_url(self, path: str) -> str:
        return f"{self.base}{path}?token={self.token}"

    def lab_url(self, notebook: str) -> str:
        """The page of ``notebook`` (JupyterLab's, or Notebook 7's)."""
        if self.app == "notebook":
            return f"{self.base}/notebooks/{notebook}?token={self.token}"
        return f"{self.base}/lab/tree/{notebook}?token={self.token}&reset"

    def lab_setting(self, plugin: str) -> dict[str, Any]:
        """The server's answer for a JupyterLab plugin's settings (``raw`` is the user's own
        JSON text, ``settings`` what applies), e.g. ``@jupyterlab/apputils-extension:themes``."""
        request = urllib.request.Request(
            f"{self.base}/lab/api/settings/{plugin}",
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=10) as r:
            return dict(json.loads(r.read()))

    def put_lab_setting(self, plugin: str, raw: str) -> None:
        """Replace a plugin's user settings (``raw``: JSON text) on the server. Pages that are
        open keep what they loaded; pages opened later load this."""
        request = urllib.request.Request(
            f"{self.base}/lab/api/settings/{plugin}",
            data=json.dumps({"raw": raw}).encode(),
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
            method="PUT",
        )
        with urllib.request.urlopen(request, timeout=10):
            pass

    def log_size(self) -> int:
        """How many bytes the server's log holds now (where :meth:`log_since` reads from)."""
        try:
            return self.log_path.stat().st_size
        except OSError:
            return 0

    def log_since(self, offset: int) -> str:
        """What the server logged after ``offset`` (a :meth:`log_size`)."""
        try:
            with open(self.log_path, "rb") as log:
                log.seek(offset)
                return log.read().decode(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def shutdown_kernels(self) -> None:
        """Shut every kernel down through the REST API (their agents stop with them)."""
        try:
            with urllib.request.urlopen(self.api_url("/api/kernels"), timeout=10) as r:
                kernels = json.loads(r.read())
            for kernel in kernels:
                self._delete_kernel(kernel["id"])
        except (urllib.error.URLError, OSError, ValueError):
            pass

    def _delete_kernel(self, kernel: str) -> None:
        """Shut the kernel ``kernel`` (its id) down through the REST API."""
        req = urllib.request.Request(self.api_url(f"/api/kernels/{kernel}"), method="DELETE")
        with urllib.request.urlopen(req, timeout=30):
            pass

    def kernel_of(self, notebook: str) -> str | None:
        """The id of the kernel of ``notebook`` (its path under the root), if it has one."""
        with urllib.request.urlopen(self.api_url("/api/sessions"), timeout=10) as r:
            sessions = json.loads(r.read())
        for session in sessions:
            if session.get("path") == notebook and session.get("kernel"):
                return str(session["kernel"]["id"])
        return None

    def shutdown_kernel_of(self, notebook: str) -> None:
        """Shut the notebook's kernel down (its agent stops with it)."""
        try:
            kernel = self.kernel_of(notebook)
            if kernel is not None:
                self._delete_kernel(kernel)
        except (urllib.error.URLError, OSError, ValueError):
            pass

    def run_in_kernel(self, notebook: str, code: str, timeout: float = 30) -> str:
        """Run ``code`` in the notebook's kernel from a second client; return its output.

        For evidence when a test fails: what the session in the kernel holds.
        """
        import warnings

        from jupyter_client import BlockingKernelClient

        kernel = self.kernel_of(notebook)
        if kernel is None:
            return f"(no kernel for {notebook})"
        out: list[str] = []

        def hook(msg: dict[str, Any]) -> None:
            content = msg.get("content", {})
            if msg.get("msg_type") == "stream":
                out.append(content.get("text", ""))
            elif msg.get("msg_type") == "error":
                out.append("\n".join(content.get("traceback", [])))

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            client = BlockingKernelClient(
                connection_file=str(self.scratch / "jupyter-runtime" / f"kernel-{kernel}.json")
            )
            client.load_connection_file()
            client.start_channels()
            try:
                client.execute_interactive(
                    code, timeout=timeout, output_hook=hook, store_history=False
                )
            finally:
                client.stop_channels()
        return "".join(out)

    def stop(self) -> None:
        proc = self.proc
        if proc is None:
            return
        self.proc = None
        if proc.poll() is None:
            self.shutdown_kernels()
        for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
            if proc.poll() is not None:
                break
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(wait)
            except subprocess.TimeoutExpired:
                continue
        self._log.close()


# --------------------------------------------------------------------------- notebooks


def write_notebook(path: Path, cells: Sequence[str]) -> Path:
    """A notebook of code cells, with the venv's ``python3`` kernel."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    nbformat.write(nb, path)
    return path


#: In the page: the state of the notebook ``path``'s kernel as JupyterLab itself holds it, or
#: the text of an open JupyterLab dialog. Resolves (truthy) once the kernel is connected and
#: idle, or as soon as a dialog is open; on the way, JupyterLab's command executions start
#: being recorded in ``window.__jpCommands`` (see :meth:`NotebookPage.run`).
KERNEL_READY = """(path) => {
  const dialog = document.querySelector(".jp-Dialog");
  if (dialog) return { dialog: dialog.innerText.trim() };
  const app = window.jupyterapp;
  if (!app) return null;
  if (!window.__jpCommands) {
    const commands = [];
    app.commands.commandExecuted.connect((_, args) => commands.push(args.id));
    Object.defineProperty(window, "__jpCommands", { value: commands, configurable: false });
  }
  for (const widget of Array.from(app.shell.widgets("main"))) {
    if (!widget.context || widget.context.path !== path) continue;
    const session = widget.sessionContext;
    const kernel = session && session.session && session.session.kernel;
    if (session && session.isReady && kernel && kernel.connectionStatus === "connected"
        && kernel.status === "idle") {
      return { kernel: kernel.name };
    }
  }
  return null;
}"""

#: In the page: whether a key press now reaches the notebook's command-mode shortcuts (their
#: selector is ``.jp-Notebook.jp-mod-commandMode:not(.jp-mod-readWrite) :focus``), or the text
#: of an open JupyterLab dialog.
KEYS_REACH_NOTEBOOK = """(notebook) => {
  const dialog = document.querySelector(".jp-Dialog");
  if (dialog) return { dialog: dialog.innerText.trim() };
  const focused = document.activeElement;
  return notebook.classList.contains("jp-mod-commandMode")
    && !notebook.classList.contains("jp-mod-readWrite")
    && focused !== notebook && notebook.contains(focused) ? { ready: true } : null;
}"""


#: In the page: whether JupyterLab shows the theme ``name``: its name and light/dark flag on
#: the body, and its stylesheet applied (the computed ``--jp-layout-color0`` is as light or
#: dark as the theme says). Resolves with ``{light, background}``, or the text of a dialog.
THEME_APPLIED = """(name) => {
  const dialog = document.querySelector(".jp-Dialog");
  if (dialog) return { dialog: dialog.innerText.trim() };
  const data = document.body.dataset;
  if (data.jpThemeName !== name || !["true", "false"].includes(data.jpThemeLight)) return null;
  const probe = document.createElement("div");
  probe.style.background = "var(--jp-layout-color0)";
  document.body.appendChild(probe);
  const background = getComputedStyle(probe).backgroundColor;
  probe.remove();
  const rgb = (background.match(/[\\d.]+/g) || []).slice(0, 3).map(Number);
  if (rgb.length < 3) return null;
  const light = (0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]) > 128;
  return light === (data.jpThemeLight === "true") ? { light, background } : null;
}"""


#: How often :func:`on_element` tries again when its element was drawn anew under it.
ELEMENT_ATTEMPTS = 5


def on_element(action: Any) -> Any:
    """Run a locator's action that works on the one element it finds (scrolling it into view,
    a screenshot): Playwright does not look again when that element leaves the page part way,
    as a dialog's place does when the page draws its block again (its controls move to the
    new place). Such an action is tried again, on the element the locator finds then."""
    for attempt in range(ELEMENT_ATTEMPTS):
        try:
            return action()
        except PlaywrightError as exc:
            if "not attached to the DOM" not in str(exc) or attempt == ELEMENT_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


class NotebookPage:
    """One notebook open in a Chromium tab.

    Parameters
    ----------
    page:
        The Playwright page.
    filename:
        The notebook's path under the server's root.
    names:
        The names of the notebook's cells, in order.
    """

    def __init__(self, page: Any, filename: str, names: Sequence[str]) -> None:
        self.page = page
        self.filename = filename
        self.names = list(names)
        self.js_dialogs: list[str] = []
        self.page_errors: list[str] = []
        self.console_errors: list[str] = []
        page.on(
            "console",
            lambda msg: self.console_errors.append(msg.text) if msg.type == "error" else None,
        )
        #: Cells whose Ctrl+Enter had to be pressed again (see :meth:`run`).
        self.key_retries: list[str] = []
        page.on("dialog", self._on_js_dialog)
        page.on("pageerror", lambda exc: self.page_errors.append(str(exc)))

    def _on_js_dialog(self, dialog: Any) -> None:
        self.js_dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    # ------------------------------------------------------------------ finding

    @property
    def notebook(self) -> Any:
        return self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook").first

    def cell(self, name: str) -> Any:
        """The cell called ``name`` (input and output)."""
        return self.notebook.locator(".jp-Cell").nth(self.names.index(name))

    def output(self, name: str) -> Any:
        """The output area of the cell called ``name``."""
        return self.cell(name).locator(".jp-OutputArea").first

    def expect_no_lost_widget_shown(self) -> None:
        """No "Error displaying widget" of a lost widget is visible, however many the widget
        manager has drawn by now (one per lost output; they appear one by one, so a strict
        locator would see one, two, or none depending on the moment)."""
        lost = self.notebook.get_by_text("Error displaying widget")
        expect(lost.filter(visible=True)).to_have_count(0)

    # ------------------------------------------------------------------ JupyterLab dialogs

    def open_dialogs(self) -> list[str]:
        """The text of every JupyterLab dialog open now."""
        return [text.strip() for text in self.page.locator(".jp-Dialog").all_inner_texts()]

    def dialog_log(self) -> list[dict[str, Any]]:
        """Every JupyterLab dialog the page showed: text, opened_ms and closed_ms (or None)."""
        return list(self.page.evaluate("() => Array.from(window.__jpDialogLog || [])"))

    def expect_no_dialog(self, when: str) -> None:
        """Fail at once, with its text, if a JupyterLab dialog is open (never click it away)."""
        dialogs = self.open_dialogs()
        if dialogs:
            raise JupyterDialogError(
                f"a JupyterLab dialog is open {when} in {self.filename}:\n"
                + "\n---\n".join(dialogs)
            )

    def _wait_or_dialog(self, script: str, arg: Any, timeout: float, what: str) -> dict[str, Any]:
        """Wait until ``script(arg)`` is truthy; fail at once, with its text, on a dialog."""
        result = self.page.wait_for_function(script, arg=arg, timeout=timeout, polling=100)
        value: dict[str, Any] = result.json_value()
        if "dialog" in value:
            raise JupyterDialogError(
                f"a JupyterLab dialog is open {what} in {self.filename}:\n{value['dialog']}"
            )
        return value

    # ------------------------------------------------------------------ acting

    def wait_ready(self) -> None:
        """Wait until every cell is on the page and JupyterLab holds a connected, idle kernel.

        The kernel state is the page's own (``sessionContext``): the toolbar's execution
        indicator says "idle" before any kernel exists, so it proves nothing here.
        """
        expect(self.notebook.locator(".jp-Cell")).to_have_count(len(self.names), timeout=PAGE_MS)
        self._wait_or_dialog(KERNEL_READY, self.filename, PAGE_MS, "while waiting for the kernel")

    def wait_kernel_idle(self, timeout: float = WAIT_MS) -> None:
        self._wait_or_dialog(KERNEL_READY, self.filename, timeout, "while waiting for the kernel")

    def restart_kernel(self, timeout: float = PAGE_MS) -> None:
        """Restart the notebook's kernel as a person does: Kernel → Restart Kernel…, then
        Restart in JupyterLab's "Restart Kernel?" dialog (the one dialog this clicks, since the
        test asked for it); wait until the page's kernel went through "restarting" and is
        connected and idle again. The cells keep their outputs."""
        self.expect_no_dialog("before restarting the kernel")
        page = self.page
        # The kernel's states from now on, as the page's session sees them (a restart keeps
        # the kernel's id, so "idle" alone would not tell the new kernel from the old one).
        watched = page.evaluate(
            """(path) => {
              for (const widget of Array.from(window.jupyterapp.shell.widgets("main"))) {
                if (!widget.context || widget.context.path !== path) continue;
                const log = [];
                widget.sessionContext.statusChanged.connect((_, status) => log.push(status));
                window.__jpKernelStates = log;
                return true;
              }
              return false;
            }""",
            self.filename,
        )
        assert watched, f"no notebook panel for {self.filename}"
        page.keyboard.press("Escape")  # no menu left open
        page.locator(".lm-MenuBar-item").filter(
            has=page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Kernel$"))
        ).click()
        page.locator(".lm-Menu:visible .lm-Menu-item").filter(
            has=page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Restart Kernel…$"))
        ).click()
        dialog = page.locator(".jp-Dialog")
        expect(dialog.locator(".jp-Dialog-header")).to_have_text("Restart Kernel?")
        dialog.get_by_role("button", name="Confirm Kernel Restart").click()
        expect(dialog).to_have_count(0)
        page.wait_for_function(
            "() => (window.__jpKernelStates || []).includes('restarting')",
            timeout=timeout,
            polling=100,
        )
        self._wait_or_dialog(
            KERNEL_READY, self.filename, timeout, "while waiting for the restarted kernel"
        )

    def wait_saved(self) -> None:
        """Wait until JupyterLab has saved this notebook (its model no longer dirty)."""
        self.page.wait_for_function(
            """(path) => {
              const panel = Array.from(window.jupyterapp.shell.widgets("main"))
                .find(w => w.context && w.context.path === path);
              return panel && !panel.context.model.dirty;
            }""",
            arg=self.filename,
        )

    def run(self, name: str, timeout: float = 90_000) -> Any:
        """Run a cell as a person does: select it, press Ctrl+Enter; wait until it finished.

        Returns the cell. Fails, showing the output, when the cell printed to stderr or raised,
        and at once, with its text, when a JupyterLab dialog is open.
        """
        cell = self.start(name)
        prompt = cell.locator(".jp-InputArea-prompt").first
        expect(prompt).to_have_text(re.compile(r"^\[\d+\]:$"), timeout=timeout)
        errors = cell.locator(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
        )
        if errors.count():
            raise AssertionError(
                f"cell {name!r} wrote to stderr:\n" + "\n".join(errors.all_inner_texts())
            )
        return cell

    def start(self, name: str) -> Any:
        """Start a cell as a person does (select it, press Ctrl+Enter) and return it, without
        waiting for it to finish (its prompt may read "[*]:" for a while)."""
        cell = self.cell(name)
        prompt = cell.locator(".jp-InputArea-prompt").first
        notebook = self.notebook.element_handle()
        # "[ ]:" before, "[*]:" once JupyterLab sends the cell, "[N]:" when done. The press is
        # made only when the notebook's command-mode shortcuts can see it (the focus is inside
        # the notebook). Whether JupyterLab acted on it is read from its own command log: a
        # press that ran no command is made again, one that did never is (no cell runs twice).
        for attempt in range(3):
            self.expect_no_dialog(f"before running {name!r}")
            prompt.scroll_into_view_if_needed()
            prompt.click()
            expect(cell).to_have_class(re.compile(r"\bjp-mod-selected\b"))
            self._wait_or_dialog(KEYS_REACH_NOTEBOOK, notebook, WAIT_MS, f"before running {name!r}")
            before = self.page.evaluate("() => window.__jpCommands.length")
            self.page.keyboard.press("Control+Enter")
            try:
                self.page.wait_for_function(
                    "(n) => window.__jpCommands.slice(n).includes('notebook:run-cell')",
                    arg=before,
                    timeout=10_000,
                    polling=100,
                )
                break
            except PlaywrightTimeout:
                if attempt == 2:
                    raise
                self.key_retries.append(name)
        return cell

    def set_theme(self, theme: str) -> dict[str, Any]:
        """Switch JupyterLab's theme as a person does: Settings → Theme → ``theme`` (e.g.
        ``"JupyterLab Dark"``); wait until the page shows it. The outputs on the page stay
        as they are (no reload). JupyterLab saves the choice in the server's user settings,
        so pages opened later get it too (see :meth:`LabServer.put_lab_setting`).

        Returns ``{light, background}``: whether it is a light theme, and its
        ``--jp-layout-color0``.
        """
        self.expect_no_dialog(f"before switching to {theme!r}")
        page = self.page
        page.keyboard.press("Escape")  # no menu left open
        page.locator(".lm-MenuBar-item").filter(
            has=page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Settings$"))
        ).click()
        menu_item = page.locator(".lm-Menu:visible .lm-Menu-item")
        menu_item.filter(
            has=page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Theme$"))
        ).click()
        menu_item.filter(
            has=page.locator(".lm-Menu-itemLabel", has_text=re.compile(rf"^{re.escape(theme)}$"))
        ).click()
        expect(page.locator(".lm-Menu")).to_have_count(0)
        return self._wait_or_dialog(THEME_APPLIED, theme, WAIT_MS, f"while switching to {theme!r}")

    # ------------------------------------------------------------------ looking

    def screenshot(self, locator: Any, name: str) -> Path:
        """A PNG of ``locator`` (scrolled into view) as ``artifacts/screenshots/<name>.png``."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        on_element(locator.scroll_into_view_if_needed)
        # The notebook scrolls inside the page, so an element taller than its visible part
        # would be cut off: the window is made tall enough for it, then put back.
        box = locator.bounding_box()
        visible = self.page.locator(
            ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer"
        ).first.bounding_box()
        needed = int(box["height"] - visible["height"]) + 80 if box and visible else 0
        if needed > 0:
            self.page.set_viewport_size(
                {"width": VIEWPORT["width"], "height": min(VIEWPORT["height"] + needed, 6000)}
            )
            # JupyterLab lays itself out again on the resize: wait for the taller notebook.
            self.page.wait_for_function(
                "(h) => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer')].some(e => e.clientHeight >= h)",
                arg=min(int(box["height"]), 5800) if box else 0,
            )
            expect(locator).to_be_visible()
            on_element(locator.scroll_into_view_if_needed)
        try:
            on_element(
                functools.partial(
                    locator.screenshot, path=str(path), animations="disabled", caret="hide"
                )
            )
        finally:
            if needed > 0:
                self.page.set_viewport_size(VIEWPORT)
        return path

    def doc_screenshot(self, locator: Any, name: str, doc: Path) -> Path:
        """:meth:`screenshot` of a picture the docs show as ``doc`` (a PNG under the checkout's
        ``docs/``), which has the text it shows beside it (``doc`` with ``.txt``, digits
        masked). Fails when the page shows other text: the picture is of an older build. With
        ``$ATOMIC_UPDATE_DOC_SCREENSHOTS=1`` it writes the picture and its text instead."""
        path = self.screenshot(locator, name)
        shown = shot_text(locator.inner_text())
        said = doc.with_suffix(".txt")
        if os.environ.get(UPDATE_DOC_SCREENSHOTS) == "1":
            shutil.copy(path, doc)
            said.write_text(shown, encoding="utf-8")
            return path
        before = said.read_text(encoding="utf-8") if said.exists() else ""
        assert shown == before, (
            f"{doc.relative_to(ROOT)} shows an older build: run this test with "
            f"{UPDATE_DOC_SCREENSHOTS}=1 and commit the picture and its text.\n"
            + "".join(difflib.unified_diff(before.splitlines(True), shown.splitlines(True)))
        )
        return path

    def pwned(self) -> dict[str, Any]:
        """The page's ``window.__pwned`` and every value assigned to it, in any frame."""
        values = []
        for frame in self.page.frames:
            try:
                values.append(
                    frame.evaluate(
                        "() => ({value: window.__pwned, hits: Array.from(window.__pwnedHits || [])})"
                    )
                )
            except Exception as exc:  # a frame that went away
                values.append({"value": None, "hits": [], "error": str(exc)})
        return {
            "value": next((v["value"] for v in values if v.get("value") is not None), None),
            "hits": [h for v in values for h in v["hits"]],
            "frames": len(values),
        }


def panel_of(nb: NotebookPage, cell: str = "start") -> Any:
    """The session's panel in the output of the cell called ``cell`` (the one that started it)."""
    return nb.output(cell).locator(".atomic-panel")


def run_start(nb: NotebookPage, title: str) -> None:
    """Run the cell called ``start`` and wait until its panel shows the session's ``title``."""
    nb.run("start")
    expect(panel_of(nb).locator(".atomic-title")).to_have_text(title)


def source_of(nb: NotebookPage, name: str) -> str:
    """A cell's source as the notebook's model holds it."""
    index = nb.names.index(name)
    return str(
        nb.page.evaluate(
            """([path, index]) => {
              const panel = Array.from(window.jupyterapp.shell.widgets("main"))
                .find(w => w.context && w.context.path === path);
              return panel.content.widgets[index].model.sharedModel.getSource();
            }""",
            [nb.filename, index],
        )
    )
