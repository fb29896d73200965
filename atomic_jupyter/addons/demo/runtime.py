"""The offline demo model of one session: a scripted server and a private agent home.

``%atomic_agent start --demo`` (``aj.start(demo=True)``) starts, inside the kernel, an
OpenAI-compatible streaming server on 127.0.0.1 that plays :func:`demo_script`'s turns, and
points the agent at it through a ``models.json`` in a fresh private agent directory (the
agent's ``PI_CODING_AGENT_DIR`` / ``ATOMIC_CODING_AGENT_DIR``). The user's own agent
configuration is never read or written. The bundled demo extension is loaded too. Everything
goes away with the session.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

from atomic_jupyter.addons.model_server import ScriptedModelServer, agent_args, write_models_json
from atomic_jupyter.session.plugins import LaunchAdditions
from atomic_jupyter.transport.private_files import write_private

if TYPE_CHECKING:
    from atomic_jupyter.session.session import AgentSession

__all__ = ["DEMO_EXTENSION", "DemoAddon", "DemoBackend", "demo_addon"]

#: The bundled demo extension (package data).
DEMO_EXTENSION = Path(__file__).with_name("demo_extension.ts")


class DemoBackend:
    """A running demo model: start it, hand its environment and arguments to the agent, stop it."""

    def __init__(self) -> None:
        self.server: ScriptedModelServer | None = None
        self.home: Path | None = None

    def start(self) -> DemoBackend:
        """Start the scripted server and write the private agent home."""
        from atomic_jupyter.addons.demo.script import demo_script

        self.home = Path(tempfile.mkdtemp(prefix="atomic-demo-agent-"))
        # Removed at interpreter exit even if the session is never stopped.
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.home, True)
        self.server = ScriptedModelServer(
            demo_script, provider="demo", model_id="offline-demo"
        ).start()
        write_models_json(self.home, self.server, free=True)  # the footer shows no cost
        # Fast retries, and no compaction surprises from a scripted model.
        write_private(self.home / "settings.json", json.dumps({"retry": {"baseDelayMs": 100}}))
        return self

    @property
    def running(self) -> bool:
        """Whether the server is up."""
        return self.server is not None and self.server.running

    def env(self) -> dict[str, str]:
        """Environment variables that point the agent at the private home."""
        assert self.home is not None, "start() first"
        return {"PI_CODING_AGENT_DIR": str(self.home), "ATOMIC_CODING_AGENT_DIR": str(self.home)}

    def args(self) -> list[str]:
        """Agent arguments: the demo provider and model, and the demo extension."""
        assert self.server is not None, "start() first"
        return [*agent_args(self.server), "-e", str(DEMO_EXTENSION)]

    def stop(self) -> None:
        """Stop the server and remove the private home."""
        server, self.server = self.server, None
        home, self.home = self.home, None
        if server is not None:
            server.stop()
        if home is not None:
            self._finalizer.detach()
            shutil.rmtree(home, ignore_errors=True)


def demo_addon(session: AgentSession) -> DemoAddon | None:
    """The demo addon of a session started with ``demo=True``."""
    return DemoAddon() if session.spec.demo else None


class DemoAddon:
    """Runs a fresh :class:`DemoBackend` for each launch; it goes with its agent."""

    name = "demo"

    def __init__(self) -> None:
        #: The backend of the running agent (None between launches).
        self.backend: DemoBackend | None = None

    def launch(self) -> LaunchAdditions:
        """Start a demo backend and point the agent at it."""
        self.close()
        self.backend = DemoBackend().start()
        return LaunchAdditions(args=self.backend.args(), env=self.backend.env())

    def agent_exited(self) -> None:
        """Stop the backend: server and private home go with the agent."""
        self.close()

    def close(self) -> None:
        """Stop the backend, if one runs."""
        backend, self.backend = self.backend, None
        if backend is not None:
            backend.stop()
