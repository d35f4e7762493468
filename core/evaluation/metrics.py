"""Scores of the gate's actions against gold labels, on numpy arrays so sweeps stay cheap.

Actions are coded 0, 1, 2 in ``core.types.ACTIONS`` order (ANSWER, ASK, ABSTAIN);
every function also takes arrays of action names. Macro-F1 averages the actions
that occur in the gold labels (ContractNLI has no gold ASK, so its macro-F1 is
over ANSWER and ABSTAIN; an ASK predicted there still costs recall). A value that
is undefined (a recall with no gold item of that action) is ``None``.
"""
from __future__ import annotations

import re
import string
from collections import Counter
from typing import Any, Iterable, Sequence

import numpy as np

from core.types import ACTIONS

ANSWER, ASK, ABSTAIN = range(3)
CODE = {a: i for i, a in enumerate(ACTIONS)}


def codes(actions: Sequence[str] | np.ndarray) -> np.ndarray:
    """Action names (or codes) → an int array of codes."""
    arr = np.asarray(actions)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    try:
        return np.array([CODE[a] for a in arr.tolist()], dtype=np.int64)
    except KeyError as exc:
        raise ValueError(f"unknown action {exc.args[0]!r}: actions are {', '.join(ACTIONS)}") from None


def confusion(gold, pred) -> np.ndarray:
    """3×3 counts, rows = gold action, columns = predicted action (ACTIONS order)."""
    g, p = codes(gold), codes(pred)
    if g.shape != p.shape:
        raise ValueError(f"gold and predicted actions differ in length ({len(g)} vs {len(p)})")
    return np.bincount(g * 3 + p, minlength=9).reshape(3, 3)


def _ratio(num: float, den: float) -> float | None:
    return float(num / den) if den else None


def metrics_from_confusion(cm: np.ndarray) -> dict[str, Any]:
    """Every action-level figure from a confusion matrix (rows gold, columns predicted)."""
    n = int(cm.sum())
    support = cm.sum(axis=1)
    predicted = cm.sum(axis=0)
    per_action = {}
    f1s = []
    for a, name in enumerate(ACTIONS):
        p = _ratio(cm[a, a], predicted[a])
        r = _ratio(cm[a, a], support[a])
        f1 = (2 * p * r / (p + r) if p and r else 0.0) if r is not None else None
        if support[a]:
            f1s.append(f1 if f1 is not None else 0.0)
        per_action[name] = {"precision": p, "recall": r, "f1": f1, "support": int(support[a]),
                            "predicted": int(predicted[a])}
    not_answerable = support[ASK] + support[ABSTAIN]
    return {
        "n": n,
        "accuracy": _ratio(np.trace(cm), n),
        "macro_f1": float(np.mean(f1s)) if f1s else None,
        "per_action": per_action,
        "confusion": {"labels": list(ACTIONS), "matrix": cm.astype(int).tolist()},
        "ask_recall": per_action["ASK"]["recall"],
        "abstain_recall": per_action["ABSTAIN"]["recall"],
        "hallucination_rate": _ratio(cm[ASK, ANSWER] + cm[ABSTAIN, ANSWER], not_answerable),
        "coverage": _ratio(predicted[ANSWER], n),
    }


def action_metrics(gold, pred) -> dict[str, Any]:
    """Accuracy, macro-F1, per-action P/R/F1, confusion, ASK/ABSTAIN recall, hallucination, coverage."""
    return metrics_from_confusion(confusion(gold, pred))


def macro_f1(gold, pred) -> float:
    """Macro-F1 over the actions present in ``gold`` (the calibration objective; fast path)."""
    cm = confusion(gold, pred)
    support, predicted, hits = cm.sum(axis=1), cm.sum(axis=0), np.diag(cm)
    present = support > 0
    f1 = np.where(support + predicted > 0, 2 * hits / np.maximum(support + predicted, 1), 0.0)
    return float(f1[present].mean()) if present.any() else 0.0


