"""The data that flows through the pipeline: frozen dataclasses, JSON round-trippable.

Every stage returns one of these and never mutates its inputs. ``to_dict`` /
``from_dict`` give a lossless JSON form, which is what the trace cache, the CLI's
``--json`` output and the UI's "download trace" use.
"""
from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any

ACTIONS = ("ANSWER", "ASK", "ABSTAIN")
NLI_LABELS = ("contradiction", "entailment", "neutral")


@dataclass(frozen=True)
class Sentence:
    """A sentence of a document; offsets index into the document's full text."""
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class Passage:
    """A chunk of a document, kept with where it came from and its sentences."""
    id: str
    doc_id: str
    title: str
    text: str
    start: int
    end: int
    sentences: tuple[Sentence, ...] = ()
    source: str = ""


@dataclass(frozen=True)
class RetrievedPassage:
    """A passage with every retrieval score that ranked it (dense cosine, raw and normalised BM25, fused)."""
    passage: Passage
    rank: int
    dense: float
    bm25: float
    bm25_norm: float
    fused: float


@dataclass(frozen=True)
class Query:
    """What the user asked, with ShARC-shaped context: a free-text scenario and prior Q/A turns."""
    question: str
    scenario: str = ""
    history: tuple[tuple[str, str], ...] = ()

    def user_facts(self) -> tuple[str, ...]:
        """Statements the user made about themselves: the scenario and each answered follow-up."""
        facts = [self.scenario.strip()] if self.scenario.strip() else []
        facts += [f"{q.strip()} {a.strip()}" for q, a in self.history if a.strip()]
        return tuple(facts)


@dataclass(frozen=True)
class Claim:
    """The hypothesis NLI checks passages against (seed 001 schemas)."""
    text: str
    schema: str  # existential | comparative | conjunctive | polar | statement
    sub_claims: tuple[str, ...] = ()
    source: str = "rules"  # which component produced it (rules, or a generator backend)
    wh: str = ""  # the wh-word / slot the question asks for ("" for yes/no questions)
    answer_type: str = ""  # expected entity type of the answer (PERSON, DATE, MONEY, ...), "" if any


@dataclass(frozen=True)
class NliScores:
    """Probabilities of the three NLI labels for one (premise, hypothesis) pair."""
    entailment: float
    neutral: float
    contradiction: float

    @property
    def label(self) -> str:
        scores = {"entailment": self.entailment, "neutral": self.neutral,
                  "contradiction": self.contradiction}
        return max(scores, key=scores.get)


@dataclass(frozen=True)
class PassageNli:
    """NLI of one passage against the claim (and each sub-claim).

    Long passages are scored sentence by sentence; ``claim`` is the aggregate
    (the sentence with the highest entailment) and ``best_sentence`` its index.
    """
    passage_id: str
    claim: NliScores
    best_sentence: int
    sub_claims: tuple[NliScores, ...] = ()
    kept: bool = False


@dataclass(frozen=True)
class Condition:
    """One condition the evidence imposes, and how the user's stated facts bear on it."""
    text: str  # as written in the passage
    user_voice: str  # rewritten as a first-person statement ("I am over 65.")
    kind: str  # bullet | if | unless | only_if | requirement | slot
    passage_id: str
    status: str = "missing"  # established | contradicted | missing
    support: str = ""  # the user fact that decided it
    scores: NliScores | None = None
    method: str = ""  # nli | numeric | history | "" (not checked)
    group: str = "all"  # all | any: how conditions of this passage combine


@dataclass(frozen=True)
class VariableState:
    """Seed 002's S(q) = (V_known, V_missing, C) plus the conditions behind it."""
    known: tuple[str, ...]
    conditions: tuple[Condition, ...]
    missing: tuple[str, ...]
    incompleteness: float  # I(q) = |missing| / (|known| + |missing|)
    outcome: str = "undetermined"  # satisfied | failed | undetermined | none (no conditions)


@dataclass(frozen=True)
class Signals:
    """Every number the gate may read. All in [0, 1] unless said otherwise."""
    confidence: float  # Conf: best fused retrieval score
    dense_top: float  # best raw dense cosine
    score_gap: float  # fused score of rank 1 minus rank 2
    coverage: float  # share of non-stopword query terms found in the retrieved passages
    ambiguity: float  # Amb: max of the heuristics (each can trip the gate alone)
    ambiguity_heuristics: dict[str, float]
    topic_spread: float  # seed 002 Eq. 13: mean pairwise cosine dissimilarity of top passages
    nli_conflict: float  # max P(contradiction) between two top passages' best sentences
    sufficiency: float  # seed 000: P(entailment) of the claim by the best kept evidence sentence
    answer_type_found: float  # 1 if the evidence contains an entity of the expected answer type
    answerability: float  # A(q) = Conf · Coverage · (1 − Amb) · (1 − Conflict)
    incompleteness: float  # I(q)
    n_conditions: int
    n_missing: int
    n_contradicted: int
    condition_outcome: str


@dataclass(frozen=True)
class Trace:
    """Everything analyze() computed for one question: the input to decide()."""
    query: Query
    passages: tuple[RetrievedPassage, ...]
    claim: Claim
    nli: tuple[PassageNli, ...]
    fallback: bool  # True when no passage passed the entailment filter and all were kept
    variables: VariableState
    signals: Signals
    kb: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)

    def kept_passages(self) -> tuple[RetrievedPassage, ...]:
        kept = {n.passage_id for n in self.nli if n.kept}
        return tuple(p for p in self.passages if p.passage.id in kept)


@dataclass(frozen=True)
class Comparison:
    """One check the gate made: ``value op threshold`` and whether it held."""
    signal: str
    op: str
    value: float
    threshold: float
    holds: bool


@dataclass(frozen=True)
class RuleResult:
    """A gate rule as evaluated: its comparisons and whether it fired."""
    name: str
    action: str
    enabled: bool
    fired: bool
    comparisons: tuple[Comparison, ...]
    explanation: str


@dataclass(frozen=True)
class Decision:
    """The gate's output: the action, the rule that decided it and every rule evaluated."""
    action: str
    rule: str
    reason: str
    rules: tuple[RuleResult, ...]
    answer_polarity: str = ""  # yes | no | "" for yes/no questions answered from conditions


# --- JSON round trip ------------------------------------------------------------------

def to_dict(obj: Any) -> Any:
    """Plain JSON-ready data for any of the dataclasses above (tuples become lists)."""
    if dataclasses.is_dataclass(obj):
        return {f.name: to_dict(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, (list, tuple)):
        return [to_dict(x) for x in obj]
    if isinstance(obj, dict):
        return {k: to_dict(v) for k, v in obj.items()}
    return obj


def from_dict(cls: Any, data: Any) -> Any:
    """Rebuild ``cls`` from ``to_dict`` output, guided by the type hints."""
    return _build(cls, data)


def _build(tp: Any, data: Any) -> Any:
    if data is None:
        return None
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        return _build(options[0], data)
    if dataclasses.is_dataclass(tp):
        hints = typing.get_type_hints(tp)
        kwargs = {f.name: _build(hints[f.name], data[f.name])
                  for f in dataclasses.fields(tp) if f.name in data}
        return tp(**kwargs)
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_build(args[0], x) for x in data)
        return tuple(_build(a, x) for a, x in zip(args, data))
    if origin is dict:
        _, value_type = typing.get_args(tp)
        return {k: _build(value_type, v) for k, v in data.items()}
    return data
