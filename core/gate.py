"""The three-action gate: a pure function of the trace's signals and the thresholds.

Rules in priority order, after seed 002 v3 §5.3 (conflict → ASK; Amb → ASK; low Conf and
low Coverage → ABSTAIN), seed 004 layer 1 (a weak best score, or flat weak scores → ABSTAIN),
seed 003 (topics the evidence leaves uncovered → ABSTAIN),
seed 002 Eq. 21 (missing variables → ASK) and seed 000 (insufficient evidence →
ABSTAIN). The first enabled rule whose comparisons all hold decides; if none
does, ANSWER. Every rule is evaluated and returned, so the UI can show each
comparison with its numbers. No model is called here.

One deliberate change of order: ambiguity is checked before the retrieval rules. A
question with a dangling pronoun ("Is he still alive?") retrieves nothing because it
names nothing; asking what it refers to is the useful action, not abstaining.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from core import settings as settings_mod
from core.types import Comparison, Decision, RuleResult, Signals, Trace


def _cmp(signal: str, value: float, op: str, threshold: float) -> Comparison:
    holds = {"<": value < threshold, ">": value > threshold, ">=": value >= threshold,
             "<=": value <= threshold, "==": value == threshold}[op]
    return Comparison(signal=signal, op=op, value=float(value), threshold=float(threshold), holds=bool(holds))


# Each rule: (name, action, comparisons(signals, thresholds), explanation).
Rule = tuple[str, str, Callable[[Signals, Mapping[str, Any]], list[Comparison]], str]

RULES: tuple[Rule, ...] = (
    ("conflict_nli", "ASK",
     lambda s, t: [_cmp("nli_conflict", s.nli_conflict, ">", t["nli_conflict_max"])],
     "Two top passages contradict each other: ask which case applies."),
    ("conflict_topic", "ASK",
     lambda s, t: [_cmp("topic_spread", s.topic_spread, ">", t["conflict_max"])],
     "The top passages are about different things: ask which one is meant."),
    ("ambiguity", "ASK",
     lambda s, t: [_cmp("ambiguity", s.ambiguity, ">", t["amb_max"]),
                   _cmp("conditions_read", s.n_conditions, "==", 0)],
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
                   _cmp("score_gap", s.score_gap, "<", t["gap_min"])],
     "Weak retrieval with no clear best passage: an uncertain match."),
    ("kg_empty", "ABSTAIN",
     lambda s, t: [_cmp("kg_matched", s.kg_matched, "==", 0)],
     "No entity of the question is in the knowledge graph: the topic is unrecoverable."),
    ("conditions_failed", "ANSWER",
     lambda s, t: [_cmp("conditions_contradicted", s.n_contradicted, ">", 0),
                   _cmp("outcome_failed", float(s.condition_outcome == "failed"), "==", 1)],
     "The user's facts contradict a required condition: answer with the rule's negative outcome."),
    ("missing_variables", "ASK",
     lambda s, t: [_cmp("incompleteness", s.incompleteness, ">", t["incompleteness_max"])],
     "A condition the answer depends on is not established: ask the user about it."),
    ("kg_var", "ASK",
     lambda s, t: [_cmp("kg_has_var", s.kg_has_var, "==", 1)],
     "A missing variable is anchored in the knowledge graph: it can be asked for."),
    ("uncovered_topics", "ABSTAIN",
     lambda s, t: [_cmp("evidence_coverage", s.evidence_coverage, "<", t["evidence_coverage_min"]),
                   _cmp("outcome_decided", float(s.condition_outcome in ("satisfied", "failed")), "==", 0),
                   _cmp("premise_supported", s.premise_supported, "==", 0)],
     "The evidence covers the question's entities but not what it asks about: the needed fact is not there."),
    ("answer_type", "ABSTAIN",
     lambda s, t: [_cmp("answer_type_found", s.answer_type_found, "<", 1),
                   _cmp("premise_supported", s.premise_supported, "==", 0)],
     "The question asks for a value of a kind (date, amount, person, place) the evidence does not contain."),
    ("low_sufficiency", "ABSTAIN",
     lambda s, t: [_cmp("sufficiency", s.sufficiency, "<", t["sufficiency_min"]),
                   _cmp("outcome_satisfied", float(s.condition_outcome == "satisfied"), "==", 0),
                   _cmp("premise_supported", s.premise_supported, "==", 0)],
     "The evidence does not entail the claim: the topic is present but the needed fact is not."),
)
RULE_NAMES = tuple(r[0] for r in RULES)


def decide(trace: Trace, thresholds: Mapping[str, Any] | None = None) -> Decision:
    """ANSWER / ASK / ABSTAIN for a trace; ``thresholds`` override the declared defaults. With
    ``gate_model=learned`` the learned gate decides and the rules are reported as they evaluated."""
    values = settings_mod.resolve(thresholds)
    decision = decide_signals(trace.signals, values, has_passages=bool(trace.passages))
    if values["gate_model"] == "learned":
        from core.evaluation.learned_gate import load_cached
        return load_cached(values["learned_gate_file"]).as_decision(trace, decision, values["learned_gate_file"])
    return decision


def decide_signals(signals: Signals, values: Mapping[str, Any], has_passages: bool = True) -> Decision:
    """The gate on bare signals (what batch re-gating over cached traces calls)."""
    results: list[RuleResult] = []
    decided: RuleResult | None = None
    if not has_passages:
        decided = RuleResult("no_passages", "ABSTAIN", True, True, (),
                             "The knowledge base returned no passages for this question.")
        results.append(decided)
    for name, action, compare, explanation in RULES:
        enabled = bool(values[f"rule_{name}"])
        comparisons = tuple(compare(signals, values))
        fires = enabled and decided is None and all(c.holds for c in comparisons)
        result = RuleResult(name, action, enabled, fires, comparisons, explanation)
        results.append(result)
        if fires:
            decided = result
    if decided is None:
        decided = RuleResult("default_answer", "ANSWER", True, True, (),
                             "No rule objected: the evidence supports an answer.")
        results.append(decided)
    return Decision(action=decided.action, rule=decided.name, reason=decided.explanation,
                    rules=tuple(results), answer_polarity=answer_polarity(decided.action, signals.condition_outcome))


def answer_polarity(action: str, condition_outcome: str) -> str:
    """The yes/no an ANSWER gives when the user's conditions decide it ("" otherwise)."""
    if action != "ANSWER":
        return ""
    return {"satisfied": "yes", "failed": "no"}.get(condition_outcome, "")
