"""Panel 3: the information state S(q) = (V_known, V_missing, C) and I(q)."""
from __future__ import annotations

import streamlit as st

from components.common import md, panel_header
from core.types import VariableState

HELP = ("Seed 002 §3.1. Known: entities and values the user stated, plus conditions their facts establish. "
        "Conditions come from the best kept passage (bullets under a lead-in, if / unless / only-if clauses, "
        "must / eligible sentences) and are checked against the scenario and answered follow-ups — by number, "
        "by a matching follow-up, or by NLI. I(q) = |missing| / (|known| + |missing|) (Eq. 2).")

OUTCOMES = {
    "satisfied": "every required condition is established",
    "failed": "a required condition is contradicted",
    "undetermined": "some condition is still open",
    "none": "the evidence imposes no condition on the asker",
}


def render_variables(variables: VariableState) -> None:
    panel_header("Variables", HELP)
    statuses = [c.status for c in variables.conditions]
    k, m = len(variables.known), len(variables.missing)
    cols = st.columns(5)
    cols[0].metric("Known", k)
    cols[1].metric("Established", statuses.count("established"))
    cols[2].metric("Contradicted", statuses.count("contradicted"))
    cols[3].metric("Missing", m)
    cols[4].metric("I(q)", f"{variables.incompleteness:.2f}", help="|missing| / (|known| + |missing|)")
    st.markdown(f"I(q) = {m} / ({k} + {m}) = **{variables.incompleteness:.2f}** · outcome "
                f"**{variables.outcome}**: {OUTCOMES.get(variables.outcome, '')}")
    if variables.known:
        st.markdown("**Known:** " + " · ".join(md(v) for v in variables.known))
    if variables.conditions:
        st.dataframe([{
            "status": c.status, "condition": c.text, "kind": c.kind, "combines": c.group,
            "decided by": c.support, "method": c.method,
            "P(entail)": None if c.scores is None else round(c.scores.entailment, 3),
            "P(contradict)": None if c.scores is None else round(c.scores.contradiction, 3),
            "passage": c.passage_id,
        } for c in variables.conditions], hide_index=True, width="stretch")
    else:
        st.caption("No conditions were read: the question is not about the asker, or the best passage states none.")
    if variables.missing:
        st.markdown("**Missing:**\n" + "\n".join(f"- {md(v)}" for v in variables.missing))
