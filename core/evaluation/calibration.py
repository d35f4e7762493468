"""Threshold sweeps, suggested thresholds and per-signal strength over a ``SignalTable``.

Re-gating a table (``core.gate.table.regate``, numpy only) takes well under a millisecond for
1,000 traces, which is what makes sweeps cheap: a 2-D grid of 2,601 configurations over 1,000
items takes about a second.

``suggest_thresholds`` searches the declared ranges of the gate settings by
coordinate ascent (restarted from random points) for the configuration that
maximises the objective, inside k-fold cross-validation so the figure it reports
is out-of-fold; the thresholds it returns are then fitted on all items.
"""
from __future__ import annotations

import typing
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from core import settings as settings_mod
from core.agents import RESPONSE_SETTINGS
from core.evaluation import metrics as M
from core.gate.rules import RULE_NAMES, RULES
from core.gate.table import RULE_LABELS, SignalTable, gate_table
from core.types import ACTIONS, Signals

class _Recorder(dict):
    """Settings that note, in order, every name looked up in them."""
    def __init__(self, values):
        super().__init__(values)
        self.read: list[str] = []

    def __getitem__(self, key):
        self.read.append(key)
        return super().__getitem__(key)


def settings_read_by_rules() -> dict[str, tuple[str, ...]]:
    """Each gate rule's name and the settings its comparisons look up (recorded by running it once)."""
    blank = {str: "none", dict: {}, int: 0, float: 0.0}
    signals = Signals(**{name: blank.get(typing.get_origin(tp) or tp, 0.0)
                         for name, tp in typing.get_type_hints(Signals).items()})
    out: dict[str, tuple[str, ...]] = {}
    for name, _, compare, _ in RULES:
        values = _Recorder(settings_mod.defaults())
        compare(signals, values)
        out[name] = tuple(dict.fromkeys(values.read))
    return out


SETTINGS_BY_RULE = settings_read_by_rules()


def _read_by_rules() -> tuple[str, ...]:
    """The settings ``decide_signals`` reads: each rule's switch and the thresholds its comparisons
    look up. The response settings (``core.agents.RESPONSE_SETTINGS``: answer mode, grounding, hedging)
    act after the answer is written, so re-gating signals cannot tune them."""
    read = {f"rule_{name}" for name in RULE_NAMES}.union(*SETTINGS_BY_RULE.values())
    return tuple(s.name for s in settings_mod.SETTINGS if s.name in read and s.name not in RESPONSE_SETTINGS)


GATE_SETTINGS = _read_by_rules()  # what sweeps and the threshold search may move


def rules_reading(name: str) -> tuple[str, ...]:
    """The gate rules whose comparisons look ``name`` up."""
    return tuple(rule for rule, read in SETTINGS_BY_RULE.items() if name in read)


def switched_on_reading(name: str, values: Mapping[str, Any]) -> tuple[str, ...]:
    """The rules reading ``name`` that ``values`` switch on: with none, moving ``name`` changes no verdict, and
    a sweep of it is flat."""
    return tuple(rule for rule in rules_reading(name) if values.get(f"rule_{rule}"))




def signal_report(table: SignalTable, gold, has_context: np.ndarray) -> list[dict]:
    """Each signal's direction and strength: AUROC for ANSWER vs ASK over items with a scenario or
    history (ShARC's ASK needs context to mean anything) and for ANSWER vs ABSTAIN over all items."""
    columns = table.feature_columns()
    ask = M.signal_aurocs(columns, gold, has_context, pairs=(("ANSWER", "ASK"),))
    abstain = M.signal_aurocs(columns, gold, pairs=(("ANSWER", "ABSTAIN"),))
    return [{**a, **b} for a, b in zip(ask, abstain)]


def rule_lift(table: SignalTable, gold, values: Mapping[str, Any]) -> list[dict]:
    """What each rule that decides something under ``values`` adds: how often it fires, how often its
    action is the gold one then (precision), how often that action is gold among every item the rule
    got to see (it and the rules after it, in priority order: the base rate; for the final ANSWER,
    every item), and their ratio. A lift near 1 means the rule picks items at random among those it
    sees: it moves the action mix, it does not tell answerable from unanswerable."""
    gold = np.asarray(gold)
    gated = gate_table(table, values)
    decided_last = len(RULE_LABELS)  # default_answer decides after every rule
    position = np.array([decided_last if r == 0 else r for r in range(len(RULE_LABELS))])[gated.rule_index]
    rows = []
    for index, name in enumerate(RULE_LABELS):
        fired = gated.rule_index == index
        if not fired.any():
            continue
        action = gated.codes[fired][0]
        reached = position >= index  # the final ANSWER (index 0) is measured against every item
        precision = float((gold[fired] == action).mean())
        base = float((gold[reached] == action).mean())
        rows.append({"rule": name, "action": ACTIONS[action], "fires": int(fired.sum()), "precision": precision,
                     "base_rate": base, "lift": precision / base if base else float("nan")})
    return rows


