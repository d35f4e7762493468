"""The verdict card, the first thing on the Inspect page: the action, what the agents wrote (the
answer, the one clarification question, or the refusal), the one or two sentences of evidence it
rests on, the rule that decided in plain words, and what would change the verdict.

A refusal says what the deciding rule found — the topic is absent, the topic is there but the fact
is not, or the conditions the answer depends on are still unknown — and cites only what supports
that: a topic-absent refusal names the closest document as a weak match, never as a source. When
the agent's wording contradicts the deciding rule (it called a topic-absent refusal "fact
missing"), the card words the refusal from the rule instead.
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import Sequence

import streamlit as st

from components.common import ACTION_COLORS, esc
from core.gate import FACT_ABSENT_RULES, TOPIC_ABSENT_RULES
from core.types import Citation, Decision, Response, Trace, to_dict
from core.what_if import VerdictChange, describe

HEADLINES = {
    "extractive": "Answer quoted from the evidence", "polarity": "Answer decided by your facts",
    "premise": "Answer through a supported premise", "generated": "Generated",
    "condition": "Clarification needed", "which_one": "Which topic do you mean?",
    "topic_absent": "Not in the knowledge base", "fact_absent": "Topic found, fact missing",
    "conditions_unknown": "Conditions unknown", "already_asked": "Conditions unknown",
}
SIGNAL_WORDS = {"confidence": "retrieval confidence", "coverage": "question terms found",
                "evidence_coverage": "question topics covered", "ambiguity": "ambiguity",
                "topic_spread": "topic spread", "nli_conflict": "contradiction between passages",
                "score_gap": "score gap", "incompleteness": "share of conditions unknown",
                "sufficiency": "entailment by the evidence", "answer_type_found": "answer of the asked type found",
                "grounding_entailment": "answer entailed by its sources",
                "grounding_contradiction": "answer contradicted by its sources",
                "p_topic": "probability the knowledge base covers the topic", "p_fact": "probability the fact is stated",
                "p_open": "probability a condition is still open",
                "p_depends": "probability the answer turns on the asker's circumstances",
                "referents": "documents the question could mean",
                "age_bands": "values of the amount the evidence gives by age",
                "age_told": "the asker has told an age"}
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_SEED_NOTE = re.compile(r"\s*\((?:[^()]*\b(?:seed|Eq\.|§)[^()]*)\)|\s*\bseed \d+[^:.;]*[:;]")


def refusal_kind(decision: Decision, response: Response) -> str:
    """topic_absent | fact_absent | conditions_unknown for a refusal, from the deciding rule ("" otherwise)."""
    if response.action != "ABSTAIN":
        return ""
    if response.kind == "already_asked":
        return "conditions_unknown"
    if decision.rule in TOPIC_ABSENT_RULES:
        return "topic_absent"
    if decision.rule in FACT_ABSENT_RULES:
        return "fact_absent"
    return response.kind if response.kind in HEADLINES else "fact_absent"


def headline(response: Response, refusal: str = "") -> str:
    """The card's title: a refusal by what its rule found; otherwise by the response's kind."""
    if refusal:
        return HEADLINES[refusal]
    if response.action == "ASK" and response.kind != "which_one":
        return "Clarification needed"
    if response.kind == "generated":
        return "Generated answer" if response.action == "ANSWER" else "Not answerable"
    return HEADLINES.get(response.kind, response.kind)


def plain(text: str) -> str:
    """A rule's explanation as its first sentence, without its method references and its asides on the rule's
    order and how it was fitted (they live in the gate trace, the help and on Methods): what the card's reader
    needs is what the rule found."""
    return SENTENCE_END.split(" ".join(_without_asides(_SEED_NOTE.sub("", text)).split()), maxsplit=1)[0]


def _without_asides(text: str) -> str:
    """``text`` less every parenthesised aside that opens with a capital letter ("(Before condition_open: …)",
    "(Not for a question told with a scenario: …)") or a quotation, nested brackets included. A quoted example
    ("(\"£71.70 for people aged under 25 …\")") read on the card as this question's evidence (a browser
    walkthrough: Jobseeker's Allowance rates under a Winter Fuel Payment question); a gloss ("(calibrated P(topic
    covered) is low)") stays."""
    out, k = [], 0
    while k < len(text):
        # an aside follows a space; "P(ANSWER) 0.12" is a name, whatever it holds
        if text[k] == "(" and (k == 0 or text[k - 1].isspace()) and (text[k + 1:k + 2].isupper()
                                                                    or text[k + 1:k + 2] in "\"“"):
            depth, end = 0, k
            while end < len(text):
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                if depth == 0:
                    break
                end += 1
            k = end + 1
            continue
        out.append(text[k])
        k += 1
    return re.sub(r"\s+([.,;:])", r"\1", "".join(out))


