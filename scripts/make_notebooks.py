"""Write the notebooks in notebooks/ (run: .venv/bin/python scripts/make_notebooks.py).

The notebooks are generated so they stay output-free and consistent; edit them here.
"""

from __future__ import annotations

from pathlib import Path

import nbformat

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
md = nbformat.v4.new_markdown_cell
code = nbformat.v4.new_code_cell
#: The notebooks' metadata in the form JupyterLab writes when it opens one (its kernel's spec and
#: language_info, with the Python of the project's machines), so that opening and saving a
#: notebook changes nothing (tests/package/test_lab_notebooks.py; on another Python, make lab's
#: server keeps this version: scripts/lab-config/jupyter_server_config.py).
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LANGUAGE_INFO = {
    "codemirror_mode": {"name": "ipython", "version": 3},
    "file_extension": ".py",
    "mimetype": "text/x-python",
    "name": "python",
    "nbconvert_exporter": "python",
    "pygments_lexer": "ipython3",
    "version": "3.11.7",
}


def write(name: str, cells: list) -> None:
    """Write one notebook, keeping the cell ids of the notebook already there (by position
    and cell type), so regenerating changes only what the cells say."""
    path = NOTEBOOKS / name
    if path.exists():
        old = nbformat.read(path, as_version=4).cells
        for cell, before in zip(cells, old, strict=False):
            if cell.cell_type == before.cell_type and "id" in before:
                cell.id = before.id
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = dict(LANGUAGE_INFO)
    nbformat.validate(nb)
    nbformat.write(nb, path)


QUICKSTART = [
    md(
        "# atomic-jupyter quickstart\n\n"
        "A coding agent beside your notebook: start it, talk to it in cells, watch it use its tools, "
        "and answer its questions by clicking.\n\n"
        "This notebook needs **no API key**: `--demo` runs the real agent on an offline demo model "
        "(scripted answers, served inside this kernel on 127.0.0.1) with a demo extension that shows "
        "every kind of dialog. Run the cells from the top.\n\n"
        "The agent itself is installed once per user: `%atomic_agent install` in a cell, or "
        "`atomic-jupyter install-agent` in a terminal. If it is missing, the start cell below says so "
        "and offers a button that installs it and starts."
    ),
    code("%load_ext atomic_jupyter"),
    md(
        "Start the agent. The panel shows the title, the status line (it counts turns) and widget lines "
        "that the demo extension sets, an editor whose **Send** button prompts the agent, and notifications."
    ),
    code("%atomic_agent start --demo"),
    md(
        "Talk to it. The answer streams into the cell as Markdown. `--wait` makes the cell block until the "
        "answer is done, which is what *Run All* needs; without it the cell returns at once and the answer "
        "keeps streaming while you work."
    ),
    code("%%atomic_agent --wait\nhello! who are you?"),
    md(
        "Cite a value of the kernel with a dollar and backquotes, `` $`name` ``: the agent gets a readable "
        "summary of it (its type, size and first items or rows), never the whole object. The fold under "
        "the prompt shows exactly what was sent. `` $`Err` `` cites the last failed cell, and "
        "`%atomic_agent fix` asks the agent to explain and fix it."
    ),
    code("primes = [2, 3, 5, 7, 11, 13]"),
    code("%%atomic_agent --wait\nwhat is in $`primes`?"),
    md("Ask it to use a tool: each tool call is a card with its arguments and output."),
    code("%%atomic_agent --wait\nlist the files here"),
    md(
        "Ask for something risky. The demo extension guards dangerous shell commands with a dialog: "
        "**click Allow or Block** below the cell. While a dialog waits for you, `--wait` stops waiting "
        "and says so, because a running cell cannot receive your click."
    ),
    code("%%atomic_agent --wait\nclean up the scratch files"),
    md(
        "If you clicked, the dialog has collapsed to one line saying what you chose. When this notebook "
        "runs unattended (Run All, nbval, papermill), the next cell answers instead, and waits for the end "
        "of the run."
    ),
    code(
        "import atomic_jupyter as aj\n\n"
        "session = aj.session()\n"
        "for dialog in session.pending_dialogs:  # nothing left if you clicked\n"
        '    dialog.respond("Block")\n'
        "session.wait(timeout=60)"
    ),
    md(
        "Extensions have commands of their own, sent like prompts. This one asks a yes/no question; "
        "its dialog appears below the cell, and `--wait` returns as soon as it needs you."
    ),
    code("%%atomic_agent --wait\n/demo-confirm"),
    code(
        "for dialog in session.pending_dialogs:  # click Yes or No above, or let this answer\n"
        "    dialog.respond(True)"
    ),
    md("Everything the panel shows is also plain Python state:"),
    code(
        'print("title: ", session.title)\n'
        'print("status:", session.status)\n'
        'print("widget blocks:", list(session.widgets))\n'
        'print("last notification:", session.notifications[-1])'
    ),
    code("%atomic_agent status"),
    md(
        "Stop the agent when you are done (shutting the kernel down stops it too, and the demo model "
        "with it). Next: `ui_tour.ipynb` shows every dialog kind, `headless_automation.ipynb` runs the "
        "agent unattended, and `real_provider.ipynb` uses a real model."
    ),
    code("%atomic_agent stop"),
]

