"""Speed and quality of the core pipeline on the sample knowledge base.

Prints analyze() p50/p95 (warm: models loaded, index built, stage caches cleared
per question), decide() p50, and the gate's confusion matrix, per-action F1 and
macro-F1 on sample_kb/questions.jsonl, plus peak RSS.

    .venv/bin/python bench/bench_pipeline.py [--set name=value ...] [--show-errors]
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from core import settings  # noqa: E402
from core.gate import decide  # noqa: E402
from core.kb import KnowledgeBase  # noqa: E402
from core.pipeline import Pipeline, make_query  # noqa: E402
from core.types import ACTIONS, to_dict  # noqa: E402


def macro_f1(gold: list[str], pred: list[str]) -> tuple[float, dict[str, float], dict]:
    f1s = {}
    for a in ACTIONS:
        tp = sum(g == a and p == a for g, p in zip(gold, pred))
        fp = sum(g != a and p == a for g, p in zip(gold, pred))
        fn = sum(g == a and p != a for g, p in zip(gold, pred))
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        f1s[a] = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    confusion = {g: {p: sum(x == g and y == p for x, y in zip(gold, pred)) for p in ACTIONS} for g in ACTIONS}
    return sum(f1s.values()) / len(f1s), f1s, confusion


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", default=str(ROOT / "sample_kb" / "documents"))
    parser.add_argument("--questions", default=str(ROOT / "sample_kb" / "questions.jsonl"))
    parser.add_argument("--set", action="append", default=[])
    parser.add_argument("--show-errors", action="store_true")
    parser.add_argument("--dump", metavar="FILE.jsonl", help="write every trace (JSON, one a line) here")
    args = parser.parse_args()
    values = settings.resolve(settings.parse_assignments(args.set))
    items = [json.loads(x) for x in Path(args.questions).read_text().splitlines() if x.strip()]

    start = time.perf_counter()
    kb = KnowledgeBase.open(args.kb, values)
    pipeline = Pipeline(kb)
    pipeline.analyze(make_query("Warm-up question about the knowledge base?"), values)
    print(f"KB {len(kb.passages)} passages; load + warm-up {time.perf_counter() - start:.1f} s")

    traces, times = [], []
    for item in items:
        query = make_query(item["question"], item.get("scenario", ""), item.get("history", []))
        pipeline = Pipeline(kb)  # fresh stage caches: every question pays every stage
        t0 = time.perf_counter()
        traces.append(pipeline.analyze(query, values))
        times.append(time.perf_counter() - t0)
    if args.dump:
        with open(args.dump, "w") as handle:
            handle.writelines(json.dumps({"id": i["id"], "trace": to_dict(t)}) + "\n" for i, t in zip(items, traces))
    gate_times, pred = [], []
    for trace in traces:
        t0 = time.perf_counter()
        pred.append(decide(trace, values).action)
        gate_times.append(time.perf_counter() - t0)
    q = statistics.quantiles(times, n=20)
    print(f"analyze() over {len(items)} questions: p50 {statistics.median(times):.3f} s, p95 {q[18]:.3f} s")
    print(f"decide() p50 {statistics.median(gate_times) * 1000:.3f} ms")
    gold = [i["action"] for i in items]
    m, f1s, confusion = macro_f1(gold, pred)
    print(f"macro-F1 {m:.3f}  accuracy {sum(g == p for g, p in zip(gold, pred)) / len(gold):.3f}  "
          + "  ".join(f"F1 {a} {f1s[a]:.2f}" for a in ACTIONS))
    print("confusion (rows gold, columns predicted):  " + "  ".join(f"{a:>7}" for a in ACTIONS))
    for g in ACTIONS:
        print(f"  {g:<8}" + "".join(f"{confusion[g][p]:>9}" for p in ACTIONS))
    if args.show_errors:
        for item, trace, p in zip(items, traces, pred):
            if p != item["action"]:
                d = decide(trace, values)
                s = trace.signals
                print(f"  {item['id']:<12} gold {item['action']:<7} pred {p:<7} rule {d.rule:<18} "
                      f"conf {s.confidence:.2f} cov {s.coverage:.2f} amb {s.ambiguity:.2f} suff {s.sufficiency:.2f} "
                      f"I {s.incompleteness:.2f} type {s.answer_type_found:.0f} | {item['question']}")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
