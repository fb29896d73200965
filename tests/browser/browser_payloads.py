"""The script payloads of the browser suite (the same strings as tests/extensions/browser_payloads.ts)."""

from __future__ import annotations


def payload(field: str) -> str:
    """HTML, script and LaTeX that would set ``window.__pwned = field`` if the page ran it."""
    return (
        f"{field}: <img src=x onerror=\"window.__pwned='{field}'\">"
        f" <script>window.__pwned='{field}'</script>"
        f" <svg onload=\"window.__pwned='{field}'\"></svg>"
        f" <iframe srcdoc=\"<script>parent.__pwned='{field}'</script>\"></iframe>"
        f" <a href=\"javascript:window.__pwned='{field}'\">link</a>"
        f" $\\style{{background:red}}{{{field}}}$ $$\\href{{javascript:window.__pwned='{field}'}}{{tex}}$$"
    )


#: What the scripted model answers: the payloads in Markdown, raw HTML blocks, links, images
#: and maths, then a bash call whose output is a payload.
MARKDOWN_PAYLOAD = (
    "# Payload answer\n\n"
    f"Inline: {payload('md-inline')}\n\n"
    "<script>window.__pwned='md-script-block'</script>\n\n"
    "<img src=x onerror=\"window.__pwned='md-img-block'\">\n\n"
    "<svg onload=\"window.__pwned='md-svg-block'\"></svg>\n\n"
    "<iframe srcdoc=\"<script>parent.__pwned='md-iframe-block'</script>\"></iframe>\n\n"
    "[a javascript link](javascript:window.__pwned='md-link')\n\n"
    "<javascript:window.__pwned='md-autolink'>\n\n"
    "![an image](x\" onerror=\"window.__pwned='md-image')\n\n"
    "![a remote image](https://example.invalid/pixel.png)\n\n"
    "Maths: $\\style{background:red}{md-tex}$ and\n\n"
    "$$\\href{javascript:window.__pwned='md-tex-href'}{click}$$\n\n"
    "```html\n<img src=x onerror=\"window.__pwned='md-code'\">\n```\n"
)

TOOL_PAYLOAD = payload("tool-output")
TOOL_COMMAND = f"cat <<'PAYLOAD'\n{TOOL_PAYLOAD}\nPAYLOAD"
FINAL_TEXT = "The tool printed a payload; it is shown above as text."

#: Substrings that show a payload was displayed as text rather than parsed as HTML.
MARKERS = (
    "<img src=x onerror=",
    "<script>window.__pwned=",
    "<svg onload=",
    "$\\style{background:red}",
)


def model_cell(extension: str) -> str:
    """A notebook cell: a scripted model in the kernel that answers with the payloads, and a
    session on it with the payload extension."""
    return f"""%load_ext atomic_jupyter
import tempfile
import atomic_jupyter as aj
from atomic_jupyter.addons.model_server import ScriptedModelServer, Text, ToolCall, Turn, Usage, agent_args, write_models_json

MARKDOWN_PAYLOAD = {MARKDOWN_PAYLOAD!r}
TOOL_COMMAND = {TOOL_COMMAND!r}

def script(request):
    if not request.tool_results:
        return Turn([Text(MARKDOWN_PAYLOAD), ToolCall("bash", {{"command": TOOL_COMMAND}})], usage=Usage(100, 200))
    return Turn([Text({FINAL_TEXT!r})], usage=Usage(300, 20))

server = ScriptedModelServer(script).start()
agent_dir = tempfile.mkdtemp(prefix="payload-agent-", dir=".")  # in the lab's scratch root
write_models_json(agent_dir, server)
s = aj.start(extensions=[{extension!r}], env={{"PI_CODING_AGENT_DIR": agent_dir}}, extra_args=agent_args(server))"""