TOUR = [
    md(
        "# A tour of every extension UI method\n\n"
        "Extensions running inside the agent talk to you through nine methods. Four are dialogs that wait "
        "for an answer (`select`, `confirm`, `input`, `editor`); five just show something (`notify`, "
        "`setStatus`, `setWidget`, `setTitle`, `set_editor_text`). The demo extension has a command for "
        "each; extension commands need no model.\n\n"
        "In a live notebook, answer each dialog by clicking. `--wait` holds each prompt cell until "
        "its dialog needs you; every answer cell below then answers it from Python instead, so the "
        "notebook also runs unattended."
    ),
    code("%load_ext atomic_jupyter\nimport atomic_jupyter as aj"),
    code("%atomic_agent start --demo\nsession = aj.session()"),
    md("`setTitle`, `setStatus` and `setWidget` ran when the session started:"),
    code(
        'print(session.title)\nprint(session.status)\nfor key, block in session.widgets.items():\n    print(key, block["placement"], block["lines"][:2])'
    ),
    md(
        "## select\nAt most eight options are buttons; more become a dropdown with a Submit button. Dismiss (or Escape) closes any dialog without answering."
    ),
    code("%%atomic_agent --wait\n/demo-select"),
    code(
        'dialog = session.pending_dialogs[0]\nprint(dialog.method, dialog.title, dialog.request["options"])\ndialog.respond(dialog.request["options"][1])\nprint(dialog.state, "-", dialog.outcome)'
    ),
    md("## confirm"),
    code("%%atomic_agent --wait\n/demo-confirm"),
    code("dialog = session.pending_dialogs[0]\ndialog.respond(False)\nprint(dialog.outcome)"),
    md("## input\nA text box with the extension's placeholder."),
    code("%%atomic_agent --wait\n/demo-input"),
    code(
        'dialog = session.pending_dialogs[0]\nprint("placeholder:", dialog.request.get("placeholder"))\ndialog.respond("Grace Hopper")'
    ),
    md("## editor\nA multi-line text area holding the extension's prefill."),
    code("%%atomic_agent --wait\n/demo-editor"),
    code(
        'dialog = session.pending_dialogs[0]\ndialog.respond(dialog.request["prefill"] + "\\ndates")'
    ),
    md(
        "## cancel\nEvery dialog has a Dismiss button: it closes the dialog without answering, the extension is told it was cancelled and gets its default (No for a confirm)."
    ),
    code("%%atomic_agent --wait\n/demo-confirm"),
    code("session.pending_dialogs[0].cancel()"),
    md("## notify\nNotifications are listed in the panel, coloured by type."),
    code("%%atomic_agent --wait\n/demo-notify"),
    code('for note in session.notifications[-3:]:\n    print(note["type"], "-", note["message"])'),
    md("## setStatus and setWidget\nRun these twice: the second time clears what the first set."),
    code("%%atomic_agent --wait\n/demo-status compiling…"),
    code("%%atomic_agent --wait\n/demo-widget first line | second line"),
    code('print(session.status.get("demo-status"))\nprint(session.widgets.get("demo-widget"))'),
    md(
        "## set_editor_text\nThe extension fills the panel's editor; press **Send** in the panel to run it."
    ),
    code("%%atomic_agent --wait\n/demo-prefill list the files here"),
    code("print(repr(session.editor_text))"),
    md("Every dialog seen so far, oldest first, with what became of it:"),
    code(
        'for dialog in session.dialogs:\n    print(f"{dialog.method:8} {dialog.state:10} {dialog.outcome}")'
    ),
    code("%atomic_agent stop"),
]

