"""An amount the evidence gives by the asker's age: read, asked, and answered for the age told (``core.bands``)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from core import bands, calibrated
from core.agents import respond
from core.gate import decide
from core.quantities import extract, within_bound
from core.text import split_sentences
from core.types import AnswerChoice, Claim, NliScores, Passage, PassageNli, Query, RetrievedPassage
from tests import factories

JOBSEEKER = "The weekly rate is £71.70 for people aged under 25 and £90.50 for people aged 25 or over."
BACKDATING = ("You can claim in advance by up to 13 weeks (or 17 weeks if you're aged 60 or over), for example if "
              "you're moving.")


def _passages(text: str) -> tuple[RetrievedPassage, ...]:
    passage = Passage(id="policy/x#0", doc_id="policy/x", title="Jobseeker's Allowance", text=text, start=0,
                      end=len(text), sentences=tuple(split_sentences(text)))
    return (RetrievedPassage(passage, 1, 0.5, 1.0, 1.0, 0.9),)


def _bands(question: str, text: str, answer_type: str = "MONEY", scenario: str = "") -> bands.AgeBands | None:
    return bands.age_bands(Query(question, scenario), answer_type, _passages(text))


def _for_amount(question: str, text: str, answer_type: str = "MONEY", history=()):
    """A trace whose answer is what the pipeline's answer stage gives where it gives one by age."""
    query, passages = Query(question, "", tuple(history)), _passages(text)
    return replace(factories.trace(), query=query, passages=passages,
                   nli=(PassageNli(passages[0].passage.id, NliScores(0.2, 0.7, 0.1), 0, kept=True),),
                   claim=Claim("There exists an amount.", "existential", answer_type=answer_type),
                   answer=bands.answer_by_age(query, answer_type, passages)
                   or AnswerChoice(passages[0].passage.id, text, "", ""))


def test_an_amount_given_by_age_is_read_with_its_values_and_ages():
    found = _bands("How much Jobseeker's Allowance would I get a week?", JOBSEEKER)
    assert found.values == ("£71.70", "£90.50") and found.ages == ("under 25", "25 or over")
    assert found.text == JOBSEEKER and found.passage_id == "policy/x#0" and found.kind == "money"
    # a length of time, one value unqualified and the other for an age; asked in the scenario's words
    found = _bands("How far ahead can I claim?", BACKDATING, "DURATION", "I'm moving to a new flat in a few months.")
    assert found.values == ("13 weeks", "17 weeks") and found.ages == ("60 or over",)
    # two sentences, each a value for an age
    two = ("Only one payment is made to each household. A household where the oldest person is aged 66 to 79 "
           "gets £200. A household with someone aged 80 or over gets £300.")
    assert _bands("How much will we get?", two).values == ("£200", "£300")


@pytest.mark.parametrize("question, text", [
    # not the asker's own question: the rate is the document's to state, both bands of it
    ("What is the weekly rate of Jobseeker's Allowance?", JOBSEEKER),
    # one value, or values that differ by something other than age
    ("How much would I get?", "The weekly rate is £71.70 for people aged under 25."),
    ("How much would I get?", "The most you can get is £175 a week for one child and £300 a week for two or more "
                              "children."),
])
def test_an_amount_is_read_as_turning_on_age_only_for_the_askers_question_and_values_by_age(question, text):
    assert _bands(question, text) is None


@pytest.mark.parametrize("question, scenario, history, told", [
    ("How much Jobseeker's Allowance would a 23-year-old like me get?", "", (), (True, 23)),
    ("How much Jobseeker's Allowance would I get?", "I'm 58 and lost my job in May.", (), (True, 58)),
    ("How much would I get?", "", (("Are you over 18?", "Yes, I'm 30"),), (True, 30)),
    ("How much would I get?", "", (("How old are you?", "seventy-two"),), (True, 72)),  # a bare number replied
    ("How much would I get?", "I was born in 1961.", (), (True, None)),
    ("How much would I get?", "", (("How old are you?", "old enough"),), (True, None)),
    ("How much would I get?", "I lost my job in May.", (("Are you over 18?", "Yes"),), (False, None)),
])
def test_the_age_the_asker_told_is_read_from_every_place_it_can_be_said(question, scenario, history, told):
    assert bands.told_age(Query(question, scenario, history)) == told


@pytest.mark.parametrize("text, ages", [
    (JOBSEEKER, {17: "£71.70", 24: "£71.70", 25: "£90.50", 60: "£90.50"}),
    # the ages before their values, the tightest band where two hold
    ("A household where the oldest person is aged 66 or over gets £200. A household with someone aged 80 or over "
     "gets £300.", {70: "£200", 84: "£300", 50: ""}),
    # one value qualified, the other for every other age
    (BACKDATING, {62: "17 weeks", 40: "13 weeks"}),
])
def test_a_told_age_picks_its_value(text, ages):
    found = _bands("How much would I get?", text, "DURATION" if "weeks" in text else "MONEY")
    assert {age: found.value_for(age) for age in ages} == ages


