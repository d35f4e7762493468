"""A learned gate: calibrated logistic regression over the signals (HALT-RAG style).

Features are every numeric ``Signals`` field, each ambiguity heuristic, a
one-hot of ``condition_outcome`` and, when fitted on traces, the dialogue context
(``calibration.context_features``: answered follow-ups, scenario length) and the strongest NLI and retrieval
scores (``calibration.evidence_features``). A multinomial logistic regression (balanced
class weights, standardised features) gives raw probabilities; per-action
isotonic or Platt calibrators fitted on *out-of-fold* raw probabilities make them
honest. The action is the calibrated probability's argmax, by default divided by
each action's training share ("balanced", which suits macro-F1 on skewed sets);
an optional precision floor for ANSWER raises the bar an answer must clear.

The fitted gate is a small JSON file (coefficients, scaler, calibrators): no
pickle, readable and diffable. ``LearnedGate.load(path).decide(trace)`` returns
the action and the per-action probabilities and, like ``core.gate.decide``, calls no model.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from core import models
from core.evaluation import metrics as M
from core.evaluation.calibration import OUTCOMES, TRACE_PREFIXES, SignalTable
from core.gate import answer_polarity
from core.types import ACTIONS, Decision, RuleResult, Signals, Trace

KIND = "answerability-workbench-learned-gate"
VERSION = 1
CALIBRATIONS = ("isotonic", "platt")
DECISIONS = ("balanced", "argmax")


def feature_names(table: SignalTable) -> list[str]:
    """What the gate reads: numeric signals, ambiguity heuristics, condition-outcome one-hots."""
    return list(table.columns) + [f"outcome:{o}" for o in OUTCOMES]


def _matrix(table: SignalTable, names: Sequence[str]) -> np.ndarray:
    return np.column_stack([table.column(n) for n in names]) if len(table) else np.zeros((0, len(names)))


@dataclass(frozen=True)
class LearnedGate:
    """A fitted learned gate; build with ``fit`` or ``load``, use with ``decide`` / ``predict``."""
    features: tuple[str, ...]
    classes: tuple[str, ...]  # the actions seen in training, in ACTIONS order
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray  # (n_classes, n_features); for two classes one row, for the second class
    intercept: np.ndarray
    calibration: str  # isotonic | platt
    calibrators: tuple[dict[str, list[float]], ...]  # per class: {"x", "y"} (isotonic) or {"a", "b"} (platt)
    priors: np.ndarray  # training share of each class
    decision: str = "balanced"
    answer_threshold: float | None = None  # min calibrated P(ANSWER) to answer (from the precision floor)
    info: dict[str, Any] = field(default_factory=dict)

    # -- fitting --
    @classmethod
    def fit(cls, table: SignalTable, gold, *, calibration: str = "isotonic", decision: str = "balanced",
            precision_floor: float | None = None, folds: int = 5, C: float = 1.0, seed: int = 0,
            info: Mapping[str, Any] | None = None) -> "LearnedGate":
        """Fit on the signals of ``table`` against the gold actions."""
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
        names = feature_names(table)
        X = _matrix(table, names)
        mean, scale = X.mean(axis=0), X.std(axis=0)
        scale[scale == 0] = 1.0
        Z = (X - mean) / scale
        y = np.searchsorted(present, g)  # class index among the present actions
        raw_oof = np.zeros((len(y), len(present)))
        from sklearn.model_selection import StratifiedKFold
        k = max(2, min(folds, int(np.bincount(y).min())))
        for train, test in StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(Z, y):
            raw_oof[test] = _proba(_logistic(Z[train], y[train], C), Z[test], len(present))
        model = _logistic(Z, y, C)
        calibrators = tuple(_fit_calibrator(raw_oof[:, c], y == c, calibration) for c in range(len(present)))
        priors = np.bincount(y, minlength=len(present)) / len(y)
        gate = cls(features=tuple(names), classes=tuple(ACTIONS[a] for a in present), mean=mean, scale=scale,
                   coef=model[0], intercept=model[1], calibration=calibration, calibrators=calibrators,
                   priors=priors, decision=decision, info=dict(info or {}))
        if precision_floor is not None and "ANSWER" in gate.classes:
            probs = gate._calibrate(raw_oof)
            threshold = _floor_threshold(probs, y, gate, precision_floor)
            gate = _replace(gate, answer_threshold=threshold)
        return _replace(gate, info={**gate.info, "n": int(len(y)), "counts": {
            gate.classes[c]: int((y == c).sum()) for c in range(len(present))}, "precision_floor": precision_floor,
            "C": C, "folds": k})

    # -- applying --
    def probabilities(self, table: SignalTable) -> np.ndarray:
        """Calibrated probabilities, shape (n, 3) in ACTIONS order (0 for actions not trained on)."""
        missing = [f for f in self.features if not (f in table.columns or f.startswith(("outcome:", "amb:")))]
        if any(f.startswith(TRACE_PREFIXES) for f in missing):
            raise ValueError("this learned gate reads the dialogue context and passage scores: "
                             "give it the whole Trace, not bare Signals")
        if missing:
            raise ValueError(f"the learned gate was trained on signals these traces lack ({', '.join(missing)}): "
                             f"retrain it with `python -m core calibrate … --learned-gate`")
        Z = (_matrix(table, self.features) - self.mean) / self.scale
        probs = self._calibrate(_proba((self.coef, self.intercept), Z, len(self.classes)))
        out = np.zeros((len(table), len(ACTIONS)))
        for c, name in enumerate(self.classes):
            out[:, ACTIONS.index(name)] = probs[:, c]
        return out

    def predict(self, table: SignalTable) -> tuple[np.ndarray, np.ndarray]:
        """(action codes, probabilities) for every row; rows without passages abstain."""
        probs = self.probabilities(table)
        codes = self._choose(probs)
        codes[~table.has_passages] = ACTIONS.index("ABSTAIN")
        return codes, probs

    def decide(self, trace: Trace | Signals, has_passages: bool = True) -> tuple[str, dict[str, float]]:
        """The action for one question and the calibrated probability of each action.

        Pass the Trace: a gate trained on traces also reads the dialogue context and passage scores;
        bare Signals suffice only for a gate trained on a table made from signals.
        """
        if isinstance(trace, Trace):
            table = SignalTable.from_traces([trace])
        else:
            table = SignalTable.from_signals([trace], [has_passages])
        codes, probs = self.predict(table)
        return ACTIONS[codes[0]], {a: float(p) for a, p in zip(ACTIONS, probs[0])}

    def as_decision(self, trace: Trace, rule_decision: Decision, source: str = "") -> Decision:
        """The learned gate's Decision for one trace, in the shape ``core.gate.decide`` returns: a
        ``learned_gate`` entry that decides, then the rule gate's rules as they evaluated, none firing
        (so the gate trace still shows what each rule would have done)."""
        action, probs = self.decide(trace)
        shown = ", ".join(f"P({a}) {probs[a]:.2f}" for a in ACTIONS if a in self.classes)
        fitted = self.info.get("dataset") or f"{self.info.get('n', '?')} labelled items"
        how = ("the highest after dividing each by its share of the training labels" if self.decision == "balanced"
               else "the highest")
        floor = (f"; ANSWER needs P(ANSWER) ≥ {self.answer_threshold:.2f}" if self.answer_threshold is not None
                 else "")
        reason = (f"Learned gate{f' {source}' if source else ''} (logistic regression over the signals, "
                  f"{self.calibration}-calibrated, fitted on {fitted}): {shown}; {action} is {how}{floor}. "
                  f"The rule gate would say {rule_decision.action} (rule {rule_decision.rule}).")
        decided = RuleResult("learned_gate", action, True, True, (), reason)
        rules = tuple(dataclasses.replace(r, fired=False) for r in rule_decision.rules)
        return Decision(action=action, rule="learned_gate", reason=reason, rules=(decided, *rules),
                        answer_polarity=answer_polarity(action, trace.signals.condition_outcome))

    def _calibrate(self, raw: np.ndarray) -> np.ndarray:
        cal = np.column_stack([_apply_calibrator(c, raw[:, i], self.calibration)
                               for i, c in enumerate(self.calibrators)])
        total = cal.sum(axis=1, keepdims=True)
        return np.where(total > 0, cal / np.where(total > 0, total, 1), 1.0 / cal.shape[1])

    def _choose(self, probs: np.ndarray) -> np.ndarray:
        """Action codes from (n, 3) probabilities: (balanced) argmax, then the ANSWER precision floor."""
        idx = [ACTIONS.index(c) for c in self.classes]
        p = probs[:, idx]
        weighted = p / self.priors if self.decision == "balanced" else p
        order = np.argsort(-weighted, axis=1, kind="stable")
        choice = order[:, 0]
        if self.answer_threshold is not None and "ANSWER" in self.classes:
            a = self.classes.index("ANSWER")
            demote = (choice == a) & (p[:, a] < self.answer_threshold)
            choice = np.where(demote, order[:, 1], choice)
        return np.array(idx)[choice]

    # -- the JSON file --
    def to_json(self) -> dict[str, Any]:
        return {"kind": KIND, "version": VERSION, "features": list(self.features), "classes": list(self.classes),
                "scaler": {"mean": self.mean.tolist(), "scale": self.scale.tolist()},
                "coef": self.coef.tolist(), "intercept": self.intercept.tolist(),
                "calibration": {"method": self.calibration, "per_class": list(self.calibrators)},
                "priors": self.priors.tolist(), "decision": self.decision,
                "answer_threshold": self.answer_threshold, "info": self.info}

    def save(self, path: str | Path) -> None:
        """Write the gate as JSON (atomically: a crash leaves the old file)."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=1))
        tmp.replace(path)

    @classmethod
    def load(cls, path: str | Path) -> "LearnedGate":
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"cannot read learned gate {path}: {exc}") from None
        if not isinstance(data, dict) or data.get("kind") != KIND:
            raise ValueError(f"{path} is not a learned-gate file (made by `python -m core calibrate --learned-gate`)")
        if data.get("version") != VERSION:
            raise ValueError(f"{path} is a version {data.get('version')} learned gate; this code reads version "
                             f"{VERSION}: retrain it")
        try:
            return cls(features=tuple(data["features"]), classes=tuple(data["classes"]),
                       mean=np.array(data["scaler"]["mean"], float), scale=np.array(data["scaler"]["scale"], float),
                       coef=np.array(data["coef"], float), intercept=np.array(data["intercept"], float),
                       calibration=data["calibration"]["method"],
                       calibrators=tuple(data["calibration"]["per_class"]), priors=np.array(data["priors"], float),
                       decision=data["decision"], answer_threshold=data["answer_threshold"], info=data["info"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"learned gate {path} is damaged ({type(exc).__name__}: {exc}); retrain it") from None


_LOADED: dict[tuple[str, int], LearnedGate] = {}


def load_cached(path: str | Path) -> LearnedGate:
    """``LearnedGate.load`` memoised by path and modification time (the gate runs on every slider move);
    a relative path starts at the project root."""
    file = Path(path)
    file = file if file.is_absolute() else models.PROJECT_ROOT / file
    try:
        stamp = file.stat().st_mtime_ns
    except OSError:
        raise ValueError(f"learned gate file {path} does not exist: fit one on the Evaluate page or with "
                         f"`python -m core calibrate … --learned-gate FILE`, or set the gate model to "
                         f"rules") from None
    key = (str(file), stamp)
    if key not in _LOADED:
        _LOADED.clear()  # one gate in use at a time; a rewritten file replaces the old entry
        _LOADED[key] = LearnedGate.load(file)
    return _LOADED[key]


def _replace(gate: LearnedGate, **changes) -> LearnedGate:
    return dataclasses.replace(gate, **changes)


def _logistic(Z: np.ndarray, y: np.ndarray, C: float) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits
    # One BLAS thread: on a problem this small, threads only contend (30x slower on a busy 2-core box).
    with threadpool_limits(1):
        model = LogisticRegression(C=C, class_weight="balanced", max_iter=2000).fit(Z, y)
    return model.coef_, model.intercept_


def _proba(model: tuple[np.ndarray, np.ndarray], Z: np.ndarray, n_classes: int) -> np.ndarray:
    """Logistic-regression probabilities from stored coefficients (sklearn's own formulas)."""
    coef, intercept = model
    scores = Z @ coef.T + intercept
    if n_classes == 2:
        p1 = 1.0 / (1.0 + np.exp(-scores[:, 0]))
        return np.column_stack([1 - p1, p1])
    scores = scores - scores.max(axis=1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=1, keepdims=True)


def _fit_calibrator(p: np.ndarray, positive: np.ndarray, method: str) -> dict[str, list[float]]:
    if method == "isotonic":
        from sklearn.isotonic import IsotonicRegression
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(p, positive.astype(float))
        return {"x": iso.X_thresholds_.tolist(), "y": iso.y_thresholds_.tolist()}
    from sklearn.linear_model import LogisticRegression
    platt = LogisticRegression(C=1e6, max_iter=1000).fit(_logit(p).reshape(-1, 1), positive.astype(int))
    return {"a": float(platt.coef_[0, 0]), "b": float(platt.intercept_[0])}


def _apply_calibrator(cal: Mapping[str, Any], p: np.ndarray, method: str) -> np.ndarray:
    if method == "isotonic":
        return np.interp(p, cal["x"], cal["y"])
    return 1.0 / (1.0 + np.exp(-(cal["a"] * _logit(p) + cal["b"])))


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def _floor_threshold(probs: np.ndarray, y: np.ndarray, gate: LearnedGate, floor: float) -> float:
    """The lowest P(ANSWER) bar at which the out-of-fold ANSWER precision reaches ``floor``."""
    a = gate.classes.index("ANSWER")
    full = np.zeros((len(y), len(ACTIONS)))
    for c, name in enumerate(gate.classes):
        full[:, ACTIONS.index(name)] = probs[:, c]
    for t in np.unique(np.round(probs[:, a], 4)):
        chosen = _replace(gate, answer_threshold=float(t))._choose(full)
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
        gate = LearnedGate.fit(table.take(train), g[train], folds=folds, seed=seed, **fit_kwargs)
        codes[test], probs[test] = gate.predict(table.take(test))
    return codes, probs