HEADLESS = [
    md(
        "# Headless automation: answer policies and wait\n\n"
        "A running cell blocks the kernel, so nobody can click while a cell waits. For *Run All*, nbval, "
        "papermill or a scheduled job, tell the session how to answer dialogs (**policies**) and block "
        "until each run ends (**wait**)."
    ),
    code("import atomic_jupyter as aj\n\nsession = aj.start(demo=True)"),
    md(
        'A policy matches dialogs by method and a title pattern, and answers with a value, `"cancel"`, or '
        "a function that gets the request and decides (returning None leaves the dialog to a person)."
    ),
    code(
        "def guard(request):\n"
        '    """Allow shell commands on the scratch folder only."""\n'
        '    return "Allow" if "demo-scratch" in request["title"] else "Block"\n\n'
        'session.answer_with(guard, method="select", title="Dangerous command")\n'
        'session.answer_with(True, method="confirm")\n'
        "for policy in session.policies:\n"
        "    print(policy.describe())"
    ),
    md(
        "The magic says the same: `%atomic_agent policy --method confirm yes`. Now a run that hits the guard finishes without stopping:"
    ),
    code(
        "import os\n\n"
        'os.makedirs("demo-scratch", exist_ok=True)\n'
        'run = session.prompt("clean up the scratch files")\n'
        "result = session.wait(timeout=60)\n"
        "print(result.reason)\n"
        "print(run.text)"
    ),
    md("The dialog was answered by the policy, and says so:"),
    code(
        'for dialog in session.dialogs:\n    print(dialog.outcome, "| answered by", dialog.answered_by)'
    ),
    md("`wait` returns a result that is true only when the run finished, so scripts can check it:"),
    code(
        'run = session.prompt("list the files here")\n'
        'assert session.wait(timeout=60), "the run did not finish"\n'
        'tool = next(block for block in run.transcript.blocks if type(block).__name__ == "ToolBlock")\n'
        "print(tool.name, tool.args)\n"
        "print(tool.result.splitlines()[0])"
    ),
    md("Commands work the same way, and return the agent's data:"),
    code(
        "stats = session.get_session_stats()\n"
        'print(stats["tokens"])\n'
        'print(session.get_state()["model"]["id"])'
    ),
    md("Without a policy, `wait` stops early when a dialog needs a person, and says which:"),
    code(
        "session.remove_policy()\n"
        'session.prompt("do something dangerous")\n'
        "result = session.wait(timeout=60)\n"
        'print(result.reason, "->", result.dialog.title)\n'
        'result.dialog.respond("Block")\n'
        "print(session.wait(timeout=60).reason)"
    ),
    code("session.stop()"),
]

