"""The information state S(q) = (V_known, V_missing, C) of seed 002 §3.1.

Known variables are the entities and values the user stated (question, scenario,
history). Required variables are the conditions the best evidence imposes —
bullet items under an "if you:" lead-in, if/unless/only-if clauses and
must/eligible/require sentences. Each condition is checked against the user's
facts: numerically when it has a quantity (an SNLI model cannot compare 14
months with two years), by a matching answered follow-up question, else by NLI
with the condition put in the user's own voice. I(q) = |missing| / (|known| + |missing|).

Conditions are read only for questions about the asker ("Can I …", "Is my …"):
a factual question about a policy ("How much is the payment?") does not depend on
who asks.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from core import models, nli, quantities, voice
from core.types import Condition, NliScores, Passage, Query, VariableState

BULLET = nli.BULLET
ANY_CUE = re.compile(r"\b(any|one|either|at least one) of\b|\bany of the following\b", re.I)
LEAD_IN_CUE = re.compile(r"\b(if|when|must|eligible|qualify|qualif|require|need|only|criteria|conditions|following|provided)\b", re.I)
CONDITION_CUE = re.compile(r"\b(must|eligible|qualify|require[sd]?|need to|have to|has to|only if|unless|if|provided that|as long as)\b", re.I)
IF_CLAUSE = re.compile(r"\b(only if|unless|if|provided that|as long as|as long as)\b\s+(.*)$", re.I)
NEGATIVE_MAIN = re.compile(r"\b(cannot|can't|can not|won't|will not|not eligible|isn't|is not|are not|aren't|no longer|don't|do not)\b", re.I)
FIRST_PERSON = re.compile(r"\b(i|me|my|mine|we|our|us|you|your)\b", re.I)
UNSURE = re.compile(r"\b(don't know|do not know|not sure|no idea|unsure|maybe|can't remember)\b", re.I)
YES = re.compile(r"^\s*(yes|yeah|yep|correct|true|i do|i am|i have|i did)\b", re.I)
NO = re.compile(r"^\s*(no|nope|not|false|i don't|i do not|i am not|i'm not|i haven't|i have not|never)\b", re.I)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class VariableStage:
    """Find the conditions of the best evidence and check them against the user's facts."""
    condition_entail: float = 0.5
    condition_contradict: float = 0.6
    max_conditions: int = 6
    history_match: float = 0.6  # cosine above which an answered follow-up speaks to a condition

    def run(self, query: Query, passages: tuple[Passage, ...], personal: bool | None = None) -> VariableState:
        known = known_variables(query)
        if personal is None:
            personal = bool(FIRST_PERSON.search(query.question))
        conditions: list[Condition] = []
        if personal:
            # ``passages``: the best passage first, then the rest of its document.
            for passage in passages:
                conditions = extract_conditions(passage)[: self.max_conditions]
                if conditions:
                    break
        conditions = self._check(conditions, query)
        outcome = combine(conditions)
        missing = tuple(c.text for c in still_open(conditions)) if outcome == "undetermined" else ()
        established = tuple(c.text for c in conditions if c.status == "established")
        known_all = tuple(dict.fromkeys(known + established))
        denominator = len(known_all) + len(missing)
        incompleteness = len(missing) / denominator if denominator else 0.0
        return VariableState(known=known_all, conditions=tuple(conditions), missing=missing,
                             incompleteness=incompleteness, outcome=outcome if conditions else "none")

    def _check(self, conditions: list[Condition], query: Query) -> list[Condition]:
        if not conditions:
            return []
        facts = _fact_sentences(query)
        checked: list[Condition | None] = [None] * len(conditions)
        # 1. answered follow-up questions that ask about the condition
        if query.history:
            checked = self._by_history(conditions, query)
        # 2. quantities compared numerically
        for i, cond in enumerate(conditions):
            if checked[i] is None and facts:
                numeric = quantities.check(cond.text, list(facts))
                if numeric is not None:
                    checked[i] = replace(cond, status=_flip(numeric.status, cond), support=numeric.fact,
                                         method=f"numeric: {numeric.explanation}")
        # 3. NLI, one batched call: each fact against the condition in the user's voice and
        #    against its negation (an SNLI model rarely says "contradiction" for "I don't smoke"
        #    vs "I smoke", but it does see that the fact entails "I do not smoke").
        todo = [i for i, c in enumerate(checked) if c is None]
        if todo and facts:
            pairs = [(fact, hyp) for i in todo for hyp in (conditions[i].user_voice, _negated(conditions[i]))
                     for fact in facts]
            scores = nli.predict(pairs)
            size = 2 * len(facts)
            for n, i in enumerate(todo):
                block = scores[n * size:(n + 1) * size]
                checked[i] = self._by_nli(conditions[i], facts, block[:len(facts)], block[len(facts):])
        return [c if c is not None else conditions[i] for i, c in enumerate(checked)]

    def _by_nli(self, cond: Condition, facts: tuple[str, ...], direct: list[NliScores],
                negated: list[NliScores]) -> Condition:
        """Established when a fact entails the condition more than its negation; contradicted when
        a fact entails the negation (or contradicts the condition) more than the condition.

        Only facts that share a content word with the condition count: an SNLI model gives
        unrelated sentence pairs ("I like cats." / "I am aged 66 or over.") high scores.
        """
        related = [k for k in range(len(facts)) if _related(facts[k], cond.text)]
        if not related:
            return replace(cond, status="missing", method="nli (no related fact)")
        k_e = max(related, key=lambda k: direct[k].entailment)
        k_c = max(related, key=lambda k: max(negated[k].entailment, direct[k].contradiction))
        against = max(negated[k_c].entailment, direct[k_c].contradiction)
        if direct[k_e].entailment >= self.condition_entail and direct[k_e].entailment > negated[k_e].entailment:
            status, k = "established", k_e
        elif against >= self.condition_contradict and against > direct[k_c].entailment:
            status, k = "contradicted", k_c
        else:
            return replace(cond, status="missing", scores=direct[k_e], method="nli")
        return replace(cond, status=_flip(status, cond), support=facts[k], scores=direct[k], method="nli")

    def _by_history(self, conditions: list[Condition], query: Query) -> list[Condition | None]:
        questions = [q for q, _ in query.history]
        vectors = models.embed([c.text for c in conditions] + questions)
        sims = vectors[: len(conditions)] @ vectors[len(conditions):].T
        out: list[Condition | None] = []
        for i, cond in enumerate(conditions):
            j = int(np.argmax(sims[i]))
            answer = query.history[j][1]
            polarity = ("" if UNSURE.search(answer) else "established" if YES.match(answer)
                        else "contradicted" if NO.match(answer) else "")
            if sims[i, j] >= self.history_match and polarity:
                out.append(replace(cond, status=_flip(polarity, cond), support=f"{questions[j]} {answer}",
                                   method=f"history (similarity {sims[i, j]:.2f})"))
            else:
                out.append(None)
        return out


