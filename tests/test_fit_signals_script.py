"""scripts/fit_signals.py's choice of the gate's defaults: cross-validation that never scores a group it
chose on, and a fitted configuration that shows no move the training data cannot see."""
from __future__ import annotations

import numpy as np
import pytest

from core import settings
from core.evaluation import metrics as M
from core.gate.learned import RULE_VERDICT
from core.gate.table import SignalTable
from tests.factories import signals
from tests.scripts import load_script


@pytest.fixture(scope="module")
def fit_signals():
    return load_script("fit_signals")


def planted(n: int = 40):
    """Topic-absent items (low P(topic)) abstain, the rest answer: one domain, groups of four items."""
    rng = np.random.default_rng(3)
    absent = np.arange(n) % 4 == 0
    sigs = [signals(p_topic=float(rng.uniform(0.0, 0.3) if a else rng.uniform(0.7, 1.0)), p_fact=0.9, p_open=0.1)
            for a in absent]
    gold = M.codes(["ABSTAIN" if a else "ANSWER" for a in absent])
    return SignalTable.from_signals(sigs), gold, np.array([f"g{k // 4}" for k in range(n)])


def test_cross_validated_codes_choose_on_the_other_folds_only(fit_signals):
    table, gold, groups = planted()
    seen = []

    def search(parts):
        seen.append(sum(len(g) for _, g in parts))
        return {**settings.defaults(), "topic_min": 0.5}
    oof = fit_signals.cross_validated_codes({"d": (table, gold)}, {"d": groups}, search, folds=5)
    assert seen == [32] * 5  # each fold chose on the four others' 32 items
    assert (oof["d"] == gold).all()


def test_a_rule_that_decides_nothing_is_shown_off_with_its_declared_threshold(fit_signals):
    table, gold, _ = planted()
    declared = settings.defaults()
    # the search left the ambiguity rule on at the end of its range (it can never fire) and moved the
    # threshold of a rule it switched off
    found = {**declared, "amb_max": 1.0, "rule_score_gap": False, "gap_min": 0.9, "topic_min": 0.5}
    shown = fit_signals.unused_as_declared(found, declared, {"d": (table, gold)})
    assert shown["rule_ambiguity"] is False and shown["amb_max"] == declared["amb_max"]
    assert shown["gap_min"] == declared["gap_min"]
    assert shown["topic_min"] == 0.5 and shown["rule_topic_absent"] is True  # it decides the absent items
    assert shown["rule_conditions_failed"] == declared["rule_conditions_failed"]  # fixed, whatever it decides
    # declared on, its setting untouched, and no planted question names a thing several documents describe
    assert shown["rule_described_referents"] is True


def test_within_domain_codes_score_each_group_by_a_gate_fitted_without_it(fit_signals):
    """The learned gate's second criterion: every rule tree, contract or article is gated by a gate fitted on
    the other folds (a gate that remembered its training groups would be right only on them)."""
    table, gold, groups = planted()
    seen = []

    class Remembering:
        def __init__(self, train_table):
            self.known = {round(float(p), 9) for p in train_table.column("p_topic")}

        def predict(self, test_table):
            codes = [M.ANSWER if round(float(p), 9) in self.known else M.ABSTAIN for p in test_table.column("p_topic")]
            return np.array(codes), None

    def fit(train_table, train_gold):
        seen.append(len(train_gold))
        return Remembering(train_table)
    codes = fit_signals.within_domain_codes(table, gold, groups, fit, folds=5)
    assert seen == [32] * 5
    assert (codes == M.ABSTAIN).all(), "no item was gated by a gate fitted on it"


def test_the_learned_gate_ships_on_both_criteria(fit_signals):
    left_out = {"log-probabilities": 0.665, "two-stage": 0.660, "multinomial": 0.651}
    within = {"log-probabilities": 0.731, "two-stage": 0.753, "multinomial": 0.745}
    assert fit_signals.best_on_both(left_out, within) == "two-stage"
    assert fit_signals.best_on_both(left_out, {"log-probabilities": 0.731}) == "log-probabilities"
    assert set(fit_signals.GATE_VARIANTS.values()) >= {
        (fit_signals.CALIBRATED_FEATURES + RULE_VERDICT, "balanced", None, "platt", structure)
        for structure in ("multinomial", "two-stage")}


def test_a_hallucination_rate_under_the_floor_pays_while_the_sample_leaves_room_above_it(fit_signals):
    """The defaults' objective charges the rate's one-sided 90 % upper bound: 14 % of 100 unanswerable questions
    answered may be 18 % on a new knowledge base, 14 % of 5,000 may not."""
    def metrics(unanswerable: int, answered: int) -> dict:
        gold = M.codes(["ANSWER"] * 50 + ["ABSTAIN"] * unanswerable)
        pred = M.codes(["ANSWER"] * 50 + ["ANSWER"] * answered + ["ABSTAIN"] * (unanswerable - answered))
        return M.action_metrics(gold, pred)
    few, many = metrics(100, 14), metrics(5000, 700)
    assert few["hallucination_rate"] == pytest.approx(0.14) == many["hallucination_rate"]
    assert fit_signals.hallucination_excess(few) == pytest.approx(0.14 + 1.2816 * np.sqrt(0.14 * 0.86 / 100) - 0.15)
    assert fit_signals.hallucination_excess(many) == 0.0
    assert fit_signals.hallucination_excess(metrics(100, 0)) == 0.0
    right = M.codes(["ANSWER"] * 50 + ["ABSTAIN"] * 100)
    assert fit_signals.domain_objective(right, right) == pytest.approx(1.0)
