"""The clarification dialogue (seed 002 §3.8, §3.11).

Fast tests drive ``Dialogue`` over a stand-in pipeline whose conditions resolve from the history
as the real variables stage's do; the real ones run the sample KB with the project's NLI model:
ASK → reply → ASK about another condition → reply → ANSWER yes/no, a contradicting reply, a reply
that settles nothing, the caches that keep retrieval and NLI from running again, ShARC's history.
"""
from __future__ import annotations

import io
from dataclasses import replace
from types import SimpleNamespace

import pytest

from core import models
from core.agents import clarification_question
from core.cli import chat_main
from core.dialogue import Dialogue, DialogueError, decide_with_history
from core.gate import decide
from core.pipeline import Pipeline, make_query
from core.types import Abduction, Premise
from core.voice import to_question
from tests.fakes import CONDITIONS, FakePipeline, RecordingModels
from tests.ui_factories import rich_trace

QUESTION = "Can I get the Winter Fuel Payment?"


# --- fast: the loop over a stand-in pipeline --------------------------------------------------

def test_asks_each_condition_once_then_answers_yes(fake_models):
    pipe = FakePipeline()
    d0 = Dialogue.start(pipe, QUESTION)
    assert d0.action == "ASK" and d0.current.question == to_question(CONDITIONS[0]) == "Are you aged 66 or over?"
    assert d0.current.target == CONDITIONS[0] and d0.current.rho == 0.0
    d1 = d0.answer("Yes")
    assert [t.action for t in d1.turns] == ["ASK", "ASK"] and d1.turns[0].reply == "Yes"
    assert d1.current.target == CONDITIONS[1] and [c.text for c in d1.current.resolved] == [CONDITIONS[0]]
    assert d1.current.rho == pytest.approx(1 / 3)
    assert d1.current.note == "Your reply settled “are aged 66 or over” (established)."
    d3 = d1.answer("yes").answer("Yes, it is")
    assert d3.action == "ANSWER" and d3.decision.answer_polarity == "yes" and d3.done
    assert [t.rho for t in d3.turns] == pytest.approx([0.0, 1 / 3, 2 / 3, 1.0])
    assert d3.history == tuple((to_question(c), r) for c, r in zip(CONDITIONS, ("Yes", "yes", "Yes, it is")))
    assert pipe.queries[-1].history == d3.history
    assert d0.turns[0].reply == "" and len(d0.turns) == 1, "answer() returned a new dialogue; the old one is unchanged"


def test_a_contradicting_reply_gives_the_rules_negative_answer(fake_models):
    d = Dialogue.start(FakePipeline(), QUESTION).answer("No, I'm 60")
    assert d.action == "ANSWER" and d.decision.rule == "conditions_failed" and d.decision.answer_polarity == "no"
    assert d.current.resolved[0].status == "contradicted" and d.done
    with pytest.raises(DialogueError, match="Nothing is being asked: turn 1 ends the dialogue with ANSWER"):
        d.answer("yes")


def test_a_reply_that_settles_nothing_is_said_so_and_the_next_question_differs(fake_models):
    d = Dialogue.start(FakePipeline(), QUESTION).answer("I'd rather not say")
    assert d.current.resolved == () and d.current.action == "ASK"
    assert d.current.note == "Your reply “I'd rather not say” did not settle “are aged 66 or over”."
    assert d.current.target == CONDITIONS[1] and d.current.question != d.turns[0].question
    # the asked condition stays open; once everything open was asked, the dialogue abstains and says why
    d = d.answer("maybe").answer("perhaps")
    assert d.action == "ABSTAIN" and d.decision.action == "ASK" and d.current.override.startswith(
        "I have already asked about “are aged 66 or over”; “have lived in Calvera for 5 years”")
    assert d.asked == CONDITIONS


def test_a_free_text_fact_settles_a_condition_and_the_same_one_is_not_asked_again(fake_models):
    d = Dialogue.start(FakePipeline(), QUESTION).answer("I am 70 next month")
    assert [c.text for c in d.current.resolved] == [CONDITIONS[0]] and d.current.target == CONDITIONS[1]


