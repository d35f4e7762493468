"""The data that flows through the pipeline: frozen dataclasses, JSON round-trippable.

Every stage returns one of these and never mutates its inputs. ``to_dict`` /
``from_dict`` give a lossless JSON form, which is what the trace cache, the CLI's
``--json`` output and the UI's "download trace" use.
"""
from __future__ import annotations

import dataclasses
import functools
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
    """A passage with every retrieval score that ranked it (dense cosine, raw and normalised BM25, fused),
    all for the question, and ``scenario_penalty``: what its document lost for matching the question and
    the asker's scenario together less well than the best document did (``core.retrieval``)."""
    passage: Passage
    rank: int
    dense: float
    bm25: float
    bm25_norm: float
    fused: float
    scenario_penalty: float = 0.0
    dense_with_scenario: float | None = None  # cosine with the question and the scenario together, if one was given

    @property
    def score(self) -> float:
        """What ranked it: the question's fused score less the scenario's penalty on its document."""
        return self.fused - self.scenario_penalty


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
    (the sentence with the highest entailment) and ``best_sentence`` its index;
    ``decisive`` is the sentence that decides the claim most either way (the least
    neutral), which for a contradicted statement is often another sentence, and
    ``decisive_sentence`` its index (None in traces written before it was kept).
    """
    passage_id: str
    claim: NliScores
    best_sentence: int
    sub_claims: tuple[NliScores, ...] = ()
    kept: bool = False
    decisive: NliScores | None = None
    decisive_sentence: int | None = None

    @property
    def verdict(self) -> NliScores:
        """The decisive sentence's scores (the best-entailing one's where none was recorded)."""
        return self.decisive or self.claim

    def decisive_text(self, passage: Passage) -> str:
        """The passage's own sentence that decides the claim most, as the reader sees it (empty where the
        trace does not say which)."""
        sentences = passage.sentences
        index = self.decisive_sentence
        return sentences[index].text if index is not None and index < len(sentences) else ""


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
    group: str = "all"  # all | any | unclear (a list that says neither): how conditions of this passage combine
    lead: str = ""  # the lead-in a bullet hangs from ("You can get it if you:")


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
    evidence_coverage: float  # share of the question's topics the pragmatic evidence covers (seed 003)
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
    kg_matched: int = 0  # graph nodes the question reached
    kg_path_score: float = 0.0  # seed 002 Eq. 18
    kg_has_var: float = 0.0  # 1 when a ?var node is attached to an anchor
    premise_supported: float = 0.0  # 1 when the KB supports the chosen missing premise p* (seed 000)
    # Calibrated probabilities (core.calibrated; fitted on ../shared/data/train). The defaults object to nothing.
    p_topic: float = 1.0  # P(the knowledge base covers what the question is about)
    p_fact: float = 1.0  # P(the asked fact is stated in the evidence)
    p_open: float = 0.0  # P(a condition the answer depends on is still open)
    p_met: float = 0.5  # P(every condition is met: the answer is yes)
    p_depends: float = 0.0  # P(the answer turns on the asker's circumstances: a rule, not a stated fact)
    n_referents: int = 1  # documents the question could mean and does not tell apart
    # documents that each say everything the question says of a thing it names only by a common noun
    # ("When was the ship launched?": a shipyard's and a liner's article; ``core.calibrated.described``)
    n_described: int = 0
    # names of two words or more a wh-question gives and no retrieved passage mentions ("Twilight Kondo";
    # ``core.calibrated.unknown_names``)
    n_unknown_names: int = 0
    # names of two words or more the question gives of which the sentence giving the answer's value says a
    # rival ("Maternity Allowance" answered from "Carer's Allowance is …"; ``core.calibrated.rivalled_names``)
    n_rivalled_names: int = 0
    # values of the asked amount or length of time that the top document gives for askers of different ages, to the
    # asker's own question (``core.bands.age_bands``), and 1 once the asker has told an age (``core.bands.told_age``)
    n_age_bands: int = 0
    age_told: int = 0
    # 1 when the claim is a statement to check (a contract's "Receiving Party shall …", a yes/no question not
    # about the asker), not a question for a value or about the asker's circumstances
    statement: int = 0
    # 1 when the claim is answered yes or no (a yes/no question, a statement to check), 0 when the question
    # asks for a value ("How early can I claim?")
    yes_no: int = 0
    follow_ups_answered: int = 0  # follow-up questions the user has answered yes or no: a dialogue is under way
    # 1 when the user gave a scenario with the question: retrieval read the two together, so the question's own
    # match to the knowledge base does not say whether its topic is there ("Is that allowed?")
    has_scenario: int = 0
    # 1 when the rule's conditions are all required together and the user's facts establish every one: the
    # rule's positive answer (``core.variables.all_required_met``)
    conditions_met: int = 0


# --- pragmatic evidence (seed 003) and the knowledge graph (seed 002 §6–7) ------------

@dataclass(frozen=True)
class EvidenceSentence:
    """A chosen sentence; ``start``/``end`` index the passage's text (for safe highlighting)."""
    passage_id: str
    sentence: int  # index in the passage's sentences
    text: str
    score: float  # mean alignment with the topics remaining when it was chosen
    topics: tuple[str, ...]  # the topics it covered
    start: int
    end: int


