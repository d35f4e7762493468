"""Evaluation and calibration: labelled sets, cached batch runs, metrics, sweeps and a learned gate.

    from core.evaluation import load_dataset, BatchRunner, regate, evaluate
    ds = load_dataset("sharc", "../shared/data/sharc_dev_half_a.json", limit=50)
    run = BatchRunner(values).run(ds)             # analyses once, caches traces on disk
    gated = regate(run.table, {"amb_max": 0.6})   # no model call; ~1 ms per 1,000 items
    report = evaluate(run, gated.codes)

The same is on the command line as ``python -m core eval`` and ``python -m core calibrate``.
"""
from core.evaluation.calibration import Objective, Suggestion, save_suggestion, suggest_thresholds, sweep, sweep_2d
from core.evaluation.importers import FORMATS, Dataset, DatasetError, LabelledItem, load_dataset
from core.evaluation.learned_gate import fit_learned_gate
from core.evaluation.runner import BatchRunner, RunResult, evaluate, prediction_records
from core.gate.learned import LearnedGate
from core.gate.table import Gated, SignalTable, regate

__all__ = ["FORMATS", "BatchRunner", "Dataset", "DatasetError", "Gated", "LabelledItem", "LearnedGate",
           "Objective", "RunResult", "SignalTable", "Suggestion", "evaluate", "fit_learned_gate", "load_dataset",
           "prediction_records", "regate", "save_suggestion", "suggest_thresholds", "sweep", "sweep_2d"]
