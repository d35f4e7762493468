"""The UI panels on hand-made core data: escaping, highlighting, charts, the gate trace, the action
card, the settings sidebar, the graph renderer, and the upload checks (no model needed)."""
from __future__ import annotations

import html
import json
import re
from dataclasses import replace

import pytest
from streamlit.testing.v1 import AppTest

from app import wiring
from components import action, graph, passages, signals as signals_panel
from components.settings_panel import GROUP_TITLES, REANALYSE_MARK, REGATE_MARK
from core import settings
from core.gate import decide
from core.gate.rules import RULES
from core.types import Citation, Decision, Response, RuleResult
from tests.factories import signals
from tests.ui_factories import XSS_IMG, XSS_SCRIPT, nli, rich_trace

XSS_DOC = f"# Hostile {XSS_SCRIPT}\n\nThe fee is £5. {XSS_IMG} Payment is due in May.\n"


def html_of(at: AppTest) -> str:
    return "\n".join(h.proto.body for h in at.get("html"))


# --- passages ---------------------------------------------------------------------------

def test_passage_html_highlights_the_best_sentence_using_document_offsets():
    trace = rich_trace()
    rp = trace.passages[0]
    assert rp.passage.start == 120  # sentence offsets are document-based: the panel must shift them
    out = passages.passage_html(rp, 1, "best")
    marked = re.search(r"<mark[^>]*>(.*?)</mark>", out).group(1)
    assert marked == "The Winter Fuel Payment helps older people with heating costs."
    assert out.count("<mark") == 1 and "are aged 66 or over" in out


def test_passage_html_escapes_document_text_and_highlight():
    trace = rich_trace(XSS_DOC)
    rp = trace.passages[0]
    hostile = next(i for i, s in enumerate(rp.passage.sentences) if "onerror" in s.text)
    out = passages.passage_html(rp, hostile, f"note {XSS_SCRIPT}")
    assert "<script" not in out and "<img" not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out and "&lt;img src=x onerror=alert(1)&gt;" in out
    assert re.search(r"<mark[^>]*>[^<]*&lt;img", out), "the highlighted sentence is the hostile one, escaped"


def test_passage_html_without_a_valid_sentence_index_shows_plain_text():
    rp = rich_trace().passages[0]
    assert "<mark" not in passages.passage_html(rp, 99) and "<mark" not in passages.passage_html(rp, None)


def test_nli_chip_shows_label_and_three_probabilities():
    chip = passages.nli_chip(nli(0.91, 0.05))
    assert "entailment" in chip and "e 0.91" in chip and "n 0.04" in chip and "c 0.05" in chip


def _render_passages(trace, fallback):
    from components.passages import render_passages
    render_passages(trace.passages, trace.nli, fallback, 0.6, 0.5)


def test_render_passages_marks_kept_filtered_and_fallback():
    trace = rich_trace()
    at = AppTest.from_function(_render_passages, kwargs={"trace": trace, "fallback": False}).run()
    body = html_of(at)
    assert ">kept<" in body and "filtered: P(entail) &lt; 0.50" in body and not at.warning
    assert "fused <b>0.826</b> = 0.60·dense 0.710 + 0.40·BM25 1.000 (raw BM25 6.20)" in body
    assert body.count('class="aw-passage"') == 2 and body.index("#1 Winter") < body.index("#2 Older")
    at = AppTest.from_function(_render_passages, kwargs={"trace": rich_trace(fallback=True), "fallback": True}).run()
    assert "fallback" in at.warning[0].value and "kept (fallback)" in html_of(at)


def test_render_passages_shows_a_decisive_sentence_only_where_it_differs_from_the_best_supporting_one():
    trace = rich_trace()
    contradicted = replace(trace.nli[1], decisive=nli(0.02, 0.9))
    agreeing = replace(trace.nli[0], decisive=nli(0.95))
    at = AppTest.from_function(_render_passages, kwargs={
        "trace": replace(trace, nli=(agreeing, contradicted)), "fallback": False}).run()
    body = html_of(at)
    assert body.count("Another sentence decides the claim more") == 1
    assert "contradiction (P(contradiction) 0.90, P(neutral) 0.08)" in body
    # and, where the trace says which sentence it is, quotes it
    second = trace.passages[1].passage
    which = replace(contradicted, decisive_sentence=len(second.sentences) - 1)
    at = AppTest.from_function(_render_passages, kwargs={
        "trace": replace(trace, nli=(agreeing, which)), "fallback": False}).run()
    quoted = html.escape(second.sentences[-1].text, quote=True)
    assert f"Another sentence decides the claim more: “{quoted}”, contradiction" in html_of(at)


