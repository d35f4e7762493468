"""Fit the calibrated signals, choose the gate's defaults and fit the general learned gate — on
training data only (``../shared/data/train`` and ``train_kb/``).

    python scripts/fit_signals.py [--folds 5] [--restarts 3] [--space NAME ... | --no-search] [--write [--keep-calibrators]]

1. Analyses (or reads from the trace cache) the training sets of ``core.evaluation.training``:
   ShARC train trees, ContractNLI train contracts, SQuAD 2.0 train articles (not the held-out ones)
   and the questions of ``train_kb/``.
2. Fits each calibrator of ``core.evaluation.fit_signals.SPECS`` on the first three domains
   (``CALIBRATION_DOMAINS``) and prints its held-out AUROC per domain (cross-validation grouped by
   rule tree, contract and article).
3. Gives every training item the probabilities of calibrators fitted without its rule tree, contract,
   article or document (``cross_fitted``): what the rest is fitted on. Calibrators fitted on the same
   items would be surer there than on a new knowledge base, and the thresholds and the learned gate
   chosen on them would answer too readily.
4. Chooses the rule gate's defaults on the training domains, in three search spaces: the calibrated rules
   alone (their thresholds), every gate setting (the referent count and the failed-condition
   rule fixed), and the declared gate with only its calibrated thresholds moved, each of them only
   where moving it pays out of sample (``paying_names``). Each space is scored by grouped
   cross-validation (thresholds chosen on four fifths of the rule trees, contracts, articles and
   documents of every domain, scored on the rest) and by
   leave-one-domain-out (chosen on the other domains, scored on the one left out: a new knowledge base
   of a new kind is what a user brings) for the mean over the domains of macro-F1 less the
   hallucination rate above 15 % at its one-sided 90 % upper confidence bound (``objective``), beside the
   declared defaults of ``core/settings.py`` (never fitted on these domains, so their score is out of
   sample too). Of the spaces that beat the declared defaults both ways, the one with the best
   cross-validated mean (of all spaces when none does), fitted on all the training data, is
   ``presets/training-fit.json``; the script says whether it beats the declared defaults, which is when
   they should be replaced by it.
   It also lists the single rule switches that, flipped from the declared defaults one after another,
   lower no training domain's objective: a rule switched on must raise the mean by ``SWITCH_GAIN``, a
   rule switched off only raise it (one that costs nothing when removed is redundant there; one bit
   each: little room to fit noise).
5. Fits the general learned gate on all domains at once — over every signal, over the calibrated
   probabilities and the dialogue context alone (what means the same on every knowledge base), or over
   those and the rule gate's verdict under the declared defaults (stored in the gate file), each one
   multinomial regression or two binary steps (abstain or not, then ask or answer: "two-stage"), each
   deciding by the largest probability relative to the action's training share ("balanced") or by the
   largest probability ("argmax"), a two-stage gate step by step, answering at any P(ANSWER) or only
   where out of fold at least 80, 85 or 90 % of answers were right, its probabilities calibrated by
   isotonic regression or by Platt's sigmoid — and of the ``WITHIN_CANDIDATES`` with the best mean
   leave-one-domain-out objective (macro-F1 less hallucination above the floor, as for the defaults) keeps
   the one whose mean of that and its objective in grouped cross-validation within the domains is best.
   (Balanced multinomial decisions asked on a left-out domain as often as ASK was common in the others:
   ShARC left out, macro-F1 0.20; by the largest probability, 0.45. Two steps transfer better: ShARC
   left out, 0.73.)
With ``--write`` the calibrators go to models/signals.json, the learned gate to
presets/learned-gate-general.json and the chosen gate configuration to presets/training-fit.json
(its differences from core/settings.py are printed); ``--keep-calibrators`` leaves models/signals.json as it
is, and with ``--no-search`` nothing is searched and training-fit.json is not written.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from core import calibrated, settings
from core.evaluation import BatchRunner
from core.evaluation import metrics as M
from core.evaluation.calibration import GATE_SETTINGS, SETTINGS_BY_RULE, coordinate_ascent, grid, rule_lift
from core.gate.table import CONTEXT_FEATURES, SignalTable, gate_table
from core.evaluation.fit_signals import cross_fitted, fit_all, save
from core.evaluation.learned_gate import fit_learned_gate
from core.gate.learned import CALIBRATIONS, DECISIONS, RULE_VERDICT, STRUCTURES
from core.evaluation.training import group_of, training_sets

ROOT = Path(__file__).resolve().parent.parent
# The search starts from the calibrated rules alone; the older rules over raw signals may be switched on.
ON = ("topic_absent", "several_referents", "conditions_failed", "conditions_met", "condition_open", "fact_absent")
# Too few training questions could mean several documents to choose the referent count; a failed
# required condition answering "no", and every required condition met answering "yes", are what the
# dialogue means (a user who fails one of the conditions all needed is not asked about the rest, nor one
# who meets them all about any), whatever their lift on noisily read training rules.
FIXED = ("referents_min", "rule_several_referents", "rule_conditions_failed", "rule_conditions_met")
SEARCHED = tuple(n for n in GATE_SETTINGS if n not in FIXED)
# The search spaces for the declared defaults: (settings searched, whether the search starts from the
# calibrated rules alone or from the declared gate, whether each setting must pay out of sample to move).
SPACES = {"calibrated rules": (("topic_min", "fact_min", "statement_fact_min", "open_max"), "calibrated rules alone", False),
          "every gate setting": (SEARCHED, "calibrated rules alone", False),
          "declared gate, calibrated thresholds": (("topic_min", "fact_min", "statement_fact_min", "open_max", "depends_min"),
                                                   "declared", True)}
# What a general learned gate may read besides every signal: the calibrated probabilities, the referent
# count, the condition outcome and what the user has told. Raw retrieval and NLI scores are scaled by
# each knowledge base (a BM25 score grows with the corpus), the probabilities were fitted across several.
CALIBRATED_FEATURES = ("p_topic", "p_fact", "p_open", "p_met", "n_referents", "outcome:failed", "outcome:satisfied",
                       *CONTEXT_FEATURES)
# The calibrated features and the rule gate's verdict under the declared defaults: a weighted sum of the
# probabilities cannot rebuild the rules' reading (a failed required condition, a question with several
# referents), so this gate starts from the rules' answer and learns where the signals overrule it.
FEATURE_SETS = {"every signal": None, "calibrated": CALIBRATED_FEATURES,
                "calibrated and the rule gate's verdict": CALIBRATED_FEATURES + RULE_VERDICT}
# ANSWER only at a calibrated P(ANSWER) that kept this share of out-of-fold answers right (None: no floor)
PRECISION_FLOORS = (None, 0.8, 0.85, 0.9)
GATE_VARIANTS = {f"{name}, " + ("" if structure == "multinomial" else f"{structure}, ") + decision
                 + (f", answer precision {floor}" if floor else "")
                 + ("" if calibration == "isotonic" else f", {calibration}"):
                 (features, decision, floor, calibration, structure)
                 for name, features in FEATURE_SETS.items() for structure in STRUCTURES for decision in DECISIONS
                 for floor in PRECISION_FLOORS for calibration in CALIBRATIONS}
HALLUCINATION_FLOOR = 0.15  # the most answers to unanswerable questions a domain may have before the fit pays for them
# The floor is asked of knowledge bases nothing was fitted on, and a training domain's rate is an estimate from a
# few hundred questions: the fit pays where the rate's one-sided 90 % upper confidence bound passes the floor, so
# that a rate just under it on 390 contract hypotheses (standard error 0.017) is not taken as keeping it.
HALLUCINATION_Z = 1.2816
SWITCH_GAIN = 0.005  # the least rise of the mean objective for which a rule switch is worth flipping


# How many of the learned gates that score best left out by domain are also scored within the domains; the
# one with the best mean of the two ships. Left out by domain alone, a variant can win on how it copes with
# the other domains' mix of actions (the fifty-seventh session's gate over log-probabilities: higher left out
# by domain, lower within the domains in every draw and lower on the report sets).
WITHIN_CANDIDATES = 4


def fit_variant(table: SignalTable, gold: np.ndarray, variant: str):
    """The learned gate ``GATE_VARIANTS[variant]`` fitted on ``table``."""
    features, decision, floor, calibration, structure = GATE_VARIANTS[variant]
    return fit_learned_gate(table, gold, features=features, decision=decision, precision_floor=floor,
                            calibration=calibration, structure=structure)


def within_domain_codes(table: SignalTable, gold: np.ndarray, groups: np.ndarray, fit, folds: int) -> np.ndarray:
    """Out-of-fold action codes of a learned gate, grouped ``folds``-fold over every domain at once: each fold's
    rule trees, contracts, articles and documents gated by ``fit(table, gold)`` fitted on the others."""
    from sklearn.model_selection import GroupKFold
    codes = np.zeros(len(gold), dtype=np.int64)
    for train, test in GroupKFold(n_splits=folds, shuffle=True, random_state=0).split(gold, gold, groups):
        codes[test] = fit(table.take(train), gold[train]).predict(table.take(test))[0]
    return codes


def best_on_both(left_out: dict[str, float], within: dict[str, float]) -> str:
    """Of the variants scored both ways, the one with the best mean of its left-out-by-domain and
    within-domain objectives (the first listed among equals)."""
    return max(within, key=lambda name: (left_out[name] + within[name]) / 2)


def gate_defaults(base: dict) -> dict:
    values = dict(base)
    for name in (s.name for s in settings.SETTINGS if s.name.startswith("rule_")):
        values[name] = name.removeprefix("rule_") in ON
    return values


def objective(parts, values) -> float:
    """Mean over the domains of macro-F1, less each domain's hallucination rate above
    ``HALLUCINATION_FLOOR`` (``hallucination_excess``): an answer given where the gold action is to ask or
    abstain costs more than the macro-F1 alone charges for it (with macro-F1 alone, the fit answers 24–41 % of
    the training items that should not be answered)."""
    return float(np.mean([domain_objective(gold, gate_table(table, values).codes) for table, gold in parts]))


def unused_as_declared(values: dict, declared: dict, tables) -> dict:
    """``values`` with every rule that decides no training item switched off (a threshold at the end of its
    range keeps a rule "on" that can never fire), and every threshold that only switched-off rules read put
    back to its declared value: a search moves those freely (they change nothing on the training data),
    and a slider should not show such a move. A rule declared on whose settings the search left as declared
    stays on: the training data holds no case of it (no question there names a thing several documents
    describe), which is no evidence against it."""
    decided = set().union(*(set(gate_table(table, values).rules) for table, _ in tables.values()))

    def as_declared(rule: str) -> bool:
        return declared[f"rule_{rule}"] and all(values[n] == declared[n] for n in SETTINGS_BY_RULE[rule])
    values = {k: (v and (k[5:] in decided or k in FIXED or as_declared(k[5:]))
                  if k.startswith("rule_") and k in GATE_SETTINGS else v)
              for k, v in values.items()}
    used = set().union(*(names for rule, names in SETTINGS_BY_RULE.items() if values[f"rule_{rule}"]))
    return {k: (v if k.startswith("rule_") or k in used or k not in GATE_SETTINGS else declared[k])
            for k, v in values.items()}


def domain_objective(gold, codes) -> float:
    return metrics_objective(M.action_metrics(gold, codes))


def metrics_objective(m: dict) -> float:
    """One domain's objective from its action metrics: macro-F1 less ``hallucination_excess``."""
    return m["macro_f1"] - hallucination_excess(m)


