"""Panel 4: candidate missing premises (seed 000's abductive step) with their validation numbers.

Every candidate is listed, rejected ones included, so the user sees why p* won and what
the knowledge base could not support. Text from documents, users and models is shown
escaped (dataframe cells are plain text; markdown goes through ``md``).
"""
from __future__ import annotations

import streamlit as st

from components.common import md, panel_header
from core.types import Abduction, Premise

HELP = ("Seed 000: when Sufficiency(Q, E) < τ, candidate missing premises p are proposed — by the generator, "
        "from the missing conditions (in the user's voice), from knowledge-graph facts outside the evidence E, "
        "and the claim itself — and validated by NLI. A candidate the evidence contradicts is rejected; "
        "Entail(E, p) is the best entailment of p by the evidence, Retrieve(p) the best entailment of p by "
        "passages retrieved for p outside E, and Score(p) = α·Entail(E, p) + β·Retrieve(p); p* is the best "
        "candidate not rejected. A p* the knowledge base supports turns the gap into an answer that cites it; "
        "one about the user names what to ASK; otherwise the needed fact is absent (ABSTAIN).")
EMPTY = ("No candidate premises yet: the abductive premises stage lands with the generation issue "
         "(it needs a generator backend). Until then the gate reads Sufficiency directly.")

OUTCOMES = {
    "answer": "p* is supported by the knowledge base outside E: the gap closes, and an answer cites it.",
    "ask": "p* is about the user, whom only they can confirm: ask about “{ask_about}”.",
    "abstain": "No candidate is supported: the needed fact is not in the knowledge base.",
}
STATUS = {
    "supported": "supported (KB outside E)",
    "in_evidence": "already in E",
    "about_user": "about the user",
    "unsupported": "unsupported",
    "rejected": "rejected (E contradicts it)",
}


def premise_rows(abduction: Abduction) -> list[dict]:
    """One table row per candidate, best first, p* marked."""
    return [{
        "p*": "★" if p == abduction.best else "",
        "premise": p.text,
        "origin": p.origin,
        "backend": p.backend,
        "Entail": round(p.entail, 3),
        "Retrieve": round(p.retrieve, 3),
        "Score": round(p.score, 3),
        "status": STATUS.get(p.status, p.status),
        "P(contradict)": round(p.contradiction, 3),
        "source": _source(p),
    } for p in abduction.candidates]


def _source(p: Premise) -> str:
    if p.status == "supported":
        return f"{p.support_title} ({p.support_passage}): {p.support_sentence}"
    if p.evidence_sentence:
        return f"E ({p.evidence_passage}): {p.evidence_sentence}"
    return ""


def render_premises(abduction: Abduction | None = None) -> None:
    panel_header("Candidate premises", HELP)
    if abduction is None:
        st.info(EMPTY)
        return
    if not abduction.triggered:
        st.markdown(f"Not needed: Sufficiency(Q, E) = **{abduction.sufficiency:.2f}** ≥ τ = **{abduction.tau:.2f}**, "
                    "so no premise was sought.")
        return
    st.markdown(f"Sufficiency(Q, E) = **{abduction.sufficiency:.2f}** < τ = **{abduction.tau:.2f}**: "
                f"{len(abduction.candidates)} candidate premise(s) validated.")
    if abduction.best is not None:
        best = abduction.best
        st.markdown(f"**p\\*** = “{md(best.text)}” — Score {best.score:.3f} = α·{best.entail:.3f} + β·"
                    f"{best.retrieve:.3f} · {STATUS.get(best.status, best.status)}")
    outcome = OUTCOMES.get(abduction.outcome, abduction.outcome)
    st.markdown(f"**Abduction's own outcome: {md(abduction.outcome)}** — {md(outcome.format(ask_about=abduction.ask_about))} "
                "(one reading among the signals: the verdict on the card is the gate's)")
    if abduction.candidates:
        st.dataframe(premise_rows(abduction), hide_index=True, width="stretch")
    for warning in abduction.warnings:
        st.warning(md(warning))
