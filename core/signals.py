"""The numbers the gate reads (seed 002 §3.4–3.7, seed 004 layer 1, seed 000).

Model-derived inputs (the question's parse, passage vectors, NLI scores) are
computed once by the pipeline; ``SignalStage.run`` itself is pure arithmetic, so
changing a signal setting never calls a model.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

import numpy as np

from core.evidence import VALUE_LABELS
from core.types import (Abduction, Claim, EvidenceSelection, PassageNli, RetrievedPassage, Signals, Subgraph,
                        VariableState)

THIRD_PERSON = {"he", "she", "it", "they", "him", "her", "them", "his", "its", "their", "this", "that",
                "these", "those", "one"}
VAGUE = {"some", "several", "many", "few", "various", "certain", "stuff", "things", "thing", "somewhere",
         "sometime", "lot", "much", "it"}
COMPARE_WORDS = {"compare", "compared", "versus", "vs", "difference", "better", "worse", "more", "less"}
WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class QuestionFeatures:
    """What the signals need from the question's spaCy parse (computed once)."""
    terms: tuple[str, ...]  # non-stopword content terms (lower-cased forms and lemmas)
    ambiguity: dict[str, float]


def question_features(doc, has_context: bool) -> QuestionFeatures:
    """Content terms and the five ambiguity heuristics of seed 002 §3.5 for a parsed question.

    Each heuristic is in [0, 1] and Amb is their maximum, so any one of them can
    trip the gate alone (the published mean of five tops out at 0.70 in practice).
    """
    words = [t for t in doc if not t.is_punct and not t.is_space]
    entities = [e for e in doc.ents if e.label_ not in ("CARDINAL", "ORDINAL")]
    proper = [t for t in words if t.pos_ == "PROPN"]
    specific_nouns = [t for t in words if t.pos_ == "NOUN" and t.lower_ not in VAGUE]
    named = bool(entities or proper)
    terms = []
    for t in words:
        if t.is_stop or not t.is_alpha or len(t.text) < 3:
            continue
        terms.append(t.lower_)
    pronouns = [t for t in words if t.lower_ in THIRD_PERSON and t.pos_ in ("PRON", "DET")
                and t.tag_ not in ("WDT", "WP") and not _dummy_it(t) and not _has_antecedent(t, doc)]
    # A demonstrative before a noun ("this item") refers to something only the user sees.
    deictic = [t for t in pronouns if t.pos_ == "DET" and t.lower_ in ("this", "that", "these", "those")]
    # "winter fuel payment", "the boiling point of ethanol", "Can my landlord evict me?": a compound or
    # modified noun, or a noun with a verb that says what happens to it, names a specific thing
    # whether or not it is capitalised.
    specific = named or _specific_phrase(doc) or bool(specific_nouns and _specific_verb(doc))
    heur = {
        "short_query": 1.0 if len(words) < 4 else 0.6 if (len(words) <= 5 and not specific) else 0.0,
        # A pronoun whose antecedent may be in the scenario or history is not dangling either.
        "dangling_pronoun": (0.0 if not pronouns or has_context else
                             0.3 if named else
                             0.6 if deictic and specific_nouns else 1.0),
        "vague_quantifier": 0.0 if not any(_vague_reference(t) for t in words) else 0.2 if named else 0.5,
        "no_named_entity": 0.0 if specific else (0.3 if specific_nouns else 1.0),
        # A predicative comparative ("Which one is bigger?"), not an attributive one ("older people").
        "incomplete_comparison": 1.0 if (any(_compares(t) for t in words)
                                         and len(entities) + len(proper) < 2
                                         and not any(t.lower_ in ("than", "or") for t in words)) else 0.0,
    }
    return QuestionFeatures(terms=tuple(dict.fromkeys(terms)), ambiguity=heur)


AMOUNT_WORDS = frozenset({"more", "less", "fewer"})
# Vague words that say how many or how much of a thing, not which: "serve many functions" names the functions.
QUANTITY_WORDS = frozenset({"many", "several", "few", "various", "much"})
# What a vague word's own phrase may add to say what it is: a partitive ("many of the area's rivers"), a relative
# clause ("the only thing I'm claiming"), a clause or a prepositional phrase after it.
RESTRICTING_DEPS = frozenset({"prep", "relcl", "acl"})


