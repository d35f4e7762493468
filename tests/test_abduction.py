"""Abductive premises (core/abduction.py): candidates, validation and the outcome.

Logic tests use a small fake NLI; the main tests run the real NLI model on hand-written
evidence and a small real knowledge base (Retrieve(p) needs the embedder and the index).
"""
from __future__ import annotations

import json

import pytest

from core import models
from core.abduction import Abduction, AbductionStage, _premise_lines
from core.generation import OpenAICompatibleBackend
from core.retrieval import Retriever
from core.types import Condition, NliScores, from_dict, to_dict
from tests.conftest import build_small_kb
from tests.fake_openai_server import FakeOpenAIServer

pytestmark = pytest.mark.usefixtures("fresh_generation_cache")  # every generation is a real call

DOCS = {
    "harlow_bridge.md": "# Harlow Bridge\n\nThe Harlow Bridge is a road bridge over the River Ost in Harlow. "
                        "The Harlow Bridge was designed by the engineer Edith Marlowe. The bridge was opened in 1958.\n",
    "edith_marlowe.md": "# Edith Marlowe\n\nEdith Marlowe was a civil engineer from Calvera. "
                        "Edith Marlowe was born in Tessby in 1921. She studied engineering in Varnholm.\n",
    "winter_fuel.md": "# Winter Fuel Payment\n\nYou can get the Winter Fuel Payment if you are aged 66 or over "
                      "and have lived in Calvera for at least 3 years. The payment is £200 a year.\n",
    "library.md": "# Library\n\nJoining the library is free for everyone who lives in the borough. Members can "
                  "borrow up to 12 books at a time.\n",
}
QUESTION = "In which town was the designer of the Harlow Bridge born?"
CLAIM = "There exists a town in which the designer of the Harlow Bridge was born."


@pytest.fixture(scope="module")
def kb(tmp_path_factory):
    return build_small_kb(tmp_path_factory.mktemp("abduction") / "kb", DOCS)


def evidence_for(kb, doc_id: str, query: str):
    found = [p for p in Retriever(top_k=4, fusion_alpha=0.6).run(kb, query) if p.passage.doc_id == doc_id]
    assert found, f"{doc_id} not retrieved for {query!r}"
    return found[:1]


def fake_nli(table: dict[tuple[str, str], str]):
    """(premise substring, hypothesis substring) → label; everything else is neutral."""
    def predict(pairs):
        out = []
        for premise, hypothesis in pairs:
            label = next((lab for (p, h), lab in table.items() if p in premise and h in hypothesis), "neutral")
            probs = {"entailment": 0.05, "neutral": 0.9, "contradiction": 0.05}
            if label != "neutral":
                probs = {k: (0.9 if k == label else 0.05) for k in probs}
            out.append(NliScores(**probs))
        return out
    return predict


# --- logic (fake NLI, real retrieval) -------------------------------------------------------

def test_sufficient_evidence_triggers_nothing(kb):
    evidence = evidence_for(kb, "harlow_bridge", QUESTION)
    before = dict(models.CALLS)
    out = AbductionStage(tau=0.5, predict=fake_nli({})).run(kb, QUESTION, CLAIM, evidence, 0.8)
    assert out == Abduction(False, 0.8, 0.5)
    assert models.CALLS == before


def test_scores_statuses_and_outcome_with_a_fake_nli(kb):
    predict = fake_nli({("Edith Marlowe was born in Tessby", "born in Tessby"): "entailment",
                        ("designed by the engineer Edith Marlowe", "designed by Anselm Greer"): "contradiction",
                        ("designed by the engineer Edith Marlowe", "Harlow Bridge was designed by Edith"): "entailment"})
    stage = AbductionStage(tau=0.5, alpha=0.3, beta=0.7, predict=predict)
    kg = [("Harlow Bridge", "was_designed_by", "Edith Marlowe"), ("Edith Marlowe", "was born in", "Tessby"),
          ("The Harlow Bridge", "was designed by", "Anselm Greer")]
    out = stage.run(kb, QUESTION, CLAIM, evidence_for(kb, "harlow_bridge", QUESTION), 0.1, kg=kg)
    by_text = {p.text: p for p in out.candidates}
    assert set(by_text) == {"Harlow Bridge was designed by Edith Marlowe.", "Edith Marlowe was born in Tessby.",
                            "The Harlow Bridge was designed by Anselm Greer.", CLAIM}
    born = by_text["Edith Marlowe was born in Tessby."]
    assert born.status == "supported" and born.support_passage.startswith("edith_marlowe")
    assert (born.support_doc, born.support_title) == ("edith_marlowe", "Edith Marlowe")
    assert born.score == pytest.approx(0.3 * born.entail + 0.7 * born.retrieve)
    greer = by_text["The Harlow Bridge was designed by Anselm Greer."]
    assert greer.status == "rejected" and "Edith Marlowe" in greer.evidence_sentence
    assert out.candidates[-1] is greer  # rejected candidates are kept, last
    assert by_text["Harlow Bridge was designed by Edith Marlowe."].status == "in_evidence"  # bridges nothing new
    assert out.best == born and out.outcome == "answer" and out.supported
    assert from_dict(Abduction, json.loads(json.dumps(to_dict(out)))) == out  # JSON round trip for the trace