# --- claim, variables, premises -------------------------------------------------------------

def _render_claim_and_variables(trace):
    from components.claim import render_claim
    from components.premises import render_premises
    from components.variables import render_variables
    render_claim(trace.claim)
    render_variables(trace.variables)
    render_premises(trace.abduction)


def test_claim_variables_and_premises_panels():
    trace = rich_trace()
    trace = replace(trace, claim=replace(trace.claim, text="One of A or B is *longer* $5", schema="comparative",
                                         sub_claims=("There exists information about A.", "B")))
    at = AppTest.from_function(_render_claim_and_variables, kwargs={"trace": trace}).run()
    text = " ".join(m.value for m in at.markdown)
    assert "One of A or B is \\*longer\\* \\$5" in text, "claim text is shown literally (no markdown/LaTeX)"
    assert any("Comparative" in c.value for c in at.caption)
    assert "1. There exists information about A." in text
    metrics = {m.label: m.value for m in at.metric}
    assert metrics == {"Known": "2", "Established": "1", "Contradicted": "0", "Missing": "1", "I(q)": "0.33"}
    assert "I(q) = 1 / (2 + 1) = **0.33**" in text
    assert "generation issue" in at.info[0].value


def _render_calibrated(trace):
    from components.calibrated import render_calibrated
    render_calibrated(trace)


def test_calibrated_panel_says_what_the_question_asks_beyond_its_topic_and_how_much_a_passage_says():
    """P(fact stated) reads whether a top passage's sentence says what is asked; the panel names those
    words as the user wrote them, shown literally."""
    from core.text import split_sentences
    from core.types import Passage, Query, RetrievedPassage
    text = "The Arden Lighthouse stands on Arden Head. It was built in 1871."
    passage = Passage(id="enc/arden#0", doc_id="enc/arden", title="Arden Lighthouse", text=text, start=0,
                      end=len(text), sentences=tuple(split_sentences(text)))
    trace = replace(rich_trace(), query=Query("Who *designed* the Arden Lighthouse?"),
                    passages=(RetrievedPassage(passage, 1, 0.7, 3.0, 1.0, 0.8),))
    at = AppTest.from_function(_render_calibrated, kwargs={"trace": trace}).run()
    assert not at.exception
    caption = " ".join(c.value for c in at.caption)
    assert "asks beyond its topic: designed." in caption and "says 0% of it" in caption
    found = replace(trace, query=Query("When was the Arden Lighthouse built?"))
    at = AppTest.from_function(_render_calibrated, kwargs={"trace": found}).run()
    assert "asks beyond its topic: built." in " ".join(c.value for c in at.caption)
    assert "says 100% of it" in " ".join(c.value for c in at.caption)


def test_calibrated_rows_show_how_a_chained_probability_is_composed():
    """The shipped calibrators on a trace whose probabilities they computed: P(fact stated) is the share of
    questions its model covers times P(topic covered) times its own probability, plus the rest at 1; the
    composition adds up to the probability shown, and a model alone shows none."""
    from components.calibrated import calibrated_rows
    from core import calibrated
    trace = calibrated.with_probabilities(rich_trace())
    rows = {r["signal"]: r for r in calibrated_rows(trace)}
    fact = rows["p_fact"]["composed as"]
    assert fact.startswith("(1 − p_depends) ") and "× (p_topic " in fact and fact.endswith(" × 1")
    share, topic, own, rest = (float(x) for x in re.findall(r"\d\.\d\d", fact))
    assert share * topic * own + rest == pytest.approx(rows["p_fact"]["probability"], abs=0.01)
    assert rows["p_open"]["composed as"].startswith("p_depends ") and rows["p_topic"]["composed as"] == ""


# --- signals chart and gate trace -------------------------------------------------------------

def test_signal_rows_colour_by_side_and_carry_thresholds():
    trace = rich_trace(sig=signals(confidence=0.32, coverage=0.1))  # Conf alone is not below conf_abstain 0.30
    decision = decide(trace, {"conf_min": 0.35, "coverage_min": 0.3, "conf_abstain": 0.30, "rule_score_gap": False,
                              "rule_low_retrieval": True})
    rows = {(r["rule"], r["signal"]): r for r in signals_panel.signal_rows(decision)}
    assert rows[("low_retrieval", "confidence")]["side"] == "ABSTAIN"
    assert rows[("low_retrieval", "confidence")]["threshold"] == 0.35
    assert rows[("ambiguity", "ambiguity")]["side"] == "pass"
    assert rows[("conflict_topic", "topic_spread")]["side"] == "off"  # off by default
    assert "fired" in rows[("low_retrieval", "coverage")]["label"]
    fig = signals_panel.signals_figure(decision)
    thresholds = next(t for t in fig.data if t.name == "threshold")
    assert 0.35 in thresholds.x and 0.3 in thresholds.x
    abstain = next(t for t in fig.data if t.name == "fired: ABSTAIN")
    assert abstain.marker.color == "#b3261e" and len(abstain.x) == 2


