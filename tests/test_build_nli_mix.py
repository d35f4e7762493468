"""The NLI mixture's hard-negative sources: a claim against the sentence that states it and the
closest ones that do not, as the pipeline scores it; what the calibrators are fitted on is left out."""
from __future__ import annotations

import csv
import json

import pytest

from tests.scripts import load_script

HYPOTHESIS = "Receiving Party shall not reverse engineer any objects which embody Confidential Information."
EVIDENCE = "The Recipient shall not reverse engineer, decompile or disassemble any samples or prototypes."
NEAR_MISS = "The Recipient shall not copy any Confidential Information or objects which embody it."
FAR = "This Agreement shall be governed by the laws of England."


@pytest.fixture(scope="module")
def mix():
    return load_script("build_nli_mix")


def write_contracts(path, blocks):
    """ContractNLI train rows: 17 per contract; ``blocks`` holds each contract's first row (the rest NotMentioned)."""
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["concatenated_spans", "hypothesis", "label"])
        writer.writeheader()
        for first in blocks:
            writer.writerow(first)
            for k in range(16):
                writer.writerow({"concatenated_spans": f"{NEAR_MISS}\n{FAR}", "hypothesis": f"Other hypothesis {k}.",
                                 "label": "2"})


def test_contract_spans_pair_each_evidence_span_alone_and_the_closest_other_spans_as_neutral(mix, tmp_path):
    path = tmp_path / "contracts.csv"
    write_contracts(path, [{"concatenated_spans": EVIDENCE, "hypothesis": HYPOTHESIS, "label": "0"},
                           {"concatenated_spans": EVIDENCE, "hypothesis": HYPOTHESIS, "label": "1"}])
    rows = [r for part in mix.contract_span_rows(path, excluded={1}).values() for r in part]
    mine = [r for r in rows if r["hypothesis"] == HYPOTHESIS]
    assert {(r["premise"], r["label"]) for r in mine} == {(EVIDENCE, "entailment"), (NEAR_MISS, "neutral"),
                                                           (FAR, "neutral")}
    assert all(r["source"] == "contract-spans" for r in rows)
    # contract 1 (the one with the contradiction) is excluded, so no contradiction pair is made
    assert "contradiction" not in {r["label"] for r in rows}
    # a NotMentioned hypothesis gets neutral pairs only, at most HARD_NEGATIVES of them
    other = [r for r in rows if r["hypothesis"] == "Other hypothesis 0."]
    assert other and {r["label"] for r in other} == {"neutral"} and len(other) <= mix.HARD_NEGATIVES


def test_closest_ranks_by_shared_content_words(mix):
    assert mix._closest([FAR, NEAR_MISS, EVIDENCE], HYPOTHESIS, 1) == [NEAR_MISS]


def test_squad_sentences_pair_the_claim_with_its_answer_sentence_and_the_closest_others(mix, tmp_path):
    context = ("Normandy is a region in France. The Normans gave their name to Normandy in the 10th century. "
               "Rollo was the first ruler of the Normans. The weather there is mild.")
    qas = [{"id": "q1", "question": "In what country is Normandy located?", "is_impossible": False,
            "answers": [{"text": "France", "answer_start": context.index("France")}]},
           {"id": "q2", "question": "Who was the first ruler of the Normans?", "is_impossible": False,
            "answers": [{"text": "Rollo", "answer_start": context.index("Rollo")}]},
           {"id": "q3", "question": "Who was the last ruler of the Normans?", "is_impossible": True, "answers": []}]
    path = tmp_path / "squad.json"
    path.write_text(json.dumps({"data": [{"title": "Normans", "paragraphs": [{"context": context, "qas": qas}]}]}))
    rows = [r for part in mix.squad_sentence_rows(path, excluded_ids={"q2"}, held_out_titles=set()).values()
            for r in part]
    # only q1, as the pipeline's claim: q2 is excluded, q3 has no answer
    assert {r["hypothesis"] for r in rows} == {"There exists a country in which Normandy is located."}
    by_label = {label: [r["premise"] for r in rows if r["label"] == label] for label in ("entailment", "neutral")}
    assert by_label["entailment"] == ["Normandy is a region in France."]
    assert len(by_label["neutral"]) == mix.HARD_NEGATIVES - 1
    # the two sentences that share a word with the question, not the one about the weather
    assert sorted(by_label["neutral"]) == ["Rollo was the first ruler of the Normans.",
                                           "The Normans gave their name to Normandy in the 10th century."]
    assert not mix.squad_sentence_rows(path, excluded_ids=set(), held_out_titles={"Normans"})["train"]


def test_squad_swaps_ask_the_answer_sentence_about_another_entity_of_the_article(mix, tmp_path):
    """The real spaCy model names the entities; the swapped one is of the same kind, from the same
    article, absent from the answer sentence and sharing no word with the original."""
    context = ("Richard succeeded Rollo as ruler of Normandy in 927. William conquered England in 1066. "
               "William Longsword was a Norman ruler too.")
    qas = [{"id": "q1", "question": "Whom did Richard succeed as ruler of Normandy?", "is_impossible": False,
            "answers": [{"text": "Rollo", "answer_start": context.index("Rollo")}]},
           {"id": "q2", "question": "When did William conquer England?", "is_impossible": False,
            "answers": [{"text": "1066", "answer_start": context.index("1066")}]}]
    path = tmp_path / "squad.json"
    path.write_text(json.dumps({"data": [{"title": "Normans", "paragraphs": [{"context": context, "qas": qas}]}]}))
    rows = [r for part in mix.squad_swap_rows(path, excluded_ids={"q2"}, held_out_titles=set()).values() for r in part]
    assert len(rows) == 1
    (swap,) = rows
    assert swap["premise"] == "Richard succeeded Rollo as ruler of Normandy in 927."
    assert swap["label"] == "neutral" and swap["source"] == "squad-swaps"
    # Richard (a person the sentence names) asked as William or William Longsword, persons it does not name
    assert "Richard" not in swap["hypothesis"] and "William" in swap["hypothesis"]
    assert not mix.squad_swap_rows(path, excluded_ids=set(), held_out_titles={"Normans"})["train"]
