"""Hybrid retrieval (seed 002): dense cosine from FAISS fused with max-normalised BM25.

Both retrievers nominate a candidate pool; every candidate then gets both scores (the dense one
from the stored embeddings, so BM25-only candidates are scored too), and
``fused = α·dense + (1−α)·bm25 / max bm25`` ranks them. Every score is kept for the trace.
"""
from __future__ import annotations

import numpy as np

from core import models
from core.kb import KnowledgeBase
from core.types import RetrievedPassage


class Retriever:
    """Top-k passages of a knowledge base for a query, ranked by the fused score."""

    def __init__(self, top_k: int, fusion_alpha: float):
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise ValueError(f"top_k must be a whole number ≥ 1, not {top_k!r}")
        if not 0.0 <= fusion_alpha <= 1.0:
            raise ValueError(f"fusion_alpha must lie in [0, 1], not {fusion_alpha!r}")
        self.top_k = top_k
        self.fusion_alpha = float(fusion_alpha)

    def run(self, kb: KnowledgeBase, query_text: str, query_vector=None) -> tuple[RetrievedPassage, ...]:
        """Ranked passages (rank 1 first); the query is embedded unless ``query_vector`` is given."""
        if not isinstance(query_text, str) or not query_text.strip():
            raise ValueError("the query is empty: type a question to retrieve passages for")
        vector = models.embed([query_text])[0] if query_vector is None else np.asarray(query_vector, "float32")
        vector = vector.reshape(-1)
        if vector.shape[0] != kb.embeddings.shape[1]:
            raise ValueError(f"the query vector has {vector.shape[0]} dimensions but the knowledge base's "
                             f"embeddings have {kb.embeddings.shape[1]}: re-index it with the current embedder")
        norm = float(np.linalg.norm(vector))
        vector = vector / norm if norm > 0 else vector

        pool = max(self.top_k * 4, 20)
        dense_rows, _ = kb.dense_search(vector, pool)
        bm25_all = kb.bm25_scores(query_text)
        bm25_rows = np.argsort(-bm25_all, kind="stable")[:pool]
        bm25_rows = bm25_rows[bm25_all[bm25_rows] > 0]
        rows = np.union1d(dense_rows, bm25_rows).astype(int)

        dense = kb.embeddings[rows] @ vector
        bm25 = bm25_all[rows].astype("float32")
        top = float(bm25.max()) if len(bm25) else 0.0
        bm25_norm = bm25 / top if top > 0 else np.zeros_like(bm25)
        fused = self.fusion_alpha * dense + (1 - self.fusion_alpha) * bm25_norm
        order = np.lexsort((rows, -fused))[:self.top_k]  # by fused score, ties by index order
        return tuple(RetrievedPassage(passage=kb.passages[rows[i]], rank=rank, dense=float(dense[i]),
                                      bm25=float(bm25[i]), bm25_norm=float(bm25_norm[i]), fused=float(fused[i]))
                     for rank, i in enumerate(order, 1))
