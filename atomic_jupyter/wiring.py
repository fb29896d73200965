"""Plugs the upper layers into every session: addons (prototyping, the demo model, the kernel
tools, the saved conversations, in the order their arguments go on the command line), the
notebook's presentation, what a prompt's citations (``$`name```) stand for, and the built-in
tools that work in the kernel (the agent's Python, the notebook's variables and cells) and
in the open notebook (reading, editing and running its cells).

Imported once, on first use, through the hook the package root gives the session layer
(``session.plugins.use_wiring``): by the first session made (``AgentSession.__init__`` calls
``plugins.wire()``), or by ``%load_ext atomic_jupyter``. So ``import atomic_jupyter`` and the
command line load no widget library and no IPython, and every session is wired the same.
"""

from __future__ import annotations

from atomic_jupyter.addons.demo.runtime import demo_addon
from atomic_jupyter.addons.kernel_tools.runtime import kernel_tools_addon
from atomic_jupyter.addons.prototype.manager import prototype_addon
from atomic_jupyter.addons.saved_conversations.runtime import conversations_addon
from atomic_jupyter.notebook.agent_code import builtin_tools, cite_with_agent
from atomic_jupyter.notebook.kernel_activity import signal_activity
from atomic_jupyter.notebook.kernel_values import summarize
from atomic_jupyter.notebook.notebook_tools import notebook_tools
from atomic_jupyter.notebook.presentation import NotebookPresentation
from atomic_jupyter.session.citations import use_citation_resolver
from atomic_jupyter.session.idle import use_activity_signal
from atomic_jupyter.session.kernel_tools import use_builtin_tools, use_value_summary
from atomic_jupyter.session.session import AgentSession

AgentSession.register_addon(prototype_addon)
AgentSession.register_addon(demo_addon)
AgentSession.register_addon(kernel_tools_addon)
AgentSession.register_addon(conversations_addon)
AgentSession.use_presentation(NotebookPresentation)
use_citation_resolver(cite_with_agent)  # $`name` in a prompt: the kernel's values, Agent[n]
# python, notebook_variables, notebook_cells; notebook_read, _edit, _run while a page is linked
use_builtin_tools(builtin_tools() + notebook_tools())
use_value_summary(summarize)  # what a kernel tool's result reads, for the model
use_activity_signal(signal_activity)  # a busy agent keeps its kernel counted as active
