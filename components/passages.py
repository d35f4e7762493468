"""Panel 1: the retrieved passages with every score that ranked and filtered them, the evidence
sentences chosen inside them (seed 003) and the sentence NLI found best supports the claim."""
from __future__ import annotations

from typing import Sequence

import streamlit as st

from components.common import NLI_COLORS, chip, esc, md, panel_header
from core.types import EvidenceSelection, EvidenceSentence, NliScores, PassageNli, RetrievedPassage

HELP = ("Hybrid retrieval (seed 002): fused = α·dense cosine + (1−α)·BM25 / max BM25, top-k by fused score. "
        "Each passage's sentences are scored by NLI against the claim; the chip shows P(entail) / P(neutral) / "
        "P(contradict) of its best sentence. Entailment filter (seed 001): a passage is kept when P(entail) ≥ τ; "
        "when none passes, all are kept (fallback). Evidence (seed 003's pragmatic loop): each sentence of the top "
        "passages is scored by its mean alignment with the question's topics not yet covered; the best is chosen, "
        "the topics it covers are dropped, the query is reformulated from the rest, and the loop repeats until "
        "every topic is covered or no sentence reaches M. Chosen sentences are highlighted in green inside their "
        "passage (E1, E2, … in the order chosen); the NLI best sentence is underlined (highlighted in yellow when "
        "there is no evidence selection).")
EVIDENCE_COLOR = "#c9f0d2"
NLI_MARK = "border-bottom:2px dashed #b26a00"
STOP_REASONS = {
    "covered": "every topic is covered",
    "below_threshold": "no remaining sentence aligns with what is still uncovered well enough (M)",
    "max_sentences": "the sentence limit was reached",
    "no_topics": "the question has no content topics",
    "no_sentences": "the top passages have no candidate sentences",
}


def nli_chip(scores: NliScores) -> str:
    """The NLI label with its three probabilities."""
    probs = f"e {scores.entailment:.2f} · n {scores.neutral:.2f} · c {scores.contradiction:.2f}"
    return chip(f"{scores.label} — {probs}", NLI_COLORS[scores.label],
                "NLI probabilities of the claim given the best sentence")


def _spans(text: str, spans: Sequence[tuple[int, int, str]]) -> list[tuple[str, frozenset[str]]]:
    """``text`` cut at every span boundary: each piece with the labels of the spans covering it.
    Spans outside the text or empty are ignored, so a bad offset never breaks the markup."""
    valid = [(a, b, label) for a, b, label in spans if 0 <= a < b <= len(text)]
    cuts = sorted({0, len(text)} | {a for a, _, _ in valid} | {b for _, b, _ in valid})
    return [(text[a:b], frozenset(label for s, e, label in valid if s <= a and b <= e))
            for a, b in zip(cuts, cuts[1:]) if b > a]


def passage_html(rp: RetrievedPassage, highlight: int | None, note: str = "",
                 evidence: Sequence[tuple[int, EvidenceSentence]] = (), selection: bool = False) -> str:
    """The full passage text, escaped, with its evidence sentences (``(number, sentence)``) in green
    <mark>s and sentence ``highlight`` (NLI's best) underlined — or, when the trace has no evidence
    selection (``selection`` False), in a yellow <mark>. Sentence offsets index the document, so they
    are shifted by the passage's start; evidence offsets already index the passage's text."""
    p = rp.passage
    spans: list[tuple[int, int, str]] = [(e.start, e.end, f"E{n}") for n, e in evidence]
    if highlight is not None and 0 <= highlight < len(p.sentences):
        s = p.sentences[highlight]
        spans.append((s.start - p.start, s.end - p.start, "nli"))
    titles = {f"E{n}": f"evidence E{n} (seed 003): covers {', '.join(e.topics) or 'no topic'}; "
                       f"alignment {e.score:.2f}" for n, e in evidence}
    opened: set[str] = set()
    parts = []
    for piece, labels in _spans(p.text, spans):
        html = esc(piece)
        if "nli" in labels and selection:
            html = f'<span class="aw-nli-best" title="{esc(note)}" style="{NLI_MARK}">{html}</span>'
        elif "nli" in labels:
            html = f'<mark title="{esc(note)}" style="background:#fff1a8;padding:0 1px">{html}</mark>'
        for label in sorted(labels - {"nli"}):
            first = label not in opened
            opened.add(label)
            tag = f'<sup style="font-weight:700;color:#1b7f3b">{label}</sup>' if first else ""
            html = (f'<mark class="aw-evidence" data-evidence="{label}" title="{esc(titles[label])}" '
                    f'style="background:{EVIDENCE_COLOR};padding:0 1px">{tag}{html}</mark>')
        parts.append(html)
    return ('<div style="white-space:pre-wrap;font-size:0.92em;line-height:1.45;border-left:3px solid #ddd;'
            f'padding:4px 10px;margin:4px 0 8px 0">{"".join(parts)}</div>')