REAL_PROVIDER = [
    md(
        "# Using a real model\n\n"
        "The demo model is scripted. To work with a real one, start the agent with a provider and a model, "
        "and give it your API key **through the environment**, never in a cell's source or output.\n\n"
        "The cells below show how. They only start a real agent when a key is set, so the notebook still "
        "runs unattended without one."
    ),
    md(
        "Put the key in the kernel's environment without printing it. `getpass` asks for it without echoing; "
        "it then lives only in this kernel process. (Avoid `%env KEY=value`: IPython echoes the value.)\n\n"
        "```python\n"
        "import getpass, os\n"
        'os.environ["ANTHROPIC_API_KEY"] = getpass.getpass("Anthropic API key: ")\n'
        "```\n\n"
        "Or pass it to the agent alone with `--env`, reading it from a variable set before Jupyter started:\n\n"
        "```ipython\n"
        "%atomic_agent start --provider anthropic --model claude-sonnet-4-5 --env ANTHROPIC_API_KEY=$ANTHROPIC_API_KEY\n"
        "```\n\n"
        "atomic-jupyter never shows environment values: not in the panel, `%atomic_agent status`, or errors."
    ),
    code(
        "%load_ext atomic_jupyter\n"
        "import os\n\n"
        "import atomic_jupyter as aj\n\n"
        'PROVIDERS = {"ANTHROPIC_API_KEY": ("anthropic", "claude-sonnet-4-5"), "OPENAI_API_KEY": ("openai", "gpt-4.1")}\n'
        "configured = [(key, *spec) for key, spec in PROVIDERS.items() if os.environ.get(key)]\n"
        'print("keys found:", [key for key, *_ in configured] or "none: the cells below use the demo model")'
    ),
    code(
        "if configured:\n"
        "    _, provider, model = configured[0]\n"
        "    session = aj.start(provider=provider, model=model)\n"
        "else:\n"
        "    session = aj.start(demo=True)\n"
        'print(session.get_state()["model"]["provider"])'
    ),
    md(
        "From here on, everything works as with the demo: prompts, tools, dialogs, policies, commands."
    ),
    code("%%atomic_agent --wait\nlist the files here and say which one is the largest"),
    md("See which models the agent can use, and switch:"),
    code(
        'models = session.get_available_models()["models"]\nprint(sorted({m["provider"] for m in models}))'
    ),
    code("session.stop()"),
]