def why_sentence(decision: Decision, response: Response, refusal: str) -> str:
    """The card's "Why": the deciding rule, or, when the dialogue refuses to ask again, that."""
    if refusal == "conditions_unknown":
        return ("Every condition the answer depends on that is still open was asked already, and the replies "
                f"did not settle it (the gate would ask again by rule {decision.rule}).")
    return rule_sentence(decision)


def rule_sentence(decision: Decision) -> str:
    """The deciding rule in plain words, with the numbers it compared."""
    rule = next((r for r in reversed(decision.rules) if r.fired and r.name == decision.rule), None)
    reason = plain(rule.explanation if rule else decision.reason)
    numbers = [f"{SIGNAL_WORDS[c.signal]} {c.value:.2f} {c.op} {c.threshold:.2f}"
               for c in (rule.comparisons if rule else ()) if c.signal in SIGNAL_WORDS]
    return reason + (f" ({'; '.join(numbers)})" if numbers else "")


def decision_digest(decision: Decision) -> str:
    """A short fingerprint of the decision and every comparison it made (thresholds included)."""
    return hashlib.sha1(json.dumps(to_dict(decision), sort_keys=True).encode()).hexdigest()[:12]


def _quote(c: Citation) -> str:
    return f"<li><b>{esc(c.title)}</b>: “{esc(c.sentence)}”</li>"


def grounds(response: Response, refusal: str, trace: Trace | None) -> tuple[str, str]:
    """(label, escaped HTML list) of what the card rests on: the evidence of an answer or a question;
    for a refusal only what supports what its rule found."""
    if refusal == "topic_absent":
        titles = [p.passage.title for p in trace.passages[:1]] if trace else [c.title for c in response.citations[:1]]
        return ("Closest document — a weak match, not a source",
                "".join(f"<li>{esc(t)}</li>" for t in titles)) if titles else ("", "")
    if refusal == "conditions_unknown" and trace is not None:
        open_ = [c for c in trace.variables.conditions if c.status == "missing"]
        titles = {p.passage.id: p.passage.title for p in trace.passages}
        return ("Still unknown (the answer depends on it)",
                "".join(f"<li><b>{esc(titles.get(c.passage_id, c.passage_id))}</b>: {esc(c.text)}</li>"
                        for c in open_[:3])) if open_ else ("", "")
    if refusal == "fact_absent" and trace is not None and trace.evidence and trace.evidence.sentences:
        titles = {p.passage.id: p.passage.title for p in trace.passages}
        items = "".join(f"<li><b>{esc(titles.get(s.passage_id, s.passage_id))}</b>: “{esc(s.text)}”</li>"
                        for s in trace.evidence.sentences[:2])
        return FACT_ABSENT_GROUNDS, items
    label = FACT_ABSENT_GROUNDS if refusal == "fact_absent" else "Evidence"
    # a yes or no lists every condition that decided it, as its text quotes them (a browser walkthrough: a Yes
    # resting on three conditions listed two); other answers their first two sources
    shown = response.citations if response.kind == "polarity" else response.citations[:2]
    return (label, "".join(_quote(c) for c in shown)) if shown else ("", "")


