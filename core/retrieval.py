"""Hybrid retrieval (seed 002): dense cosine from FAISS fused with max-normalised BM25.

Both retrievers nominate a candidate pool; every candidate then gets both scores (the dense one
from the stored embeddings, so BM25-only candidates are scored too), and
``fused = α·dense + (1−α)·bm25 / max bm25`` ranks them. Every score is kept for the trace.

With the asker's scenario (``context``) and a ``scenario_weight`` above 0, the scenario helps choose
the document but not the passage: the question and the scenario together, as one query, score each
candidate document by its best passage, and every passage of a document is ranked as if its fused
score were ``scenario_weight`` times that document's shortfall against the best one lower
(``RetrievedPassage.scenario_penalty``; the scores themselves stay the question's, and the cosine
with the question and scenario together is kept as ``dense_with_scenario`` for the topic signal).
The question alone still ranks the passages inside a document, so the conditions read from them are
the question's. "Do I still have to pay National Insurance?" from someone whose employer is sending
them to Berlin is about the guide to National Insurance abroad, which the question alone ranks below
the general one.

An abbreviation in the question ("NDA", or "nda" where the knowledge base never uses the word) is
searched together with what a document title of the knowledge base spells it out as ("non disclosure
agreement": ``acronym_expansions``).
"""
from __future__ import annotations

import re
from typing import Callable

import numpy as np

from core import models
from core.kb import KnowledgeBase
from core.types import RetrievedPassage


# An abbreviation written in capitals ("NDA", "SSP"); "I" and one-letter words are not.
ACRONYM = re.compile(r"\b([A-Z]{2,6})s?\b")
# A short lower-case word, not a contraction's ending ("I've"): an abbreviation typed in lower case ("nda")
# if the knowledge base never uses it.
LOWER_WORD = re.compile(r"(?<!['’])\b([a-z]{2,6})\b")


def acronym_expansions(question: str, titles, known_word: Callable[[str], bool] = lambda word: True) -> tuple[str, ...]:
    """What the question's abbreviations stand for, where a document title of the knowledge base spells
    one out, word by word ("NDA" in "Mutual Non-Disclosure Agreement", "SSP" in "Statutory Sick Pay"):
    a contract that calls itself "this Agreement" shares no word with "How long does the NDA run for?".
    A lower-case word counts as an abbreviation where ``known_word`` says the knowledge base never uses
    it: people type "how long does the nda last", and a word the texts use is a word ("can", "pay")."""
    found: dict[str, None] = {}
    typed = [m.group(1).lower() for m in ACRONYM.finditer(question)]
    typed += [m.group(1) for m in LOWER_WORD.finditer(question) if not known_word(m.group(1))]
    for letters in dict.fromkeys(typed):
        for title in titles:
            words = re.findall(r"[A-Za-z]+", title or "")
            for i in range(len(words) - len(letters) + 1):
                span = words[i:i + len(letters)]
                if all(w[0].lower() == c and len(w) > 1 for w, c in zip(span, letters)):
                    found.setdefault(" ".join(w.lower() for w in span))
    return tuple(found)


