"""Inspect one question. The verdict card comes first (the action, the answer or question or refusal,
the evidence it rests on, the rule in plain words, what would change it); every stage of the analysis
follows in tabs. When the action is ASK, answer the clarification in place, turn by turn. Results
belong to the question, scenario, history and knowledge base that produced them: a changed input marks
them stale, an input error clears them.

Start with ``.venv/bin/streamlit run app/Inspect.py`` from the project root.
"""
from dataclasses import replace

import streamlit as st

from app import wiring
from components.action import render_action
from components.tour import STOPS, why
from components.claim import render_claim
from components.common import md
from components.dialogue import render_reply_box, render_turns, shown
from components.gate_trace import render_gate_trace
from components.graph import render_subgraph
from components.passages import render_passages
from components.premises import render_premises
from components.settings_panel import render_settings
from components.calibrated import render_calibrated
from components.signals import render_signals
from components.variables import render_variables
from core.dialogue import DialogueError
from core.kb import KnowledgeBaseError
from core.models import ModelUnavailable
from core.pipeline import InputError, make_query
from core.types import Query
from core.what_if import verdict_changes

st.set_page_config(page_title="Inspect · Answerability Workbench", page_icon="🔎", layout="wide")

QUESTION, SCENARIO, HISTORY = wiring.QUESTION_KEY, wiring.SCENARIO_KEY, wiring.HISTORY_KEY
SAMPLE = "aw_sample"
DETAILS_TAB = "aw_details_tab"


def use_sample() -> None:
    """Callback of the sample menu: fill the inputs with the chosen question and analyse it."""
    chosen = st.session_state.get(SAMPLE)
    if chosen is None:
        return
    item = wiring.sample_questions()[chosen]
    wiring.fill_inspect_form(item["question"], item.get("scenario", ""), item.get("history", []), wiring.DEFAULT_KB)


def take_tour_stop(index: int) -> None:
    """Callback of a tour button: its question on the sample KB, analysed at once."""
    stop = STOPS[index]
    wiring.fill_inspect_form(stop.question, stop.scenario, [], wiring.DEFAULT_KB)


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


def tour(samples: list[dict]) -> None:
    """Three sample questions, one per action (the card of each is followed by why, walked from its
    trace), and the menu of every sample question."""
    with st.expander("Guided tour and sample questions", expanded=False):
        st.caption("Each tour button analyses a sample question on the sample knowledge base; a paragraph under "
                   "the verdict then walks the trace that led to it.")
        for i, (column, stop) in enumerate(zip(st.columns(len(STOPS)), STOPS)):
            column.button(f"{i + 1}. {stop.action}: {stop.question}", key=f"aw_tour_{i}", on_click=take_tour_stop,
                          args=(i,), width="stretch")
        if samples:
            st.selectbox("Sample questions (fills the form and analyses it; [expected action])",
                         range(len(samples)), index=None, key=SAMPLE, on_change=use_sample,
                         format_func=lambda i: sample_label(samples, i), placeholder="Choose a sample question…")


def inputs() -> bool:
    """The question form, kept short so the verdict shows on the first screen; True when the user
    asked for an analysis in this run."""
    tour(wiring.sample_questions())
    question, scenario, history = st.columns([2, 1.5, 1.5])
    question.text_area("Question", key=QUESTION, height=68, persist_state="session",
                       placeholder="e.g. Can I get the Winter Fuel Payment?")
    scenario.text_area("Scenario (optional): facts about the asker", key=SCENARIO, height=68,
                       persist_state="session", placeholder="e.g. I am 70 and have lived in Calvera all my life.")
    history.text_area("Dialogue history (optional): one 'question = answer' per line", key=HISTORY, height=68,
                      persist_state="session", placeholder="e.g. Are you ordinarily resident in Calvera? = Yes")
    kb_col, button_col = st.columns([3, 1], vertical_alignment="bottom")
    choices = wiring.kb_choices()
    if st.session_state.get(wiring.KB_KEY) not in choices:
        st.session_state[wiring.KB_KEY] = choices[0]
    kb_col.selectbox("Knowledge base", choices, key=wiring.KB_KEY, persist_state="session",
                     help="The sample KB, the folders under kbs/ and any folder opened on the Knowledge base page. "
                          "Changing it marks the results below stale until you press Analyse.")
    clicked = button_col.button("Analyse", type="primary", key="aw_analyse", width="stretch")
    return clicked or st.session_state.pop(wiring.ANALYSE_NOW_KEY, False)


def form_query() -> Query | None:
    """The form's inputs as a Query (None when they do not parse)."""
    try:
        history = wiring.parse_history(st.session_state.get(HISTORY, ""))
        return make_query(st.session_state.get(QUESTION, ""), st.session_state.get(SCENARIO, ""), history)
    except (InputError, ValueError):
        return None


def submit() -> None:
    """Check the inputs; on success they become the question analysed below, against the selected KB.
    On an input error the previous results go: they answered another question."""
    try:
        history = wiring.parse_history(st.session_state.get(HISTORY, ""))
        query = make_query(st.session_state.get(QUESTION, ""), st.session_state.get(SCENARIO, ""), history)
    except (InputError, ValueError) as exc:
        st.error(str(exc))
        st.session_state.pop(wiring.QUERY_KEY, None)
        wiring.forget_dialogue()
        return
    st.session_state[wiring.QUERY_KEY] = query
    st.session_state[wiring.QUERY_KB_KEY] = st.session_state.get(wiring.KB_KEY)
    wiring.forget_dialogue()


