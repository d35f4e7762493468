"""Panel 8: the final action card — what the agents wrote (``core.agents.respond_checked``): the
answer with its citations, the one clarification question, or the specific reason for abstaining,
with the kind of response, the backend that wrote it and any warning.

The card builds no wording of its own. In a clarification dialogue the page passes the response of
the dialogue's current turn (``Turn.response``): the question the reply box answers (never one
asked before), or why it abstains when everything still open was asked already.
"""
from __future__ import annotations

import hashlib
import json

import streamlit as st

from components.common import ACTION_COLORS, esc
from core.types import Decision, Response, to_dict

HEADLINES = {
    "extractive": "Answer quoted from the evidence", "polarity": "Answer decided by your facts",
    "premise": "Answer through a supported premise", "generated": "Generated",
    "condition": "Clarification needed", "which_one": "Which topic do you mean?",
    "topic_absent": "Not in the knowledge base", "fact_absent": "Topic found, fact missing",
    "already_asked": "Nothing left to ask",
}


def headline(response: Response) -> str:
    """The card's title for the response's kind (an ASK about a premise is still a clarification)."""
    if response.action == "ASK" and response.kind != "which_one":
        return "Clarification needed"
    if response.kind == "generated":
        return "Generated answer" if response.action == "ANSWER" else "Not answerable"
    return HEADLINES.get(response.kind, response.kind)


def decision_digest(decision: Decision) -> str:
    """A short fingerprint of the decision and every comparison it made (thresholds included)."""
    return hashlib.sha1(json.dumps(to_dict(decision), sort_keys=True).encode()).hexdigest()[:12]


def card_html(response: Response, rule: str, question: str = "", digest: str = "", turn: int = 0) -> str:
    """The card; its data- attributes name the action, the question, the decision digest and the
    dialogue turn, so a browser test sees a re-gate or a new turn by reading one attribute. Every
    text (the response quotes documents, the user and models) is escaped."""
    color = ACTION_COLORS[response.action]
    cites = "".join(f"<li><b>{esc(c.title)}</b> — <code>{esc(c.passage_id)}</code>: “{esc(c.sentence)}”</li>"
                    for c in response.citations)
    return (f'<div id="aw-action" data-action="{esc(response.action)}" data-question="{esc(question)}" '
            f'data-decision="{esc(digest)}" data-turn="{turn}" data-kind="{esc(response.kind)}" '
            f'data-backend="{esc(response.backend)}" style="border:2px solid {color};border-radius:8px;'
            f'padding:10px 14px;margin:4px 0 10px 0">'
            f'<div style="font-size:0.85em;color:{color};font-weight:700;letter-spacing:0.05em">'
            f'{esc(response.action)} · {esc(headline(response))} <span style="color:#777;font-weight:400">'
            f'(rule {esc(rule)} · {esc(response.kind)} · written by {esc(response.backend)})</span></div>'
            f'<div style="font-size:1.15em;margin:6px 0">{esc(response.text)}</div>'
            + (f'<div style="font-size:0.85em;margin-top:6px">Sources:<ul style="margin:2px 0">{cites}</ul></div>'
               if cites else "")
            + (f'<div style="color:#8a5300;font-size:0.85em;margin-top:4px">⚠ {esc(response.warning)}</div>'
               if response.warning else "") + "</div>")


def render_action(decision: Decision, response: Response, question: str = "", turn_index: int = 0) -> None:
    st.html(card_html(response, decision.rule, question, decision_digest(decision), turn_index))
