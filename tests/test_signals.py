"""Surface ambiguity cues (core/signals.py question_features) on real phrasing, real spaCy parse."""
from __future__ import annotations

import pytest

from core import models
from core.signals import answer_type_found, question_features


def heuristics(question: str, has_context: bool = False) -> dict[str, float]:
    return question_features(models.parse([question])[0], has_context).ambiguity


@pytest.mark.parametrize("question", [
    "It's February and I lost my job. Can I claim Jobseeker's Allowance?",  # "it" is the time
    "How much did it cost to build the Harlow Bridge?",  # "it" stands for "to build …"
    "Can students apply in their first year?",  # "their" has its antecedent
    "Under its agreement with Harrowgate, can Brightline share confidential information?",
    "Which company built the ship that Osric Vell commanded from 1931 to 1945?",  # relative "that"
])
def test_pronouns_with_a_referent_are_not_dangling(question):
    assert heuristics(question)["dangling_pronoun"] == 0.0


@pytest.mark.parametrize("question", ["What is their name?", "What did he build?", "When did this happen?"])
def test_pronouns_with_no_referent_still_are(question):
    assert heuristics(question)["dangling_pronoun"] == 1.0


def test_a_scenario_can_hold_the_referent():
    assert heuristics("What is their name?", has_context=True)["dangling_pronoun"] == 0.0


@pytest.mark.parametrize("question", [
    "Am I eligible for carers allowance?", "Can I get the winter fuel payment?",
    "What is the boiling point of ethanol?",
    "how much a week do you get on carer's allowance?",  # a helper's fresh sample-KB question: asked "which one"
])
def test_lower_case_scheme_names_are_specific(question):
    assert heuristics(question)["no_named_entity"] == 0.0
    assert max(heuristics(question).values()) == 0.0


def test_a_bare_question_is_still_underspecified():
    h = heuristics("Can I apply?")
    assert h["no_named_entity"] == 1.0 and h["short_query"] == 1.0


def test_a_possessive_pronoun_does_not_make_a_noun_specific():
    """"carer's allowance" names a scheme; "my allowance" does not."""
    assert heuristics("How much is my allowance?")["no_named_entity"] > 0


def test_a_noun_with_a_specific_verb_is_a_specific_question():
    assert max(heuristics("Can my landlord evict me?").values()) == 0.0


@pytest.mark.parametrize("question, vague", [
    ("How many weeks ahead of my move can I put in a housing benefit claim?", 0.0),  # train KB: a count asked
    ("How much of the sunlight gets reflected back into space?", 0.0),
    ("Can I get some help with my rent?", 0.5),  # "some help": vague
])
def test_how_many_asks_for_a_count_it_is_not_a_vague_quantity(question, vague):
    assert heuristics(question)["vague_quantifier"] == vague


@pytest.mark.parametrize("question, vague", [
    # SQuAD and train KB questions the ambiguity rule asked, each wrongly: the vague word says how many of a thing
    # the question names, or its own phrase says what it is
    ("What mechanic allows two buttons to serve many functions?", 0.0),
    ("What blocked many of the area's rivers?", 0.0),
    ("To prevent high water pressures at lower elevations what were built on many of the city's buildings?", 0.0),
    ("where do i apply if housing benefit is the only thing i'm claiming?", 0.0),
    ("Can some of my benefit stop?", 0.0),
    # a vague word that stands for what is asked about still is one
    ("Tell me about stuff", 0.5),
    ("Can I claim for several things?", 0.5),
    ("Are certain people exempt?", 0.5),
])
def test_a_quantity_of_a_named_thing_or_a_restricted_vague_word_is_not_vague(question, vague):
    assert heuristics(question)["vague_quantifier"] == vague


@pytest.mark.parametrize("question, compares", [
    ("Which one is bigger?", 1.0),
    ("Is it cheaper?", 1.0),
    ("How do they compare?", 1.0),
    # an amount is not a comparison, nor one that says what it is compared with (SQuAD train phrasing)
    ("Who has signed on for three more films in the series?", 0.0),
    ("Can I get more money?", 0.0),
    ("The film was compared favorably with what movie?", 0.0),
    ("Which is older, the bridge or the lighthouse?", 0.0),
])
def test_an_incomplete_comparison_lacks_its_other_side(question, compares):
    assert heuristics(question)["incomplete_comparison"] == compares


@pytest.mark.parametrize("answer_type, value_label, found", [
    ("DATE", "DATE", 1.0),  # the evidence reader found a date in an answer-bearing sentence
    ("DATE", "", 0.0),  # it found none
    ("PLACE", "PERSON", 1.0),  # a town the small model calls a person, read as a place after "in"
    ("", "", 1.0),  # a question for no kind of value: nothing to miss
    ("REASON", "", 1.0),  # a kind the reader does not look for
])
def test_answer_type_found_is_whether_the_reader_found_a_value(answer_type, value_label, found):
    assert answer_type_found(answer_type, value_label) == found
