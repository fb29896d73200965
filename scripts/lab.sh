#!/usr/bin/env bash
# The main job: JupyterLab on the quickstart notebook (which runs the offline demo model), on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
NOTEBOOK="${1:-quickstart.ipynb}"
PY="$ROOT/.venv/bin/python"
PORT="${PORT:-$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
TOKEN="${JUPYTER_TOKEN:-$("$PY" -c 'import secrets; print(secrets.token_hex(24))')}"
# The checkout's agents, installed there by the installer (the package finds them there); the
# demo model keeps its own private config dir.
export ATOMIC_JUPYTER_AGENT_HOME="${ATOMIC_JUPYTER_AGENT_HOME:-$ROOT/.agents}"
# ... and that pinned agent runs, even with an `atomic` or `pi` of your own on PATH (unless you
# name another with ATOMIC_AGENT_COMMAND).
if [ -z "${ATOMIC_AGENT_COMMAND:-}" ]; then
    ATOMIC_AGENT_COMMAND="$("$PY" -c 'from atomic_jupyter.transport.agent_install import agent_homes, find_installed, pin_of
found = find_installed(pin_of("current"), agent_homes()).found
print(found.executable if found else "")')"
    export ATOMIC_AGENT_COMMAND
fi
# Defaults for this launch only (JupyterLab's overrides.json, read from the application settings
# directory): no "Would you like to get notified about official Jupyter news?" toast. Your own
# settings (~/.jupyter/lab/user-settings, or JUPYTERLAB_SETTINGS_DIR) are read, written and win
# as always: an override only changes a default. This environment's own application settings
# directory ($ROOT/.venv/share/jupyter/lab/settings, which make setup leaves empty) is not read.
LAB_SETTINGS="$ROOT/scripts/lab-settings"
# The server's settings for this launch (scripts/lab-config/jupyter_server_config.py): the file
# browser hides the notebook checks' conftest.py, and saving a notebook keeps the Python version
# its file names. A config path, not --config: your own Jupyter config is still read, and wins.
export JUPYTER_CONFIG_PATH="$ROOT/scripts/lab-config${JUPYTER_CONFIG_PATH:+:$JUPYTER_CONFIG_PATH}"
EXTRA=()
if [ "$(id -u)" = 0 ]; then EXTRA+=(--allow-root); fi  # containers and Binder-like machines run as root
cat <<MSG

  atomic-jupyter: JupyterLab is starting on the quickstart notebook.
  Open  http://127.0.0.1:$PORT/lab/tree/$NOTEBOOK?token=$TOKEN
  Stop  press Ctrl-C twice within 5 s; that also stops every agent it started.

MSG
exec "$ROOT/.venv/bin/jupyter" lab --ServerApp.ip=127.0.0.1 --ServerApp.port="$PORT" \
    --ServerApp.port_retries=0 --IdentityProvider.token="$TOKEN" --no-browser \
    --ServerApp.root_dir="$ROOT/notebooks" --LabApp.default_url="/lab/tree/$NOTEBOOK" \
    --LabApp.app_settings_dir="$LAB_SETTINGS" "${EXTRA[@]}"
