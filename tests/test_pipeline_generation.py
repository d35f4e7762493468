"""The generation stages in the pipeline (issue 5): step-back retrieval, LLM claim rewriting and
abductive premises in analyze(), the checked response after decide(), and the premises panel.

A small real knowledge base and the real NLI model drive the pipeline; the generator is the
template backend, a local HTTP stub speaking the OpenAI chat API, or (marked slow) the local model.
"""
from __future__ import annotations

import json
import socket
from dataclasses import replace

import pytest
from streamlit.testing.v1 import AppTest

from core import prompts, settings
from core.agents import RESPONSE_SETTINGS, respond_checked
from core.claims import ClaimBuilder
from core.gate import decide
from core.generation import GenerationError, LocalBackend, OpenAICompatibleBackend
from core.evidence import choose_answer
from core.text import split_sentences
from core.pipeline import Pipeline, make_query
from core.stepback import rule_stepback
from core.types import (Abduction, AnswerCheck, Citation, Comparison, Decision, Generated, NliScores, Passage,
                        PassageNli, Premise, Query, Response, RetrievedPassage, Trace, VariableState, from_dict,
                        to_dict)
from tests import factories
from tests.conftest import build_small_kb
from tests.fake_openai_server import FakeOpenAIServer

pytestmark = pytest.mark.usefixtures("fresh_generation_cache")  # every generation is a real call

DOCS = {
    "harlow_bridge.md": "# Harlow Bridge\n\nThe Harlow Bridge is a road bridge over the River Ost in Harlow. The "
                        "Harlow Bridge was designed by the engineer Edith Marlowe. The bridge was opened in 1958.\n",
    "edith_marlowe.md": "# Edith Marlowe\n\nEdith Marlowe was a civil engineer from Calvera. "
                        "Edith Marlowe was born in Tessby in 1921. She studied engineering in Varnholm.\n",
    "winter_fuel.md": "# Winter Fuel Payment\n\nYou can get the Winter Fuel Payment if you meet all of the following "
                      "conditions:\n\n* are aged 66 or over\n* have lived in Calvera for at least 3 years\n\n"
                      "The payment is £200 a year.\n",
    "library.md": "# Library\n\nJoining the library is free for everyone who lives in the borough. Members can "
                  "borrow up to 12 books at a time.\n",
}
MULTI_HOP = "In which town was the designer of the Harlow Bridge born?"
OPENED = "When was the Harlow Bridge opened?"
# The KB is tiny: with the entailment filter's fallback every passage is "kept", so E is cut to the
# best passage for the premises to have an outside to be found in.
E_IS_TOP_PASSAGE = {"premise_top_k": 1}
# Sufficiency of the multi-hop claim is about 0.6: "the Harlow Bridge … in the town of Harlow" shares the
# claim's "town" and its bridge, and the NLI model half-entails it. τ above that runs the premises stage.
MULTI_HOP_SETTINGS = {**E_IS_TOP_PASSAGE, "abduction_tau": 0.8}
CACHED_STAGES = ("retrieval", "evidence", "claim", "nli", "variables", "kg", "premises")


