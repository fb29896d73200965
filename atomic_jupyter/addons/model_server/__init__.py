"""A scripted, OpenAI-compatible chat-completions server, for tests and offline demos.

The agent (pi) talks to any server that speaks the OpenAI *chat completions* API
(``api: "openai-completions"`` in its ``models.json``). :class:`ScriptedModelServer` is such
a server, in the standard library only: for every ``POST /v1/chat/completions`` it calls a
*script* with the parsed request and streams the :class:`Turn` the script returns, as
server-sent events in the shape the agent parses:

- ``choices[0].delta.content`` for :class:`Text`,
- ``choices[0].delta.reasoning_content`` for :class:`Thinking` (the agent also reads
  ``reasoning`` and ``reasoning_text``),
- ``choices[0].delta.tool_calls[{index, id, type, function: {name, arguments}}]`` for
  :class:`ToolCall`, the arguments' JSON split across several chunks,
- ``choices[0].finish_reason`` (``"tool_calls"`` -> the agent runs the tools, ``"stop"``),
- a last chunk with ``usage`` (``prompt_tokens``, ``completion_tokens``, ``total_tokens``)
  when the request asks for it (``stream_options.include_usage``, which the agent sends),
- then ``data: [DONE]``.

:class:`Fail` answers with an HTTP error instead, which the agent reports as an assistant
message with ``stopReason: "error"``.

Example::

    def script(request):
        if request.turn_index == 0:
            return Turn([ToolCall("bash", {"command": "echo hi"})])
        return Turn([Text("done")])

    with ScriptedModelServer(script) as server:
        write_models_json(agent_dir, server)       # then run the agent with
        argv = ["pi", *agent_args(server)]         # PI_CODING_AGENT_DIR=agent_dir

The package's modules: ``turns`` (what a script answers with), ``request`` (what it is asked),
``stream`` (the shapes a turn is sent in), ``handler`` (the HTTP handler), ``server`` (the
server's life and its record of requests) and ``agent_setup`` (``models.json`` and arguments).
"""

from __future__ import annotations

from atomic_jupyter.addons.model_server.agent_setup import (
    DUMMY_API_KEY,
    FREE,
    PRICED,
    agent_args,
    model_entry,
    write_models_json,
)
from atomic_jupyter.addons.model_server.request import ChatRequest, content_text
from atomic_jupyter.addons.model_server.server import REQUESTS_KEPT, Script, ScriptedModelServer
from atomic_jupyter.addons.model_server.turns import (
    Fail,
    Part,
    Text,
    Thinking,
    ToolCall,
    Turn,
    Usage,
)

__all__ = [
    "DUMMY_API_KEY",
    "FREE",
    "PRICED",
    "REQUESTS_KEPT",
    "ChatRequest",
    "Fail",
    "Part",
    "Script",
    "ScriptedModelServer",
    "Text",
    "Thinking",
    "ToolCall",
    "Turn",
    "Usage",
    "agent_args",
    "content_text",
    "model_entry",
    "write_models_json",
]
