"""The clarification dialogue under the action card: the reply box when the action is ASK, and the
conversation as turns (action, the conditions each reply settled, ρ_t), with "Start over" and
editing an earlier reply.

Widgets call back with a move (a reply, or a turn to re-run from); the page applies it before the
next draw, so the dialogue itself (``core.dialogue``) stays a pure value.
"""
from __future__ import annotations

import hashlib
from typing import Callable

import streamlit as st

from components.common import ACTION_BADGE, md, panel_header
from core.agents import WORDED_ASKS
from core.dialogue import Dialogue, Turn

HELP = ("Seed 002 §3.11: a reply joins the dialogue history as (clarification, reply) and the question is "
        "analysed again, S_{t+1} = S_t ∪ resolve(q_t, a_t) (Eq. 20). Retrieval, evidence and NLI come from the "
        "pipeline's caches (the question did not change); the variables stage re-checks the open conditions "
        "against the reply — a yes/no reply as the answer to the matching question, any other reply as a stated "
        "fact (numbers, NLI). ρ_t = |known| / (|known| + |missing|) (Eq. 15). No condition is asked twice.")

Answer = Callable[[str, str], None]  # (reply, the question it answers)
Rewind = Callable[[int, "str | None"], None]  # (turn index, new reply or None)


def shown(dialogue: Dialogue) -> bool:
    """The panel appears once there is a conversation: something is asked or was answered."""
    return dialogue.current.action == "ASK" or len(dialogue.turns) > 1


def render_reply_box(turn: Turn, on_answer: Answer) -> None:
    """Answer the clarification in place: free text, or yes / no for a yes/no question."""
    if turn.action != "ASK":
        return
    text_col, send_col = st.columns([5, 1], vertical_alignment="bottom")
    text_col.text_input("Your reply", key="aw_reply",
                        placeholder="e.g. Yes — or a fact: I have lived here since 2019",
                        help="Press Send; a free-text reply is read as a fact about you (numbers, NLI).")
    send_col.button("Send", key="aw_send", width="stretch",
                    on_click=lambda: on_answer(st.session_state.get("aw_reply", ""), turn.question))
    if turn.kind not in WORDED_ASKS:  # the other clarifications are yes/no questions about a condition
        yes, no, _ = st.columns([1, 1, 4])
        yes.button("Answer: yes", key="aw_yes", on_click=on_answer, args=("Yes", turn.question), width="stretch")
        no.button("Answer: no", key="aw_no", on_click=on_answer, args=("No", turn.question), width="stretch")


def _text(value: object) -> str:
    """Document or user text for markdown, escaped once: every markdown and HTML character
    backslash-escaped (``md``), so "Carer's" reads as typed and a hostile "<" stays text."""
    return md(value)


def turn_markdown(index: int, turn: Turn) -> str:
    """One turn as markdown: action, ρ_t, what the previous reply settled, the question and the reply."""
    badge = f":{ACTION_BADGE[turn.action]}-badge[{turn.action}]"
    polarity = turn.decision.answer_polarity if turn.action == "ANSWER" else ""
    polarity = f" ({polarity})" if polarity else ""
    lines = [f"**Turn {index}** · {badge}{polarity} · ρ_{index} = **{turn.rho:.2f}** · rule `{turn.decision.rule}`"]
    if turn.note:
        lines.append(f"*{_text(turn.note)}*")
    for c in turn.resolved:
        lines.append(f"- resolved **{c.status}**: {_text(c.text)} ← {_text(c.support)} ({_text(c.method)})")
    if turn.override:
        lines.append(_text(turn.override))
    if turn.question:
        replied = f" → replied *{_text(turn.reply)}*" if turn.reply else ""
        lines.append(f"Asked: **{_text(turn.question)}**{replied}")
    return "\n\n".join(lines)


def _edit_key(index: int, turn: Turn) -> str:
    """A key that changes with the turn's content, so an edit box never shows a stale reply."""
    return f"aw_edit_{index}_" + hashlib.sha1(f"{turn.question}\n{turn.reply}".encode()).hexdigest()[:8]


def render_turns(dialogue: Dialogue, on_rewind: Rewind) -> None:
    """The conversation, oldest turn first; each answered turn's reply can be edited and re-run."""
    panel_header("Dialogue", HELP)
    for i, turn in enumerate(dialogue.turns):
        with st.container(border=True):
            st.markdown(turn_markdown(i, turn))
            if turn.answered:
                key = _edit_key(i, turn)
                box, button = st.columns([5, 1], vertical_alignment="bottom")
                box.text_input(f"Edit the reply to turn {i}", value=turn.reply, key=key)
                button.button(f"Re-run from turn {i}", key=f"aw_rerun_{i}", width="stretch",
                              on_click=lambda i=i, key=key: on_rewind(i, st.session_state.get(key, "")))
    st.button("Start over", key="aw_start_over", on_click=on_rewind, args=(0, None),
              disabled=len(dialogue.turns) == 1, help="Back to turn 0: every reply is dropped.")