PROTOTYPING = [
    md(
        "# Prototyping an extension in a notebook\n\n"
        "Agent extensions are TypeScript modules that hook into the agent: they add commands, watch "
        "tool calls, and ask you things through dialogs. Here we build a small **permission gate** step "
        "by step. Each `%%atomic_extension NAME` cell is type-checked, test-loaded, and loaded into the "
        "running agent in place of its earlier version, without a restart. Errors show up in the cell, "
        "with the file name and line."
    ),
    code("%load_ext atomic_jupyter\nimport atomic_jupyter as aj\n\n%atomic_agent start --demo"),
    md(
        "## Step 1: a command\nStart small: a command that reports how many calls the gate has seen. Its button runs it."
    ),
    code(
        "%%atomic_extension gate\n"
        'import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";\n\n'
        "export default function (pi: ExtensionAPI) {\n"
        "  let seen = 0;\n"
        '  pi.on("tool_call", async () => { seen++; });\n'
        '  pi.registerCommand("gate-status", {\n'
        '    description: "How many tool calls the gate has seen",\n'
        '    handler: async (_args, ctx) => ctx.ui.notify(`gate: ${seen} tool calls seen`, "info"),\n'
        "  });\n"
        "}"
    ),
    code("%%atomic_agent --wait\n/gate-status"),
    code("aj.session().notifications[-1]"),
    md(
        "## Step 2: a mistake\nErrors are the point of prototyping. This version has a typo; the cell "
        "says where, and the previous version stays loaded."
    ),
    code(
        "%%atomic_extension gate\n"
        'import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";\n\n'
        "export default function (pi: ExtensionAPI) {\n"
        '  pi.registerComand("gate-status", { description: "typo", handler: async () => {} });\n'
        "}"
    ),
    md(
        "## Step 3: the gate\nNow guard shell commands: anything that deletes files needs your permission, "
        "through a `select` dialog with a timeout. The status line shows the gate is armed."
    ),
    code(
        "%%atomic_extension gate\n"
        'import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";\n\n'
        "export default function (pi: ExtensionAPI) {\n"
        "  let seen = 0;\n"
        '  pi.on("session_start", async (_event, ctx) => ctx.ui.setStatus("gate", "gate armed"));\n'
        '  pi.on("tool_call", async (event, ctx) => {\n'
        "    seen++;\n"
        '    if (event.toolName !== "bash") return undefined;\n'
        '    const command = String((event.input as { command?: string }).command ?? "");\n'
        "    if (!/\\brm\\b/.test(command)) return undefined;\n"
        '    const choice = await ctx.ui.select(`gate: allow "${command}"?`, ["Allow", "Block"], { timeout: 60000 });\n'
        '    ctx.ui.notify(`gate: ${choice ?? "no answer"} for ${command}`, choice === "Allow" ? "info" : "warning");\n'
        '    return choice === "Allow" ? undefined : { block: true, reason: "Blocked by the gate" };\n'
        "  });\n"
        '  pi.registerCommand("gate-status", {\n'
        '    description: "How many tool calls the gate has seen",\n'
        '    handler: async (_args, ctx) => ctx.ui.notify(`gate: ${seen} tool calls seen`, "info"),\n'
        "  });\n"
        "}"
    ),
    md(
        "Ask the demo model to delete something. In a live notebook, answer the gate's dialog by clicking. "
        "For unattended runs, a policy answers it: block anything the gate asks about."
    ),
    code('session = aj.session()\nsession.answer_with("Block", method="select")'),
    code("%%atomic_agent --wait\nclean up the scratch files"),
    code('for note in session.notifications[-3:]:\n    print(note["type"], note["message"])'),
    md("## Housekeeping"),
    code("%atomic_extension list"),
    code("%atomic_extension show gate"),
    code("%atomic_extension remove gate\n%atomic_agent stop"),
]

KERNEL_TOOLS = [
    md(
        "# Kernel functions as the agent's tools\n\n"
        "`aj.session().expose(fn)` gives the agent a Python function of this kernel as a tool. The "
        "tool's schema comes from the function's type hints and its description from its docstring. "
        "The agent calls it like any other tool; the call runs **in this kernel, on its main thread** "
        "(as a cell would), so the function sees and changes the notebook's variables.\n\n"
        "This notebook needs **no API key**: the offline demo model calls an exposed function when a "
        "prompt names it, taking numbers and 'quoted text' from the prompt as its arguments."
    ),
    code("%load_ext atomic_jupyter\nimport atomic_jupyter as aj"),
    code("%atomic_agent start --demo"),
    md(
        "## A pure function\n"
        "Every parameter needs a type hint. A function that changes nothing is exposed as it is: "
        "the agent calls it without asking you."
    ),
    code(
        "import math\n\n\n"
        "def circle_area(radius: float) -> float:\n"
        '    """The area of a circle of the given radius."""\n'
        "    return math.pi * radius**2\n\n\n"
        "aj.session().expose(circle_area)"
    ),
    md(
        "Name it in a prompt. The tool's card shows the call and what the kernel answered "
        '("waiting for the kernel…" while a cell keeps the kernel busy).'
    ),
    code("%%atomic_agent --wait\nuse circle_area for a radius of 2"),
    md("The exposed functions, by name, with the schema the agent got:"),
    code(
        "for name, tool in aj.session().kernel_tools.items():\n"
        '    print(name, "-", tool.spec.description, "- asks first:", tool.approval)\n'
        "    print(tool.spec.to_json())"
    ),
    md(
        "Exposing is not the same as citing: `` $`name` `` in a prompt sends a summary of a value once, "
        "while an exposed function is something the agent can call whenever it decides to."
    ),
    code("radii = [0.5, 1.0, 2.0]"),
    code("%%atomic_agent --wait\nwhat is in $`radii`?"),
    md(
        "## A function with side effects\n"
        "`side_effects=True` says the function changes something (here, a list in the kernel). Each "
        'call then waits for your approval: a dialog "Run save_note in the kernel?" appears **in the '
        "tool's card**, with the arguments, and only Yes runs the function."
    ),
    code(
        "notes = []\n\n\n"
        "def save_note(text: str) -> str:\n"
        '    """Append a note to the notebook\'s list of notes."""\n'
        "    notes.append(text)\n"
        '    return f"saved note {len(notes)}: {text}"\n\n\n'
        "aj.session().expose(save_note, side_effects=True)"
    ),
    md(
        "A notebook that runs unattended (Run All, nbval, papermill) has nobody to click Yes, and a "
        "`--wait` cell would stop at the dialog. An answer policy answers it instead. Leave this cell "
        "out when you want to decide each call yourself."
    ),
    code('%atomic_agent policy --method confirm --title "Run save_note in the kernel" yes'),
    code("%%atomic_agent --wait\nuse save_note with 'buy milk'"),
    md("The function ran in this kernel, so the list changed:"),
    code('assert notes == ["buy milk"], notes\nnotes'),
    md("Take a function back; the agent no longer has the tool (at once, and after a restart)."),
    code('aj.session().unexpose("save_note")\nprint(list(aj.session().kernel_tools))'),
    code("%atomic_agent stop"),
]