def test_rewind_starts_over_or_edits_an_earlier_reply(fake_models):
    pipe = FakePipeline()
    d = Dialogue.start(pipe, QUESTION).answer("yes").answer("no")
    assert d.action == "ANSWER" and d.decision.answer_polarity == "no"
    calls = len(pipe.queries)
    fresh = d.rewind(0)
    assert len(fresh.turns) == 1 and fresh.action == "ASK" and fresh.current.reply == "" and len(pipe.queries) == calls
    edited = d.rewind(1, "yes")
    assert [t.reply for t in edited.turns] == ["yes", "yes", ""] and edited.current.target == CONDITIONS[2]
    assert edited.turns[0] == d.turns[0], "turns before the edited one are kept"
    with pytest.raises(DialogueError, match=r"There is no turn 5: the dialogue has 3 turns \(0–2\)"):
        d.rewind(5)
    with pytest.raises(DialogueError, match="The reply is empty"):
        fresh.answer("   ")


def test_regate_redecides_only_the_current_turn_without_analysing():
    pipe = FakePipeline()
    d = Dialogue.start(pipe, QUESTION).answer("yes")
    loose = d.regate({"incompleteness_max": 0.9})
    assert len(pipe.queries) == 2 and loose.action == "ANSWER" and loose.turns[0] == d.turns[0]
    assert loose.regate({"incompleteness_max": 0.0}).current.question == d.current.question
    runs = pipe.models.calls["embedder"]  # the ASK agent embeds what it checks against the history
    nudged = d.regate({"incompleteness_max": 0.1})  # still ASK by the same rule: the question stands
    assert nudged.current.question == d.current.question, "no clarification written"
    assert pipe.models.calls["embedder"] == runs
    rule = next(r for r in nudged.decision.rules if r.name == "missing_variables")
    assert rule.fired and rule.comparisons[0].threshold == 0.1
    assert loose.replay({"incompleteness_max": 0.0}).history == d.history


def test_clarification_question_skips_what_was_asked_and_falls_back_to_the_template(fake_models):
    trace = rich_trace()
    decision = decide(trace)
    first = clarification_question(trace, decision)
    assert (first.action, first.text, first.target) == ("ASK", "Have you lived in Calvera for 5 years?",
                                                         "have lived in Calvera for 5 years")
    assert clarification_question(trace, decision, asked=[first.target]).kind == "already_asked"
    odd = replace(trace, variables=replace(trace.variables, conditions=tuple(
        replace(c, text="ID") if c.status == "missing" else c for c in trace.variables.conditions),
        missing=("ID",)))
    assert clarification_question(odd, decide(odd)).text == "Regarding Winter Fuel Payment: could you specify ID?"


def test_clarification_question_asks_what_abduction_named_until_it_was_asked(fake_models):
    trace = rich_trace()
    premise = Premise("I am a resident of Calvera.", "missing_variable", status="about_user")
    trace = replace(trace, abduction=Abduction(True, 0.2, 0.5, (premise,), premise, "ask", "are a resident of Calvera"))
    first = clarification_question(trace, decide(trace))
    assert (first.action, first.kind, first.target) == ("ASK", "premise", "are a resident of Calvera")
    then = clarification_question(trace, decide(trace), asked=[first.target])
    assert (then.kind, then.target) == ("condition", "have lived in Calvera for 5 years"), "never asked twice"


def test_a_turn_keeps_the_ask_agents_response_and_hears_the_repeat_similarity(fake_models):
    """A follow-up already in the history that resembles a condition's question ("older" for "over")
    counts as asked at a low repeat similarity, not at a high one."""
    query = make_query(QUESTION, history=[("Are you aged 66 or older?", "maybe")])
    strict = Dialogue.start(FakePipeline(), query, {"ask_repeat_similarity": 0.55})
    lenient = Dialogue.start(FakePipeline(), query, {"ask_repeat_similarity": 0.95})
    assert (strict.current.target, lenient.current.target) == (CONDITIONS[1], CONDITIONS[0])
    d = strict
    assert d.current.response.action == "ASK"
    assert (d.current.response.text, d.current.response.backend) == (d.current.question, "rules")
    loose = d.answer("yes").regate({"incompleteness_max": 0.9})
    assert loose.action == "ANSWER" and loose.current.response is None, "the page writes the answer, not the turn"