# What a fact-absent refusal shows its sentences as: judged, by P(fact stated) under its bar, not to state the asked
# fact, which a sentence may yet do (a browser walkthrough: "When did Osric Vell die?" refused above "… where he
# died in 1959.", headed "it does not state what was asked")
FACT_ABSENT_GROUNDS = "Where the topic is found (judged not to state what was asked)"


REFUSAL_TEXT = {"topic_absent": "I can't answer this: the knowledge base does not seem to cover this topic.",
                "fact_absent": "I can't answer this: the knowledge base covers the topic but does not state what "
                               "was asked."}


def card_text(response: Response, refusal: str) -> str:
    """The agent's text, unless it contradicts what the deciding rule found (then the rule's words;
    the numbers follow under "Why")."""
    if refusal in REFUSAL_TEXT and response.kind in REFUSAL_TEXT and response.kind != refusal:
        return REFUSAL_TEXT[refusal]
    return response.text


def card_html(response: Response, decision: Decision, question: str = "", digest: str = "", turn: int = 0,
              trace: Trace | None = None, changes: Sequence[VerdictChange] = (), stale: bool = False) -> str:
    """The card; its data- attributes name the action, the refusal kind, the question, the decision
    digest and the dialogue turn, so a browser test reads a re-gate or a new turn from one attribute.
    Every text (the response quotes documents, the user and models) is escaped here, once."""
    color = ACTION_COLORS[response.action]
    refusal = refusal_kind(decision, response)
    label, items = grounds(response, refusal, trace)
    change = (" Or: ".join(describe(c) for c in changes) if changes
              else "No single gate threshold changes this verdict." if trace is not None else "")
    if response.action != decision.action:  # the dialogue refused to ask again: the gate's thresholds do not apply
        change = ""
    return (f'<div id="aw-action" data-action="{esc(response.action)}" data-question="{esc(question)}" '
            f'data-decision="{esc(digest)}" data-turn="{turn}" data-kind="{esc(response.kind)}" '
            f'data-refusal="{esc(refusal)}" data-stale="{str(stale).lower()}" data-backend="{esc(response.backend)}" '
            f'style="border:2px solid {color};border-radius:8px;padding:10px 14px;margin:4px 0 10px 0'
            f'{";opacity:0.45" if stale else ""}">'
            f'<div style="font-size:1.35em;color:{color};font-weight:700">{esc(response.action)} '
            f'<span style="font-size:0.75em">· {esc(headline(response, refusal))}</span></div>'
            f'<div style="font-size:1.15em;margin:6px 0">{esc(card_text(response, refusal))}</div>'
            + (f'<div class="aw-grounds" style="font-size:0.9em;margin-top:6px">{esc(label)}:'
               f'<ul style="margin:2px 0">{items}</ul></div>' if items else "")
            + f'<div class="aw-rule" style="font-size:0.9em;margin-top:4px"><b>Why:</b> {esc(why_sentence(decision, response, refusal))}'
              f'</div>'
            + (f'<div id="aw-whatif" style="font-size:0.9em;margin-top:4px"><b>What would change it:</b> '
               f'{esc(change)}</div>' if change else "")
            + (f'<div style="color:#8a5300;font-size:0.85em;margin-top:4px">⚠ {esc(response.warning)}</div>'
               if response.warning else "")
            + f'<div style="color:#777;font-size:0.75em;margin-top:4px">rule {esc(decision.rule)} · '
              f'{esc(response.kind)} · written by {esc(response.backend)}</div></div>')


def render_action(decision: Decision, response: Response, question: str = "", turn_index: int = 0,
                  trace: Trace | None = None, changes: Sequence[VerdictChange] = (), stale: bool = False) -> None:
    st.html(card_html(response, decision, question, decision_digest(decision), turn_index, trace, changes, stale))