RESUME = [
    md(
        "# Continuing a conversation after a kernel restart\n\n"
        "Each agent session's conversation is saved with its notebook (in a per-user folder, one "
        "folder per notebook). A kernel restart ends the agent, but not the conversation: start "
        "the session again with `--resume` and it goes on where it stopped, with everything said "
        "before.\n\n"
        "- `%atomic_agent start --resume` continues this notebook's latest conversation; "
        "`--resume ID` continues the one whose id starts with ID.\n"
        "- `%atomic_agent restart` restarts the agent on the same conversation.\n"
        "- `%atomic_agent conversations` lists the notebook's saved conversations, each with a "
        "**Resume** button.\n"
        "- `%atomic_agent start --no-save` saves nothing: the agent keeps the conversation in "
        "memory only.\n\n"
        "This notebook needs **no API key**: it runs on the offline demo model."
    ),
    code("%load_ext atomic_jupyter\n%atomic_agent start --demo"),
    md("Say something, so there is a conversation to continue:"),
    code("%%atomic_agent --wait\nhello there"),
    md(
        "Now the agent goes away, as it does when the kernel restarts. After a real restart "
        "(Kernel → Restart Kernel…) you would run `%load_ext atomic_jupyter` and then the "
        "`start --resume` line below; here `stop` stands in for the restart, so the notebook "
        "runs top to bottom. The panel says how many messages it continued, and folds the "
        "earlier turns under *Earlier in this conversation*."
    ),
    code("%atomic_agent stop\n%atomic_agent start --demo --resume"),
    md(
        "The agent has the earlier messages again, and the session says which conversation it continued:"
    ),
    code(
        "import atomic_jupyter as aj\n\n"
        "session = aj.session()\n"
        'conversations = session.addon("conversations")\n'
        "print(conversations.continued)\n"
        'said = [m for m in session.get_messages()["messages"] if m["role"] in ("user", "assistant")]\n'
        'print([m["role"] for m in said])\n'
        "assert conversations.resumed is not None\n"
        'assert conversations.continued.startswith("continued: 2 messages"), conversations.continued\n'
        'assert [m["role"] for m in said] == ["user", "assistant"], said\n'
        'assert [run.message for run in conversations.earlier] == ["hello there"]'
    ),
    md(
        "Every saved conversation of this notebook, newest first. **Resume** continues one in "
        "its session (restarting that session's agent on it if it runs)."
    ),
    code("%atomic_agent conversations"),
    code("%atomic_agent stop"),
]

