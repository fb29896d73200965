#!/usr/bin/env bash
# The main job: JupyterLab on the quickstart notebook, on 127.0.0.1, with a private agent home.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
NOTEBOOK="${1:-quickstart.ipynb}"
PORT="${PORT:-8888}"
# The agent keeps its settings here, never in your own ~/.pi.
export PI_CODING_AGENT_DIR="${PI_CODING_AGENT_DIR:-$ROOT/.agent-home}"
mkdir -p "$PI_CODING_AGENT_DIR"
export ATOMIC_AGENT_COMMAND="${ATOMIC_AGENT_COMMAND:-$ROOT/agent/node_modules/.bin/pi}"
EXTRA=()
if [ "$(id -u)" = 0 ]; then EXTRA+=(--allow-root); fi  # containers and Binder-like machines run as root
echo "Starting JupyterLab on http://127.0.0.1:$PORT/lab/tree/$NOTEBOOK"
echo "Open the URL with the token that JupyterLab prints below. Stop with Ctrl-C (twice)."
exec "$ROOT/.venv/bin/jupyter" lab --ServerApp.ip=127.0.0.1 --ServerApp.port="$PORT" \
    --ServerApp.port_retries=50 --no-browser --ServerApp.root_dir="$ROOT/notebooks" \
    --LabApp.default_url="/lab/tree/$NOTEBOOK" "${EXTRA[@]}"
