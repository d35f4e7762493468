"""The transfer table: configurations × report sets, from cached traces (no model call)."""
from __future__ import annotations

from dataclasses import replace

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
    run = _run([("ANSWER", {"p_topic": 0.9, "p_fact": 0.9}, True), ("ANSWER", {"p_topic": 0.8, "p_fact": 0.7}, False),
                ("ASK", {"p_open": 0.9, "yes_no": 1}, True), ("ABSTAIN", {"p_topic": 0.1}, False),
                ("ABSTAIN", {"p_fact": 0.2}, False), ("ASK", {"p_open": 0.4, "yes_no": 1}, True)])
    rows = table_rows({"set A": run}, {"calibrated only": CALIBRATED_ONLY})
    assert len(rows) == 1
    r = rows[0]
    assert (r["configuration"], r["set"], r["n"]) == ("calibrated only", "set A", 6)
    # the last ASK (P(open) 0.4) is answered: one hallucination of four unanswerable items
    assert r["answer_recall"] == 1.0 and r["ask_recall"] == 0.5 and r["abstain_recall"] == 1.0
    assert r["hallucination"] == 0.25 and r["ask_share"] == 1 / 6
    # P(answer) = P(topic)·P(fact)·(1 − P(open)): 0.81 and 0.56 for the answerable items, 0.6 for the
    # answered ASK, at most 0.2 for the rest: 7 of 8 pairs ranked right
    assert r["auroc_answerable"] == 0.875
    assert r["auroc_answer_vs_ask"] is not None  # items with a scenario: one ANSWER, two ASK
    text = format_table(rows)
    assert "calibrated only" in text and "set A" in text and "0.250" in text
