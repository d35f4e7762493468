"""Panel 2: the claim NLI checks the passages against, and its sub-claims."""
from __future__ import annotations

import streamlit as st

from components.common import md, panel_header
from core.types import Claim

HELP = ("The question rewritten as a declarative hypothesis (seed 001): existential \"There exists …\", "
        "comparative \"One of X or Y is …\", conjunctive \"X and Y are …\" (each with a sub-claim per "
        "entity), or a polar statement for yes/no questions. NLI scores every passage against it.")

SCHEMAS = {
    "existential": "Existential declaration (“There exists …”)",
    "comparative": "Comparative / disjunctive (“One of X or Y is …”)",
    "conjunctive": "Conjunctive, shared attribute (“X and Y are …”)",
    "polar": "Polar: the yes/no question as a statement",
    "statement": "Statement",
}


def render_claim(claim: Claim) -> None:
    panel_header("Claim and sub-claims", HELP)
    st.markdown(f"**Claim:** {md(claim.text)}")
    details = [f"schema **{SCHEMAS.get(claim.schema, claim.schema)}**", f"produced by `{claim.source}`"]
    if claim.wh:
        details.append(f"asks *{md(claim.wh)}*")
    if claim.answer_type:
        details.append(f"expects a **{md(claim.answer_type)}**")
    st.caption(" · ".join(details))
    if claim.sub_claims:
        st.markdown("\n".join(f"{i}. {md(s)}" for i, s in enumerate(claim.sub_claims, 1)))
    else:
        st.caption("No sub-claims: this schema checks the claim as a whole.")