@pytest.fixture
def no_generator_model(monkeypatch):
    """Loading the local generator, or opening any connection, fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"a generator was used: {args}")
    monkeypatch.setattr(LocalBackend, "load", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    return build_small_kb(tmp_path_factory.mktemp("pipeline_generation") / "kb", DOCS)


@pytest.fixture(scope="module")
def pipeline(kb, nli_model):
    return Pipeline(kb)


def answer_decision(trace: Trace) -> Decision:
    """The gate's decision turned into ANSWER (the tiny KB's signals need not allow one)."""
    return replace(decide(trace), action="ANSWER", rule="default_answer", answer_polarity="")


# --- settings and types -------------------------------------------------------------------

def test_generation_settings_are_declared_with_their_stages():
    assert settings.STAGES.index("signals") < settings.STAGES.index("premises") < settings.STAGES.index("gate")
    by = settings.BY_NAME
    assert (by["generator"].default, by["generator"].choices, by["generator"].stage) == \
        ("template", ("template", "local", "openai"), "retrieval")
    assert (by["stepback"].default, by["llm_claim"].default, by["abduction"].default) == (False, False, True)
    assert by["llm_claim"].stage == "claim" and by["answer_mode"].stage == "gate"
    assert set(settings.for_stage(settings.defaults(), "premises")) == {
        "abduction", "abduction_tau", "abduction_m", "abduction_alpha", "abduction_beta", "premise_contradict",
        "premise_related", "premise_support", "premise_top_k", "premise_generation"}
    assert set(RESPONSE_SETTINGS) <= set(by)
    assert not any("http" in str(s.default) for s in settings.SETTINGS), "no default server URL"
    with pytest.raises(ValueError, match="generator must be one of"):
        settings.resolve({"generator": "gpt-17"})


def test_generation_dataclasses_round_trip_through_json():
    premise = Premise("Edith Marlowe was born in Tessby.", "kg", entail=0.1, retrieve=0.9, score=0.5,
                      support_passage="edith_marlowe#0", status="supported")
    values = [
        Generated("text", "local:x", cached=True, error="", seconds=0.5),
        Abduction(True, 0.1, 0.5, (premise,), premise, "answer", warnings=("w",)),
        Response("ANSWER", "Tessby.", "premise", "extractive", (Citation("a#0", "a", "A", "S."),), answer="Tessby"),
        AnswerCheck("hedging", True, (Comparison("hedging_matches", ">", 1.0, 0.0, True),), "hedging: 'maybe'"),
    ]
    for value in values:
        assert from_dict(type(value), json.loads(json.dumps(to_dict(value)))) == value


# --- analyze() with the template generator ----------------------------------------------------

def test_default_run_loads_no_generator_and_carries_the_premises(pipeline, no_generator_model):
    trace = pipeline.analyze(make_query(MULTI_HOP), MULTI_HOP_SETTINGS)
    assert trace.stepback is None and trace.claim_rewrite is None and trace.warnings == ()
    assert trace.models["generator"] == "template" and trace.claim.source == "rules"
    abduction = trace.abduction
    assert abduction.triggered and abduction.sufficiency == trace.signals.sufficiency < abduction.tau
    # The KG bridge: E says who designed the bridge; the graph (outside E) says where she was born.
    assert abduction.outcome == "answer" and abduction.best.origin == "kg"
    assert abduction.best.text == "Edith Marlowe was born in Tessby."
    assert abduction.best.status == "supported" and abduction.best.support_passage.startswith("edith_marlowe")
    assert not any("Calvera" in p.text for p in abduction.candidates), "a bridge unrelated to the question"
    assert from_dict(Trace, json.loads(json.dumps(to_dict(trace)))) == trace

    response, rules = respond_checked(trace, answer_decision(trace), trace.settings)
    assert (response.action, response.kind, response.answer) == ("ANSWER", "premise", "Tessby")
    assert [c.doc_id for c in response.citations] == ["harlow_bridge", "edith_marlowe"]
    assert [(r.name, r.enabled, r.fired) for r in rules] == [("answer_grounding", True, False),
                                                             ("hedging", True, False)]


def test_stepback_and_llm_claim_with_the_template_use_the_rules(pipeline, no_generator_model):
    trace = pipeline.analyze(make_query(OPENED), {"stepback": True, "llm_claim": True})
    sb = trace.stepback
    assert sb.stepback.abstract == rule_stepback(OPENED) and sb.stepback.source == "rules"
    assert trace.passages == sb.merged and len(sb.merged_from) == len(sb.merged)
    assert {p.passage.id for p in sb.merged} <= {p.passage.id for p in sb.original + sb.abstract}
    rule_claim = ClaimBuilder().run(OPENED)
    assert trace.claim == rule_claim and trace.claim_rewrite.rule_claim == rule_claim
    assert not trace.claim_rewrite.accepted
    assert from_dict(Trace, json.loads(json.dumps(to_dict(trace)))) == trace


def test_each_generation_stage_is_cached_by_its_inputs_and_settings(pipeline):
    first = pipeline.analyze(make_query(MULTI_HOP), MULTI_HOP_SETTINGS)
    again = pipeline.analyze(make_query(MULTI_HOP), MULTI_HOP_SETTINGS)
    assert all(again.timings[s] == 0.0 for s in CACHED_STAGES) and again.abduction is first.abduction

    reweighed = pipeline.analyze(make_query(MULTI_HOP), {**MULTI_HOP_SETTINGS, "abduction_alpha": 0.2})
    assert reweighed.timings["premises"] > 0 and reweighed.abduction is not first.abduction
    assert all(reweighed.timings[s] == 0.0 for s in CACHED_STAGES if s != "premises")
    best = reweighed.abduction.best
    assert best.score == pytest.approx(0.2 * best.entail + 0.5 * best.retrieve, abs=1e-3)

    gated = pipeline.analyze(make_query(MULTI_HOP),
                             {**MULTI_HOP_SETTINGS, "grounding_min": 0.9, "answer_mode": "extractive"})
    assert all(gated.timings[s] == 0.0 for s in CACHED_STAGES), "response settings re-run no analysis stage"

    off = pipeline.analyze(make_query(MULTI_HOP), {**MULTI_HOP_SETTINGS, "abduction": False})
    assert off.abduction is None and "premises" not in off.timings
    stepped = pipeline.analyze(make_query(MULTI_HOP), {**MULTI_HOP_SETTINGS, "stepback": True})
    assert stepped.timings["retrieval"] > 0 and stepped.stepback is not None


# --- analyze() with a generator server ----------------------------------------------------------

def server_reply(messages: list[dict]) -> str:
    """What a well-behaved model would answer to each of the pipeline's prompts."""
    system = messages[0]["content"]
    if system == prompts.STEPBACK_SYSTEM:
        return "What is known about the history of the Harlow Bridge?"
    if system == prompts.CLAIM_SYSTEM:
        return "There exists a date when the Harlow Bridge was opened."
    if system == prompts.PREMISES_SYSTEM:
        return "The Harlow Bridge was opened in 1958.\nThe Harlow Bridge was never opened."
    return "The Harlow Bridge was opened in 1958."


