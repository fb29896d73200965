"""Plugs the upper layers into every session: addons (prototyping, the demo model, the kernel
tools, the saved conversations, in the order their arguments go on the command line), the
notebook's presentation, and what a prompt's citations (``$`name```) stand for.

Imported by the package itself, so any ``import atomic_jupyter...`` wires sessions the same.
"""

from __future__ import annotations

from atomic_jupyter.addons.conversations.runtime import conversations_addon
from atomic_jupyter.addons.demo.runtime import demo_addon
from atomic_jupyter.addons.kernel_tools.runtime import kernel_tools_addon
from atomic_jupyter.addons.prototype.manager import prototype_addon
from atomic_jupyter.notebook.kernel_values import cite, summarize
from atomic_jupyter.notebook.presentation import NotebookPresentation
from atomic_jupyter.session.citations import use_citation_resolver
from atomic_jupyter.session.kernel_tools import use_value_summary
from atomic_jupyter.session.session import AgentSession

AgentSession.register_addon(prototype_addon)
AgentSession.register_addon(demo_addon)
AgentSession.register_addon(kernel_tools_addon)
AgentSession.register_addon(conversations_addon)
AgentSession.use_presentation(NotebookPresentation)
use_citation_resolver(cite)  # $`name` in a prompt: the kernel's values
use_value_summary(summarize)  # what a kernel tool's result reads, for the model
