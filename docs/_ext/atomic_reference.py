"""Reference pages generated from the code, so the site and the help cannot drift.

* ``atomic-magic-help``: a magic's docstring, as ``%atomic_agent?`` shows it (IPython keeps it
  as the parser's description), then the usage line the parser writes.
* ``atomic-magic-options``: every option of the magic's argument parser, grouped by the
  action its help names (``start: ...`` goes under ``start``).
* ``atomic-cli``: every subcommand and option of the ``atomic-jupyter`` command line.
* ``atomic-config``: every configurable trait of ``AtomicAgent`` (``c.AtomicAgent.x``).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import textwrap
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

#: An option's help that names the action it belongs to: ``start: the agent command``.
_ACTION_PREFIX = re.compile(r"^([a-z][a-z _]*?): ")

MAGICS = {
    "atomic_agent": ("atomic_jupyter.notebook.magics", "AtomicAgentMagics"),
    "atomic_extension": ("atomic_jupyter.notebook.magics", "AtomicExtensionMagics"),
}


def magic_parser(name: str) -> argparse.ArgumentParser:
    """The argument parser IPython built for the magic ``name`` (what ``%name?`` shows)."""
    module, cls = MAGICS[name]
    magics = getattr(importlib.import_module(module), cls)
    parser: argparse.ArgumentParser = getattr(magics, name).parser
    return parser


def option_label(action: argparse.Action) -> str:
    """``-e PATH, --extension PATH``: how the option is written, with its value's name."""
    if not action.option_strings:
        return action.metavar or action.dest  # type: ignore[return-value]
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    if action.choices:
        value = "{" + ",".join(str(c) for c in action.choices) + "}"
    else:
        value = str(action.metavar or action.dest.upper())
    if action.nargs == "?":
        value = f"[{value}]"
    return ", ".join(f"{option} {value}" for option in action.option_strings)


def option_help(action: argparse.Action) -> str:
    """The option's help with ``%(default)s`` filled in, as argparse prints it."""
    text = action.help or ""
    return text % {"default": action.default} if "%(" in text else text


def grouped_options(parser: argparse.ArgumentParser) -> dict[str, list[tuple[str, str]]]:
    """The parser's options (help left out) by the action their help names first; those
    that name none come under ``""`` (every action)."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        text = option_help(action)
        match = _ACTION_PREFIX.match(text)
        group = match.group(1) if match else ""
        text = text[match.end() :] if match else text
        groups.setdefault(group, []).append((option_label(action), text))
    return groups


def _literal(text: str) -> nodes.literal_block:
    block = nodes.literal_block(text, text)
    block["language"] = "text"
    return block


#: A code span in a help text: ``double`` or `single` backquotes.
CODE_SPAN = re.compile(r"``(.+?)``|`([^`]+)`")


def paragraph(text: str) -> nodes.paragraph:
    """``text`` (a help string) as a paragraph, its backquoted spans as code."""
    para = nodes.paragraph(text)
    at = 0
    for span in CODE_SPAN.finditer(text):
        if span.start() > at:
            para += nodes.Text(text[at : span.start()])
        code = span.group(1) or span.group(2)
        para += nodes.literal(code, code)
        at = span.end()
    if at < len(text):
        para += nodes.Text(text[at:])
    return para


def _definitions(items: list[tuple[str, str]]) -> nodes.definition_list:
    listing = nodes.definition_list()
    for term, text in items:
        item = nodes.definition_list_item()
        item += nodes.term("", "", nodes.literal(term, term))
        item += nodes.definition("", paragraph(text))
        listing += item
    return listing


class MagicHelp(SphinxDirective):
    """The magic's docstring (reStructuredText) and its usage line."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        parser = magic_parser(self.arguments[0])
        container = nodes.container()
        doc = inspect.cleandoc(parser.description or "")
        self.state.nested_parse(StringList(doc.splitlines(), "<docstring>"), 0, container)
        # IPython writes the usage as a reStructuredText literal block ("::" first).
        usage = parser.format_usage().replace("usage: ", "", 1).strip().removeprefix("::")
        usage = textwrap.dedent(usage.strip("\n"))
        container += _literal(usage)
        return [container]


class MagicOptions(SphinxDirective):
    """Every option of the magic, grouped by the action it belongs to."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        result: list[nodes.Node] = []
        for group, items in grouped_options(magic_parser(self.arguments[0])).items():
            title = group or "every action"
            result.append(nodes.rubric(title, title))
            result.append(_definitions(items))
        return result


class CommandLine(SphinxDirective):
    """Every subcommand of ``atomic-jupyter`` with its usage and options."""

    def run(self) -> list[nodes.Node]:
        from atomic_jupyter import cli

        top = cli.parser()
        result: list[nodes.Node] = [_literal(top.format_usage().replace("usage: ", "", 1))]
        for action in top._actions:
            if not isinstance(action, argparse._SubParsersAction):
                continue
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                title = f"atomic-jupyter {name}"
                result.append(nodes.rubric(title, title))
                if helps.get(name):
                    result.append(paragraph(helps[name]))
                result.append(_literal(sub.format_usage().replace("usage: ", "", 1)))
                items = [
                    (option_label(a), option_help(a))
                    for a in sub._actions
                    if not isinstance(a, argparse._HelpAction)
                ]
                result.append(_definitions(items))
        return result


class Config(SphinxDirective):
    """Every configurable trait of ``AtomicAgent``: name, type, default and help."""

    def run(self) -> list[nodes.Node]:
        from atomic_jupyter.notebook.config import AtomicAgent

        items = []
        for name, trait in sorted(AtomicAgent.class_traits(config=True).items()):
            default = trait.default_value_repr()
            kind = type(trait).__name__
            help_text = " ".join((trait.help or "").split())
            items.append((f"c.AtomicAgent.{name}", f"{kind}, default {default}. {help_text}"))
        return [_definitions(items)]


def setup(app: Any) -> dict[str, Any]:
    """Register the directives."""
    app.add_directive("atomic-magic-help", MagicHelp)
    app.add_directive("atomic-magic-options", MagicOptions)
    app.add_directive("atomic-cli", CommandLine)
    app.add_directive("atomic-config", Config)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
