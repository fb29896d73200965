"""Real-browser harness: JupyterLab on 127.0.0.1, Debian's Chromium driven by Playwright.

- :class:`LabServer` starts ``jupyter lab`` with a random port and token in a scratch root
  directory, with private Jupyter/IPython config, data, runtime and settings directories (so
  nothing of the user's own set-up is read), JupyterLab's news and update checks off, and
  every notebook cell attached to the page (no windowing). The environment it passes on
  reaches the kernels: the pinned agent (``ATOMIC_AGENT_COMMAND``) and a private agent
  directory (``PI_CODING_AGENT_DIR``).
- :class:`NotebookPage` is one notebook open in a Chromium tab: find cells, run them the way a
  person does (select the cell, press Ctrl+Enter), and take readable screenshots.
- :func:`write_notebook` writes a notebook with nbformat.

Every wait is on a condition (an HTTP answer, a DOM state), with a generous timeout; there
are no fixed sleeps.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import nbformat

ROOT = Path(__file__).resolve().parents[2]
EXTENSIONS = ROOT / "tests" / "extensions"
PINNED_AGENT = ROOT / "agent" / "node_modules" / ".bin" / "pi"
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
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

#: JupyterLab settings for the test server (user settings, JSON).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    # Attach every cell to the page, so the locators see all of them.
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --------------------------------------------------------------------------- the server


class LabServer:
    """``jupyter lab`` in a scratch directory; :meth:`stop` ends it and its kernels."""

    def __init__(self, scratch: Path, python: str) -> None:
        self.scratch = scratch
        self.root = scratch / "notebooks"
        self.root.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.token = secrets.token_hex(24)
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = scratch / "jupyter-lab.log"
        self.agent_dir = scratch / "agent-home"
        self.agent_dir.mkdir(exist_ok=True)
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
        env = dict(os.environ)
        env.update({k: str(v) for k, v in dirs.items()})
        env.update(
            {
                "JUPYTER_PLATFORM_DIRS": "1",
                # The kernels inherit these: the pinned agent, and a private agent directory.
                "ATOMIC_AGENT_COMMAND": f"{PINNED_AGENT} --no-session",
                "PI_CODING_AGENT_DIR": str(self.agent_dir),
                "PYTHONDONTWRITEBYTECODE": "1",
            }
        )
        env.pop("JUPYTER_TOKEN", None)
        self.argv = [
            str(Path(python).parent / "jupyter"),
            "lab",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            "--no-browser",
            "--allow-root",
            f"--ServerApp.root_dir={self.root}",
            f"--LabApp.user_settings_dir={settings}",
            f"--LabApp.workspaces_dir={scratch / 'lab-workspaces'}",
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
                    f"jupyter lab exited with code {self.proc.returncode}:\n{self.log_tail()}"
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
                    f"jupyter lab did not answer in {SERVER_START_S} s:\n{self.log_tail()}"
                )
            # Polling an HTTP endpoint: a short pause between attempts, not a wait for an effect.
            time.sleep(0.2)

    def api_url(self, path: str) -> str:
        return f"{self.base}{path}?token={self.token}"

    def lab_url(self, notebook: str) -> str:
        return f"{self.base}/lab/tree/{notebook}?token={self.token}&reset"

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
                req = urllib.request.Request(
                    self.api_url(f"/api/kernels/{kernel['id']}"), method="DELETE"
                )
                with urllib.request.urlopen(req, timeout=30):
                    pass
        except (urllib.error.URLError, OSError, ValueError):
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
                req = urllib.request.Request(
                    self.api_url(f"/api/kernels/{kernel}"), method="DELETE"
                )
                with urllib.request.urlopen(req, timeout=30):
                    pass
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

    # ------------------------------------------------------------------ acting

    def wait_ready(self) -> None:
        """Wait until every cell is on the page and the kernel is idle."""
        from playwright.sync_api import expect

        expect(self.notebook.locator(".jp-Cell")).to_have_count(len(self.names), timeout=PAGE_MS)
        self.wait_kernel_idle(PAGE_MS)

    def wait_kernel_idle(self, timeout: float = WAIT_MS) -> None:
        from playwright.sync_api import expect

        indicator = self.page.locator(
            ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator"
        ).first
        expect(indicator).to_have_attribute("data-status", "idle", timeout=timeout)

    def run(self, name: str, timeout: float = 90_000) -> Any:
        """Run a cell as a person does: select it, press Ctrl+Enter; wait until it finished.

        Returns the cell. Fails, showing the output, when the cell printed to stderr or raised.
        """
        from playwright.sync_api import expect

        cell = self.cell(name)
        prompt = cell.locator(".jp-InputArea-prompt").first
        # "[ ]:" before, "[*]:" as soon as JupyterLab sends the cell, "[N]:" when done. Right
        # after the page loads, JupyterLab sometimes drops the first key press (focus still
        # settling); the prompt then stays "[ ]:" and the press is repeated. A handled press
        # changes the prompt at once, so a cell never runs twice.
        for attempt in range(4):
            prompt.scroll_into_view_if_needed()
            prompt.click()
            expect(cell).to_have_class(re.compile(r"\bjp-mod-selected\b"))
            expect(self.notebook).to_have_class(re.compile(r"\bjp-mod-commandMode\b"))
            self.page.keyboard.press("Control+Enter")
            try:
                expect(prompt).not_to_have_text(re.compile(r"^\[ \]:$"), timeout=5_000)
                break
            except AssertionError:
                if attempt == 3:
                    raise
                self.key_retries.append(name)
        expect(prompt).to_have_text(re.compile(r"^\[\d+\]:$"), timeout=timeout)
        errors = cell.locator(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
        )
        if errors.count():
            raise AssertionError(
                f"cell {name!r} wrote to stderr:\n" + "\n".join(errors.all_inner_texts())
            )
        return cell

    # ------------------------------------------------------------------ looking

    def screenshot(self, locator: Any, name: str) -> Path:
        """A PNG of ``locator`` (scrolled into view) as ``artifacts/screenshots/<name>.png``."""
        from playwright.sync_api import expect

        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        locator.scroll_into_view_if_needed()
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
            locator.scroll_into_view_if_needed()
        try:
            locator.screenshot(path=str(path), animations="disabled", caret="hide")
        finally:
            if needed > 0:
                self.page.set_viewport_size(VIEWPORT)
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
