"""Pieces of the Evaluate page: headline metrics, confusion matrices, sweep charts and heatmaps,
the risk–coverage curve, the signal-strength table and the per-item table's filter.

Every figure comes from ``core.evaluation`` over cached traces; nothing here calls a model.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import plotly.graph_objects as go
import streamlit as st

from core import settings as settings_mod
from core.types import ACTIONS

METRIC_HELP = {
    "macro_f1": "Macro-F1: the mean of the per-action F1 over the actions that occur in the gold labels "
                "(ContractNLI has no gold ASK, so its macro-F1 is over ANSWER and ABSTAIN).",
    "accuracy": "Accuracy: the share of items whose action equals the gold action.",
    "coverage": "Coverage: the share of items answered (action ANSWER).",
    "hallucination_rate": "Hallucination rate: among items whose gold action is ASK or ABSTAIN, the share "
                          "answered anyway. Lower is better.",
    "ask_recall": "ASK recall: of the items whose gold action is ASK, the share the gate asked about.",
    "abstain_recall": "ABSTAIN recall: of the items whose gold action is ABSTAIN, the share the gate abstained on.",
}
METRIC_NAMES = {"macro_f1": "Macro-F1", "accuracy": "Accuracy", "coverage": "Coverage",
                "hallucination_rate": "Hallucination", "ask_recall": "ASK recall",
                "abstain_recall": "ABSTAIN recall"}


def fmt(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"


def render_headline(metrics: Mapping[str, Any], reference: Mapping[str, Any] | None = None) -> None:
    """One st.metric per headline figure; with ``reference``, the change from it (e.g. from the defaults)."""
    columns = st.columns(len(METRIC_NAMES))
    for column, (key, name) in zip(columns, METRIC_NAMES.items()):
        value = metrics.get(key)
        delta = None
        if reference is not None and value is not None and reference.get(key) is not None:
            change = value - reference[key]
            delta = f"{change:+.3f}" if abs(change) >= 5e-4 else None
        column.metric(name, fmt(value), delta, help=METRIC_HELP[key],
                      delta_color="inverse" if key == "hallucination_rate" else "normal")


def confusion_figure(matrix: Sequence[Sequence[int]], title: str = "") -> go.Figure:
    """Rows gold, columns predicted; each cell shows the count and its share of the gold row."""
    rows = [list(map(int, r)) for r in matrix]
    shares = [[c / sum(r) if sum(r) else 0.0 for c in r] for r in rows]
    text = [[f"{c}<br>{s:.0%}" if sum(r) else str(c) for c, s in zip(r, sr)] for r, sr in zip(rows, shares)]
    fig = go.Figure(go.Heatmap(
        z=shares, x=[f"→ {a}" for a in ACTIONS], y=list(ACTIONS), text=text, texttemplate="%{text}",
        colorscale="Blues", zmin=0, zmax=1, showscale=False,
        hovertemplate="gold %{y}, predicted %{x}<br>%{text}<extra></extra>"))
    fig.update_layout(title=title or None, height=280, margin={"l": 10, "r": 10, "t": 60 if title else 40, "b": 10},
                      yaxis={"autorange": "reversed", "title": "gold", "automargin": True},
                      xaxis={"title": {"text": "predicted", "standoff": 4}, "side": "top", "automargin": True},
                      font={"size": 12})
    return fig


def per_action_rows(metrics: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"action": a, "precision": fmt(m["precision"]), "recall": fmt(m["recall"]), "F1": fmt(m["f1"]),
             "gold items": m["support"], "predicted": m["predicted"]}
            for a, m in metrics["per_action"].items()]


def sweep_figure(sweep: Mapping[str, Any], metrics: Sequence[str]) -> go.Figure:
    """Each chosen metric against one gate setting; the dashed line marks the sidebar's current value."""
    fig = go.Figure()
    for m in metrics:
        fig.add_trace(go.Scatter(x=sweep["values"], y=sweep["metrics"][m], mode="lines", name=METRIC_NAMES[m],
                                 hovertemplate=f"{sweep['setting']} %{{x}}<br>{METRIC_NAMES[m]} %{{y:.3f}}"
                                               "<extra></extra>"))
    fig.add_vline(x=sweep["current"], line_dash="dash", line_color="black",
                  annotation_text=f"current {sweep['current']}", annotation_position="top")
    fig.update_layout(height=340, margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      xaxis_title=setting_label(sweep["setting"]),
                      yaxis={"range": [0, 1.02], "title": "metric", "automargin": True}, legend={"orientation": "h", "y": -0.2},
                      plot_bgcolor="white")
    return fig


def heatmap_figure(grid: Mapping[str, Any]) -> go.Figure:
    """The metric over a grid of two gate settings; the cross marks the current pair."""
    metric = METRIC_NAMES.get(grid["metric"], grid["metric"])
    fig = go.Figure(go.Heatmap(
        z=[[float("nan") if v is None else v for v in row] for row in grid["z"]], x=grid["x_values"],
        y=grid["y_values"], colorscale="Viridis", colorbar={"title": metric},
        hovertemplate=f"{grid['x']} %{{x}}<br>{grid['y']} %{{y}}<br>{metric} %{{z:.3f}}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[grid["current"][0]], y=[grid["current"][1]], mode="markers", name="current",
                             marker={"symbol": "x", "size": 14, "color": "red", "line": {"width": 2}},
                             hovertemplate="current setting<extra></extra>"))
    fig.update_layout(height=460, margin={"l": 10, "r": 10, "t": 10, "b": 10}, showlegend=False,
                      xaxis=_grid_axis(setting_label(grid["x"]), grid["x_values"]),
                      yaxis=_grid_axis(setting_label(grid["y"]), grid["y_values"]))
    return fig


