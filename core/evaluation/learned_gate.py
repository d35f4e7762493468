"""Fitting the learned gate (scikit-learn); applying it is ``core.gate.learned``, numpy only.

A multinomial logistic regression (balanced class weights, standardised features) gives raw
probabilities, or, for a two-stage gate, one binary regression for ABSTAIN against the rest and one
for ASK against ANSWER among the rest; isotonic or Platt calibrators fitted on *out-of-fold* raw
probabilities make them honest; an optional precision floor for ANSWER is chosen on the same
out-of-fold probabilities. ``cross_validate`` gives out-of-fold actions for reporting.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

import numpy as np

from core.evaluation import metrics as M
from core.gate.learned import (CALIBRATIONS, DECISIONS, RULE_VERDICT, STRUCTURES, LearnedGate, apply_calibrator,
                               feature_matrix, feature_names, gate_settings, logistic_probabilities, logit)
from core.gate.table import SignalTable
from core.types import ACTIONS


def fit_learned_gate(table: SignalTable, gold, *, calibration: str = "isotonic", decision: str = "balanced",
                     precision_floor: float | None = None, folds: int = 5, C: float = 1.0, seed: int = 0,
                     info: Mapping[str, Any] | None = None, features: Sequence[str] | None = None,
                     rule_settings: Mapping[str, Any] | None = None, structure: str = "multinomial") -> LearnedGate:
    """Fit a learned gate on the signals of ``table`` against the gold actions: logistic regression with
    balanced class weights (one multinomial, or two binary steps: ``structure``), calibrators fitted on
    out-of-fold raw probabilities. ``features`` limits what it reads (default: every signal;
    ``core.gate.learned.feature_names``); the rule gate's verdict ("rule:ASK", …) is read under
    ``rule_settings`` (default: the declared gate settings), which the gate stores."""
    if calibration not in CALIBRATIONS:
        raise ValueError(f"calibration must be one of {', '.join(CALIBRATIONS)}, not {calibration!r}")
    if decision not in DECISIONS:
        raise ValueError(f"decision must be one of {', '.join(DECISIONS)}, not {decision!r}")
    if structure not in STRUCTURES:
        raise ValueError(f"structure must be one of {', '.join(STRUCTURES)}, not {structure!r}")
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
    from sklearn.model_selection import StratifiedKFold
    k = max(2, min(folds, int(np.bincount(y).min())))
    common = dict(features=tuple(names), classes=tuple(ACTIONS[a] for a in present), mean=mean, scale=scale,
                  calibration=calibration, decision=decision, info=dict(info or {}), rule_settings=rule_settings,
                  structure=structure)
    if structure == "two-stage":
        gate, out_of_fold = _fit_two_stage(Z, g, common, C, k, seed)
    else:
        raw_oof = np.zeros((len(y), len(present)))
        for train, test in StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(Z, y):
            raw_oof[test] = logistic_probabilities(_logistic(Z[train], y[train], C), Z[test], len(present))
        model = _logistic(Z, y, C)
        calibrators = tuple(_fit_calibrator(raw_oof[:, c], y == c, calibration) for c in range(len(present)))
        gate = LearnedGate(coef=model[0], intercept=model[1], calibrators=calibrators,
                           priors=np.bincount(y, minlength=len(present)) / len(y), **common)
        out_of_fold = np.zeros((len(y), len(ACTIONS)))
        out_of_fold[:, present] = gate.calibrate(raw_oof)
    if precision_floor is not None and "ANSWER" in gate.classes:
        gate = _replace(gate, answer_threshold=_floor_threshold(out_of_fold, g, gate, precision_floor))
    return _replace(gate, info={**gate.info, "n": int(len(y)), "counts": {
        gate.classes[c]: int((y == c).sum()) for c in range(len(present))}, "precision_floor": precision_floor,
        "C": C, "folds": k})


def _fit_two_stage(Z: np.ndarray, g: np.ndarray, common: Mapping[str, Any], C: float, folds: int,
                   seed: int) -> tuple[LearnedGate, np.ndarray]:
    """A two-stage gate and its out-of-fold (n, 3) probabilities: ABSTAIN against the rest on every row, then
    ASK against ANSWER on the rows not abstained on (a row abstained on gets the second step fitted without
    it). A step whose training rows hold one side only stays at zeros (``LearnedGate.compose``)."""
    abstain = g == ACTIONS.index("ABSTAIN")
    rest = ~abstain
    ask = g == ACTIONS.index("ASK")
    steps = [_binary_step(Z, abstain, C, common["calibration"], folds, seed),
             _binary_step(Z[rest], ask[rest], C, common["calibration"], folds, seed)]
    share_ask = float(ask[rest].mean()) if rest.any() else 0.0
    gate = LearnedGate(coef=np.vstack([s[0] for s in steps]), intercept=np.array([s[1] for s in steps]),
                       calibrators=tuple(s[2] for s in steps), priors=np.array([abstain.mean(), share_ask]), **common)
    p_ask = gate.step_probabilities(Z)[1]  # out of sample on the rows abstained on
    p_ask[rest] = steps[1][3]
    return gate, gate.compose(steps[0][3], p_ask)


def _binary_step(Z: np.ndarray, positive: np.ndarray, C: float, calibration: str, folds: int,
                 seed: int) -> tuple[np.ndarray, float, dict, np.ndarray]:
    """(coefficients, intercept, calibrator, out-of-fold calibrated probability) of one binary step;
    zeros, no calibrator and the positive share where its rows hold one side only."""
    from sklearn.model_selection import StratifiedKFold
    if positive.all() or not positive.any():
        return np.zeros(Z.shape[1]), 0.0, {}, np.full(len(positive), float(positive.mean()) if len(positive) else 0.0)
    y = positive.astype(int)
    k = max(2, min(folds, int(y.sum()), int(len(y) - y.sum())))
    raw = np.zeros(len(y))
    for train, test in StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(Z, y):
        raw[test] = logistic_probabilities(_logistic(Z[train], y[train], C), Z[test], 2)[:, 1]
    coef, intercept = _logistic(Z, y, C)
    calibrator = _fit_calibrator(raw, positive, calibration)
    return coef[0], float(intercept[0]), calibrator, apply_calibrator(calibrator, raw, calibration)


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


def _floor_threshold(probs: np.ndarray, g: np.ndarray, gate: LearnedGate, floor: float) -> float:
    """The lowest P(ANSWER) bar at which the out-of-fold ANSWER precision reaches ``floor`` (``probs``: (n, 3)
    out-of-fold probabilities, ``g``: gold action codes)."""
    a = ACTIONS.index("ANSWER")
    for t in np.unique(np.round(probs[:, a], 4)):
        chosen = _replace(gate, answer_threshold=float(t)).choose(probs)
        answered = chosen == a
        if answered.any() and (g[answered] == a).mean() >= floor:
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