def hallucination_excess(m: dict) -> float:
    """How far a domain's hallucination rate passes ``HALLUCINATION_FLOOR`` at its one-sided 90 % upper
    confidence bound (normal approximation over the questions that should not be answered); 0 below it."""
    rate = m["hallucination_rate"] or 0.0
    unanswerable = m["per_action"]["ASK"]["support"] + m["per_action"]["ABSTAIN"]["support"]
    bound = rate + HALLUCINATION_Z * np.sqrt(rate * (1 - rate) / unanswerable) if unanswerable else rate
    return max(0.0, float(bound) - HALLUCINATION_FLOOR)


def pareto_switches(tables, declared: dict) -> list[tuple[str, bool, dict[str, float]]]:
    """Rule switches flipped one after another from ``declared``: at each step the flip that raises the mean
    objective most while lowering no domain's — by ``SWITCH_GAIN`` or more to switch a rule on, by anything
    to switch one off (a simpler gate that loses nothing). Each step is (setting, new value, objective per
    domain after it)."""
    values, steps = dict(declared), []
    current = {d: objective([tables[d]], values) for d in tables}
    while True:
        best = None
        for name in (n for n in GATE_SETTINGS if n.startswith("rule_") and n not in FIXED):
            flipped = {**values, name: not values[name]}
            scores = {d: objective([tables[d]], flipped) for d in tables}
            gain = np.mean(list(scores.values())) - np.mean(list(current.values()))
            enough = gain >= SWITCH_GAIN if flipped[name] else gain > 0
            if all(scores[d] >= current[d] for d in tables) and enough and (best is None or gain > best[0]):
                best = (gain, name, scores)
        if best is None:
            return steps
        _, name, current = best
        values[name] = not values[name]
        steps.append((name, values[name], current))


