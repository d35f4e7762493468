"""Panel 7: the gate's rules in priority order, each comparison with its numbers, the one that fired;
after them, when the gate answered, seed 004's answer-level checks on the written answer."""
from __future__ import annotations

import streamlit as st

from components.common import ACTION_BADGE, md, panel_header
from core.gate import comparison_text
from core.types import Decision

HELP = ("decide() walks the rules top to bottom; the first enabled rule whose comparisons all hold decides "
        "the action, and if none does the answer is ANSWER. After seed 002 §5.3 and Eq. 21 (conflict → ASK, "
        "low Conf and Coverage → ABSTAIN, Amb → ASK, I(q) > τ_i → ASK), seed 004 layer 1 (flat weak scores) and "
        "seed 000 (Sufficiency < τ → ABSTAIN). Pure arithmetic: moving a gate slider calls no model. "
        "An ANSWER is then checked once it is written (seed 004 layers 2–3, listed after the gate's rules): "
        "answer_grounding (one NLI call on the answer against the passages it cites) and hedging; either can "
        "withhold the answer → ABSTAIN.")


def rule_state(rule) -> str:
    if rule.fired:
        return "▶ FIRED"
    if not rule.enabled:
        return "off"
    return "holds (a higher rule fired)" if rule.comparisons and all(c.holds for c in rule.comparisons) else "—"


def render_gate_trace(decision: Decision) -> None:
    panel_header("Gate trace", HELP)
    lines = ["| # | rule | → action | comparisons | state |", "|---|---|---|---|---|"]
    for i, rule in enumerate(decision.rules, 1):
        comps = " and ".join(comparison_text(c) for c in rule.comparisons) or "—"
        row = [str(i), f"`{rule.name}`", f":{ACTION_BADGE[rule.action]}-badge[{rule.action}]", comps,
               rule_state(rule)]
        if rule.fired:
            row = [f"**{cell}**" if k in (0, 3, 4) else cell for k, cell in enumerate(row)]
        lines.append("| " + " | ".join(row) + " |")
    st.markdown("\n".join(lines))
    st.markdown(f"Fired: **`{decision.rule}`** → :{ACTION_BADGE[decision.action]}-badge[{decision.action}] "
                f"— {decision.reason}")
    for check in (r for r in decision.rules if r.fired and r.name != decision.rule):
        st.markdown(f"Then the answer check **`{check.name}`** withheld the answer → "
                    f":{ACTION_BADGE[check.action]}-badge[{check.action}] — {md(check.explanation)}")
