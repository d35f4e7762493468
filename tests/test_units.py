"""A measured answer said in the unit the question asks for, beside the value as the text states it."""
from __future__ import annotations

import pytest

from core.units import asked_unit, in_asked_unit


@pytest.mark.parametrize("question, value, said", [
    ("How long is the main span in feet?", "120 metres", "120 metres (about 394 feet)"),
    ("How many miles long is the river?", "48 km", "48 km (about 29.8 miles)"),
    ("What is the park's area in acres?", "12 hectares", "12 hectares (about 29.7 acres)"),
    ("What is the area in square miles?", "48 square kilometres", "48 square kilometres (about 18.5 square miles)"),
    ("How heavy is the bell in pounds?", "1,200 kg", "1,200 kg (about 2,650 pounds)"),
    ("How deep is the lake in feet?", "30 m", "30 m (about 98.4 feet)"),
    ("How far is it in miles", "0.2 km", "0.2 km (about 0.124 miles)"),
])
def test_a_value_in_another_unit_of_the_asked_dimension_is_converted(question, value, said):
    assert in_asked_unit(question, value) == said


@pytest.mark.parametrize("question, value", [
    ("How long is the main span?", "120 metres"),               # no unit asked
    ("How long is the main span in metres?", "120 metres"),     # already in it
    ("How much is the ticket in pounds?", "€50"),               # money, not a mass
    ("How heavy is the bell in pounds?", "120 metres"),          # another dimension
    ("How long is the bridge in feet?", "14 May 1958"),          # no quantity
    ("What is the length in m?", "400 feet"),                    # "in m" says too little
    ("How long is the tunnel in feet?", "£5m"),                  # five million pounds
    ("How heavy was the winner in pounds?", "1st"),              # an ordinal
])
def test_anything_else_is_left_as_the_text_states_it(question, value):
    assert in_asked_unit(question, value) == value


def test_the_unit_asked_is_read_by_its_longest_spelling():
    assert asked_unit("What is its area in square feet?")[2] == "square feet"
    assert asked_unit("How many feet tall is it?")[2] == "feet"
    assert asked_unit("Who lives in Tessby?") is None


def test_real_the_answer_to_a_question_in_feet_gives_the_metres_the_text_states_and_the_feet(sample_pipeline):
    from core.agents import respond
    from core.gate import decide
    from core.pipeline import make_query
    trace = sample_pipeline.analyze(make_query("How long is the main span of the Harlow Bridge in feet?"))
    decision = decide(trace)
    assert decision.action == "ANSWER", decision.rule
    response = respond(trace, decision)
    assert response.answer == "120 metres (about 394 feet)"
    assert response.citations[0].sentence == "Its main span of 120 metres was the longest concrete arch in Calvera when it was built."
