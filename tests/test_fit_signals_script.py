"""scripts/fit_signals.py's choice of the gate's defaults: cross-validation that never scores a group it
chose on, and a fitted configuration that shows no move the training data cannot see."""
from __future__ import annotations

import numpy as np
import pytest

from core import settings
from core.evaluation import metrics as M
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
