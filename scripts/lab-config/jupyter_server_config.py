"""The Jupyter server's settings for ``make lab`` (scripts/lab.sh adds this folder to
``JUPYTER_CONFIG_PATH``; your own ``jupyter_server_config`` still wins).

- The file browser on ``notebooks/`` does not list ``conftest.py`` (the notebook checks' pytest
  plugin): only the notebooks and their data show.
- Saving a notebook keeps the Python version its file names (``language_info.version``) when
  that is all JupyterLab's save would change: JupyterLab writes the running kernel's
  ``language_info``, version included, into every notebook it opens, and the notebooks are
  committed in that form with the project's Python (scripts/make_notebooks.py). On another
  Python, opening and saving a notebook then leaves ``git status`` clean all the same.
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
from jupyter_server.services.contents.manager import ContentsManager
from jupyter_server.utils import ApiPath, to_os_path

#: JupyterLab's default hidden names, and the notebook checks' plugin.
HIDDEN = [*ContentsManager.hide_globs.default(), "conftest.py"]


def keep_the_python_version(
    model: dict[str, Any], path: str, contents_manager: Any, **_: Any
) -> None:
    """Before a notebook is saved: when its ``language_info`` differs from its file's only in
    ``version``, keep the file's."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    saving = model["content"].get("metadata", {}).get("language_info")
    try:
        os_path = to_os_path(ApiPath(path), contents_manager.root_dir)
        with open(os_path, encoding="utf-8") as file:
            on_disk = json.load(file).get("metadata", {}).get("language_info")
    except (OSError, ValueError, AttributeError):
        return  # a new notebook, or one that is not JSON: JupyterLab's metadata as it is
    if not isinstance(saving, dict) or not isinstance(on_disk, dict) or "version" not in on_disk:
        return
    if {**saving, "version": on_disk["version"]} == on_disk:
        saving["version"] = on_disk["version"]


class LabContentsManager(AsyncLargeFileManager):
    """The server's own contents manager (as it is by default), with
    :func:`keep_the_python_version` before every save. (Registered here, not given as
    ``pre_save_hook``: that setting warns when it is set from a config file, and stays free for
    your own.)"""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.register_pre_save_hook(keep_the_python_version)


c = get_config()  # noqa: F821 (given by the config loader)
c.ContentsManager.hide_globs = HIDDEN
c.ServerApp.contents_manager_class = LabContentsManager
