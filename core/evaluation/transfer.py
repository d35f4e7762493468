"""The transfer table: each gate configuration on every report set, none of which it was fitted on.

Rows are configurations (the declared defaults, the general learned gate, any preset), columns
the report sets: ShARC dev half A, ContractNLI dev, the held-out SQuAD train articles, the sample
KB's 72 questions and its five blind sets. ``bench/bench_transfer.py`` prints it; the Evaluate page
shows it for the runs at hand.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from core import settings as settings_mod
from core.evaluation import metrics as M
from core.gate.table import gate_table
from core.evaluation.importers import Dataset, load_dataset
from core.gate.learned import load_cached
from core.evaluation.runner import RunResult
from core.evaluation.training import TRAIN_DIR, group_of, squad_train
from core.types import ACTIONS

ROOT = Path(__file__).resolve().parents[2]
SHARED = TRAIN_DIR.parent


# The sample KB's labelled question files, each a report set: its 72 questions and the blind sets written from its
# documents alone (``sample_kb/README.md``).
SAMPLE_KB_SETS = {"sample KB": "questions.jsonl", "sample KB blind": "questions_blind.jsonl",
                  "sample KB blind 2": "questions_blind2.jsonl", "sample KB blind 3": "questions_blind3.jsonl",
                  "sample KB blind 4": "questions_blind4.jsonl", "sample KB blind 5": "questions_blind5.jsonl"}


def report_sets(contractnli_limit: int | None = None) -> dict[str, Dataset]:
    """The labelled sets figures are reported on (none is used to fit anything); ``contractnli_limit``
    keeps the first N ContractNLI hypotheses (whole contracts in file order: 17 per contract)."""
    return {
        "ShARC half A": load_dataset("sharc", SHARED / "sharc_dev_half_a.json"),
        "ContractNLI dev": load_dataset("contractnli", SHARED / "contractnli_dev.json", limit=contractnli_limit),
        "SQuAD held-out": squad_train(held_out=True),
        **{name: load_dataset("jsonl", ROOT / "sample_kb" / file) for name, file in SAMPLE_KB_SETS.items()},
    }


def configurations() -> dict[str, dict[str, Any]]:
    """The declared defaults and the general learned gate (what a new user can pick with no fitting)."""
    return {"defaults (rule gate)": settings_mod.defaults(),
            "general learned gate": settings_mod.resolve({"gate_model": "learned",
                                                          "learned_gate_file": "presets/learned-gate-general.json"})}


# Fewer groups than this give no interval: resampling three SQuAD articles draws one of ten mixes of them,
# which says nothing about a fourth article.
MIN_INTERVAL_GROUPS = 10


@dataclass(frozen=True)
class Cell:
    """One configuration on one set."""
    metrics: dict[str, Any]
    auroc_answerable: float | None  # ANSWER vs ASK+ABSTAIN by P(answer)
    auroc_ask: float | None  # ANSWER vs ASK, on items with a scenario or history
    # 95 % intervals of macro_f1, hallucination, auroc_answerable and auroc_answer_vs_ask, from resampling
    # the set's groups (``cell``); empty when not asked for
    intervals: dict[str, tuple[float, float] | None] = field(default_factory=dict)
    groups: int = 0  # the set's rule trees, contracts, articles or documents (``group_of``)


def predict(run: RunResult, values: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """(action codes, P(answer)) of every trace of ``run`` under ``values``."""
    table = run.table
    if values.get("gate_model") == "learned":
        codes, probs = load_cached(values["learned_gate_file"]).predict(table)
        return codes, probs[:, ACTIONS.index("ANSWER")]
    return gate_table(table, values).codes, answerable_score(table)


def answerable_score(table) -> np.ndarray:
    """P(answer) from the calibrated signals. A question that turns on the asker's circumstances (``p_depends``)
    is answerable where its topic is covered and no condition is open, any other where its fact is stated, which
    presupposes the topic: with ``p_open`` = p_depends · P(open | it turns on them) and ``p_fact`` = p_depends +
    (1 − p_depends) · p_topic · P(fact | topic, it does not) (``core.calibrated.chained``), that is p_topic ·
    (p_depends − p_open) + (p_fact − p_depends)."""
    depends = table.column("p_depends")
    score = table.column("p_topic") * (depends - table.column("p_open")) + table.column("p_fact") - depends
    return np.clip(score, 0.0, 1.0)


def cell(run: RunResult, values: Mapping[str, Any], replicates: int = 0) -> Cell:
    """The figures of ``run`` gated under ``values``; with ``replicates``, the 95 % interval of macro-F1,
    hallucination and both AUROCs over that many resamples of the set's groups (rule trees, contracts,
    articles, documents: ``group_of``) — None for a set of fewer than ``MIN_INTERVAL_GROUPS`` groups."""
    codes, p_answer = predict(run, values)
    gold = run.gold
    answer = gold == ACTIONS.index("ANSWER")
    ask_rows = run.has_context & (gold != ACTIONS.index("ABSTAIN"))

    def figures(rows: np.ndarray) -> dict[str, Any]:
        m = M.action_metrics(gold[rows], codes[rows])
        asked = rows[ask_rows[rows]]
        return {"macro_f1": m["macro_f1"], "hallucination": m["hallucination_rate"],
                "auroc_answerable": M.auroc(answer[rows], p_answer[rows]),
                "auroc_answer_vs_ask": M.auroc(answer[asked], p_answer[asked]) if len(asked) else None}
    whole = figures(np.arange(len(gold)))
    groups = [group_of(item) for item in run.items]
    intervals = {}
    if replicates and len(set(groups)) >= MIN_INTERVAL_GROUPS:
        intervals = M.group_intervals(groups, figures, replicates)
    elif replicates:
        intervals = dict.fromkeys(whole)
    return Cell(metrics=M.action_metrics(gold, codes), auroc_answerable=whole["auroc_answerable"],
                auroc_ask=whole["auroc_answer_vs_ask"], intervals=intervals, groups=len(set(groups)))


def table_rows(runs: Mapping[str, RunResult], configs: Mapping[str, Mapping[str, Any]],
               replicates: int = 0) -> list[dict[str, Any]]:
    """One row per (configuration, set) with the headline figures; with ``replicates``, a
    ``<figure>_interval`` (low, high) beside each figure ``cell`` gives one for."""
    out = []
    for config, values in configs.items():
        for name, run in runs.items():
            c = cell(run, values, replicates)
            m = c.metrics
            row = {"configuration": config, "set": name, "n": m["n"], "macro_f1": m["macro_f1"],
                   "answer_recall": m["per_action"]["ANSWER"]["recall"], "ask_recall": m["ask_recall"],
                   "abstain_recall": m["abstain_recall"], "ask_share": m["per_action"]["ASK"]["predicted"] / m["n"],
                   "hallucination": m["hallucination_rate"], "coverage": m["coverage"],
                   "auroc_answerable": c.auroc_answerable, "auroc_answer_vs_ask": c.auroc_ask}
            if replicates:
                row |= {"groups": c.groups, **{f"{k}_interval": v for k, v in c.intervals.items()}}
            out.append(row)
    return out


INTERVAL_NOTE = ("95 % intervals from resampling whole groups (rule trees, contracts, articles, documents) with "
                 "replacement: how far each figure could move on another draw of such groups")


def format_table(rows: list[dict[str, Any]]) -> str:
    """The rows as plain text; where they carry intervals, a second table of them, with each set's
    number of groups."""
    keys = ["n", "macro_f1", "answer_recall", "ask_recall", "abstain_recall", "ask_share", "hallucination",
            "coverage", "auroc_answerable", "auroc_answer_vs_ask"]
    lines = [f"{'configuration':<24}{'set':<18}" + "".join(f"{k[:14]:>15}" for k in keys)]
    for r in rows:
        lines.append(f"{r['configuration'][:23]:<24}{r['set']:<18}" + "".join(
            f"{M._fmt(r[k]) if k != 'n' else r[k]:>15}" for k in keys))
    ranged = [k for k in rows[0] if k.endswith("_interval")] if rows else []
    if ranged:
        lines += ["", INTERVAL_NOTE + ":", f"{'configuration':<24}{'set':<18}{'groups':>7}"
                  + "".join(f"{k.removesuffix('_interval')[:19]:>20}" for k in ranged)]
        for r in rows:
            lines.append(f"{r['configuration'][:23]:<24}{r['set']:<18}{r['groups']:>7}"
                         + "".join(f"{interval_text(r[k]):>20}" for k in ranged))
    return "\n".join(lines)


def interval_text(interval: tuple[float, float] | None) -> str:
    return "—" if interval is None else f"{interval[0]:.3f}–{interval[1]:.3f}"