class Retriever:
    """Top-k passages of a knowledge base for a query, ranked by the fused score."""

    def __init__(self, top_k: int, fusion_alpha: float, scenario_weight: float = 0.0):
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
            raise ValueError(f"top_k must be a whole number ≥ 1, not {top_k!r}")
        if not 0.0 <= fusion_alpha <= 1.0:
            raise ValueError(f"fusion_alpha must lie in [0, 1], not {fusion_alpha!r}")
        if not scenario_weight >= 0.0:
            raise ValueError(f"scenario_weight must be ≥ 0, not {scenario_weight!r}")
        self.top_k = top_k
        self.fusion_alpha = float(fusion_alpha)
        self.scenario_weight = float(scenario_weight)

    def run(self, kb: KnowledgeBase, query_text: str, query_vector=None, context: str = "") -> tuple[RetrievedPassage, ...]:
        """Ranked passages (rank 1 first); the query is embedded unless ``query_vector`` is given; a
        ``context`` (the asker's scenario) weighs documents as the module docstring says."""
        if not isinstance(query_text, str) or not query_text.strip():
            raise ValueError("the query is empty: type a question to retrieve passages for")
        expansions = acronym_expansions(query_text, kb.titles, kb.uses_word)
        if expansions:
            query_text = f"{query_text} ({'; '.join(expansions)})"
        with_context = bool(context.strip()) and self.scenario_weight > 0
        vector = self._unit(kb, models.embed([query_text])[0] if query_vector is None else query_vector)
        rows, bm25_all = self._candidates(kb, query_text, vector)
        dense_both = penalty = None
        if with_context:
            both = f"{query_text} {context.strip()}"
            both_vector = self._unit(kb, models.embed([both])[0])
            both_rows, both_bm25 = self._candidates(kb, both, both_vector)
            rows = np.union1d(rows, both_rows)
            dense_both, _, _, fused_both = self._fused(kb, rows, both_vector, both_bm25)
            penalty = self._shortfall(kb, rows, fused_both) * self.scenario_weight
        dense, bm25, bm25_norm, fused = self._fused(kb, rows, vector, bm25_all)
        if penalty is None:
            penalty = np.zeros_like(fused)
        order = np.lexsort((rows, -(fused - penalty)))[:self.top_k]  # by score, ties by index order
        return tuple(RetrievedPassage(passage=kb.passages[rows[i]], rank=rank, dense=float(dense[i]),
                                      bm25=float(bm25[i]), bm25_norm=float(bm25_norm[i]), fused=float(fused[i]),
                                      scenario_penalty=float(penalty[i]),
                                      dense_with_scenario=None if dense_both is None else float(dense_both[i]))
                     for rank, i in enumerate(order, 1))

    @staticmethod
    def _unit(kb: KnowledgeBase, vector) -> np.ndarray:
        vector = np.asarray(vector, "float32").reshape(-1)
        if vector.shape[0] != kb.embeddings.shape[1]:
            raise ValueError(f"the query vector has {vector.shape[0]} dimensions but the knowledge base's "
                             f"embeddings have {kb.embeddings.shape[1]}: re-index it with the current embedder")
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm > 0 else vector

    def _candidates(self, kb: KnowledgeBase, text: str, vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows either retriever nominates for a query, and its BM25 score of every row."""
        pool = max(self.top_k * 4, 20)
        dense_rows, _ = kb.dense_search(vector, pool)
        bm25_all = kb.bm25_scores(text)
        bm25_rows = np.argsort(-bm25_all, kind="stable")[:pool]
        bm25_rows = bm25_rows[bm25_all[bm25_rows] > 0]
        return np.union1d(dense_rows, bm25_rows).astype(int), bm25_all

    def _fused(self, kb: KnowledgeBase, rows: np.ndarray, vector: np.ndarray, bm25_all: np.ndarray):
        """(dense, raw BM25, normalised BM25, fused) of ``rows`` for one query, BM25 normalised by its best
        among them."""
        dense = kb.embeddings[rows] @ vector
        bm25 = bm25_all[rows].astype("float32")
        top = float(bm25.max()) if len(bm25) else 0.0
        bm25_norm = bm25 / top if top > 0 else np.zeros_like(bm25)
        return dense, bm25, bm25_norm, self.fusion_alpha * dense + (1 - self.fusion_alpha) * bm25_norm

    @staticmethod
    def _shortfall(kb: KnowledgeBase, rows: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """Per row, how far its document's best score falls short of the best document's."""
        documents = [kb.passages[r].doc_id for r in rows]
        best: dict[str, float] = {}
        for doc, score in zip(documents, scores):
            best[doc] = max(best.get(doc, -np.inf), float(score))
        top = max(best.values(), default=0.0)
        return np.array([top - best[doc] for doc in documents], dtype="float32")
