"""Fitting the learned gate (scikit-learn); applying it is ``core.gate.learned``, numpy only.

A multinomial logistic regression (balanced class weights, standardised features) gives raw
probabilities; per-action isotonic or Platt calibrators fitted on *out-of-fold* raw probabilities
make them honest; an optional precision floor for ANSWER is chosen on the same out-of-fold
probabilities. ``cross_validate`` gives out-of-fold actions for reporting.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

import numpy as np

from core.evaluation import metrics as M
from core.gate.learned import (CALIBRATIONS, DECISIONS, RULE_VERDICT, LearnedGate, feature_matrix, feature_names,
                               gate_settings, logistic_probabilities, logit)
from core.gate.table import SignalTable
from core.types import ACTIONS


def fit_learned_gate(table: SignalTable, gold, *, calibration: str = "isotonic", decision: str = "balanced",
                     precision_floor: float | None = None, folds: int = 5, C: float = 1.0, seed: int = 0,
                     info: Mapping[str, Any] | None = None, features: Sequence[str] | None = None,
                     rule_settings: Mapping[str, Any] | None = None) -> LearnedGate:
    """Fit a learned gate on the signals of ``table`` against the gold actions: logistic regression with
    balanced class weights, calibrators fitted on out-of-fold raw probabilities. ``features`` limits
    what it reads (default: every signal; ``core.gate.learned.feature_names``); the rule gate's verdict
    ("rule:ASK", …) is read under ``rule_settings`` (default: the declared gate settings), which the
    gate stores."""
    if calibration not in CALIBRATIONS:
        raise ValueError(f"calibration must be one of {', '.join(CALIBRATIONS)}, not {calibration!r}")
    if decision not in DECISIONS:
        raise ValueError(f"decision must be one of {', '.join(DECISIONS)}, not {decision!r}")
    if precision_floor is not None and not 0 < precision_floor < 1:
        raise ValueError(f"the precision floor must lie in (0, 1), not {precision_floor}")
    g = M.codes(gold)
    present = [a for a in range(len(ACTIONS)) if (g == a).any()]
    if len(present) < 2:
        raise ValueError("the learned gate needs gold items of at least two actions")
    names = list(features) if features is not None else feature_names(table)
    rule_settings = gate_settings(rule_settings) if any(n in RULE_VERDICT for n in names) else None
    X = feature_matrix(table, names, rule_settings)
    mean, scale = X.mean(axis=0), X.std(axis=0)
    scale[scale == 0] = 1.0
    Z = (X - mean) / scale
    y = np.searchsorted(present, g)  # class index among the present actions
    raw_oof = np.zeros((len(y), len(present)))
    from sklearn.model_selection import StratifiedKFold
    k = max(2, min(folds, int(np.bincount(y).min())))
    for train, test in StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(Z, y):
        raw_oof[test] = logistic_probabilities(_logistic(Z[train], y[train], C), Z[test], len(present))
    model = _logistic(Z, y, C)
    calibrators = tuple(_fit_calibrator(raw_oof[:, c], y == c, calibration) for c in range(len(present)))
    priors = np.bincount(y, minlength=len(present)) / len(y)
    gate = LearnedGate(features=tuple(names), classes=tuple(ACTIONS[a] for a in present), mean=mean, scale=scale,
                       coef=model[0], intercept=model[1], calibration=calibration, calibrators=calibrators,
                       priors=priors, decision=decision, info=dict(info or {}), rule_settings=rule_settings)
    if precision_floor is not None and "ANSWER" in gate.classes:
        probs = gate.calibrate(raw_oof)
        threshold = _floor_threshold(probs, y, gate, precision_floor)
        gate = _replace(gate, answer_threshold=threshold)
    return _replace(gate, info={**gate.info, "n": int(len(y)), "counts": {
        gate.classes[c]: int((y == c).sum()) for c in range(len(present))}, "precision_floor": precision_floor,
        "C": C, "folds": k})


def _replace(gate: LearnedGate, **changes) -> LearnedGate:
    return dataclasses.replace(gate, **changes)


def _logistic(Z: np.ndarray, y: np.ndarray, C: float) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits
    # One BLAS thread: on a problem this small, threads only contend (30x slower on a busy 2-core box).
    with threadpool_limits(1):
        model = LogisticRegression(C=C, class_weight="balanced", max_iter=2000).fit(Z, y)
    return model.coef_, model.intercept_


def _fit_calibrator(p: np.ndarray, positive: np.ndarray, method: str) -> dict[str, list[float]]:
    if method == "isotonic":
        from sklearn.isotonic import IsotonicRegression
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(p, positive.astype(float))
        return {"x": iso.X_thresholds_.tolist(), "y": iso.y_thresholds_.tolist()}
    from sklearn.linear_model import LogisticRegression
    platt = LogisticRegression(C=1e6, max_iter=1000).fit(logit(p).reshape(-1, 1), positive.astype(int))
    return {"a": float(platt.coef_[0, 0]), "b": float(platt.intercept_[0])}


def _floor_threshold(probs: np.ndarray, y: np.ndarray, gate: LearnedGate, floor: float) -> float:
    """The lowest P(ANSWER) bar at which the out-of-fold ANSWER precision reaches ``floor``."""
    a = gate.classes.index("ANSWER")
    full = np.zeros((len(y), len(ACTIONS)))
    for c, name in enumerate(gate.classes):
        full[:, ACTIONS.index(name)] = probs[:, c]
    for t in np.unique(np.round(probs[:, a], 4)):
        chosen = _replace(gate, answer_threshold=float(t)).choose(full)
        answered = chosen == ACTIONS.index("ANSWER")
        if answered.any() and (y[answered] == a).mean() >= floor:
            return float(t)
    return 1.0 + 1e-9  # unreachable: never answer


def cross_validate(table: SignalTable, gold, *, folds: int = 5, seed: int = 0,
                   **fit_kwargs) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold (action codes, probabilities): each fold predicted by a gate fitted on the others."""
    g = M.codes(gold)
    from sklearn.model_selection import StratifiedKFold
    present = np.bincount(g)[np.bincount(g) > 0]
    k = max(2, min(folds, int(present.min())))
    codes = np.zeros(len(g), dtype=np.int64)
    probs = np.zeros((len(g), len(ACTIONS)))
    for train, test in StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(np.zeros(len(g)), g):
        gate = fit_learned_gate(table.take(train), g[train], folds=folds, seed=seed, **fit_kwargs)
        codes[test], probs[test] = gate.predict(table.take(test))
    return codes, probs
