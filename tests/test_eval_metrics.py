"""Metrics against hand-computed values."""
from __future__ import annotations

import numpy as np
import pytest

from core.evaluation import metrics as M

GOLD = ["ANSWER", "ANSWER", "ANSWER", "ASK", "ASK", "ABSTAIN"]
PRED = ["ANSWER", "ANSWER", "ASK", "ANSWER", "ASK", "ABSTAIN"]


def test_action_metrics_three_classes():
    m = M.action_metrics(GOLD, PRED)
    assert m["confusion"]["matrix"] == [[2, 1, 0], [1, 1, 0], [0, 0, 1]]
    assert m["accuracy"] == pytest.approx(4 / 6)
    pa = m["per_action"]
    assert (pa["ANSWER"]["precision"], pa["ANSWER"]["recall"], pa["ANSWER"]["f1"]) == pytest.approx((2 / 3, 2 / 3, 2 / 3))
    assert (pa["ASK"]["precision"], pa["ASK"]["recall"], pa["ASK"]["f1"]) == pytest.approx((0.5, 0.5, 0.5))
    assert pa["ABSTAIN"]["f1"] == 1.0 and pa["ASK"]["support"] == 2 and pa["ANSWER"]["predicted"] == 3
    assert m["macro_f1"] == pytest.approx((2 / 3 + 0.5 + 1) / 3)
    assert m["hallucination_rate"] == pytest.approx(1 / 3)  # one of three non-answerable items answered
    assert m["coverage"] == pytest.approx(0.5)
    assert (m["ask_recall"], m["abstain_recall"]) == (0.5, 1.0)
    assert M.macro_f1(GOLD, PRED) == pytest.approx(m["macro_f1"])


def test_macro_f1_averages_gold_actions_only():
    # ContractNLI: no gold ASK. A predicted ASK still costs ANSWER recall; ASK's F1 is not averaged.
    gold, pred = ["ANSWER", "ANSWER", "ABSTAIN", "ABSTAIN"], ["ANSWER", "ASK", "ABSTAIN", "ANSWER"]
    m = M.action_metrics(gold, pred)
    assert m["per_action"]["ANSWER"]["f1"] == pytest.approx(0.5)
    assert m["per_action"]["ABSTAIN"]["f1"] == pytest.approx(2 / 3)
    assert m["macro_f1"] == pytest.approx((0.5 + 2 / 3) / 2) == M.macro_f1(gold, pred)
    assert m["ask_recall"] is None and m["per_action"]["ASK"]["precision"] == 0.0
    assert m["hallucination_rate"] == pytest.approx(0.5)


def test_codes_and_bad_input():
    assert M.codes(["ASK", "ABSTAIN", "ANSWER"]).tolist() == [1, 2, 0]
    assert M.codes(np.array([2, 0])).tolist() == [2, 0]
    with pytest.raises(ValueError, match="unknown action 'MAYBE'"):
        M.codes(["MAYBE"])
    with pytest.raises(ValueError, match="differ in length"):
        M.confusion(["ASK"], ["ASK", "ASK"])


def test_answer_exact_match_and_f1():
    gold = [("1894", "in 1894"), ("Yes",), (), ("the Thames",)]
    pred = ["1894", "no", "x", None]
    m = M.answer_metrics(gold, pred)
    assert (m["n"], m["with_gold"], m["exact_match"], m["f1"]) == (2, 3, 0.5, 0.5)
    assert M.answer_f1("The river Thames", "the Thames") == pytest.approx(2 / 3)
    assert M.normalize_answer("The  Thames!") == "thames"
    assert M.answer_metrics([()], ["x"])["exact_match"] is None


def test_evidence_precision_recall():
    gold = [["It was completed in 1894."], [], ["The Thames is a river in England.", "It crosses the river Thames."]]
    pred = [["It was completed in 1894", "Tower Bridge is in London."], ["anything"],
            ["The Thames is a river in England and Wales."]]
    m = M.evidence_metrics(gold, pred)
    # item 1: P 1/2, R 1; item 3: P 1, R 1/2 (the second gold sentence shares too few words)
    assert (m["n"], m["precision"], m["recall"]) == (2, pytest.approx(0.75), pytest.approx(0.75))
    assert not M.evidence_match("It crosses the river Thames.", "The Thames is a river in England and Wales.")


