"""The kernel-tools addon of a session: the extension that offers kernel functions as tools,
its private folder, the launch's secret, and publishing the list of tools.

Every launch loads the bundled extension (``kernel_tools.ts``) with ``-e`` and tells it, in
``ATOMIC_JUPYTER_KERNEL_TOOLS``, where the session's private folder is (made at the first
launch, mode 0700, kept across restarts, removed when the session is stopped). Before each
launch a fresh ``secret`` is written there (mode 0600); the extension reads and deletes it at
load and puts it in the title of each call's ``editor`` dialog, ``atomic-kernel-call
<secret>``, by which the session knows a kernel call from any other dialog (see
``atomic_jupyter.session.kernel_tools``).

:meth:`KernelToolsAddon.publish` writes ``tools.json``, the list of tools
(``[{"name", "description", "parameters", "approval"}]``), and, while the agent runs, sends
the extension command ``/atomic-jupyter-tools``, which the agent answers once the extension
has registered them; a restarted agent reads the file at its start.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile
import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_jupyter.errors import AgentNotRunningError
from atomic_jupyter.session.plugins import LaunchAdditions
from atomic_jupyter.transport.private_files import write_private

if TYPE_CHECKING:
    from atomic_jupyter.session.session import AgentSession

__all__ = [
    "COMMAND",
    "ENV_VAR",
    "KERNEL_TOOLS_EXTENSION",
    "KernelToolsAddon",
    "kernel_tools_addon",
]

#: The bundled extension loaded into every session.
KERNEL_TOOLS_EXTENSION = Path(__file__).resolve().with_name("kernel_tools.ts")
#: The environment variable that names the private folder.
ENV_VAR = "ATOMIC_JUPYTER_KERNEL_TOOLS"
#: The extension command that makes the agent read ``tools.json`` again.
COMMAND = "/atomic-jupyter-tools"
#: How long :meth:`KernelToolsAddon.publish` waits for the agent to take the tools.
PUBLISH_TIMEOUT = 30.0


def kernel_tools_addon(session: AgentSession) -> KernelToolsAddon:
    """The kernel-tools addon of a session (every session has one)."""
    return KernelToolsAddon(session)


class KernelToolsAddon:
    """The kernel tools' private folder and secret, and the tools offered (an addon).

    Parameters
    ----------
    session:
        The session whose agent loads the extension.
    """

    name = "kernel-tools"

    def __init__(self, session: AgentSession) -> None:
        self.session = session
        self._lock = threading.RLock()
        self._folder: Path | None = None
        self._secret: str | None = None
        self._specs: list[dict[str, Any]] = []
        self._finalizer: weakref.finalize[Any, Any] | None = None

    # ------------------------------------------------------------------ state

    @property
    def folder(self) -> Path | None:
        """The private folder (None before the first launch or publish, and after close)."""
        return self._folder

    @property
    def secret(self) -> str | None:
        """The secret of the latest launch (None before the first launch and after close)."""
        return self._secret

    @property
    def specs(self) -> list[dict[str, Any]]:
        """The tools last published."""
        with self._lock:
            return list(self._specs)

    @property
    def status(self) -> dict[str, Any]:
        """What the extension last did with ``tools.json``: ``{"registered": [...],
        "active": [...], "skipped": {name: why}}`` (empty before it did anything)."""
        folder = self._folder
        if folder is None:
            return {}
        try:
            data = json.loads((folder / "status.json").read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _made_folder(self) -> Path:
        with self._lock:
            if self._folder is None:
                folder = Path(tempfile.mkdtemp(prefix="atomic-kernel-tools-"))  # mode 0700
                self._folder = folder
                # Removed at interpreter exit even if the session is never stopped.
                self._finalizer = weakref.finalize(self, shutil.rmtree, folder, True)
                self._write_tools()
            return self._folder

    def _write_tools(self) -> None:
        """Write tools.json atomically (the agent never reads half of it)."""
        assert self._folder is not None
        write_private(self._folder / "tools.json", json.dumps(self._specs))

    # ------------------------------------------------------------------ addon

    def launch(self) -> LaunchAdditions:
        """Write this launch's secret; load the extension and tell it where the folder is."""
        with self._lock:
            folder = self._made_folder()
            secret = secrets.token_hex(16)
            file = folder / "secret"
            file.unlink(missing_ok=True)  # never write into a file someone else opened
            descriptor = os.open(file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w") as out:
                out.write(secret)
            self._secret = secret
        return LaunchAdditions(args=["-e", str(KERNEL_TOOLS_EXTENSION)], env={ENV_VAR: str(folder)})

    def agent_exited(self) -> None:
        """Nothing to do: the tools wait for the next start, which gets a new secret.

        (An exit may be reported after the next launch began, so nothing of "the current
        launch" is touched here; a secret file an agent never read stays in the private
        folder until the next launch replaces it or :meth:`close` removes it.)
        """

    def close(self) -> None:
        """Remove the private folder; the session is stopped for good."""
        with self._lock:
            folder, self._folder = self._folder, None
            self._secret = None
            finalizer, self._finalizer = self._finalizer, None
        if finalizer is not None:
            finalizer.detach()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    # ------------------------------------------------------------------ publishing

    def publish(self, specs: list[dict[str, Any]]) -> None:
        """Make exactly these tools the agent's: now if it runs, else at its next start.

        Parameters
        ----------
        specs:
            ``{"name", "description", "parameters": <JSON Schema object>, "approval": bool}``
            for each tool.

        Raises
        ------
        TypeError
            When ``specs`` cannot be written as JSON.
        atomic_jupyter.errors.AtomicAgentError
            When the running agent does not take the tools in time (or fails the command).
        """
        copied = json.loads(json.dumps(list(specs)))  # fails here, not half-written
        with self._lock:
            self._specs = copied
            self._made_folder()
            self._write_tools()
        if not self.session.alive:
            return
        try:
            self.session.request({"type": "prompt", "message": COMMAND}, timeout=PUBLISH_TIMEOUT)
        except AgentNotRunningError:
            pass  # it exited meanwhile: its next start reads tools.json