def test_a_bar_is_red_only_when_its_rule_fired():
    """Issue 13: a comparison on its rule's side whose rule did not fire was coloured as if it had."""
    trace = rich_trace(sig=signals(confidence=0.5, coverage=0.9, score_gap=0.01))
    decision = decide(trace, {"rule_low_retrieval": True})  # Conf 0.5 < conf_min 0.76 holds, but coverage 0.9 is not < 0.30
    rows = {(r["rule"], r["signal"]): r for r in signals_panel.signal_rows(decision)}
    low = rows[("low_retrieval", "confidence")]
    assert not next(r for r in decision.rules if r.name == "low_retrieval").fired
    assert low["side"] == "holds" and rows[("low_retrieval", "coverage")]["side"] == "pass"
    fired = {r.name for r in decision.rules if r.fired}
    for row in signals_panel.signal_rows(decision):
        if row["side"] in ("ASK", "ABSTAIN", "ANSWER"):
            assert row["rule"] in fired, row
    holds = next(t for t in signals_panel.signals_figure(decision).data if t.name == "holds, rule did not fire")
    assert holds.marker.color == signals_panel.HOLDS_COLOR


def _render_signals_and_gate(trace, decision):
    from components.gate_trace import render_gate_trace
    from components.signals import render_signals
    render_signals(trace.signals, decision)
    render_gate_trace(decision)


def test_gate_trace_lists_rules_in_priority_order_and_marks_the_fired_one():
    trace = rich_trace()
    decision = decide(trace)
    assert decision.rule == "missing_variables"
    at = AppTest.from_function(_render_signals_and_gate, kwargs={"trace": trace, "decision": decision}).run()
    table = next(m.value for m in at.markdown if m.value.startswith("| # | rule"))
    order = re.findall(r"\| `(\w+)` \|", table)
    assert order == [r.name for r in decision.rules]
    fired = [line for line in table.splitlines() if "FIRED" in line]
    assert len(fired) == 1 and "`missing_variables`" in fired[0] and "incompleteness 0.333 > 0.000 ✓" in fired[0]
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert any(t.get("name") == "threshold" for t in spec["data"])


def test_gate_trace_lists_the_answer_checks_after_the_rules_and_says_which_withheld_the_answer():
    from core.agents import grounding_check, hedging_check
    trace = rich_trace(with_conditions=False)
    decision = decide(trace)
    grounding = grounding_check(nli(0.2, 0.1), 0.5, 0.5)
    hedging = hedging_check("The fee is £5.")
    checks = (RuleResult("answer_grounding", "ABSTAIN", True, True, grounding.comparisons, grounding.detail),
              RuleResult("hedging", "ABSTAIN", True, False, hedging.comparisons, hedging.detail))
    shown = replace(decision, rules=decision.rules + checks)
    at = AppTest.from_function(_render_signals_and_gate, kwargs={"trace": trace, "decision": shown}).run()
    table = next(m.value for m in at.markdown if m.value.startswith("| # | rule"))
    assert re.findall(r"\| `(\w+)` \|", table)[-2:] == ["answer_grounding", "hedging"]
    grounded = next(line for line in table.splitlines() if "`answer_grounding`" in line)
    assert "FIRED" in grounded and "answer_entailment 0.200 < 0.500 ✓" in grounded
    withheld = next(m.value for m in at.markdown if m.value.startswith("Then the answer check"))
    assert "**`answer_grounding`** withheld the answer" in withheld and "not grounded" in withheld
    plain = AppTest.from_function(_render_signals_and_gate, kwargs={"trace": trace, "decision": decision}).run()
    assert not any(m.value.startswith("Then the answer check") for m in plain.markdown)


# --- action card ----------------------------------------------------------------------------

WINTER_CITE = Citation("policy/winter_fuel_payment#0", "policy/winter_fuel_payment", "Winter Fuel Payment",
                       "You can get it if you are aged 66 or over.")


