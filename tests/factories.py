"""Small hand-made traces for logic tests (no models)."""
from __future__ import annotations

from dataclasses import replace

from core.types import Claim, Passage, Query, RetrievedPassage, Signals, Trace, VariableState


def signals(**overrides) -> Signals:
    """Signals of a clear, answerable question; override fields to push a rule."""
    base = Signals(confidence=0.9, dense_top=0.7, score_gap=0.2, coverage=0.9, evidence_coverage=1.0, ambiguity=0.0,
                   ambiguity_heuristics={"short_query": 0.0}, topic_spread=0.3, nli_conflict=0.1,
                   sufficiency=0.8, answer_type_found=1.0, answerability=0.5, incompleteness=0.0,
                   n_conditions=0, n_missing=0, n_contradicted=0, condition_outcome="none")
    return replace(base, **overrides)


def trace(sig: Signals | None = None, with_passage: bool = True) -> Trace:
    passage = Passage(id="doc#0", doc_id="doc", title="Doc", text="Some text.", start=0, end=10)
    passages = (RetrievedPassage(passage, 1, 0.7, 3.0, 1.0, 0.82),) if with_passage else ()
    return Trace(query=Query("What is it?"), passages=passages, claim=Claim("There exists it.", "existential"),
                 nli=(), fallback=False, variables=VariableState((), (), (), 0.0, "none"),
                 signals=sig or signals())
