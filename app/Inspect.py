"""Inspect one question: every stage of the analysis, the gate's trace and the action; when the
action is ASK, answer the clarification in place and follow the dialogue turn by turn.

Start with ``.venv/bin/streamlit run app/Inspect.py`` from the project root.
"""
import sys
from dataclasses import replace
from pathlib import Path

# `streamlit run` puts only app/ on the import path; the pages import core/, components/ and app/.
if (ROOT := str(Path(__file__).resolve().parent.parent)) not in sys.path:
    sys.path.insert(0, ROOT)

import streamlit as st

from app import wiring
from components.action import render_action
from components.claim import render_claim
from components.common import md
from components.dialogue import render_reply_box, render_turns, shown
from components.gate_trace import render_gate_trace
from components.graph import render_subgraph
from components.passages import render_passages
from components.premises import render_premises
from components.settings_panel import render_settings
from components.signals import render_signals
from components.variables import render_variables
from core.dialogue import DialogueError
from core.kb import KnowledgeBaseError
from core.models import ModelUnavailable
from core.pipeline import InputError, make_query

st.set_page_config(page_title="Inspect · Answerability Workbench", page_icon="🔎", layout="wide")

QUESTION, SCENARIO, HISTORY = wiring.QUESTION_KEY, wiring.SCENARIO_KEY, wiring.HISTORY_KEY
SAMPLE = "aw_sample"


def use_sample() -> None:
    """Callback of the sample menu: fill the inputs with the chosen question and analyse it."""
    chosen = st.session_state.get(SAMPLE)
    if chosen is None:
        return
    item = wiring.sample_questions()[chosen]
    wiring.fill_inspect_form(item["question"], item.get("scenario", ""), item.get("history", []), wiring.DEFAULT_KB)


def answer_clarification(reply: str, question: str) -> None:
    """Callback of the reply box: the page applies the reply on this run (see wiring.current_dialogue)."""
    st.session_state[wiring.MOVE_KEY] = ("answer", reply, question)
    st.session_state["aw_reply"] = ""


def rewind(turn_index: int, new_reply: str | None) -> None:
    """Callback of "Start over" and "Re-run from turn i"."""
    st.session_state[wiring.MOVE_KEY] = ("rewind", turn_index, new_reply)


def sample_label(samples: list[dict], i: int) -> str:
    item = samples[i]
    context = " (+ scenario)" if item.get("scenario") or item.get("history") else ""
    return f"[{item.get('action', '?')}] {item['question']}{context}"


def inputs() -> bool:
    """The question form; True when the user asked for an analysis in this run."""
    samples = wiring.sample_questions()
    if samples:
        st.selectbox("Sample questions (fills the form and analyses it; [expected action])",
                     range(len(samples)), index=None, key=SAMPLE, on_change=use_sample,
                     format_func=lambda i: sample_label(samples, i), placeholder="Choose a sample question…")
    st.text_area("Question", key=QUESTION, height=68, persist_state="session",
                 placeholder="e.g. Can I get the Winter Fuel Payment?")
    left, right = st.columns(2)
    left.text_area("Scenario (optional): facts about the asker", key=SCENARIO, height=68, persist_state="session",
                   placeholder="e.g. I am 70 and have lived in Calvera all my life.")
    right.text_area("Dialogue history (optional): one 'question = answer' per line", key=HISTORY, height=68,
                    persist_state="session", placeholder="e.g. Are you ordinarily resident in Calvera? = Yes")
    kb_col, button_col = st.columns([3, 1], vertical_alignment="bottom")
    choices = wiring.kb_choices()
    if st.session_state.get(wiring.KB_KEY) not in choices:
        st.session_state[wiring.KB_KEY] = choices[0]
    kb_col.selectbox("Knowledge base", choices, key=wiring.KB_KEY, persist_state="session",
                     help="The sample KB, the folders under kbs/ and any folder opened on the Knowledge base page.")
    clicked = button_col.button("Analyse", type="primary", key="aw_analyse", width="stretch")
    return clicked or st.session_state.pop(wiring.ANALYSE_NOW_KEY, False)


def submit() -> None:
    """Check the inputs; on success they become the question analysed below."""
    try:
        history = wiring.parse_history(st.session_state.get(HISTORY, ""))
        query = make_query(st.session_state.get(QUESTION, ""), st.session_state.get(SCENARIO, ""), history)
    except (InputError, ValueError) as exc:
        st.error(str(exc))
        return
    st.session_state[wiring.QUERY_KEY] = query
    wiring.forget_dialogue()


def results(values: dict) -> None:
    query = st.session_state.get(wiring.QUERY_KEY)
    if query is None:
        st.info("Type a question or pick a sample question, then press **Analyse**.")
        return
    try:
        kb = wiring.load_kb(wiring.selected_kb(), values)
        dialogue = wiring.current_dialogue(kb, query, values)
    except DialogueError as exc:  # a reply or edit it cannot take: the dialogue stays as it was
        st.error(str(exc))
        dialogue = st.session_state[wiring.DIALOGUE_KEY]
    except (KnowledgeBaseError, ModelUnavailable, InputError, ValueError) as exc:
        st.error(str(exc))
        return
    trace, decision, turn = dialogue.trace, dialogue.decision, dialogue.current
    st.session_state[wiring.DECISION_KEY] = decision
    if turn.response is not None:  # the dialogue's clarification (or its refusal to ask again)
        response, checks = turn.response, ()
    else:
        try:
            response, checks = wiring.checked_response(trace, decision, values)
        except (ModelUnavailable, ValueError) as exc:
            st.error(str(exc))
            return
    st.session_state[wiring.RESPONSE_KEY] = response

    head, download = st.columns([4, 1], vertical_alignment="bottom")
    head.markdown(f"**Analysed:** {md(query.question)}")
    download.download_button("Download trace (JSON)", lambda: wiring.trace_json(trace, decision, dialogue),
                             key="aw_download", file_name="trace.json", mime="application/json", on_click="ignore",
                             width="stretch")
    for warning in trace.warnings:
        st.warning(warning)
    render_action(decision, response, query.question, len(dialogue.turns) - 1)
    render_reply_box(turn, answer_clarification)
    if shown(dialogue):
        render_turns(dialogue, rewind)
    st.caption("Stage time, s (0 = cached): " + " · ".join(f"{k} {v:.2f}" for k, v in trace.timings.items())
               + f" · KB {wiring.display_path(trace.kb)} ({kb.fingerprint})")
    chart, gate = st.columns(2)
    with chart:
        render_signals(trace.signals, decision)
    with gate:
        render_gate_trace(replace(decision, rules=decision.rules + checks))  # with seed 004's answer checks
    render_passages(trace.passages, trace.nli, trace.fallback, trace.settings.get("fusion_alpha", 0.0),
                    trace.settings.get("entail_keep", 0.0), trace.evidence)
    claim, variables = st.columns(2)
    with claim:
        render_claim(trace.claim)
    with variables:
        render_variables(trace.variables)
    premises, graph = st.columns(2)
    with premises:
        render_premises(trace.abduction)
    with graph:
        render_subgraph(trace.subgraph)

values = render_settings()
st.title("Inspect a question", anchor=False)
st.caption("Every stage of the analysis, the gate's rules and the action. Gate sliders in the sidebar re-run "
           "only decide(); other settings re-run only the stages they affect.")
if inputs():
    submit()
results(values)
