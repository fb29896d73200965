"""The offline demo: a scripted model (:func:`demo_script`) and the bundled demo extension."""

from __future__ import annotations

from atomic_jupyter.addons.demo.script import DEMO_PROMPTS, KEYWORDS, demo_script, intent_of

__all__ = ["DEMO_PROMPTS", "KEYWORDS", "demo_script", "intent_of"]