def test_a_server_generator_writes_the_stepback_claim_and_premises(kb, pipeline, monkeypatch):
    with FakeOpenAIServer(reply=server_reply) as server:
        monkeypatch.setenv("AW_GENERATOR_URL", server.url)
        monkeypatch.setenv("AW_GENERATOR_MODEL", "stub")
        trace = pipeline.analyze(make_query(OPENED), {"generator": "openai", "stepback": True, "llm_claim": True,
                                                      "abduction_tau": 1.0, **E_IS_TOP_PASSAGE})
    backend = f"openai:stub@{server.url}"
    assert trace.models["generator"] == backend and trace.warnings == ()
    assert trace.stepback.stepback.source == backend
    assert trace.stepback.stepback.abstract == "What is known about the history of the Harlow Bridge?"
    assert trace.claim_rewrite.accepted and trace.claim.source == backend
    assert trace.claim.text == "There exists a date when the Harlow Bridge was opened."
    generated = {p.text: p for p in trace.abduction.candidates if p.origin == "generator"}
    assert set(generated) == {"The Harlow Bridge was opened in 1958.", "The Harlow Bridge was never opened."}
    assert all(p.backend == backend for p in generated.values())
    assert generated["The Harlow Bridge was never opened."].status == "rejected"  # E contradicts it
    assert generated["The Harlow Bridge was opened in 1958."].status == "in_evidence"


def test_a_failing_server_is_named_as_what_the_template_fell_back_from(kb, pipeline, monkeypatch):
    """Issue 13: ``models.generator`` names the backend that actually wrote the texts."""
    with FakeOpenAIServer(mode="error") as server:
        monkeypatch.setenv("AW_GENERATOR_URL", server.url)
        monkeypatch.setenv("AW_GENERATOR_MODEL", "stub")
        trace = pipeline.analyze(make_query(OPENED), {"generator": "openai", "stepback": True, "llm_claim": True})
    assert trace.stepback.stepback.source == "rules" and trace.claim.source == "rules"
    assert trace.models["generator"] == f"template (fell back from openai:stub@{server.url})"