@dataclass(frozen=True)
class EvidenceStep:
    """One iteration: what was still to cover, the reformulated query and the best candidate."""
    iteration: int
    remaining: tuple[str, ...]
    query: str
    passage_id: str  # "" when no sentence covers any remaining topic
    sentence: int
    text: str
    score: float
    chosen: bool


@dataclass(frozen=True)
class MarkedPassage:
    """A passage's full text, raw and with ``<evidence>`` tags (for a generator prompt; escape for HTML)."""
    passage_id: str
    text: str
    marked: str
    spans: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class EvidenceSelection:
    topics: tuple[str, ...]
    sentences: tuple[EvidenceSentence, ...]
    steps: tuple[EvidenceStep, ...]
    uncovered: tuple[str, ...]  # feed Coverage and the missing variables
    passages: tuple[MarkedPassage, ...]
    stop: str  # covered | below_threshold | max_sentences | no_topics | no_sentences


@dataclass(frozen=True)
class KgNode:
    """An entity (``kind="entity"``) or a missing-variable placeholder (``kind="var"``)."""
    id: str
    label: str
    kind: str
    category: str
    mentions: int = 0
    passages: tuple[str, ...] = ()


@dataclass(frozen=True)
class KgEdge:
    """A validated triple (``relation`` a verb lemma, ``_prep`` appended for chains) or a ``requires`` edge."""
    source: str
    target: str
    relation: str
    weight: float
    sem: float  # cosine of the triple sentence with its source, plus the frequency bonus
    act: float  # extraction confidence, moved by decision reinforcement
    sentence: str  # the source sentence of the best-grounded occurrence
    passage_id: str
    text: str = ""  # the triple rendered as a sentence (what was validated)
    freq: int = 1  # passages the triple was extracted from
    conf: float = 0.0  # initial confidence: 0.8 SVO, 0.7 verb–preposition–object


@dataclass(frozen=True)
class NodeMatch:
    """A node the question reached: by a named entity, by the question's embedding or by a known variable."""
    node: str
    score: float
    via: str  # entity | question | known


@dataclass(frozen=True)
class Subgraph:
    """What the question touches in the graph, as plain data; the gate reads the three flags."""
    nodes: tuple[KgNode, ...]
    edges: tuple[KgEdge, ...]
    matched: tuple[NodeMatch, ...]
    path: tuple[str, ...]  # node ids of the best path; its edges are among ``edges``
    path_score: float  # seed Eq. 18 (one matched entity only: its strongest relevant edge)
    n_matched: int
    complete_path: bool  # path_score ≥ the path threshold
    has_var: bool  # at least one ?var node is attached
    unanchored: tuple[str, ...] = ()  # missing variables with no anchor close enough


@dataclass(frozen=True)
class AnswerChoice:
    """The sentence an extractive ANSWER cites and the value it gives, chosen once in the analysis
    (``core.evidence.choose_answer``): the answer-type check reads its label, the answer agent writes it."""
    passage_id: str
    sentence: str
    value: str = ""  # the asked value, where the question asks for a type (a date, an amount) and a sentence bears one
    label: str = ""  # that value's entity label ("DATE", "MONEY")


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
    evidence: EvidenceSelection | None = None
    subgraph: Subgraph | None = None
    kb: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)
    stepback: StepBackRetrieval | None = None  # when step-back retrieval is on: both queries' lists
    claim_rewrite: ClaimRewrite | None = None  # when LLM claim rewriting is on: its output and verdict
    abduction: Abduction | None = None  # when the premises stage is on
    warnings: tuple[str, ...] = ()  # configuration problems the run worked around (e.g. no generator URL)
    # titles of the knowledge base's documents retrieval did not return that the question could mean
    # (``core.pipeline._rivals``, counted by ``core.calibrated.referents``)
    rivals: tuple[str, ...] = ()
    answer: AnswerChoice | None = None  # what an extractive ANSWER cites; None without passages

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


# --- generation (issue 5): generated texts, step-back, claim rewriting, premises, responses --

@dataclass(frozen=True)
class Generated:
    """One generated text and where it came from.

    ``backend`` is the backend that produced ``text`` ("template" when the fallback was
    used); ``error`` is the warning that explains a fallback ("" when all went well).
    """
    text: str
    backend: str
    cached: bool = False
    error: str = ""
    seconds: float = 0.0

    @property
    def fell_back(self) -> bool:
        return bool(self.error)


