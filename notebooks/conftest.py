"""The notebooks under nbval: marked as real-agent, real-kernel tests, run on the agent line
under test (``ATOMIC_TEST_AGENT``, see tests/harness/support.py)."""

from __future__ import annotations

import os

import pytest

from tests.harness.support import AGENT_LINE, PINNED_AGENT

# The notebooks' kernels inherit this environment: point them at the line under test.
if AGENT_LINE != "current":
    os.environ["ATOMIC_AGENT_COMMAND"] = str(PINNED_AGENT)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every notebook cell runs the real agent in a real kernel."""
    for item in items:
        if str(item.path).endswith(".ipynb"):
            item.add_marker(pytest.mark.agent)
            item.add_marker(pytest.mark.kernel)
