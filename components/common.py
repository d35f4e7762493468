"""Shared helpers for panels: HTML escaping, colours, chips and panel headers."""
from __future__ import annotations

import html
import re

import streamlit as st

# One colour per action, used by the action card, the gate trace and the signal chart.
ACTION_COLORS = {"ANSWER": "#1b7f3b", "ASK": "#b26a00", "ABSTAIN": "#b3261e"}
ACTION_BADGE = {"ANSWER": "green", "ASK": "orange", "ABSTAIN": "red"}
NLI_COLORS = {"entailment": "#1b7f3b", "neutral": "#6b6b6b", "contradiction": "#b3261e"}


def esc(text: object) -> str:
    """HTML-escape any text that may come from a document, a user or a model."""
    return html.escape(str(text), quote=True)


def chip(text: str, color: str, title: str = "") -> str:
    """A small coloured label; ``text`` and ``title`` are escaped here."""
    tip = f' title="{esc(title)}"' if title else ""
    return (f'<span{tip} style="display:inline-block;padding:1px 8px;margin:0 4px 2px 0;border-radius:10px;'
            f'font-size:0.8em;color:white;background:{color};white-space:nowrap">{esc(text)}</span>')


def panel_header(title: str, help_text: str) -> None:
    """A panel title; its "what is this / how is it computed" note sits in the (?) popover, so the
    panel opens with its content, not with method notes."""
    st.subheader(title, anchor=False, help=help_text)


# st.markdown links a bare "https://…", "www.…" or "name@host" by itself, backslash escapes or not (checked in
# Chromium): a URL in a document or a question would become a live link. An invisible word joiner inside
# each of those marks keeps the text as it reads and leaves nothing to link.
WORD_JOINER = "\u2060"
NOT_A_LINK = re.compile(r"(?<=:)(?=//)|(?i:(?<=\bwww)(?=\.))|(?=@)")


def md(text: object) -> str:
    """Text for st.markdown shown literally: markdown, LaTeX ($) and HTML characters backslash-escaped.

    (st.markdown never renders raw HTML without unsafe_allow_html; this keeps a "$5" or a "*"
    in a document from turning into maths or emphasis, and a URL from turning into a link.)
    """
    out = str(text).replace("\\", "\\\\")
    for ch in "*_`[]<>$#|~&":
        out = out.replace(ch, "\\" + ch)
    return NOT_A_LINK.sub(WORD_JOINER, out)