@pytest.mark.parametrize("bound, inside, outside", [
    ("aged under 25", (17, 24.9), (25, 40)),
    ("aged 25 or over", (25, 60), (24,)),
    ("aged over 65", (66,), (65,)),
    ("aged 65 or under", (65, 20), (66,)),
])
def test_an_age_lies_within_a_bound_as_the_text_draws_it(bound, inside, outside):
    age = next(q for q in extract(f"for people {bound}") if q.kind == "age")
    assert all(within_bound(a, age) for a in inside) and not any(within_bound(a, age) for a in outside)


def test_the_analysis_answers_with_the_value_for_the_age_told():
    """The answer stage's choice (``Trace.answer``): the value for the age told, citing the band's sentence; none
    where no age is told or the told one picks no value, so the evidence's ordinary answer stands."""
    query, passages = Query("How much would I get a week?", "I'm 23 and out of work."), _passages(JOBSEEKER)
    assert bands.answer_by_age(query, "MONEY", passages) == AnswerChoice("policy/x#0", JOBSEEKER, "£71.70", "MONEY")
    backdating = bands.answer_by_age(Query("How far ahead can I claim?", "I'm 62."), "DURATION", _passages(BACKDATING))
    assert (backdating.value, backdating.label) == ("17 weeks", "DATE")
    assert bands.answer_by_age(Query("How much would I get a week?", "I'm out of work."), "MONEY", passages) is None
    assert bands.answer_by_age(Query("How much would I get?", "I was born in 1961."), "MONEY", passages) is None
    assert bands.answer_by_age(query, "PERSON", passages) is None


def test_an_amount_by_age_is_asked_with_its_values_quoted():
    """The gate asks the age (before the answer-type rule: neither band's value is the answer, yet the evidence
    holds one for each age), and the question quotes what turns on it; told the age, it no longer asks."""
    asked = calibrated.with_probabilities(_for_amount("How much Jobseeker's Allowance would I get a week?", JOBSEEKER))
    assert asked.signals.n_age_bands == 2
    decision = decide(asked)
    assert (decision.action, decision.rule) == ("ASK", "value_by_age")
    response = respond(asked, decision)
    assert response.text.startswith("How old are you?") and "£71.70 and £90.50 by age (under 25, 25 or over)" in \
        response.text
    assert (response.kind, response.target) == ("age", "your age") and response.citations[0].sentence == JOBSEEKER
    # told the age, the gate answers with that age's value (not the answer-type rule: the evidence holds it)
    told = calibrated.with_probabilities(_for_amount("How much Jobseeker's Allowance would I get a week?", JOBSEEKER,
                                                     history=(("How old are you?", "23"),)))
    assert told.signals.age_told == 1 and decide(told).action == "ANSWER"
    answer = respond(told, decide(told))
    assert answer.answer == "£71.70" and answer.text.startswith("£71.70. According to “Jobseeker's Allowance”")
    assert answer.citations[0].sentence == JOBSEEKER


def test_three_values_by_age_are_listed_in_the_question():
    three = "The rate is £10 for people aged under 18, £20 for people aged 18 to 24 and £30 for people aged 25 or over."
    asked = calibrated.with_probabilities(_for_amount("How much would I get?", three))
    response = respond(asked, decide(asked))
    assert response.action == "ASK" and "gives £10, £20 and £30 by age" in response.text
    assert asked.signals.n_age_bands == 3


def test_real_an_amount_by_age_is_asked_then_answered_for_the_age_told(tmp_path_factory, nli_model):
    """The real pipeline over a small knowledge base written for this test: the asker's own question for an amount
    a guide gives by age is asked the age; told it in a reply, the analysis's answer is that age's amount, the one
    batch evaluation scores and the answer agent gives."""
    from core.pipeline import Pipeline, make_query
    from tests.conftest import build_small_kb
    kb = build_small_kb(tmp_path_factory.mktemp("ages") / "kb", {
        "travel_grant.md": "# Apprentice Travel Grant\n\n## How much you get\n\nThe grant is £40 a month for "
                           "apprentices aged under 19 and £60 a month for apprentices aged 19 or over. It is paid "
                           "into your bank account.\n",
        "library.md": "# Harlow Library\n\nThe library opens at 9am. Members can borrow up to 12 books at a time.\n"})
    pipeline = Pipeline(kb)
    question, scenario = "How much Apprentice Travel Grant would I get?", "I've just started an apprenticeship."
    first = pipeline.analyze(make_query(question, scenario))
    assert (decide(first).action, decide(first).rule) == ("ASK", "value_by_age")
    asked = respond(first, decide(first))
    assert asked.text.startswith("How old are you?") and "£40 a month and £60 a month" in asked.text
    told = pipeline.analyze(make_query(question, scenario, [(asked.text, "I'm 20")]))
    assert told.answer.value == "£60 a month" and "aged 19 or over" in told.answer.sentence
    assert decide(told).action == "ANSWER" and respond(told, decide(told)).answer == "£60 a month"
    younger = pipeline.analyze(make_query(question, scenario, [(asked.text, "17")]))
    assert younger.answer.value == "£40 a month"
