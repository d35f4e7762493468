"""Panel 6: each signal the gate compares, against its threshold, coloured by which side it is on."""
from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from components.common import ACTION_COLORS, panel_header
from core.types import Decision, Signals, to_dict

HELP = ("One bar per comparison the gate makes, in rule priority order; the black tick is the threshold "
        "(a sidebar slider). A bar takes its rule's action colour only when that rule fired; a bar on its "
        "rule's side of the threshold whose rule did not fire (another of its comparisons failed, or a higher "
        "rule decided) is sand; green is the passing side, grey a rule switched off. "
        "A(q) = Conf·Coverage·(1−Amb)·(1−Conflict) (seed 002 Eq. 14) is listed below, not gated.")

NAMES = {"confidence": "Conf", "coverage": "Coverage", "ambiguity": "Amb", "topic_spread": "Conflict (spread)",
         "nli_conflict": "NLI conflict", "score_gap": "Score gap", "incompleteness": "I(q)",
         "sufficiency": "Sufficiency", "p_topic": "P(topic covered)", "p_fact": "P(fact stated)",
         "p_open": "P(condition open)", "p_depends": "P(turns on the asker)", "referents": "Referents"}
PASS_COLOR = "#2e8b57"
OFF_COLOR = "#b0b0b0"
HOLDS_COLOR = "#d8c48f"  # on the rule's side, but the rule did not decide


def signal_rows(decision: Decision) -> list[dict]:
    """The threshold comparisons of every rule, in priority order (flag checks such as
    "a condition failed" have no slider and are left to the gate trace)."""
    rows = []
    for rule in decision.rules:
        for c in rule.comparisons:
            if c.signal not in NAMES:
                continue
            side = ("off" if not rule.enabled else rule.action if rule.fired and c.holds
                    else "holds" if c.holds else "pass")
            rows.append({"label": f"{NAMES[c.signal]} {c.op} {c.threshold:.2f} · {rule.name}"
                                  + (" ◀ fired" if rule.fired else ""),
                         "value": c.value, "threshold": c.threshold, "op": c.op, "side": side,
                         "rule": rule.name, "signal": c.signal})
    return rows


def signals_figure(decision: Decision) -> go.Figure:
    rows = signal_rows(decision)
    fig = go.Figure()
    groups = [("ASK", "fired: ASK"), ("ABSTAIN", "fired: ABSTAIN"), ("ANSWER", "fired: ANSWER"),
              ("holds", "holds, rule did not fire"), ("pass", "on the passing side"), ("off", "rule switched off")]
    for side, name in groups:
        part = [r for r in rows if r["side"] == side]
        if not part:
            continue
        color = {"pass": PASS_COLOR, "off": OFF_COLOR, "holds": HOLDS_COLOR}.get(side, ACTION_COLORS.get(side))
        fig.add_trace(go.Bar(
            x=[r["value"] for r in part], y=[r["label"] for r in part], orientation="h", name=name,
            marker_color=color, text=[f"{r['value']:.3f}" for r in part], textposition="outside",
            hovertemplate="%{y}<br>value %{x:.3f}<extra></extra>"))
    fig.add_trace(go.Scatter(
        x=[r["threshold"] for r in rows], y=[r["label"] for r in rows], mode="markers", name="threshold",
        marker={"symbol": "line-ns-open", "size": 22, "line": {"width": 3, "color": "black"}, "color": "black"},
        hovertemplate="threshold %{x:.2f}<extra></extra>"))
    top = max([1.0] + [r["value"] * 1.15 for r in rows])
    fig.update_layout(
        barmode="overlay", height=110 + 28 * len(rows), margin={"l": 10, "r": 10, "t": 10, "b": 10},
        xaxis={"range": [0, top], "automargin": True},
        yaxis={"categoryorder": "array", "categoryarray": [r["label"] for r in rows], "autorange": "reversed",
               "automargin": True},
        plot_bgcolor="white", font={"size": 12},
        legend={"orientation": "h", "yanchor": "top", "y": -0.08}, uirevision="signals")
    return fig


def render_signals(signals: Signals, decision: Decision) -> None:
    panel_header("Signals", HELP)
    st.plotly_chart(signals_figure(decision), key="signals_chart", theme=None, config={"displayModeBar": False})
    st.caption(f"A(q) = {signals.confidence:.2f} · {signals.coverage:.2f} · (1 − {signals.ambiguity:.2f}) · "
               f"(1 − {signals.topic_spread:.2f}) = **{signals.answerability:.3f}**")
    with st.expander("All signals"):
        data = to_dict(signals)
        heuristics = data.pop("ambiguity_heuristics")
        rows = list(data.items()) + [(f"ambiguity · {k}", v) for k, v in heuristics.items()]
        st.dataframe([{"signal": k, "value": f"{v:.3f}" if isinstance(v, float) else str(v)} for k, v in rows],
                     hide_index=True, width="stretch")
