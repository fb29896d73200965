"""Screenshots of a real run for the README and the docs: docs/_static/screenshot-{light,dark}.png.

Starts JupyterLab on 127.0.0.1 (a free port, a token) in a scratch directory, opens a small
notebook in headless Chromium (/usr/bin/chromium, driven by Playwright) that starts the offline
demo model and asks it to describe and plot a data frame (a streamed answer, and a ``python``
tool card with its approval dialog, decided by a policy, and the figure), then shoots the prompt
cell in JupyterLab's light theme and again in its dark theme. Every wait is on a condition.
JupyterLab, its kernel (and agent) and the browser are stopped at the end, even on failure.

Run it from the checkout: ``.venv/bin/python scripts/screenshots.py`` (no API key, no network).

With the pictures it writes ``docs/_static/screenshot.txt``: the text the shot shows (digits
masked, as timings and token counts change from run to run). The browser suite runs the same
cells (``tests/browser/test_browser_screenshots.py``) and fails when the current build shows
other text, so a changed string cannot leave a stale picture behind.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
from PIL import Image
from playwright.sync_api import expect, sync_playwright

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "_static"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-extensions"]  # fmt: skip
VIEWPORT = {"width": 1100, "height": 800}
SCALE = 2
#: CSS pixels around the cell in the screenshot.
MARGIN = 8
MAX_BYTES = 250_000
THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}
PROMPT = "%%atomic_agent --wait\ndescribe $`sales` and plot its first column"
CELLS = [
    "%load_ext atomic_jupyter\n%atomic_agent start --demo",
    "import matplotlib.pyplot as plt\nimport pandas as pd\n\n"
    'plt.rcParams.update({"figure.figsize": (8, 2.5), "figure.dpi": 150})\n'
    'sales = pd.read_csv("sales.csv", index_col="month")\n'
    '%atomic_agent policy --title "Python in the kernel" yes',
    PROMPT,
]
#: Application settings (overrides.json): scripts/lab-settings' defaults, plus no update
#: check, no autosave, every cell on the page, and the light theme to begin with.
OVERRIDES = {
    **json.loads((ROOT / "scripts" / "lab-settings" / "overrides.json").read_text()),
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/apputils-extension:themes": {"theme": THEMES["light"]},
    "@jupyterlab/docmanager-extension:plugin": {"autosave": False},
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
}
#: In the page: the notebook's kernel is connected and idle (JupyterLab's own state).
KERNEL_IDLE = """(path) => Array.from(window.jupyterapp?.shell.widgets("main") ?? []).some(w => {
  const k = w.context?.path === path && w.sessionContext?.session?.kernel;
  return k && w.sessionContext.isReady && k.connectionStatus === "connected" && k.status === "idle";
})"""
#: In the page: a key press now reaches the notebook's command-mode shortcuts.
KEYS_REACH_NOTEBOOK = """() => {
  const nb = document.querySelector(".jp-NotebookPanel .jp-Notebook");
  return nb.classList.contains("jp-mod-commandMode") && !nb.classList.contains("jp-mod-readWrite")
    && nb !== document.activeElement && nb.contains(document.activeElement);
}"""
#: In the page: the theme ``name`` is applied (its name on the body, its stylesheet loaded).
THEME_APPLIED = """(name) => {
  if (document.body.dataset.jpThemeName !== name) return false;
  const light = document.body.dataset.jpThemeLight === "true";
  const rgb = getComputedStyle(document.body).backgroundColor.match(/\\d+/g).map(Number);
  return (rgb[0] + rgb[1] + rgb[2] > 384) === light;
}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def agent_command() -> str:
    """The checkout's pinned agent, as scripts/lab.sh finds it."""
    os.environ.setdefault("ATOMIC_JUPYTER_AGENT_HOME", str(ROOT / ".agents"))
    if os.environ.get("ATOMIC_AGENT_COMMAND"):
        return os.environ["ATOMIC_AGENT_COMMAND"]
    from atomic_jupyter.transport.agent_install import agent_homes, find_installed, pin_of

    found = find_installed(pin_of("current"), agent_homes()).found
    if not found:
        sys.exit("no agent installed: run `make lab` or `make agent` first")
    return str(found.executable)


