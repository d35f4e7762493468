"""Panel 4: candidate missing premises (seed 000's abductive step).

The premises stage lands with the generation issue; until then this panel says so.
When the trace carries premises, their table (Entail, Retrieve, Score, p*) goes here.
"""
from __future__ import annotations

import streamlit as st

from components.common import panel_header

HELP = ("Seed 000: when Sufficiency(Q, E) < τ, candidate missing premises p are generated and validated; "
        "Score(p) = α·Entail(E, p) + β·Retrieve(p) and the best valid one is p*.")
EMPTY = ("No candidate premises yet: the abductive premises stage lands with the generation issue "
         "(it needs a generator backend). Until then the gate reads Sufficiency directly.")


def render_premises() -> None:
    panel_header("Candidate premises", HELP)
    st.info(EMPTY)
