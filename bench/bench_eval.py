"""Evaluation figures: batch analysis throughput, re-gate time, and the calibration results.

    .venv/bin/python bench/bench_eval.py [--items 30]          # throughput + re-gate time
    .venv/bin/python bench/bench_eval.py --full [--contractnli-docs 20]   # + ShARC half, ContractNLI dev

Throughput analyses ``--items`` ShARC items (a seeded sample) into a fresh temporary cache, after
5 other items have loaded the models (target ≥ 3 items/s on 2 cores, no generator). Re-gate time is for
1,000 cached traces' signals (target ≤ 1 s). ``--full`` analyses every item of
``../shared/data/sharc_dev_half_a.json`` and ``contractnli_dev.json`` (cached under
``.cache/eval``, so a rerun only re-gates) and prints, for each: the untuned defaults, the rule
gate after calibration and the learned gate (both out-of-fold), and the per-signal AUROC table.
"""
from __future__ import annotations

import argparse
import dataclasses
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
from core import settings  # noqa: E402
from core.evaluation import metrics as M  # noqa: E402
from core.evaluation.calibration import signal_report, suggest_thresholds  # noqa: E402
from core.evaluation.importers import Dataset, load_dataset  # noqa: E402
from core.evaluation.learned_gate import cross_validate  # noqa: E402
from core.evaluation.runner import BatchRunner, TraceCache  # noqa: E402
from core.gate import decide_signals  # noqa: E402
from core.gate.table import SignalTable, regate  # noqa: E402
from core.types import Trace, from_dict  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
SHARC = DATA / "sharc_dev_half_a.json"
CONTRACTNLI = DATA / "contractnli_dev.json"


def throughput(n_items: int) -> SignalTable:
    dataset = load_dataset("sharc", SHARC, limit=n_items, seed=0)
    warm_up = load_dataset("sharc", SHARC, limit=5, seed=99)  # first calls load models and lazy parts
    with tempfile.TemporaryDirectory() as cache:
        BatchRunner(None, cache, show_bar=False).run(warm_up)
        run = BatchRunner(None, cache, show_bar=False).run(dataset)
    kbs = len({tuple(i.documents) for i in dataset.items})
    analysis = run.seconds - run.index_seconds
    print(f"batch analysis: {run.analysed} ShARC items in {run.seconds:.1f} s = {run.rate:.2f} items/s "
          f"(target ≥ 3), of which {run.index_seconds:.1f} s building {kbs} knowledge bases; "
          f"analysis alone {run.analysed / analysis:.2f} items/s")
    return run.table


def regate_time(table: SignalTable) -> None:
    rows = np.arange(1000) % len(table)
    big = table.take(rows)
    values = settings.defaults()
    start = time.perf_counter()
    big.compiled  # the rules replayed once per row (see calibration.compile_rules)
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    repeats = 20
    for _ in range(repeats):
        regate(big, values)
    vectorised = (time.perf_counter() - start) / repeats
    start = time.perf_counter()
    for s in big.signals:
        decide_signals(s, values)
    loop = time.perf_counter() - start
    how = (f"after compiling the rules once in {compile_s * 1000:.0f} ms" if big.compiled is not None else
           "ROW BY ROW: a rule could not be compiled to array comparisons")
    print(f"re-gate 1,000 cached traces: {vectorised * 1000:.2f} ms per configuration {how}; "
          f"{loop * 1000:.0f} ms calling decide_signals per item (target ≤ 1 s)")


def document_sample(dataset: Dataset, n_docs: int | None, seed: int = 0) -> Dataset:
    """The items of ``n_docs`` seeded-random documents (whole NDAs: each costs one small index)."""
    docs = sorted({i.documents[0][0] for i in dataset.items})
    if n_docs is None or n_docs >= len(docs):
        return dataset
    keep = set(random.Random(seed).sample(docs, n_docs))
    items = tuple(i for i in dataset.items if i.documents[0][0] in keep)
    return dataclasses.replace(dataset, items=items)


def figures(dataset: Dataset) -> None:
    run = BatchRunner(None).run(dataset)
    print(f"\n=== {dataset.describe()}: {run.summary()}")
    start = time.perf_counter()
    reloaded = [from_dict(Trace, r["trace"]) for r in TraceCache(Path(run.cache_file)).load().values() if "trace" in r]
    SignalTable.from_traces(reloaded)
    print(f"reloading {len(reloaded)} cached traces and their signal table: {time.perf_counter() - start:.1f} s")
    table, gold, ctx = run.table, run.gold, run.has_context
    sel = ctx & ((gold == M.ANSWER) | (gold == M.ASK))

    def with_auc(metrics, ask_score):
        return {**metrics, "auroc_answer_vs_ask": M.auroc(gold[sel] == M.ASK, ask_score[sel])}

    start = time.perf_counter()
    suggestion = suggest_thresholds(table, gold)
    t_rule = time.perf_counter() - start
    start = time.perf_counter()
    codes, probs = cross_validate(table, gold)
    t_learned = time.perf_counter() - start
    incompleteness = table.columns["incompleteness"]
    rows = {"untuned defaults": with_auc(M.action_metrics(gold, regate(table).codes), incompleteness),
            "rule gate calibrated (out-of-fold)": with_auc(suggestion.out_of_fold, incompleteness),
            "learned gate (out-of-fold)": with_auc(M.action_metrics(gold, codes), probs[:, 1])}
    print(M.format_comparison(rows, extra=("auroc_answer_vs_ask",)))
    if sel.any():
        print(f"(ANSWER-vs-ASK AUROC over {int(sel.sum())} items with a scenario or history; score: I(q) for the "
              f"rule gate, out-of-fold P(ASK) for the learned gate)")
    print(f"calibrated thresholds (all items): {suggestion.changed or 'no change'}  [search {t_rule:.1f} s, "
          f"learned gate cross-validation {t_learned:.1f} s]")
    print(M.format_signal_table(signal_report(table, gold, ctx),
                                "per-signal AUROC (> 0.5: higher on the non-answer class; ANSWER vs ASK over "
                                "items with context)"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=30, help="ShARC items for the throughput figure")
    parser.add_argument("--full", action="store_true", help="also the figures on ShARC half and ContractNLI dev")
    parser.add_argument("--contractnli-docs", type=int, metavar="N",
                        help="with --full: only the hypotheses of N seeded-random NDAs (of 61; ~3 s per item)")
    args = parser.parse_args()
    if not SHARC.exists():
        print(f"skipped: {SHARC} is absent (the shared data folder must sit beside the project)")
        return 0
    table = throughput(args.items)
    regate_time(table)
    if args.full:
        figures(load_dataset("sharc", SHARC))
        if CONTRACTNLI.exists():
            figures(document_sample(load_dataset("contractnli", CONTRACTNLI), args.contractnli_docs))
        else:
            print(f"skipped contractnli: {CONTRACTNLI} is absent")
    return 0


if __name__ == "__main__":
    sys.exit(main())