def test_decide_with_history_replays_sharc_turns(fake_models):
    pipe = FakePipeline()
    item = {"question": QUESTION, "scenario": "", "history": [
        {"follow_up_question": to_question(CONDITIONS[1]), "follow_up_answer": "Yes"},
        {"follow_up_question": to_question(CONDITIONS[0]), "follow_up_answer": "No"}]}
    d = decide_with_history(pipe, item)
    assert len(d.turns) == 3 and d.action == "ANSWER" and d.decision.answer_polarity == "no"
    # the dataset asked about another condition than the dialogue would have: the turn records what was asked
    assert d.turns[0].question == to_question(CONDITIONS[1]) and d.turns[0].target == ""
    assert [c.text for c in d.turns[1].resolved] == [CONDITIONS[1]]
    assert d.turns[1].note == "Your reply settled “have lived in Calvera for 5 years” (established)."
    single = decide(pipe.analyze(make_query(QUESTION)))
    assert single.action == "ASK"


def test_chat_reads_replies_from_stdin_and_prints_each_turn(fake_models):
    out = io.StringIO()
    args = SimpleNamespace(question=QUESTION, scenario="")
    assert chat_main(args, {}, FakePipeline(), stdin=io.StringIO("yes\n\nno\nignored\n"), stdout=out) == 0
    text = out.getvalue()
    assert text.count("TURN ") == 3 and "TURN 0  ASK  ρ = 0.00" in text and "? Are you aged 66 or over?" in text
    assert "> no" in text and "TURN 2  ANSWER (no)" in text and "ignored" not in text
    out = io.StringIO()
    chat_main(args, {}, FakePipeline(), stdin=io.StringIO(""), stdout=out)
    assert out.getvalue().rstrip().endswith("(no more replies: the question is still open)")


def test_chat_prints_each_turns_warnings_on_stderr_not_in_the_dialogue(fake_models, capsys):
    class Warned(FakePipeline):
        def analyze(self, query, overrides=None):
            return replace(super().analyze(query, overrides), warnings=("generator server unreachable: the rules wrote it",))

    out = io.StringIO()
    chat_main(SimpleNamespace(question=QUESTION, scenario=""), {}, Warned(), stdin=io.StringIO("yes\n"), stdout=out)
    err = capsys.readouterr().err
    assert err.count("warning: generator server unreachable: the rules wrote it") == 2  # turn 0 and turn 1
    assert "warning" not in out.getvalue() and "TURN 1" in out.getvalue()


# --- real: the sample KB with the project's NLI model ---------------------------------------

def test_real_ask_each_condition_then_answer_yes_without_rerunning_retrieval_or_nli(sample_kb, nli_model):
    """The Winter Fuel Payment has three conditions; "I am 72." may settle the age one. Every clarification
    targets a different open condition, each "Yes" settles the one asked, and the last turn answers yes."""
    question = "Am I eligible for the Winter Fuel Payment?"
    recording = RecordingModels(models.DEFAULT)
    d = Dialogue.start(Pipeline(sample_kb, recording), make_query(question, "I am 72."))
    assert d.action == "ASK" and d.decision.rule in ("condition_open", "missing_variables"), d.decision
    open_at_start = len(d.trace.variables.missing)
    assert open_at_start >= 2, d.trace.variables
    seen = len(recording.embedded)
    nli_calls = recording.calls["nli"]
    d = d.answer("Yes")
    assert [question] not in recording.embedded[seen:], "retrieval embedded the question again"
    assert d.trace.timings["retrieval"] == d.trace.timings["nli"] == d.trace.timings["evidence"] == \
        d.trace.timings["evidence_answer"] == 0.0, d.trace.timings
    assert d.trace.passages == d.turns[0].trace.passages and d.trace.nli == d.turns[0].trace.nli
    assert recording.calls["nli"] - nli_calls <= 1, "only the variables stage may call NLI (one batch)"
    while d.action == "ASK" and len(d.turns) <= open_at_start:
        d = d.answer("Yes")
    asked = [t.target for t in d.turns[:-1]]
    assert len(asked) == open_at_start == len(set(asked)), "one question per open condition, none twice"
    for before, after in zip(d.turns, d.turns[1:]):
        assert before.target in [c.text for c in after.resolved], after.note
    assert d.action == "ANSWER" and d.decision.answer_polarity == "yes", (d.decision.rule, d.current.note)
    assert [t.rho for t in d.turns] == sorted(t.rho for t in d.turns) and d.current.rho == 1.0


def test_real_a_contradicting_reply_answers_no(sample_pipeline):
    d = Dialogue.start(sample_pipeline, make_query("Am I eligible for the Winter Fuel Payment?", "I am 72."))
    d = d.answer("No")
    assert d.action == "ANSWER" and d.decision.rule == "conditions_failed" and d.decision.answer_polarity == "no"
    assert d.current.resolved and d.current.resolved[0].status == "contradicted"


