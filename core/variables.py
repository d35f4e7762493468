"""The information state S(q) = (V_known, V_missing, C) of seed 002 §3.1.

Known variables are the entities and values the user stated (question, scenario,
history). Required variables are the conditions the best evidence imposes —
bullet items under an "if you:" lead-in, if/unless/only-if clauses and
must/eligible/require sentences. Each condition is checked against the user's
facts: numerically when it has a quantity (an SNLI model cannot compare 14
months with two years), by a matching answered follow-up question, by a gazetteer when it
names a place (``place_check``: NLI knows no geography), else by NLI with the condition put in
the user's own voice. I(q) = |missing| / (|known| + |missing|).

Conditions are read only for questions about the asker ("Can I …", "Is my …", or a yes/no
question asked with circumstances told; ``core.pipeline``): a factual question about a policy
("How much is the payment?") does not depend on who asks; and only from a document the question
is about (``conditions_apply``).

How people talk (issue 15): a fact that negates the condition's predicate ("who isn't a
relative") contradicts it whatever NLI says (``denial``); a fact that says every word of the
condition or of one of its "or" alternatives, synonyms and inflections included (house/home,
living/lived), establishes it (``restates``); "unless"/"except" carve-outs are exceptions, not
requirements (``without_carve_out``); the words after a "Yes," in a reply are facts too.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from functools import partial
from typing import Iterable, Mapping, Sequence

import numpy as np

from core import models, nli, places, quantities, voice
from core.claims import asks, stated_lead
from core.text import (LIST_MARKER, STOPWORDS, heading_texts, normalized, split_sentences, straight_quotes,
                       strip_list_marker, with_apostrophes)
from core.types import Condition, NliScores, Passage, Query, VariableState

ANY_CUE = re.compile(r"\b(any|one|at least one) of\b|\bany of the following\b|\beither\b", re.I)
LEAD_IN_CUE = re.compile(r"\b(if|when|must|eligible|qualify|qualif|require|need|should|shouldn't|only|criteria|conditions|following|provided)\b", re.I)
CONDITION_CUE = re.compile(r"\b(must|eligible|qualify|require[sd]?|need to|have to|has to|only if|unless|if|provided that|as long as)\b", re.I)
# "even if" / "as if" concede or compare, they impose nothing ("This applies even if you are given freedom
# of action" states no condition of being an independent contractor).
IF_CLAUSE = re.compile(r"(?<!\beven )(?<!\bas )\b(only if|unless|if|provided that|as long as)\b\s+(.*)$", re.I)
NEGATIVE_MAIN = re.compile(r"\b(cannot|can't|can not|won't|will not|not eligible|isn't|is not|are not|aren't|no longer|don't|do not|shouldn't|should not)\b", re.I)
# "us" in capitals is the country ("What did the US share?", "released … in the US"), not the asker
FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|we|our|you|your)\b|\b(?-i:us|Us)\b", re.I)
UNSURE = re.compile(r"\b(don't know|do not know|not sure|no idea|unsure|maybe|can't remember)\b", re.I)
# "I am", "I do" … say yes only alone: "I am 60", replying to "Are you aged 66 or over?", states an age, which the
# reader compares (a browser walkthrough had it establish the condition)
YES = re.compile(r"^\s*(?:(yes|yeah|yep|correct|true)\b|(i do|i am|i have|i did)\s*[.!]*\s*$)", re.I)
NO = re.compile(r"^\s*(no|nope|not|false|i don't|i do not|i am not|i'm not|i haven't|i have not|never)\b", re.I)
BARE_REPLY = re.compile(r"^\s*(?:yes|yeah|yep|no|nope|correct)\b[\s,.!;:-]*", re.I)
REQUIREMENT = re.compile(r"\b(must|need to|needs to|have to|has to|required to)\b", re.I)
# A requirement word inside a clause that only says where, when or how ("lets disabled people park closer to
# where they need to go") is no rule's requirement.
SUBORDINATE_REQUIREMENT = re.compile(r"\b(?:where|wherever|when|whenever|what|whatever|how)\s+(?:[\w'-]+\s+){0,2}$", re.I)
# A requirement word in the relative clause of a definition ("Statutory redundancy pay is the minimum amount an
# employer in Calvera has to pay …", "CBT is a training course that most learner riders must take"): the sentence
# says what a term is, and imposes nothing on the reader.
DEFINITION = re.compile(r"^\W*(?!(?:you|your|you're)\b)(?:[\w'-]+\s+){1,6}?(?:is|are|means)\s+(?:the|a|an)\s+[^,;:()]*$",
                        re.I)
# Who need not meet a requirement ("A partner who is too ill to work does not need to meet this
# condition"): an exemption, which imposes nothing.
EXEMPTION = re.compile(r"\b(?:does not|doesn't|do not|don't)\s+(?:need|have) to\b|\bneed(?:n't| not)\b|\bexempt\b"
                       r"|^\W*no\b(?:\s+[\w'-]+){1,6}?\s+(?:is|are)\s+(?:required|needed)\b", re.I)
ELIGIBILITY = re.compile(r"\b(can|could|may|will)\s+(?:usually\s+|still\s+|only\s+)?(?:get|claim|apply|qualify|receive|"
                         r"be eligible|be entitled|take|use)\b|\b(eligible|entitled|qualify|qualifies)\b", re.I)
# Not "other than": it narrows a noun, it carves nothing out ("any condition other than dishonorable", "claim
# any reliefs other than Private Residence Relief"; every use in the ShARC training rules)
CARVE_OUT = re.compile(r",?\s*\b(?:unless|except(?:\s+(?:if|when|where|for|that))?|apart from)\b", re.I)


def as_read(query: Query) -> Query:
    """The user's words as the condition reader reads them: quotes straightened and contractions typed without
    their apostrophe restored ("I havent been offered a place" denies being offered one), in the question, the
    scenario and the replies to follow-ups."""
    return replace(query, question=with_apostrophes(query.question), scenario=with_apostrophes(query.scenario),
                   history=tuple((straight_quotes(q), with_apostrophes(a)) for q, a in query.history))


@dataclass(frozen=True)
class VariableStage:
    """Find the conditions of the best evidence and check them against the user's facts."""
    condition_entail: float = 0.5
    condition_contradict: float = 0.6
    condition_unrelated: float = 0.9
    condition_contradict_direct: float = 0.2
    fact_related_cosine: float = 0.55
    max_conditions: int = 6
    history_match: float = 0.55  # cosine above which an answered follow-up speaks to its closest condition
    # Below it, a follow-up still speaks to the condition that holds most of its words ("do you have a high
    # school diploma?" of "You have a High School Diploma (or equivalent) - or 12 hours of college credit",
    # cosine 0.53): at least this share of them, with a cosine of at least ``history_floor``.
    history_word_share: float = 0.6
    history_floor: float = 0.3
    condition_topic_share: float = 0.5

    def run(self, query: Query, passages: tuple[Passage, ...], personal: bool | None = None,
            only_document: bool = False, within: Mapping[str, frozenset[str]] | None = None) -> VariableState:
        """``only_document``: the knowledge base holds this document alone, so a question about the asker
        can only be about its rule ("Can I get Winter Fuel Payment?" of a passage headed "2. Eligibility"
        that says "the payment"); whether it is about it at all is P(topic)'s to say. ``within``: where the
        knowledge base says its own places lie (``places.stated_containment``), which no gazetteer holds."""
        query = as_read(query)
        known = known_variables(query)
        if personal is None:
            personal = bool(FIRST_PERSON.search(query.question))
        applies = personal and (only_document or conditions_apply(query.question, passages, self.condition_topic_share,
                                                                   tuple(q for q, _ in query.history)))
        # ``passages``: the best passage first, then the rest of its document; each one's conditions read
        # only when needed (a long document has many)
        read = (found[: self.max_conditions] for passage in (passages if applies else ())
                if (found := extract_conditions(passage)))
        conditions = self._check(next(read, []), query, within=within)
        first = combine(conditions)
        if first == "undetermined" and not query.history:
            conditions = self._decisive(read, query, within) or conditions
        elif first == "satisfied" and not requires_something(conditions):
            # Not excluded says nothing of what the page requires ("you live in Cyprus, France … or Spain"
            # does not hold; when were you born?): the first passage that requires something is read too.
            required = next((found for found in read if requires_something(found)), [])
            conditions += self._check(required, query, within=within)
        conditions += self._check(section_conditions(conditions, passages)[: self.max_conditions], query, within=within)
        outcome = combine(conditions)
        missing = tuple(c.text for c in still_open(conditions)) if outcome == "undetermined" else ()
        established = tuple(c.text for c in conditions if c.status == "established")
        known_all = tuple(dict.fromkeys(known + established))
        denominator = len(known_all) + len(missing)
        incompleteness = len(missing) / denominator if denominator else 0.0
        return VariableState(known=known_all, conditions=tuple(conditions), missing=missing,
                             incompleteness=incompleteness, outcome=outcome if conditions else "none")

    def check(self, conditions: Sequence[Condition], query: Query,
              within: Mapping[str, frozenset[str]] | None = None) -> list[Condition]:
        """The conditions with their status from the user's facts, read as ``run`` reads them (``as_read``)."""
        return self._check(list(conditions), as_read(query), within=within)

    def _decisive(self, sections: Iterable[list[Condition]], query: Query,
                  within: Mapping[str, frozenset[str]] | None) -> list[Condition]:
        """The conditions of the first other passage of the document that the user's facts settle without
        NLI (a number, a place, the condition's own words or their denial), checked in full; none when no
        passage is so settled. The best passage's rule may not be the one the user's case falls under:
        "I'm a company director" meets the minimum wage's "not entitled: company directors", not the
        apprentice rate's age bands retrieval put first. Settled means every condition met, at least one
        of them a requirement, or a disqualifier met, which excludes the user whatever else the page says;
        a requirement of another passage failed says nothing (train KB: a page's sections are often other
        routes or amounts, "If you work less than 24 hours … between you", "If they died before 6 October
        2002, you can inherit up to 100%"), and nor does being clear of a list of exclusions ("you live in
        Cyprus, France … or Spain" does not hold: when were you born?)."""
        for conditions in sections:
            quick = self._check(conditions, query, by_nli=False, within=within)
            if (requires_something(quick) and combine(quick) == "satisfied") or \
                    any(c.kind == "disqualifier" and c.status == "contradicted" for c in quick):
                return self._check(conditions, query, within=within)
        return []

    def _check(self, conditions: list[Condition], query: Query, by_nli: bool = True,
               within: Mapping[str, frozenset[str]] | None = None) -> list[Condition]:
        """The conditions with their status from the user's facts; ``by_nli=False`` leaves open what only
        NLI would settle (no model call)."""
        if not conditions:
            return []
        facts = _fact_sentences(query)
        asked_for = quantities.applicant(query.question, query.scenario)
        whole, conditions = conditions, list(conditions)  # the working copy may hold a condition's rest
        number_met: dict[int, str] = {}  # conditions whose number arithmetic met: the rest is checked below
        checked: list[Condition | None] = [None] * len(conditions)
        # 1. answered follow-up questions that ask about the condition
        if query.history:
            checked = self._by_history(conditions, query)
        # 2. quantities compared numerically, in the condition's own words or, where those leave the
        #    number's kind open ("under 19" under "if they're either:"), in the user's voice ("I am
        #    under 19": an age)
        for i, cond in enumerate(conditions):
            if checked[i] is None and facts:
                numeric = quantities.check(cond.text, list(facts), asked_for=asked_for) or \
                    quantities.check(cond.user_voice, list(facts), asked_for=asked_for)
                met = numeric is not None and numeric.status == "established"
                rest = beyond_its_numbers(cond.text) if met else ""
                if rest:
                    # the number met settles its part only: "19 or over | and in the first year …" is
                    # decided by what the steps below make of the rest
                    number_met[i] = numeric.explanation
                    conditions[i] = replace(cond, text=rest,
                                            user_voice=voice.to_user_voice(rest, object_lead(rest, cond.lead)))
                    continue
                if numeric is not None:
                    checked[i] = replace(cond, status=_flip(numeric.status, cond), support=numeric.fact,
                                         method=f"numeric: {numeric.explanation}")
        # 2b. none of it at all: "I'm not working at all right now" works fewer than 16 hours a week
        for i, cond in enumerate(conditions):
            if checked[i] is None and facts:
                zero = none_of_it(cond.text, facts)
                if zero is not None:
                    fact, word = zero
                    checked[i] = replace(cond, status=_flip("established", cond), support=fact,
                                         method=f"numeric: the fact denies “{word}”, none of it is under any limit")
        # 3. places, by the gazetteer: "I live in Cardiff" meets "you live in the UK"; and which year of a
        #    course or an apprenticeship: "the second year of my apprenticeship" is not "in the first year of
        #    their apprenticeship", which the NLI model read as entailed (0.93)
        for i, cond in enumerate(conditions):
            for method, check in (("place", partial(place_check, within=within)), ("ordinal", year_check)):
                found = check(cond.text, facts) if checked[i] is None and facts else None
                if found is not None:
                    status, fact, explanation = found
                    checked[i] = replace(cond, status=_flip(status, cond), support=fact, method=f"{method}: {explanation}")
        # 4. NLI, one batched call: each fact against the condition in the user's voice and
        #    against its negation (an SNLI model rarely says "contradiction" for "I don't smoke"
        #    vs "I smoke", but it does see that the fact entails "I do not smoke").
        todo = [i for i, c in enumerate(checked) if c is None]
        if not by_nli:
            for i in todo:
                checked[i] = self._in_so_many_words(conditions[i], facts, _related_facts(facts, conditions[i].text))
            todo = []
        if todo and facts:
            pairs = [(fact, hyp) for i in todo for hyp in (conditions[i].user_voice, _negated(conditions[i]))
                     for fact in facts]
            scores = nli.predict(pairs)
            size = 2 * len(facts)
            close = self._close_facts(facts, [conditions[i].user_voice for i in todo])
            for n, i in enumerate(todo):
                block = scores[n * size:(n + 1) * size]
                checked[i] = self._by_nli(conditions[i], facts, block[:len(facts)], block[len(facts):], close[n])
        out = [c if c is not None else conditions[i] for i, c in enumerate(checked)]
        for i, explanation in number_met.items():
            out[i] = replace(out[i], text=whole[i].text, user_voice=whole[i].user_voice,
                             method=f"numeric: {explanation}; the rest: {out[i].method or 'not said'}")
        return out

    def _close_facts(self, facts: Sequence[str], conditions: Sequence[str]) -> list[frozenset[int]]:
        """For each condition (in the user's voice, as the facts are told), the facts that say something close
        to it, by sentence-embedding cosine at least ``fact_related_cosine``, whether or not they share a word
        ("I am a physically able person with no children" of "I am a single parent", "I've never been in the
        military" of "I am a combat veteran")."""
        sims = models.cosines(conditions, facts)
        return [frozenset(k for k in range(len(facts)) if sims[n, k] >= self.fact_related_cosine)
                for n in range(len(conditions))]

    def _by_nli(self, cond: Condition, facts: tuple[str, ...], direct: list[NliScores],
                negated: list[NliScores], close: frozenset[int] = frozenset()) -> Condition:
        """Established when a fact entails the condition more than its negation; contradicted when
        a fact entails the negation (or contradicts the condition) more than the condition.

        Facts related to the condition count at ``condition_entail`` and ``condition_contradict``: those that
        share a content word with it, and those ``close`` to it in meaning. A fact that is neither may still
        establish it ("I'm paralysed from the waist down" / "I have a disability"), at ``condition_unrelated``,
        but never contradict it: the model reads a change of topic as a contradiction ("The marijuana is in my
        garage" / "I export sugar and rice" at 0.9 and above; on the ShARC train fact checks, contradictions
        from such facts were mostly wrong), and an SNLI-trained model gave unrelated pairs ("I like cats." /
        "I am aged 66 or over.") high scores. Counting the close ones too (cosine 0.55, chosen on those fact
        checks, 400 scenarios): contradicted read right 187 -> 197, established 172 -> 173, unsettled pairs
        read as settled 122 -> 124.
        """
        worded = _related_facts(facts, cond.text)
        # a bound is arithmetic's to settle, and a fact that names none of its words gives it nothing to align: "I've
        # been off with flu since Tuesday" is close to "ill for at least 4 days in a row", and NLI read a contradiction
        related = worded if bounded(cond.text) else sorted(set(worded) | close)
        in_words = self._in_so_many_words(cond, facts, worded, direct)
        if in_words is not None:
            return in_words
        if not related:
            judged = self._by_scores(cond, facts, direct, negated, list(range(len(facts))),
                                     self.condition_unrelated, math.inf)
            if judged.status == "missing":
                return replace(cond, status="missing", method="nli (no related fact)")
            return replace(judged, method=UNRELATED_NLI)
        return self._by_scores(cond, facts, direct, negated, related, self.condition_entail, self.condition_contradict)

    @staticmethod
    def _in_so_many_words(cond: Condition, facts: Sequence[str], related: Sequence[int],
                          direct: Sequence[NliScores] | None = None) -> Condition | None:
        """Decided by a related fact's own words (``related``: their indices), whatever NLI says: one that
        denies the condition, or one that restates it; None when no fact does."""
        denied = next(((k, word) for k in related if (word := denial(facts[k], cond.text))), None)
        if denied is not None:
            # The fact says the opposite in so many words; an NLI model that reads the shared word
            # on both sides often says "entailment" all the same.
            k, word = denied
            return replace(cond, status=_flip("contradicted", cond), support=facts[k],
                           scores=direct[k] if direct else None, method=f"negation: the fact denies “{word}”")
        restated = next((k for k in related if restates(facts[k], cond.text)), None)
        if restated is not None:
            return replace(cond, status=_flip("established", cond), support=facts[restated],
                           scores=direct[restated] if direct else None, method="words: the fact states the condition")
        return None

    def _by_scores(self, cond: Condition, facts: tuple[str, ...], direct: list[NliScores], negated: list[NliScores],
                   candidates: list[int], entail_min: float, contradict_min: float) -> Condition:
        """The condition judged by the NLI scores of the ``candidates`` facts at these thresholds."""
        k_e = max(candidates, key=lambda k: direct[k].entailment)
        k_c = max(candidates, key=lambda k: max(negated[k].entailment, direct[k].contradiction))
        against = max(negated[k_c].entailment, direct[k_c].contradiction)
        if direct[k_e].entailment >= entail_min and direct[k_e].entailment > negated[k_e].entailment:
            if bounded(cond.text):
                # No fact states a quantity to compare with the bound (arithmetic came first), and the NLI
                # model does no arithmetic: "I'm an employee, my daughter is 6" entailed "I have worked for
                # my employer for at least 1 year" at 0.90.
                return replace(cond, status="missing", scores=direct[k_e], method="nli (a bound needs a stated quantity)")
            status, k = "established", k_e
        elif against >= contradict_min and against > direct[k_c].entailment \
                and direct[k_c].contradiction >= self.condition_contradict_direct:
            if bounded(cond.text) and _same_kind_quantity(facts[k_c], cond.text):
                # The fact states the bounded quantity in words arithmetic could not align with the
                # condition's ("off with flu for 6 days" for "ill for at least 4 days"); NLI, which does no
                # arithmetic, read that pair as a contradiction.
                return replace(cond, status="missing", scores=direct[k_c], method="nli (a bound needs arithmetic)")
            status, k = "contradicted", k_c
        else:
            return replace(cond, status="missing", scores=direct[k_e], method="nli")
        return replace(cond, status=_flip(status, cond), support=facts[k], scores=direct[k], method="nli")

    def _by_history(self, conditions: list[Condition], query: Query) -> list[Condition | None]:
        """Each answered follow-up speaks to the one condition it is closest to (a condition answered
        twice keeps the closer question, the later of two equally close): "Do you live in England? No"
        settles "you live in England", not also "you live in Scotland or Wales" beside it. On ShARC train
        (824 dialogues; bench ``bench_conditions.py``), matching each condition to its closest question instead let one answer
        settle several conditions: precision 0.910, recall 0.821 at 0.6 against 0.915, 0.835 here. A
        follow-up below ``history_match`` that holds most of a condition's words speaks to it: recall
        0.841 → 0.888 of the answered questions whose condition was read, precision 0.899 → 0.884."""
        questions = [q for q, _ in query.history]
        denied = " ".join(q for q, a in query.history if NO.match(a) and not UNSURE.search(a))
        sims = models.cosines([c.text for c in conditions], questions)
        condition_stems = [content_words(c.text) for c in conditions]
        closest: dict[int, tuple[int, str]] = {}  # condition -> (question, status)
        for j, (question, answer) in enumerate(query.history):
            polarity = ("" if UNSURE.search(answer) else "established" if YES.match(answer)
                        else "contradicted" if NO.match(answer) else "")
            i = _closest(question, [c.text for c in conditions], sims[:, j])
            speaks = sims[i, j] >= self.history_match
            if not speaks:
                i, speaks = self._by_words(question, condition_stems, sims[:, j])
            if polarity and asks_the_positive(question, conditions[i].text):
                # "Will you submit it within 15 minutes?" "Yes" denies "you don't submit it within 15 minutes"
                polarity = quantities.opposite(polarity)
            elif polarity == "contradicted" and unasked_alternative(denied, conditions[i].text):
                # "Do you live in England? No" leaves "you live in England, Scotland or Wales" open; "Are you
                # a couple? No" and "Are you part of a family? No" together deny "a couple or part of a family"
                continue
            # of two follow-ups equally close (the same question asked again), the later answer stands
            if polarity and speaks and (i not in closest or sims[i, j] >= sims[i, closest[i][0]]):
                closest[i] = (j, polarity)
        for i, (j, polarity) in list(closest.items()):
            if polarity == "contradicted":
                for k in _also_denied(conditions, condition_stems, i, content_words(query.history[j][0])):
                    closest.setdefault(k, (j, polarity))
        out: list[Condition | None] = [None] * len(conditions)
        for i, (j, polarity) in closest.items():
            out[i] = replace(conditions[i], status=_flip(polarity, conditions[i]),
                             support=follow_up_support(*query.history[j]),
                             method=f"history (similarity {sims[i, j]:.2f})")
        return out

    def _by_words(self, question: str, condition_stems: list[set[str]], sims: np.ndarray) -> tuple[int, bool]:
        """The condition holding the largest share of the follow-up's content words, and whether that
        share and its cosine are enough for the follow-up to speak to it."""
        asked = content_words(question) - GENERIC_ASK
        if not asked:
            return 0, False
        shares = [len(asked & stems) / len(asked) for stems in condition_stems]
        k = max(range(len(shares)), key=lambda c: (shares[c], sims[c]))
        return k, shares[k] >= self.history_word_share and sims[k] >= self.history_floor