def test_card_shows_the_agents_response_kind_backend_citations_and_warning():
    trace = rich_trace()
    decision = decide(trace)
    response = Response("ASK", "Have you lived in Calvera for 5 years?", "condition", "rules", (WINTER_CITE,),
                        target="have lived in Calvera for 5 years", warning="no generator URL; used the template")
    out = action.card_html(response, decision, trace.query.question, action.decision_digest(decision), 2)
    assert 'data-action="ASK"' in out and 'data-turn="2"' in out and 'data-kind="condition"' in out
    assert ">Have you lived in Calvera for 5 years?</div>" in out, "the card shows the agent's text as it is"
    assert "ASK <span" in out and "· Clarification needed" in out
    assert "rule missing_variables · condition · written by rules" in out
    assert "Evidence:" in out and "<b>Winter Fuel Payment</b>: “You can get it if you are aged 66 or over.”" in out
    assert "⚠ no generator URL; used the template" in out
    why = re.search(r'<div class="aw-rule"[^>]*>(.*?)</div>', out).group(1)
    assert "A condition the answer depends on is not established" in why and "seed" not in why.lower()
    plain = action.card_html(replace(response, citations=(), warning=""), decision)
    assert "Evidence:" not in plain and "⚠" not in plain


def _gate(rule: str, action_: str = "ABSTAIN", comparisons=()) -> Decision:
    fired = RuleResult(rule, action_, True, True, tuple(comparisons),
                       "The best passage barely matches the question (seed 004 layer 1): the topic is absent.")
    return Decision(action_, rule, fired.explanation, (fired,))


def test_a_topic_absent_refusal_says_so_and_cites_nothing_as_a_source():
    """Issue 13 item 1: "What is the population of Mars?" abstained by low_confidence, but the agent's
    text said "Topic found, fact missing" and cited the Winter Fuel Payment as a source."""
    from core.types import Comparison
    trace = rich_trace(question="What is the population of Mars?")
    decision = _gate("low_confidence", comparisons=(Comparison("confidence", "<", 0.12, 0.2, True),))
    agent = Response("ABSTAIN", "I'm unable to answer this query. The knowledge base covers this topic — the "
                     "closest document is “Winter Fuel Payment” — but it does not state the number.", "fact_absent",
                     "rules", (WINTER_CITE,))
    out = action.card_html(agent, decision, trace.query.question, trace=trace)
    assert 'data-refusal="topic_absent"' in out and "Not in the knowledge base" in out
    assert "Topic found" not in out and "covers this topic" not in out, "the card never contradicts its rule"
    assert "retrieval confidence 0.12 &lt; 0.20" in out and "seed 004" not in out
    assert "Closest document — a weak match, not a source" in out and "Sources" not in out
    assert "Evidence:" not in out and "aged 66 or over" not in out, "no sentence of it is quoted as support"


def test_a_yes_lists_every_condition_that_decided_it_as_evidence():
    """A browser walkthrough: a Yes resting on three conditions listed two of them under Evidence."""
    cites = tuple(Citation("winter_fuel#1", "policy/winter_fuel_payment", "Winter Fuel Payment", text) for text in
                  ("are aged 66 or over on 21 September 2025", "have lived in Calvera for at least 3 years",
                   "have a household income of less than £20,000 a year"))
    yes = Response("ANSWER", "Yes. According to “Winter Fuel Payment”, you meet the conditions: …", "polarity",
                   "rules", cites, answer="Yes")
    out = action.card_html(yes, _gate("conditions_met", "ANSWER"), trace=rich_trace())
    assert all(f"“{c.sentence}”" in out.replace("&#x27;", "'") for c in cites)
    extractive = replace(yes, kind="extractive", text="£200. According to …")
    assert "less than £20,000" not in action.card_html(extractive, _gate("default_answer", "ANSWER"), trace=rich_trace())


def test_a_fact_absent_refusal_shows_where_the_topic_is_found_and_conditions_unknown_lists_them():
    trace = rich_trace()
    fact = Response("ABSTAIN", "I'm unable to answer this query. The topic is there but not the number.",
                    "fact_absent", "rules", (WINTER_CITE,))
    out = action.card_html(fact, _gate("low_sufficiency"), trace=trace)
    assert 'data-refusal="fact_absent"' in out and "Topic found, fact missing" in out
    assert "Where the topic is found (judged not to state what was asked)" in out and "Winter Fuel Payment" in out
    assert ">I'm unable to answer this query. The topic is there but not the number.<" in out.replace("&#x27;", "'")
    asked = Response("ABSTAIN", "I already asked about everything still open.", "already_asked", "rules")
    out = action.card_html(asked, _gate("missing_variables", "ASK"), trace=trace)
    assert 'data-refusal="conditions_unknown"' in out and "Conditions unknown" in out
    assert "Still unknown (the answer depends on it)" in out and "have lived in Calvera for 5 years" in out
    assert "was asked already" in out and "ask the user about it" not in out, "the Why matches the refusal"
    assert 'id="aw-whatif"' not in out, "the gate's thresholds do not decide a refusal to ask again"