@dataclass(frozen=True)
class StepBack:
    """The abstract question and where it came from (``source``: "rules" or a backend id)."""
    question: str
    abstract: str
    source: str
    generated: str = ""  # the generator's raw output, kept even when it was rejected
    warning: str = ""


@dataclass(frozen=True)
class StepBackRetrieval:
    """Both queries' retrieval side by side and the merged list the pipeline goes on with.

    ``merged_from[i]`` says which query found ``merged[i]``: original, stepback or both.
    """
    stepback: StepBack
    original: tuple[RetrievedPassage, ...]
    abstract: tuple[RetrievedPassage, ...]
    merged: tuple[RetrievedPassage, ...]
    merged_from: tuple[str, ...]


@dataclass(frozen=True)
class ClaimRewrite:
    """The claim to use, the rule claim it replaces, and the generator's output and verdict."""
    claim: Claim
    rule_claim: Claim
    generated: str = ""
    accepted: bool = False
    warning: str = ""


@dataclass(frozen=True)
class Premise:
    """A candidate missing premise with its validation numbers (seed 000).

    ``origin``: generator | missing_variable | kg | claim. ``status``: rejected (the evidence
    contradicts it), supported (the KB outside E entails it), about_user (only the user can
    establish it), in_evidence (E itself entails it, so it bridges nothing new), unsupported.
    """
    text: str
    origin: str
    backend: str = "template"
    variable: str = ""  # the missing condition it states (missing_variable premises)
    entail: float = 0.0  # Entail(E, p)
    contradiction: float = 0.0  # max P(contradiction) of p by an evidence sentence
    evidence_passage: str = ""  # the evidence sentence that entails (or contradicts) p most
    evidence_sentence: str = ""
    retrieve: float = 0.0  # Retrieve(p): support outside E
    support_passage: str = ""  # the passage outside E whose sentence entails p most
    support_doc: str = ""
    support_title: str = ""
    support_sentence: str = ""
    score: float = 0.0
    status: str = "unsupported"


@dataclass(frozen=True)
class Abduction:
    """The premises stage's result: every candidate (best first, rejected last), p* and what follows."""
    triggered: bool
    sufficiency: float
    tau: float
    candidates: tuple[Premise, ...] = ()
    best: Premise | None = None
    outcome: str = "not_needed"  # not_needed | answer | ask | abstain
    ask_about: str = ""  # the missing condition to ask about (outcome ask)
    warnings: tuple[str, ...] = ()

    @property
    def supported(self) -> bool:
        return self.best is not None and self.best.status == "supported"


@dataclass(frozen=True)
class Citation:
    """A passage an answer relies on, and the sentence (or condition) it relies on."""
    passage_id: str
    doc_id: str
    title: str
    sentence: str


@dataclass(frozen=True)
class Response:
    """What the user is told.

    ``kind`` — ANSWER: extractive | polarity | premise | generated; ASK: condition | premise |
    which_one | age | generated; ABSTAIN: topic_absent | fact_absent | already_asked.
    ``backend`` — what wrote the text: "extractive", "rules" or a generator backend id.
    ``statement`` — the assertion an ANSWER makes, which the grounding check tests ("" when
    the answer follows from the conditions). ``target`` — ASK: the condition asked about;
    ABSTAIN: the closest document.
    """
    action: str
    text: str
    kind: str
    backend: str
    citations: tuple[Citation, ...] = ()
    answer: str = ""  # the bare answer: a span, "Yes"/"No", or the generated text
    statement: str = ""
    target: str = ""
    warning: str = ""


@dataclass(frozen=True)
class AnswerCheck:
    """One answer-level check (seed 004 layers 2–3) as a gate rule shows it: fires when any comparison holds."""
    name: str
    fires: bool
    comparisons: tuple[Comparison, ...]
    detail: str


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


@functools.cache
def _fields(cls: type) -> tuple[tuple[str, Any], ...]:
    """A dataclass's field names with their resolved type hints (resolving them is most of the cost of
    rebuilding a trace, and they never change)."""
    hints = typing.get_type_hints(cls)
    return tuple((f.name, hints[f.name]) for f in dataclasses.fields(cls))


def _build(tp: Any, data: Any) -> Any:
    if data is None:
        return None
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        return _build(options[0], data)
    if dataclasses.is_dataclass(tp):
        return tp(**{name: _build(hint, data[name]) for name, hint in _fields(tp) if name in data})
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_build(args[0], x) for x in data)
        return tuple(_build(a, x) for a, x in zip(args, data))
    if origin is dict:
        _, value_type = typing.get_args(tp)
        return {k: _build(value_type, v) for k, v in data.items()}
    return data
