"""``AtomicAgent.reader_turn_ms`` reaches the thread that reads the agent, in a real kernel
driven like JupyterLab with the real agent on the demo model: an agent started after the
setting changed reads with the new turn, and gives its turns while the answer comes in; a bad
value is refused with what is wrong. (What the turns buy and cost is measured, not asserted:
BENCHMARKS.md, figure 2.)"""

from __future__ import annotations

import pytest

from tests.harness.kernel_client import BrowserLikeKernel

pytestmark = [pytest.mark.kernel, pytest.mark.agent]


@pytest.fixture(scope="module")
def kernel_setup() -> list[str]:
    return ["import atomic_jupyter as aj"]


def turns_of(kernel: BrowserLikeKernel, name: str) -> tuple[float, int]:
    """The turn (seconds) of session ``name``'s reader and how many turns it has given."""
    out = kernel.execute(
        f"t = aj.session({name!r}).client.process.reader_turns\nprint(t.turn_s, t.given)"
    ).stdout
    turn, given = out.split()
    return float(turn), int(given)


def test_an_agent_started_after_the_setting_reads_with_its_turn(kernel: BrowserLikeKernel) -> None:
    kernel.execute("%config AtomicAgent.reader_turn_ms = float('inf')")
    kernel.execute("%atomic_agent start --demo --name never", timeout=60)
    kernel.execute("%config AtomicAgent.reader_turn_ms = 0")
    kernel.execute("%atomic_agent start --demo --name always", timeout=60)
    for name in ("never", "always"):
        kernel.execute(f"%%atomic_agent --wait --name {name}\nhello", timeout=60)
    assert turns_of(kernel, "never") == (float("inf"), 0)
    turn, given = turns_of(kernel, "always")
    assert turn == 0 and given > 0  # one turn after every chunk of the answer
    assert kernel.execute("1+1").result == "2"


@pytest.mark.parametrize(("value", "why"), [("-1", "-1"), ("float('nan')", "not nan")])
def test_a_turn_that_is_no_duration_is_refused_and_the_setting_kept(
    kernel: BrowserLikeKernel, value: str, why: str
) -> None:
    kernel.execute("%config AtomicAgent.reader_turn_ms = 0.5")
    result = kernel.execute(f"%config AtomicAgent.reader_turn_ms = {value}", check=False)
    said = result.stdout + result.stderr + result.plain_traceback
    assert "reader_turn_ms" in said and why in said, said
    assert "Current: 0.5" in kernel.execute("%config AtomicAgent").stdout