def paying_names(names, cv_mean) -> tuple[str, ...]:
    """``names`` less those whose search does not pay out of sample, dropped one at a time (backward
    elimination): a setting stays at its declared value when the cross-validated mean ``cv_mean(names)``
    with it held there is at least as high as with it searched. A threshold fitted to one training
    domain's make-up (the share of off-topic questions in ShARC's trees) moves only if that move
    holds on the rule trees, contracts and articles the fit did not see."""
    names = tuple(names)
    current = cv_mean(names)
    while names:
        held = {n: cv_mean(tuple(m for m in names if m != n)) for n in names}
        name = max(held, key=held.get)
        if held[name] < current:
            return names
        names, current = tuple(m for m in names if m != name), held[name]
    return names


def cross_validated_codes(tables, groups, search, folds: int) -> dict[str, np.ndarray]:
    """Each domain's out-of-fold actions: fold k of every domain (split by group) gated with the
    configuration ``search`` chose on the other folds of every domain."""
    from sklearn.model_selection import GroupKFold
    splits = {d: list(GroupKFold(n_splits=folds).split(np.zeros(len(g)), groups=g)) for d, g in groups.items()}
    oof = {d: np.zeros(len(g), dtype=np.int64) for d, g in groups.items()}
    for k in range(folds):
        chosen = search([(tables[d][0].take(splits[d][k][0]), tables[d][1][splits[d][k][0]]) for d in tables])
        for d in tables:
            held = splits[d][k][1]
            oof[d][held] = gate_table(tables[d][0].take(held), chosen).codes
    return oof