# Cosines this close say nothing of which condition a follow-up asks about: the embedding reads words, not their order.
COSINE_TIE = 0.02


def _closest(question: str, conditions: Sequence[str], sims: np.ndarray) -> int:
    """The condition a follow-up is closest to; among those about as close in meaning (``COSINE_TIE``), the one
    whose content words open as the question's do: "Are you a female Vietnam Veteran?" asks about "you are a
    female Vietnam Veteran with a child who has a birth defect", not "you are a child of a female Vietnam
    Veteran with a birth defect", though the embedding puts it as close to either."""
    best = float(np.max(sims))
    asked = _content_sequence(question)

    def opening_shared(k: int) -> int:
        said = _content_sequence(conditions[k])
        return next((n for n, (a, b) in enumerate(zip(asked, said)) if a != b), min(len(asked), len(said)))
    return max((k for k in range(len(conditions)) if sims[k] >= best - COSINE_TIE),
               key=lambda k: (opening_shared(k), sims[k]))


def _content_sequence(text: str) -> list[str]:
    """The text's content words in order, as ``content_words`` folds them, less the words of asking."""
    return [stem for word in re.findall(r"[A-Za-z][\w'’-]*", text) for stem in sorted(content_words(word) - GENERIC_ASK)]


def _also_denied(conditions: Sequence[Condition], stems: Sequence[set[str]], i: int, asked: set[str]) -> list[int]:
    """The alternatives of condition ``i``'s clause that a follow-up answered "No" also asked about: "Are you
    single, divorced, or have dissolved a civil partnership? No" denies "you're single, divorced" and "your
    civil partnership was dissolved" both, since the question holds most of each one's own words (those the
    alternative it is closest to lacks). "Are you a female Vietnam Veteran? No" leaves "you are a child of a
    female Vietnam Veteran" open: the words that make it another alternative are not asked. ``stems``: each
    condition's ``content_words``; ``asked``: the question's."""
    matched = conditions[i]
    if matched.group != "any" or not matched.lead:
        return []
    out = []
    for k, c in enumerate(conditions):
        own = stems[k] - stems[i]
        if k != i and c.group == "any" and c.lead == matched.lead and c.passage_id == matched.passage_id and own \
                and len(own & asked) > len(own) / 2:
            out.append(k)
    return out


