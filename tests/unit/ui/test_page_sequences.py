"""The page protocol's recorded conversations (``tests/page/sequences/``), which the page
module's own tests replay in a DOM, are what the kernel's side sends and reads today."""

from __future__ import annotations

import json
import os
import re

import pytest

from atomic_jupyter.ui.page_protocol import PROTOCOL_VERSION, read_page_message
from tests.harness.page_sequences import SCENARIOS, SEQUENCES_DIR, record

#: Set to 1 to write the sequences again from what the kernel sends now.
UPDATE_ENV = "ATOMIC_UPDATE_PAGE_SEQUENCES"


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_each_recorded_sequence_is_what_the_kernel_sends_today(name: str) -> None:
    recorded = record(name)
    path = SEQUENCES_DIR / f"{name}.json"
    if os.environ.get(UPDATE_ENV) == "1":
        path.write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n", "utf-8")
    assert path.is_file(), f"{path} is missing: run with {UPDATE_ENV}=1"
    assert json.loads(path.read_text("utf-8")) == recorded, (
        f"{path.name} is not what the kernel sends now: if the change is meant, run with "
        f"{UPDATE_ENV}=1 and check the page's tests (tests/page) still pass"
    )


def test_no_sequence_file_is_left_without_its_scenario() -> None:
    files = {path.stem for path in SEQUENCES_DIR.glob("*.json")}
    assert files == set(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_message_a_sequence_has_the_page_send_reads_as_recorded(name: str) -> None:
    steps = json.loads((SEQUENCES_DIR / f"{name}.json").read_text("utf-8"))["steps"]
    ups = [
        (step["up"] if "act" in step else step["sends"], step["reads_as"])
        for step in steps
        if "reads_as" in step
    ]
    assert ups, "a conversation has the page say something"
    for messages, names in ups:
        read = [read_page_message(message) for message in messages]
        assert [type(m).__name__ for m in read] == names
        assert None not in read and all(m["v"] == PROTOCOL_VERSION for m in messages)


def test_every_message_the_kernel_sends_carries_the_protocol_version() -> None:
    for path in SEQUENCES_DIR.glob("*.json"):
        for step in json.loads(path.read_text("utf-8"))["steps"]:
            if "down" in step:
                assert step["down"]["v"] == PROTOCOL_VERSION, path.name


def test_the_page_module_speaks_the_protocol_version_the_kernel_does() -> None:
    from importlib import resources

    module = resources.files("atomic_jupyter.ui").joinpath("output_widget.js").read_text("utf-8")
    (version,) = re.findall(r"^const PROTOCOL_VERSION = (\d+);$", module, re.M)
    assert int(version) == PROTOCOL_VERSION
