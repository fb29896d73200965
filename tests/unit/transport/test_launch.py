"""Which agent command runs, and with which arguments (resolve_command, build_argv)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from atomic_jupyter.transport import launch
from atomic_jupyter.transport.agent_install import homes, pin_of
from atomic_jupyter.transport.launch import LaunchSpec, build_argv, resolve_command
from tests.harness.fake_install import fake_install


def fake_executable(directory: Path, name: str) -> str:
    """An executable file ``name`` in ``directory``; returns its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


@pytest.fixture
def pinned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Make the user's agent home hold a complete (fake) install of the current pin."""
    home = tmp_path / "user-agents"
    monkeypatch.setattr(homes, "user_home", lambda environ=None: home)
    monkeypatch.setattr(homes, "sys_prefix_home", lambda: tmp_path / "prefix-agents")
    return str(fake_install(home, pin_of("current")))


@pytest.fixture
def no_pinned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every agent home empty."""
    monkeypatch.setattr(homes, "user_home", lambda environ=None: tmp_path / "user-agents")
    monkeypatch.setattr(homes, "sys_prefix_home", lambda: tmp_path / "prefix-agents")


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    """A PATH directory holding fake ``atomic`` and ``pi`` executables."""
    directory = tmp_path / "bin"
    fake_executable(directory, "atomic")
    fake_executable(directory, "pi")
    return directory


# --------------------------------------------------------------------------- resolve_command


def test_explicit_command_beats_everything(bin_dir, pinned):
    environ = {"PATH": str(bin_dir), "ATOMIC_AGENT_COMMAND": "from-env"}
    resolved = resolve_command("explicit-agent --flag", "configured-agent", environ=environ)
    assert resolved.argv == ("explicit-agent", "--flag")
    assert resolved.source == "--command"


def test_configured_command_beats_the_environment_and_path(bin_dir, pinned):
    environ = {"PATH": str(bin_dir), "ATOMIC_AGENT_COMMAND": "from-env"}
    resolved = resolve_command(None, "configured-agent", environ=environ)
    assert resolved.argv == ("configured-agent",)
    assert resolved.source == "AtomicAgent.command"


def test_environment_variable_beats_path(bin_dir, pinned):
    environ = {"PATH": str(bin_dir), "ATOMIC_AGENT_COMMAND": "node /opt/agent/cli.js --no-session"}
    resolved = resolve_command(environ=environ)
    assert resolved.argv == ("node", "/opt/agent/cli.js", "--no-session")
    assert resolved.source == "$ATOMIC_AGENT_COMMAND"


def test_atomic_on_path_beats_pi_on_path(bin_dir, pinned):
    resolved = resolve_command(environ={"PATH": str(bin_dir)})
    assert resolved.argv == (str(bin_dir / "atomic"),)
    assert "atomic" in resolved.source


def test_pi_on_path_beats_the_pinned_install(tmp_path, pinned):
    only_pi = tmp_path / "only-pi"
    pi = fake_executable(only_pi, "pi")
    resolved = resolve_command(environ={"PATH": str(only_pi)})
    assert resolved.argv == (pi,)
    assert "pi" in resolved.source


def test_path_is_searched_in_order(tmp_path, pinned):
    first, second = tmp_path / "first", tmp_path / "second"
    fake_executable(first, "pi")
    atomic = fake_executable(second, "atomic")
    # "atomic" anywhere on PATH beats "pi" earlier on PATH.
    resolved = resolve_command(environ={"PATH": os.pathsep.join([str(first), str(second)])})
    assert resolved.argv == (atomic,)


def test_non_executable_files_on_path_are_ignored(tmp_path, pinned):
    directory = tmp_path / "plain"
    directory.mkdir()
    (directory / "atomic").write_text("not executable")
    (directory / "pi").write_text("not executable")
    resolved = resolve_command(environ={"PATH": str(directory)})
    assert resolved.argv == (pinned,)


def test_pinned_install_is_used_when_nothing_is_on_path(tmp_path, pinned):
    empty = tmp_path / "empty"
    empty.mkdir()
    resolved = resolve_command(environ={"PATH": str(empty)})
    assert resolved.argv == (pinned,)
    assert resolved.source == "the pinned agent in the user data folder"
    assert not resolved.nothing_found


def test_plain_atomic_when_nothing_is_found(tmp_path, no_pinned):
    empty = tmp_path / "empty"
    empty.mkdir()
    resolved = resolve_command(environ={"PATH": str(empty)})
    assert resolved.argv == ("atomic",)
    assert resolved.nothing_found
    assert "nothing else was found" in resolved.source
    assert "is not installed in" in resolved.why_not_pinned
    assert str(tmp_path / "user-agents") in resolved.why_not_pinned


def test_a_configured_agent_home_is_looked_in_first(tmp_path, pinned):
    mine = fake_install(tmp_path / "admin-agents", pin_of("current"))
    resolved = resolve_command(environ={"PATH": ""}, agent_home=str(tmp_path / "admin-agents"))
    assert resolved.argv == (str(mine),)
    assert resolved.source == "the pinned agent in AtomicAgent.agent_home"
    from_env = resolve_command(
        environ={"PATH": "", "ATOMIC_JUPYTER_AGENT_HOME": str(tmp_path / "admin-agents")}
    )
    assert from_env.argv == (str(mine),)
    assert from_env.source == "the pinned agent in $ATOMIC_JUPYTER_AGENT_HOME"


def test_a_damaged_install_is_passed_over_and_named(tmp_path, pinned):
    broken = fake_install(tmp_path / "admin-agents", pin_of("current"))
    (broken.parents[2] / "atomic-jupyter-install.json").unlink()
    resolved = resolve_command(environ={"PATH": ""}, agent_home=str(tmp_path / "admin-agents"))
    assert resolved.argv == (pinned,)  # the user's whole install, not the damaged one
    steps = list(launch.resolution(environ={"PATH": ""}, agent_home=str(tmp_path / "nowhere")))
    assert [s.source for s in steps][:5] == [
        "--command",
        "AtomicAgent.command",
        "$ATOMIC_AGENT_COMMAND",
        "'atomic' on PATH",
        "'pi' on PATH",
    ]


def test_string_command_is_split_like_a_shell():
    resolved = resolve_command(
        """node "/opt/my agent/cli.js" --name 'two words' plain\\ escaped""", environ={"PATH": ""}
    )
    assert resolved.argv == ("node", "/opt/my agent/cli.js", "--name", "two words", "plain escaped")


def test_environment_command_is_split_like_a_shell():
    resolved = resolve_command(environ={"PATH": "", "ATOMIC_AGENT_COMMAND": "'/opt/a b/pi' --x"})
    assert resolved.argv == ("/opt/a b/pi", "--x")


def test_sequence_command_is_kept_as_given():
    resolved = resolve_command(["/opt/my agent/pi", "--name", "two words"], environ={"PATH": ""})
    assert resolved.argv == ("/opt/my agent/pi", "--name", "two words")


@pytest.mark.parametrize("empty", ["", "   ", []])
def test_empty_explicit_or_configured_command_falls_through(empty, bin_dir, pinned):
    environ = {"PATH": str(bin_dir), "ATOMIC_AGENT_COMMAND": "from-env"}
    assert resolve_command(empty, None, environ=environ).argv == ("from-env",)
    assert resolve_command(None, empty, environ=environ).argv == ("from-env",)


def test_empty_environment_variable_falls_through(bin_dir, pinned):
    resolved = resolve_command(environ={"PATH": str(bin_dir), "ATOMIC_AGENT_COMMAND": ""})
    assert resolved.argv == (str(bin_dir / "atomic"),)


# --------------------------------------------------------------------------- build_argv


def test_build_argv_appends_mode_rpc():
    assert build_argv(["atomic"], LaunchSpec()) == ["atomic", "--mode", "rpc"]


@pytest.mark.parametrize(
    "base",
    [
        ["atomic", "--mode", "json"],
        ["atomic", "--mode=json"],
        ["atomic", "--mode", "rpc"],
    ],
)
def test_build_argv_keeps_a_mode_given_in_the_command(base):
    assert build_argv(base, LaunchSpec()) == base


@pytest.mark.parametrize("extra", [("--mode", "json"), ("--mode=json",)])
def test_build_argv_keeps_a_mode_given_in_extra_args(extra):
    argv = build_argv(["atomic"], LaunchSpec(extra_args=extra))
    assert argv == ["atomic", *extra]
    assert "rpc" not in argv


def test_build_argv_does_not_mistake_a_longer_flag_for_mode():
    argv = build_argv(["atomic", "--modelx"], LaunchSpec(extra_args=("--moder",)))
    assert argv == ["atomic", "--modelx", "--mode", "rpc", "--moder"]


def test_build_argv_passes_provider_and_model_on():
    argv = build_argv(["atomic"], LaunchSpec(provider="anthropic", model="claude-sonnet-4"))
    assert argv == [
        "atomic",
        "--mode",
        "rpc",
        "--provider",
        "anthropic",
        "--model",
        "claude-sonnet-4",
    ]


def test_build_argv_leaves_out_missing_provider_and_model():
    argv = build_argv(["atomic"], LaunchSpec(provider=None, model=""))
    assert "--provider" not in argv
    assert "--model" not in argv


def test_build_argv_makes_extension_paths_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cwd = os.getcwd()
    absolute = str(tmp_path / "elsewhere" / "abs.ts")
    argv = build_argv(
        ["atomic"], LaunchSpec(extensions=("ext/one.ts", "./two.ts", "../up/three.ts", absolute))
    )
    assert argv == [
        "atomic",
        "--mode",
        "rpc",
        "-e",
        os.path.join(cwd, "ext", "one.ts"),
        "-e",
        os.path.join(cwd, "two.ts"),
        "-e",
        os.path.join(os.path.dirname(cwd), "up", "three.ts"),
        "-e",
        absolute,
    ]


def test_build_argv_expands_the_home_directory_in_extension_paths(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    argv = build_argv(["atomic"], LaunchSpec(extensions=("~/ext.ts",)))
    assert argv[-2:] == ["-e", str(tmp_path / "home" / "ext.ts")]


def test_build_argv_puts_extra_args_last():
    spec = LaunchSpec(
        provider="openai",
        model="gpt-x",
        extensions=("/abs/e.ts",),
        extra_args=("--no-session", "--thinking", "high"),
    )
    argv = build_argv(("/usr/bin/atomic", "--verbose"), spec)
    assert argv == [
        "/usr/bin/atomic",
        "--verbose",
        "--mode",
        "rpc",
        "--provider",
        "openai",
        "--model",
        "gpt-x",
        "-e",
        "/abs/e.ts",
        "--no-session",
        "--thinking",
        "high",
    ]


def test_build_argv_does_not_modify_its_base():
    base = ["atomic"]
    build_argv(base, LaunchSpec(extra_args=("--x",)))
    assert base == ["atomic"]


def test_resolved_command_feeds_build_argv(bin_dir, pinned):
    resolved = resolve_command(
        environ={"PATH": str(bin_dir), "ATOMIC_AGENT_COMMAND": "pi --mode=rpc"}
    )
    assert build_argv(resolved.argv, LaunchSpec(model="m")) == ["pi", "--mode=rpc", "--model", "m"]