def test_real_a_reply_that_settles_nothing_then_a_different_question(sample_pipeline):
    d = Dialogue.start(sample_pipeline, make_query("Could I claim Carer's Allowance?", "I'm 45."))
    assert d.action == "ASK", d.decision
    asked = d.current.question
    d = d.answer("Let me check.")
    assert d.current.resolved == () and "did not settle" in d.current.note
    assert d.action == "ASK" and d.current.question != asked and d.current.target not in d.asked_before(1)


@pytest.mark.parametrize("in_education, polarity", [("No", "yes"), ("Yes", "no")])
def test_real_a_negated_condition_is_asked_in_its_positive_form_and_the_reply_read_against_it(
        sample_pipeline, in_education, polarity):
    """Carer's Allowance needs "are not in full-time education": asked "Are you in full-time education?", a
    "no" meets the condition and a "yes" fails it."""
    d = Dialogue.start(sample_pipeline, make_query(
        "Could I claim Carer's Allowance?", "I'm 45, I look after my dad for 40 hours a week and I earn £100 a week."))
    asked = []
    while d.action == "ASK" and len(asked) < 4:
        asked.append(d.current.question)
        d = d.answer(in_education if "education" in asked[-1] else "Yes")
    assert "Are you in full-time education?" in asked, asked
    assert d.action == "ANSWER" and d.decision.answer_polarity == polarity, (asked, d.decision.rule, d.current.note)


def test_real_sharc_history_is_decided_through_the_loop(sample_pipeline):
    """ShARC-shaped: the follow-ups were asked in the dataset's own words."""
    item = {"question": "Am I eligible for the Winter Fuel Payment?", "scenario": "",
            "history": [{"follow_up_question": "Were you 66 or older on 21 September 2025?", "follow_up_answer": "Yes"},
                        {"follow_up_question": "Have you lived in Calvera for at least 3 years?",
                         "follow_up_answer": "Yes"},
                        {"follow_up_question": "Is your household income less than £20,000 a year?",
                         "follow_up_answer": "Yes"}]}
    d = decide_with_history(sample_pipeline, item)
    assert len(d.turns) == 4 and d.action == "ANSWER" and d.decision.answer_polarity == "yes", d.current.note
    assert [t.question for t in d.turns[:3]] == [h["follow_up_question"] for h in item["history"]]
    assert decide(sample_pipeline.analyze(make_query(item["question"], item["scenario"]))).action == "ASK"
    item["history"][1]["follow_up_answer"] = "No"
    assert decide_with_history(sample_pipeline, item).decision.answer_polarity == "no"


def test_a_which_one_reply_picks_an_option_by_its_words_or_its_place():
    from core.dialogue import Turn, chosen_referent, with_referent
    trace = rich_trace()
    asked = Turn(trace, decide(trace), "ASK", question="Which one?", kind="which_one",
                 target="which one you mean: “Corran Shipyards” or “Harlow Bridge”")
    for reply, chosen in (("Harlow Bridge", "Harlow Bridge"), ("I mean the harlow bridge.", "Harlow Bridge"),
                          ("the shipyards", "Corran Shipyards"), ("the second one", "Harlow Bridge"),
                          ("the first", "Corran Shipyards"), ("The one in Tessby", "The one in Tessby")):
        assert chosen_referent(replace(asked, reply=reply)) == chosen, reply
    assert with_referent("When was it built?", "Harlow Bridge") == "When was it built (Harlow Bridge)?"


def test_real_a_which_one_reply_is_read_as_what_the_question_is_about(sample_pipeline):
    """Browser walkthrough: replying "Harlow Bridge" to "which one you mean: “Corran Shipyards” or “Harlow Bridge”?"
    asked the same again, then abstained ("I already asked which topic you mean")."""
    d = Dialogue.start(sample_pipeline, make_query("When was it built?"))
    assert d.action == "ASK" and d.current.kind == "which_one", d.current
    assert "Harlow Bridge" in d.current.target
    d = d.answer("I mean the Harlow Bridge")
    assert d.trace.query.question == "When was it built (Harlow Bridge)?"
    assert d.trace.query.history == (), "a choice of referent is no answer to a condition"
    assert d.action == "ANSWER", d.decision
    assert d.trace.answer.passage_id.startswith("encyclopedia/harlow_bridge#") and d.trace.answer.value
    assert "chose “Harlow Bridge”" in d.current.note