def test_the_cards_why_is_what_the_rule_found_without_its_asides_on_order_and_fitting():
    """A browser walkthrough: the card's Why read "(Before condition_open: P(condition open) is fitted on ShARC, …)"
    and, for a refused topic, two sentences on pronoun questions and follow-ups."""
    explanation = {name: text for name, _, _, text in RULES}
    assert action.plain(explanation["topic_absent"]) == (
        "The knowledge base is not about what the question asks (calibrated P(topic covered) is low).")
    assert action.plain(explanation["conditions_met"]).endswith("answer a yes/no question with its positive outcome.")
    assert "ShARC" not in action.plain(explanation["conditions_met"])
    # an example in the rule's text read as this question's evidence (walkthrough: Jobseeker's Allowance rates under
    # a Winter Fuel Payment question); the gate trace keeps it
    assert action.plain(explanation["value_by_age"]) == (
        "The asker's own question asks for an amount or a length of time that the top document gives by age, and "
        "the asker has given no age: ask it.")
    assert "ship launched" not in action.plain(explanation["described_referents"])
    # a name with brackets is no aside (walkthrough: the learned gate's Why read "P 0.12, P 0.73, P 0.15")
    assert action.plain("Learned: P(ANSWER) 0.12, P(ASK) 0.73, P(ABSTAIN) 0.15; ASK (Fitted on …).") == \
        "Learned: P(ANSWER) 0.12, P(ASK) 0.73, P(ABSTAIN) 0.15; ASK."
    assert action.plain("Found it (Not for a statement: see (b)). More.") == "Found it."
    assert "fact_min" not in action.plain(explanation["fact_absent"]), "no setting names on the card"


def test_card_headline_follows_the_response_kind():
    assert action.headline(Response("ABSTAIN", "t", "topic_absent", "rules"), "topic_absent") == \
        "Not in the knowledge base"
    assert action.headline(Response("ABSTAIN", "t", "fact_absent", "rules"), "fact_absent") == \
        "Topic found, fact missing"
    assert action.headline(Response("ASK", "t", "premise", "rules")) == "Clarification needed"
    assert action.headline(Response("ASK", "t", "which_one", "rules")) == "Which topic do you mean?"
    assert action.headline(Response("ANSWER", "t", "generated", "openai:m")) == "Generated answer"
    assert action.headline(Response("ANSWER", "t", "polarity", "rules")) == "Answer decided by your facts"


def test_the_card_says_what_would_change_the_verdict():
    from core.what_if import verdict_changes
    trace = rich_trace(with_conditions=False)
    on = {"rule_low_sufficiency": True}  # off by default
    decision = decide(trace, on)
    changes = verdict_changes(trace, on)
    out = action.card_html(Response("ANSWER", "£250.", "extractive", "extractive", (WINTER_CITE,)), decision,
                           trace=trace, changes=changes)
    line = re.search(r'<div id="aw-whatif"[^>]*>(.*?)</div>', out).group(1)
    assert changes and changes[0].label.replace("<", "&lt;") in line and f"{changes[0].threshold:g}" in line


def test_action_card_escapes_document_user_and_model_text():
    hostile = Response("ANSWER", f"The fee is £5. {XSS_IMG}", "generated", f"openai:{XSS_SCRIPT}",
                       (Citation("d#0", "d", f"Hostile {XSS_SCRIPT}", f"Due in May {XSS_IMG}"),),
                       warning=f"server said {XSS_SCRIPT}")
    out = action.card_html(hostile, _gate("default_answer", "ANSWER"))
    assert "<img" not in out and "<script" not in out
    # the text and the cited sentence once each; the title, the warning and the backend (data-backend and
    # "written by") carry the script
    assert out.count("&lt;img src=x onerror=alert(1)&gt;") == 2 and out.count("&lt;script&gt;") == 4
    assert 'data-action="ANSWER"' in out and 'data-backend="openai:&lt;script&gt;' in out

# --- graph ----------------------------------------------------------------------------------