def evidence_line(evidence: Sequence[tuple[int, EvidenceSentence]]) -> str:
    """What each evidence sentence of a passage covers."""
    if not evidence:
        return ""
    items = [f"<b>E{n}</b> covers {', '.join(f'“{esc(t)}”' for t in e.topics) or 'no topic'} "
             f"(alignment {e.score:.2f})" for n, e in evidence]
    return '<div style="font-size:0.85em;color:#1b5e20">Evidence: ' + " · ".join(items) + "</div>"


def score_line(rp: RetrievedPassage, alpha: float) -> str:
    line = (f"fused <b>{rp.fused:.3f}</b> = {alpha:.2f}·dense {rp.dense:.3f} + {1 - alpha:.2f}·BM25 "
            f"{rp.bm25_norm:.3f} (raw BM25 {rp.bm25:.2f})")
    if rp.scenario_penalty:
        line += (f"; ranked at {rp.score:.3f}: its document fits the question with your scenario "
                 f"{rp.scenario_penalty:.3f} worse than the best one")
    return line


def passage_card(rp: RetrievedPassage, n: PassageNli | None, fallback: bool, fusion_alpha: float,
                 entail_keep: float, evidence: Sequence[tuple[int, EvidenceSentence]] = (),
                 selection: bool = False) -> str:
    """One passage as a single HTML block (one element per passage keeps reruns light)."""
    kept = n is None or n.kept
    status = (chip("kept (fallback)" if fallback else "kept", "#1b7f3b") if kept
              else chip(f"filtered: P(entail) < {entail_keep:.2f}", "#8a8a8a"))
    subs = ""
    if n and n.sub_claims:
        subs = ('<div style="font-size:0.85em;color:#666">Sub-claims, P(entail) by their best sentence: '
                + " · ".join(f"#{i + 1} {s.entailment:.2f}" for i, s in enumerate(n.sub_claims)) + "</div>")
    if n and n.decisive and n.decisive.label != n.claim.label:
        which = n.decisive_text(rp.passage)
        subs += ('<div style="font-size:0.85em;color:#666">Another sentence decides the claim more'
                 f'{f": “{esc(which)}”," if which else ":"} {n.decisive.label} (P(contradiction) '
                 f'{n.decisive.contradiction:.2f}, P(neutral) {n.decisive.neutral:.2f}); the signals read it</div>')
    note = f"best NLI support: P(entail) {n.claim.entailment:.2f}" if n else ""
    return (f'<div class="aw-passage" style="border:1px solid #e3e3e3;border-radius:8px;padding:8px 12px;'
            f'margin-bottom:10px"><div><b>#{rp.rank} {esc(rp.passage.title)}</b> <code>{esc(rp.passage.id)}'
            f'</code> {status}{nli_chip(n.claim) if n else ""}</div>'
            f'<div style="font-size:0.9em;margin:4px 0">{score_line(rp, fusion_alpha)}</div>{subs}'
            f'{passage_html(rp, n.best_sentence if n else None, note, evidence, selection)}'
            f'{evidence_line(evidence)}</div>')


def render_evidence_trace(selection: EvidenceSelection) -> None:
    """Seed 003's loop step by step: what was left to cover, the reformulated query, the best sentence."""
    with st.expander(f"Evidence selection: {len(selection.sentences)} sentence(s), "
                     f"{len(selection.uncovered)} topic(s) uncovered — iteration trace (seed 003)"):
        st.markdown("**Topics of the question:** " + (" · ".join(md(t) for t in selection.topics) or "none"))
        if selection.steps:
            st.dataframe([{"iteration": s.iteration, "topics remaining": ", ".join(s.remaining),
                           "reformulated query": s.query, "best sentence": s.text or "— none covers a topic —",
                           "passage": s.passage_id, "alignment": s.score, "chosen": s.chosen}
                          for s in selection.steps], hide_index=True, width="stretch")
        uncovered = " · ".join(md(t) for t in selection.uncovered)
        st.markdown(f"**Stopped:** {STOP_REASONS.get(selection.stop, selection.stop)}. "
                    + (f"**Uncovered topics:** {uncovered} (they lower Coverage and may be missing variables)."
                       if uncovered else "Every topic is covered."))


def render_passages(passages: Sequence[RetrievedPassage], nli: Sequence[PassageNli], fallback: bool,
                    fusion_alpha: float, entail_keep: float, evidence: EvidenceSelection | None = None) -> None:
    panel_header("Retrieved passages", HELP)
    if not passages:
        st.info("The knowledge base returned no passages for this question.")
        return
    if fallback:
        st.warning(f"No passage reached P(entail) ≥ {entail_keep:.2f} against the claim, so the entailment filter "
                   f"kept all {len(passages)} retrieved passages (seed 001 fallback). One passage seldom entails a "
                   "claim whole (a wh-question's almost never, and a no is a contradiction); whether a passage states "
                   "the asked fact is P(fact stated)'s call, on the card.")
    by_id = {n.passage_id: n for n in nli}
    numbered = list(enumerate(evidence.sentences if evidence else (), 1))
    st.html("".join(passage_card(rp, by_id.get(rp.passage.id), fallback, fusion_alpha, entail_keep,
                                 [(k, e) for k, e in numbered if e.passage_id == rp.passage.id], evidence is not None)
                    for rp in passages))
    if evidence is not None:
        render_evidence_trace(evidence)