def _vague_reference(token) -> bool:
    """A word that refers to something without saying what ("Tell me about stuff", "Can I get some help?"). Not
    "how many" (a count asked), a quantity of a thing the question names ("What mechanic allows two buttons to serve
    many functions?"), nor a vague word its own phrase restricts ("What blocked many of the area's rivers?", "where
    do i apply if housing benefit is the only thing i'm claiming?"): on the training domains the ambiguity rule asked
    those four questions, each wrongly, and no question a vague word decided was asked rightly."""
    word = token.lower_
    if word not in VAGUE or word == "it":
        return False
    if word in ("much", "many") and token.i > 0 and token.doc[token.i - 1].lower_ == "how":
        return False
    if word in QUANTITY_WORDS and token.dep_ in ("amod", "det", "nummod", "quantmod") and \
            token.head.pos_ in ("NOUN", "PROPN") and token.head.lower_ not in VAGUE:
        return False
    return not any(child.dep_ in RESTRICTING_DEPS for child in token.children)


def _compares(token) -> bool:
    """A comparison that needs its other side: a predicative comparative ("Which one is bigger?"), not an
    attributive one ("older people"), nor an amount ("three more films", "more money"), nor "compared"
    with what it is compared with or to ("was compared favorably with what movie?")."""
    if token.dep_ == "amod" and (token.tag_ in ("JJR", "RBR") or token.lower_ in AMOUNT_WORDS):
        return False
    if token.lemma_.lower() == "compare" and any(c.lower_ in ("with", "to") for c in token.children):
        return False
    return token.tag_ in ("JJR", "RBR") or token.lower_ in COMPARE_WORDS


TIME_NOUNS = frozenset("""time day week month year morning afternoon evening night weekend today tomorrow
yesterday monday tuesday wednesday thursday friday saturday sunday january february march april may june july
august september october november december spring summer autumn winter christmas easter""".split())


def _dummy_it(token) -> bool:
    """"It's February", "it is late", "How much did it cost to build X?", "Is it possible to …?":
    an "it" that stands for the time or for a clause that follows, not for something unnamed."""
    if token.lower_ != "it":
        return False
    if token.dep_ == "expl":
        return True
    head = token.head
    for child in head.children:
        if child.dep_ in ("xcomp", "ccomp", "csubj", "advcl") and any(c.lower_ == "to" or c.dep_ == "mark"
                                                                      for c in child.children):
            return True
        if child.dep_ in ("attr", "oprd") and (
                child.ent_type_ in ("DATE", "TIME") or child.lemma_.lower() in TIME_NOUNS):
            return True
    return False


def _has_antecedent(token, doc) -> bool:
    """A noun phrase of the question the pronoun can refer to: a name anywhere ("Under its
    agreement with Harrowgate, can Brightline …"), or a noun before it ("Can students apply in
    their first year?")."""
    for other in doc:
        if other.i == token.i or other.head.i == token.i and other.dep_ == "poss":
            continue
        if other.ent_type_ in ("CARDINAL", "ORDINAL", "DATE", "TIME", "QUANTITY", "PERCENT", "MONEY"):
            continue
        if other.pos_ == "PROPN" or other.ent_type_:
            return True
        if other.pos_ == "NOUN" and other.i < token.i and other.lower_ not in VAGUE and other.head.i != token.i:
            return True
    return False


GENERIC_VERBS = frozenset("be have do get make go take give find happen need want know say use".split())


def _specific_verb(doc) -> bool:
    """A main verb that says what is asked about ("Can my landlord evict me?"), not "get" or "have"."""
    return any(t.pos_ == "VERB" and t.dep_ == "ROOT" and t.lemma_.lower() not in GENERIC_VERBS for t in doc)


def _specific_phrase(doc) -> bool:
    """A noun with a noun or adjective modifier, a noun's possessive or an "of" phrase ("carers allowance",
    "carer's allowance", "the boiling point of ethanol"): specific even in lower case."""
    for t in doc:
        if t.pos_ != "NOUN" or t.lower_ in VAGUE or t.is_stop:
            continue
        if any(c.dep_ in ("compound", "amod", "poss") and c.pos_ in ("NOUN", "PROPN", "ADJ", "VERB") and not c.is_stop
               and c.lower_ not in VAGUE for c in t.children):
            return True
        if any(c.dep_ == "prep" and c.lower_ == "of" and any(g.pos_ in ("NOUN", "PROPN") for g in c.children)
               for c in t.children):
            return True
    return False


def coverage(terms: tuple[str, ...], passages: tuple[RetrievedPassage, ...]) -> float:
    """Seed 002 Eq. 11: share of the question's content terms found in the retrieved passages.

    A term counts as found when a passage word shares its first five letters
    (a cheap stem: "eligible"/"eligibility", "apply"/"applies" stay apart rarely).
    """
    if not terms:
        return 0.0
    stems = {w[:5] for p in passages for w in WORD.findall(p.passage.text.lower())}
    return sum(1 for t in terms if t[:5] in stems) / len(terms)


def topic_spread(vectors: np.ndarray) -> float:
    """Seed 002 Eq. 13: 1 − mean pairwise cosine among the top passages' embeddings."""
    k = len(vectors)
    if k < 2:
        return 0.0
    sims = vectors @ vectors.T
    upper = sims[np.triu_indices(k, 1)]
    return float(1.0 - upper.mean())


