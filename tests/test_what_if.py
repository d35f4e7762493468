"""What would change the verdict: the nearest gate threshold, checked against decide() itself."""
from __future__ import annotations

from core import settings
from core.gate import decide
from core.what_if import describe, verdict_changes
from tests.factories import signals, trace


def test_an_answer_names_the_threshold_nearest_to_abstaining_and_deciding_there_abstains():
    t = trace(signals(sufficiency=0.43))  # answerable, sufficiency well above its 0.19 threshold
    on = {"rule_low_sufficiency": True}  # off by default
    base = decide(t, on)
    assert base.action == "ANSWER"
    changes = verdict_changes(t, on)
    assert changes, "some threshold can always turn an answer into a refusal here"
    first = changes[0]
    assert first.action != "ANSWER" and first.distance == min(c.distance for c in changes)
    # The claim is checked: at the suggested threshold the gate decides as said, one step short it does not.
    moved = decide(t, {**on, first.setting: first.threshold})
    assert (moved.action, moved.rule) == (first.action, first.rule)
    step = settings.BY_NAME[first.setting].step
    short = first.threshold - step if first.direction == "raise" else first.threshold + step
    if abs(short - first.current) > 1e-9 and (short - first.current) * (first.threshold - first.current) > 0:
        assert decide(t, {**on, first.setting: round(short, 6)}).action == "ANSWER"
    assert first.setting in describe(first) or first.label in describe(first)


def test_a_low_confidence_refusal_names_conf_alone_and_the_value_to_cross():
    t = trace(signals(confidence=0.12, coverage=0.1, sufficiency=0.05))
    on = {"rule_low_confidence": True, "rule_low_retrieval": True}  # both off by default
    assert decide(t, on).rule == "low_confidence"
    # Lowering "Conf alone <" below 0.12 lets the next rule (low_retrieval) decide: still ABSTAIN, and
    # every other threshold leaves some refusal rule holding — no single move changes the verdict.
    assert verdict_changes(t, on, limit=10) == []
    assert decide(t, {**on, "conf_abstain": 0.1}).action == "ABSTAIN"


def test_the_learned_gate_gets_no_threshold_advice():
    assert verdict_changes(trace(), {"gate_model": "learned"}) == []


def test_a_whole_number_threshold_is_moved_by_whole_steps():
    t = trace(signals(sufficiency=0.43, n_referents=2))  # two documents the question cannot tell apart
    assert decide(t).rule == "several_referents"
    changes = verdict_changes(t, limit=20)
    raised = next(c for c in changes if c.setting == "referents_min")
    assert raised.threshold == 3 and raised.action == "ANSWER"
    assert decide(t, {"referents_min": raised.threshold}).action == "ANSWER"


def test_a_signal_that_rounds_to_the_new_threshold_is_shown_to_the_place_that_tells_them_apart():
    """A browser walkthrough: "Raise “P(topic covered) <” from 0.5 to 1 (past p_topic = 1.000)" read as if the bar
    could not pass the signal; it was 0.9996."""
    from core.what_if import VerdictChange
    change = VerdictChange("topic_min", "P(topic covered) <", 0.5, "p_topic", 0.99963, 1.0, "ABSTAIN", "topic_absent")
    assert "(past p_topic = 0.9996)" in describe(change)
    assert "(past p_topic = 0.420)" in describe(VerdictChange("topic_min", "x", 0.5, "p_topic", 0.42, 0.4, "ANSWER", "r"))
    # a signal at the new threshold itself is shown to three places, not six ("past ambiguity = 1.000000")
    assert "(past ambiguity = 1.000)" in describe(VerdictChange("amb_max", "x", 0.24, "ambiguity", 1.0, 1.0, "ANSWER", "r"))
