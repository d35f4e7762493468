"""``python -m core eval`` and ``python -m core calibrate``: batch evaluation and threshold fitting.

    python -m core eval --format sharc ../shared/data/sharc_dev_half_a.json --limit 100 --out runs/sharc
    python -m core calibrate --format contractnli ../shared/data/contractnli_dev.json \\
        --out presets/contractnli.json --learned-gate presets/contractnli-gate.json
    python -m core eval --format sharc ../shared/data/sharc_dev_half_a.json --out runs/sharc --engine dask --workers 2

Both analyse each item once (traces are cached under ``--cache``), so a second
eval with other gate thresholds, or a calibration after an eval, costs seconds.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from core import settings as settings_mod
from core.evaluation import metrics as M
from core.gate.learned import STRUCTURES

COMMANDS = ("eval", "calibrate")


def add_subcommands(subparsers) -> None:
    """Add ``eval`` and ``calibrate`` to the main parser's subcommands."""
    p_eval = subparsers.add_parser("eval", help="analyse a labelled set and score the gate's actions")
    _data_arguments(p_eval)
    p_eval.add_argument("--out", required=True, metavar="DIR",
                        help="folder for predictions.jsonl and metrics.json (created if needed)")
    p_eval.add_argument("--learned-gate", metavar="GATE.json",
                        help="also score this learned gate (from `calibrate --learned-gate`)")

    p_cal = subparsers.add_parser("calibrate", help="fit gate thresholds (and a learned gate) on a labelled set")
    _data_arguments(p_cal)
    p_cal.add_argument("--out", required=True, metavar="PRESET.json", help="where to write the suggested preset")
    p_cal.add_argument("--objective", default="macro_f1", choices=("macro_f1", "accuracy", "coverage"),
                       help="what to maximise; 'coverage' needs --max-hallucination")
    p_cal.add_argument("--max-hallucination", type=float, metavar="RATE",
                       help="with --objective coverage: the highest hallucination rate allowed")
    p_cal.add_argument("--folds", type=int, default=5, help="cross-validation folds (default 5)")
    p_cal.add_argument("--params", nargs="+", metavar="SETTING",
                       help="gate settings to search (default: all of them)")
    p_cal.add_argument("--learned-gate", metavar="GATE.json", help="also fit a learned gate and save it here")
    p_cal.add_argument("--calibration", default="isotonic", choices=("isotonic", "platt"),
                       help="probability calibration of the learned gate")
    p_cal.add_argument("--precision-floor", type=float, metavar="P",
                       help="learned gate: answer only where out-of-fold ANSWER precision reaches P")
    p_cal.add_argument("--structure", default="multinomial", choices=STRUCTURES,
                       help="learned gate: one multinomial regression, or two steps (abstain or not, then ask or "
                            "answer)")
    p_cal.add_argument("--report", metavar="REPORT.json", help="write every figure of the calibration here")


def _data_arguments(p: argparse.ArgumentParser) -> None:
    from core.evaluation.importers import FORMATS
    p.add_argument("path", help="the labelled file")
    p.add_argument("--format", required=True, choices=FORMATS, help="the file's format")
    p.add_argument("--setting", choices=("reading", "pooled"),
                   help="reading: each item's own documents form its KB (default); pooled: all documents "
                        "of the file form one KB (the jsonl format always uses the --kb folder)")
    p.add_argument("--kb", help="jsonl format: the knowledge-base folder its questions refer to "
                                "(default: the sample KB)")
    p.add_argument("--limit", type=int, metavar="N", help="use only N items")
    p.add_argument("--sample-seed", type=int, metavar="S",
                   help="with --limit: a random sample drawn with this seed instead of the first N")
    p.add_argument("--preset", dest="eval_preset", metavar="PRESET.json", help="settings to run with")
    p.add_argument("--cache", metavar="DIR", help="trace and KB cache folder (default: .cache/eval)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--engine", choices=("local", "dask"),
                   help="where the items are analysed: this process (local, the default) or Dask workers "
                        "(the scale extra); the traces, their cache and the metrics are the same")
    p.add_argument("--workers", type=int, default=2, metavar="N",
                   help="--engine dask: local worker processes, one thread each (default 2)")
    p.add_argument("--dask-scheduler", metavar="ADDRESS",
                   help="a running Dask scheduler (tcp://host:8786) whose workers analyse; implies --engine dask")


