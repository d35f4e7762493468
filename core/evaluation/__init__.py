"""Evaluation and calibration: labelled sets, cached batch runs, metrics, sweeps and a learned gate.

    from core.evaluation import load_dataset, BatchRunner, regate, evaluate
    ds = load_dataset("sharc", "../shared/data/sharc_dev_half_a.json", limit=50)
    run = BatchRunner(values).run(ds)             # analyses once, caches traces on disk
    gated = regate(run.table, {"amb_max": 0.6})   # no model call; ~1 ms per 1,000 items
    report = evaluate(run, gated.codes)

The same is on the command line as ``python -m core eval`` and ``python -m core calibrate``.
"""
from core.evaluation.calibration import (Gated, Objective, SignalTable, Suggestion, regate, save_suggestion,
                                         suggest_thresholds, sweep, sweep_2d)
from core.evaluation.importers import FORMATS, Dataset, DatasetError, LabelledItem, load_dataset
from core.evaluation.learned_gate import LearnedGate
from core.evaluation.runner import BatchRunner, RunResult, evaluate, prediction_records

__all__ = ["FORMATS", "BatchRunner", "Dataset", "DatasetError", "Gated", "LabelledItem", "LearnedGate",
           "Objective", "RunResult", "SignalTable", "Suggestion", "evaluate", "load_dataset",
           "prediction_records", "regate", "save_suggestion", "suggest_thresholds", "sweep", "sweep_2d"]
