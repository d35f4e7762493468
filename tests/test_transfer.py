"""The transfer table: configurations × report sets, from cached traces (no model call)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from core import settings
from core.evaluation.importers import Dataset, LabelledItem
from core.evaluation.runner import RunResult
from core.evaluation.transfer import format_table, table_rows
from tests.factories import signals, trace


def _run(rows: list[tuple[str, dict, bool]]) -> RunResult:
    """A run of hand-made traces: (gold action, signal changes, has a scenario)."""
    items, traces = [], []
    for n, (gold, change, context) in enumerate(rows):
        items.append(LabelledItem(id=str(n), question="q?", action=gold, scenario="I am 70." if context else ""))
        t = trace(signals(**change))
        traces.append(replace(t, query=replace(t.query, scenario=items[-1].scenario)))
    dataset = Dataset(items=tuple(items), format="jsonl", path="x.jsonl", setting="pooled")
    return RunResult(dataset, tuple(items), tuple(traces), {}, len(items), 0, 1.0, 0.0, {}, "cache.jsonl")


CALIBRATED_ONLY = {**settings.defaults(), **{s.name: False for s in settings.SETTINGS if s.name.startswith("rule_")},
                   "rule_topic_absent": True, "rule_condition_open": True, "rule_fact_absent": True,
                   "rule_conditions_failed": True, "topic_min": 0.5, "open_max": 0.5, "fact_min": 0.5}


def test_each_configuration_is_scored_on_each_set_with_recall_share_and_auroc():
    # P(fact stated) holds P(topic covered) (``calibrated.chained``); P(open) holds P(it turns on the asker)
    run = _run([("ANSWER", {"p_topic": 0.9, "p_fact": 0.81}, True), ("ANSWER", {"p_topic": 0.8, "p_fact": 0.56}, False),
                ("ASK", {"p_depends": 1.0, "p_open": 0.9, "yes_no": 1}, True),
                ("ABSTAIN", {"p_topic": 0.1, "p_fact": 0.1}, False), ("ABSTAIN", {"p_fact": 0.2}, False),
                ("ASK", {"p_depends": 1.0, "p_open": 0.4, "yes_no": 1}, True)])
    rows = table_rows({"set A": run}, {"calibrated only": CALIBRATED_ONLY})
    assert len(rows) == 1
    r = rows[0]
    assert (r["configuration"], r["set"], r["n"]) == ("calibrated only", "set A", 6)
    # the last ASK (P(open) 0.4) is answered: one hallucination of four unanswerable items
    assert r["answer_recall"] == 1.0 and r["ask_recall"] == 0.5 and r["abstain_recall"] == 1.0
    assert r["hallucination"] == 0.25 and r["ask_share"] == 1 / 6
    # P(answer) (``answerable_score``): 0.81 and 0.56 for the answerable items, P(topic)·(1 − P(open)) = 0.6 for
    # the answered ASK, at most 0.2 for the rest: 7 of 8 pairs ranked right
    assert r["auroc_answerable"] == 0.875
    assert r["auroc_answer_vs_ask"] is not None  # items with a scenario: one ANSWER, two ASK
    text = format_table(rows)
    assert "calibrated only" in text and "set A" in text and "0.250" in text


def test_intervals_come_from_resampling_groups_and_are_printed_with_the_group_count():
    gold_rows = [("ANSWER", {"p_topic": 0.9, "p_fact": 0.9}, True), ("ASK", {"p_open": 0.9, "yes_no": 1}, True),
                 ("ABSTAIN", {"p_topic": 0.1}, False), ("ASK", {"p_open": 0.4, "yes_no": 1}, True)] * 12
    run = _run(gold_rows)
    # four items per rule tree: tree k holds items 4k … 4k+3
    items = tuple(replace(i, extra={"tree_id": f"tree{n // 4}"}) for n, i in enumerate(run.items))
    run = replace(run, items=items)
    plain = table_rows({"set A": run}, {"calibrated only": CALIBRATED_ONLY})[0]
    assert not any(k.endswith("_interval") for k in plain) and "groups" not in plain
    row = table_rows({"set A": run}, {"calibrated only": CALIBRATED_ONLY}, replicates=200)[0]
    assert row["groups"] == 12 and row["macro_f1"] == plain["macro_f1"]
    # every tree is alike here, so any resample of trees gives the whole set's figures
    low, high = row["macro_f1_interval"]
    assert low == high == pytest.approx(plain["macro_f1"])
    assert row["hallucination_interval"] == (pytest.approx(1 / 3), pytest.approx(1 / 3)) == (plain["hallucination"],) * 2
    text = format_table([row])
    assert "95 % intervals" in text and f"{plain['macro_f1']:.3f}–{plain['macro_f1']:.3f}" in text
    # three trees resample into a handful of mixes: no interval is claimed
    few = replace(run, items=tuple(replace(i, extra={"tree_id": f"tree{n % 3}"}) for n, i in enumerate(run.items)))
    row = table_rows({"set A": few}, {"calibrated only": CALIBRATED_ONLY}, replicates=200)[0]
    assert row["groups"] == 3 and row["macro_f1_interval"] is None and row["hallucination_interval"] is None