GRAPH_NODES = [
    {"id": "n1", "label": XSS_SCRIPT, "kind": "entity", "category": "Organisation"},
    {"id": "n2", "label": "Harlow Bridge", "kind": "entity", "category": "Location"},
    {"id": "v1", "label": "?var opening date", "kind": "var", "category": ""},
]
GRAPH_EDGES = [
    {"source": "n1", "target": "n2", "relation": "built", "weight": 0.8, "sentence": f"{XSS_IMG} It built the bridge."},
    {"source": "v1", "target": "n2", "relation": "requires", "weight": 0.3, "sentence": ""},
]


def test_graph_html_is_offline_seeded_and_escaped():
    page = graph.graph_html(GRAPH_NODES, GRAPH_EDGES)
    assert not re.search(r"<script[^>]*\bsrc\s*=", page, re.I) and not re.search(r"<link\b", page, re.I)
    assert "<center>" not in page and "jsdelivr" not in page and "cdnjs" not in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page, re.I)
    assert f'"randomSeed": {graph.LAYOUT_SEED}' in page
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in json.loads('"' + re.search(
        r'"label": "([^"]*alert[^"]*)"', page).group(1) + '"'), "labels are HTML-escaped inside the JSON"
    assert "aw-legend" in page and "?var (missing variable" in page and "Organisation" in page
    assert '"shape": "diamond"' in page and '"borderDashes": [4, 3]' in page


def test_relations_read_as_the_sentence_stated_them_not_as_lemma_keys():
    labels = {"e": "Edith Marlowe", "t": "Tessby", "h": "Harlow Bridge"}
    born = {"source": "e", "target": "t", "relation": "bear_in", "text": "Edith Marlowe was born in Tessby."}
    designed = {"source": "h", "target": "e", "relation": "design_by", "text": "Harlow Bridge was designed by Edith Marlowe."}
    assert graph.readable_relation(born, labels) == "born in"
    assert graph.readable_relation(designed, labels) == "designed by"
    # without a triple sentence that frames both labels, the key is at least spaced out
    assert graph.readable_relation({"source": "e", "target": "t", "relation": "work_for"}, labels) == "work for"
    page = graph.graph_html([{"id": k, "label": v, "kind": "entity", "category": "X"} for k, v in labels.items()],
                            [born, designed])
    assert '"label": "born in"' in page and '"label": "designed by"' in page and "bear_in" not in page
    assert "#mynetwork{box-sizing:border-box}" in page, "the canvas' border fits inside the frame"


def test_graph_colours_are_stable_per_category():
    assert graph.categories(GRAPH_NODES) == graph.categories(list(reversed(GRAPH_NODES)))
    assert set(graph.categories(GRAPH_NODES)) == {"Location", "Organisation"}


def _render_graph(nodes, edges):
    from components.graph import render_graph
    render_graph(nodes, edges)


def test_render_graph_draws_an_iframe_or_the_empty_state():
    at = AppTest.from_function(_render_graph, kwargs={"nodes": GRAPH_NODES, "edges": GRAPH_EDGES}).run()
    assert "vis.Network" in at.get("iframe")[0].proto.srcdoc
    at = AppTest.from_function(_render_graph, kwargs={"nodes": [], "edges": []}).run()
    assert not at.get("iframe") and "matched no node" in at.info[0].value


# --- settings sidebar ---------------------------------------------------------------------

def _settings_page():
    import streamlit as st
    from components.settings_panel import render_settings
    st.write(render_settings("a page"))


def test_every_setting_has_a_widget_of_its_kind_with_help_in_its_group():
    at = AppTest.from_function(_settings_page).run()
    widgets = {w.key: w for w in list(at.sidebar.slider) + list(at.sidebar.toggle) + list(at.sidebar.selectbox)
               + list(at.sidebar.text_input)}
    for s in settings.SETTINGS:
        w = widgets[f"aw_set_{s.name}"]
        kind = {"bool": "toggle", "choice": "selectbox", "text": "textinput"}.get(s.kind, "slider")
        assert type(w).__name__.lower() == kind, s.name
        assert s.help in w.help and w.value == s.default and "●" not in w.label
    titles = [e.label for e in at.sidebar.expander]
    assert [t.split(" · ")[0] for t in titles] == [GROUP_TITLES[g] for g in settings.GROUPS]
    assert titles[0] == f"Gate thresholds · {REGATE_MARK}", "the gate thresholds come first, and only re-gate"
    assert titles[1].startswith(f"Retrieval and index · {REANALYSE_MARK}") and "re-index" in titles[1]