def run(args: argparse.Namespace, values: dict[str, Any]) -> int:
    """Run the ``eval`` or ``calibrate`` subcommand; ``values`` are the top-level --preset/--set settings."""
    if getattr(args, "eval_preset", None):
        values = settings_mod.load_preset(args.eval_preset)
        values.update(settings_mod.parse_assignments(args.set))
    return {"eval": cmd_eval, "calibrate": cmd_calibrate}[args.command](args, values)


def _run_dataset(args, values):
    from core.evaluation.importers import load_dataset
    from core.evaluation.runner import BatchRunner
    dataset = load_dataset(args.format, args.path, setting=args.setting, limit=args.limit,
                           seed=args.sample_seed, kb_folder=args.kb)
    print(dataset.describe(), file=sys.stderr)
    if args.dask_scheduler and args.engine == "local":
        raise ValueError("--dask-scheduler runs the analysis on Dask: leave out --engine local")
    if args.dask_scheduler or args.engine == "dask":
        from core.evaluation.sharded import DaskBatchRunner
        runner = DaskBatchRunner(values, args.cache, show_bar=not args.quiet, scheduler=args.dask_scheduler or "",
                                 workers=args.workers)
    else:
        runner = BatchRunner(values, args.cache, show_bar=not args.quiet)
    run_ = runner.run(dataset)
    print(run_.summary(), file=sys.stderr)
    for item_id, error in list(run_.errors.items())[:5]:
        print(f"  could not analyse {item_id}: {error}", file=sys.stderr)
    if not run_.traces:
        raise ValueError("no item could be analysed, so there is nothing to score")
    return runner, run_