DATA_ANALYSIS = [
    md(
        "# The agent's Python, in this kernel\n\n"
        "The agent has a built-in tool, `python`, that runs its code **in this notebook's kernel**, "
        "in the notebook's own namespace: it works on the data loaded here, and what its code defines "
        "stays for the next cells. Its tool card shows the code, what it printed, its figures and its "
        "value.\n\n"
        "Each call asks first: a dialog in the tool's card waits for you to approve it. Here an answer "
        "policy approves instead, so the notebook also runs unattended. Afterwards the code the agent "
        "ran can be left behind as a cell of your own.\n\n"
        "This notebook needs **no API key**: the offline demo model answers a prompt that asks it to "
        "describe and plot a data frame by calling `python`."
    ),
    code("%load_ext atomic_jupyter\n%atomic_agent start --demo"),
    md(
        "Some data: a year of monthly sales, from `sales.csv` beside this notebook. The month is the "
        "index, so the first column is the revenue."
    ),
    code(
        "from pathlib import Path\n\n"
        "import pandas as pd\n\n"
        'sales = pd.read_csv(Path("sales.csv"), index_col="month")\n'
        "sales.head()"
    ),
    md(
        "Approve the agent's code without a click. Every `python` call raises a dialog "
        "*Run the agent's Python in the kernel?*; this policy answers it **Yes**, every time, for "
        "this session. Leave the cell out and each call waits in its card for your Yes or No (and a "
        "`--wait` cell stops waiting and says so, since a running cell cannot receive your click)."
    ),
    code('%atomic_agent policy --title "Python in the kernel" yes'),
    md(
        "Ask. `` $`sales` `` cites the data frame: the agent gets a summary of it (its columns and "
        "first rows), and its `python` call then works on the real `sales` in this kernel. The card "
        "shows the code, the printed description and the plot; the answer quotes what was printed."
    ),
    code("%%atomic_agent --wait\ndescribe $`sales` and plot its first column"),
    md(
        "The agent's code ran in this kernel: the call is kept here as `Agent[1]` (a prompt cites it "
        "with `` $`Agent[1]` ``), its figure went to the card, so none is left open for your next "
        "cell, and `sales` is as it was loaded."
    ),
    code(
        "import atomic_jupyter as aj\n"
        "import matplotlib.pyplot as plt\n\n"
        "run = aj.session().runs[-1]\n"
        'call = next(b for b in run.transcript.blocks if getattr(b, "name", None) == "python")\n'
        "print(call.result.splitlines()[0])\n"
        'print("figures in the card:", len(call.images))\n'
        'assert call.images, "the python call sent back no figure"\n'
        'assert plt.get_fignums() == [], "a figure was left open"\n'
        'pd.testing.assert_frame_equal(sales, pd.read_csv(Path("sales.csv"), index_col="month"))\n'
        'print("sales unchanged:", sales.shape)'
    ),
    md(
        "Keep the agent's code. In JupyterLab, Notebook 7 or VS Code, `%atomic_agent cells` puts the "
        "code of the last run into a new cell below this one, to read, edit and run yourself "
        "(`--run N` picks another run). A frontend that ignores that request (nbconvert, papermill, "
        "nbval) inserts nothing; `--print` prints the code instead."
    ),
    code("%atomic_agent cells"),
    code("%atomic_agent cells --print"),
    code("%atomic_agent stop"),
]

if __name__ == "__main__":
    write("quickstart.ipynb", QUICKSTART)
    write("ui_tour.ipynb", TOUR)
    write("headless_automation.ipynb", HEADLESS)
    write("real_provider.ipynb", REAL_PROVIDER)
    write("extension_prototyping.ipynb", PROTOTYPING)
    write("kernel_tools.ipynb", KERNEL_TOOLS)
    write("resume.ipynb", RESUME)
    write("data_analysis.ipynb", DATA_ANALYSIS)
    print("wrote", ", ".join(sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))))