def test_each_setting_has_one_group_and_only_gate_settings_regate_only():
    """The groups come from the one declaration: a gate number is a threshold, a gate switch a rule,
    the answer checks say so themselves; everything else re-analyses."""
    for s in settings.SETTINGS:
        assert s.group in settings.GROUPS, s.name
        assert s.regates_only == (s.stage == "gate"), s.name
    by_group = {g: {s.name for s in settings.SETTINGS if s.group == g} for g in settings.GROUPS}
    assert {"conf_abstain", "sufficiency_min", "amb_max"} <= by_group["thresholds"]
    assert {"rule_low_confidence", "gate_model"} <= by_group["rules"]
    assert {"grounding_min", "rule_hedging", "rule_answer_grounding"} <= by_group["answer"]
    assert {"top_k", "chunk_chars"} <= by_group["retrieval"] and "entail_keep" in by_group["evidence"]
    assert "condition_entail" in by_group["conditions"]


def test_changed_marker_reset_and_preset_round_trip():
    at = AppTest.from_function(_settings_page).run()
    at.sidebar.slider(key="aw_set_amb_max").set_value(0.6).run()
    at.sidebar.toggle(key="aw_set_rule_score_gap").set_value(True).run()
    assert at.sidebar.slider(key="aw_set_amb_max").label.endswith("●")
    assert at.session_state["aw_values"]["amb_max"] == 0.6
    preset = at.sidebar.get("download_button")[0]
    assert preset.proto.label == "Save preset (JSON)"
    saved = json.dumps({"kind": "answerability-workbench-preset", "version": 1,
                        "settings": {**settings.defaults(), "amb_max": 0.6, "rule_score_gap": True}})
    at.sidebar.button(key="aw_reset").click().run()
    assert at.sidebar.slider(key="aw_set_amb_max").value == settings.BY_NAME["amb_max"].default and "●" not in at.sidebar.slider(key="aw_set_amb_max").label
    assert at.session_state["aw_values"] == settings.defaults()
    at.sidebar.get("file_uploader")[0].set_value(("preset.json", saved.encode(), "application/json")).run()
    assert at.sidebar.slider(key="aw_set_amb_max").value == 0.6
    assert at.sidebar.toggle(key="aw_set_rule_score_gap").value is True
    # Reset empties the uploader too (walkthrough: the last preset's name stayed beside the defaults)
    at.sidebar.button(key="aw_reset").click().run()
    assert at.sidebar.get("file_uploader")[0].value is None
    assert at.session_state["aw_values"] == settings.defaults()


def test_a_bad_preset_is_reported_and_changes_nothing():
    at = AppTest.from_function(_settings_page).run()
    bad = json.dumps({"settings": {"amb_max": 7}}).encode()
    at.sidebar.get("file_uploader")[0].set_value(("mine.json", bad, "application/json")).run()
    assert "mine.json" in at.sidebar.error[0].value and "amb_max must lie in [0.0, 1.0]" in at.sidebar.error[0].value
    assert at.sidebar.slider(key="aw_set_amb_max").value == settings.BY_NAME["amb_max"].default


# --- uploads and inputs ------------------------------------------------------------------------

def test_add_files_skips_bad_files_by_name_and_never_overwrites(tmp_path):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "rules.md").write_text("# Rules\n\nThe original text.")
    report = wiring.add_files(kb, [
        ("rules.md", b"# Rules\n\nA newer text."), ("empty.txt", b"   "), ("broken.pdf", b"%PDF-1.4 nonsense"),
        ("notes.docx", b"PK\x03\x04"), ("../escape.txt", b"Some words here."),
        ("lines.jsonl", b'{"id": 1, "text": "Fine."}\nnot json\n'),
    ])
    assert report.added == ("rules-2.md", "escape.txt", "lines.jsonl")
    skipped = " | ".join(report.skipped)
    assert "empty.txt: the file is empty" in skipped and "broken.pdf: cannot read the PDF" in skipped
    assert "notes.docx: not a" in skipped
    assert (kb / "rules.md").read_text() == "# Rules\n\nThe original text."
    assert not (tmp_path / "escape.txt").exists() and (kb / "escape.txt").exists()
    assert any("rules.md" in n and "rules-2.md" in n for n in report.notes)
    assert any("lines.jsonl:2" in n for n in report.notes) or any("not valid JSON" in n for n in report.notes)