def cmd_eval(args, values) -> int:
    from core.gate.table import regate
    from core.evaluation.runner import evaluate, prediction_records
    from core.gate.learned import LearnedGate
    gate = LearnedGate.load(args.learned_gate) if args.learned_gate else None
    runner, run_ = _run_dataset(args, values)
    gated = regate(run_.table, values)
    print("writing the responses…", file=sys.stderr)
    outcomes = runner.outcomes(run_, values)
    report = {"rule_gate": evaluate(run_, gated.codes, outcomes=outcomes), "settings": values,
              "run": {"analysed": run_.analysed, "cached": run_.cached, "seconds": round(run_.seconds, 2),
                      "index_seconds": round(run_.index_seconds, 2), "items_per_second": run_.rate,
                      "errors": run_.errors, "cache": run_.cache_file}}
    files = {"predictions.jsonl": prediction_records(run_, gated.codes, gated.rules, outcomes=outcomes)}
    print(_report_text(report["rule_gate"], "rule gate"))
    if gate is not None:
        codes, probs = gate.predict(run_.table)
        learned = runner.outcomes(run_, {**values, "gate_model": "learned",
                                          "learned_gate_file": str(Path(args.learned_gate).resolve())})
        report["learned_gate"] = evaluate(run_, codes, answer_score=probs[:, 0], ask_score=probs[:, 1],
                                          score_names=("P(ANSWER)", "P(ASK)"), outcomes=learned)
        report["learned_gate"]["file"] = args.learned_gate
        files["predictions_learned.jsonl"] = prediction_records(run_, codes, probabilities=probs, outcomes=learned)
        print()
        print(_report_text(report["learned_gate"], f"learned gate {args.learned_gate}"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in files.items():
        _write_atomic(out / name, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    _write_atomic(out / "metrics.json", json.dumps(report, indent=1, default=_json_default))
    print(f"\nwrote {', '.join(files)} and metrics.json to {out}", file=sys.stderr)
    return 0


def cmd_calibrate(args, values) -> int:
    from core.evaluation.calibration import Objective, save_suggestion, signal_report, suggest_thresholds
    from core.gate.table import regate
    from core.evaluation.learned_gate import cross_validate, fit_learned_gate
    if args.objective == "coverage" and args.max_hallucination is None:
        raise ValueError("--objective coverage needs --max-hallucination RATE (e.g. 0.1)")
    if args.folds < 2:
        raise ValueError(f"--folds must be at least 2, not {args.folds}")
    objective = Objective(metric=args.objective, max_hallucination=args.max_hallucination)
    _, run_ = _run_dataset(args, values)
    table, gold, ctx = run_.table, run_.gold, run_.has_context
    rows: dict[str, dict[str, Any]] = {}
    ask_sel = ctx & ((gold == M.ANSWER) | (gold == M.ASK))

    def row(metrics: dict, ask_score) -> dict:
        return {**metrics, "auroc_answer_vs_ask": M.auroc(gold[ask_sel] == M.ASK, ask_score[ask_sel])}

    incompleteness = table.columns["incompleteness"]
    rows["rule gate, given settings"] = row(M.action_metrics(gold, regate(table, values).codes), incompleteness)
    print(f"fitting thresholds ({objective.describe()}, {args.folds}-fold)…", file=sys.stderr)
    suggestion = suggest_thresholds(table, gold, values, objective=objective, names=args.params, folds=args.folds)
    rows["rule gate, calibrated (out-of-fold)"] = row(suggestion.out_of_fold, incompleteness)
    rows["rule gate, calibrated (in-sample)"] = row(suggestion.in_sample, incompleteness)
    report: dict[str, Any] = {"dataset": run_.dataset.describe(), "objective": suggestion.objective,
                              "suggested": suggestion.changed, "fold_values": list(suggestion.fold_values)}
    if args.learned_gate:
        print("fitting the learned gate…", file=sys.stderr)
        fit = {"calibration": args.calibration, "precision_floor": args.precision_floor, "structure": args.structure}
        codes, probs = cross_validate(table, gold, folds=args.folds, **fit)
        rows["learned gate (out-of-fold)"] = row(M.action_metrics(gold, codes), probs[:, 1])
        gate = fit_learned_gate(table, gold, folds=args.folds, info={"dataset": run_.dataset.describe()}, **fit)
        gate.save(args.learned_gate)
        report["learned_gate"] = args.learned_gate
    save_suggestion(suggestion, args.out)

    signal_rows = signal_report(table, gold, ctx)
    report.update(comparison=rows, signals=signal_rows)
    print(M.format_comparison(rows, extra=("auroc_answer_vs_ask",)))
    print("\nsuggested gate settings (fitted on all items): "
          + (", ".join(f"{k}={v}" for k, v in suggestion.changed.items()) or "no change"))
    print()
    print(M.format_signal_table(signal_rows, "per-signal AUROC (> 0.5: higher on the non-answer class; "
                                             "ANSWER vs ASK over items with a scenario or history)"))
    if args.report:
        _write_atomic(Path(args.report), json.dumps(report, indent=1, default=_json_default))
    print(f"\nwrote preset {args.out}" + (f" and learned gate {args.learned_gate}" if args.learned_gate else ""),
          file=sys.stderr)
    return 0


def _report_text(report: dict[str, Any], title: str) -> str:
    lines = [M.format_metrics(report["actions"], f"{title} — {report['dataset']}")]
    ans, ev, auc, rc = report["answers"], report["evidence"], report["auroc_answer_vs_ask"], report["risk_coverage"]
    if ans["n"]:
        lines.append(f"  answers ({ans['source']}): EM {M._fmt(ans['exact_match'])}  F1 {M._fmt(ans['f1'])}  over "
                     f"{ans['n']} answered of {ans['with_gold']} with gold answers")
    if "response_actions" in report:
        written = report["response_actions"]
        lines.append(f"  after the answer-level checks: accuracy {M._fmt(written['accuracy'])}  "
                     f"macro-F1 {M._fmt(written['macro_f1'])}")
    if ev["n"]:
        lines.append(f"  evidence: precision {M._fmt(ev['precision'])}  recall {M._fmt(ev['recall'])}  "
                     f"over {ev['n']} items with gold evidence")
    if auc["value"] is not None:
        lines.append(f"  ANSWER-vs-ASK AUROC ({auc['score']}, {auc['n']} items with scenario or history): "
                     f"{auc['value']:.3f}")
    lines.append(f"  selective risk AURC ({rc['score']}): {M._fmt(rc['aurc'])}")
    return "\n".join(lines)


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"cannot write {type(obj).__name__} as JSON")