def test_risk_coverage_and_aurc():
    rc = M.risk_coverage([True, False, True, True], [0.9, 0.8, 0.7, 0.1])
    assert rc["coverage"] == [0.25, 0.5, 0.75, 1.0]
    assert rc["risk"] == pytest.approx([0.0, 0.5, 1 / 3, 0.25])
    assert rc["aurc"] == pytest.approx((0 + 0.5 + 1 / 3 + 0.25) / 4)
    many = M.risk_coverage(np.ones(1000, bool), np.arange(1000), points=11)
    assert len(many["coverage"]) == 11 and many["aurc"] == 0.0


def test_auroc_direction_and_undefined():
    assert M.auroc([True, False, True, False], [0.9, 0.1, 0.4, 0.5]) == pytest.approx(0.75)
    assert M.auroc([True, False], [0.1, 0.9]) == 0.0
    assert M.auroc([True, True], [0.1, 0.9]) is None


def test_signal_aurocs_per_pair_and_mask():
    gold = ["ANSWER", "ANSWER", "ASK", "ASK", "ABSTAIN", "ABSTAIN"]
    cols = {"incompleteness": np.array([0.0, 0.1, 0.5, 0.9, 0.0, 0.0]),
            "confidence": np.array([0.9, 0.8, 0.9, 0.7, 0.1, 0.2])}
    rows = {r["signal"]: r for r in M.signal_aurocs(cols, gold)}
    assert rows["incompleteness"]["ANSWER_vs_ASK"] == 1.0
    assert rows["incompleteness"]["ANSWER_vs_ABSTAIN"] == pytest.approx(0.25)
    assert rows["confidence"]["ANSWER_vs_ABSTAIN"] == 0.0  # lower on ABSTAIN: reversed direction
    masked = M.signal_aurocs(cols, gold, mask=np.array([1, 1, 0, 0, 1, 1], bool))
    assert masked[0]["ANSWER_vs_ASK"] is None
    text = M.format_signal_table(list(rows.values()), "t")
    assert text.index("incompleteness") < text.index("confidence")  # strongest first


def test_format_metrics_shows_the_figures():
    text = M.format_metrics(M.action_metrics(GOLD, PRED), "demo")
    assert "macro-F1 0.722" in text and "hallucination 0.333" in text
    ask_row = next(line for line in text.splitlines() if line.strip().startswith("ASK "))
    assert ask_row.split() == ["ASK", "0.500", "0.500", "0.500", "2", "1", "1", "0"]
    table = M.format_comparison({"a": M.action_metrics(GOLD, PRED)})
    assert "0.722" in table


def test_group_intervals_resample_whole_groups_and_cover_the_whole_set_figure():
    rng = np.random.default_rng(1)
    # 40 groups of 5 items; a group's items share their outcome, so the groups, not the items, are the draws
    right = np.repeat(rng.random(40) < 0.7, 5)
    groups = [f"g{k // 5}" for k in range(len(right))]

    def accuracy(rows):
        return {"accuracy": float(right[rows].mean()), "never": None}
    by_group = M.group_intervals(groups, accuracy, replicates=400)
    by_item = M.group_intervals([str(k) for k in range(len(right))], accuracy, replicates=400)
    low, high = by_group["accuracy"]
    assert low < right.mean() < high and 0 < low and high < 1
    # the same figure resampled item by item pretends to 200 independent draws: a narrower interval
    assert (by_item["accuracy"][1] - by_item["accuracy"][0]) < 0.6 * (high - low)
    assert by_group["never"] is None  # undefined in every resample
    assert M.group_intervals(groups, accuracy, replicates=400) == by_group  # seeded: the same each time
    with pytest.raises(ValueError, match="replicates"):
        M.group_intervals(groups, accuracy, replicates=0)