def start_lab(scratch: Path) -> tuple[subprocess.Popen[bytes], str, str]:
    """JupyterLab in ``scratch`` with private Jupyter dirs; returns it, its URL and token."""
    root = scratch / "notebooks"
    root.mkdir()
    shutil.copy(ROOT / "notebooks" / "sales.csv", root)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, root / "demo.ipynb")
    env = {**os.environ, "JUPYTER_PLATFORM_DIRS": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR",
                "PI_CODING_AGENT_DIR", "LAB_SETTINGS", "USER_SETTINGS", "WORKSPACES"):  # fmt: skip
        env[var] = str(scratch / var.lower())
        Path(env[var]).mkdir()
    labconfig = Path(env["JUPYTER_CONFIG_DIR"], "labconfig")
    labconfig.mkdir()  # no "Build Recommended" check
    (labconfig / "page_config.json").write_text('{"buildCheck": false, "buildAvailable": false}')
    Path(env["LAB_SETTINGS"], "overrides.json").write_text(json.dumps(OVERRIDES))
    env["ATOMIC_AGENT_COMMAND"] = agent_command()
    env["ATOMIC_JUPYTER_AGENT_HOME"] = os.environ["ATOMIC_JUPYTER_AGENT_HOME"]
    env.pop("JUPYTER_TOKEN", None)
    port, token = free_port(), secrets.token_hex(24)
    argv = [str(Path(sys.executable).parent / "jupyter"), "lab", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", "--ServerApp.port_retries=0", "--no-browser",
            f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
            f"--LabApp.app_settings_dir={env['LAB_SETTINGS']}",
            f"--LabApp.user_settings_dir={env['USER_SETTINGS']}",
            f"--LabApp.workspaces_dir={env['WORKSPACES']}",
            "--LabApp.expose_app_in_browser=True"]  # fmt: skip
    if os.getuid() == 0:
        argv.append("--allow-root")
    with open(scratch / "jupyter-lab.log", "wb") as log:  # the server keeps its own copy
        proc = subprocess.Popen(argv, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5):
                return proc, base, token
        except (urllib.error.URLError, OSError):
            time.sleep(0.2)  # polling the server, not waiting for an effect
    stop_lab(proc, base, token)
    raise RuntimeError(f"JupyterLab did not start\n{log_tail(scratch)}")


