"""The offline demo model's script: deterministic turns chosen by what the prompt asks.

:func:`demo_script` is a :class:`~atomic_jupyter.addons.model_server.ScriptedModelServer` script.
It looks at the *last user message* only. A prompt that cites kernel values (it holds
:data:`~atomic_jupyter.session.citations.CITED_HEADING`, as the notebook sends ``$`name```) is
answered from the cited summaries, before any keyword is looked at:

``plot`` (``describe $`df` and plot its first column``)
    Runs code in the kernel: a ``python`` call (:func:`plot_code`) that prints the first cited
    data frame's ``describe()`` and plots its first column, then quotes the first lines printed
    and points to the figure in the tool's card; or says plainly that the person declined, the
    code failed (its exception) or the agent offers no ``python`` tool.
``Explain the last error`` with a failed cell cited (``%atomic_agent fix``)
    The cell's number and the traceback's last line (the exception), and a generic fix tip.
any other cited prompt
    Which values it got and, for each, its type and size in words with a one-line preview of
    its value (``primes: a list of 6 items: `[2, 3, 5, 7, 11, 13]```), and one sentence on what
    the demo can say about it: it sees summaries, not live objects, and computes nothing.

When the agent offers the notebook tools (a JupyterLab or Notebook 7 page is linked), a prompt
about a cell by its position (``change cell 2 to `x = 2```, ``explain cell 2``, ``add a
markdown cell after cell 1: `# Setup```, ``delete cell 3``, ``run cell 2``) reads the notebook,
then proposes that change or runs that cell (:mod:`~atomic_jupyter.addons.demo.notebook_cells`).

A prompt that names a tool the agent offers and is not one of its own (a function the notebook
exposed with ``session.expose``) calls it, with arguments taken from the prompt in the schema's
order (numbers for numbers, quoted text for strings), then says what it answered.

Otherwise it looks for these keywords, lower-cased (whole words; the first group that matches,
in this order, wins):

``clean`` / ``delete`` / ``dangerous``
    A ``bash`` call ``rm -rf ./demo-scratch`` (a harmless path), which the bundled demo
    extension guards with a ``select`` dialog ("Allow" / "Block"), then a text turn that
    reports whether the tool result says it was blocked or that it ran.
``plot``
    As a cited ``plot`` prompt above, on a backquoted name in the prompt or the word after
    "describe" or "plot" (``plot sales``); with none, it asks for a cited data frame.
``read``
    ``bash`` ``ls -la`` (or the ``ls`` tool when the agent offers one), then a ``read`` call on
    a file of the listing (the first ``*.ipynb``, else a ``README``, else ``*.md``, else any
    file), then a short summary of what was read.
``files`` / ``list``
    ``bash`` ``ls -la`` (or ``ls``), then a short summary of the listing.
``think`` / ``plan``
    A thinking block, then text.
``markdown`` / ``hello`` / ``intro``
    Streamed Markdown: a heading, a list, a table and a fenced Python code block.
anything else
    A polite answer: this is an offline demo model with scripted answers, the prompts it
    understands (:data:`DEMO_PROMPTS`), and how to start a real model instead.

Text streams in small chunks with a tiny delay, so streaming is visible in the notebook while
a whole answer takes well under two seconds. No turn reports a usage: the demo model is free
and counts nothing, so a run's footer shows no tokens or cost (as with any provider that
reports none) rather than invented figures.

The script is pure (no I/O, no clock, no randomness): the same request always gets the same
turn. The pinned agents offer the tools ``read`` (``path``, ``offset``,
``limit``), ``bash`` (``command``, ``timeout``), ``edit`` (``path``, ``edits``) and ``write``
(``path``, ``content``); ``ls`` (``path``, ``limit``) only when enabled with ``--tools``. The
notebook adds its own: ``python`` (``code``: run in the kernel, after the person approves),
``notebook_variables``, ``notebook_cells`` and the functions it exposed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from atomic_jupyter.addons.demo.cited import cited_answer, cited_values, first_line, inline
from atomic_jupyter.addons.demo.notebook_cells import (
    NOTEBOOK_PROMPTS,
    notebook_intent,
    notebook_turn,
)
from atomic_jupyter.addons.model_server import (
    ChatRequest,
    Text,
    Thinking,
    ToolCall,
    Turn,
    content_text,
)
from atomic_jupyter.session.citations import CITED_HEADING

__all__ = [
    "CHUNK",
    "DELAY",
    "DEMO_PROMPTS",
    "KEYWORDS",
    "PYTHON_TOOL",
    "SCRATCH_COMMAND",
    "cited_answer",
    "cited_values",
    "demo_script",
    "intent_of",
    "plot_code",
]

#: Characters per streamed piece of text, and seconds before each piece.
CHUNK = 6
DELAY = 0.005

#: The bash command of the "clean" prompts; the demo extension guards it with a dialog.
SCRATCH_COMMAND = "rm -rf ./demo-scratch"

#: Example prompts, one per keyword, for notebooks to show.
DEMO_PROMPTS: dict[str, str] = {
    "hello": "hello! who are you?",
    "markdown": "show me some markdown",
    "intro": "give me a short intro",
    "think": "think about how to test a notebook",
    "plan": "plan a small refactoring",
    "files": "what files are here?",
    "list": "list the files here",
    "read": "read a file from this folder",
    "clean": "clean up the scratch files",
    "delete": "delete the scratch folder",
    "dangerous": "do something dangerous",
    "plot": "describe $`df` and plot its first column",
}

#: Intent -> the words (lower-case, whole words) that choose it, in the order tried.
KEYWORDS: dict[str, tuple[str, ...]] = {
    "clean": ("clean", "cleanup", "delete", "dangerous"),
    "plot": ("plot",),
    "read": ("read",),
    "files": ("files", "file", "list"),
    "think": ("think", "thinking", "plan", "planning"),
    "markdown": ("markdown", "hello", "intro", "introduction", "introduce"),
}

_WORD = re.compile(r"[a-z]+")


def intent_of(prompt: str) -> str:
    """The intent a prompt asks for: a key of :data:`KEYWORDS`, or ``"fallback"``."""
    words = set(_WORD.findall(prompt.lower()))
    for intent, forms in KEYWORDS.items():
        if words.intersection(forms):
            return intent
    return "fallback"


def demo_script(request: ChatRequest) -> Turn:
    """The demo model's turn for ``request`` (see the module's docstring)."""
    prompt = request.last_user_text
    if CITED_HEADING in prompt:  # before the keywords: "what is in `files`?" cites, not lists
        question, values = cited_values(prompt)
        if "plot" in _WORD.findall(question.lower()):  # "describe $`df` and plot it": run code
            return _plot(request, question, values)
        return _turn(request, [_text(cited_answer(prompt))])
    on_notebook = notebook_intent(request)
    if on_notebook is not None:  # "change cell 2 to `x = 2`": the open notebook's cells
        intent_name, match = on_notebook
        return notebook_turn(request, intent_name, match, _turn, _text, _results(request))
    kernel_tool = _offered_kernel_tool(request)
    if kernel_tool is not None:  # "use circle_area for a radius of 2": the notebook's function
        return _kernel_call(request, kernel_tool)
    intent = intent_of(prompt)
    if intent == "clean":
        return _clean(request)
    if intent == "plot":
        return _plot(request, prompt, [])
    if intent == "read":
        return _read(request)
    if intent == "files":
        return _files(request)
    if intent == "think":
        return _turn(request, [_thinking(THINKING), _text(THOUGHT)])
    if intent == "markdown":
        return _turn(request, [_text(MARKDOWN)])
    return _turn(request, [_text(FALLBACK)])


# --------------------------------------------------------------------------- kernel tools

#: The agent's own tools: a prompt naming one of these is not about a notebook function.
BUILT_IN_TOOLS = frozenset(
    {"bash", "read", "edit", "write", "ls", "grep", "find", "python"}
    | {"notebook_read", "notebook_edit", "notebook_run"}
)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_QUOTED = re.compile(r"[\"']([^\"']*)[\"']")


def _offered_kernel_tool(request: ChatRequest) -> dict[str, Any] | None:
    """The tool the prompt names, when the agent offers one that is not its own (a function
    the notebook exposed)."""
    words = set(re.findall(r"\w+", request.last_user_text))
    tools = request.body.get("tools")
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict):
            continue
        name = str(function.get("name", ""))
        if name in words and name not in BUILT_IN_TOOLS:
            return function
    return None


def _kernel_arguments(prompt: str, parameters: Any) -> dict[str, Any]:
    """Arguments from the prompt, in the schema's order: numbers for numbers, quoted text for
    strings, ``true`` for flags."""
    numbers = [float(n) for n in _NUMBER.findall(prompt)]
    texts = _QUOTED.findall(prompt)
    arguments: dict[str, Any] = {}
    properties = parameters.get("properties", {}) if isinstance(parameters, dict) else {}
    for name, schema in properties.items():
        kind = schema.get("type") if isinstance(schema, dict) else None
        if kind in ("number", "integer") and numbers:
            value = numbers.pop(0)
            arguments[name] = int(value) if kind == "integer" else value
        elif kind == "string" and texts:
            arguments[name] = texts.pop(0)
        elif kind == "boolean":
            arguments[name] = True
    return arguments


def _kernel_call(request: ChatRequest, function: dict[str, Any]) -> Turn:
    name = str(function.get("name"))
    if request.turn_index == 0:
        arguments = _kernel_arguments(request.last_user_text, function.get("parameters"))
        return _turn(
            request,
            [
                _text(f"Let me ask your notebook: `{name}` runs in its kernel."),
                ToolCall(name, arguments),
            ],
        )
    results = _results(request)
    answer = results[-1] if results else ""
    lines = [line.strip() for line in answer.splitlines() if line.strip()] or ["(nothing)"]
    first = lines[0] if not lines[0].endswith(":") or len(lines) == 1 else " ".join(lines[:2])
    first = first.replace("`", "'")  # the summary's type line: quoted inside inline code
    if "Traceback" in answer or "declined" in answer or "Error" in first:
        said = f"It did not work: `{first[:200]}`."
    else:
        said = f"Your kernel's `{name}` answered: `{first[:200]}`."
    return _turn(request, [_text(said + " (I am the offline demo model: I only pass it on.)")])


# --------------------------------------------------------------------------- texts

MARKDOWN = """\
# Hello from the offline demo model