def follow_up_support(question: str, reply: str) -> str:
    """What a condition an answered follow-up settled cites as its support: the question and the reply,
    as the reader reads them (the one place this is written, so a trace's reader can find the condition
    a given follow-up settled)."""
    return f"{straight_quotes(question)} {with_apostrophes(reply)}"


STOP = frozenset("meet conditions condition following".split())
UNRELATED_NLI = "nli (no shared word)"  # the method of a condition NLI decided from facts sharing no word with it
# The methods of readings that rest on more than an NLI score: a reply to a follow-up, arithmetic, the
# gazetteer, a year's ordinal, the fact's own words or their denial.
READ_WITHOUT_NLI = ("history", "numeric", "place", "ordinal", "words", "negation")


def read_without_nli(condition: Condition) -> bool:
    """Whether the condition's status rests on more than an NLI score (a number met whose rest NLI read
    does not)."""
    return condition.method.startswith(READ_WITHOUT_NLI) and "the rest: nli" not in condition.method


# "or" in a bound ("level 7 or above", "1 year or longer") or in a bracketed qualifier ("a High School Diploma
# (or equivalent)") joins no alternatives.
BOUND_OR = re.compile(quantities.OR_IN_BOUND.pattern + r"|\(or\b[^)]*\)", re.I)


def unasked_alternative(question: str, condition: str) -> bool:
    """Whether some "or" alternative of the condition goes unmentioned by the question (or by the questions
    answered "No", joined): a "No" to one alternative ("Do you live in England?") does not deny "you live
    in England, Scotland or Wales", nor "Are you the driver of an off-road motorcycle?" "you are under 15
    and the passenger of a motorcycle or attached side car, or are the driver of an off-road motorcycle"."""
    parts = [content_words(part) for part in re.split(r"\bor\b", BOUND_OR.sub(" ", condition), flags=re.I)]
    asked = content_words(question)
    return len(parts) > 1 and any(part and not part & asked for part in parts)


def content_words(text: str) -> set[str]:
    """The text's content words as stems, inflections and synonyms folded (live/living, home/house)."""
    return quantities.content_stems(text) - STOP


def _related(fact: str, condition: str) -> bool:
    """The fact and the condition share a content word, inflections and synonyms included
    (live/living/lived, home/house)."""
    return bool(content_words(fact) & content_words(condition))


def requires_something(conditions: Sequence[Condition]) -> bool:
    """Some condition is a requirement: being clear of a list of exclusions alone says nothing of what a
    page requires."""
    return any(c.kind != "disqualifier" for c in conditions)


def _related_facts(facts: Sequence[str], condition: str) -> list[int]:
    """The indices of the facts related to the condition (``_related``)."""
    return [k for k, fact in enumerate(facts) if _related(fact, condition)]


NEGATION = re.compile(r"\b(?:not|never|no|neither|nor|nothing)\b|n't\b", re.I)  # "nothing to do with" denies too
CLAUSE_BREAK = re.compile(r"[,;.!?]|\b(?:and|but|because|so|although|though|while)\b", re.I)
NEGATION_REACH = 4  # words after a negation that it covers ("isn't | a close relative")
# What a negation covers ends at its clause's end, and each "or"/"nor" starts another thing it denies
# ("not a small business nor a charity"); "of mine" adds nothing to what it denies.
NEGATED_ALTERNATIVE = re.compile(r"\b(?:or|nor)\b", re.I)
POSSESSIVE_OF = re.compile(r"\bof\s+(?:mine|yours|his|hers|ours|theirs)\b", re.I)


def _negations(text: str) -> list[tuple[set[str], set[str], str]]:
    """Each negation's denied predicate, the first content word after it within its clause ("who isn't a
    relative" → relative; "I've never owned a property" → own, not property), with every content word
    of the first thing it denies ("not be used for normal operating expenses") and that thing as written."""
    out: list[tuple[set[str], set[str], str]] = []
    for covered in _negation_scopes(text):
        for word in quantities.phrases_folded(covered).split()[:NEGATION_REACH]:
            stems = content_words(word)
            if stems:
                first = NEGATED_ALTERNATIVE.split(POSSESSIVE_OF.sub(" ", covered))[0]
                out.append((stems, content_words(first), first))
                break
    return out


def _negation_scopes(text: str) -> list[str]:
    """What each negation of the text covers: the rest of its clause ("not on Income Support or Universal
    Credit")."""
    out = []
    for m in NEGATION.finditer(text):
        rest = text[m.end():]
        stop = CLAUSE_BREAK.search(rest)
        out.append(rest[:stop.start()] if stop else rest)
    return out


def _denied_words(text: str) -> set[str]:
    """Every content word the text's negations cover (``_negation_scopes``): "I'm not on his birth certificate and
    I don't have parental responsibility" covers both alternatives of a condition's "or"."""
    return set().union(*(content_words(scope) for scope in _negation_scopes(text)))


def _negated_stems(text: str) -> set[str]:
    """The predicates the text's negations deny."""
    return {stem for denied, _, _ in _negations(text) for stem in denied}


# A name of two or more capitalised words ("Income Support", "Employment and Support Allowance") or an
# acronym ("ESA"): what a denial names must be what the condition names.
NAME = re.compile(r"\b[A-Z][\w'-]*(?:\s+(?:(?:of|and|for|the)\s+)*[A-Z][\w'-]*)+|\b[A-Z]{2,}\b")


FAILED_TO = re.compile(r"\bfail(?:s|ed|ing)? to\b", re.I)


def asks_the_positive(question: str, condition: str) -> bool:
    """The follow-up asks, without the negation, what the condition denies: "Will you submit your update
    within 15 minutes?" of "you don't submit your update within 15 minutes". Only the predicate a negation
    covers counts ("… is wrong and it isn't your fault" is not denied by "Do you think it is wrong?"), and
    "Have you failed to report …?" asks the negation itself."""
    if FAILED_TO.search(question):
        return False
    return bool(_negated_stems(condition) & (content_words(question) - _negated_stems(question)))


def denial(fact: str, condition: str) -> str:
    """The word a fact denies that a positive condition asserts, or "".

    "I rent from a landlord who isn't a relative" denies "relative" of "your landlord is a close
    relative": the NLI model, which reads "relative" in both, says entailment. A condition that
    is itself negated, or a fact that only says the user is unsure, is left to NLI.
    """
    if UNSURE.search(fact) or NEGATION.search(condition) or \
            any(q.relation in ("<", "<=") for q in quantities.extract(condition)):
        return ""  # "I have no savings" meets "savings of less than £16,000"
    asserted = content_words(condition)
    named = straight_quotes(condition).lower()
    for denied, covered, written in _negations(fact):
        # What the negation covers must say nothing the condition does not: "The loan will not be used
        # for operating expenses, but for machinery" denies no "It will be used for machinery", nor "I'm
        # not working at all right now" "you are available for work"; and a thing it names, the condition
        # must name too: "I'm not on Income Support" denies nothing of "you get DLA and either Employment
        # and Support Allowance or Universal Credit", though every word of it is there.
        names = NAME.findall(straight_quotes(written))
        if denied & asserted and covered <= asserted and all(n.lower() in named for n in names) and \
                not leaves_an_alternative(condition, _denied_words(fact)):
            return min(denied & asserted)
    return ""


_OR = re.compile(r"\bor\b", re.I)


def leaves_an_alternative(condition: str, said: set[str]) -> bool:
    """What is ``said`` (content words) names some of the alternatives an "or" of the condition joins and not
    all: "I'm not on his birth certificate" denies one way to meet "are named on the child's birth certificate
    or have parental responsibility for the child", and "I don't rent from a private landlord" one of "rent
    your home from a private landlord or a housing association"; "I don't rent my home" denies what both
    share. The alternatives are the conjuncts of the condition's parse."""
    if not _OR.search(condition):
        return False
    doc = models.parse([condition])[0]
    for cc in doc:
        if cc.dep_ != "cc" or cc.lower_ != "or":
            continue
        conjuncts, todo = [], [cc.head]
        while todo:
            token = todo.pop()
            conjuncts.append(token)
            todo += [t for t in token.children if t.dep_ == "conj"]
        if len(conjuncts) < 2:
            continue
        named = 0
        for conjunct in conjuncts:
            inner = {t.i for other in conjuncts if other is not conjunct and other in conjunct.subtree
                     for t in other.subtree}
            own = " ".join(t.text for t in conjunct.subtree if t.i not in inner)
            named += bool(content_words(own) & said)
        if 0 < named < len(conjuncts):
            return True
    return False