def test_missing_conditions_become_user_premises_that_feed_ask(kb):
    condition = Condition(text="have lived in Calvera for at least 3 years",
                          user_voice="I have lived in Calvera for at least 3 years.", kind="bullet",
                          passage_id="winter_fuel#0")
    question = "Can I get the Winter Fuel Payment?"
    out = AbductionStage(predict=fake_nli({})).run(
        kb, question, "I can get the Winter Fuel Payment.", evidence_for(kb, "winter_fuel", question), 0.2,
        missing=[condition, "are aged 66 or over"])
    user = [p for p in out.candidates if p.origin == "missing_variable"]
    assert [p.text for p in user] == ["I have lived in Calvera for at least 3 years.", "I am aged 66 or over."]
    assert all(p.status == "about_user" and p.retrieve == 0.0 for p in user)
    assert out.outcome == "ask" and out.ask_about == "have lived in Calvera for at least 3 years"


def test_nothing_to_bridge_means_abstain(kb):
    out = AbductionStage(predict=fake_nli({})).run(kb, "Who painted the library ceiling?",
                                                   "There exists a person who painted the library ceiling.",
                                                   evidence_for(kb, "library", "library members borrow books"), 0.1)
    assert out.outcome == "abstain" and out.best is not None and out.best.status == "unsupported"
    empty = AbductionStage(predict=fake_nli({})).run(kb, QUESTION, CLAIM, [], 0.0)
    assert empty.outcome == "abstain" and empty.warnings


def test_bad_settings_and_kg_triples_are_refused(kb):
    with pytest.raises(ValueError, match="alpha"):
        AbductionStage(alpha=1.5)
    with pytest.raises(ValueError, match="triple"):
        AbductionStage(predict=fake_nli({})).run(kb, QUESTION, CLAIM, evidence_for(kb, "harlow_bridge", QUESTION),
                                                 0.1, kg=[("Harlow Bridge", "")])


def test_generated_lines_lose_numbering_fillers_and_a_cut_off_last_line():
    text = ("1. Edith Marlowe was born in Tessby.\nNone of the above 3\nIs she alive?\n"
            "- The Harlow Bridge opened in 1958.\nThe ship that Osric Vell commanded from 1931 to")
    assert _premise_lines(text) == ["Edith Marlowe was born in Tessby.", "The Harlow Bridge opened in 1958."]
    assert _premise_lines("None\nNone") == []


# --- the real NLI model -------------------------------------------------------------------

GENERATED = ("1. Edith Marlowe was born in Tessby.\n2. Edith Marlowe was born in Paris.\n"
             "3. The Harlow Bridge was never built.\nWhat else?")


def test_real_nli_ranks_supported_over_unsupported_and_rejects_the_contradicted(kb, nli_model):
    with FakeOpenAIServer(reply=GENERATED) as server:
        stage = AbductionStage(tau=0.5, m=3, generator=OpenAICompatibleBackend(server.url, "m", timeout=5))
        out = stage.run(kb, QUESTION, CLAIM, evidence_for(kb, "harlow_bridge", QUESTION), 0.1)
    by_text = {p.text: p for p in out.candidates}
    generated = [p for p in out.candidates if p.origin == "generator"]
    assert len(generated) == 3 and all(p.backend.startswith("openai:") for p in generated)
    tessby, paris = by_text["Edith Marlowe was born in Tessby."], by_text["Edith Marlowe was born in Paris."]
    never = by_text["The Harlow Bridge was never built."]
    assert tessby.status == "supported" and tessby.support_passage.startswith("edith_marlowe")
    assert tessby.score > paris.score and paris.status != "supported"
    assert never.status == "rejected" and never.contradiction >= 0.5
    assert out.best == tessby and out.outcome == "answer"


def test_real_nli_sends_an_unmet_condition_to_ask(kb, nli_model):
    question = "Can I get the Winter Fuel Payment?"
    condition = Condition(text="have lived in Calvera for at least 3 years",
                          user_voice="I have lived in Calvera for at least 3 years.", kind="bullet",
                          passage_id="winter_fuel#0")
    out = AbductionStage().run(kb, question, "I can get the Winter Fuel Payment.",
                               evidence_for(kb, "winter_fuel", question), 0.2, missing=[condition],
                               known=["I am 70."])
    premise = next(p for p in out.candidates if p.origin == "missing_variable")
    assert premise.status == "about_user" and premise.variable == condition.text
    assert out.outcome == "ask" and out.ask_about == condition.text
