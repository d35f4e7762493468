"""Importers: each published format → LabelledItem, label mapping, settings, malformed input."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from core.evaluation.importers import DatasetError, load_dataset

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
SHARC_REAL = SHARED / "sharc_dev_half_a.json"
CNLI_REAL = SHARED / "contractnli_dev.json"

SNIPPET = "## Winter Fuel Payment\n\nYou can get it if you:\n\n* were born before 1955\n* live in the UK"
SHARC = [
    {"utterance_id": "u1", "tree_id": "t1", "source_url": "https://www.gov.uk/winter-fuel-payment",
     "snippet": SNIPPET, "question": "Can I get Winter Fuel Payment?", "scenario": "I was born in 1950.",
     "history": [{"follow_up_question": "Do you live in the UK?", "follow_up_answer": "Yes"}],
     "answer": "Yes", "evidence": []},
    {"utterance_id": "u2", "tree_id": "t1", "source_url": "https://www.gov.uk/winter-fuel-payment",
     "snippet": SNIPPET, "question": "Can I get Winter Fuel Payment?", "scenario": "", "history": [],
     "answer": "Were you born before 1955?", "evidence": []},
    {"utterance_id": "u3", "tree_id": "t2", "source_url": "https://www.gov.uk/vat-rates/reduced-rate",
     "snippet": "Some goods have a reduced VAT rate.", "question": "How do I renew my passport?",
     "scenario": "", "history": [], "answer": "Irrelevant", "evidence": []},
    {"utterance_id": "u4", "tree_id": "t2", "source_url": "https://www.gov.uk/vat-rates/reduced-rate",
     "snippet": "Some goods have a reduced VAT rate.", "question": "Is my item reduced rate?",
     "scenario": "", "history": [], "answer": "No", "evidence": []},
]

NDA_TEXT = "Confidentiality Agreement\nThe Recipient shall not disclose Confidential Information. " \
           "This Agreement is governed by the laws of Delaware."
CONTRACTNLI = {
    "documents": [{
        "id": 7, "file_name": "nda7.pdf", "text": NDA_TEXT, "spans": [[0, 25], [26, 84], [85, len(NDA_TEXT)]],
        "annotation_sets": [{"annotations": {
            "nda-1": {"choice": "Entailment", "spans": [1]},
            "nda-2": {"choice": "Contradiction", "spans": [2]},
            "nda-3": {"choice": "NotMentioned", "spans": []}}}],
        "document_type": "search-pdf", "url": ""}],
    "labels": {"nda-1": {"short_description": "x", "hypothesis": "Recipient shall not disclose information."},
               "nda-2": {"short_description": "y", "hypothesis": "The agreement is governed by French law."},
               "nda-3": {"short_description": "z", "hypothesis": "Recipient may keep copies."}},
}

SQUAD = {"version": "v2.0", "data": [{"title": "Tower_Bridge", "paragraphs": [{
    "context": "Tower Bridge is in London. It was completed in 1894.",
    "qas": [{"id": "q1", "question": "When was Tower Bridge completed?", "is_impossible": False,
             "answers": [{"text": "1894", "answer_start": 47}, {"text": "in 1894", "answer_start": 44}]},
            {"id": "q2", "question": "Who painted Tower Bridge?", "is_impossible": True, "answers": [],
             "plausible_answers": [{"text": "x", "answer_start": 0}]}]}]}]}

HOTPOT = [{"_id": "h1", "question": "Which river runs under Tower Bridge?", "answer": "Thames",
           "supporting_facts": [["Tower Bridge", 1], ["Thames", 0]], "type": "bridge", "level": "easy",
           "context": [["Tower Bridge", ["Tower Bridge is in London.", " It crosses the river Thames."]],
                       ["Thames", ["The Thames is a river in England."]],
                       ["Paris", ["Paris is in France."]]]}]

OWN = [{"id": "p1", "domain": "policy", "question": "Can I get it?", "scenario": "I am 70.",
        "history": [{"question": "Do you live in the UK?", "answer": "Yes"}], "action": "ANSWER",
        "doc_id": "policy/x", "answer": "Yes", "evidence": "You must be over 66.", "missing": "", "reason": ""},
       {"id": "p2", "domain": "policy", "question": "What about it?", "scenario": "", "history": [],
        "action": "ASK", "doc_id": "", "answer": None, "evidence": "", "missing": "which benefit", "reason": ""}]


def write(tmp_path: Path, name: str, data, jsonl: bool = False) -> Path:
    path = tmp_path / name
    text = "".join(json.dumps(x) + "\n" for x in data) if jsonl else json.dumps(data, indent=1)
    path.write_text(text)
    return path


def test_sharc_labels_history_documents(tmp_path):
    ds = load_dataset("sharc", write(tmp_path, "s.json", SHARC))
    assert [i.action for i in ds.items] == ["ANSWER", "ASK", "ABSTAIN", "ANSWER"]
    a, ask, _, _ = ds.items
    assert a.history == (("Do you live in the UK?", "Yes"),) and a.scenario == "I was born in 1950."
    assert a.answers == ("Yes",) and ask.answers == () and ask.extra["missing"] == "Were you born before 1955?"
    assert a.documents == ask.documents and a.documents[0][1] == "Winter Fuel Payment"  # heading as title
    assert ds.items[2].documents[0][1] == "Some goods have a reduced VAT rate."  # no heading: its first line
    assert a.has_context and not ask.has_context
    assert len(ds.all_documents) == 2  # equal snippets are one document
    assert ds.documents_for(a) == a.documents
    pooled = load_dataset("sharc", write(tmp_path, "s.json", SHARC), setting="pooled")
    assert pooled.documents_for(pooled.items[0]) == pooled.all_documents


def test_contractnli_statements_evidence_and_mapping(tmp_path):
    ds = load_dataset("contractnli", write(tmp_path, "c.json", CONTRACTNLI))
    by_id = {i.id: i for i in ds.items}
    assert set(by_id) == {"7/nda-1", "7/nda-2", "7/nda-3"}
    assert [by_id[k].action for k in ("7/nda-1", "7/nda-2", "7/nda-3")] == ["ANSWER", "ANSWER", "ABSTAIN"]
    assert by_id["7/nda-1"].answers == ("yes",) and by_id["7/nda-2"].answers == ("no",)
    assert by_id["7/nda-1"].evidence == ("The Recipient shall not disclose Confidential Information.",)
    assert by_id["7/nda-2"].evidence == ("This Agreement is governed by the laws of Delaware.",)
    assert all(i.is_statement and i.question == CONTRACTNLI["labels"][i.extra["hypothesis_id"]]["hypothesis"]
               for i in ds.items)
    assert ds.items[0].documents[0][1] == "Confidentiality Agreement"


def test_squad2_answers_impossible_and_answer_sentence_as_evidence(tmp_path):
    ds = load_dataset("squad2", write(tmp_path, "q.json", SQUAD))
    q1, q2 = ds.items
    assert (q1.action, q2.action) == ("ANSWER", "ABSTAIN")
    assert q1.answers == ("1894", "in 1894") and q2.answers == ()
    assert q1.evidence == ("It was completed in 1894.",)
    assert q1.documents[0][1] == "Tower Bridge"


@pytest.mark.parametrize("jsonl", [False, True])
def test_hotpotqa_json_and_jsonl(tmp_path, jsonl):
    ds = load_dataset("hotpotqa", write(tmp_path, "h.jsonl" if jsonl else "h.json", HOTPOT, jsonl))
    (item,) = ds.items
    assert item.action == "ANSWER" and item.answers == ("Thames",)
    assert item.evidence == ("It crosses the river Thames.", "The Thames is a river in England.")
    assert [d[1] for d in item.documents] == ["Tower Bridge", "Thames", "Paris"]
    assert item.documents[0][2] == "Tower Bridge is in London. It crosses the river Thames."


def test_own_jsonl_uses_the_kb_folder(tmp_path):
    ds = load_dataset("jsonl", write(tmp_path, "o.jsonl", OWN, jsonl=True), kb_folder=tmp_path)
    assert ds.setting == "pooled" and ds.kb_folder == str(tmp_path)
    p1, p2 = ds.items
    assert p1.history == (("Do you live in the UK?", "Yes"),) and p1.evidence == ("You must be over 66.",)
    assert p1.answers == ("Yes",) and p2.answers == () and p2.extra["missing"] == "which benefit"
    with pytest.raises(DatasetError, match="--setting pooled"):
        load_dataset("jsonl", tmp_path / "o.jsonl", setting="reading", kb_folder=tmp_path)


def test_limit_first_n_and_seeded_sample(tmp_path):
    path = write(tmp_path, "s.json", SHARC)
    assert [i.id for i in load_dataset("sharc", path, limit=2).items] == ["u1", "u2"]
    a = [i.id for i in load_dataset("sharc", path, limit=2, seed=3).items]
    assert a == [i.id for i in load_dataset("sharc", path, limit=2, seed=3).items]
    samples = {tuple(i.id for i in load_dataset("sharc", path, limit=2, seed=s).items) for s in range(10)}
    assert len(samples) > 1 and all(list(s) == sorted(s) for s in samples)  # file order kept
    ds = load_dataset("sharc", path, limit=2, seed=3)
    assert ds.total == 4 and "2 of 4 items" in ds.describe()


@pytest.mark.parametrize("fmt, text, message", [
    ("sharc", '[{"utterance_id": "u1",\n "snippet": "x", "question": "q?", "answer": }]', r"s\.txt:2: not valid JSON"),
    ("sharc", '{"utterance_id": "u1"}', "JSON list of utterances"),
    ("sharc", '[\n{"utterance_id": "u1", "snippet": "x", "question": "q?", "answer": "Yes"},\n'
              '{"utterance_id": "u2", "snippet": "", "question": "q?", "answer": "Yes"}]',
     r"s\.txt:3: utterance 2 \(id u2\): expected a non-empty string in 'snippet'"),
    ("sharc", '[{"utterance_id": "u1", "snippet": "x", "question": "q?", "answer": "Yes", "history": [1]}]',
     "history turn 1"),
    ("sharc", '[{"utterance_id": "u1", "snippet": "x", "question": "q?", "answer": "Yes"},\n'
              ' {"utterance_id": "u1", "snippet": "x", "question": "q?", "answer": "No"}]', "ids must be unique"),
    ("contractnli", '{"documents": [], "labels": []}', "'labels' \\(object\\)"),
    ("contractnli", json.dumps({**CONTRACTNLI, "labels": {"nda-1": {"hypothesis": "h"}}}), "no hypothesis"),
    ("squad2", '{"data": [{"paragraphs": [{"context": "c", "qas": [{"id": "q", "question": "?", '
               '"is_impossible": false, "answers": []}]}]}]}', "needs at least one answer"),
    ("hotpotqa", '{"_id": "h", "question": "q", "context": [["T", ["s"]]]}\n{"_id": "h2", "question": "q", '
                 '"context": [["T", "not a list"]]}', r"s\.txt:2: item 2 \(id h2\): each 'context' entry"),
    ("jsonl", '{"id": "a", "question": "q?", "action": "ANSWER"}\n\n{"id": "b", "question": "q?", '
              '"action": "MAYBE"}', r"s\.txt:3: item \(id b\): 'action' must be one of"),
    ("jsonl", '{"id": "a", "question": "q?", "action": "ANSWER"}\n{not json}', r"s\.txt:2: not valid JSON"),
    ("sharc", "[]", "no labelled items"),
    # a JSON Lines file read as one of the JSON formats (a browser walkthrough's blind set, Format left at sharc)
    ("sharc", '{"id": "a", "question": "q?", "action": "ANSWER"}\n{"id": "b", "question": "q?", "action": "ASK"}',
     r"s\.txt: one JSON object per line \(JSON Lines\), not one JSON document: read it with the jsonl format"),
])
def test_malformed_files_name_file_line_and_fix(tmp_path, fmt, text, message):
    path = tmp_path / "s.txt"
    path.write_text(text)
    with pytest.raises(DatasetError, match=message):
        load_dataset(fmt, path, kb_folder=tmp_path)


def test_missing_file_bad_format_bad_limit(tmp_path):
    with pytest.raises(DatasetError, match="no such file"):
        load_dataset("sharc", tmp_path / "nope.json")
    with pytest.raises(DatasetError, match="unknown format"):
        load_dataset("csv", tmp_path / "nope.json")
    path = write(tmp_path, "s.json", SHARC)
    with pytest.raises(DatasetError, match="at least 1"):
        load_dataset("sharc", path, limit=0)
    (tmp_path / "latin.json").write_bytes(b'[{"snippet": "caf\xe9"}]')
    with pytest.raises(DatasetError, match="not UTF-8"):
        load_dataset("sharc", tmp_path / "latin.json")


@pytest.mark.skipif(not SHARC_REAL.exists(), reason=f"{SHARC_REAL} not present (shared data folder absent)")
def test_real_sharc_half_counts_match_the_readme():
    ds = load_dataset("sharc", SHARC_REAL)
    assert ds.counts() == {"ANSWER": 681, "ASK": 272, "ABSTAIN": 50}
    assert len(ds.all_documents) == len({i.extra["tree_id"] for i in ds.items})
    assert all(not i.has_context for i in ds.items if i.action == "ABSTAIN")  # the README's warning
    assert all(i.answers[0] in ("Yes", "No") for i in ds.items if i.action == "ANSWER")


@pytest.mark.skipif(not CNLI_REAL.exists(), reason=f"{CNLI_REAL} not present (shared data folder absent)")
def test_real_contractnli_dev_counts_and_evidence():
    ds = load_dataset("contractnli", CNLI_REAL)
    raw = json.loads(CNLI_REAL.read_text())
    choices = Counter(a["choice"] for d in raw["documents"] for a in d["annotation_sets"][0]["annotations"].values())
    assert len(ds.items) == 61 * 17 and len(ds.all_documents) == 61
    assert ds.counts() == {"ANSWER": choices["Entailment"] + choices["Contradiction"], "ASK": 0,
                           "ABSTAIN": choices["NotMentioned"]}
    assert all(i.evidence for i in ds.items if i.action == "ANSWER")
    assert all(e in i.documents[0][2] for i in ds.items for e in i.evidence)
