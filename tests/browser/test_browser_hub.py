"""A person on the team's JupyterHub (``docs/guides/jupyterhub.md``): they log in on the hub's
login page in Chromium, land in their own JupyterLab, open the quickstart notebook in their
home and run its first cells: the demo starts, answers, the site's answer policy blocks the
dangerous command, and they answer the extension's question by a click.

The hub is :mod:`tests.harness.hub`'s, on the shared environment the guide's commands made
(shared with ``tests/hub/test_hub.py``); as root the person is a real UNIX user made for the test,
else this account (``SimpleLocalProcessSpawner``).
"""

from __future__ import annotations

import json
import os
import pwd
import re
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import expect

from tests.harness.hub import (
    PASSWORD,
    SERVER_START_S,
    HubUser,
    SharedEnvironment,
    is_root,
    made_users,
    running_hub,
    same_account_user,
    shared_environment,
)
from tests.harness.support import CURRENT_LINE, ROOT

from .browser_harness import (
    JP_DIALOG_LOG_SCRIPT,
    LAB_SETTINGS,
    PAGE_CONFIG,
    PAGE_MS,
    PWNED_INIT_SCRIPT,
    VIEWPORT,
    WAIT_MS,
    NotebookPage,
)
from .conftest import OPEN_PAGES

pytestmark = [
    pytest.mark.browser,
    pytest.mark.build,
    pytest.mark.agent,
    pytest.mark.kernel,
    pytest.mark.one_line,
    pytest.mark.timeout(900),  # the shared environment, when this module makes it
    pytest.mark.skipif(not CURRENT_LINE, reason="installs the current line only"),
]

QUICKSTART = ROOT / "notebooks" / "quickstart.ipynb"


@pytest.fixture(scope="module")
def shared(request: pytest.FixtureRequest) -> SharedEnvironment:
    return shared_environment(request)


@pytest.fixture(scope="module")
def person(shared: SharedEnvironment) -> Iterator[HubUser]:
    """Who logs in: a real UNIX user as root, else this account."""
    if is_root():
        with made_users(shared, ["p"]) as (made,):
            yield made
    else:
        made = same_account_user(shared, shared.state / "same-account-homes")
        made.home.mkdir(parents=True)
        try:
            yield made
        finally:
            (shared.keys / made.name).unlink(missing_ok=True)


def give(person: HubUser, path: Path, text: str) -> None:
    """Write ``path`` in the person's home, owned by them (with the folders made for it)."""
    missing = [
        p for p in reversed(path.parents) if p.is_relative_to(person.home) and not p.exists()
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if person.made:
        group = pwd.getpwnam(person.name).pw_gid
        for made in [*missing, path]:
            os.chown(made, person.uid, group)


def quickstart_cells() -> list[str]:
    return [cell.source for cell in nbformat.read(QUICKSTART, as_version=4).cells]


def named(cells: list[str], start: str) -> str:
    """The name (``c<index>``) of the first cell whose source starts with ``start``."""
    return f"c{next(i for i, source in enumerate(cells) if source.startswith(start))}"


def test_a_person_logs_in_on_the_hub_and_runs_the_quickstart_in_their_jupyterlab(
    shared: SharedEnvironment, person: HubUser, chromium: object
) -> None:
    cells = quickstart_cells()
    home = person.home
    give(person, home / "quickstart.ipynb", QUICKSTART.read_text(encoding="utf-8"))
    # JupyterLab's own settings, in the person's ~/.jupyter: nothing opens a dialog of its own.
    for name, value in LAB_SETTINGS.items():
        give(person, home / ".jupyter" / "lab" / "user-settings" / name, json.dumps(value))
    give(person, home / ".jupyter" / "labconfig" / "page_config.json", json.dumps(PAGE_CONFIG))

    with running_hub(
        shared,
        [person],
        same_account=not person.made,
        # window.jupyterapp: the page's own kernel state, which NotebookPage waits on.
        spawner_args=["--LabApp.expose_app_in_browser=True"],
    ) as hub:
        context = chromium.new_context(viewport=VIEWPORT)  # type: ignore[attr-defined]
        context.add_init_script(PWNED_INIT_SCRIPT)
        context.add_init_script(JP_DIALOG_LOG_SCRIPT)
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        page.set_default_navigation_timeout(PAGE_MS)
        nb = NotebookPage(page, "quickstart.ipynb", [f"c{i}" for i in range(len(cells))])
        OPEN_PAGES.append(nb)
        try:
            # The hub's login page: the person's name and the password, then Sign in.
            page.goto(f"{hub.url}/hub/login")
            page.fill("#username_input", person.name)
            page.fill("#password_input", PASSWORD)
            page.click("#login_submit")
            # The hub starts their server and sends them to it: their JupyterLab.
            page.wait_for_url(
                re.compile(rf"/user/{re.escape(person.name)}/lab"), timeout=SERVER_START_S * 1000
            )
            expect(page.locator("#jp-main-dock-panel")).to_be_visible(timeout=PAGE_MS)
            page.goto(f"{hub.url}/user/{person.name}/lab/tree/quickstart.ipynb")
            nb.wait_ready()

            start = named(cells, "%atomic_agent start --demo")
            nb.run(named(cells, "%load_ext atomic_jupyter"))
            nb.run(start)
            expect(nb.output(start).locator(".atomic-panel .atomic-title")).to_have_text(
                "atomic-jupyter demo", timeout=60_000
            )
            hello = named(cells, "%%atomic_agent --wait\nhello")
            nb.run(hello)
            answer = nb.output(hello).locator(".atomic-assistant-text")
            expect(answer.first).to_contain_text("Hello from the offline demo model")

            # The site's answer policy (the guide's ipython_config.py) blocks it: no one asked.
            clean = named(cells, "%%atomic_agent --wait\nclean up")
            nb.run(clean)
            expect(nb.output(clean).locator(".atomic-dialog-outcome")).to_contain_text(
                "→ Block (answer policy: select titled /Dangerous command/"
            )

            # The extension's question, answered by a click.
            confirm = named(cells, "%%atomic_agent --wait\n/demo-confirm")
            nb.run(confirm)
            dialog = nb.output(confirm).locator(".atomic-dialog.atomic-dialog-confirm")
            expect(dialog).to_contain_text("Do you like this demo?", timeout=60_000)
            dialog.get_by_role("button", name="Yes", exact=True).click()
            expect(nb.output(confirm).locator(".atomic-dialog-outcome")).to_have_text(
                "→ Yes (clicked)"
            )
            expect(nb.output(confirm).locator(".atomic-run-state")).to_have_text(
                "done", timeout=60_000
            )
            assert nb.page_errors == [], nb.page_errors
            pwned = nb.pwned()
            assert pwned["value"] is None and pwned["hits"] == [], pwned
        finally:
            OPEN_PAGES.remove(nb)
            context.close()
    if person.made:  # the notebook and the session were theirs, in their home
        conversations = home / ".local" / "share" / "atomic-jupyter" / "conversations"
        assert conversations.stat().st_uid == person.uid