# --- sweeps -----------------------------------------------------------------------------

SWEEP_METRICS = ("macro_f1", "accuracy", "coverage", "hallucination_rate", "ask_recall", "abstain_recall")


def grid(name: str, max_points: int | None = None) -> list[Any]:
    """The declared values of a gate setting: its range on its step (both switch states, every choice)."""
    s = settings_mod.BY_NAME[name]
    if s.kind == "bool":
        return [False, True]
    if s.kind == "choice":
        return list(s.choices)
    if s.kind == "text":  # a file path: no range to search
        return [s.default]
    n = int(round((s.high - s.low) / s.step)) + 1
    points = np.round(s.low + s.step * np.arange(n), 6)
    if max_points and n > max_points:
        points = np.unique(points[np.linspace(0, n - 1, max_points).round().astype(int)])
    return [int(p) if s.kind == "int" else float(p) for p in points]


def _check_gate_setting(name: str) -> None:
    if name not in GATE_SETTINGS:
        raise ValueError(f"{name!r} is not a setting the gate rules read; sweepable: {', '.join(GATE_SETTINGS)}")


def sweep(table: SignalTable, gold, values: Mapping[str, Any] | None, name: str,
          metrics: Sequence[str] = SWEEP_METRICS, points: Sequence[Any] | None = None) -> dict[str, Any]:
    """Each metric as one gate setting moves over its range, the others held at ``values``."""
    _check_gate_setting(name)
    base = settings_mod.resolve(values)
    g = M.codes(gold)
    xs = list(points) if points is not None else grid(name)
    out: dict[str, list] = {m: [] for m in metrics}
    for x in xs:
        m = M.metrics_from_confusion(M.confusion(g, gate_table(table, {**base, name: x}).codes))
        for k in metrics:
            out[k].append(m[k])
    return {"setting": name, "values": xs, "metrics": out, "current": base[name]}


def sweep_2d(table: SignalTable, gold, values: Mapping[str, Any] | None, x: str, y: str,
             metric: str = "macro_f1", max_points: int = 51) -> dict[str, Any]:
    """``metric`` over a grid of two gate settings (z[i][j] at y[i], x[j]); for a heatmap."""
    _check_gate_setting(x)
    _check_gate_setting(y)
    base = settings_mod.resolve(values)
    g = M.codes(gold)
    xs, ys = grid(x, max_points), grid(y, max_points)
    z = [[M.metrics_from_confusion(M.confusion(g, gate_table(table, {**base, x: vx, y: vy}).codes))[metric]
          for vx in xs] for vy in ys]
    return {"x": x, "y": y, "x_values": xs, "y_values": ys, "metric": metric, "z": z,
            "current": (base[x], base[y])}


# --- suggested thresholds ---------------------------------------------------------------

@dataclass(frozen=True)
class Objective:
    """What the search maximises: a metric, or coverage subject to a hallucination ceiling."""
    metric: str = "macro_f1"
    max_hallucination: float | None = None

    def score(self, cm: np.ndarray) -> float:
        if self.max_hallucination is None and self.metric == "macro_f1":
            support, predicted, hits = cm.sum(axis=1), cm.sum(axis=0), np.diag(cm)
            f1 = 2 * hits / np.maximum(support + predicted, 1)
            return float(f1[support > 0].mean())
        m = M.metrics_from_confusion(cm)
        if self.max_hallucination is not None:
            hall = m["hallucination_rate"] or 0.0
            # Every feasible configuration beats every infeasible one; among infeasible, less hallucination wins.
            return 1.0 + (m["coverage"] or 0.0) if hall <= self.max_hallucination else -hall
        value = m[self.metric]
        return float(value) if value is not None else 0.0

    def describe(self) -> str:
        if self.max_hallucination is not None:
            return f"coverage with hallucination rate ≤ {self.max_hallucination:g}"
        return self.metric


