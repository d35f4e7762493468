"""Choose the gate's default thresholds on every labelled set at hand at once.

    .venv/bin/python scripts/tune_defaults.py [--restarts 4] [--folds 5]

Loads (analysing once, then from the trace cache) the sample KB's questions, the ShARC dev half and
ContractNLI dev from ../shared/data, and searches the gate settings for the configuration with the
highest *mean* macro-F1 over the sets — each set counts the same whatever its size, so the defaults
are not tuned to one corpus. Prints each set's figures under the current defaults and under the
suggestion, with an out-of-fold estimate: every set is split into k folds, and fold i of every set
is predicted by thresholds fitted on the other folds of all sets. The suggestion is printed as
``name=value`` lines; copying them into ``core/settings.py`` is a deliberate, reviewed step.

The rules that carry a clarification dialogue's meaning stay on (a failed condition answers "no",
a missing variable asks), whatever the search would prefer.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core import settings  # noqa: E402
from core.evaluation import BatchRunner, load_dataset  # noqa: E402
from core.evaluation import metrics as M  # noqa: E402
from core.evaluation.calibration import GATE_SETTINGS, _folds, _gate, coordinate_ascent, grid  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
SETS = {"sample KB": ("jsonl", ROOT / "sample_kb" / "questions.jsonl"),
        "ShARC dev half": ("sharc", SHARED / "sharc_dev_half_a.json"),
        "ContractNLI dev": ("contractnli", SHARED / "contractnli_dev.json")}
KEEP_ON = ("rule_conditions_failed", "rule_missing_variables")


def mean_macro_f1(parts, values) -> float:
    return float(np.mean([M.macro_f1(g, _gate(table, values).codes) for table, g in parts]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--restarts", type=int, default=4)
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args()

    runs = {}
    for name, (fmt, path) in SETS.items():
        if not path.is_file():
            print(f"{name}: {path} is missing, left out")
            continue
        runs[name] = BatchRunner(None).run(load_dataset(fmt, path))
        print(f"{name}: {runs[name].summary()}")
    base = settings.defaults()
    space = [(n, grid(n)) for n in GATE_SETTINGS if n not in KEEP_ON]
    parts = [(r.table, r.gold) for r in runs.values()]
    best = coordinate_ascent(lambda v: mean_macro_f1(parts, v), base, space, restarts=args.restarts)

    oof = {name: np.zeros(len(r.gold), dtype=np.int64) for name, r in runs.items()}
    splits = {name: list(_folds(r.gold, args.folds, 0)) for name, r in runs.items()}
    for k in range(args.folds):
        train = [(r.table.take(splits[n][k][0]), r.gold[splits[n][k][0]]) for n, r in runs.items()]
        fitted = coordinate_ascent(lambda v: mean_macro_f1(train, v), base, space, restarts=args.restarts)
        for n, r in runs.items():
            test = splits[n][k][1]
            oof[n][test] = _gate(r.table.take(test), fitted).codes

    rows = {}
    for name, r in runs.items():
        rows[f"{name}: defaults"] = M.action_metrics(r.gold, _gate(r.table, base).codes)
        rows[f"{name}: suggested (in-sample)"] = M.action_metrics(r.gold, _gate(r.table, best).codes)
        rows[f"{name}: suggested (out-of-fold)"] = M.action_metrics(r.gold, oof[name])
    print()
    print(M.format_comparison(rows))
    print(f"\nmean macro-F1: defaults {mean_macro_f1(parts, base):.3f}, suggested {mean_macro_f1(parts, best):.3f}")
    print("\nsuggested changes to the defaults:")
    for name in GATE_SETTINGS:
        if best[name] != base[name]:
            print(f"  {name}={best[name]}   (now {base[name]})")


if __name__ == "__main__":
    main()
