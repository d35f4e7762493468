"""Fit the calibrated signals, choose the gate's defaults and fit the general learned gate — on the
training domains of ``../shared/data/train`` only.

    python scripts/fit_signals.py [--folds 5] [--restarts 3] [--write]

1. Analyses (or reads from the trace cache) the training sets of ``core.evaluation.training``:
   ShARC train trees, ContractNLI train contracts, SQuAD 2.0 train articles (not the held-out ones).
2. Fits each calibrator of ``core.evaluation.fit_signals.SPECS`` and prints its held-out AUROC per
   domain (cross-validation grouped by rule tree, contract and article).
3. Chooses the rule gate's defaults — every gate threshold and which rules are on, starting from
   the calibrated rules — for the best mean macro-F1 over the domains (each counts the same), less
   each domain's hallucination rate above 15 % (``objective``), and reports each domain
   leave-one-domain-out (the defaults chosen on the other domains only) beside the declared
   defaults of ``core/settings.py`` scored on the same domain.
4. Fits the general learned gate on all domains at once, twice — over every signal, and over the
   calibrated probabilities and the dialogue context alone (what means the same on every knowledge
   base) — and keeps the one with the better mean leave-one-domain-out macro-F1.
With ``--write`` the calibrators go to models/signals.json, the learned gate to
presets/learned-gate-general.json and the chosen gate configuration to presets/training-fit.json
(its differences from core/settings.py are printed).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from core import calibrated, settings
from core.evaluation import BatchRunner
from core.evaluation import metrics as M
from core.evaluation.calibration import GATE_SETTINGS, coordinate_ascent, grid, rule_lift
from core.gate.table import CONTEXT_FEATURES, SignalTable, gate_table
from core.evaluation.fit_signals import fit_all, save
from core.evaluation.learned_gate import fit_learned_gate
from core.evaluation.training import training_sets

ROOT = Path(__file__).resolve().parent.parent
# The search starts from the calibrated rules alone; the older rules over raw signals may be switched on.
ON = ("topic_absent", "several_referents", "conditions_failed", "condition_open", "fact_absent")
# No training domain has a knowledge base of several documents, so nothing there can choose the
# referent count; a failed condition answering "no" is what the dialogue means.
FIXED = ("referents_min", "rule_several_referents", "rule_conditions_failed")
SEARCHED = tuple(n for n in GATE_SETTINGS if n not in FIXED)
# What a general learned gate may read besides every signal: the calibrated probabilities, the referent
# count, the condition outcome and what the user has told. Raw retrieval and NLI scores are scaled by
# each knowledge base (a BM25 score grows with the corpus), the probabilities were fitted across several.
CALIBRATED_FEATURES = ("p_topic", "p_fact", "p_open", "p_met", "n_referents", "outcome:failed", "outcome:satisfied",
                       *CONTEXT_FEATURES)
FEATURE_SETS = {"every signal": None, "calibrated": CALIBRATED_FEATURES}
# Thresholds on calibrated probabilities: they mean the same on every knowledge base, so the declared
# defaults take them from the training domains (checked leave-one-domain-out below).
CALIBRATED_THRESHOLDS = ("topic_min", "fact_min", "open_max")
HALLUCINATION_FLOOR = 0.15  # the most answers to unanswerable questions a domain may have before the fit pays for them


def gate_defaults(base: dict) -> dict:
    values = dict(base)
    for name in (s.name for s in settings.SETTINGS if s.name.startswith("rule_")):
        values[name] = name.removeprefix("rule_") in ON
    return values


def objective(parts, values) -> float:
    """Mean over the domains of macro-F1, less each domain's hallucination rate above
    ``HALLUCINATION_FLOOR``: an answer given where the gold action is to ask or abstain costs more
    than the macro-F1 alone charges for it (with macro-F1 alone, the fit answers 24–41 % of the
    training items that should not be answered)."""
    scores = []
    for table, gold in parts:
        m = M.action_metrics(gold, gate_table(table, values).codes)
        scores.append(m["macro_f1"] - max(0.0, (m["hallucination_rate"] or 0.0) - HALLUCINATION_FLOOR))
    return float(np.mean(scores))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--restarts", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="write models/signals.json and the general learned gate")
    args = parser.parse_args()

    runs = {}
    for domain, dataset in training_sets().items():
        result = BatchRunner(None).run(dataset)
        runs[domain] = (result.items, result.traces)
        print(f"{domain}: {dataset.describe()}; {result.summary()}")

    fitted = fit_all(runs, args.folds)
    print("\ncalibrator        held-out AUROC (grouped CV)        features")
    for c in fitted:
        print(f"{c.name:16}  {c.held_out_auroc}  {', '.join(c.features)}")
    by_name = {c.name: c for c in fitted}
    scored = {domain: [calibrated.with_probabilities(t, by_name) for t in traces] for domain, (_, traces) in runs.items()}
    tables = {domain: (SignalTable.from_traces(scored[domain]), M.codes([i.action for i in items]))
              for domain, (items, _) in runs.items()}

    def learned_gate_on(domains, features):
        """The learned gate fitted on these domains' traces at once, reading ``features`` (None: every signal)."""
        return fit_learned_gate(SignalTable.from_traces([t for d in domains for t in scored[d]]),
                                np.concatenate([tables[d][1] for d in domains]), features=features)

    declared = settings.defaults()
    base = gate_defaults(declared)
    space = [(n, grid(n)) for n in SEARCHED]
    best = coordinate_ascent(lambda v: objective(list(tables.values()), v), base, space, restarts=args.restarts)
    rows, lodo_objective = {}, {}
    for left_out in tables:
        others = [tables[d] for d in tables if d != left_out]
        chosen = coordinate_ascent(lambda v: objective(others, v), base, space, restarts=args.restarts)
        lodo_objective[left_out] = objective([tables[left_out]], chosen)
        table, gold = tables[left_out]
        rows[f"{left_out}: rule gate, thresholds from the other domains"] = M.action_metrics(gold, gate_table(table, chosen).codes)
        rows[f"{left_out}: rule gate, chosen defaults (in-sample)"] = M.action_metrics(gold, gate_table(table, best).codes)
        rows[f"{left_out}: rule gate, declared defaults"] = M.action_metrics(gold, gate_table(table, declared).codes)
        for name, features in FEATURE_SETS.items():
            gate = learned_gate_on([d for d in tables if d != left_out], features)
            rows[f"{left_out}: learned gate ({name}) from the other domains"] = M.action_metrics(
                gold, gate.predict(table)[0])
    print()
    print(M.format_comparison(rows))
    lodo = {name: np.mean([rows[f"{d}: learned gate ({name}) from the other domains"]["macro_f1"] for d in tables])
            for name in FEATURE_SETS}
    general = max(lodo, key=lodo.get)
    print("\ngeneral learned gate, mean leave-one-domain-out macro-F1: "
          + ", ".join(f"{name} {value:.3f}" for name, value in lodo.items()) + f" -> ships: {general}")
    print("\nobjective (macro-F1 less hallucination above the floor) per domain, and the mean:")
    for name, per_domain in (("declared defaults", {d: objective([tables[d]], declared) for d in tables}),
                             ("chosen on the other domains", lodo_objective),
                             ("chosen on all (in-sample)", {d: objective([tables[d]], best) for d in tables})):
        print(f"  {name:28} " + "  ".join(f"{d} {v:.3f}" for d, v in per_domain.items())
              + f"  mean {np.mean(list(per_domain.values())):.3f}")
    print("\nwhat each rule decides under the declared defaults (lift = precision / base rate of its action "
          "among the items it sees; about 1: it picks at random):")
    for domain, (table, gold) in tables.items():
        for row in rule_lift(table, gold, declared):
            print(f"  {domain:12} {row['rule']:20} {row['action']:8} fires {row['fires']:5d}  precision "
                  f"{row['precision']:.2f}  base rate {row['base_rate']:.2f}  lift {row['lift']:.2f}")
    print("\nthe calibrated thresholds chosen on the other domains (the declared rules fixed), scored on the left-out one:")
    space = [(n, grid(n)) for n in CALIBRATED_THRESHOLDS]
    for left_out in tables:
        others = [tables[d] for d in tables if d != left_out]
        chosen = coordinate_ascent(lambda v: objective(others, v), declared, space, restarts=args.restarts)
        m = M.action_metrics(tables[left_out][1], gate_table(tables[left_out][0], chosen).codes)
        print(f"  {left_out:12} " + ", ".join(f"{n} {chosen[n]}" for n in CALIBRATED_THRESHOLDS)
              + f"  -> objective {objective([tables[left_out]], chosen):.3f} (declared {objective([tables[left_out]], declared):.3f}),"
              f" macro-F1 {m['macro_f1']:.3f}, hallucination {m['hallucination_rate'] or 0:.3f}")
    print("\nchosen defaults (differences from core/settings.py):")
    for name in SEARCHED:
        if best[name] != declared[name]:
            print(f"  {name} = {best[name]}   (declared {declared[name]})")
    if args.write:
        save(fitted, calibrated.DEFAULT_FILE)
        learned_gate_on(list(tables), FEATURE_SETS[general]).save(ROOT / "presets" / "learned-gate-general.json")
        chosen = {name: best[name] for name in GATE_SETTINGS}
        (ROOT / "presets" / "training-fit.json").write_text(json.dumps(chosen, indent=1) + "\n", encoding="utf-8")
        print(f"\nwrote {calibrated.DEFAULT_FILE}, presets/learned-gate-general.json and presets/training-fit.json")


if __name__ == "__main__":
    main()
