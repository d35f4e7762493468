#!/usr/bin/env bash
# Start the workbench on http://127.0.0.1:8501 (loopback only; settings in app/.streamlit/config.toml).
# Extra arguments go to `streamlit run`, e.g. scripts/run_app.sh --server.port 8600
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -m streamlit run app/Inspect.py "$@"
