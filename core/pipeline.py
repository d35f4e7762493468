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

import hashlib
import re
import json
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from core import models, nli
from core import settings as settings_mod
from core.abduction import AbductionStage
from core.claims import ClaimBuilder
from core.evidence import EvidenceSelector
from core.generation import Backend, backend_for
from core.kb import KnowledgeBase
from core.kg import KnowledgeGraph, SubgraphQuery
from core.retrieval import Retriever
from core.signals import QuestionFeatures, SignalStage, question_features
from core.stepback import ClaimRewriter, StepBackRewriter, content_words, stepback_retrieve
from core.types import (Abduction, Claim, KgEdge, Passage, PassageNli, Query, RetrievedPassage, StepBackRetrieval,
                        Subgraph, Trace, VariableState)
from core.variables import FIRST_PERSON, VariableStage

MAX_QUESTION_CHARS = 2000
WORD_RE = re.compile(r"[a-z0-9]+")


class InputError(ValueError):
    """The question or its context cannot be analysed; the message says why and what to do."""


def make_query(question: str, scenario: str = "", history: Sequence[Any] = ()) -> Query:
    """A checked Query; history items may be (q, a) pairs or {"question", "answer"} dicts
    (ShARC's {"follow_up_question", "follow_up_answer"} too)."""
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
        turns.append((str(q), str(a)))
    return Query(question=" ".join(question.split()), scenario=scenario.strip(), history=tuple(turns))


class _LRU:
    """A small bounded cache of stage results."""

    def __init__(self, size: int = 512):
        self.size = size
        self.data: OrderedDict[str, Any] = OrderedDict()

    def get_or(self, key: str, compute: Callable[[], Any]) -> tuple[Any, bool]:
        if key in self.data:
            self.data.move_to_end(key)
            return self.data[key], True
        value = compute()
        self.data[key] = value
        if len(self.data) > self.size:
            self.data.popitem(last=False)
        return value, False


def _key(*parts: Any) -> str:
    return hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


@dataclass(frozen=True)
class NliResult:
    """What the NLI stage hands on: per-passage NLI, the filter outcome and evidence facts."""
    nli: tuple[PassageNli, ...]
    fallback: bool
    pair_contradiction: float
    evidence_entity_labels: tuple[frozenset[str], ...]


