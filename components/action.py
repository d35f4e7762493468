"""Panel 8: the final action card — the answer with citations, the clarification question, or the
specific reason for abstaining.

In a clarification dialogue the card shows the dialogue's current turn: its question (never one
asked before), or why it abstains when everything still open was asked already.

Until the agents land (the generation issue), the wording is built here from the trace: ANSWER
quotes the best-supported evidence sentence, ASK turns the first missing condition into a yes/no
question with ``core.voice.to_question`` (seed 002's "Regarding {anchor}: could you specify
{missing}?" otherwise), ABSTAIN says whether the topic is absent or present without the fact.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import streamlit as st

from components.common import ACTION_COLORS, esc
from core.kb import sentence_kind
from core.dialogue import Turn
from core.types import Decision, RetrievedPassage, Trace, to_dict
from core.voice import to_question

TOPIC_ABSENT_RULES = ("low_retrieval", "no_passages")
# What to ask for when the gate asks because the question itself is underspecified (Amb heuristics).
AMBIGUITY_ASKS = {
    "short_query": "a little more about what you want to know",
    "dangling_pronoun": "who or what “it”, “they” or “this” refers to",
    "vague_quantifier": "the exact amount, item or period you mean",
    "no_named_entity": "which scheme, person, place or thing you mean",
    "incomplete_comparison": "what you want to compare it with",
}


@dataclass(frozen=True)
class ActionMessage:
    action: str
    headline: str
    text: str
    detail: str = ""
    citations: tuple[str, ...] = ()


def _best_sentence(trace: Trace, rp: RetrievedPassage) -> str:
    """The sentence NLI found best supports the claim; a heading is no answer, so the sentence
    after it is quoted instead (NLI scores a heading together with its next sentence)."""
    n = next((n for n in trace.nli if n.passage_id == rp.passage.id), None)
    sentences = rp.passage.sentences
    if n is None or not sentences:
        return rp.passage.text
    i = min(n.best_sentence, len(sentences) - 1)
    if sentence_kind(sentences[i]) == "heading" and i + 1 < len(sentences):
        i += 1
    return sentences[i].text


def _citation(rp: RetrievedPassage) -> str:
    return f"{rp.passage.title} — {rp.passage.id}" + (f" ({rp.passage.source})" if rp.passage.source else "")


def _numbers(decision: Decision) -> str:
    fired = next((r for r in decision.rules if r.fired), None)
    if fired is None or not fired.comparisons:
        return ""
    return " and ".join(f"{c.signal} {c.value:.2f} {c.op} {c.threshold:.2f}" for c in fired.comparisons)


def _anchor(trace: Trace) -> str:
    """What the clarification is about: the best passage's topic, else something the user named."""
    if trace.passages:
        return trace.passages[0].passage.title
    return trace.variables.known[0] if trace.variables.known else "your question"


def _answer(trace: Trace, decision: Decision) -> ActionMessage:
    kept = trace.kept_passages() or trace.passages
    if decision.rule == "conditions_failed":
        failed = next((c for c in trace.variables.conditions if c.status == "contradicted"), None)
        text = (f"No — this condition is not met: “{failed.text}”" if failed else "No.")
        detail = f"Decided by your statement: “{failed.support}”" if failed and failed.support else ""
        source = next((p for p in trace.passages if failed and p.passage.id == failed.passage_id), None)
        return ActionMessage("ANSWER", "Answer", text, detail, (_citation(source),) if source else ())
    evidence = _best_sentence(trace, kept[0])
    prefix = {"yes": "Yes — ", "no": "No — "}.get(decision.answer_polarity, "")
    detail = ("Every condition is established by what you said." if decision.answer_polarity == "yes" else
              "Quoted from the evidence that best supports the claim.")
    return ActionMessage("ANSWER", "Answer", prefix + evidence, detail, tuple(_citation(p) for p in kept[:2]))