def stale_note(query: Query, kb_entry: str) -> str:
    """What changed in the form since ``query`` was analysed on ``kb_entry`` ("" when nothing did)."""
    changed = []
    typed = form_query()
    if typed is None or typed.question != query.question:
        changed.append("question")
    if typed is not None and typed.scenario != query.scenario:
        changed.append("scenario")
    if typed is not None and typed.history != query.history:
        changed.append("history")
    if st.session_state.get(wiring.KB_KEY) != kb_entry:
        changed.append("knowledge base")
    return ", ".join(changed)


def rule_gate_if_no_learned_gate(values: dict) -> dict:
    """``values``, with the rule gate deciding where the learned gate chosen cannot be read (a path typed wrong, a
    broken file): said above the results, which stay on the page instead of giving way to the error."""
    if values.get("gate_model") != "learned":
        return values
    from core.gate.learned import load_cached
    try:
        load_cached(values["learned_gate_file"])
    except (ValueError, OSError) as exc:
        st.warning(f"{str(exc).rstrip('.')}. The rule gate decides meanwhile.")
        return {**values, "gate_model": "rules"}
    return values


def results(values: dict) -> None:
    query = st.session_state.get(wiring.QUERY_KEY)
    if query is None:
        st.info("Type a question or pick a sample question (or take the guided tour), then press **Analyse**.")
        return
    kb_entry = st.session_state.get(wiring.QUERY_KB_KEY) or wiring.display_path(wiring.DEFAULT_KB)
    changed = stale_note(query, kb_entry)
    if changed:
        st.warning(f"Stale: the {changed} changed since this analysis. The results below still answer "
                   f"“{query.question}” on {kb_entry}; press **Analyse** for the new inputs.", icon="⏸")
    values = rule_gate_if_no_learned_gate(values)
    try:
        kb = wiring.load_kb(wiring.allowed_path(kb_entry), values)
        dialogue = wiring.current_dialogue(kb, query, values)
    except DialogueError as exc:  # a reply or edit it cannot take: the dialogue stays as it was
        st.error(str(exc))
        dialogue = st.session_state[wiring.DIALOGUE_KEY]
    except (KnowledgeBaseError, ModelUnavailable, InputError, ValueError) as exc:  # PathNotAllowed too
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
    withheld = next((c for c in checks if c.fired), None)
    shown_decision = replace(decision, rules=decision.rules + checks)
    if withheld is not None:  # an answer check withheld the answer: the card shows that rule
        shown_decision = replace(shown_decision, action="ABSTAIN", rule=withheld.name, reason=withheld.explanation)
    changes = verdict_changes(trace, values) if turn is dialogue.turns[-1] and withheld is None else ()
    render_action(shown_decision, response, query.question, len(dialogue.turns) - 1, trace, changes, bool(changed))
    if any(query.question == s.question and query.scenario == s.scenario for s in STOPS) and len(dialogue.turns) == 1:
        st.info(f"**Why** — {md(why(trace, shown_decision))}", icon="🧭")
    render_reply_box(turn, answer_clarification)
    if shown(dialogue):
        render_turns(dialogue, rewind)
    for warning in trace.warnings:
        st.warning(warning)
    details(trace, shown_decision, kb, dialogue)


def details(trace, decision, kb, dialogue) -> None:
    """Every stage, one tab each (the slower panels, premises and graph, are drawn last)."""
    head, download = st.columns([4, 1], vertical_alignment="bottom")
    # the question as analysed: a reply to "which one do you mean?" names its referent ("When was it built (Harlow
    # Bridge)?")
    head.caption(f"Analysed: {md(trace.query.question)} · KB {md(wiring.display_path(trace.kb))} ({kb.fingerprint}) · "
                 "stage time, s (0 = cached): " + " · ".join(f"{k} {v:.2f}" for k, v in trace.timings.items()))
    download.download_button("Download trace (JSON)", lambda: wiring.trace_json(trace, decision, dialogue),
                             key="aw_download", file_name="trace.json", mime="application/json", on_click="ignore",
                             width="stretch")
    gate, passages, claim, premises, graph = st.tabs(
        ["Gate and signals", "Passages and evidence", "Claim and conditions", "Premises", "Knowledge graph"],
        key=DETAILS_TAB, on_change="rerun")
    with gate:
        render_gate_trace(decision)
        render_calibrated(trace)
        render_signals(trace.signals, decision)
    with passages:
        render_passages(trace.passages, trace.nli, trace.fallback, trace.settings.get("fusion_alpha", 0.0),
                        trace.settings.get("entail_keep", 0.0), trace.evidence)
    with claim:
        render_claim(trace.claim)
        render_variables(trace.variables)
    with premises:
        render_premises(trace.abduction)
    with graph:
        render_subgraph(trace.subgraph, kg_rule_on=any(r.name == "kg_empty" and r.enabled for r in decision.rules))


values = render_settings("Inspect")
st.header("Inspect a question", anchor=False)
if inputs():
    submit()
results(values)
