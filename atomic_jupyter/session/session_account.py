"""Where a session stands and the key it runs on, as a base of
:class:`~atomic_jupyter.session.session.AgentSession` (:class:`SessionAccount`): the parts
that follow the model, thinking level, tokens, cost and context fill
(:class:`~atomic_jupyter.session.standing.StandingWatch`) and the API key a person gives
(:class:`~atomic_jupyter.session.key_handoff.KeyHandoff`), wired to the session's other parts.
"""

from __future__ import annotations

from collections.abc import Callable

from atomic_jupyter.protocol.agent_line import AgentLine
from atomic_jupyter.session.commands import CommandChannel
from atomic_jupyter.session.key_handoff import KeyHandoff
from atomic_jupyter.session.provider_keys import KeyWanted
from atomic_jupyter.session.run_tracker import RunTracker
from atomic_jupyter.session.session_commands import documented_as
from atomic_jupyter.session.standing import StandingWatch
from atomic_jupyter.transport.client import AgentClient
from atomic_jupyter.transport.launch import LaunchSpec

__all__ = ["SessionAccount"]


class SessionAccount:
    """The session's standing and key.

    Parameters
    ----------
    client, commands, tracker:
        The session's parts: questions go out through the client, every command sent is
        followed, and the runs tell when to ask again.
    agent:
        Which agent runs.
    spec, relaunch:
        The session's launch spec now, and what launches with a new one (see
        :class:`~atomic_jupyter.session.key_handoff.KeyHandoff`).
    changed:
        Called when the provider that wants a key changed.

    Attributes
    ----------
    standing:
        Where the session stands (model, thinking level, tokens, cost, context): views
        observe ``standing.changed`` and read ``standing.current``.
    """

    def __init__(
        self,
        client: AgentClient,
        commands: CommandChannel,
        tracker: RunTracker,
        agent: Callable[[], AgentLine],
        spec: Callable[[], LaunchSpec],
        relaunch: Callable[[LaunchSpec], None],
        changed: Callable[[], None],
    ) -> None:
        self.standing = standing = StandingWatch(lambda command: client.request(command), agent)
        commands.after_send = standing.after
        tracker.changed.add(standing.follow_run)
        tracker.ending.add(lambda run: standing.follow_run(run, "ending"))  # a run over at once
        self._keys = KeyHandoff(spec, relaunch, changed)
        tracker.ending.add(self._keys.run_ending)

    @property
    def key_wanted(self) -> KeyWanted | None:
        """The provider the last run wanted a key for (None: none was missing or refused)."""
        return self._keys.wanted

    @documented_as(KeyHandoff.use_key)
    def use_key(self, key: str, *, keep: bool = False, provider: str | None = None) -> str | None:
        return self._keys.use_key(key, keep=keep, provider=provider)
