"""Giving the agent an API key from the notebook: which provider the last run wanted a key
for, and the key a person typed handed to the agent (its environment, the agent started again
on the same conversation), kept past the kernel only when asked (the agent's credential
store). The key is never shown, printed, logged or written into the notebook."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from atomic_jupyter.session.provider_keys import (
    KeyWanted,
    key_refused,
    key_variable,
    missing_key_provider,
)
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.transport.credentials import agent_folder, read_models_json, store_api_key
from atomic_jupyter.transport.launch import LaunchSpec

__all__ = ["KeyHandoff"]

#: Longer than any provider's key.
LONGEST_KEY = 4096


class KeyHandoff:
    """The key a session's provider wants, and the one given to it.

    Parameters
    ----------
    spec:
        The session's launch spec, as it is now.
    relaunch:
        Makes a spec (with the key in its environment) the session's for every later start,
        and starts a running agent again with it (on the same conversation); an agent that
        is not running takes it when it next starts.
    changed:
        Called when :attr:`wanted` changed (a view shows or hides the key field).
    """

    def __init__(
        self,
        spec: Callable[[], LaunchSpec],
        relaunch: Callable[[LaunchSpec], None],
        changed: Callable[[], None],
    ) -> None:
        self._spec = spec
        self._relaunch = relaunch
        self._changed = changed
        #: The provider the last run wanted a key for (None: none was missing or refused).
        self.wanted: KeyWanted | None = None

    def run_ending(self, run: PromptRun) -> None:
        """A run is about to be over: if it failed for want of a key, or for a key the
        provider refused, remember which provider, and say in the run how to give one (before
        anything shows the run finished, so its record has the line too)."""
        wanted = self._wanted_by(run)
        if wanted is None:
            return
        self.wanted = wanted
        run.transcript.note(wanted.advice(), "error", kind="key")
        self._changed()

    def _wanted_by(self, run: PromptRun) -> KeyWanted | None:
        provider = missing_key_provider(run.error or "")
        refused = False
        if provider is None:
            for block in reversed(run.transcript.snapshot()):
                message = getattr(block, "message", None)
                if isinstance(message, dict) and message.get("role") == "assistant":
                    if key_refused(str(message.get("errorMessage") or "")):
                        provider, refused = str(message.get("provider") or ""), True
                    break
        if not provider:
            return None
        models = read_models_json(agent_folder(self._spec().env))
        return KeyWanted(provider, key_variable(provider, models), refused)

    def use_key(self, key: str, *, keep: bool = False, provider: str | None = None) -> str | None:
        """Give the agent the API key ``key`` for the provider that wanted one
        (:attr:`~atomic_jupyter.session.session.AgentSession.key_wanted`), or for
        ``provider`` when given.

        The key is set in the agent's environment only (the variable the provider reads),
        and a running agent is started again on the same conversation. With ``keep``, it is
        also kept past this kernel in the agent's credential store (``auth.json`` in the
        agent's folder, ``0600``). The key is never shown, printed or saved in the notebook.

        Returns
        -------
        str or None
            What went wrong, in words; None when the key was given.
        """
        wanted = self.wanted
        if provider is not None:
            models = read_models_json(agent_folder(self._spec().env))
            wanted = KeyWanted(provider, key_variable(provider, models))
        if wanted is None:
            return "no provider is waiting for a key (name one: provider=...)"
        key = key.strip()
        if not key or any(c.isspace() for c in key) or len(key) > LONGEST_KEY:
            return "that does not look like an API key (empty, too long, or with spaces)"
        if keep and key[0] in "!$":
            return "a kept key starting with ! or $ would be read as a command or a variable"
        if not keep and wanted.variable is None:
            return (
                f"which variable {wanted.provider} reads is not known here: tick the box to "
                "give the key through the agent's credential store"
            )
        spec = self._spec()
        if keep:
            try:
                store_api_key(agent_folder(spec.env), wanted.provider, key)
            except OSError as exc:
                return f"could not write the agent's credential store ({exc.strerror})"
        if wanted.variable is not None:
            spec = replace(spec, env={**spec.env, wanted.variable: key})
        self.wanted = None
        self._changed()
        self._relaunch(spec)
        return None