def report_search(searched, declared: dict, declared_objective: dict, tables) -> dict:
    """Print whether the best searched space beats the declared defaults out of sample; return its
    configuration fitted on every training domain (as ``unused_as_declared`` shows it)."""
    declared_score = np.mean(list(declared_objective.values()))
    beating = [n for n in searched if declared_score < min(np.mean(list(searched[n][1].values())),
                                                           np.mean(list(searched[n][2].values())))]
    chosen_space = max(beating or searched, key=lambda n: np.mean(list(searched[n][1].values())))
    best = unused_as_declared(searched[chosen_space][0], declared, tables)
    fitted_score = np.mean(list(searched[chosen_space][1].values()))
    left_out_score = np.mean(list(searched[chosen_space][2].values()))
    verdict = ("keep the declared defaults: the searched configuration does not beat them both cross-validated and "
               "on a domain left out" if declared_score >= min(fitted_score, left_out_score) else
               f"declare the '{chosen_space}' configuration: it beats the declared defaults out of sample")
    print(f"\nbest searched space: '{chosen_space}' (grouped CV {fitted_score:.3f}, other domains "
          f"{left_out_score:.3f}; declared defaults {declared_score:.3f}) -> {verdict}. Fitted on every training "
          "domain (presets/training-fit.json), it differs from core/settings.py in:")
    for name in GATE_SETTINGS:
        if best[name] != declared[name]:
            print(f"  {name} = {best[name]}   (declared {declared[name]})")
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--restarts", type=int, default=3)
    searching = parser.add_mutually_exclusive_group()
    searching.add_argument("--space", action="append", choices=tuple(SPACES), dest="spaces",
                        help="search only this space for the defaults (repeatable; default: every space)")
    searching.add_argument("--no-search", action="store_true",
                        help="keep the declared defaults unsearched: fit the calibrators and the learned gate only "
                             "(the whole script, every space searched, takes about 11 minutes on two cores)")
    parser.add_argument("--keep-calibrators", action="store_true",
                        help="with --write, leave models/signals.json as it is (the learned gate and the "
                             "thresholds are fitted on cross-fitted probabilities either way)")
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
    # The gate reads the calibrators' probabilities on items they were not fitted on, as on a user's knowledge base.
    scored = cross_fitted(runs, args.folds)
    tables = {domain: (SignalTable.from_traces(scored[domain]), M.codes([i.action for i in items]))
              for domain, (items, _) in runs.items()}

    def learned_gate_on(domains, variant):
        """The learned gate fitted on these domains' traces at once, as ``GATE_VARIANTS[variant]`` says."""
        return fit_variant(SignalTable.from_traces([t for d in domains for t in scored[d]]),
                           np.concatenate([tables[d][1] for d in domains]), variant)

    declared = settings.defaults()
    starts = {"calibrated rules alone": gate_defaults(declared), "declared": declared}
    groups = {d: np.array([group_of(i) for i in runs[d][0]]) for d in tables}
    rows = {}
    searched = {}  # space -> (fitted on all, cross-validated objective per domain, leave-one-domain-out per domain)
    for space_name in ([] if args.no_search else args.spaces or SPACES):
        names, start, must_pay = SPACES[space_name]
        print(f"searching '{space_name}' ...", flush=True)
        def searcher(names, start=starts[start]):
            space = [(n, grid(n)) for n in names]
            return lambda parts: coordinate_ascent(lambda v: objective(parts, v), start, space, restarts=args.restarts)
        oof_of = {}  # names searched -> out-of-fold codes, each cross-validation run once

        def out_of_fold(names):
            if names not in oof_of:
                oof_of[names] = cross_validated_codes(tables, groups, searcher(names), args.folds)
            return oof_of[names]

        def cv_mean(names):
            oof = out_of_fold(names)
            return float(np.mean([domain_objective(tables[d][1], oof[d]) for d in tables]))
        names = tuple(names)
        if must_pay:
            names = paying_names(names, cv_mean)
            print(f"'{space_name}': searched where it pays out of sample: {', '.join(names) or 'none'}")
        search = searcher(names)
        oof = out_of_fold(names)
        lodo = {d: objective([tables[d]], search([tables[o] for o in tables if o != d])) for d in tables}
        cross_validated = {d: domain_objective(tables[d][1], oof[d]) for d in tables}
        searched[space_name] = (search(list(tables.values())), cross_validated, lodo)
        for d in tables:
            rows[f"{d}: rule gate ({space_name}), cross-validated"] = M.action_metrics(tables[d][1], oof[d])
    for left_out in tables:
        table, gold = tables[left_out]
        rows[f"{left_out}: rule gate, declared defaults"] = M.action_metrics(gold, gate_table(table, declared).codes)
        for name in GATE_VARIANTS:
            gate = learned_gate_on([d for d in tables if d != left_out], name)
            rows[f"{left_out}: learned gate ({name}) from the other domains"] = M.action_metrics(
                gold, gate.predict(table)[0])
    print()
    print(M.format_comparison(dict(sorted(rows.items()))))
    def lodo_mean(name, score):
        return float(np.mean([score(rows[f"{d}: learned gate ({name}) from the other domains"]) for d in tables]))
    # chosen like the rule gate's defaults: macro-F1 less the hallucination rate above the floor
    lodo = {name: lodo_mean(name, metrics_objective) for name in GATE_VARIANTS}
    print("\ngeneral learned gate, mean leave-one-domain-out objective (macro-F1): "
          + ", ".join(f"{name} {value:.3f} ({lodo_mean(name, lambda m: m['macro_f1']):.3f})"
                      for name, value in lodo.items()))
    pooled = SignalTable.from_traces([t for d in tables for t in scored[d]])
    pooled_gold = np.concatenate([tables[d][1] for d in tables])
    pooled_domains = np.concatenate([[d] * len(tables[d][1]) for d in tables])
    pooled_groups = np.concatenate([[f"{d}:{g}" for g in groups[d]] for d in tables])
    within = {}
    for name in sorted(lodo, key=lodo.get, reverse=True)[:WITHIN_CANDIDATES]:
        codes = within_domain_codes(pooled, pooled_gold, pooled_groups, lambda t, g, v=name: fit_variant(t, g, v),
                                    args.folds)
        within[name] = float(np.mean([domain_objective(pooled_gold[pooled_domains == d], codes[pooled_domains == d])
                                      for d in tables]))
    general = best_on_both(lodo, within)
    print(f"the {WITHIN_CANDIDATES} best left out by domain, also within the domains (grouped {args.folds}-fold) -> "
          + "; ".join(f"{name}: {lodo[name]:.3f} left out, {value:.3f} within" for name, value in within.items())
          + f" -> ships: {general}")
    print("\nobjective (macro-F1 less hallucination above the floor) per domain, and the mean:")
    declared_objective = {d: objective([tables[d]], declared) for d in tables}  # never fitted here: out of sample
    lines = [("declared defaults", declared_objective)]
    for space_name, (_, cv, lodo_objective) in searched.items():
        lines += [(f"{space_name}, grouped CV", cv), (f"{space_name}, other domains", lodo_objective)]
    for name, per_domain in lines:
        print(f"  {name:36} " + "  ".join(f"{d} {v:.3f}" for d, v in per_domain.items())
              + f"  mean {np.mean(list(per_domain.values())):.3f}")
    if searched:
        best = report_search(searched, declared, declared_objective, tables)
    steps = pareto_switches(tables, declared)
    print(f"\nrule switches that lower no training domain's objective, flipped one after another from the declared "
          f"defaults (on: the mean rises by >= {SWITCH_GAIN}; off: it rises):" + ("" if steps else " none"))
    for name, value, scores in steps:
        print(f"  {name} = {value}: " + "  ".join(f"{d} {v:.3f}" for d, v in scores.items())
              + f"  mean {np.mean(list(scores.values())):.3f}")
    print("\nwhat each rule decides under the declared defaults (lift = precision / base rate of its action "
          "among the items it sees; about 1: it picks at random):")
    for domain, (table, gold) in tables.items():
        for row in rule_lift(table, gold, declared):
            print(f"  {domain:12} {row['rule']:20} {row['action']:8} fires {row['fires']:5d}  precision "
                  f"{row['precision']:.2f}  base rate {row['base_rate']:.2f}  lift {row['lift']:.2f}")
    if args.write:
        fit_variant(pooled, pooled_gold, general).save(ROOT / "presets" / "learned-gate-general.json")  # every domain
        written = ["presets/learned-gate-general.json"]
        if not args.keep_calibrators:
            save(fitted, calibrated.DEFAULT_FILE)
            written.append(str(calibrated.DEFAULT_FILE))
        if searched:
            chosen = {name: best[name] for name in GATE_SETTINGS}
            (ROOT / "presets" / "training-fit.json").write_text(json.dumps(chosen, indent=1) + "\n", encoding="utf-8")
            written.append("presets/training-fit.json")
        print(f"\nwrote {', '.join(written)}")


if __name__ == "__main__":
    main()
