"""Conditions the evidence imposes, and how the user's facts settle them (seed 002 S(q), I(q))."""
import pytest

from core import nli, variables
from core.kb import Document, chunk_document
from core.types import Condition, NliScores, Query
from core.variables import VariableStage, combine, extract_conditions

POLICY = """# Winter Fuel Payment

You can get the Winter Fuel Payment if you meet all of the following conditions:

* are aged 66 or over
* have lived in Calvera for at least 3 years
* have a household income of less than £20,000 a year

You cannot claim if you live in a care home. You cannot apply unless you are a Calvera citizen.
The payment is £200 a year.
"""

PERMIT = """# Parking permit

You may qualify if any of the following apply:

* you receive the higher rate mobility allowance
* you are registered blind
"""


def passage(text: str):
    return chunk_document(Document("doc", "Doc", text, "doc.md"), 4000, 0)[0]


def test_bullets_and_clauses_become_conditions():
    conds = extract_conditions(passage(POLICY))
    kinds = [(c.kind, c.group) for c in conds]
    assert kinds == [("bullet", "all")] * 3 + [("disqualifier", "all"), ("unless", "all")]
    assert conds[0].text == "are aged 66 or over"
    assert conds[3].text == "you live in a care home"
    assert conds[4].text == "you are a Calvera citizen"
    assert conds[0].user_voice.startswith("I am aged 66")
    assert all("£200" not in c.text for c in conds)  # a fact, not a condition


def test_any_of_lead_in_makes_an_any_group():
    conds = extract_conditions(passage(PERMIT))
    assert [c.group for c in conds] == ["any", "any"]


def cond(status, group="all"):
    return Condition(text="x", user_voice="x", kind="bullet", passage_id="p", status=status, group=group)


@pytest.mark.parametrize("statuses, group, outcome", [
    (["established", "established"], "all", "satisfied"),
    (["established", "missing"], "all", "undetermined"),
    (["contradicted", "missing"], "all", "failed"),
    (["missing", "established"], "any", "satisfied"),
    (["contradicted", "contradicted"], "any", "failed"),
    (["contradicted", "missing"], "any", "undetermined"),
])
def test_combine(statuses, group, outcome):
    assert combine([cond(s, group) for s in statuses]) == outcome


def fake_nli(entail_if: dict[str, float]):
    """NLI that entails a positive hypothesis when it and the premise contain a key (negations never)."""
    def predict(pairs, batch_size=32):
        out = []
        for premise, hypothesis in pairs:
            negated = " not " in f" {hypothesis} " or "n't" in hypothesis
            e = 0.05 if negated else max(
                (p for k, p in entail_if.items() if k in hypothesis and k in premise.lower()), default=0.05)
            out.append(NliScores(entailment=e, neutral=1 - e - 0.02, contradiction=0.02))
        return out
    return predict


def test_numeric_check_settles_quantities_and_nli_the_rest(monkeypatch):
    monkeypatch.setattr(nli, "predict", fake_nli({"citizen": 0.9}))
    query = Query("Can I get the Winter Fuel Payment?",
                  scenario="I am 70 years old. I have lived in Calvera for 10 years. I am a citizen.")
    state = VariableStage().run(query, (passage(POLICY),))
    by_text = {c.text: c for c in state.conditions}
    assert by_text["are aged 66 or over"].status == "established"
    assert by_text["are aged 66 or over"].method.startswith("numeric")
    assert by_text["have lived in Calvera for at least 3 years"].status == "established"
    assert by_text["you are a Calvera citizen"].status == "established"
    assert state.outcome == "undetermined"
    assert "have a household income of less than £20,000 a year" in state.missing
    assert 0 < state.incompleteness < 1


def test_a_contradicted_quantity_fails_the_rule(monkeypatch):
    monkeypatch.setattr(nli, "predict", fake_nli({}))
    state = VariableStage().run(Query("Can I get it?", scenario="I am 50 years old."), (passage(POLICY),))
    assert state.outcome == "failed" and state.missing == ()


def test_a_disqualifier_that_holds_fails_the_rule(monkeypatch):
    monkeypatch.setattr(nli, "predict", fake_nli({"care home": 0.95}))
    state = VariableStage().run(Query("Can I get it?", scenario="I live in a care home."), (passage(POLICY),))
    care = next(c for c in state.conditions if c.kind == "disqualifier")
    assert care.status == "contradicted" and state.outcome == "failed"


def test_factual_questions_impose_no_conditions(monkeypatch):
    monkeypatch.setattr(nli, "predict", fake_nli({}))
    state = VariableStage().run(Query("How much is the Winter Fuel Payment?"), (passage(POLICY),))
    assert state.conditions == () and state.outcome == "none" and state.incompleteness == 0.0


def test_answered_follow_up_questions_settle_conditions(monkeypatch):
    """Real embedder: a follow-up that asks about the condition decides it by its yes/no answer."""
    monkeypatch.setattr(nli, "predict", fake_nli({}))
    query = Query("Can I get a parking permit?",
                  history=(("Are you registered blind?", "Yes"),))
    state = VariableStage().run(query, (passage(PERMIT),))
    blind = next(c for c in state.conditions if "blind" in c.text)
    assert blind.status == "established" and blind.method.startswith("history")
    assert state.outcome == "satisfied"


def test_real_nli_establishes_a_condition_in_the_users_voice(nli_model):
    query = Query("Can I get the Winter Fuel Payment?", scenario="I live in a care home in Harlow.")
    state = VariableStage().run(query, (passage(POLICY),))
    care = next(c for c in state.conditions if c.kind == "disqualifier")
    assert care.status == "contradicted", care  # the disqualifier holds → the rule fails
    assert state.outcome == "failed"