I am a **scripted** model: no network, no API key. What you see was *streamed* to the \
notebook in small pieces.

- text arrives in chunks, as from a real model
- tool calls show up as cards
- dialogs from extensions become widgets

| Prompt | What happens |
|---|---|
| `list the files here` | a `bash` tool call |
| `clean up the scratch files` | a guarded command |

```python
import atomic_jupyter as aj
s = aj.start(demo=True)
s.prompt("list the files here")
```
"""

THINKING = (
    "The user wants a plan. First I should look at what is there, then change one thing "
    "at a time, and check each step before the next."
)

THOUGHT = """\
Here is my plan:

1. **Look** at the files (try `list the files here`).
2. **Change** one small thing.
3. **Check** that it still works, then repeat.

(The grey block above is my *thinking*, streamed before this answer.)
"""

FALLBACK_HEAD = """\
I am the **offline demo model** of atomic-jupyter: I play scripted answers, with no network \
and no API key, so I cannot really answer that. I understand prompts with these keywords:

| Keyword | Try |
|---|---|
"""

FALLBACK_TAIL = """
To use a real model, start a session with a provider and a model, for example:

```
%atomic_agent start --provider anthropic --model claude-sonnet-4-5
```

and give the agent its API key through the environment, never in a cell's source or output: \
set `ANTHROPIC_API_KEY` in the kernel's environment before starting (for example \
`os.environ["ANTHROPIC_API_KEY"] = getpass.getpass()`), or pass it to the agent alone with \
`--env ANTHROPIC_API_KEY=...` (`aj.start(env={...})` in Python). Never print the key.
"""

FALLBACK = (
    FALLBACK_HEAD
    + "".join(f"| `{keyword}` | {prompt} |\n" for keyword, prompt in DEMO_PROMPTS.items())
    + "".join(
        f"| `{keyword}` | {prompt.replace('`', '')} (in JupyterLab) |\n"
        for keyword, prompt in NOTEBOOK_PROMPTS.items()
    )
    + FALLBACK_TAIL
)


# --------------------------------------------------------------------------- turns


def _text(text: str) -> Text:
    return Text(text, chunk=CHUNK, delay=DELAY)


def _thinking(text: str) -> Thinking:
    return Thinking(text, chunk=CHUNK, delay=DELAY)


def _turn(request: ChatRequest, parts: Sequence[Text | Thinking | ToolCall]) -> Turn:
    """A turn of ``parts`` that reports no usage (the demo model counts nothing)."""
    del request  # every turn is shaped the same, whatever was asked
    return Turn(list(parts), report_usage=False)


def _content(message: dict[str, Any]) -> str:
    return content_text(message.get("content"))


def _results(request: ChatRequest) -> list[str]:
    """The texts of the tool results since the last user message, oldest first."""
    return [_content(m) for m in request.tool_results]


def _list_call(request: ChatRequest) -> ToolCall:
    if "ls" in request.tool_names:
        return ToolCall("ls", {"path": "."})
    return ToolCall("bash", {"command": "ls -la"})


_LONG_LISTING = re.compile(r"^[-dlcbps][-rwxsStTl.+@]{9}")


def _entries(listing: str) -> list[tuple[str, str]]:
    """``(name, kind)`` for each entry of an ``ls -la`` (or ``ls`` tool) listing.

    ``kind`` is ``"file"``, ``"folder"`` or ``"other"`` (a link, a device, ...).
    """
    entries: list[tuple[str, str]] = []
    for line in listing.splitlines():
        line = line.rstrip()
        if not line or line.startswith(("total ", "[")):
            continue
        if _LONG_LISTING.match(line):
            fields = line.split(None, 8)
            if len(fields) < 9:
                continue
            name = fields[8]
            if line[0] == "l":
                name = name.split(" -> ", 1)[0]
            if name in (".", ".."):
                continue
            kind = {"-": "file", "d": "folder"}.get(line[0], "other")
            entries.append((name, kind))
        elif line.endswith("/"):  # the ls tool: one name a line, folders end with "/"
            entries.append((line.rstrip("/"), "folder"))
        else:
            entries.append((line, "file"))
    return entries


def _pick_file(listing: str) -> str | None:
    """The file to read: the first ``*.ipynb``, a README, a ``*.md``, else any file."""
    files = [name for name, kind in _entries(listing) if kind == "file"]
    visible = [f for f in files if not f.startswith(".")] or files
    for test in (
        lambda f: f.lower().endswith(".ipynb"),
        lambda f: f.lower().startswith("readme"),
        lambda f: f.lower().endswith(".md"),
        lambda f: True,
    ):
        for name in visible:
            if test(name):
                return name
    return None


def _listing_summary(listing: str) -> str:
    entries = _entries(listing)
    files = [name for name, kind in entries if kind == "file"]
    folders = [name for name, kind in entries if kind == "folder"]
    others = len(entries) - len(files) - len(folders)
    lines = len(listing.splitlines())
    if not entries:
        return f"The folder looks empty: the listing has {lines} line(s) and no files or folders."
    counts = f"{len(files)} file(s) and {len(folders)} folder(s)"
    if others:
        counts += f" (and {others} other entr{'y' if others == 1 else 'ies'})"
    shown = ", ".join(f"`{name}`" for name in files[:8]) or "none"
    more = f" and {len(files) - 8} more" if len(files) > 8 else ""
    return f"The listing has {lines} lines: {counts}.\n\nFiles: {shown}{more}."


def _files(request: ChatRequest) -> Turn:
    if request.turn_index == 0:
        return _turn(request, [_text("Let me look at the files here."), _list_call(request)])
    results = _results(request)
    listing = results[0] if results else ""
    return _turn(request, [_text(_listing_summary(listing))])


def _read(request: ChatRequest) -> Turn:
    turn = request.turn_index
    results = _results(request)
    if turn == 0:
        return _turn(
            request, [_text("First, let me see which files there are."), _list_call(request)]
        )
    listing = results[0] if results else ""
    name = _pick_file(listing)
    if turn == 1:
        if name is None:
            return _turn(request, [_text("I found no file to read here.")])
        return _turn(
            request,
            [_text(f"I will read `{name}`."), ToolCall("read", {"path": name, "limit": 40})],
        )
    content = results[1] if len(results) > 1 else ""
    first = next((line.strip() for line in content.splitlines() if line.strip()), "")
    first = first.replace("`", "'")
    if len(first) > 80:
        first = first[:79] + "…"
    summary = f"I read `{name}`: the tool showed {len(content.splitlines())} line(s)."
    if first:
        summary += f" It starts with `{first}`."
    return _turn(request, [_text(summary)])


def _clean(request: ChatRequest) -> Turn:
    if request.turn_index == 0:
        return _turn(
            request,
            [
                _text("I will remove the demo's scratch folder."),
                ToolCall("bash", {"command": SCRATCH_COMMAND}),
            ],
        )
    results = _results(request)
    result = results[0] if results else ""
    said = next((line.strip() for line in result.splitlines() if line.strip()), "(nothing)")
    said = said.replace("`", "'")
    if "blocked" in result.lower():
        text = (
            f"The command `{SCRATCH_COMMAND}` was **blocked**, so nothing was deleted. "
            f"The tool said: `{said}`"
        )
    else:
        text = (
            f"The command `{SCRATCH_COMMAND}` **ran**: `./demo-scratch` is gone (if it was "
            f"there). The tool said: `{said}`"
        )
    return _turn(request, [_text(text)])


# --------------------------------------------------------------------------- the python tool

#: The notebook's tool that runs code in its kernel (``{"code": ...}``, after the person approves).
PYTHON_TOOL = "python"
#: Lines of the code's printed output the answer quotes.
QUOTED_LINES = 5
#: Words after "describe" or "plot" that name no variable.
_NOT_NAMES = frozenset({"a", "an", "the", "it", "its", "this", "that", "my", "our", "your", "me"})
_NAMED = re.compile(r"`([^`\n]+)`|\b(?:describe|plot)\s+([A-Za-z_]\w*)", re.IGNORECASE)
#: A section's heading in the tool's result (``[stdout]``, ``[display 1, image 1 attached]``).
_SECTION = re.compile(r"\[[^\]\n]*\]")
#: The first line of the tool's result when the code ran, or failed.
_RAN = re.compile(r"Agent\[\d+\] ran\b.*")
_FAILED_RUN = re.compile(r"Agent\[\d+\] failed\b")
#: The exception line that ends a traceback (``NameError: name 'df' is not defined``).
_EXCEPTION = re.compile(r"(?:[\w.]+\.)?\w*(?:Error|Exception|Interrupt)(?::.*)?")


def _plot_target(question: str, values: list[tuple[str, str]]) -> str | None:
    """What to describe and plot: the first cited data frame (else the first cited value), a
    backquoted expression in the prompt, or the word after "describe" or "plot"."""
    if values:
        frames = [name for name, summary in values if " rows × " in first_line(summary)]
        return (frames or [values[0][0]])[0]
    for match in _NAMED.finditer(question):
        name = (match.group(1) or match.group(2)).strip()
        if name.lower() not in _NOT_NAMES and _is_expression(name):
            return name
    return None


def _is_expression(text: str) -> bool:
    try:
        compile(text, "<name>", "eval", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def plot_code(name: str) -> str:
    """The code the demo runs in the kernel for ``name`` (any pandas DataFrame): its
    ``describe()`` printed, and its first column plotted, shown by the kernel's own matplotlib
    backend (``plt.show()``; no backend is forced)."""
    frame = name if name.isidentifier() else f"({name})"
    return (
        "import matplotlib.pyplot as plt\n\n"
        f"print({frame}.describe().to_string())\n"
        f"{frame}.iloc[:, 0].plot(title=str({frame}.columns[0]))\n"
        "plt.show()\n"
    )


def _plot(request: ChatRequest, question: str, values: list[tuple[str, str]]) -> Turn:
    """Describe and plot a data frame with the ``python`` tool, then say what came back."""
    name = _plot_target(question, values)
    if name is None:
        text = (
            "Which DataFrame should I describe and plot? Cite it in your prompt, for example "
            "``describe $`df` and plot its first column``, and I will run the code in your "
            f"kernel with the `{PYTHON_TOOL}` tool."
        )
    elif PYTHON_TOOL not in request.tool_names:
        text = (
            f"I would describe and plot {inline(name, 60)} with the `{PYTHON_TOOL}` tool, which "
            "runs code in your kernel, but this agent does not offer it, so I ran nothing."
        )
    elif request.turn_index == 0:
        said = f"I'll look at {inline(name, 60)} in your kernel and plot its first column."
        return _turn(request, [_text(said), ToolCall(PYTHON_TOOL, {"code": plot_code(name)})])
    else:
        results = _results(request)
        text = _plot_answer(request, name, results[-1] if results else "")
    return _turn(request, [_text(text + "\n")])


def _plot_answer(request: ChatRequest, name: str, result: str) -> str:
    """The answer to the ``python`` tool's result (``Agent[n] ran in 0.1 s.`` and its sections):
    the first lines printed and where the figure is; or, plainly, that the person declined, that
    the code failed (its exception) or that it did not run."""
    lines = [line.rstrip() for line in result.splitlines() if line.strip()]
    if not lines or not _RAN.fullmatch(lines[0]):
        errors = [line.strip() for line in lines if _EXCEPTION.fullmatch(line.strip())]
        if "declined" in result.lower():
            return (
                f"You declined to run the code, so I did not describe or plot {inline(name, 60)}."
            )
        if errors or _FAILED_RUN.match(result) or "Traceback (most recent call last)" in result:
            said = inline((errors or lines)[-1], 200)
            return f"The code failed in your kernel: {said}. Nothing was plotted."
        return f"The code did not run: {inline(lines[0] if lines else '(no answer)', 200)}."
    printed: list[str] = []
    stdout = next((i for i, line in enumerate(lines) if line.strip() == "[stdout]"), len(lines))
    for line in lines[stdout + 1 :]:
        if _SECTION.fullmatch(line.strip()) or len(printed) == QUOTED_LINES:
            break
        printed.append(line)
    frame = name if name.isidentifier() else f"({name})"
    described = inline(f"{frame}.describe()", 80)
    if printed:
        quoted = "\n".join(printed)
        fence = "```" + "`" * max((len(run) for run in re.findall("`+", quoted)), default=0)
        text = f"Here are the first lines of what {described} printed in your kernel:\n\n"
        text += f"{fence}text\n{quoted}\n{fence}\n\n"
    else:
        text = f"The code ran, but {described} printed nothing.\n\n"
    if _attached_images(request) or re.search(r"\bimage \d+ attached\b", result):
        return text + f"The plot of its first column is in the `{PYTHON_TOOL}` tool's card above."
    return text + (
        "The tool sent back no figure: if your kernel's matplotlib backend shows none, run "
        "`%matplotlib inline` and ask again."
    )


def _attached_images(request: ChatRequest) -> int:
    """The images the agent attached after the tool results (in a user message of its own)."""
    count = 0
    for message in reversed(request.messages):
        content = message.get("content")
        if message.get("role") == "user" and _content(message) == request.last_user_text:
            break
        if isinstance(content, list):
            count += sum(isinstance(p, dict) and "image" in str(p.get("type")) for p in content)
    return count
