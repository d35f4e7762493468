"""analyze(): run every model stage once and return a serialisable Trace.

Each stage's result is cached by exactly the inputs and settings it depends on,
so changing a retrieval setting re-runs retrieval and what follows, changing a
variables setting re-runs only the condition checks, and a gate threshold
re-runs nothing here at all (that is ``core.gate.decide``).

Generation (issue 5): step-back retrieval and LLM claim rewriting when switched on, and
the abductive premises stage after the signals. They use the generator the settings
name; with the default template generator no generation model is loaded. The response
itself is written after ``decide()``, by ``core.agents.respond_checked``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from core import calibrated
from core import models as models_mod
from core import nli as nli_mod
from core import settings as settings_mod
from core.abduction import AbductionStage
from core.bands import answer_by_age
from core.claims import ClaimBuilder
from core.evidence import EvidenceSelector, choose_answer
from core.generation import Backend, backend_for
from core.kb import KnowledgeBase
from core.kg import SubgraphQuery
from core.models import Models
from core.retrieval import Retriever
from core.signals import QuestionFeatures, SignalStage, question_features, with_premise
from core.stepback import ClaimRewriter, StepBackRewriter, stepback_retrieve
from core.text import LRU, stable_hash, without_markup
from core.types import (Abduction, AnswerChoice, Claim, ClaimRewrite, Passage, PassageNli, Query, RetrievedPassage,
                        Signals, StepBackRetrieval, Subgraph, Trace, VariableState, to_dict)
from core.variables import FIRST_PERSON, VariableStage

MAX_QUESTION_CHARS = 2000
BRIDGE_PASSAGES = 2  # passages searched for facts about each entity of the evidence (``_bridges``)
BRIDGE_ENTITIES = 8  # entities of the evidence followed out of it, the most often mentioned first
MAX_RIVALS = 5  # documents beyond the retrieved ones that may count as referents (``_rivals``)


class InputError(ValueError):
    """The question or its context cannot be analysed; the message says why and what to do."""


def make_query(question: str, scenario: str = "", history: Sequence[Any] = ()) -> Query:
    """A checked Query, read without any HTML it was pasted with (``without_markup``); history items may be
    (q, a) pairs or {"question", "answer"} dicts (ShARC's {"follow_up_question", "follow_up_answer"} too)."""
    if isinstance(question, str):
        question = without_markup(question)
    if not isinstance(question, str) or not question.strip():
        raise InputError("The question is empty: type a question to analyse.")
    if len(question) > MAX_QUESTION_CHARS:
        raise InputError(f"The question is {len(question):,} characters long; the limit is "
                         f"{MAX_QUESTION_CHARS:,}. Put background facts in the scenario field instead.")
    if len(scenario) > 20 * MAX_QUESTION_CHARS:
        raise InputError(f"The scenario is {len(scenario):,} characters long; the limit is "
                         f"{20 * MAX_QUESTION_CHARS:,}.")
    turns = []
    for item in history or ():
        if isinstance(item, Mapping):
            q = item.get("question", item.get("follow_up_question", ""))
            a = item.get("answer", item.get("follow_up_answer", ""))
        else:
            q, a = item
        turns.append((without_markup(str(q)), without_markup(str(a))))
    return Query(question=" ".join(question.split()), scenario=without_markup(scenario).strip(), history=tuple(turns))


@dataclass(frozen=True)
class NliResult:
    """What the NLI stage hands on: per-passage NLI, the filter outcome and the top passages' conflict."""
    nli: tuple[PassageNli, ...]
    fallback: bool
    pair_contradiction: float


@dataclass(frozen=True)
class Stage:
    """One cached step of the analysis: its name, what it reads (earlier stages, or the query's
    parts and the models: ``SOURCES``) and the settings it reads. ``compute`` is called with exactly
    those inputs, by name, and ``settings`` (a dict of its settings' values), so a stage cannot
    read what its cache key does not cover. A stage with a ``switch`` setting that is off is
    skipped: its result is None."""
    name: str
    inputs: tuple[str, ...]
    settings: tuple[str, ...]
    compute: Callable[..., Any] = field(repr=False, compare=False)
    switch: str | None = None


# What a stage may read besides earlier stages: the knowledge base, the query and its parts, and
# the generator where a switched-on setting uses it (keyed by its id, None when unused).
SOURCES = ("kb", "query", "question", "scenario", "has_context", "stepback_generator", "claim_generator",
           "premise_generator")


class StageRunner:
    """Runs declared stages in order over one query, each through its own LRU cache. A stage's key
    is the hash of its name, its inputs' keys and its settings' values, so a changed setting re-runs
    its stage and every stage that reads it, directly or through another stage, and nothing else."""

    def __init__(self, stages: Sequence[Stage], cache_size: int = 512):
        names = set(SOURCES)
        for stage in stages:
            unknown = [i for i in stage.inputs if i not in names]
            if unknown:
                raise ValueError(f"stage {stage.name!r} reads {unknown}, which no earlier stage or source gives")
            names.add(stage.name)
        self.stages = tuple(stages)
        self.caches = {stage.name: LRU(cache_size) for stage in stages}

    def run(self, sources: Mapping[str, tuple[Any, Any]], values: Mapping[str, Any]) -> tuple[dict, dict]:
        """Every stage's result by name, and the seconds each took (0 when cached). ``sources`` maps
        each source to (value, what identifies it in a key)."""
        results = {name: value for name, (value, _) in sources.items()}
        keys = {name: stable_hash(identity) for name, (_, identity) in sources.items()}
        timings: dict[str, float] = {}
        for stage in self.stages:
            if stage.switch is not None and not values[stage.switch]:
                results[stage.name], keys[stage.name] = None, stable_hash(stage.name, None)
                continue
            own = {name: values[name] for name in stage.settings}
            keys[stage.name] = stable_hash(stage.name, [keys[i] for i in stage.inputs], own)
            args = {i: results[i] for i in stage.inputs}
            start = time.perf_counter()
            results[stage.name], hit = self.caches[stage.name].get_or(
                keys[stage.name], lambda: stage.compute(settings=own, **args))
            timings[stage.name] = 0.0 if hit else round(time.perf_counter() - start, 4)
        return results, timings


# --- the stages, in order ------------------------------------------------------------------

def _retrieval(kb: KnowledgeBase, question: str, scenario: str, stepback_generator: Backend | None,
               settings: Mapping[str, Any]) -> tuple[tuple[RetrievedPassage, ...], StepBackRetrieval | None]:
    """The question's passages, the asker's scenario helping to choose the document
    (``core.retrieval``); with step-back on (a generator given), the merge of the question's and its
    step-back version's lists, and both lists for the trace (seed 003)."""
    retriever = Retriever(settings["top_k"], settings["fusion_alpha"], settings["scenario_doc_weight"])
    if stepback_generator is None:
        return retriever.run(kb, question, context=scenario), None
    both = stepback_retrieve(kb, question, retriever, StepBackRewriter(stepback_generator).run(question),
                             settings["stepback_weight"], context=scenario)
    return both.merged, both


def _rivals(kb: KnowledgeBase, question: str, retrieval, settings: Mapping[str, Any]) -> tuple[str, ...]:
    """Documents beyond the retrieved ones that the question could mean: a question naming nothing
    refers to "the agreement", the top document's title says "agreement", and other documents of the
    knowledge base are so titled, though retrieval's top k, filled by one document's passages, left
    them out. Like a retrieved document of that kind, each counts whatever its score: the question
    does not say which one it means."""
    passages = retrieval[0]
    kinds = calibrated.referent_kinds(question, passages[0].passage.title, calibrated.retrieved_text(passages)) \
        if passages else set()
    if not kinds:
        return ()
    retrieved = {p.passage.doc_id for p in passages} | {p.passage.title for p in passages if p.passage.title}
    # documents that share a title (the paragraphs of one article) are one thing
    return tuple(sorted({d.title or d.id for d in kb.documents.values() if d.id not in retrieved
                         and d.title not in retrieved and any(calibrated.titled_as(k, d.title) for k in kinds)}))[:MAX_RIVALS]


def _evidence(retrieval, question: str, settings: Mapping[str, Any]):
    return EvidenceSelector(
        max_sentences=settings["evidence_max_sentences"], min_alignment=settings["evidence_min_alignment"],
        top_k_passages=settings["evidence_top_k"], cover_min=settings["evidence_cover_min"]).run(question, retrieval[0])


def _question_features(question: str, has_context: bool, settings: Mapping[str, Any]) -> QuestionFeatures:
    return question_features(models_mod.parse([question])[0], has_context)


def _claim(question: str, claim_generator: Backend | None, settings: Mapping[str, Any]
           ) -> tuple[Claim, ClaimRewrite | None]:
    """The question as a claim; with ``llm_claim`` the generator's claim in the rule claim's schema."""
    claim = ClaimBuilder().run(question)
    if claim_generator is None:
        return claim, None
    rewrite = ClaimRewriter(claim_generator).run(question, claim)
    return rewrite.claim, rewrite


def _nli(retrieval, claim, settings: Mapping[str, Any]) -> NliResult:
    passages, claim = retrieval[0], claim[0]
    if not passages:
        return NliResult((), False, 0.0)
    premises = [nli_mod.premise_sentences(p.passage) for p in passages]
    sentence_lists = [[text for _, text in pairs] for pairs in premises]
    hypotheses = [claim.text] + list(claim.sub_claims)
    per_hyp = [nli_mod.sentence_verdicts(sentence_lists, [h] * len(passages)) for h in hypotheses]
    results = []
    for i, p in enumerate(passages):
        best, scores, decider, decisive = per_hyp[0][i]
        subs = tuple(per_hyp[k][i][1] for k in range(1, len(hypotheses)))
        # ``best`` and ``decider`` index the premise list; map them back to the passage's own sentences.
        results.append(PassageNli(passage_id=p.passage.id, claim=scores, best_sentence=premises[i][best][0],
                                  sub_claims=subs, kept=scores.entailment >= settings["entail_keep"],
                                  decisive=decisive, decisive_sentence=premises[i][decider][0]))
    fallback = not any(r.kept for r in results)
    if fallback:
        results = [replace(r, kept=True) for r in results]
    best_texts = [dict(premises[i])[r.best_sentence] for i, r in enumerate(results)]
    return NliResult(tuple(results), fallback, _pair_contradiction(best_texts[:3]))


def _evidence_answer(kb: KnowledgeBase, retrieval, claim, nli: NliResult, question: str,
                     settings: Mapping[str, Any]) -> AnswerChoice | None:
    """The evidence's answer to the question (``choose_answer``): read by the question alone, so a reply in
    the dialogue does not choose it again."""
    openings = {doc: opening for doc in {p.passage.doc_id for p in retrieval[0]}
                if (opening := kb.opening(doc)) is not None}
    # a yes/no question about the asker is answered by its conditions, not by a sentence of the rule
    checked = claim[0].schema in ("polar", "statement") and not FIRST_PERSON.search(question)
    return choose_answer(question, claim[0].answer_type, retrieval[0], nli.nli, openings, yes_no=checked)


def _answer(query: Query, retrieval, claim, evidence_answer: AnswerChoice | None,
            settings: Mapping[str, Any]) -> AnswerChoice | None:
    """What an extractive ANSWER gives and cites: the value for the age the asker told where the evidence gives
    the amount by age (``core.bands``), else the evidence's answer."""
    return answer_by_age(query, claim[0].answer_type, retrieval[0]) or evidence_answer


def _variables(kb: KnowledgeBase, query: Query, retrieval, claim, nli: NliResult,
               settings: Mapping[str, Any]) -> VariableState:
    return VariableStage(**settings).run(query, _condition_sources(kb, retrieval[0], nli.nli),
                                         personal=_about_the_asker(query, claim[0]),
                                         only_document=len(kb.documents) == 1, within=kb.places_within)


def _kg(kb: KnowledgeBase, question: str, retrieval, nli: NliResult, variables: VariableState,
        settings: Mapping[str, Any]) -> Subgraph:
    kept_ids = tuple(p.passage.id for p in _kept(retrieval[0], nli.nli))
    graph = kb.graph_of([p.passage.id for p in retrieval[0]], settings["kg_edge_min"])
    return SubgraphQuery(match_min=settings["kg_match_min"], max_triples=settings["kg_max_triples"],
                         relevance_min=settings["kg_relevance_min"], path_min=settings["kg_path_min"]).run(
        graph, question, known=variables.known, missing=variables.missing, anchor_passages=kept_ids)


def _bridges(kb: KnowledgeBase, retrieved: list, inside: set[str], question: str, edge_min: float) -> list:
    """The graph's bridges (``KnowledgeGraph.bridges``) out of the evidence ``inside``: the graph of the
    retrieved passages, widened by the passages that name an entity of the evidence most (BM25), where
    a fact about that entity is likeliest to be."""
    ids = [p.passage.id for p in retrieved]
    local = kb.graph_of(ids, edge_min)
    nodes = sorted({n for pid in inside for n in local.by_passage.get(pid, ())},
                   key=lambda n: (-local.node(n).mentions, n))[:BRIDGE_ENTITIES]
    named = [local.node(n).label for n in nodes]
    wider = list(dict.fromkeys(ids + [pid for label in named for pid in kb.naming(label, BRIDGE_PASSAGES)]))
    return kb.graph_of(wider, edge_min).bridges(inside, question)


def _signals(kb: KnowledgeBase, retrieval, evidence, question_features: QuestionFeatures, claim, nli: NliResult,
             answer: AnswerChoice | None, variables: VariableState, kg: Subgraph,
             settings: Mapping[str, Any]) -> Signals:
    passages = retrieval[0]
    return SignalStage(**settings).run(
        claim=claim[0], passages=passages, nli=nli.nli, variables=variables, features=question_features,
        passage_vectors=_vectors(kb, passages), pair_contradiction=nli.pair_contradiction,
        value_label=answer.label if answer else "", subgraph=kg, evidence=evidence)


def _premises(kb: KnowledgeBase, query: Query, retrieval, claim, nli: NliResult, variables: VariableState,
              signals: Signals, premise_generator: Backend | None, settings: Mapping[str, Any]) -> Abduction:
    """Seed 000's premises over the kept evidence E, with the graph's bridges."""
    evidence = _kept(retrieval[0], nli.nli)[: settings["premise_top_k"]]
    triggered = signals.sufficiency < settings["abduction_tau"]  # else the stage returns at once: skip the bridges
    bridges = _bridges(kb, retrieval[0], {p.passage.id for p in evidence}, query.question,
                       settings["kg_edge_min"]) if triggered else []
    premises = AbductionStage(
        tau=settings["abduction_tau"], m=settings["abduction_m"], alpha=settings["abduction_alpha"],
        beta=settings["abduction_beta"], reject_contradiction=settings["premise_contradict"],
        support_min=settings["premise_support"], top_k=settings["premise_top_k"],
        related_overlap=settings["premise_related"], fusion_alpha=settings["fusion_alpha"],
        generator=premise_generator)
    return premises.run(kb, query.question, claim[0].text, evidence, signals.sufficiency,
                        missing=[c for c in variables.conditions if c.status == "missing"],
                        known=query.user_facts(), kg=bridges)


def _reads(*stages: str) -> tuple[str, ...]:
    return tuple(s.name for s in settings_mod.SETTINGS if s.stage in stages and s.name not in ("generator",
                                                                                             "generator_timeout"))


# The analysis in order. The generator settings are read where the generator is made (its id keys
# the stages that use it), the step-back, claim and premise switches by the sources they choose.
STAGES: tuple[Stage, ...] = (
    Stage("retrieval", ("kb", "question", "scenario", "stepback_generator"),
          ("top_k", "fusion_alpha", "scenario_doc_weight", "stepback_weight"),
          _retrieval),
    Stage("rivals", ("kb", "question", "retrieval"), (), _rivals),
    Stage("evidence", ("retrieval", "question"), _reads("evidence"), _evidence),
    Stage("question_features", ("question", "has_context"), (), _question_features),
    Stage("claim", ("question", "claim_generator"), (), _claim),
    Stage("nli", ("retrieval", "claim"), _reads("nli"), _nli),
    Stage("evidence_answer", ("kb", "retrieval", "claim", "nli", "question"), (), _evidence_answer),
    Stage("answer", ("query", "retrieval", "claim", "evidence_answer"), (), _answer),
    Stage("variables", ("kb", "query", "retrieval", "claim", "nli"), _reads("variables"), _variables),
    Stage("kg", ("kb", "question", "retrieval", "nli", "variables"), _reads("kg"), _kg),
    Stage("signals", ("kb", "retrieval", "evidence", "question_features", "claim", "nli", "answer", "variables", "kg"),
          _reads("signals"), _signals),
    Stage("premises", ("kb", "query", "retrieval", "claim", "nli", "variables", "signals", "premise_generator"),
          tuple(n for n in _reads("premises") if n not in ("abduction", "premise_generation"))
          + ("fusion_alpha", "kg_edge_min"),
          _premises, switch="abduction"),
)


class Pipeline:
    """The analysis pipeline over one knowledge base: ``STAGES`` run by a ``StageRunner``."""

    def __init__(self, kb: KnowledgeBase, models: Models | None = None, cache_size: int = 512):
        self.kb = kb
        self.models = models or models_mod.DEFAULT
        self.runner = StageRunner(STAGES, cache_size)

    def analyze(self, query: Query | str, overrides: Mapping[str, Any] | None = None) -> Trace:
        """The Trace of ``query`` under ``overrides`` (defaults fill the rest), with this pipeline's models."""
        with models_mod.using(self.models):
            return self._analyze(query, overrides)

    def _analyze(self, query: Query | str, overrides: Mapping[str, Any] | None) -> Trace:
        if isinstance(query, str):
            query = make_query(query)
        values = settings_mod.resolve(overrides)
        # The generator (template by default) is only constructed here; a model loads on first use.
        generator, generator_warning = backend_for(values)

        def used(switch: bool):
            return (generator, generator.id) if switch else (None, None)
        sources = {"kb": (self.kb, self.kb.fingerprint), "query": (query, to_dict(query)),
                   "question": (query.question, query.question),
                   "scenario": (query.scenario, query.scenario),
                   "has_context": (bool(query.scenario or query.history),) * 2,
                   "stepback_generator": used(values["stepback"]), "claim_generator": used(values["llm_claim"]),
                   "premise_generator": used(values["abduction"] and values["premise_generation"])}
        r, timings = self.runner.run(sources, values)
        passages, stepback_retrieval = r["retrieval"]
        claim, claim_rewrite = r["claim"]
        abduction = r["premises"]
        return calibrated.with_probabilities(Trace(query=query, passages=passages, claim=claim, nli=r["nli"].nli,
                     fallback=r["nli"].fallback, variables=r["variables"],
                     signals=with_premise(r["signals"], abduction), evidence=r["evidence"], subgraph=r["kg"],
                     kb=str(self.kb.folder), settings=dict(values), timings=timings,
                     models={**models_mod.model_ids(), "generator": _generator_used(
                         generator.id, stepback_retrieval, claim_rewrite, abduction,
                         premises_asked=bool(values["abduction"] and values["premise_generation"]))},
                     stepback=stepback_retrieval, claim_rewrite=claim_rewrite, abduction=abduction,
                     warnings=(generator_warning,) if generator_warning else (), rivals=r["rivals"],
                     answer=r["answer"]))


def _generator_used(configured: str, stepback, claim_rewrite, abduction, premises_asked: bool) -> str:
    """The backend(s) that wrote this analysis's generated texts: the configured one, or "template"
    with what it fell back from when a server or model failed (a failure yields the rule text)."""
    sources = [s for s in (stepback.stepback.source if stepback else None,
                           claim_rewrite.claim.source if claim_rewrite else None) if s is not None]
    wrote = {s for s in sources if s not in ("rules", "template")}
    wrote |= {p.backend for p in (abduction.candidates if abduction else ()) if p.origin == "generator"}
    if wrote:
        return ", ".join(sorted(wrote))
    asked = bool(sources) or (premises_asked and abduction is not None and abduction.triggered)
    if asked and configured != "template":
        return f"template (fell back from {configured})"
    return configured


def _condition_sources(kb: KnowledgeBase, passages, results) -> tuple[Passage, ...]:
    """The best-matching document's passages, its first NLI-kept one first: conditions often sit in
    another chunk. Retrieval picks the document, not the NLI filter: a rule text seldom entails "I get
    statutory redundancy pay", and the passage that entailed it best was another benefit's (Statutory
    Sick Pay's "are classed as an employee"), whose conditions were then asked about. Within the
    document the kept passage leads (the Winter Fuel Payment's conditions, not its page on living abroad)."""
    if not passages:
        return ()
    doc_id = passages[0].passage.doc_id
    top = next((p.passage for p in _kept(passages, results) if p.passage.doc_id == doc_id), passages[0].passage)
    rest = [p for p in kb.passages if p.doc_id == top.doc_id and p.id != top.id]
    return (top, *rest)


def _vectors(kb: KnowledgeBase, passages: tuple[RetrievedPassage, ...]) -> np.ndarray:
    index = {p.id: i for i, p in enumerate(kb.passages)}
    rows = [index[p.passage.id] for p in passages if p.passage.id in index]
    return kb.embeddings[rows] if rows else np.zeros((0, 1), dtype="float32")


def _about_the_asker(query: Query, claim: Claim) -> bool:
    """A yes/no question about the asker ("Can I …?", "Is my …?") depends on their circumstances,
    and so does one asked with them told ("Is this child a dependent child?" after "My spouse died in
    2002"); a factual question ("What does a replacement cost?") does not, whoever asks it."""
    told = bool(query.scenario.strip() or query.history)
    return claim.schema in ("polar", "conjunctive") and (told or bool(FIRST_PERSON.search(query.question)))


def _kept(passages: tuple[RetrievedPassage, ...], results: tuple[PassageNli, ...]) -> tuple[RetrievedPassage, ...]:
    kept = {r.passage_id for r in results if r.kept}
    return tuple(p for p in passages if p.passage.id in kept)


def _pair_contradiction(sentences: list[str]) -> float:
    """Max P(contradiction) between the best sentences of the top passages, both directions."""
    pairs = [(a, b) for i, a in enumerate(sentences) for j, b in enumerate(sentences) if i != j and a != b]
    if not pairs:
        return 0.0
    return max(s.contradiction for s in nli_mod.predict(pairs))


_pipelines: dict[str, Pipeline] = {}


def analyze(question: str | Query, kb: KnowledgeBase, settings: Mapping[str, Any] | None = None,
            scenario: str = "", history: Sequence[Any] = ()) -> Trace:
    """Run every model stage once for ``question`` against ``kb`` (cached per KB)."""
    query = question if isinstance(question, Query) else make_query(question, scenario, history)
    pipeline = _pipelines.get(kb.fingerprint)
    if pipeline is None:
        pipeline = _pipelines[kb.fingerprint] = Pipeline(kb)
    return pipeline.analyze(query, settings)
