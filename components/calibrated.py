"""The calibrated signals: each probability, the features that moved it, and how well it separates."""
from __future__ import annotations

import streamlit as st

from components.common import md
from core import calibrated
from core.types import Trace

HELP = ("Each probability is a small logistic model over named features of this trace, fitted on the "
        "training data in ../shared/data/train (ShARC train trees, ContractNLI train, SQuAD train articles) "
        "and, for P(fact stated), the questions of train_kb/, so a threshold means the same on every knowledge "
        "base. P(condition open) and P(fact stated) are mixed with P(depends), whether the answer turns on "
        "the asker's circumstances, and P(fact stated) is multiplied by P(topic covered), a fact being stated "
        "only where its topic is: 'composed as' shows how (the share of questions the model covers times its "
        "own probability, plus the other side's), and the features are those of the model's own part. The "
        "features listed pushed the log-odds up (+) or down (−); 'held-out AUROC' is how well the model "
        "separated its target on rule trees, contracts, articles or documents it was not fitted on (0.5 is "
        "chance).")


def composition(model: calibrated.Calibrator, own: float, found: dict[str, float]) -> str:
    """How a chained probability is made of its own model's and the ones it is within or conditional on
    (``calibrated.chained``): "(1 − p_depends) 0.98 × (p_topic 0.95 × 0.65) + 0.02 × 1" for P(fact stated), the
    side its model covers first, then the other side's share times the value there; "" for a model alone."""
    within = f"{model.within} {found[model.within]:.2f} × {own:.2f}" if model.within else ""
    if not model.given:
        return within
    part = f"({within})" if within else f"{own:.2f}"
    side = found[model.given] if model.given_value else 1.0 - found[model.given]
    covers = model.given if model.given_value else f"(1 − {model.given})"
    return f"{covers} {side:.2f} × {part} + {1.0 - side:.2f} × {model.otherwise:g}"


def calibrated_rows(trace: Trace) -> list[dict]:
    """One row per calibrated probability: its value, how it is composed, question, strongest features and
    held-out AUROC."""
    values = calibrated.features(trace)
    models = calibrated.load()
    found = calibrated.chained(values, models)
    rows = []
    for name, model in models.items():
        pushes = sorted(model.contributions(values).items(), key=lambda kv: -abs(kv[1]))[:3]
        rows.append({"signal": name, "probability": round(getattr(trace.signals, name, found[name]), 3),
                     "composed as": composition(model, model.probability(values), found),
                     "asks": model.question,
                     "strongest features": ", ".join(f"{f} {v:+.2f}" for f, v in pushes),
                     "held-out AUROC": ", ".join(f"{d} {a:.2f}" for d, a in (model.held_out_auroc or {}).items()
                                                 if a is not None and d != "all")})
    return rows


def render_calibrated(trace: Trace) -> None:
    st.subheader("Calibrated signals", anchor=False, help=HELP)
    try:
        rows = calibrated_rows(trace)
    except FileNotFoundError as exc:
        st.error(str(exc))
        return
    st.dataframe(rows, hide_index=True, width="stretch")
    if trace.passages and (asked := calibrated.asked_terms(trace.query.question, trace.passages[0].passage.title)):
        st.caption(f"What the question asks beyond its topic: {md(', '.join(asked))}. A sentence of the top passages "
                   f"says {calibrated.asked_found(trace):.0%} of it (asked_found, read by P(fact stated)).")
    refs = calibrated.referents(trace.query.question, trace.passages, trace.rivals)
    if len(refs) > 1:
        st.caption("The question could mean any of: " + "; ".join(md(r) for r in refs))
