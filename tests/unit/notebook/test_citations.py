"""Citations in prompts ($`name`): which text is a citation, what the agent gets, and how a
run that cited values is shown live and in the record."""

from __future__ import annotations

import pytest

from atomic_jupyter.errors import CitationError
from atomic_jupyter.session.citations import CITED_HEADING, expand, find_citations
from atomic_jupyter.session.runs import PromptRun
from atomic_jupyter.ui.record import part_plain
from atomic_jupyter.ui.run_parts import Fold, describe_message


def values(expression: str) -> str:
    return f"<summary of {expression}>"


@pytest.mark.parametrize(
    "text",
    [
        "echo $HOME",
        "maths: $x^2$ and $$\\int x\\,dx$$",
        "JSON like {a: 1} and {{b}}",
        "inline `code` and ``more``",
        "a dollar then a space $ `x`",
        "escaped \\$`x` stays",
        "an empty one $``",
        "",
    ],
)
def test_text_without_citations_is_sent_exactly_as_written(text):
    expanded = expand(text, values)
    assert expanded.sent == text and expanded.citations == ()


def test_citations_are_found_with_their_expressions():
    found = find_citations("see $`df.dtypes`, $`In[3]` and $`Err` ($`df.dtypes` again)")
    assert [c.expression for c in found] == ["df.dtypes", "In[3]", "Err", "df.dtypes"]


def test_each_citation_becomes_its_name_and_each_value_is_sent_once_after_the_prompt():
    expanded = expand("compare $`a` with $`b`, then $`a` again", values)
    head, _, tail = expanded.sent.partition(f"\n\n---\n{CITED_HEADING}\n\n")
    assert head == "compare `a` with `b`, then `a` again"
    assert tail == "`a`:\n<summary of a>\n\n`b`:\n<summary of b>\n"
    assert expanded.written == "compare $`a` with $`b`, then $`a` again"


def test_an_unresolvable_citation_names_itself_and_nothing_is_sent():
    def resolve(expression: str) -> str:
        raise CitationError(f"name {expression!r} is not defined in the kernel")

    with pytest.raises(CitationError) as raised:
        expand("look at $`nope`", resolve)
    assert str(raised.value) == (
        "$`nope`: name 'nope' is not defined in the kernel; nothing was sent."
    )
    with pytest.raises(CitationError, match="no kernel to take it from"):
        expand("look at $`x`", None)
    assert expand("no citation", None).sent == "no citation"


def test_a_run_that_cited_values_shows_what_the_agent_got_in_a_fold_kept_in_the_record():
    expanded = expand("what is $`df`?", values)
    run = PromptRun("r1", expanded.written)
    run.sent, run.cited = expanded.sent, ("df",)
    part = describe_message(run)
    assert isinstance(part, Fold)
    assert part.summary == "Sent to the agent, with 1 cited value: df"
    plain = part_plain(part)
    assert "<summary of df>" in plain and CITED_HEADING in plain
    plain_run = PromptRun("r2", "no citation")
    assert describe_message(plain_run) is None