def _grid_axis(title: str, values: Sequence[float], ticks: int = 6) -> dict[str, Any]:
    """An axis whose tick values are printed (about ``ticks`` of the grid's points) and whose title sits
    clear of them: automargin makes room for both instead of clipping the ticks under a tight margin."""
    step = max(1, -(-len(values) // ticks))
    shown = list(values)[::step]
    return {"title": {"text": title, "standoff": 12}, "automargin": True, "tickmode": "array",
            "tickvals": shown, "ticktext": [f"{v:.2f}" for v in shown], "showticklabels": True}


def measured_rate(path: Path) -> float | None:
    """Seconds per analysed item measured on this server's last run (None before any)."""
    try:
        return float(json.loads(path.read_text())["seconds_per_item"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def record_rate(path: Path, items: int, seconds: float) -> None:
    """Keep the measured seconds per item of a run that analysed ``items`` (cached ones excluded)."""
    if items > 0 and seconds > 0:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"seconds_per_item": seconds / items, "items": items}))


def duration_text(n_items: int, seconds_per_item: float | None) -> str:
    """A sentence on how long a first analysis of ``n_items`` takes at the measured rate, or that there is no
    measurement yet."""
    if seconds_per_item is None:
        return ("No analysis has been timed on this server yet: the progress bar shows the time per item once the "
                "first items are done.")
    total = n_items * seconds_per_item
    shown = f"{total / 60:.0f} minutes" if total >= 90 else f"{total:.0f} s"
    return (f"Analysing them the first time takes about {shown} ({seconds_per_item:.1f} s per item, measured on "
            "this server's last run).")


def risk_coverage_figure(curves: Mapping[str, Mapping[str, Any]]) -> go.Figure:
    """Selective risk against coverage for each named ordering score (lower curve is better)."""
    fig = go.Figure()
    for name, rc in curves.items():
        fig.add_trace(go.Scatter(x=rc["coverage"], y=rc["risk"], mode="lines",
                                 name=f"{name} (AURC {fmt(rc['aurc'])})"))
    fig.update_layout(height=300, margin={"l": 10, "r": 10, "t": 10, "b": 10}, xaxis_title="coverage (share answered)",
                      yaxis={"title": "risk", "range": [0, 1], "automargin": True},
                      legend={"orientation": "h", "y": -0.25}, plot_bgcolor="white")
    return fig


def setting_label(name: str) -> str:
    """A setting's slider label with its name, for chart axes and menus."""
    s = settings_mod.BY_NAME.get(name)
    return f"{s.label} ({name})" if s and s.label else name


def _direction(value: float, positive: str) -> str:
    """Which way a signal's AUROC leans: "higher on ASK", "lower on ASK", or "no difference" at chance (0.5 to
    three places; it had read "0.500 (lower on ASK)")."""
    if round(value, 3) == 0.5:
        return "no difference"
    return f"{'higher' if value > 0.5 else 'lower'} on {positive}"


def signal_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The per-signal AUROC report as table rows, strongest first, with the direction spelled out."""
    out = []
    for r in rows:
        pairs = {k: v for k, v in r.items() if k != "signal"}
        strength = max((abs(v - 0.5) for v in pairs.values() if v is not None), default=0.0)
        row = {"signal": r["signal"], "strength |AUROC−0.5|": round(strength, 3)}
        for pair, value in pairs.items():
            neg, pos = pair.split("_vs_")
            row[f"{neg} vs {pos}"] = (None if value is None else f"{value:.3f} ({_direction(value, pos)})")
        out.append(row)
    return sorted(out, key=lambda row: -row["strength |AUROC−0.5|"])


def filter_rows(rows: Sequence[Mapping[str, Any]], gold: Sequence[str] = (), predicted: Sequence[str] = (),
                only_mistakes: bool = False, text: str = "") -> list[Mapping[str, Any]]:
    """The per-item rows that match every filter (an empty choice matches all)."""
    needle = text.strip().lower()
    return [r for r in rows
            if (not gold or r["gold"] in gold) and (not predicted or r["action"] in predicted)
            and (not only_mistakes or not r["correct"])
            and (not needle or needle in r["question"].lower() or needle in r["id"].lower())]


TABLE_SIGNALS = ("confidence", "coverage", "ambiguity", "incompleteness", "sufficiency", "evidence_coverage")


def table_rows(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``core.evaluation.prediction_records`` rows → what the per-item table shows."""
    out = []
    for r in records:
        row = {"id": r["id"], "gold": r["gold"], "action": r["action"], "correct": r["correct"],
               "rule": r.get("rule") or "", "question": r["question"],
               "context": "scenario" if r["scenario"] else ("history" if r["history"] else "")}
        if r.get("probabilities"):
            row["P(ANSWER)"] = round(r["probabilities"]["ANSWER"], 3)
        row.update({k: round(r["signals"][k], 3) for k in TABLE_SIGNALS})
        out.append(row)
    return out


def transfer_rows(rows: list[dict]) -> list[dict]:
    """The transfer table's rows for display: figures to three places, intervals as "low–high", "—" where
    a set lacks a class."""
    from core.evaluation.transfer import interval_text
    return [{k: (interval_text(v) if k.endswith("_interval") else f"{v:.3f}" if isinstance(v, float)
                 else "—" if v is None else v) for k, v in r.items()} for r in rows]
