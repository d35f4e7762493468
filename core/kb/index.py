"""The index of a knowledge base: passages (``core.kb.readers`` → ``core.kb.chunking``), their
embeddings and a persisted hybrid index (FAISS over normalised embeddings + BM25) in
``<folder>/.index/``. With ``vector_store=lancedb`` a LanceDB table (``core.kb.lancedb_store``)
takes FAISS's place. The knowledge graph is not part of the index: ``KnowledgeBase.graph_of``
builds it per question from the passages retrieval found, and keeps it for the next questions,
because its spaCy parse cost more than the embedding and capped indexing at a third of the speed.

Re-indexing reuses the passages and embeddings of files whose bytes, chunk settings and embedder
are unchanged, so editing one file re-embeds only that file. The new index is written in a
sibling temp directory and swapped in with renames, so a crash mid-build keeps the old one, and
the batches embedded before the crash are kept in ``<folder>/.index.partial/`` until the next
build has used them, so an interrupted build resumes where it stopped.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import time
import uuid
from collections import OrderedDict
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from core import models
from core.kb import lancedb_store
from core.kb.chunking import chunk_document
from core.kb.readers import Document, KnowledgeBaseError, dedupe, list_files, read_file
from core.places import stated_containment
from core.settings import BY_NAME, resolve
from core.text import jsonl_records, stable_hash, tokenize
from core.types import Passage, Sentence, to_dict

FORMAT_VERSION = 5  # bump when chunking or the stored layout changes: old indexes are rebuilt
INDEX_DIR = ".index"
PARTIAL_DIR = ".index.partial"  # embedded batches of a build that has not finished
EMBED_BATCH = 256  # passages per embed() call: the unit of progress, of resumption and of crash-safety tests
# Texts per forward pass when indexing. Passages sorted by length in batches of 8 waste little on
# padding: on 2 cores 75 passages/s against 49 at sentence-transformers' batch of 64 (README
# "Larger corpora"); the vectors are the same.
EMBED_FORWARD_BATCH = 8
GRAPH_MEMO = 64  # per-question knowledge graphs kept for the next questions
HNSW_FROM = 1_000_000  # passages from which index_type=auto builds HNSW instead of an exact flat index

Progress = Callable[[int, int, str], None]


def build_bm25(texts: list[str]):
    """A BM25 index of ``texts`` (their ``core.text.tokenize`` tokens)."""
    import bm25s
    corpus = [tokenize(t) for t in texts]
    if not any(corpus):  # bm25s cannot index an empty vocabulary; "\0" never matches a query token
        corpus[0] = ["\0"]
    index = bm25s.BM25()
    index.index(corpus, show_progress=False)
    return index


def _indexed_text(p: Passage) -> str:
    """What is embedded and BM25-indexed: the passage under its title, so bullets keep their topic."""
    return p.text if p.title in p.text[:len(p.title) + 8] else f"{p.title}\n{p.text}"


# --- the index -------------------------------------------------------------------------

def index_settings(settings: Mapping[str, Any] | None) -> dict[str, Any]:
    """The index-stage settings (chunk_chars, chunk_overlap, index_type, …), checked, defaults filled."""
    names = [s.name for s in BY_NAME.values() if s.stage == "index"]
    values = resolve({k: v for k, v in (settings or {}).items() if k in names})
    return {k: values[k] for k in names}


class KnowledgeBase:
    """A loaded index: passages, their embeddings, the dense (FAISS or LanceDB) and BM25 indexes, the manifest."""

    def __init__(self, folder: Path, manifest: dict, documents: dict[str, Document],
                 passages: tuple[Passage, ...], embeddings: np.ndarray, dense_index, bm25):
        self.folder = folder
        self.manifest = manifest
        self.documents = documents
        self.passages = passages
        self.embeddings = embeddings
        self.problems: tuple[str, ...] = tuple(manifest.get("problems", ()))
        self.stats: dict[str, Any] = manifest.get("stats", {})
        self.fingerprint: str = manifest["fingerprint"]
        self._dense = dense_index
        self._bm25 = bm25
        self._by_id = {p.id: i for i, p in enumerate(passages)}
        self._openings: dict[str, int] = {}  # doc_id → row of its first passage
        for i, p in enumerate(passages):
            if p.doc_id not in self._openings or p.start < passages[self._openings[p.doc_id]].start:
                self._openings[p.doc_id] = i
        self._graphs: OrderedDict[tuple, Any] = OrderedDict()  # (passage ids, edge_min) → KnowledgeGraph
        self._graphs_lock = threading.Lock()

    def graph_of(self, passage_ids: Sequence[str], edge_min: float):
        """The knowledge graph (seed 002 §6) of these passages, built on first use and kept for the next
        questions (the spaCy parses behind it are memoised per sentence by ``core.models``)."""
        rows = sorted({self._by_id[i] for i in passage_ids if i in self._by_id})  # documents stay contiguous
        key = (tuple(rows), float(edge_min))
        with self._graphs_lock:
            if key in self._graphs:
                self._graphs.move_to_end(key)
                return self._graphs[key]
        from core.kg import GraphBuilder
        graph = GraphBuilder(edge_min=edge_min).run([self.passages[r] for r in rows],
                                                    passage_vectors=self.embeddings[rows])
        with self._graphs_lock:
            self._graphs[key] = graph
            while len(self._graphs) > GRAPH_MEMO:
                self._graphs.popitem(last=False)
        return graph

    @cached_property
    def places_within(self) -> dict[str, frozenset[str]]:
        """Where the documents say their own places lie ("Tessby is a fishing town on the east coast of the
        Republic of Calvera"): the condition reader's gazetteer for the names GeoNames lacks."""
        return stated_containment(sentence.text for p in self.passages for sentence in p.sentences)

    def naming(self, label: str, k: int) -> list[str]:
        """Ids of the (at most) ``k`` passages that BM25 ranks highest for ``label``: where the graph
        looks for facts about an entity beyond the passages retrieval found."""
        scores = self.bm25_scores(label)
        top = np.argsort(-scores, kind="stable")[:k]
        return [self.passages[i].id for i in top if scores[i] > 0]

    # -- querying --
    def passage(self, passage_id: str) -> Passage:
        try:
            return self.passages[self._by_id[passage_id]]
        except KeyError:
            raise KeyError(f"no passage {passage_id!r} in the knowledge base at {self.folder}") from None

    def opening(self, doc_id: str) -> Passage | None:
        """The document's first passage, where it says what it is about: a contract names its parties
        there, an article its subject, and later clauses call them "the Parties" or "it"."""
        row = self._openings.get(doc_id)
        return self.passages[row] if row is not None else None

    def dense_search(self, vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Row indices and inner products of the ``k`` nearest passages (FAISS or the LanceDB table)."""
        k = min(k, len(self.passages))
        if isinstance(self._dense, lancedb_store.LanceVectors):
            return self._dense.search(np.asarray(vector, dtype="float32").reshape(-1), k)
        if hasattr(self._dense, "hnsw"):
            self._dense.hnsw.efSearch = max(64, k)
        scores, rows = self._dense.search(np.asarray(vector, dtype="float32").reshape(1, -1), k)
        keep = rows[0] >= 0
        return rows[0][keep], scores[0][keep]

    @cached_property
    def titles(self) -> tuple[str, ...]:
        """The documents' titles, each once, in document order, read once: retrieval spells a question's
        abbreviations out from them."""
        return tuple(dict.fromkeys(d.title for d in self.documents.values()))

    def uses_word(self, word: str) -> bool:
        """Whether some passage holds ``word`` (as ``core.text.tokenize`` reads it); a stopword is used."""
        return all(t in self._bm25.vocab_dict for t in tokenize(word))

    def bm25_scores(self, text: str) -> np.ndarray:
        """BM25 score of every passage for ``text`` (zeros when no query term is in the KB)."""
        tokens = [t for t in tokenize(text) if t in self._bm25.vocab_dict]
        if not tokens:
            return np.zeros(len(self.passages), dtype="float32")
        return self._bm25.get_scores(tokens)

    # -- building and loading --
    @classmethod
    def load(cls, folder: str | Path) -> "KnowledgeBase":
        """The index saved in ``folder/.index``; KnowledgeBaseError if there is none or it is damaged."""
        folder = Path(folder)
        if not folder.is_dir():
            raise KnowledgeBaseError(f"knowledge base folder {folder} does not exist: create it, add documents "
                                     f"and run `python -m core index {folder}`")
        index_dir = _recover(folder)
        stored = _read_index(index_dir)
        if stored is None:
            raise KnowledgeBaseError(f"no usable index in {index_dir}: run `python -m core index {folder}`")
        manifest, documents, passages, embeddings = stored
        import bm25s
        if manifest.get("vector_store"):
            dense = lancedb_store.LanceVectors.open(manifest["vector_store"], index_dir, manifest["index_type"])
        else:
            import faiss
            try:
                dense = faiss.read_index(str(index_dir / "faiss.index"))
            except RuntimeError as exc:
                raise KnowledgeBaseError(f"the FAISS index in {index_dir} cannot be read ({exc}): "
                                         f"run `python -m core index {folder}`") from None
        try:
            bm25 = bm25s.BM25.load(str(index_dir / "bm25"), show_progress=False)
        except (OSError, ValueError, KeyError) as exc:
            raise KnowledgeBaseError(f"the BM25 index in {index_dir} cannot be read ({exc}): "
                                     f"run `python -m core index {folder}`") from None
        if dense.ntotal != len(passages) or bm25.scores["num_docs"] != len(passages):
            raise KnowledgeBaseError(f"the index in {index_dir} is inconsistent: run `python -m core index {folder}`")
        return cls(folder, manifest, documents, passages, embeddings, dense, bm25)

    @classmethod
    def open(cls, folder: str | Path, settings: Mapping[str, Any] | None = None,
             progress: Progress | None = None) -> "KnowledgeBase":
        """Load the index if it matches the files, settings and embedder; otherwise (re)build it."""
        try:
            kb = cls.load(folder)
        except KnowledgeBaseError:
            return cls.build(folder, settings, progress)
        files = {rel: _sha256((Path(folder) / rel).read_bytes()) for rel in list_files(Path(folder))}
        if kb.manifest["fingerprint"] == _fingerprint(index_settings(settings), files):
            return kb
        return cls.build(folder, settings, progress)

    @classmethod
    def build(cls, folder: str | Path, settings: Mapping[str, Any] | None = None,
              progress: Progress | None = None) -> "KnowledgeBase":
        """Index ``folder``, reusing what is unchanged from its current index, and return it loaded."""
        started = time.perf_counter()
        folder = Path(folder)
        config = index_settings(settings)
        report = progress or (lambda done, total, stage: None)
        files = list_files(folder)
        _remove_stale(folder)
        embedder = models.role_source("embedder")
        old = _reusable(folder, config, embedder)
        entries, documents, passages, vectors = _gather(folder, files, config, old, report)
        problems = [line for e in entries.values() for line in e["problems"]]
        if not passages:
            raise KnowledgeBaseError(f"no text could be read from {folder}; fix these files and index again:\n"
                                     + "\n".join(problems))
        embeddings, embedded = _embed_missing(folder, passages, vectors, embedder, report)
        report(0, 1, "write")
        store = lancedb_store.location(config["vector_store"])
        index_type = dense_kind(config["index_type"], len(passages))
        dense = None if store else _dense_index(embeddings, index_type)
        fingerprint = _fingerprint(config, {rel: e["sha256"] for rel, e in entries.items()})
        reused_files = sum(e["reused"] for e in entries.values())
        stats = {"files": len(files), "reused_files": reused_files, "read_files": len(files) - reused_files,
                 "removed_files": len(set(old["files"]) - set(files)) if old else 0,
                 "documents": len(documents), "passages": len(passages),
                 "reused_passages": len(passages) - embedded, "embedded_passages": embedded,
                 "problems": len(problems), "seconds": round(time.perf_counter() - started, 3)}
        manifest = {
            "format": FORMAT_VERSION, "embedder": embedder, "embedding_dim": int(embeddings.shape[1]),
            "chunking": {"chunk_chars": config["chunk_chars"], "chunk_overlap": config["chunk_overlap"]},
            "index_type": index_type,
            **({"vector_store": {**store, "table": lancedb_store.table_name(store, fingerprint)}} if store else {}),
            "bm25": {"library": "bm25s", "tokenizer": "lowercase words, English stopwords, plural -s folded"},
            "fingerprint": fingerprint,
            "files": {rel: {k: v for k, v in e.items() if k != "reused"} for rel, e in entries.items()},
            "counts": {"files": len(files), "documents": len(documents), "passages": len(passages)},
            "problems": problems, "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "stats": stats,
        }
        _write_index(folder, manifest, documents, passages, embeddings, dense)
        shutil.rmtree(folder / PARTIAL_DIR, ignore_errors=True)
        report(1, 1, "write")
        return cls.load(folder)


def _gather(folder: Path, files: list[str], config: Mapping[str, Any], old: dict | None, report: Progress):
    """Per-file entries, documents, passages and embedding rows (None: to embed) for every file.

    A file whose bytes are unchanged lends its stored documents, passages and embeddings, unless
    an earlier file now claims one of its document ids (then it is re-read and renamed).
    """
    entries: dict[str, dict] = {}
    seen: dict[str, str] = {}  # document id -> the file that holds it
    documents: list[Document] = []
    passages: list[Passage] = []
    vectors: list[np.ndarray | None] = []
    for n, rel in enumerate(files):
        report(n, len(files), "read")
        data = (folder / rel).read_bytes()
        sha = _sha256(data)
        entry = old["files"].get(rel) if old else None
        reuse = bool(entry and entry["sha256"] == sha and not seen.keys() & set(entry["documents"]))
        if reuse:
            file_docs = [old["documents"][d] for d in entry["documents"]]
            file_passages = [old["passages"][p] for p in entry["passages"]]
            vectors += [old["embeddings"][old["rows"][p]] for p in entry["passages"]]
            problems = list(entry["problems"])
            seen.update((d.id, rel) for d in file_docs)
        else:
            file_docs, problems = read_file(rel, data)
            file_docs = dedupe(rel, file_docs, seen, problems)
            file_passages = [p for d in file_docs
                             for p in chunk_document(d, config["chunk_chars"], config["chunk_overlap"])]
            vectors += [None] * len(file_passages)
        documents += file_docs
        passages += file_passages
        entries[rel] = {"sha256": sha, "documents": [d.id for d in file_docs],
                        "passages": [p.id for p in file_passages], "problems": problems, "reused": reuse}
    report(len(files), len(files), "read")
    return entries, documents, passages, vectors


def _embed_missing(folder: Path, passages: list[Passage], vectors: list, embedder: str,
                   report: Progress) -> tuple[np.ndarray, int]:
    """All embedding rows, the ``None`` ones embedded in batches, and how many were embedded.

    Each batch is saved to ``PARTIAL_DIR`` under a hash of its texts and the embedder as soon as it is
    embedded, and read back from there instead of embedded again, so a build that was killed resumes
    from its last finished batch (``build`` removes the folder once the index is in place)."""
    rows = list(vectors)
    todo = [i for i, v in enumerate(rows) if v is None]
    partial = folder / PARTIAL_DIR
    for done in range(0, len(todo), EMBED_BATCH):
        report(done, len(todo), "embed")
        batch = todo[done:done + EMBED_BATCH]
        texts = [_indexed_text(passages[i]) for i in batch]
        saved = partial / f"{stable_hash(embedder, texts, length=20)}.npy"
        try:
            embedded = np.load(saved)
        except (OSError, ValueError):
            embedded = None
        if embedded is None or embedded.shape[0] != len(batch):
            embedded = models.embed(texts, batch_size=EMBED_FORWARD_BATCH)
            partial.mkdir(exist_ok=True)
            tmp = saved.with_suffix(f".{os.getpid()}.tmp.npy")
            np.save(tmp, embedded)
            os.replace(tmp, saved)
        for i, vector in zip(batch, embedded):
            rows[i] = vector
    report(len(todo), len(todo), "embed")
    return np.vstack(rows).astype("float32"), len(todo)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fingerprint(config: Mapping[str, Any], files: Mapping[str, str]) -> str:
    """A short hash of everything the index content depends on (for caches and up-to-date checks),
    and of where its vectors are when that is not FAISS, so that switching the store or its URI
    re-indexes. FAISS adds nothing: indexes built before the store was a setting stay valid."""
    config = dict(config)
    store = lancedb_store.location(config.pop("vector_store", "faiss"))
    key = {"format": FORMAT_VERSION, "embedder": models.role_source("embedder"), "config": config,
           "files": sorted(files.items())}
    if store:
        key["store"] = store
    return stable_hash(key, length=12)


def dense_kind(index_type: str, passages: int) -> str:
    """The dense index built for ``passages``: ``index_type`` itself, or for ``auto`` flat (exact) below
    ``HNSW_FROM`` passages and HNSW from there on."""
    if index_type != "auto":
        return index_type
    return "hnsw" if passages >= HNSW_FROM else "flat"


def _dense_index(embeddings: np.ndarray, index_type: str):
    import faiss
    dim = embeddings.shape[1]
    if index_type == "hnsw":
        index = faiss.IndexHNSWFlat(dim, 32, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = 80
    else:
        index = faiss.IndexFlatIP(dim)
    index.add(embeddings)
    return index


def _read_index(index_dir: Path):
    """(manifest, documents, passages, embeddings) from an index folder, or None if unusable."""
    try:
        manifest = json.loads((index_dir / "manifest.json").read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT_VERSION:
            return None
        documents = {d["id"]: Document(**d) for d in _records(index_dir / "documents.jsonl")}
        passages = [Passage(**{**d, "sentences": tuple(Sentence(**s) for s in d["sentences"])})
                    for d in _records(index_dir / "passages.jsonl")]
        embeddings = np.load(index_dir / "embeddings.npy", mmap_mode="r")  # read as rows are used
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if embeddings.shape[0] != len(passages):
        return None
    return manifest, documents, tuple(passages), embeddings


def _records(path: Path) -> list[dict]:
    """The objects of one of the index's JSONL files; ValueError if a line is damaged."""
    records = []
    for n, obj, error in jsonl_records(path.read_text(encoding="utf-8")):
        if error:
            raise ValueError(f"{path}:{n}: {error}")
        records.append(obj)
    return records


def _reusable(folder: Path, config: Mapping[str, Any], embedder: str) -> dict | None:
    """What the current index can lend the new one: only if chunking and embedder are unchanged."""
    stored = _read_index(folder / INDEX_DIR)
    if stored is None:
        return None
    manifest, documents, passages, embeddings = stored
    chunking = {"chunk_chars": config["chunk_chars"], "chunk_overlap": config["chunk_overlap"]}
    if manifest.get("embedder") != embedder or manifest.get("chunking") != chunking:
        return None
    return {"files": manifest["files"], "documents": documents, "passages": {p.id: p for p in passages},
            "rows": {p.id: i for i, p in enumerate(passages)}, "embeddings": embeddings}


def _write_index(folder: Path, manifest: dict, documents: list[Document], passages: list[Passage],
                 embeddings: np.ndarray, dense) -> None:
    """Write the whole index into a temp sibling, then swap it in with two renames. ``dense`` is the
    FAISS index, or None to write the vectors to the LanceDB store the manifest names."""
    final = folder / INDEX_DIR
    replaced = _vector_store(final)
    tmp = folder / f"{INDEX_DIR}.tmp-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        with open(tmp / "documents.jsonl", "w", encoding="utf-8") as f:
            f.writelines(json.dumps(to_dict(d), ensure_ascii=False) + "\n" for d in documents)
        with open(tmp / "passages.jsonl", "w", encoding="utf-8") as f:
            f.writelines(json.dumps(to_dict(p), ensure_ascii=False) + "\n" for p in passages)
        np.save(tmp / "embeddings.npy", embeddings)
        if dense is None:
            lancedb_store.LanceVectors.write(manifest["vector_store"], tmp, embeddings, manifest["index_type"])
        else:
            import faiss
            faiss.write_index(dense, str(tmp / "faiss.index"))
        build_bm25([_indexed_text(p) for p in passages]).save(str(tmp / "bm25"), show_progress=False)
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False), encoding="utf-8")
        old = folder / f"{INDEX_DIR}.old-{uuid.uuid4().hex[:8]}"
        if final.exists():
            os.replace(final, old)
        os.replace(tmp, final)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    lancedb_store.drop_replaced(replaced, manifest.get("vector_store"))


def _vector_store(index_dir: Path) -> dict | None:
    """The LanceDB store an index folder's manifest names (None: FAISS, or no readable manifest)."""
    try:
        return json.loads((index_dir / "manifest.json").read_text(encoding="utf-8")).get("vector_store")
    except (OSError, ValueError):
        return None


def _recover(folder: Path) -> Path:
    """The index folder, first putting back the previous index if a crash hit between the renames."""
    final = folder / INDEX_DIR
    if not final.exists():
        for old in sorted(folder.glob(f"{INDEX_DIR}.old-*")):
            if (old / "manifest.json").exists():
                os.replace(old, final)
                break
    return final


def _remove_stale(folder: Path) -> None:
    """Temp folders left by builds that were killed."""
    _recover(folder)
    for stale in list(folder.glob(f"{INDEX_DIR}.tmp-*")) + list(folder.glob(f"{INDEX_DIR}.old-*")):
        shutil.rmtree(stale, ignore_errors=True)