def _ask(trace: Trace, decision: Decision) -> ActionMessage:
    missing = [c for c in trace.variables.conditions if c.status == "missing" and c.text in trace.variables.missing]
    if decision.rule == "missing_variables" and missing:
        first = missing[0]
        return ActionMessage("ASK", "Clarification needed", to_question(first.text),
                             f"The answer depends on a condition you have not stated: “{first.text}”.",
                             tuple(_citation(p) for p in trace.passages if p.passage.id == first.passage_id))
    if decision.rule in ("conflict_nli", "conflict_topic") and len(trace.passages) > 1:
        a, b = trace.passages[0].passage.title, trace.passages[1].passage.title
        what = f"whether you mean “{a}” or “{b}”" if a != b else "which case applies to you"
    elif decision.rule == "ambiguity":
        heuristics = trace.signals.ambiguity_heuristics
        top = max(heuristics, key=heuristics.get) if heuristics else ""
        what = AMBIGUITY_ASKS.get(top, "what exactly you are asking about")
    else:
        what = trace.variables.missing[0] if trace.variables.missing else "what exactly you are asking about"
    return ActionMessage("ASK", "Clarification needed", f"Regarding {_anchor(trace)}: could you specify {what}?",
                         decision.reason)


def _abstain(trace: Trace, decision: Decision) -> ActionMessage:
    numbers = _numbers(decision)
    if decision.rule in TOPIC_ABSENT_RULES:
        return ActionMessage("ABSTAIN", "Not in the knowledge base",
                             "I can't answer this: the topic is not in the knowledge base.",
                             decision.reason + (f" ({numbers})" if numbers else ""))
    closest = trace.passages[0].passage.title if trace.passages else "the knowledge base"
    wanted = f" a {trace.claim.answer_type.lower()} value" if decision.rule == "answer_type" else " the specific fact"
    return ActionMessage("ABSTAIN", "Topic found, fact missing",
                         f"I can't answer this: the knowledge base covers the topic (closest: “{closest}”) "
                         f"but does not state{wanted} you asked for.",
                         decision.reason + (f" ({numbers})" if numbers else ""),
                         (_citation(trace.passages[0]),) if trace.passages else ())


def action_message(trace: Trace, decision: Decision) -> ActionMessage:
    """The user-facing message for the gate's action on this trace."""
    return {"ANSWER": _answer, "ASK": _ask, "ABSTAIN": _abstain}[decision.action](trace, decision)


def turn_message(trace: Trace, decision: Decision, turn: Turn) -> ActionMessage:
    """The message for a dialogue turn: its own clarification, or its reason for abstaining."""
    if turn.action == "ASK" and turn.question:
        condition = next((c for c in trace.variables.conditions if c.text == turn.target), None)
        detail = (f"The answer depends on a condition you have not stated: “{condition.text}”." if condition
                  else decision.reason)
        cites = tuple(_citation(p) for p in trace.passages if condition and p.passage.id == condition.passage_id)
        return ActionMessage("ASK", "Clarification needed", turn.question, detail, cites)
    if turn.override:
        return ActionMessage(turn.action, "Nothing left to ask", turn.override,
                             f"The gate asks (rule {decision.rule}), but each open condition was asked already.")
    return action_message(trace, decision)


def decision_digest(decision: Decision) -> str:
    """A short fingerprint of the decision and every comparison it made (thresholds included)."""
    return hashlib.sha1(json.dumps(to_dict(decision), sort_keys=True).encode()).hexdigest()[:12]


def card_html(message: ActionMessage, rule: str, question: str = "", digest: str = "", turn: int = 0) -> str:
    """The card; its data- attributes name the action, the question, the decision digest and the
    dialogue turn, so a browser test sees a re-gate or a new turn by reading one attribute."""
    color = ACTION_COLORS[message.action]
    cites = "".join(f"<li>{esc(c)}</li>" for c in message.citations)
    return (f'<div id="aw-action" data-action="{message.action}" data-question="{esc(question)}" '
            f'data-decision="{digest}" data-turn="{turn}" style="border:2px solid {color};border-radius:8px;'
            f'padding:10px 14px;margin:4px 0 10px 0">'
            f'<div style="font-size:0.85em;color:{color};font-weight:700;letter-spacing:0.05em">'
            f'{message.action} · {esc(message.headline)} <span style="color:#777;font-weight:400">'
            f'(rule {esc(rule)})</span></div>'
            f'<div style="font-size:1.15em;margin:6px 0">{esc(message.text)}</div>'
            + (f'<div style="color:#555;font-size:0.9em">{esc(message.detail)}</div>' if message.detail else "")
            + (f'<div style="font-size:0.85em;margin-top:6px">Sources:<ul style="margin:2px 0">{cites}</ul></div>'
               if cites else "") + "</div>")


def render_action(trace: Trace, decision: Decision, turn: Turn | None = None, turn_index: int = 0) -> ActionMessage:
    message = action_message(trace, decision) if turn is None else turn_message(trace, decision, turn)
    st.html(card_html(message, decision.rule, trace.query.question, decision_digest(decision), turn_index))
    return message