# The user saying something of themselves: the sentence opens with "I" or "we" (after a discourse word).
SAID_OF_SELF = re.compile(r"^\W*(?:(?:so|and|but|well|also|currently|right now)\W+)*(?:i|we)\b", re.I)


# What a user can have none of: money, hours of work, a count ("fewer than 3 children"); not an age, nor a
# time since an event ("a Veteran within one year of discharge" is not met by "I am not a veteran").
CAN_BE_NONE = frozenset({"money", "hours", "count"})
CAPPED_REACH = 5  # words before a bound's number that say what it caps, its "less than" included


# Having no job at all, said without a negation: "I lost my job last month", "I'm unemployed" (not "I'm worried
# since my husband lost his job": his job is not the user's).
WITHOUT_WORK = re.compile(r"\b(?:lost|lose|losing)\s+(?:my|our)\s+jobs?\b|\bunemployed\b|\bout of work\b|"
                          r"\bjobless\b|\bbetween jobs\b|\bmade redundant\b|\blaid off\b", re.I)


def none_of_it(condition: str, facts: Sequence[str]) -> tuple[str, str] | None:
    """(fact, word) when the condition only caps a quantity ("work less than 16 hours a week", "savings
    of less than £16,000") and a fact in which the user denies, without a number of that kind, the very
    thing capped ("I'm not working at all", "I'm 45 and I have no savings", "I lost my job last month", "no
    savings to speak of and I earn about £250 a week"): none of it is under any cap. The NLI model reads "not
    working" against "work less than 16 hours" as a contradiction."""
    bounds = [q for q in quantities.extract(condition) if q.relation != "=="]
    if not bounds or any(q.relation not in ("<", "<=") or q.kind not in CAN_BE_NONE for q in bounds) or \
            NEGATION.search(condition):
        return None
    # what is capped: the words just before the bound ("work | less than 16 hours", "savings of | less than")
    asserted = set().union(*(content_words(" ".join(condition[:q.span[0]].split()[-CAPPED_REACH:])) for q in bounds))
    for fact in facts:
        if not SAID_OF_SELF.match(fact) or UNSURE.search(fact) or \
                any(quantities.same_measure(q, bound) for q in quantities.extract(fact) for bound in bounds):
            # a number of what is capped is for arithmetic ("I work 10 hours"); an age, or earnings under a
            # cap on savings (a weekly amount against a sum held), are not
            continue
        denied_sets = [denied for denied, _, _ in _negations(fact)]
        if WITHOUT_WORK.search(fact):
            denied_sets.append(content_words("work"))
        for denied in denied_sets:
            if denied & asserted:
                return fact, min(denied & asserted)
    return None


# A clause that only explains or compares ("… Spain because the winter is warmer than in the UK").
SUBORDINATE = re.compile(r"\b(?:because|than|which|whose|where|while|so that)\b", re.I)
AREA_WORDS = quantities.content_stems("country countries nation state area region city town part including")
# What "I am in France" and "I'm based in Leeds" say besides the place: that the user is there.
PRESENCE = quantities.content_stems("live living reside resident based stay staying currently now present moment still")
# A move to a place ("I retired to Spain in 2010", "we moved to Leeds") says the user lives there now.
RELOCATION = quantities.content_stems("move moved moving retire retired relocate relocated emigrate emigrated settle "
                                      "settled")
LIVING = quantities.content_stems("live living reside resident home")
# A bare place (a list's item "New Zealand") asks where the user is: "I am a share fisherman in China", "we
# work in Spain" say so, whatever else they say of the user.
PLACED = re.compile(r"^\W*(?:i|we)(?:\s*['’]m|\s+am|\s*['’]re|\s+are|\s+(?:work|live)|\s+(?:am|are)\s+(?:working|living)|"
                    r"\s*['’](?:m|re)\s+(?:working|living))\b[^,;]*\bin\s+(?:the\s+)?$", re.I)
RIGHT_NOW = re.compile(r"\bright now\b", re.I)  # "I'm in Pakistan right now": "right" says nothing of the place
FORMERLY = re.compile(r"\b(?:used to|until|formerly|previously|former|no longer|ago|left)\b|\bmov(?:e|ed|ing) (?:out|away|from)\b",
                      re.I)
# A move to the place, said just before it: "I moved to Geneva two years ago" puts the user there since.
MOVED_TO = re.compile(r"\b(?:mov(?:e|ed|ing)|relocat(?:e|ed|ing)|emigrat(?:e|ed|ing)|retir(?:e|ed|ing)|settl(?:e|ed|ing)|"
                      r"came|come|coming)(?:\s+back|\s+over)?\s+(?:to|into)\s+(?:the\s+)?$", re.I)
# What may stand between the places of one list ("Cyprus, France or Spain", "an EEA country (including
# Switzerland)"); anything else puts them in clauses of their own ("live in the UK and work in an EEA country").
PLACE_LIST = re.compile(r"^[\s,;()]*(?:(?:or|and|nor|the|an?|country|countries|including)[\s,;()]+)*$", re.I)


def place_check(condition: str, facts: Sequence[str],
                within: Mapping[str, frozenset[str]] | None = None) -> tuple[str, str, str] | None:
    """(status, fact, explanation) when a fact puts the user in a place the condition names, or in one
    it cannot be in: "I live alone in Paris" contradicts "you live in Greece", "I am in France" meets
    "you are in an EEA country", "I export sugar within the EU" contradicts "(outside the EU only)", "I
    live outside the UK" contradicts "you live in Wales". The fact must say what the condition says of the place (a shared
    content word, or only that the user is there when the condition says no more), in the present, in a
    clause with no negation of its own; facts that place the user both inside and outside decide
    nothing. ``core.places`` holds the gazetteer."""
    main = condition[: cut.start()] if (cut := SUBORDINATE.search(condition)) else condition
    if NEGATION.search(main):
        return None
    areas = [m for m in places.mentions(main) if m.area]
    if not areas:
        return _same_named_place(main, facts, within or {})
    if len({m.outside for m in areas}) > 1 or \
            not all(PLACE_LIST.match(main[a.end:b.start] + " ") for a, b in zip(areas, areas[1:])):
        return None
    wanted = content_words(_without_places(main, areas)) - AREA_WORDS
    where = " or ".join(dict.fromkeys(a.text for a in areas))
    verdicts: list[tuple[bool, str, str]] = []  # (the user is in the condition's areas, fact, explanation)
    for fact in facts:
        for place in (m for m in places.mentions(fact) if m.readings or m.area):
            if not _puts_the_user_there(wanted, fact, place):
                continue
            if place.outside and place.area:
                # "I live outside the UK" puts the user in none of the places within the UK; "just outside
                # Athens", a town, is near it, in its country (read as the town below)
                if all(places.lies_in(a, [place]) is True for a in areas):
                    verdicts.append((False, fact, f"outside {place.text}, so not in {where}"))
            elif (lies := places.lies_in(place, areas)) is not None:
                verdicts.append((lies, fact, f"{place.text} {'lies' if lies else 'does not lie'} in {where}"))
    if not verdicts or len({v for v, _, _ in verdicts}) > 1:
        return None
    lies, fact, explanation = verdicts[0]
    return ("established" if lies != areas[0].outside else "contradicted"), fact, explanation


def _puts_the_user_there(wanted: set[str], fact: str, place: places.Mention) -> bool:
    """The clause of the fact that names the place puts the user there now, with no negation or doubt of its own
    ("I live in Leeds, and I'm not in hospital"), and says of it what the condition does (``wanted``: its words
    besides the place): a shared content word, a move there for a condition about living there, or, when the
    condition says no more than that the user is there, that the user is."""
    beside = _words_beside(fact, place)
    if NEGATION.search(beside) or UNSURE.search(beside) or _formerly(beside, fact[:place.start]):
        return False
    said = content_words(RIGHT_NOW.sub("now", beside))
    if wanted:
        return bool(wanted & said or (wanted <= LIVING and said & RELOCATION))
    return said <= PRESENCE or bool(PLACED.search(fact[_clause_span(fact, place.start, place.end)[0]:place.start]))


def _same_named_place(main: str, facts: Sequence[str],
                      within: Mapping[str, frozenset[str]]) -> tuple[str, str, str] | None:
    """("established", fact, explanation) when a fact puts the user in the very place the condition names by a
    name the gazetteer does not hold, a knowledge base's own town or region ("have your main home in Calvera" /
    "I live in Calvera"), or in a place the knowledge base says lies in it (``within``: "Tessby is a fishing
    town on the east coast of the Republic of Calvera"). Another name decides nothing, for where it lies is
    unknown, and nor does a fact that says the same of a place outside it too ("I split my time between my
    flat in Calvera and my daughter's house in Norland")."""
    named = places.unknown_names(main)
    if len(named) != 1 or named[0].outside:
        return None
    wanted = content_words(_without_places(main, named)) - AREA_WORDS
    said_of: dict[str, str] = {}  # place name -> the fact that puts the user there
    for fact in facts:
        for place in places.unknown_names(fact) + [m for m in places.mentions(fact) if m.readings or m.area]:
            if not place.outside and _puts_the_user_there(wanted, fact, place):
                said_of.setdefault(place.text, fact)
    area = named[0].text
    if not said_of or not all(places.stated_in(name, area, within) for name in said_of):
        return None
    name, fact = next(iter(said_of.items()))
    return "established", fact, f"{area}, the place named" if name == area else f"{name} lies in {area}, the knowledge base says"


def _formerly(clause: str, before_place: str) -> bool:
    """The clause puts the user in the place in the past ("I lived in Spain until 2019", "I left Leeds two
    years ago"); "ago" alone after a move to it dates the move ("I moved to Geneva two years ago")."""
    said = {m.group().lower() for m in FORMERLY.finditer(clause)}
    return bool(said) and not (said == {"ago"} and MOVED_TO.search(before_place))


ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5, "5th": 5}
# "the first year of their apprenticeship", "my 2nd year of the course": which year of what
YEAR_OF = re.compile(r"\b(?P<ordinal>" + "|".join(ORDINALS) + r")\s+year\s+of\s+(?:(?:the|their|your|my|his|her|its|an?)\s+)?"
                     r"(?P<thing>[A-Za-z][\w'-]*)", re.I)


IN_A_YEAR = re.compile(r"\b(?:in|during)\s+(?:(?:the|their|your|my|his|her|its)\s+)?$", re.I)
YEAR_DONE = re.compile(r"\b(?:finish\w*|complet\w*|end\w*|after|since|passed)\b", re.I)


def year_check(condition: str, facts: Sequence[str]) -> tuple[str, str, str] | None:
    """(status, fact, explanation) when a fact says which year of the condition's course or apprenticeship
    the user is in: the same year establishes "in the first year of their apprenticeship", another one
    contradicts it. The fact must name the same thing, in a clause with no negation of its own."""
    asked = YEAR_OF.search(condition)
    if asked is None or not IN_A_YEAR.search(condition[:asked.start()]):
        return None  # "who have completed the first year of their apprenticeship" is met by the second year
    wanted, thing = ORDINALS[asked["ordinal"].lower()], content_words(asked["thing"])
    for fact in facts:
        for said in YEAR_OF.finditer(fact):
            clause = fact[_clause_span(fact, said.start(), said.end())[0]:said.start()]  # its clause, up to it
            if not thing <= content_words(said["thing"]) or NEGATION.search(clause) or UNSURE.search(clause) or \
                    YEAR_DONE.search(clause):
                continue
            year = ORDINALS[said["ordinal"].lower()]
            return ("established" if year == wanted else "contradicted"), fact, \
                f"year {year} of the {asked['thing']}, {'as' if year == wanted else 'not'} year {wanted}"
    return None