def test_parse_history_and_kb_names():
    assert wiring.parse_history("Are you over 66? = Yes\n\nIs x = y? = No") == [
        ("Are you over 66?", "Yes"), ("Is x = y?", "No")]
    with pytest.raises(ValueError, match="History line 1 should read 'question = answer'"):
        wiring.parse_history("just a line")
    with pytest.raises(ValueError, match="letters, digits"):
        wiring.new_kb_folder(wiring.KBS_DIR, "../etc")
    assert wiring.new_kb_folder(wiring.KBS_DIR, "my_kb") == wiring.KBS_DIR / "my_kb"


def test_trace_json_round_trips():
    from core.types import Trace, from_dict
    trace = rich_trace()
    decision = decide(trace)
    data = json.loads(wiring.trace_json(trace, decision))
    assert from_dict(Trace, data["trace"]) == trace and from_dict(Decision, data["decision"]) == decision


def test_card_carries_the_question_and_a_digest_of_the_decision():
    trace = rich_trace(with_conditions=False)
    a, b = decide(trace, {"sufficiency_min": 0.30}), decide(trace, {"sufficiency_min": 0.31})
    assert a.action == b.action == "ANSWER"
    assert action.decision_digest(a) != action.decision_digest(b), "a moved threshold changes the digest"
    assert action.decision_digest(a) == action.decision_digest(decide(trace, {"sufficiency_min": 0.30}))
    out = action.card_html(Response("ANSWER", "The payment is £250 a year.", "extractive", "extractive"), a,
                           f'Is "x" {XSS_SCRIPT}?', "d1")
    assert 'data-question="Is &quot;x&quot; &lt;script&gt;alert(1)&lt;/script&gt;?"' in out and 'data-decision="d1"' in out


def _render_reply_box(turn):
    from components.dialogue import render_reply_box
    render_reply_box(turn, lambda reply, question: None)


@pytest.mark.parametrize("kind, yes_no", [("condition", True), ("which_one", False), ("age", False)])
def test_a_clarification_answered_in_words_offers_no_yes_or_no(kind, yes_no):
    """"How old are you?" and "Which one do you mean?" are answered in words; a condition is answered yes or no."""
    from core.dialogue import Turn
    trace = rich_trace()
    turn = Turn(trace=trace, decision=decide(trace), action="ASK", question="How old are you?", kind=kind)
    at = AppTest.from_function(_render_reply_box, kwargs={"turn": turn}).run()
    keys = {b.key for b in at.button}
    assert "aw_send" in keys and ("aw_yes" in keys) == yes_no and ("aw_no" in keys) == yes_no


def test_the_tours_walk_names_the_sentence_the_answers_value_came_from():
    """Browser walkthrough: the tour said the evidence step picked the bridge's sentence while the card quoted the
    town's article for the date: two stages, and the walk named only one."""
    from components.tour import why
    from core.types import AnswerChoice, EvidenceSelection, EvidenceSentence
    from tests import factories
    bridge = "Construction began in April 1954, and the bridge was opened on 14 May 1958."
    town = "The Harlow Bridge over the Ost opened in 1958."
    picked = EvidenceSelection(("opened",), (EvidenceSentence("doc#0", 0, bridge, 0.9, ("opened",), 0, 10),), (), (),
                               (), "covered")
    trace = replace(factories.trace(), evidence=picked, answer=AnswerChoice("doc#0", town, "1958", "DATE"))
    decision = decide(trace)
    walk = why(trace, decision)
    assert f"The evidence step picked “{bridge}”" in walk
    assert f"The value asked for, “1958”, was found in “{town}” (“Doc”)." in walk
    same = replace(trace, answer=AnswerChoice("doc#0", bridge, "14 May 1958", "DATE"))
    assert "The value asked for" not in why(same, decide(same)), "one sentence is named once"
    # a refusal gives no value: the walk does not offer one (a town as the painter of the Mona Lisa)
    refused = replace(decision, action="ABSTAIN", rule="topic_absent")
    assert "The value asked for" not in why(trace, refused)


def test_md_leaves_no_bare_url_or_address_for_markdown_to_link():
    """A browser walkthrough: a question holding a URL showed as a live link in the "Analysed:" caption (Streamlit's
    markdown links "https://…", "www.…" and "name@host" itself, escaped or not)."""
    from components.common import WORD_JOINER, md
    text = "Is https://example.org/a, WWW.example.org or me@example.org at 10:30 // in the KB?"
    shown = md(text)
    assert not re.search(r"://|(?i:www\.)|\w@", shown), shown
    assert shown.replace(WORD_JOINER, "") == text
    assert md("a plain question, 10:30") == "a plain question, 10:30"