CONTENT = re.compile(r"[a-z]{4,}")
STOP = frozenset("have been must will with from your that this they them their there which would could should "
                 "about after before more less than least over under following meet conditions".split())


def _stems(text: str) -> set[str]:
    return {w[:5] for w in CONTENT.findall(text.lower()) if w not in STOP}


def _related(fact: str, condition: str) -> bool:
    """The fact and the condition share a content word (first five letters, so live/lived match)."""
    return bool(_stems(fact) & _stems(condition))


def _negated(cond: Condition) -> str:
    return voice.to_user_voice(cond.text, negate=True)


def _flip(status: str, cond: Condition) -> str:
    """A disqualifying condition ("You cannot claim if you …") fails when it holds."""
    if cond.kind != "disqualifier":
        return status
    return {"established": "contradicted", "contradicted": "established"}.get(status, status)


def _fact_sentences(query: Query) -> tuple[str, ...]:
    """The user's statements split into sentences (NLI was trained on sentence pairs)."""
    out: list[str] = []
    if query.scenario.strip():
        out += [s.strip() for s in SENTENCE_END.split(query.scenario.strip()) if s.strip()]
    for question, answer in query.history:
        if answer.strip() and not (YES.match(answer) or NO.match(answer) or UNSURE.search(answer)):
            out.append(answer.strip())
    return tuple(out)