def answer_type_found(answer_type: str, value_label: str) -> float:
    """1 when the question asks for no kind of value the evidence reader knows (``core.evidence.VALUE_LABELS``,
    which also says which entity labels each kind may carry), or when ``core.evidence.answer_value`` found one
    in an answer-bearing sentence (about the asked entity, of the asked kind): ``value_label``, its label."""
    if answer_type not in VALUE_LABELS:
        return 1.0
    return 1.0 if value_label else 0.0


@dataclass(frozen=True)
class SignalStage:
    """Turn retrieval, NLI and variable results into the gate's signals."""
    conf_center: float = 0.40
    conf_scale: float = 0.07
    conflict_top_n: int = 4

    def confidence(self, dense_top: float) -> float:
        """Conf: a sigmoid of the best dense cosine, so 0.5 sits at ``conf_center``."""
        return 1.0 / (1.0 + math.exp(-(dense_top - self.conf_center) / self.conf_scale))

    def run(self, *, claim: Claim, passages: tuple[RetrievedPassage, ...], nli: tuple[PassageNli, ...],
            variables: VariableState, features: QuestionFeatures, passage_vectors: np.ndarray,
            pair_contradiction: float, value_label: str,
            subgraph: Subgraph | None = None, evidence: EvidenceSelection | None = None) -> Signals:
        dense_top = max((p.dense for p in passages), default=0.0)
        conf = self.confidence(dense_top) if passages else 0.0
        # the question's own match: the scenario may rank another document first, not make the match clearer
        fused = sorted((p.fused for p in passages), reverse=True)
        gap = fused[0] - fused[1] if len(fused) > 1 else (fused[0] if fused else 0.0)
        cov = coverage(features.terms, passages)
        amb = max(features.ambiguity.values(), default=0.0)
        spread = topic_spread(passage_vectors[: self.conflict_top_n])
        suff = sufficiency(claim, nli)
        n_missing = len(variables.missing)
        return Signals(
            confidence=conf, dense_top=dense_top, score_gap=gap, coverage=cov,
            evidence_coverage=evidence_coverage(evidence), ambiguity=amb,
            ambiguity_heuristics=dict(features.ambiguity), topic_spread=spread,
            nli_conflict=pair_contradiction, sufficiency=suff,
            answer_type_found=answer_type_found(claim.answer_type, value_label),
            answerability=conf * cov * (1 - amb) * (1 - spread),
            incompleteness=variables.incompleteness, n_conditions=len(variables.conditions),
            n_missing=n_missing, n_contradicted=sum(c.status == "contradicted" for c in variables.conditions),
            condition_outcome=variables.outcome,
            kg_matched=subgraph.n_matched if subgraph else 0,
            kg_path_score=subgraph.path_score if subgraph else 0.0,
            kg_has_var=float(subgraph.has_var) if subgraph else 0.0)


def evidence_coverage(evidence: EvidenceSelection | None) -> float:
    """Share of the question's topics that the selected evidence sentences cover (1 with no topics)."""
    if evidence is None or not evidence.topics:
        return 1.0
    return 1.0 - len(evidence.uncovered) / len(evidence.topics)


def sufficiency(claim: Claim, nli: tuple[PassageNli, ...]) -> float:
    """Seed 000's Sufficiency(Q, E): P(entailment) of the claim by the best kept evidence.

    A yes/no claim (polar, or a statement such as a contract hypothesis) is settled by
    evidence that contradicts it just as well — the answer is then "no" — so for those
    the evidence's P(entailment) or P(contradiction) (of its decisive sentence), whichever is larger, counts.
    With sub-claims (comparative, conjunctive), every sub-claim must be supported by
    some passage: the weakest sub-claim's best support counts if it beats the claim's.
    """
    kept = [n for n in nli if n.kept] or list(nli)
    if not kept:
        return 0.0
    yes_no = claim.schema in ("polar", "statement")
    best = max(max(n.claim.entailment, n.verdict.contradiction) if yes_no else n.claim.entailment for n in kept)
    if claim.sub_claims and all(n.sub_claims for n in kept):
        per_sub = [max(n.sub_claims[i].entailment for n in kept) for i in range(len(claim.sub_claims))]
        best = max(best, min(per_sub))
    return best


def with_premise(signals: Signals, abduction: Abduction | None) -> Signals:
    """The signals once the premises stage has run (it needs Sufficiency first): a premise the KB
    supports bridges the gap (seed 000). Generated premises do not count: a small generator's
    off-topic sentence can be "supported" by an unrelated passage."""
    supported = bool(abduction and abduction.supported and abduction.best.origin != "generator")
    return replace(signals, premise_supported=float(supported)) if abduction is not None else signals