@dataclass(frozen=True)
class Suggestion:
    """Thresholds fitted on all items, with the out-of-fold figure that estimates how they generalise."""
    values: dict[str, Any]  # every setting, gate ones fitted
    changed: dict[str, Any]  # the gate settings that differ from the starting values
    objective: str
    in_sample: dict[str, Any]  # metrics of ``values`` on all items (optimistic)
    out_of_fold: dict[str, Any]  # metrics of the per-fold fits on their held-out folds
    oof_codes: np.ndarray = field(repr=False)  # the out-of-fold predicted action per item
    folds: int = 5
    fold_values: tuple[dict[str, Any], ...] = ()


def suggest_thresholds(table: SignalTable, gold, values: Mapping[str, Any] | None = None, *,
                       objective: Objective | None = None, names: Sequence[str] | None = None,
                       folds: int = 5, seed: int = 0, restarts: int = 2) -> Suggestion:
    """Search the gate settings' declared ranges for the best configuration (k-fold, out-of-fold report)."""
    objective = objective or Objective()
    start = settings_mod.resolve(values)
    names = list(names or GATE_SETTINGS)
    for name in names:
        _check_gate_setting(name)
    g = M.codes(gold)
    if len(g) != len(table):
        raise ValueError(f"{len(g)} gold labels for {len(table)} signal rows")
    space = [(name, grid(name)) for name in names]
    oof = np.zeros(len(g), dtype=np.int64)
    fold_values = []
    for train, test in _folds(g, folds, seed):
        fitted = _search(table.take(train), g[train], start, space, objective, seed, restarts)
        oof[test] = gate_table(table.take(test), fitted).codes
        fold_values.append({k: fitted[k] for k in names})
    best = _search(table, g, start, space, objective, seed, restarts)
    return Suggestion(
        values=best, changed={k: best[k] for k in names if best[k] != start[k]}, objective=objective.describe(),
        in_sample=M.action_metrics(g, gate_table(table, best).codes), out_of_fold=M.action_metrics(g, oof),
        oof_codes=oof, folds=folds, fold_values=tuple(fold_values))


def _folds(g: np.ndarray, folds: int, seed: int):
    """Stratified k-fold splits (fewer folds when an action has fewer items than ``folds``)."""
    from sklearn.model_selection import StratifiedKFold
    smallest = int(np.bincount(g)[np.bincount(g) > 0].min())
    k = max(2, min(folds, smallest))
    if k > smallest:
        raise ValueError(f"cannot cross-validate: an action has only {smallest} item(s); use more items")
    return StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(np.zeros(len(g)), g)


def _search(table: SignalTable, g: np.ndarray, start: dict[str, Any], space, objective: Objective,
            seed: int, restarts: int) -> dict[str, Any]:
    return coordinate_ascent(lambda values: objective.score(M.confusion(g, gate_table(table, values).codes)),
                             start, space, seed, restarts)


def coordinate_ascent(score: Callable[[dict[str, Any]], float], start: dict[str, Any],
                      space: Sequence[tuple[str, list[Any]]], seed: int = 0, restarts: int = 2) -> dict[str, Any]:
    """Maximise ``score`` over the grid ``space`` ((setting, points) pairs) by coordinate ascent from
    ``start`` and from ``restarts`` random points; ties keep the middle of the best run of points."""
    rng = np.random.default_rng(seed)
    best, best_score = dict(start), score(start)
    for attempt in range(restarts + 1):
        current = dict(start) if attempt == 0 else {**start, **{n: pts[rng.integers(len(pts))] for n, pts in space}}
        current_score = score(current)
        for _ in range(20):  # passes; stops as soon as one changes nothing
            improved = False
            for name, pts in space:
                scores = np.array([score({**current, name: p}) for p in pts])
                top = scores.max()
                if top > current_score + 1e-12:
                    current[name] = _middle_of_best(pts, scores)
                    current_score = score(current)
                    improved = True
            if not improved:
                break
        if current_score > best_score + 1e-12:
            best, best_score = current, current_score
    return best


def _middle_of_best(points: list[Any], scores: np.ndarray) -> Any:
    """The middle of the first run of best-scoring grid points: the threshold with the most margin."""
    top = scores.max()
    first = int(np.argmax(scores >= top - 1e-12))
    last = first
    while last + 1 < len(scores) and scores[last + 1] >= top - 1e-12:
        last += 1
    return points[(first + last) // 2]


def save_suggestion(suggestion: Suggestion, path) -> None:
    """Write the suggested thresholds as a preset (loadable by ``--preset`` and the UI)."""
    settings_mod.save_preset(suggestion.values, path)