class Pipeline:
    """The analysis pipeline over one knowledge base, with per-stage caches."""

    def __init__(self, kb: KnowledgeBase, cache_size: int = 512):
        self.kb = kb
        self._caches = {stage: _LRU(cache_size)
                        for stage in ("retrieval", "evidence", "claim", "claim_rewrite", "nli", "variables", "kg",
                                      "premises")}
        self.claims = ClaimBuilder()

    def analyze(self, query: Query | str, overrides: Mapping[str, Any] | None = None) -> Trace:
        if isinstance(query, str):
            query = make_query(query)
        values = settings_mod.resolve(overrides)
        timings: dict[str, float] = {}

        def stage(name: str, key: str, compute: Callable[[], Any]) -> Any:
            start = time.perf_counter()
            value, hit = self._caches[name].get_or(key, compute)
            timings[name] = 0.0 if hit else round(time.perf_counter() - start, 4)
            return value

        # The generator (template by default) is only constructed here; a model loads on first use.
        generator, generator_warning = backend_for(values)
        r_set = settings_mod.for_stage(values, "retrieval")
        retriever = Retriever(r_set["top_k"], r_set["fusion_alpha"])
        stepback = generator if r_set["stepback"] else None
        r_key = _key(self.kb.fingerprint, query.question, r_set["top_k"], r_set["fusion_alpha"],
                     (generator.id, r_set["stepback_weight"]) if stepback else None)
        passages, stepback_retrieval = stage("retrieval", r_key, lambda: self._retrieve(
            query.question, retriever, stepback, r_set["stepback_weight"]))

        e_set = settings_mod.for_stage(values, "evidence")
        evidence = stage("evidence", _key(r_key, e_set), lambda: EvidenceSelector(
            max_sentences=e_set["evidence_max_sentences"], min_alignment=e_set["evidence_min_alignment"],
            top_k_passages=e_set["evidence_top_k"], cover_min=e_set["evidence_cover_min"]).run(query.question, passages))

        has_context = bool(query.scenario or query.history)
        c_key = _key(query.question, has_context)
        claim, features = stage("claim", c_key, lambda: self._claim(query.question, has_context))
        claim_rewrite = None
        if values["llm_claim"]:  # the generator's claim in the rule claim's schema, or the rule claim
            claim_rewrite = stage("claim_rewrite", _key(c_key, generator.id),
                                  lambda: ClaimRewriter(generator).run(query.question, claim))
            claim = claim_rewrite.claim

        n_set = settings_mod.for_stage(values, "nli")
        n_key = _key(r_key, claim.text, claim.sub_claims, n_set)
        nli_result: NliResult = stage("nli", n_key, lambda: self._nli(claim, passages, n_set["entail_keep"]))

        v_set = settings_mod.for_stage(values, "variables")
        v_key = _key(n_key, query.scenario, query.history, v_set)
        variables: VariableState = stage("variables", v_key, lambda: VariableStage(**v_set).run(
            query, self._condition_sources(passages, nli_result.nli), personal=_about_the_asker(query, claim)))

        g_set = settings_mod.for_stage(values, "kg")
        kept_ids = tuple(p.passage.id for p in _kept(passages, nli_result.nli))
        subgraph: Subgraph = stage("kg", _key(v_key, g_set), lambda: SubgraphQuery(
            match_min=g_set["kg_match_min"], max_triples=g_set["kg_max_triples"],
            relevance_min=g_set["kg_relevance_min"], path_min=g_set["kg_path_min"]).run(
            self.kb.graph, query.question, known=variables.known, missing=variables.missing,
            anchor_passages=kept_ids))

        s_set = settings_mod.for_stage(values, "signals")
        start = time.perf_counter()
        vectors = self._vectors(passages)
        signals = SignalStage(**s_set).run(
            claim=claim, passages=passages, nli=nli_result.nli, variables=variables, features=features,
            passage_vectors=vectors, pair_contradiction=nli_result.pair_contradiction,
            evidence_entity_labels=[set(x) for x in nli_result.evidence_entity_labels], subgraph=subgraph,
            evidence=evidence)
        timings["signals"] = round(time.perf_counter() - start, 4)

        p_set = settings_mod.for_stage(values, "premises")
        abduction = None
        if p_set["abduction"]:
            premise_generator = generator if p_set["premise_generation"] else None
            p_key = _key(v_key, signals.sufficiency, p_set, premise_generator.id if premise_generator else None)
            abduction = stage("premises", p_key, lambda: self._abduction(
                query, claim, passages, nli_result.nli, variables, signals.sufficiency, p_set, r_set["fusion_alpha"],
                premise_generator))
            # A premise the KB supports bridges the gap (seed 000). Generated premises do not count:
            # a small generator's off-topic sentence can be "supported" by an unrelated passage.
            supported = bool(abduction and abduction.supported and abduction.best.origin != "generator")
            signals = replace(signals, premise_supported=float(supported))
        return Trace(query=query, passages=passages, claim=claim, nli=nli_result.nli,
                     fallback=nli_result.fallback, variables=variables, signals=signals,
                     evidence=evidence, subgraph=subgraph,
                     kb=str(self.kb.folder), settings=dict(values), timings=timings,
                     models={**models.model_ids(), "generator": generator.id},
                     stepback=stepback_retrieval, claim_rewrite=claim_rewrite, abduction=abduction,
                     warnings=(generator_warning,) if generator_warning else ())

    def _retrieve(self, question: str, retriever: Retriever, stepback: Backend | None,
                  weight: float) -> tuple[tuple[RetrievedPassage, ...], StepBackRetrieval | None]:
        """The question's passages; with step-back on (a generator given), the merge of the
        question's and its step-back version's lists, and both lists for the trace (seed 003)."""
        if stepback is None:
            return retriever.run(self.kb, question), None
        both = stepback_retrieve(self.kb, question, retriever, StepBackRewriter(stepback).run(question), weight)
        return both.merged, both

    def _abduction(self, query: Query, claim: Claim, passages: tuple[RetrievedPassage, ...],
                   results: tuple[PassageNli, ...], variables: VariableState, sufficiency: float,
                   p_set: Mapping[str, Any], fusion_alpha: float, generator: Backend | None) -> Abduction:
        """Seed 000's premises over the kept evidence E, with KG bridges (see ``_bridges``)."""
        evidence = _kept(passages, results)[: p_set["premise_top_k"]]
        triggered = sufficiency < p_set["abduction_tau"]  # else the stage returns at once: skip the bridges
        bridges = _bridges(self.kb.graph, {p.passage.id for p in evidence}, query.question) if triggered else []
        premises = AbductionStage(
            tau=p_set["abduction_tau"], m=p_set["abduction_m"], alpha=p_set["abduction_alpha"],
            beta=p_set["abduction_beta"], reject_contradiction=p_set["premise_contradict"],
            support_min=p_set["premise_support"], top_k=p_set["premise_top_k"],
            related_overlap=p_set["premise_related"], fusion_alpha=fusion_alpha, generator=generator)
        return premises.run(self.kb, query.question, claim.text, evidence, sufficiency,
                         missing=[c for c in variables.conditions if c.status == "missing"],
                         known=query.user_facts(), kg=bridges)

    def _claim(self, question: str, has_context: bool) -> tuple[Claim, QuestionFeatures]:
        claim = self.claims.run(question)
        doc = models.parse([question])[0]
        return claim, question_features(doc, has_context)

    def _condition_sources(self, passages, results) -> tuple[Passage, ...]:
        """The best kept passage, then the rest of its document: conditions often sit in another chunk."""
        kept = _kept(passages, results)
        if not kept:
            return ()
        top = kept[0].passage
        rest = [p for p in self.kb.passages if p.doc_id == top.doc_id and p.id != top.id]
        return (top, *rest)

    def _vectors(self, passages: tuple[RetrievedPassage, ...]) -> np.ndarray:
        index = {p.id: i for i, p in enumerate(self.kb.passages)}
        rows = [index[p.passage.id] for p in passages if p.passage.id in index]
        return self.kb.embeddings[rows] if rows else np.zeros((0, 1), dtype="float32")

    def _nli(self, claim: Claim, passages: tuple[RetrievedPassage, ...], entail_keep: float) -> NliResult:
        if not passages:
            return NliResult((), False, 0.0, ())
        premises = [nli.premise_sentences(p.passage) for p in passages]
        sentence_lists = [[text for _, text in pairs] for pairs in premises]
        hypotheses = [claim.text] + list(claim.sub_claims)
        per_hyp = [nli.best_sentences(sentence_lists, [h] * len(passages)) for h in hypotheses]
        results = []
        for i, p in enumerate(passages):
            best, scores = per_hyp[0][i]
            subs = tuple(per_hyp[k][i][1] for k in range(1, len(hypotheses)))
            # ``best`` indexes the premise list; map it back to the passage's own sentences.
            results.append(PassageNli(passage_id=p.passage.id, claim=scores, best_sentence=premises[i][best][0],
                                      sub_claims=subs, kept=scores.entailment >= entail_keep))
        fallback = not any(r.kept for r in results)
        if fallback:
            results = [replace(r, kept=True) for r in results]
        best_texts = [dict(premises[i])[r.best_sentence] for i, r in enumerate(results)]
        return NliResult(tuple(results), fallback, _pair_contradiction(best_texts[:3]),
                         _evidence_labels(claim, results, premises))


