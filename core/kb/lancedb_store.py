"""LanceDB as a knowledge base's dense search (setting ``vector_store=lancedb``, the ``scale`` extra).

The table holds each passage's row number and normalised embedding; a search returns the nearest
rows by inner product, as FAISS does, so ``core.retrieval`` still scores every candidate from the
stored embeddings and fuses it with BM25 the same way. Embedded (the default), the database sits in
the index folder (``.index/lancedb``) and is swapped in with the rest of the index. With
``$AW_LANCEDB_URI`` set (a directory on a shared file system, an object-store URI or a LanceDB server)
every build writes a new table there, named after the index's fingerprint, and drops the table it
replaced once the new index is in place; a build killed before that leaves an unused table behind.
"""
from __future__ import annotations

import os
import uuid
from pathlib import Path

import numpy as np

from core.engines import require
from core.kb.readers import KnowledgeBaseError

URI_ENV = "AW_LANCEDB_URI"
EMBEDDED_DIR = "lancedb"  # the embedded database, inside the index folder
EMBEDDED_TABLE = "vectors"


def location(vector_store: str) -> dict[str, str] | None:
    """Where a build with this ``vector_store`` setting keeps its vectors: None for FAISS (files in the
    index folder); for LanceDB the URI from ``$AW_LANCEDB_URI`` ("" = embedded in the index folder).
    The URI comes from the environment, so a server's address never sits in a preset."""
    if vector_store == "faiss":
        return None
    _lancedb()  # asking for the store without the engine fails here, before anything is embedded
    uri = os.environ.get(URI_ENV, "").strip()
    if uri and "://" not in uri:  # a local path: the same database from any working directory
        uri = str(Path(uri).expanduser().resolve())
    return {"engine": "lancedb", "uri": uri}


def table_name(store: dict[str, str], fingerprint: str) -> str:
    """The embedded database holds one table; a shared one a new table per build (several KBs share it)."""
    return f"aw-{fingerprint}-{uuid.uuid4().hex[:8]}" if store["uri"] else EMBEDDED_TABLE


def _describe(store: dict[str, str], index_dir: Path) -> str:
    return f"LanceDB at {store['uri']} (${URI_ENV})" if store["uri"] else f"the embedded LanceDB in {index_dir}"


def _lancedb():
    return require("lancedb", "the LanceDB vector store (vector_store=lancedb)", KnowledgeBaseError)


def _connect(store: dict[str, str], index_dir: Path):
    try:
        return _lancedb().connect(store["uri"] or str(index_dir / EMBEDDED_DIR))
    except Exception as exc:  # the engine's own errors differ by URI scheme (OSError, client errors)
        raise KnowledgeBaseError(f"cannot open {_describe(store, index_dir)}: {exc}") from None


class LanceVectors:
    """An open LanceDB table of (row, vector): the nearest rows by inner product."""

    def __init__(self, table, index_type: str):
        self._table = table
        self.index_type = index_type
        self.ntotal = table.count_rows()  # named as FAISS names it, for the index's consistency check

    @staticmethod
    def write(store: dict[str, str], index_dir: Path, embeddings: np.ndarray, index_type: str) -> None:
        """Write ``embeddings`` as the table ``store["table"]``; ``index_type="hnsw"`` adds an HNSW index."""
        import pyarrow as pa
        db = _connect(store, index_dir)
        rows, dim = embeddings.shape
        data = pa.table({"row": pa.array(np.arange(rows, dtype=np.int64)),
                         "vector": pa.FixedSizeListArray.from_arrays(pa.array(embeddings.reshape(-1)), dim)})
        try:
            table = db.create_table(store["table"], data=data)
            if index_type == "hnsw":
                from lancedb.index import HnswSq
                table.create_index("vector", config=HnswSq(distance_type="dot"))
        except Exception as exc:
            raise KnowledgeBaseError(f"cannot write the vectors to {_describe(store, index_dir)}: {exc}") from None

    @classmethod
    def open(cls, store: dict[str, str], index_dir: Path, index_type: str) -> "LanceVectors":
        db = _connect(store, index_dir)
        try:
            return cls(db.open_table(store["table"]), index_type)
        except Exception as exc:
            raise KnowledgeBaseError(f"the vector table {store['table']} cannot be read from "
                                     f"{_describe(store, index_dir)} ({exc})") from None

    def search(self, vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Row indices and inner products of the ``k`` nearest rows, best first."""
        query = self._table.search(vector).distance_type("dot").limit(k).select(["row", "_distance"])
        if self.index_type == "hnsw":  # FAISS's efSearch; then re-score the candidates with the full vectors
            query = query.ef(max(64, k)).refine_factor(2)
        try:
            result = query.to_arrow()
        except Exception as exc:  # e.g. a shared table dropped by a newer build of the same KB
            raise KnowledgeBaseError(f"the LanceDB search failed ({exc}): open the knowledge base again") from None
        # LanceDB's "dot" distance is 1 − the inner product
        return (result["row"].to_numpy().astype(np.int64),
                (1.0 - result["_distance"].to_numpy()).astype("float32"))


def drop_replaced(old: dict[str, str] | None, new: dict[str, str] | None) -> None:
    """Drop the shared table a new build replaced (an embedded one went with the old index folder)."""
    if not old or not old.get("uri") or (new and (new["uri"], new["table"]) == (old["uri"], old["table"])):
        return
    try:
        _connect(old, Path()).drop_table(old["table"])
    except Exception:  # gone already or unreachable: it only takes space
        pass
