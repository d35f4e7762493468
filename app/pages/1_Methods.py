"""The Methods page: docs/methods.md (every formula, its source, where the workbench departs from it),
with each formula's value for the question loaded on Inspect and the settings that cite a source.
A section's record (the text after its RECORD line: the cases and measurements behind each choice) is folded."""
import re
from pathlib import Path

import streamlit as st

from app import wiring
from components.common import md
from components.settings_panel import current_values
from core.settings import SETTINGS

DOC = Path(__file__).resolve().parents[2] / "docs" / "methods.md"
RECORD = "<!-- how it was chosen -->"  # a section's description above this line, its record below
RECORD_LABEL = "How it was chosen"

st.set_page_config(page_title="Methods · Answerability Workbench", page_icon="📐", layout="wide")


@st.cache_data
def doc_sections(path: str, mtime: float) -> tuple[str, tuple[tuple[int, str, str, str], ...]]:
    """The doc's intro and its (level, title, description, record) sections at ## and ###, the record being
    what follows the RECORD line ('' without one); ``mtime`` re-reads an edited doc."""
    intro, sections = [], []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        heading = re.match(r"(#{2,3}) (.+)", line)
        if heading:
            sections.append((len(heading[1]), heading[2].strip(), []))
        elif line.startswith("# "):
            continue  # the doc's title: the page has its own
        else:
            (sections[-1][2] if sections else intro).append(line)

    def split(body: list[str]) -> tuple[str, str]:
        description, _, record = "\n".join(body).partition(RECORD)
        return description.strip(), record.strip()
    return "\n".join(intro).strip(), tuple((lvl, title, *split(body)) for lvl, title, body in sections)