def _about_the_asker(query: Query, claim: Claim) -> bool:
    """A yes/no question about the asker ("Can I …?", "Is my …?") depends on their circumstances;
    a factual question ("What does a replacement cost?") does not, whoever asks it."""
    return claim.schema in ("polar", "conjunctive") and bool(FIRST_PERSON.search(query.question))


def _bridges(graph: KnowledgeGraph, inside: set[str], question: str) -> list[KgEdge]:
    """The bridge a multi-hop question lacks: E links the question's entity to another one
    ("The Harlow Bridge was designed by Edith Marlowe"), and the graph knows a fact about that
    other entity from outside E ("Edith Marlowe was born in Tessby"). Offered: facts about an
    entity of E that the question does not name, from passages outside E, whose relation words
    share a word with the question ("born") — any KB fact is "supported" by the KB, so only
    one about what the question asks may become p*. Most shared words first."""
    asked = content_words(question)
    middle = {n for pid in inside for n in graph.by_passage.get(pid, ())
              if not content_words(graph.node(n).label) <= asked}
    ranked = []
    for i, e in enumerate(graph.edges):
        if e.relation == "requires" or not e.text or e.passage_id in inside or not {e.source, e.target} & middle:
            continue
        relation = content_words(e.text) - content_words(graph.node(e.source).label) \
            - content_words(graph.node(e.target).label)
        shared = len(relation & asked)
        if shared:
            ranked.append((-shared, -e.weight, i))
    return [graph.edges[i] for *_, i in sorted(ranked)]


def _kept(passages: tuple[RetrievedPassage, ...], results: tuple[PassageNli, ...]) -> tuple[RetrievedPassage, ...]:
    kept = {r.passage_id for r in results if r.kept}
    return tuple(p for p in passages if p.passage.id in kept)


def _pair_contradiction(sentences: list[str]) -> float:
    """Max P(contradiction) between the best sentences of the top passages, both directions."""
    pairs = [(a, b) for i, a in enumerate(sentences) for j, b in enumerate(sentences) if i != j and a != b]
    if not pairs:
        return 0.0
    return max(s.contradiction for s in nli.predict(pairs))


def _evidence_labels(claim: Claim, results, premises) -> tuple[frozenset[str], ...]:
    """Entity labels in each top kept passage's evidence sentences (for the answer-type check).

    Evidence = the sentence that best entails the claim and the sentence sharing the
    most words with the claim, in the two best kept passages.
    """
    if not claim.answer_type:
        return ()
    claim_words = set(WORD_RE.findall(claim.text.lower()))
    texts: list[str] = []
    for i in [i for i, r in enumerate(results) if r.kept][:2]:
        sentences = dict(premises[i])
        overlap = max(sentences, key=lambda k: len(claim_words & set(WORD_RE.findall(sentences[k].lower()))))
        texts += list(dict.fromkeys([sentences[results[i].best_sentence], sentences[overlap]]))
    return tuple(frozenset(e.label_ for e in doc.ents) for doc in models.parse(texts))


_pipelines: dict[str, Pipeline] = {}


def analyze(question: str | Query, kb: KnowledgeBase, settings: Mapping[str, Any] | None = None,
            scenario: str = "", history: Sequence[Any] = ()) -> Trace:
    """Run every model stage once for ``question`` against ``kb`` (cached per KB)."""
    query = question if isinstance(question, Query) else make_query(question, scenario, history)
    pipeline = _pipelines.get(kb.fingerprint)
    if pipeline is None:
        pipeline = _pipelines[kb.fingerprint] = Pipeline(kb)
    return pipeline.analyze(query, settings)