def _without_places(text: str, spans: Sequence[places.Mention]) -> str:
    """``text`` with the named places blanked out (what the condition says of them remains)."""
    for m in sorted(spans, key=lambda m: -m.start):
        text = text[: m.start] + " " + text[m.end:]
    return text


def _clause_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Where the clause of ``text`` that holds ``text[start:end]`` begins and ends (``CLAUSE_BREAK``)."""
    breaks = [0] + [b for m in CLAUSE_BREAK.finditer(text) for b in (m.start(), m.end())] + [len(text)]
    return max(b for b in breaks if b <= start), min(b for b in breaks if b >= end)


def _words_beside(text: str, place: places.Mention) -> str:
    """The clause of ``text`` that names the place, without its name ("I live in Leeds but I work in
    Paris": "I work in" for Paris)."""
    start, end = _clause_span(text, place.start, place.end)
    return text[start:place.start] + " " + text[place.end:end]


def bounded(condition: str) -> bool:
    """The condition bounds a quantity ("at least 1 year", "under £16,000", "aged 66 or over")."""
    return any(q.relation != "==" for q in quantities.extract(condition))


def _same_kind_quantity(fact: str, condition: str) -> bool:
    """The fact states a quantity of a kind the condition bounds (a duration for a duration)."""
    bounded_kinds = {q.kind for q in quantities.extract(condition) if q.relation != "=="}
    return any(q.kind in bounded_kinds for q in quantities.extract(fact))


def restates(fact: str, condition: str) -> bool:
    """The fact says every content word of the condition, or of one of its "or" alternatives ("I own
    my house" for "own your home or rent it from a private landlord"), with no negation in the
    condition, nor in the fact or else in the clause of it that says them ("I can't get other
    financing, and I am a for profit business" says "I am a for profit business"), and no quantity in
    the alternative said (arithmetic decides those: "needs care because of her age" says "care needs
    because of old age" of "an illness likely to need care for more than 3 months, or care needs
    because of old age", but no restatement says "care for more than 3 months"), and every word that
    orders events in it ("before", "after"). A negated condition is restated by a denial of the same
    thing (``restates_denial``)."""
    if UNSURE.search(fact):
        return False
    if NEGATION.search(condition):
        return restates_denial(fact, condition)
    alternatives = [a for a in re.split(r"\s+or\s+", condition) if len(a.split()) >= 2] or [condition]
    # Beside a bounded alternative, one of a single content word is an item of a noun list ("your spouse or
    # civil partner died within 90 days of …"), not another way to meet the condition.
    bounded_beside = bool(quantities.extract(condition))
    alternatives = [a for a in alternatives if not quantities.extract(a) and not (bounded_beside and len(content_words(a)) < 2)]
    unnegated = [fact] if not NEGATION.search(fact) else unnegated_clauses(fact)
    return any(content_words(a) and content_words(a) <= content_words(said) and _order_words(a) <= _order_words(said)
               for said in unnegated for a in alternatives)


def restates_denial(fact: str, condition: str) -> bool:
    """A clause of the fact denies what a negated alternative of the condition denies, no less, and says
    every content word of it: "I do not have access to HPOS" says "you don't have access to HPOS or wish
    to use other online services"; "I don't have children under 5" does not say "you don't have
    children" (it denies less)."""
    # each negated alternative read once: (its content words, what its negations deny, its order words)
    alternatives = [(words, wanted, _order_words(a)) for a in re.split(r"\s+or\s+", condition)
                    if NEGATION.search(a) and not quantities.extract(a) and (words := content_words(a))
                    and (wanted := _negations(a))]
    for said in _clauses(fact):
        denials = _negations(said)
        if not denials or quantities.extract(said):  # "I don't have children under 5" denies less
            continue
        said_words, said_order = content_words(said), _order_words(said)
        for words, wanted, order in alternatives:
            if words <= said_words and order <= said_order and \
                    all(any(denied == d and covered <= c for d, c, _ in wanted) for denied, covered, _ in denials):
                return True
    return False


# Words that order events: "died before they reached State Pension age and after you reached yours" is not
# said by "died before he reached State Pension age", though every content word is.
ORDER_WORDS = frozenset({"before", "after"})


def _order_words(text: str) -> set[str]:
    return ORDER_WORDS & set(re.findall(r"[a-z]+", text.lower()))


def _clauses(text: str) -> list[str]:
    """``text`` cut at its clause breaks (commas, "and", "but", "because", …)."""
    return [c for c in CLAUSE_BREAK.split(text) if c and c.strip()]


# A clause with a subject of its own ("I'm not working, I'm available") does not continue a list before it.
OWN_SUBJECT = re.compile(r"\b(?:i|i'm|i've|im|we|we're|my|our|he|she|they|it|you|there)\b", re.I)
LIST_CONTINUED_BY = frozenset({",", "and"})


def unnegated_clauses(text: str) -> list[str]:
    """The clauses of ``text`` no negation covers. A clause after a comma or "and" that has no subject of its
    own continues what the clause before it says, negation included: "pension credit" in "I don't get income
    support, pension credit or JSA" and in "neither income support, pension credit, nor …" is denied too
    (read as a clause of its own it had established "Pension Credit")."""
    pieces = re.split(f"({CLAUSE_BREAK.pattern})", text, flags=re.I)
    out, denying = [], False
    for k in range(0, len(pieces), 2):
        clause, joined_by = pieces[k], pieces[k - 1].lower() if k else ""
        if not clause.strip():
            continue
        denying = bool(NEGATION.search(clause)) or (denying and joined_by in LIST_CONTINUED_BY and not OWN_SUBJECT.search(clause))
        if not denying:
            out.append(clause)
    return out


GENERIC_ASK = frozenset(quantities.content_stems(
    "get getting claim claiming apply applying eligible eligibility qualify qualifying entitled entitle "
    "receive can could would should help money pay payment benefit scheme able allowed still need "
    "know tell want like free much many long when what which who how"))


def conditions_apply(question: str, passages: tuple[Passage, ...], topic_share: float = 0.5,
                     follow_ups: tuple[str, ...] = ()) -> bool:
    """Whether the conditions of these passages' document bear on the question at all.

    They do when the question names nothing in particular ("Am I eligible?", "Can I apply?":
    the document is the topic), or when what it names is the document's subject: a content word
    of the question in the document's title, or most of them in its text. "Can my landlord
    evict me?" is not a question about the Home Insulation Grant, although the grant's rules
    mention landlords. They also do when a follow-up the user has answered asked about this text
    (most of its words are in it): the dialogue is already about this rule, though the question
    names the scheme ("Can I get Winter Fuel Payment?") and the passage only says "the payment".
    """
    asked = content_words(question) - GENERIC_ASK
    if not asked or not passages:
        return True
    if asked & content_words(passages[0].title):
        return True
    text = set().union(*(content_words(p.text) for p in passages))
    if any((words := content_words(q)) and len(words & text) > topic_share * len(words) for q in follow_ups):
        return True
    return len(asked & text) / len(asked) > topic_share


def _negated(cond: Condition) -> str:
    return voice.to_user_voice(cond.text, object_lead(cond.text, cond.lead), negate=True)


def _flip(status: str, cond: Condition) -> str:
    """A disqualifying condition ("You cannot claim if you …") fails when it holds."""
    if cond.kind != "disqualifier":
        return status
    return quantities.opposite(status)


def _fact_sentences(query: Query) -> tuple[str, ...]:
    """The user's statements split into sentences (NLI was trained on sentence pairs): the scenario's,
    the question's own ("I'm 71. Can I get a bus pass?", "im 62, can i get …": what precedes the question in
    its sentence, ``claims.stated_lead``) and the replies to follow-ups. A question typed without its question
    mark ("Do I qualify for relief") states nothing, though it shares the rule's words."""
    out: list[str] = []
    for sentence in split_sentences(query.question.strip(), typed=True):
        text = sentence.text
        stated = stated_lead(text if text.rstrip().endswith("?") else f"{text.rstrip(' .!')}?")
        if stated is not None:  # "I'm 62, can I get …?": the statement before the question
            out.append(stated[0])
        elif not text.rstrip().endswith("?") and not asks(text):
            out.append(text)
    if query.scenario.strip():
        out += [s.text for s in split_sentences(query.scenario.strip(), typed=True)]
    for question, answer in query.history:
        if UNSURE.search(answer) or not answer.strip():
            continue
        if YES.match(answer) or NO.match(answer):
            # "Yes, it's a three-year degree.": the words after the yes or no state a fact too.
            answer = BARE_REPLY.sub("", answer)
            if len(answer.split()) < 3 and not re.search(r"\d", answer):
                continue  # "No, I don't." states nothing more; "No, I'm 21." states an age
        out.append(answer.strip())
    return tuple(statement for sentence in out for statement in _statements(sentence))


# "but", "although" or a semicolon before a clause with a subject of its own joins two statements; so do a comma
# and an "and" before a pronoun that can only be a subject ("I'm 30, I lost my job last month, I'm not in education
# and I'm applying for jobs every day"), not "my" ("between my flat in Tessby and my daughter's house")
SUBJECT_PRONOUN = r"(?:i|i'm|i've|i'd|i'll|im|we|we're|we've|we'd|we'll|he|he's|she|she's|they|they're|they've)\b"
CONTRAST = re.compile(r"\s*;\s*|,?\s+\b(?:but|although|though|whereas)\s+(?=" + OWN_SUBJECT.pattern + ")"
                      r"|(?:,\s*(?:and\s+)?|\s+and\s+)(?=" + SUBJECT_PRONOUN + ")", re.I)


def _statements(sentence: str) -> list[str]:
    """The statements a sentence joins, each read on its own: "I did not sell business premises or land, but I
    did sell other chargeable assets" states that the assets were sold, and NLI, trained on single-claim pairs,
    read the whole sentence as denying that too; it read "I'm 30, I lost my job last month, I'm not in education
    and I'm applying for jobs every day" as contradicting "I am actively looking for work" (0.70), and its last
    clause alone as entailing it (0.87). A part that is no clause of its own ("Since 2019, I have lived here")
    stays with the next."""
    cuts = [0] + [x for m in CONTRAST.finditer(sentence) for x in (m.start(), m.end())] + [len(sentence)]
    spans = list(zip(cuts[::2], cuts[1::2]))
    opening, after = spans[0], spans[1] if len(spans) > 1 else None
    if after and "," in sentence[opening[1]:after[0]] and not OWN_SUBJECT.search(sentence[opening[0]:opening[1]]):
        spans[:2] = [(opening[0], after[1])]  # "Since 2019": what follows is its clause
    return [part for start, end in spans if (part := sentence[start:end].strip(" ,"))]


def known_variables(query: Query) -> tuple[str, ...]:
    """Named entities and values the user stated (question, scenario, history answers)."""
    texts = [query.question] + list(_fact_sentences(query))
    known: list[str] = []
    for doc in models.parse(texts):
        known += [e.text for e in doc.ents]
        known += [c.text for c in doc.noun_chunks if c.root.pos_ == "PROPN"]
    for question, answer in query.history:
        # "I don't know" opens like a no, and states nothing: it made ρ rise on a reply that settled nothing
        if (YES.match(answer) or NO.match(answer)) and not UNSURE.search(answer):
            known.append(f"{question.strip()} {answer.strip()}")
    seen: dict[str, str] = {}
    for k in known:
        seen.setdefault(k.lower(), k)
    return tuple(seen.values())


def extract_conditions(passage: Passage) -> list[Condition]:
    """Conditions stated in a passage, in reading order, with how they combine (all/any).

    A bulleted list is read with its lead-in (``list_logic``): "… unless:" or "You cannot claim if
    you:" lists disqualifiers, and the conjunction that ends the items ("; or", "; and") or an
    "any of" / "one of" in the lead-in says whether one item or every item is needed.
    """
    sentences = [straight_quotes(s.text.strip()) for s in passage.sentences] or [straight_quotes(passage.text)]
    conditions: list[Condition] = []
    lead_in: str | None = None
    loose_list = ""  # the heading or cue-less lead-in ("… because:") that bullets sit right under
    listed: list[tuple[str, str]] = []  # (item as written, lead-in) of the list being read
    loose: list[str] = []  # the items of a loose list, as written

    def close_list() -> None:
        if listed:
            kind, group = list_logic(listed[0][1], [raw for raw, _ in listed])
            conditions.extend(_condition(_list_item(raw), kind, passage.id, group, lead) for raw, lead in listed)
            listed.clear()
        if any(_predicate_like(_list_item(raw)) for raw in loose) or _things_listed(loose_list, loose):
            # A loose list is read when some item is a predicate ("### Parenting Payment / * have income
            # under the limits"; "* Income Support" alone is not a rule's item) or it names things under a
            # lead-in sentence (``_things_listed``), and then whole: read in
            # part, a list of alternatives ("may be asked questions by: * your representative * the
            # judge") would fail on the one item read when the user's case is another.
            # A heading's items are a rule's requirements unless they end in "or"; under a lead-in that
            # names no condition ("Your payments can go up because:") nothing says which, unless they do.
            _, group = list_logic("" if loose_list.startswith("#") else loose_list, loose)
            if group == "unclear" and loose_list.startswith("#"):
                group = "all"
            conditions.extend(_condition(_list_item(raw), "bullet", passage.id, group) for raw in loose)
        loose.clear()

    for text in sentences:
        if LIST_MARKER.match(text):
            item = _list_item(text)
            if not item or (len(item.split()) < 2 and lead_in is None
                            and not (_lead_sentence(loose_list) and item.lower().strip(" .;,") not in STOPWORDS)):
                # one word is an item only under a lead-in ("working for a: * charity") or a sentence that
                # names things ("Bereavement Support Payment: * New Zealand * Serbia"), not under a heading
                # nor a function word left over from a broken list ("(2) where")
                continue
            if lead_in is not None:
                listed.append((text, lead_in))
            elif loose_list:
                loose.append(text)
            continue
        close_list()
        lead_in = text if text.rstrip().endswith(":") and (LEAD_IN_CUE.search(text) or EXCEPTION_CUE.search(text)) \
            else None
        loose_list = text if text.startswith("#") or text.rstrip().endswith(":") else ""
        if lead_in is not None:
            conditions += lead_conditions(lead_in, passage.id)
            continue
        if text.startswith("#"):
            continue
        inline = INLINE_LIST.search(text)
        if inline and LEAD_IN_CUE.search(text[:inline.start()]):
            # "All businesses … must: meet SBA size standards, be for-profit, …"
            items = [i.strip(" .;") for i in re.split(r";|,\s*(?:and\s+|or\s+)?|\s+and\s+(?=\w+\s)", inline.group(1))]
            items = [i for i in items if len(i.split()) >= 2 and _predicate_like(i)]
            if len(items) >= 2:
                group = "any" if ANY_CUE.search(text[:inline.start()]) else "all"
                conditions += [_condition(i, "bullet", passage.id, group, text[:inline.start() + 1]) for i in items]
                continue
        clause = _condition_clause(text)
        if clause is not None:
            conditions += clause_conditions(*clause, passage.id) + main_clause_conditions(text, passage.id)
    close_list()
    return conditions


def main_clause_conditions(sentence: str, passage_id: str) -> list[Condition]:
    """The conditions a sentence's main clause states after a leading conditional clause: "If your
    child has a baby, you can make the claim for both of them if they live with you" needs both;
    ``_condition_clause`` reads the first only. The main clause's own condition must open with its
    subject ("if they live with you", "as long as your employer pays …"), not a fragment ("(if
    required)")."""
    lead = IF_CLAUSE.search(sentence)
    opening = _opening_clause(lead) if lead is not None else None
    if opening is None:
        return []
    main = opening[1]
    trailing = IF_CLAUSE.search(main)
    if trailing is None or not CLAUSE_START.match(trailing.group(2)):
        return []
    clause = _condition_clause(main.strip())
    return clause_conditions(*clause, passage_id) if clause is not None else []


def clause_conditions(said: str, kind: str, passage_id: str) -> list[Condition]:
    """The conditions one conditional clause states: each of its conjuncts ("if your income is below
    £20,000 and you live in Calvera" is two, both needed), and a conjunct whose predicates are joined
    by "or" as alternatives, one of which is enough (``disjuncts``). A disqualifier's connectives
    turn over ("not (A or B)" is "not A and not B"), so it is split one way only."""
    if kind == "requirement":
        return [_condition(said, kind, passage_id, "all")]
    parts = conjuncts(said)
    if kind == "disqualifier":
        if len(parts) > 1:  # "not (A and B)": one of them not holding is enough
            return [_condition(p, kind, passage_id, "any", lead=said) for p in parts]
        alternatives = disjuncts(said)
        if len(alternatives) > 1:  # "not (A or B)": neither may hold
            return [_condition(a, kind, passage_id, "all", lead=said) for a in alternatives]
        return [_condition(said, kind, passage_id, "all")]
    conditions = []
    for part in parts:
        alternatives = disjuncts(part)
        if len(alternatives) > 1:
            conditions += [_condition(a, kind, passage_id, "any", lead=part) for a in alternatives]
        else:
            conditions.append(_condition(part, kind, passage_id, "all"))
    return conditions


AND = re.compile(r",?\s+and\s+", re.I)
# The words a clause's own subject opens with: "… and you …", "… and your partner …".
SUBJECT = r"(?:you|you're|you've|your|they|they're|their|he|she)\b"
PERSON_WORD = re.compile(rf"\b(?:{SUBJECT}|(?:his|her)\b)", re.I)


def beyond_its_numbers(condition: str) -> str:
    """What the condition joins to its quantities that states none and says something of its own ("" when
    nothing): "in the first year of their apprenticeship" of "19 or over and in the first year of their
    apprenticeship", "your partner is incapacitated" of "you work at least 16 hours a week and your
    partner is incapacitated". Arithmetic that meets the number settles only its part; it can still fail
    the whole. A part before any quantity that names no one is what the bound is of ("savings and
    investments of less than £16,000"), and "16 and over" adds nothing."""
    parts = AND.split(condition)
    numbered, rest = False, []
    for part in parts if len(parts) > 1 else ():
        if quantities.extract(part):
            numbered = True
        elif content_words(part) and (numbered or PERSON_WORD.search(part)):
            rest.append(part)
    return " and ".join(rest)


# "… and you …", "… and your partner …", "… and it isn't your fault", "… and there are more people …": where a
# clause with a subject of its own joins the one before.
CONJUNCT_BREAK = re.compile(rf",?\s+and\s+(?={SUBJECT}|(?:it|it's|there|there's|this)\b)", re.I)


def conjuncts(clause: str) -> list[str]:
    """The clauses "and" joins, each with a subject of its own: "your civil partnership was dissolved
    and you die after you've reached State Pension age" is two conditions, and "No" to the first says
    nothing of the second. Parts shorter than three words are not clauses ("if you and your partner
    earn …"): the clause is then one condition."""
    parts = [p.strip(" ,") for p in CONJUNCT_BREAK.split(clause)]
    return parts if len(parts) > 1 and all(len(p.split()) >= 3 for p in parts) else [clause]


SHARED_SUBJECT = re.compile(r"^(?P<subject>you|they|we|he|she)\s+(?P<predicates>.+)$", re.I)
# "… or you …", "… or your child …": where an alternative with a subject of its own joins the one before.
# "… or you may be charged a penalty" is what follows otherwise, not an alternative.
CLAUSE_OR = re.compile(rf",?\s+or\s+(?={SUBJECT}|(?:it|it's|there|there's|this)\b)"
                       rf"(?!\S+\s+(?:may|might|could|will|would)\b|\S+(?:'ll|'d)\b)", re.I)
PREDICATE_BREAK = re.compile(r",\s*(?:or\s+)?|\s+or\s+", re.I)


def disjuncts(clause: str) -> list[str]:
    """The alternatives of a clause whose subject has several predicates joined by "or": "you go back
    to work, work more hours or earn more money" is three conditions, one of which is enough, and
    "No, I didn't go back to work" denies only the first. Each predicate must start with a verb and
    say something of its own (two words or more: in "you work, study or train in Calvera" the place
    belongs to all three), and no "and" may join them; otherwise the clause is one condition. Alternatives
    that are clauses of their own ("you are a female veteran with a child who has a birth defect or you are a
    child of a female veteran with one") split first, each kept whole, whatever joins its own words; a bound
    only the last one states is taken as all of theirs ("your baby is due or you adopt a child on or after
    5 April 2015"), and the clause stays one condition."""
    clauses = [c.strip(" ,") for c in CLAUSE_OR.split(clause)]
    if len(clauses) > 1 and all(len(c.split()) >= 3 for c in clauses) and all(map(_own_clause, clauses[1:])) and \
            not (quantities.extract(clauses[-1]) and not any(quantities.extract(c) for c in clauses[:-1])):
        return clauses
    match = SHARED_SUBJECT.match(clause)
    if match is None or not re.search(r"\bor\b", clause, re.I) or re.search(r"\band\b", clause, re.I):
        return [clause]
    predicates = [p.strip() for p in PREDICATE_BREAK.split(match["predicates"]) if p.strip()]
    if len(predicates) < 2 or not all(len(p.split()) >= 2 and voice.known_verb(p.split()[0].lower()) for p in predicates):
        return [clause]
    return [f"{match['subject']} {p}" for p in predicates]


AUXILIARY = frozenset("am is are was were has have had do does did don't doesn't didn't can can't cannot could will won't "
                      "would should must may might need needs".split())
SUBJECT_PRONOUNS = frozenset("you they we he she it there this".split())


def _own_clause(text: str) -> bool:
    """Whether ``text`` opens with a subject and its verb ("you are a child of …", "your civil partnership was
    dissolved"), not with a noun phrase "or" joined to the one before ("… by you or your representatives")."""
    words = straight_quotes(text).lower().split()
    if re.fullmatch(r"(?:you|they|we|he|she|it|there)'(?:re|ve|s|d|ll)", words[0]):
        return True
    if words[0] in SUBJECT_PRONOUNS:
        return len(words) > 1 and (words[1] in AUXILIARY or words[1] not in STOPWORDS | {"or", "and"})
    return any(w in AUXILIARY or voice.known_verb(w) for w in words[1:4])


EXCEPTION_CUE = re.compile(r"\b(unless|except|exempt|exemptions?|exceptions?|does not apply|doesn't apply)\b", re.I)
# A clause that ends on its auxiliary ("if you don't", "if so", "if you can") refers back to an earlier one.
ELLIPTICAL = re.compile(r"^(?:so|not|(?:\w+\s+)?(?:do|does|don't|doesn't|did|didn't|are|aren't|is|isn't|can|can't|cannot|have|haven't|"
                        r"will|won't|were|was|should|would))$", re.I)
# Where a main clause starts after a leading if-clause written without its comma: a subject and a modal.
MAIN_CLAUSE_START = re.compile(r"\s(?:(?:you|we|they|it|he|she)(?:'ll|'d)|(?:you|we|they|it|he|she)\s+(?:will|won't|can|can't|"
                               r"cannot|could|must|may|might|need to|needs to|should|have to|has to|would)\b)", re.I)
# A short clause whose subject points back ("if this happens", "if that's the case"): it names no condition.
# "it" is left out: "if it's your main home" is a condition.
ANAPHORIC = re.compile(r"^(?:this|that|these|those|that's)\b(?:\s+\S+){0,3}$", re.I)
ALL_CUE = re.compile(r"\b(?:all|both|each|every one) of\b|\b(?:all|both|each of) (?:the following|these)\b", re.I)
ITEM_JOINER = re.compile(r"[\s;,]+(and|or)\s*$", re.I)


# A lead-in that opens with its own condition before the clause that introduces the list.
LEADING_CONDITION = re.compile(r"^\W*(?:if|unless|when|where|as long as|provided that)\b", re.I)
# What joins a lead-in's own condition to the list it introduces: "… if you're 16 or over and you:",
# "… if you don't get Pension Credit but:", "… if you get Universal Credit and one of the following apply:".
LIST_JOIN = re.compile(r"[\s,]+(?:and|but)\b(?P<rest>(?:\s+\S+){0,6}?)\s*$", re.I)
# The words after that joiner when they only introduce the list: "one of the following apply", "you",
# "you're working for a", "meet the following requirements".
LIST_INTRODUCER = re.compile(r"^(?:|.*\b(?:following|these)\b.*|(?:you|you're|they|they're|he|she|it)\b.*)$", re.I)
# Clauses of one lead-in listed with commas: "if you get Universal Credit, you're not employed …"
CLAUSE_START = re.compile(r"(?:you|you're|your|they|they're|their)\b", re.I)
CLAUSE_LIST = re.compile(r",\s+(?=" + CLAUSE_START.pattern + ")", re.I)


def own_condition_join(lead: str) -> re.Match | None:
    """Where a lead-in's own condition ends and the words introducing its list begin, if it has one."""
    joined = LIST_JOIN.search(lead.split(":")[0].rstrip())
    return joined if joined and LIST_INTRODUCER.match(joined.group("rest").strip()) else None


def lead_conditions(lead_in: str, passage_id: str) -> list[Condition]:
    """The conditions a lead-in states besides its list, each required on top of the list.

    "You may be able to apply … if you don't get the Guarantee Credit element of Pension Credit but:"
    requires not getting Guarantee Credit as well as the bullets; "if you're 16 or over and you:"
    requires being 16 or over; "If your profit is below the minimum wage, the office may ask you to
    provide:" and "The following benefits can be stopped if you commit benefit fraud:" state a whole
    condition before or after what the list is about. A lead-in that only introduces its items ("if
    you:", "if you're getting:", "if both the following apply:") states none, nor does one that lists
    disqualifiers.
    """
    texts, kind = _lead_clauses(lead_in)
    return [_condition(text, kind, passage_id, "all") for text in texts]


def _lead_clauses(lead_in: str) -> tuple[list[str], str]:
    """The texts of the conditions a lead-in states besides its list, and their kind (``lead_conditions``)."""
    main = straight_quotes(lead_in).rstrip().rstrip(":").rstrip()
    if list_logic(lead_in, [])[0] == "disqualifier":
        return [], ""
    joined = own_condition_join(main)
    clause = _condition_clause(main[:joined.start()]) if joined is not None else _whole_condition(main)
    if clause is None:
        return [], ""
    text, kind = clause
    parts = [p.strip(" ,") for p in CLAUSE_LIST.split(text)] if CLAUSE_START.match(text) else [text]
    return [p for p in parts if len(p.split()) >= 2], kind


# What a conditional clause says when it introduces the list rather than stating a condition of its own.
LIST_REFERENCE = re.compile(r"\b(?:following|these|those|either|both)\b|\b(?:any|one|all|each) of\b", re.I)
# Words a clause cannot end on when it is whole: the list completes it ("… for the first time since:").
UNFINISHED = frozenset("you they we he she since after before because than about into under over like".split())
# A clause with a verb: an auxiliary or a copula, or a pronoun subject and the word after it ("you commit …").
FINITE = re.compile(r"\b(?:is|are|was|were|be|been|has|have|had|do|does|did|can|could|will|would|may|might|must|shall|"
                    r"should)\b|'(?:re|ve|s|m|d|ll)\b", re.I)
PRONOUN_SUBJECT = re.compile(r"(?:you|they|we|he|she|it|i)\s+\w+", re.I)
# "To determine if you are eligible we examine:": "if" as "whether", a question, not a condition.
WHETHER = re.compile(r"\b(?:determine|check|see|know|ask|find out|decide|tell|whether)\s+if\b", re.I)


def _whole_condition(lead: str) -> tuple[str, str] | None:
    """(text, kind) of a lead-in's conditional clause when it is whole, not the start of the list's
    items: "If you exceed a claiming limit, you can submit your claim:" or "… if you commit benefit
    fraud:", not "… if you:" or "… if you work for a:". A leading clause that goes on to introduce
    the list ("If you commit fraud and you get any of the following, …") keeps the part before it."""
    clause = _condition_clause(lead)
    if clause is None or not IF_CLAUSE.search(lead) or WHETHER.search(lead):
        return None
    text, kind = clause
    introduces = own_condition_join(text)
    if introduces is not None:
        text = text[:introduces.start()].rstrip(" ,")
    words = text.split()
    if len(words) <= 3 and ELIGIBILITY.search(text):
        return None  # "… if you're eligible:" restates the question, it names nothing to check
    if len(words) < 2 or LIST_REFERENCE.search(text) or words[-1].lower() in OPEN_LEAD_END | UNFINISHED \
            or voice.known_verb(words[-1].lower()):
        return None
    if not (FINITE.search(text) or PRONOUN_SUBJECT.match(text) or any(voice.known_verb(w) for w in words[1:])):
        return None  # "… if your baby:" names a subject whose predicates are the items
    return text, kind


def _list_item(text: str) -> str:
    """A bullet's condition: without its marker, its closing "and" / "or" and any carve-out."""
    item = strip_list_marker(text).rstrip(" ;,.")
    return without_carve_out(ITEM_JOINER.sub("", item).strip())


def list_logic(lead_in: str, items: list[str]) -> tuple[str, str]:
    """(kind, group) of a bulleted list's items, read from its lead-in and the items' endings.

    - "must wear a seat belt unless:", "You cannot claim if you:" — each item is a disqualifier
      (kind ``disqualifier``): every one must not hold, so they form an "all" group of negations;
    - "any of the following", "one of", "either", or items ending in "or" — one item is enough ("any");
    - "all of the following", "both of", items ending in "and", a lead-in that requires them
      ("You must:", "you must meet the following requirements:"; no "if" in it), or items that each
      require ("To qualify: * you must live in England … * you must have reached …") — every item is
      needed ("all"): "must" distributes over the items, "must A, B" is "must A and must B";
    - otherwise "unclear": "You can get it if you:" says neither. ``combine`` reads such a list as
      alternatives: on the ShARC train trees, read as "all", 113 questions that still had a follow-up
      to ask were answered "no", and of the 121 questions where one of its items held, 80 were
      answered "yes" (11 "no", 30 still had a follow-up to ask).
    """
    main = lead_in.split(":")[0]
    if EXCEPTION_CUE.search(main) or NEGATIVE_MAIN.search(_item_scope(main)):
        return "disqualifier", "all"
    joiners = [m.group(1).lower() for raw in items[:-1] if (m := ITEM_JOINER.search(strip_list_marker(raw).rstrip(" .")))]
    if ANY_CUE.search(main) or (joiners and joiners[-1] == "or"):
        return "bullet", "any"
    if (joiners and joiners[-1] == "and") or ALL_CUE.search(main) or (REQUIREMENT.search(main) and not IF_CLAUSE.search(main)) \
            or (len(items) > 1 and all(REQUIREMENT.search(strip_list_marker(raw)) for raw in items)):
        return "bullet", "all"
    return "bullet", "unclear"


def _item_scope(lead: str) -> str:
    """The words of a lead-in that bear on its items: all of it, less the lead-in's own condition where
    one is joined to the list or opens it. A negation there says who the rule is for ("You may be able to
    apply … if you don't get Pension Credit but:", "If you won't be living in the UK during the qualifying
    week, you might still get the payment if both the following apply:"), not that the items disqualify
    ("You cannot claim if you:", "You can claim if you don't have:")."""
    joined = own_condition_join(lead)
    if joined is None:
        head = lead.split(":")[0]
        return _leading_clause(head)[1] if LEADING_CONDITION.match(head) and "," in head else lead
    head = lead[:joined.start()]
    match = IF_CLAUSE.search(head)
    return (head[:match.start()] if match else head) + " " + joined.group("rest")


INLINE_LIST = re.compile(r":\s+(.+)$")
PREDICATE_START = frozenset("you you're your be are is have has not can can't cannot must".split())


# What opens an item that says how or for what rather than naming a thing ("for work done while in prison").
ITEM_PREPOSITION = frozenset("for as with without in on to by from at of".split())
# Where an item's name ends and an aside about it starts ("leather goods - for example, handbags").
ITEM_ASIDE = re.compile(r"\s+[-–—(]\s*|,?\s+(?:for example|such as|including)\b")


def _lead_sentence(text: str) -> bool:
    """A sentence, not a heading, that ends in a colon: what a list's items complete."""
    return text.rstrip().endswith(":") and not text.startswith("#")


def _things_listed(lead: str, items: list[str]) -> bool:
    """Two or more things (short noun phrases) listed under a lead-in sentence that names no condition:
    "The banned luxury goods for North Korea are: * high quality cigars …", "benefits including: *
    Attendance Allowance …". A question about one of them ("Can I export this product?") turns on which
    it is, so each is a condition ("It is high quality cigars."), one of an unmarked list that ``combine``
    reads as alternatives unless the items' endings say otherwise. Under a heading a
    list of names states no rule ("### Sanctionable benefits"), and a long item is a clause or a party's
    description, not a thing named."""
    names = [ITEM_ASIDE.split(_list_item(raw))[0] for raw in items]
    return _lead_sentence(lead) and len(names) >= 2 and \
        all(0 < len(n.split()) <= 10 and n.split()[0].lower() not in ITEM_PREPOSITION for n in names)


def _predicate_like(item: str) -> bool:
    """The item starts as a predicate or a clause ("have income under the limits", "you're over
    18", "not already have …"), not as a bare noun phrase ("Income Support")."""
    first = straight_quotes(item.split()[0].lower().strip(",;:"))
    return first in PREDICATE_START or voice.known_verb(first) or \
        first in ("live", "earn", "get", "own", "rent", "work", "meet", "care", "receive")


def without_carve_out(text: str) -> str:
    """A requirement without its exception: "be 18 or over, unless you are a care leaver" → "be 18
    or over". The exception waives the requirement for some people; it is not itself required."""
    m = CARVE_OUT.search(text)
    return text[:m.start()].rstrip(" ,;—-") if m and m.start() > 0 else text


def _condition_clause(sentence: str) -> tuple[str, str] | None:
    """(condition text, kind) for a sentence that imposes a condition, else None.

    "unless" reads by its main clause: "You cannot claim unless X" requires X; "You can get it
    unless X" excludes X (a disqualifier); "You must be 18, unless X" requires being 18, with X
    an exception; "It is paid to your landlord unless you ask" is about payment, not eligibility.
    """
    if sentence.endswith("?"):
        return None
    relative = RELATIVE_RULE.match(sentence)
    if relative and not IF_CLAUSE.search(relative["clause"]):
        return voice.addressed(f"{relative['rel']} {relative['clause']}").rstrip(" ,;."), "if"
    if not CONDITION_CUE.search(sentence):
        return None
    match = IF_CLAUSE.search(sentence)
    if match:
        cue = match.group(1).lower()
        clause, main = match.group(2), sentence[: match.start()]
        if (opening := _opening_clause(match)) is not None:
            clause, main = opening
        elif not main.strip(" \"'(") and (start := MAIN_CLAUSE_START.search(clause)):
            # "If you don't have access to HPOS you'll need a certificate": no comma, the main clause
            # starts at its subject and modal
            clause, main = clause[:start.start()], clause[start.start():]
        clause = without_carve_out(clause.rstrip(" .;"))
        if ELLIPTICAL.search(clause) or ANAPHORIC.search(clause.strip()):
            return None  # "If you don't, contact the centre", "If this happens, …": it points back, it states nothing
        if cue == "unless":
            if NEGATIVE_MAIN.search(main):
                return clause, "unless"  # "You cannot claim unless X": X is required
            if REQUIREMENT.search(main):
                return main.rstrip(" ,;—-"), "requirement"
            if ELIGIBILITY.search(main):
                return clause, "disqualifier"
            return None
        if NEGATIVE_MAIN.search(main):
            return clause, "disqualifier"  # "You cannot claim if X": X must not hold
        return clause, "only_if" if cue == "only if" else "if"
    if any(not (SUBORDINATE_REQUIREMENT.search(sentence[:m.start()]) or DEFINITION.match(sentence[:m.start()]))
           for m in REQUIREMENT.finditer(sentence)) or \
            re.search(r"\beligible\b", sentence, re.I):
        sentence = without_carve_out(sentence)
        if NEGATIVE_MAIN.search(sentence) or re.search(r"\bmust not\b", sentence, re.I) or EXEMPTION.search(sentence):
            return None  # prohibitions on conduct are not eligibility conditions, exemptions impose none
        return sentence.rstrip(" ."), "requirement"
    return None


# What starts a main clause after a leading if-clause's comma: a pronoun subject, or a short noun phrase and
# its verb ("your estate can claim", "the payment is made").
MAIN_AFTER_COMMA = re.compile(r"^\s*(?:(?:you|we|they|it|he|she|there)\b|(?:your|their|his|her|its|the|this|that|an?)\s+"
                              r"(?:[\w'-]+\s+){0,3}?(?:will|won't|can|can't|cannot|could|must|may|might|need to|needs to|"
                              r"should|have to|has to|would|is|are|gets?)\b)", re.I)


# "Employees whose baby is due … may be entitled to", "Apprentices who have completed the first year are
# entitled to": a rule for the people a relative clause picks out.
RELATIVE_RULE = re.compile(r"^(?:[\w'-]+\s+){1,6}?(?P<rel>who|whose)\s+(?P<clause>.+?)\s+(?:may|can|could|will|are|is)\s+"
                           r"(?:also\s+|usually\s+|still\s+|only\s+)?(?:be\s+)?(?:eligible|entitled|able to|qualify|get|"
                           r"claim|apply)\b", re.I)


def _opening_clause(match: re.Match) -> tuple[str, str] | None:
    """(condition, main clause) when the conditional clause ``match`` (of ``IF_CLAUSE``) opens its sentence
    and a comma ends it ("If you're over 65, you can claim": the rest is the main clause); None otherwise."""
    if match.string[:match.start()].strip(" \"'(") or "," not in match.group(2):
        return None
    return _leading_clause(match.group(2))


def _leading_clause(text: str) -> tuple[str, str]:
    """(condition, main clause) of "<condition>, <main clause>": the first comma a main clause follows,
    so that a list inside the condition stays in it ("If you're single, divorced or your civil partnership
    was dissolved and you die …, your estate can claim"); the first comma when none does."""
    for comma in re.finditer(",", text):
        if MAIN_AFTER_COMMA.match(text[comma.end():]):
            return text[:comma.start()], text[comma.end():]
    head, rest = text.split(",", 1)
    return head, rest


def _condition(text: str, kind: str, passage_id: str, group: str, lead: str = "") -> Condition:
    return Condition(text=text, user_voice=voice.to_user_voice(text, object_lead(text, lead)), kind=kind,
                     passage_id=passage_id, group=group, lead=lead)


# The words a lead-in stops on when its items are its objects: "if you're getting:", "if you work for a:".
OPEN_LEAD_END = frozenset("a an the of for in on to with from by as at be are is you're getting get receive receiving "
                          "claim claiming".split())
# "… if you meet all of the following conditions:": the items are the conditions met, whatever their first word
# ("place the brown bin at the kerb" had been asked as "Do you meet place the brown bin …?").
MEETS = frozenset({"meet", "satisfy", "fulfil", "fulfill"})
# "… any of the following:", "one of these:" — what the items stand in for, dropped before the items join.
LEAD_PLACEHOLDER = re.compile(r"\s*\b(?:(?:any|one|all|each|either|both|some)\s+(?:of\s+)?)?(?:the following|these|those)"
                              r"(?:\s+\w+)?\s*$", re.I)


def object_lead(item: str, lead: str) -> str:
    """The lead-in a bare noun-phrase item is the object of, as ``voice.to_user_voice`` joins it
    ("You may get it if you're getting:" + "Universal Credit" → "I'm getting Universal Credit"), or ""
    when the item reads alone: a predicate ("have a child under 5"), or a lead-in that does not stop
    on a verb or preposition (under "… and one of the following apply:" the items are clauses). A lead-in's
    own condition (``lead_conditions``) is a condition apart, not part of each item: "… if you can only get
    certain limited benefits and you're working for a:" + "charity" → "I'm working for a charity" (NLI
    could not find the whole conjunction in "I work for a non-profit voluntary organization")."""
    if not lead or not item.split() or _predicate_like(item):
        return ""
    main = LEAD_PLACEHOLDER.sub("", straight_quotes(lead).split(":")[0]).strip(" ,")
    words = main.split()
    if not words or not IF_CLAUSE.search(main):
        return ""
    last = words[-1].lower()
    if last in MEETS or last not in OPEN_LEAD_END and not voice.known_verb(last):
        return ""
    joined = own_condition_join(main)
    own_list = joined.group("rest").strip() if joined is not None else ""
    return f"if {own_list}:" if own_list and _lead_clauses(main)[0] else f"{main}:"


ALTERNATIVES = ("any", "unclear")  # groups one established item meets (see ``list_logic``)


def _alternative_group(c: Condition) -> tuple[str, str, str]:
    """An any/unclear list is one passage's and one lead-in's: the same word in another section, or
    under another lead-in, is another list."""
    return c.passage_id, c.group, c.lead


def met_alternatives(conditions) -> set[tuple[str, str, str]]:
    """The any/unclear lists (``_alternative_group``) one of whose items is established: each is decided."""
    return {_alternative_group(c) for c in conditions if c.group in ALTERNATIVES and c.status == "established"}


def still_open(conditions) -> list[Condition]:
    """Missing conditions that can still change the outcome (an "any" or "unclear" group already met
    needs no more, see ``combine``)."""
    met = met_alternatives(conditions)
    return [c for c in conditions if c.status == "missing" and _alternative_group(c) not in met]


def combine(conditions: list[Condition] | tuple[Condition, ...]) -> str:
    """satisfied | failed | undetermined for the conditions of a passage (and of the section an
    established one heads, ``section_conditions``).

    "all" conditions fail if any is contradicted; an "any" group is satisfied by one
    established item and fails only when every item is contradicted, and so is an "unclear" list
    (no word says which; see ``list_logic``).
    """
    if not conditions:
        return "none"
    all_group = [c for c in conditions if c.group == "all"]
    alternatives: dict[tuple[str, str], list[Condition]] = {}
    for c in conditions:
        if c.group in ALTERNATIVES:
            alternatives.setdefault(_alternative_group(c), []).append(c)
    if any(c.status == "contradicted" for c in all_group) or \
            any(all(c.status == "contradicted" for c in group) for group in alternatives.values()):
        return "failed"
    all_ok = all(c.status == "established" for c in all_group)
    alternatives_ok = set(alternatives) <= met_alternatives(conditions)
    return "satisfied" if all_ok and alternatives_ok else "undetermined"


def all_required_met(conditions: Sequence[Condition]) -> bool:
    """Every condition is required (none an alternative of another) and established by a fact that speaks to
    it: the rule's positive outcome on the user's word. "satisfied" (``combine``) also covers an alternative
    met while others around it stay open or contradicted, which on ShARC train was as often ASK as ANSWER on
    a first turn; every condition required and established was ANSWER 15 times in 18 (train KB 5 in 5). A
    condition only NLI established from facts sharing no word with it (``UNRELATED_NLI``: "I am curious about
    health care" for "you are a female Vietnam Veteran with a child who has a birth defect") is too weak."""
    return bool(conditions) and all(c.group == "all" and c.status == "established" and c.method != UNRELATED_NLI
                                    for c in conditions)


def section_conditions(conditions: Sequence[Condition], passages: Sequence[Passage]) -> list[Condition]:
    """The conditions of the section an established condition heads: "You may get it if you're
    getting: * Pension Credit * Universal Credit" and the user gets Universal Credit, and another
    passage of the document, headed "Universal Credit", says what else that route needs ("you're
    not employed or self-employed and one of the following apply: …"). The first such section only."""
    read = {c.passage_id for c in conditions}
    for c in conditions:
        if c.status != "established":
            continue
        wanted = normalized(strip_list_marker(c.text))
        for p in passages:
            if p.id not in read and any(normalized(h) == wanted for h in heading_texts(p.sentences)):
                return extract_conditions(p)
    return []