def test_an_unconfigured_server_is_a_warning_not_a_crash(pipeline, monkeypatch, no_generator_model):
    monkeypatch.delenv("AW_GENERATOR_URL", raising=False)
    trace = pipeline.analyze(make_query(OPENED), {"generator": "openai", "stepback": True})
    assert trace.models["generator"] == "template" and "AW_GENERATOR_URL" in trace.warnings[0]
    assert trace.stepback.stepback.source == "rules"


# --- respond_checked: the answer-level checks --------------------------------------------------

BRIDGE = ("The Harlow Bridge is a road bridge over the River Ost in Harlow. Construction began in April 1954, "
          "and the bridge was opened on 14 May 1958.")


def small_trace() -> Trace:
    text = BRIDGE
    p = Passage("harlow_bridge#0", "harlow_bridge", "Harlow Bridge", text, 0, len(text),
                tuple(split_sentences(text)))
    claim = ClaimBuilder().run(OPENED)
    passages = (RetrievedPassage(p, 1, 0.8, 3.0, 1.0, 0.8),)
    nli = (PassageNli(p.id, NliScores(0.9, 0.1, 0.0), 1, kept=True),)
    return Trace(query=Query(OPENED), passages=passages, claim=claim, nli=nli, fallback=False,
                 variables=VariableState((), (), (), 0.0, "none"), signals=factories.signals(),
                 answer=choose_answer(OPENED, claim.answer_type, passages, nli))


def fake_predict(entailment: float):
    def predict(pairs):
        return [NliScores(entailment, 1 - entailment, 0.0) for _ in pairs]
    return predict


def test_a_grounded_extractive_answer_stands(no_generator_model):
    t = small_trace()
    response, rules = respond_checked(t, decide(t), predict=fake_predict(0.95))
    assert response.action == "ANSWER" and response.answer == "14 May 1958" and not response.warning
    assert [(r.name, r.action, r.enabled, r.fired) for r in rules] == [
        ("answer_grounding", "ABSTAIN", True, False), ("hedging", "ABSTAIN", True, False)]
    assert [c.signal for c in rules[0].comparisons] == ["answer_entailment", "answer_contradiction"]


def test_an_ungrounded_answer_becomes_the_abstain_agents_response_unless_the_rule_is_off(no_generator_model):
    t = small_trace()
    response, rules = respond_checked(t, decide(t), {"grounding_min": 0.5}, predict=fake_predict(0.2))
    assert response.action == "ABSTAIN" and response.kind == "fact_absent"
    assert "not grounded in its evidence" in response.text
    assert "withheld by the answer_grounding rule" in response.warning
    assert rules[0].fired and rules[0].comparisons[0].holds and rules[0].comparisons[0].value == pytest.approx(0.2)
    kept, rules_off = respond_checked(t, decide(t), {"rule_answer_grounding": False}, predict=fake_predict(0.2))
    assert kept.action == "ANSWER" and not rules_off[0].enabled and not rules_off[0].fired
    assert rules_off[0].comparisons[0].holds  # still evaluated and shown, as the gate shows a disabled rule


def test_a_hedged_generated_answer_abstains():
    t = small_trace()
    with FakeOpenAIServer(reply="I think the bridge was opened in 1958, but I'm not sure.") as server:
        backend = OpenAICompatibleBackend(server.url, "stub", timeout=5)
        allowed, _ = respond_checked(t, decide(t), {"rule_hedging": False}, generator=backend,
                                     predict=fake_predict(0.9))
        response, rules = respond_checked(t, decide(t), generator=backend, predict=fake_predict(0.9))
    assert allowed.action == "ANSWER" and allowed.kind == "generated"
    assert response.action == "ABSTAIN" and [r.fired for r in rules] == [False, True]
    assert "I think" in rules[1].explanation and "I'm not sure" in rules[1].explanation


