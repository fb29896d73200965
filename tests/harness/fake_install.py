"""A fake but complete-looking install of a pin: every file the install check reads, and an
executable ``pi`` that exits at once. For tests of where the agent is looked for, not of npm."""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path

from atomic_jupyter.transport.agent_install.layout import MARKER, install_folder
from atomic_jupyter.transport.agent_install.pins import AgentPin


def fake_install(home: Path, pin: AgentPin) -> Path:
    """Lay out ``pin``'s install in ``home``; returns its ``node_modules/.bin`` executable."""
    folder = install_folder(home, pin)
    modules = folder / "node_modules"
    lock = json.loads((pin.folder / "package-lock.json").read_text())
    for path, entry in lock["packages"].items():
        if path and not entry.get("optional"):
            (folder / path).mkdir(parents=True, exist_ok=True)
            version = entry.get("version", "0.0.0")
            (folder / path / "package.json").write_text(json.dumps({"version": version}))
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(pin.folder / name, folder / name)
    (folder / MARKER).write_text(json.dumps({"digest": pin.digest}))
    executable = modules / ".bin" / pin.bin_name
    executable.parent.mkdir(parents=True, exist_ok=True)
    executable.write_text("#!/bin/sh\nexit 0\n")
    executable.chmod(executable.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return executable