def group_intervals(groups: Sequence[str], statistic, replicates: int = 1000, level: float = 0.95,
                    seed: int = 0) -> dict[str, tuple[float, float] | None]:
    """Percentile intervals of each figure ``statistic(rows)`` returns ({name: float or None}) over
    resamples of whole groups with replacement.

    Items of one rule tree, contract or article are not independent (one misread rule text costs
    all its utterances), so the groups are resampled, not the items: an interval from items alone
    would be too narrow. A figure may be undefined (None) in a resample that lacks a class; its
    interval is None when it is undefined in over half of them."""
    if replicates < 1 or not 0 < level < 1:
        raise ValueError("replicates must be at least 1 and level lie strictly between 0 and 1")
    members: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    blocks = [np.array(rows) for rows in members.values()]
    if not blocks:
        return {}
    rng = np.random.default_rng(seed)
    values: dict[str, list[float]] = {}
    for _ in range(replicates):
        picked = rng.integers(0, len(blocks), len(blocks))
        for name, value in statistic(np.concatenate([blocks[k] for k in picked])).items():
            values.setdefault(name, [])
            if value is not None:
                values[name].append(value)
    tail = (1 - level) / 2 * 100
    return {name: (tuple(float(x) for x in np.percentile(v, [tail, 100 - tail])) if len(v) * 2 >= replicates else None)
            for name, v in values.items()}


# --- answers and evidence ---------------------------------------------------------------

def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def answer_f1(prediction: str, gold: str) -> float:
    pred, ref = normalize_answer(prediction).split(), normalize_answer(gold).split()
    common = sum((Counter(pred) & Counter(ref)).values())
    if not pred or not ref:
        return float(pred == ref)
    if common == 0:
        return 0.0
    p, r = common / len(pred), common / len(ref)
    return 2 * p * r / (p + r)


def answer_metrics(gold_answers: Sequence[Sequence[str]], predicted: Sequence[str | None]) -> dict[str, Any]:
    """SQuAD EM and F1 (best over the gold answers) over items with gold answers and a predicted answer."""
    em, f1 = [], []
    for golds, pred in zip(gold_answers, predicted):
        if not golds or pred is None:
            continue
        em.append(max(float(normalize_answer(pred) == normalize_answer(g)) for g in golds))
        f1.append(max(answer_f1(pred, g) for g in golds))
    with_gold = sum(1 for g in gold_answers if g)
    return {"n": len(em), "with_gold": with_gold, "exact_match": float(np.mean(em)) if em else None,
            "f1": float(np.mean(f1)) if f1 else None}


def evidence_match(predicted: str, gold: str) -> bool:
    """Two evidence texts match when one contains the other or their token F1 is at least 0.5
    (sentence splitters disagree at the edges, so exact equality is too strict)."""
    a, b = normalize_answer(predicted), normalize_answer(gold)
    if not a or not b:
        return False
    return a in b or b in a or answer_f1(a, b) >= 0.5