def test_ask_and_abstain_decisions_are_not_checked(no_generator_model):
    t = small_trace()
    response, rules = respond_checked(t, Decision("ABSTAIN", "low_retrieval", "r.", ()), predict=fake_predict(0.0))
    assert response.action == "ABSTAIN" and response.kind == "topic_absent" and rules == ()
    response, rules = respond_checked(t, Decision("ASK", "ambiguity", "r.", ()), predict=fake_predict(0.0))
    assert response.action == "ASK" and response.text.endswith("?") and rules == ()


def test_real_nli_keeps_a_faithful_answer_and_withholds_an_invented_one(pipeline):
    trace = pipeline.analyze(make_query(OPENED))
    faithful, rules = respond_checked(trace, answer_decision(trace), {"answer_mode": "extractive"})
    assert faithful.action == "ANSWER" and "1958" in faithful.text and not any(r.fired for r in rules)
    with FakeOpenAIServer(reply="The Harlow Bridge was designed by Anselm Greer in Paris.") as server:
        backend = OpenAICompatibleBackend(server.url, "stub", timeout=5)
        invented, rules = respond_checked(trace, answer_decision(trace), {"answer_mode": "generated"}, backend)
    assert invented.action == "ABSTAIN" and rules[0].name == "answer_grounding" and rules[0].fired
    assert "Anselm Greer" in invented.warning


# --- the premises panel ----------------------------------------------------------------------

XSS = "<script>alert(1)</script>"


def _render(abduction):
    from components.premises import render_premises
    render_premises(abduction)


def test_premises_panel_lists_candidates_marks_p_star_and_escapes():
    best = Premise(f"Edith Marlowe was born in Tessby {XSS}.", "kg", entail=0.05, retrieve=0.84, score=0.445,
                   support_passage="edith_marlowe#0", support_title="Edith Marlowe",
                   support_sentence="Edith Marlowe was born in Tessby in 1921.", status="supported")
    rejected = Premise("The Harlow Bridge was never opened.", "generator", backend="openai:stub", entail=0.01,
                       contradiction=0.97, score=0.005, status="rejected")
    abduction = Abduction(True, 0.09, 0.5, (best, rejected), best, "answer", warnings=(f"server down {XSS}",))
    at = AppTest.from_function(_render, kwargs={"abduction": abduction}).run()
    rows = at.dataframe[0].value
    assert list(rows["p*"]) == ["★", ""] and list(rows["status"]) == ["supported (KB outside E)",
                                                                      "rejected (E contradicts it)"]
    assert list(rows["Score"]) == [0.445, 0.005] and rows["premise"][0] == best.text  # plain text cell
    text = " ".join(m.value for m in at.markdown)
    assert "Abduction's own outcome: answer" in text and "\\<script\\>" in text and "<script>" not in text
    assert "\\<script\\>" in at.warning[0].value
    assert "α·Entail(E, p) + β·Retrieve(p)" in at.subheader[0].proto.help  # the panel's (?) note


def test_premises_panel_empty_and_not_needed_states():
    at = AppTest.from_function(_render, kwargs={"abduction": None}).run()
    assert "generation issue" in at.info[0].value
    at = AppTest.from_function(_render, kwargs={"abduction": Abduction(False, 0.8, 0.5)}).run()
    assert "Not needed" in at.markdown[0].value and "0.80" in at.markdown[0].value and not at.dataframe


# --- the real local model ------------------------------------------------------------------------

@pytest.mark.slow
def test_local_generator_in_the_pipeline(pipeline):
    local = LocalBackend()
    try:
        local.load()
    except GenerationError as exc:
        pytest.skip(str(exc))
    trace = pipeline.analyze(make_query(OPENED), {"generator": "local", "stepback": True, "llm_claim": True})
    assert trace.models["generator"] == local.id
    assert trace.stepback.stepback.generated and trace.stepback.stepback.source in (local.id, "rules")
    assert trace.claim_rewrite.generated and trace.claim.source in (local.id, "rules")
    assert trace.claim.schema == "existential" and trace.passages[0].passage.doc_id == "harlow_bridge"
