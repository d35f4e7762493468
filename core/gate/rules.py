"""The three-action gate: a pure function of the trace's signals and the thresholds.

The rules on by default read calibrated probabilities (``core.calibrated``, fitted on training
data): the topic is absent, several documents could be meant, a condition failed, a condition is
open, the fact is absent. The older rules over raw signals stay in the table, switchable, after seed 002 v3 §5.3 (conflict → ASK; Amb → ASK; low Conf and
low Coverage → ABSTAIN), seed 004 layer 1 (a weak best score, or flat weak scores → ABSTAIN),
seed 003 (topics the evidence leaves uncovered → ABSTAIN),
seed 002 Eq. 21 (missing variables → ASK) and seed 000 (insufficient evidence →
ABSTAIN). The first enabled rule whose comparisons all hold decides; if none
does, ANSWER. Every rule is evaluated and returned, so the UI can show each
comparison with its numbers. No model is called here.

Three deliberate choices of order: a question that refers by a common noun to a thing several documents
each say everything about is asked which it means first, before the topic rules refuse it for matching
nothing well; ambiguity is checked before the retrieval rules — a
question with a dangling pronoun ("Is he still alive?") retrieves nothing because it
names nothing; asking what it refers to is the useful action, not abstaining — while
several referents are checked last: asking which of two documents is meant presupposes
that the knowledge base holds the answer and only the document is in doubt ("How do I
renew my driving licence?" matches two NDAs equally, and neither says anything about it).
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Iterable, Mapping, Sequence

from core.types import Comparison, Decision, RuleResult, Signals

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt, ">": operator.gt, ">=": operator.ge, "<=": operator.le, "==": operator.eq}


def compare(signal: str, value: float, op: str, threshold: float) -> Comparison:
    """One reported comparison ``value op threshold`` (the only place an operator is applied)."""
    if op not in OPERATORS:
        raise ValueError(f"unknown comparison operator {op!r}; use one of {', '.join(OPERATORS)}")
    holds = OPERATORS[op](float(value), float(threshold))
    return Comparison(signal=signal, op=op, value=float(value), threshold=float(threshold), holds=bool(holds))


def places_to_tell(value: float, threshold: float, places: int = 3, most: int = 6) -> int:
    """How many decimal places show ``value`` and ``threshold`` apart: ``places``, or more up to ``most`` where
    rounding would make them look equal ("p_fact 0.98 < 0.98" is "p_fact 0.9795 < 0.9800"); ``places`` where they
    are equal."""
    wanted = places
    while wanted < most and value != threshold and round(value, wanted) == round(threshold, wanted):
        wanted += 1
    return wanted


def comparison_text(c: Comparison, places: int = 3, verdict: bool = True) -> str:
    """One comparison as it is printed, "p_fact 0.310 < 0.660 ✓": in the gate trace and the CLI with whether it
    held, in a refusal's reply with two places and no mark; more places where those would show two different
    numbers alike (``places_to_tell``)."""
    places = places_to_tell(c.value, c.threshold, places)
    text = f"{c.signal} {c.value:.{places}f} {c.op} {c.threshold:.{places}f}"
    return f"{text} {'✓' if c.holds else '✗'}" if verdict else text


_cmp = compare  # the rule table below reads best with a short name


def _fact_bar(s: Signals, t: Mapping[str, Any]) -> float:
    """The P(fact stated) a claim must reach: a statement to check has its own bar."""
    statement_bar, question_bar = t["statement_fact_min"], t["fact_min"]  # both looked up: both are searched
    return statement_bar if s.statement else question_bar


# Each rule: (name, action, comparisons(signals, thresholds), explanation).
Rule = tuple[str, str, Callable[[Signals, Mapping[str, Any]], list[Comparison]], str]

RULES: tuple[Rule, ...] = (
    ("described_referents", "ASK",
     lambda s, t: [_cmp("described", s.n_described, ">=", t["referents_min"])],
     "The question names nothing and refers to a thing by a common noun (\"When was the ship launched?\"); "
     "several documents each say everything it says of that thing: ask which is meant. (First: such a "
     "question matches nothing well, so the topic rules would refuse it although the knowledge base holds "
     "the answer for each reading.)"),
    ("topic_absent", "ABSTAIN",
     lambda s, t: [_cmp("p_topic", s.p_topic, "<", t["topic_min"]),
                   _cmp("dangling_pronoun", s.ambiguity_heuristics.get("dangling_pronoun", 0.0), "<", 1),
                   _cmp("follow_ups_answered", s.follow_ups_answered, "==", 0)],
     "The knowledge base is not about what the question asks (calibrated P(topic covered) is low). A question "
     "that names nothing and refers by a pronoun to something the user has not said (\"How long did it last?\") "
     "has no topic to look up: the ambiguity rule asks what it refers to. Nor once the user has answered "
     "follow-ups: they were asked about a rule found for this question, so its topic is there."),
    ("conflict_nli", "ASK",
     lambda s, t: [_cmp("nli_conflict", s.nli_conflict, ">", t["nli_conflict_max"])],
     "Two top passages contradict each other: ask which case applies."),
    ("conflict_topic", "ASK",
     lambda s, t: [_cmp("topic_spread", s.topic_spread, ">", t["conflict_max"])],
     "The top passages are about different things: ask which one is meant."),
    ("ambiguity", "ASK",
     lambda s, t: [_cmp("ambiguity", s.ambiguity, ">", t["amb_max"]),
                   _cmp("conditions_read", s.n_conditions, "==", 0),
                   _cmp("follow_ups_answered", s.follow_ups_answered, "==", 0)],
     "The question is underspecified and the evidence sets no conditions that would pin it down: ask what "
     "it refers to. (A passage of eligibility conditions has already resolved a vague \"Can I get this?\" to "
     "its rule; what the user has not told is then asked by the missing-variables rule.)"),
    ("low_confidence", "ABSTAIN",
     lambda s, t: [_cmp("confidence", s.confidence, "<", t["conf_abstain"])],
     "The best passage barely matches the question (seed 004 layer 1): the topic is absent."),
    ("low_retrieval", "ABSTAIN",
     lambda s, t: [_cmp("confidence", s.confidence, "<", t["conf_min"]),
                   _cmp("coverage", s.coverage, "<", t["coverage_min"])],
     "Nothing in the knowledge base matches the question: the topic is absent."),
    ("score_gap", "ABSTAIN",
     lambda s, t: [_cmp("confidence", s.confidence, "<", t["gap_conf_max"]),
                   _cmp("score_gap", s.score_gap, "<", t["gap_min"]),
                   _cmp("has_scenario", s.has_scenario, "==", 0),
                   _cmp("statement", s.statement, "==", 0)],
     "Weak retrieval with no clear best passage: an uncertain match. (Not for a question told with a scenario: "
     "\"Is that allowed?\" matches nothing by its own words, and P(topic covered) reads retrieval with the "
     "scenario. Nor for a statement to check: a contract's clauses all match \"Receiving Party shall not …\" "
     "alike, and whether a sentence settles it is P(fact stated)'s call at its statement bar.)"),
    ("kg_empty", "ABSTAIN",
     lambda s, t: [_cmp("kg_matched", s.kg_matched, "==", 0)],
     "No entity of the question is in the knowledge graph: the topic is unrecoverable."),
    ("conditions_failed", "ANSWER",
     lambda s, t: [_cmp("conditions_contradicted", s.n_contradicted, ">", 0),
                   _cmp("outcome_failed", float(s.condition_outcome == "failed"), "==", 1)],
     "The user's facts contradict a required condition: answer with the rule's negative outcome."),
    ("conditions_met", "ANSWER",
     lambda s, t: [_cmp("conditions_met", s.conditions_met, "==", 1),
                   _cmp("yes_no", s.yes_no, "==", 1)],
     "The rule's conditions are all required and the user's facts establish every one: answer a yes/no question "
     "with its positive outcome. (Before condition_open: P(condition open) is fitted on ShARC, where a first turn "
     "is mostly asked about, and reads a question that settles a whole rule as one more first turn. A question "
     "for a value is not answered \"yes\".)"),
    ("value_by_age", "ASK",
     lambda s, t: [_cmp("age_bands", s.n_age_bands, ">=", 2), _cmp("age_told", s.age_told, "==", 0)],
     "The asker's own question asks for an amount or a length of time that the top document gives by age (\"£71.70 "
     "for people aged under 25 and £90.50 for people aged 25 or over\"), and the asker has given no age: ask it. "
     "(Before the answer-type rule: neither band's value alone is the answer, yet the evidence holds it.)"),
    ("answer_type", "ABSTAIN",
     lambda s, t: [_cmp("answer_type_found", s.answer_type_found, "<", 1),
                   _cmp("premise_supported", s.premise_supported, "==", 0),
                   _cmp("age_bands", s.n_age_bands, "<", 2)],
     "The question asks for a value of a kind (date, amount, person, place) the evidence does not contain, or "
     "asks how to do something no sentence says how to do. (Not an amount the evidence gives by age: the told "
     "age picks it.) "
     "(Before the condition rules: a value the evidence does not hold cannot be given however the user's "
     "conditions are settled.)"),
    ("unknown_name", "ABSTAIN",
     lambda s, t: [_cmp("unknown_names", s.n_unknown_names, ">=", 1)],
     "The question asks for a fact about something it calls by a name of two words or more (\"Who wrote the "
     "music for Twilight Kondo?\") that no retrieved passage mentions: nothing retrieved can state a fact about "
     "it. (Wh-questions not about the asker only: a contract's or a rule text's own wording often names the "
     "parties and schemes otherwise.)"),
    ("value_of_another", "ABSTAIN",
     lambda s, t: [_cmp("rivalled_names", s.n_rivalled_names, ">=", 1)],
     "The value the answer would give is said of another thing: its sentence names a rival of a name the "
     "question gives, the same head word with other words (\"How much is Maternity Allowance a week?\" answered "
     "from \"Carer's Allowance is £81.90 a week\"). (SQuAD train: all 8 such questions are unanswerable.)"),
    ("condition_open", "ASK",
     lambda s, t: [_cmp("p_open", s.p_open, ">", t["open_max"]),
                   _cmp("yes_no", s.yes_no, "==", 1)],
     "A condition the answer depends on is probably not settled by what the user said: ask about it. (A "
     "yes/no question only: P(condition open) was fitted on rule questions answered yes or no, and on a "
     "question for a value it reads what it learnt of those; such a question is asked about a condition the "
     "reader found unsettled, by the missing-variables rule.)"),
    ("missing_variables", "ASK",
     lambda s, t: [_cmp("incompleteness", s.incompleteness, ">", t["incompleteness_max"])],
     "A condition the answer depends on is not established: ask the user about it."),
    ("kg_var", "ASK",
     lambda s, t: [_cmp("kg_has_var", s.kg_has_var, "==", 1)],
     "A missing variable is anchored in the knowledge graph: it can be asked for."),
    ("fact_absent", "ABSTAIN",
     lambda s, t: [_cmp("p_fact", s.p_fact, "<", _fact_bar(s, t))],
     "The topic is covered but the asked fact is probably not stated: calibrated P(fact stated) is below its bar. "
     "(The bar is fact_min for a question, statement_fact_min for a statement to check.)"),
    ("uncovered_topics", "ABSTAIN",
     lambda s, t: [_cmp("evidence_coverage", s.evidence_coverage, "<", t["evidence_coverage_min"]),
                   _cmp("outcome_decided", float(s.condition_outcome in ("satisfied", "failed")), "==", 0),
                   _cmp("premise_supported", s.premise_supported, "==", 0),
                   _cmp("follow_ups_answered", s.follow_ups_answered, "==", 0),
                   _cmp("p_depends", s.p_depends, ">=", t["depends_min"])],
     "The evidence covers the question's entities but not what it asks about: the needed fact is not there. "
     "(With depends_min above 0 it judges only a question whose answer turns on the asker's circumstances, for "
     "which P(fact stated) is the rule's, and leaves any other to the calibrated P(fact stated).)"),
    ("low_sufficiency", "ABSTAIN",
     lambda s, t: [_cmp("sufficiency", s.sufficiency, "<", t["sufficiency_min"]),
                   _cmp("outcome_satisfied", float(s.condition_outcome == "satisfied"), "==", 0),
                   _cmp("premise_supported", s.premise_supported, "==", 0)],
     "The evidence does not entail the claim: the topic is present but the needed fact is not."),
    ("several_referents", "ASK",
     lambda s, t: [_cmp("referents", s.n_referents, ">=", t["referents_min"])],
     "Several documents match the question equally and it names nothing that tells them apart, or the top document "
     "names several things of the kind the question refers to by that kind alone (\"the Pale Lanterns album\" of "
     "a band with three): ask which is meant."),
)
RULE_NAMES = tuple(r[0] for r in RULES)

# What an ABSTAIN rule found, declared once for the refusal's text (core.agents) and its card
# (components.action): the topic absent from the knowledge base, or the topic there and the asked
# fact not (the answer checks too: they withhold an answer its sources do not support).
TOPIC_ABSENT_RULES = frozenset({"no_passages", "topic_absent", "low_confidence", "low_retrieval", "score_gap",
                                "kg_empty"})
FACT_ABSENT_RULES = frozenset({"fact_absent", "uncovered_topics", "answer_type", "unknown_name", "value_of_another",
                               "low_sufficiency", "answer_grounding", "hedging"})


def first_that_fires(candidates: Iterable[tuple[str, str, Sequence[Comparison], str, bool]],
                     values: Mapping[str, Any], decided: RuleResult | None = None,
                     ) -> tuple[tuple[RuleResult, ...], RuleResult | None]:
    """Every candidate rule (name, action, comparisons, explanation, holds) evaluated in priority
    order, and the first enabled one that holds (None if none does; ``decided`` if something
    already decided, in which case none fires). A rule is enabled by its ``rule_<name>`` setting.
    The gate and the answer-level checks both decide through this loop."""
    results: list[RuleResult] = []
    for name, action, comparisons, explanation, holds in candidates:
        enabled = bool(values[f"rule_{name}"])
        result = RuleResult(name, action, enabled, enabled and decided is None and bool(holds),
                            tuple(comparisons), explanation)
        results.append(result)
        if result.fired:
            decided = result
    return tuple(results), decided


def decide_signals(signals: Signals, values: Mapping[str, Any], has_passages: bool = True) -> Decision:
    """The rule gate on bare signals (what batch re-gating over cached traces replays)."""
    leading: tuple[RuleResult, ...] = ()
    if not has_passages:
        leading = (RuleResult("no_passages", "ABSTAIN", True, True, (),
                              "The knowledge base returned no passages for this question."),)

    def candidates():
        for name, action, comparisons, explanation in RULES:
            found = tuple(comparisons(signals, values))
            yield name, action, found, explanation, all(c.holds for c in found)
    results, decided = first_that_fires(candidates(), values, leading[0] if leading else None)
    if decided is None:
        decided = RuleResult("default_answer", "ANSWER", True, True, (),
                             "No rule objected: the evidence supports an answer.")
        results += (decided,)
    return Decision(action=decided.action, rule=decided.name, reason=decided.explanation,
                    rules=leading + results,
                    answer_polarity=answer_polarity(decided.action, signals.condition_outcome))


def answer_polarity(action: str, condition_outcome: str) -> str:
    """The yes/no an ANSWER gives when the user's conditions decide it ("" otherwise)."""
    if action != "ANSWER":
        return ""
    return {"satisfied": "yes", "failed": "no"}.get(condition_outcome, "")