def evidence_metrics(gold_evidence: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> dict[str, Any]:
    """Mean per-item precision (predicted texts matching some gold text) and recall (gold texts
    matched by some predicted text), over items with gold evidence."""
    precision, recall = [], []
    for golds, preds in zip(gold_evidence, predicted):
        if not golds:
            continue
        recall.append(sum(any(evidence_match(p, g) for p in preds) for g in golds) / len(golds))
        if preds:
            precision.append(sum(any(evidence_match(p, g) for g in golds) for p in preds) / len(preds))
    return {"n": len(recall), "precision": float(np.mean(precision)) if precision else None,
            "recall": float(np.mean(recall)) if recall else None}


# --- scores: ranking quality ------------------------------------------------------------

def auroc(positive: Iterable[bool], score: Iterable[float]) -> float | None:
    """Area under the ROC curve of ``score`` for the positive class (None if a class is absent).
    0.5 is chance; below 0.5 the signal points the other way."""
    y = np.asarray(list(positive), dtype=bool)
    s = np.asarray(list(score), dtype=float)
    if y.all() or not y.any():
        return None
    from scipy.stats import rankdata
    # Mann-Whitney U over mid-ranks (ties count half), what sklearn's roc_auc_score gives, ~30x faster:
    # the transfer table's intervals take it thousands of times
    n_pos = int(y.sum())
    return float((rankdata(s)[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * (len(y) - n_pos)))


def risk_coverage(correct: Iterable[bool], score: Iterable[float], points: int = 101) -> dict[str, Any]:
    """Selective risk–coverage: answer the items with the highest ``score`` first; at each
    coverage the risk is the share of answered items that should not have been answered.
    AURC is the mean risk over all coverages (lower is better)."""
    ok = np.asarray(list(correct), dtype=float)
    s = np.asarray(list(score), dtype=float)
    if not len(ok):
        return {"coverage": [], "risk": [], "aurc": None}
    order = np.argsort(-s, kind="stable")
    k = np.arange(1, len(ok) + 1)
    risk = 1.0 - np.cumsum(ok[order]) / k
    idx = np.unique(np.linspace(0, len(ok) - 1, min(points, len(ok))).round().astype(int))
    return {"coverage": (k[idx] / len(ok)).tolist(), "risk": risk[idx].tolist(), "aurc": float(risk.mean())}


def signal_aurocs(columns: dict[str, np.ndarray], gold, mask: np.ndarray | None = None,
                  pairs: Sequence[tuple[str, str]] = (("ANSWER", "ASK"), ("ANSWER", "ABSTAIN"))) -> list[dict]:
    """Each signal's AUROC for telling the second action of a pair from the first (ANSWER).

    AUROC > 0.5: the signal is higher on the non-answer class; < 0.5: lower. The strength is
    |AUROC − 0.5|; a rule that expects the opposite direction will misfire on such data.
    """
    g = codes(gold)
    keep = np.ones(len(g), bool) if mask is None else np.asarray(mask, bool)
    rows = []
    for name, values in columns.items():
        row: dict[str, Any] = {"signal": name}
        for neg, pos in pairs:
            sel = keep & ((g == CODE[neg]) | (g == CODE[pos]))
            row[f"{neg}_vs_{pos}"] = auroc(g[sel] == CODE[pos], values[sel])
        rows.append(row)
    return rows


# --- text tables ------------------------------------------------------------------------

def _fmt(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def format_metrics(m: dict[str, Any], title: str = "") -> str:
    """The action metrics as a plain-text table (what the CLI prints)."""
    lines = [title] if title else []
    lines.append(f"n={m['n']}  accuracy {_fmt(m['accuracy'])}  macro-F1 {_fmt(m['macro_f1'])}  "
                 f"coverage {_fmt(m['coverage'])}  hallucination {_fmt(m['hallucination_rate'])}  "
                 f"ASK recall {_fmt(m['ask_recall'])}  ABSTAIN recall {_fmt(m['abstain_recall'])}")
    lines.append(f"  {'action':<8} {'precision':>9} {'recall':>7} {'F1':>7} {'support':>8}   "
                 + "  ".join(f"→{a:<7}" for a in ACTIONS))
    for a, row in zip(ACTIONS, m["confusion"]["matrix"]):
        pa = m["per_action"][a]
        lines.append(f"  {a:<8} {_fmt(pa['precision']):>9} {_fmt(pa['recall']):>7} {_fmt(pa['f1']):>7} "
                     f"{pa['support']:>8}   " + "  ".join(f"{n:<8}" for n in row).rstrip())
    return "\n".join(lines)


def format_comparison(rows: dict[str, dict[str, Any]], extra: Sequence[str] = ()) -> str:
    """One line per configuration (defaults, calibrated, learned): the headline figures."""
    keys = ["macro_f1", "accuracy", "ask_recall", "abstain_recall", "hallucination_rate", "coverage", *extra]
    width = max(len(k) for k in rows) + 2
    head = f"{'':<{width}}" + "".join(f"{k:>20}" for k in keys)
    body = [f"{name:<{width}}" + "".join(f"{_fmt(m.get(k)):>20}" for k in keys) for name, m in rows.items()]
    return "\n".join([head, *body])


def format_signal_table(rows: list[dict], title: str = "") -> str:
    """Per-signal AUROC rows, strongest first (strength = the largest |AUROC − 0.5| over the pairs)."""
    if not rows:
        return title
    pairs = [k for k in rows[0] if k != "signal"]
    ordered = sorted(rows, key=lambda r: -max(abs(r[p] - 0.5) for p in pairs if r[p] is not None)
                     if any(r[p] is not None for p in pairs) else 0.0)
    lines = [title] if title else []
    lines.append(f"  {'signal':<34}" + "".join(f"{p:>20}" for p in pairs))
    lines += [f"  {r['signal']:<34}" + "".join(f"{_fmt(r[p]):>20}" for p in pairs) for r in ordered]
    return "\n".join(lines)