def stop_lab(proc: subprocess.Popen[bytes], base: str, token: str) -> None:
    """Shut the kernels down (their agents stop with them), then the server."""
    try:
        with urllib.request.urlopen(f"{base}/api/kernels?token={token}", timeout=10) as r:
            for kernel in json.loads(r.read()):
                url = f"{base}/api/kernels/{kernel['id']}?token={token}"
                with urllib.request.urlopen(
                    urllib.request.Request(url, method="DELETE"), timeout=30
                ):
                    pass
    except (urllib.error.URLError, OSError, ValueError):
        pass
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
            proc.wait(20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass


def log_tail(scratch: Path) -> str:
    lines = (scratch / "jupyter-lab.log").read_text(errors="replace").splitlines()[-40:]
    return "JupyterLab's log (end):\n" + "\n".join(lines)


def run_cell(page, cell) -> None:
    """Select ``cell``, press Ctrl+Enter, wait for its "[N]:" prompt."""
    prompt = cell.locator(".jp-InputArea-prompt")
    prompt.click()
    expect(cell).to_have_class(re.compile(r"\bjp-mod-selected\b"))
    page.wait_for_function(KEYS_REACH_NOTEBOOK, polling=100)
    page.keyboard.press("Control+Enter")
    expect(prompt).to_have_text(re.compile(r"^\[\d+\]:$"), timeout=120_000)
    errors = cell.locator("[data-mime-type='application/vnd.jupyter.stderr']")
    if errors.count():
        raise RuntimeError("a cell failed:\n" + "\n".join(errors.all_inner_texts()))


def save_png(png: bytes, path: Path) -> int:
    """Write ``png`` to ``path`` as a palette PNG (JupyterLab's flat colours fit in 256 almost
    exactly; MAXCOVERAGE keeps small coloured text true, MEDIANCUT does not); return its size."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    out = io.BytesIO()
    image.quantize(256, method=Image.Quantize.MAXCOVERAGE).save(out, "PNG", optimize=True)
    data = out.getvalue()
    if len(data) > MAX_BYTES:
        print(f"warning: {path.name} is {len(data) / 1000:.0f} kB (over {MAX_BYTES / 1000:.0f})")
    path.write_bytes(data)
    return len(data)


def fit(page, cell) -> None:
    """Make the window tall enough for the whole of ``cell`` and a margin, and centre it."""
    outer = page.locator(".jp-NotebookPanel .jp-WindowedPanel-outer").first
    need = int(cell.bounding_box()["height"]) + 4 * MARGIN
    have = int(outer.bounding_box()["height"])
    if need > have:
        page.set_viewport_size({**VIEWPORT, "height": VIEWPORT["height"] + need - have})
        page.wait_for_function(
            "(h) => document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer')"
            ".clientHeight >= h",
            arg=need,
        )
    cell.evaluate("(e) => e.scrollIntoView({block: 'center'})")


def shoot(page, cell, theme: str, path: Path) -> None:
    page.evaluate("(theme) => window.jupyterapp.commands.execute('apputils:change-theme', {theme})",
                  theme)  # fmt: skip
    page.wait_for_function(THEME_APPLIED, arg=theme, polling=100)
    expect(page.locator("#jupyterlab-splash")).to_have_count(0)  # the theme change's splash
    toasts = page.locator(".jp-toast, .Toastify__toast")
    if toasts.count():
        print("warning: toasts open:", toasts.all_inner_texts())
    page.mouse.move(0, 0)  # no hover effects
    box = cell.bounding_box()
    clip = {"x": box["x"] - MARGIN, "y": box["y"] - MARGIN,
            "width": box["width"] + 2 * MARGIN, "height": box["height"] + 2 * MARGIN}  # fmt: skip
    png = page.screenshot(clip=clip, animations="disabled", caret="hide")
    size = save_png(png, path)
    width, height = Image.open(path).size
    print(f"wrote {path.relative_to(ROOT)}: {width}x{height}, {size / 1000:.0f} kB")


@contextlib.contextmanager
def demo_run() -> Iterator[tuple[Any, Any]]:
    """JupyterLab and Chromium with the demo notebook run; yields the page and the prompt
    cell, the left panel collapsed and the window tall enough for the cell. Stops everything."""
    with contextlib.ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        proc, base, token = start_lab(scratch)
        stack.callback(stop_lab, proc, base, token)
        stack.push(lambda kind, *_: kind and print(log_tail(scratch), file=sys.stderr))
        p = stack.enter_context(sync_playwright())
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        stack.callback(browser.close)
        page = browser.new_page(viewport=VIEWPORT, device_scale_factor=SCALE)
        page.set_default_timeout(60_000)
        page.goto(f"{base}/lab/tree/demo.ipynb?token={token}&reset")
        cells = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell")
        expect(cells).to_have_count(len(CELLS))
        page.wait_for_function(KERNEL_IDLE, arg="demo.ipynb", polling=100)
        for i in range(len(CELLS)):
            run_cell(page, cells.nth(i))
        cell = cells.last
        transcript = cell.locator(".atomic-transcript")
        expect(transcript.locator(".atomic-run-state")).to_have_text("done")
        expect(transcript.locator(".atomic-footer")).to_contain_text("turn")
        expect(transcript.locator(".atomic-dialog-outcome")).to_contain_text("→ Yes")
        expect(transcript.locator(".atomic-tool img").first).to_be_visible()
        # Another cell selected (no toolbar or focus bar on the shot), no side panel.
        cells.first.locator(".jp-InputArea-prompt").click()
        expect(cell).not_to_have_class(re.compile(r"\bjp-mod-selected\b"))
        page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
        expect(page.locator("#jp-left-stack")).to_be_hidden()
        fit(page, cell)
        yield page, cell


#: What the pictures show, as text (:func:`shown_text`), written with them.
TEXT = OUT / "screenshot.txt"


def normalised(text: str) -> str:
    """``text`` with each word of hex digits with a digit in it as ``0`` (timings, token
    counts, dates, ids), a duration as ``0 s`` (``ms`` or ``s``), each line stripped and blank
    lines left out."""
    masked = (re.sub(r"[0-9a-f]*\d[0-9a-f]*", "0", line) for line in text.splitlines())
    lines = (re.sub(r"\b0(?:\.0)? m?s\b", "0 s", line).strip() for line in masked)
    return "\n".join(line for line in lines if line) + "\n"


def shown_text(cell: Any) -> str:
    """What the shot of ``cell`` (a JupyterLab cell) shows as text: its input and outputs."""
    return normalised(cell.inner_text())


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with demo_run() as (page, cell):
        for name, theme in THEMES.items():
            shoot(page, cell, theme, OUT / f"screenshot-{name}.png")
        TEXT.write_text(shown_text(cell), encoding="utf-8")
        print(f"wrote {TEXT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