def known_variables(query: Query) -> tuple[str, ...]:
    """Named entities and values the user stated (question, scenario, history answers)."""
    texts = [query.question] + list(_fact_sentences(query))
    known: list[str] = []
    for doc in models.parse(texts):
        known += [e.text for e in doc.ents]
        known += [c.text for c in doc.noun_chunks if c.root.pos_ == "PROPN"]
    for question, answer in query.history:
        if YES.match(answer) or NO.match(answer):
            known.append(f"{question.strip()} {answer.strip()}")
    seen: dict[str, str] = {}
    for k in known:
        seen.setdefault(k.lower(), k)
    return tuple(seen.values())


def extract_conditions(passage: Passage) -> list[Condition]:
    """Conditions stated in a passage, in reading order, with how they combine (all/any)."""
    sentences = [s.text.strip() for s in passage.sentences] or [passage.text]
    conditions: list[Condition] = []
    lead_in: str | None = None
    for text in sentences:
        if BULLET.match(text):
            if lead_in is not None:
                item = BULLET.sub("", text).rstrip(" ;,.").removesuffix(" and").removesuffix(" or").strip()
                if len(item.split()) >= 2:
                    group = "any" if ANY_CUE.search(lead_in) else "all"
                    conditions.append(_condition(item, "bullet", passage.id, group, lead_in))
            continue
        lead_in = text if text.rstrip().endswith(":") and LEAD_IN_CUE.search(text) else None
        if lead_in is not None or text.startswith("#"):
            continue
        clause = _condition_clause(text)
        if clause is not None:
            conditions.append(_condition(clause[0], clause[1], passage.id, "all"))
    return conditions


def _condition_clause(sentence: str) -> tuple[str, str] | None:
    """(condition text, kind) for a sentence that imposes a condition, else None."""
    if not CONDITION_CUE.search(sentence) or sentence.endswith("?"):
        return None
    match = IF_CLAUSE.search(sentence)
    if match:
        cue = match.group(1).lower()
        clause = match.group(2).rstrip(" .;")
        main = sentence[: match.start()]
        if cue == "unless":
            return clause, "unless"  # "You cannot claim unless X": X is required
        if NEGATIVE_MAIN.search(main):
            return clause, "disqualifier"  # "You cannot claim if X": X must not hold
        return clause, "only_if" if cue == "only if" else "if"
    if re.search(r"\b(must|need to|have to|has to|required to|eligible)\b", sentence, re.I):
        if NEGATIVE_MAIN.search(sentence) or re.search(r"\bmust not\b", sentence, re.I):
            return None  # prohibitions on conduct are not eligibility conditions
        return sentence.rstrip(" ."), "requirement"
    return None


def _condition(text: str, kind: str, passage_id: str, group: str, lead: str = "") -> Condition:
    return Condition(text=text, user_voice=voice.to_user_voice(text), kind=kind,
                     passage_id=passage_id, group=group, lead=lead)


def still_open(conditions) -> list[Condition]:
    """Missing conditions that can still change the outcome (an "any" group already met needs no more)."""
    any_met = any(c.status == "established" for c in conditions if c.group == "any")
    return [c for c in conditions if c.status == "missing" and not (c.group == "any" and any_met)]


def combine(conditions: list[Condition] | tuple[Condition, ...]) -> str:
    """satisfied | failed | undetermined for the conditions of one passage.

    "all" conditions fail if any is contradicted; an "any" group is satisfied by one
    established item and fails only when every item is contradicted.
    """
    if not conditions:
        return "none"
    all_group = [c for c in conditions if c.group == "all"]
    any_group = [c for c in conditions if c.group == "any"]
    if any(c.status == "contradicted" for c in all_group) or \
            (any_group and all(c.status == "contradicted" for c in any_group)):
        return "failed"
    all_ok = all(c.status == "established" for c in all_group)
    any_ok = not any_group or any(c.status == "established" for c in any_group)
    return "satisfied" if all_ok and any_ok else "undetermined"