def anchor(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def _fused(trace, values) -> str | None:
    if not trace.passages:
        return None
    top, alpha = trace.passages[0], float(values["fusion_alpha"])
    return f"rank 1: {alpha:.2f}·{top.dense:.3f} + {1 - alpha:.2f}·{top.bm25_norm:.3f} = **{top.fused:.3f}**"


def _evidence(trace, values) -> str | None:
    ev = trace.evidence
    if ev is None:
        return None
    return (f"{len(ev.sentences)} sentence(s) cover {len(ev.topics) - len(ev.uncovered)} of {len(ev.topics)} "
            f"topic(s); uncovered: {md(', '.join(ev.uncovered)) or 'none'}")


def _rho(trace, values) -> str | None:
    known, missing = len(trace.variables.known), len(trace.variables.missing)
    return (f"turn t = {len(trace.query.history)}: ρ = **{1 - trace.variables.incompleteness:.3f}**"
            if known + missing else None)


# Each formula's value for the question on Inspect, keyed by the start of the heading it belongs to.
CALIBRATED_HEADING = "Calibrated signals"


def calibrator_table() -> None:
    """Each shipped calibrator: what it answers, its features and weights, and its held-out AUROC."""
    from core import calibrated
    try:
        shipped = calibrated.load()
    except FileNotFoundError as exc:
        st.error(str(exc))
        return
    st.dataframe([{"probability": c.name, "answers": c.question,
                   "features (weight on the standardised value)": ", ".join(
                       f"{f} {w:+.2f}" for f, w in sorted(zip(c.features, c.coef), key=lambda fw: -abs(fw[1]))),
                   "held-out AUROC": ", ".join(f"{d} {a:.2f}" for d, a in (c.held_out_auroc or {}).items()
                                               if a is not None),
                   "fitted on": c.trained_on} for c in shipped.values()], hide_index=True, width="stretch")


LIVE = {
    "seed 000 — Sufficiency": lambda t, v: (f"Sufficiency = **{t.signals.sufficiency:.3f}** vs τ = "
                                            f"{float(v['sufficiency_min']):.2f}"),
    "seed 000 — Score(p)": lambda t, v: t.abduction and t.abduction.best and (
        f"p* scores {float(v['abduction_alpha']):.2f}·{t.abduction.best.entail:.3f} + "
        f"{float(v['abduction_beta']):.2f}·{t.abduction.best.retrieve:.3f} = **{t.abduction.best.score:.3f}** "
        f"({t.abduction.best.status})"),
    "seed 001 — the entailment filter": lambda t, v: (
        f"{sum(n.kept for n in t.nli)} of {len(t.nli)} kept at τ_e = {float(v['entail_keep']):.2f}"
        + (" (fallback)" if t.fallback else "")),
    "seed 002 §3.1 —": lambda t, v: (f"{len(t.variables.missing)} / ({len(t.variables.known)} + "
                                     f"{len(t.variables.missing)}) = **{t.variables.incompleteness:.3f}**"),
    "seed 002 §3.4 —": lambda t, v: (
        f"max cos = {t.signals.dense_top:.3f}, c = {float(v['conf_center']):.2f}, s = {float(v['conf_scale']):.2f} "
        f"→ Conf = **{t.signals.confidence:.3f}**; Coverage = **{t.signals.coverage:.3f}**"),
    "seed 002 §3.5 —": lambda t, v: (", ".join(f"{k} {x:.2f}" for k, x in t.signals.ambiguity_heuristics.items())
                                     + f" → Amb = **{t.signals.ambiguity:.3f}**"),
    "seed 002 §3.6 —": lambda t, v: (f"k = {int(v['conflict_top_n'])}: Conflict = **{t.signals.topic_spread:.3f}**; "
                                     f"NLI conflict = **{t.signals.nli_conflict:.3f}**"),
    "seed 002 §3.7 —": lambda t, v: (
        f"{t.signals.confidence:.3f} · {t.signals.coverage:.3f} · (1 − {t.signals.ambiguity:.3f}) · "
        f"(1 − {t.signals.topic_spread:.3f}) = **{t.signals.answerability:.3f}**"),
    "seed 002 §3.8 —": _rho,
    "seed 002 §3.9 —": lambda t, v: t.subgraph and (f"PathScore = **{t.subgraph.path_score:.3f}** over "
                                                    f"{len(t.subgraph.path)} nodes"),
    "seed 002 §5.2 —": _fused,
    "seed 003 — pragmatic evidence selection": _evidence,
}

values = current_values()
analysis = wiring.current_analysis(values)
trace, decision = analysis if analysis else (None, None)

st.title("Methods", anchor=False)
if trace:
    st.caption(f"Live values are for the question loaded on Inspect: “{md(trace.query.question)}” "
               f"(settings as in the sidebar there).")
else:
    st.info("Analyse a question on the Inspect page to see each formula's live values here.")

if not DOC.is_file():
    st.error(f"The methods document is missing: {DOC} (it ships with the repository; restore it with git).")
    st.stop()
intro, sections = doc_sections(str(DOC), DOC.stat().st_mtime)
st.markdown(intro)
with st.expander("Contents", expanded=True):
    st.markdown("\n".join(f"{'    ' * (level - 2)}- [{title}](#{anchor(title)})" for level, title, *_ in sections)
                + "\n- [Settings that cite a source](#settings-that-cite-a-source)")

for level, title, description, record in sections:
    (st.header if level == 2 else st.subheader)(title, anchor=anchor(title))
    st.markdown(description)
    if title.startswith(CALIBRATED_HEADING):
        calibrator_table()
    if trace is not None:
        live = next((fn for key, fn in LIVE.items() if title.startswith(key)), None)
        if live:
            st.markdown("**Live:** " + (live(trace, values) or "not computed for this question."))
        elif title.startswith("The gate as a whole"):
            st.markdown(f"**Live:** fired **{decision.rule}** → **{decision.action}**: {md(decision.reason)}")
    if record:
        with st.expander(RECORD_LABEL, expanded=False):
            st.markdown(record)

st.header("Settings that cite a source", anchor="settings-that-cite-a-source")
st.caption("Generated from core/settings.py: each setting whose help names a source document, its default "
           "(the source's own value is in the help) and the value in force.")
st.dataframe([{"setting": s.name, "default": str(s.default), "in force": str(values.get(s.name, s.default)),
               "what it does": s.help} for s in SETTINGS if "seed 00" in s.help.lower()],
             hide_index=True, width="stretch")
