"""Schema and consistency checks for the shipped sample knowledge base.

The pipeline is measured on ``sample_kb/questions.jsonl``, so a label that points at a
missing document or quotes evidence the document does not contain would silently skew
every metric. These tests need no models.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

KB = Path(__file__).resolve().parents[1] / "sample_kb"
DOCS = KB / "documents"
QUESTIONS = KB / "questions.jsonl"
DOMAINS = {"policy": "policy", "contract": "contracts", "encyclopedia": "encyclopedia"}
ACTIONS = ("ANSWER", "ASK", "ABSTAIN")
REQUIRED = {
    "ANSWER": ("answer", "evidence"),
    "ASK": ("missing", "evidence"),
    "ABSTAIN": ("reason",),
}
COMMON = ("id", "domain", "question", "scenario", "history", "action", "doc_id")


def load_documents() -> dict[str, str]:
    """doc_id -> text: file path under documents/ without suffix; jsonl rows add "/<id>"."""
    docs: dict[str, str] = {}
    for path in sorted(DOCS.rglob("*")):
        if not path.is_file() or any(part.startswith(".") for part in path.relative_to(DOCS).parts):
            continue  # the index lives in documents/.index/
        stem = path.relative_to(DOCS).with_suffix("").as_posix()
        if path.suffix in (".md", ".txt"):
            docs[stem] = path.read_text(encoding="utf-8")
        elif path.suffix == ".jsonl":
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                row = json.loads(line)
                assert set(row) == {"id", "title", "text"}, f"{path.name}:{n} has keys {sorted(row)}"
                doc_id = f"{stem}/{row['id']}"
                assert doc_id not in docs, f"duplicate document id {doc_id}"
                docs[doc_id] = row["text"]
        else:
            raise AssertionError(f"unexpected file type in documents/: {path}")
    return docs


def load_questions() -> list[dict]:
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


DOCUMENTS = load_documents()
ITEMS = load_questions()


def test_documents_cover_three_domains_in_three_formats():
    assert len(DOCUMENTS) >= 44
    by_folder = Counter(doc_id.split("/")[0] for doc_id in DOCUMENTS)
    assert by_folder["policy"] >= 15
    assert by_folder["contracts"] == 2
    assert by_folder["encyclopedia"] >= 20
    assert set(by_folder) == set(DOMAINS.values())
    suffixes = {p.suffix for p in DOCS.rglob("*")
                if p.is_file() and not any(part.startswith(".") for part in p.relative_to(DOCS).parts)}
    assert suffixes == {".md", ".txt", ".jsonl"}


@pytest.mark.parametrize("doc_id", sorted(DOCUMENTS))
def test_document_length(doc_id):
    words = len(DOCUMENTS[doc_id].split())
    low, high = (600, 1200) if doc_id.startswith("contracts/") else (80, 350)
    assert low <= words <= high, f"{doc_id} has {words} words, expected {low}-{high}"


@pytest.mark.parametrize("doc_id", sorted(d for d in DOCUMENTS if d.startswith("policy/")))
def test_policy_bullets_have_explicit_all_or_any_lead_in(doc_id):
    """The condition extractor reads the lead-in to know whether bullets combine with AND or OR."""
    text = DOCUMENTS[doc_id]
    assert text.startswith("# "), f"{doc_id} must start with a '# Title' heading"
    lines = [line for line in text.splitlines() if line.strip()]
    starts = [i for i, line in enumerate(lines) if line.startswith("* ") and not lines[i - 1].startswith("* ")]
    assert starts, f"{doc_id} states no bulleted conditions"
    for i in starts:
        lead = lines[i - 1]
        assert lead.endswith(":") and re.search(r"\b(all|any) of the following\b", lead), (
            f"{doc_id}: bullets follow {lead!r}, which does not say 'all of the following' or 'any of the following'")


def test_questions_parse_and_ids_unique():
    assert len(ITEMS) >= 60
    ids = [q["id"] for q in ITEMS]
    assert len(ids) == len(set(ids)), [i for i, n in Counter(ids).items() if n > 1]


def test_actions_balanced_and_every_domain_has_every_action():
    counts = Counter(q["action"] for q in ITEMS)
    assert set(counts) == set(ACTIONS)
    for action in ACTIONS:
        share = counts[action] / len(ITEMS)
        assert 0.30 <= share <= 0.36, f"{action} is {share:.0%} of the questions"
    pairs = Counter((q["domain"], q["action"]) for q in ITEMS)
    for domain in DOMAINS:
        for action in ACTIONS:
            assert pairs[(domain, action)] > 0, f"no {action} question in domain {domain}"


@pytest.mark.parametrize("item", ITEMS, ids=[q["id"] for q in ITEMS])
def test_question_fields(item):
    for key in COMMON + REQUIRED[item["action"]]:
        assert key in item, f"{item['id']} lacks {key!r}"
    assert item["domain"] in DOMAINS
    assert item["question"].strip()
    assert isinstance(item["scenario"], str)
    assert isinstance(item["history"], list)
    for turn in item["history"]:
        assert set(turn) == {"question", "answer"} and all(isinstance(v, str) and v for v in turn.values())
    if item["doc_id"]:
        assert item["doc_id"] in DOCUMENTS, f"{item['id']}: doc_id {item['doc_id']!r} does not resolve"
        assert item["doc_id"].split("/")[0] == DOMAINS[item["domain"]], f"{item['id']}: doc in wrong domain"


@pytest.mark.parametrize("item", [q for q in ITEMS if q["action"] == "ANSWER"],
                         ids=[q["id"] for q in ITEMS if q["action"] == "ANSWER"])
def test_answer_is_supported_by_its_evidence(item):
    assert item["doc_id"], f"{item['id']}: an ANSWER needs its gold document"
    if item["answer"] not in ("Yes", "No"):
        assert item["answer"].lower() in item["evidence"].lower(), (
            f"{item['id']}: answer {item['answer']!r} is not in its evidence")


@pytest.mark.parametrize("item", [q for q in ITEMS if q["action"] in ("ANSWER", "ASK") and q["doc_id"]],
                         ids=[q["id"] for q in ITEMS if q["action"] in ("ANSWER", "ASK") and q["doc_id"]])
def test_evidence_is_a_whole_sentence_or_bullet_of_the_document(item):
    text, evidence = DOCUMENTS[item["doc_id"]], item["evidence"]
    assert evidence, f"{item['id']} has a gold document but no evidence"
    at = text.find(evidence)
    assert at >= 0, f"{item['id']}: evidence not found verbatim in {item['doc_id']}"
    before, after = text[:at], text[at + len(evidence):]
    assert before == "" or before[-1].isspace(), f"{item['id']}: evidence starts mid-word"
    assert after == "" or after[0].isspace(), f"{item['id']}: evidence ends mid-sentence"


def test_ask_without_document_is_an_ambiguity_question():
    """ASK items with no gold document are vague-referent questions: nothing to quote."""
    vague = [q for q in ITEMS if q["action"] == "ASK" and not q["doc_id"]]
    assert vague
    for q in vague:
        assert q["evidence"] == "" and q["missing"].strip(), q["id"]


@pytest.mark.parametrize("item", [q for q in ITEMS if q["action"] == "ABSTAIN"],
                         ids=[q["id"] for q in ITEMS if q["action"] == "ABSTAIN"])
def test_abstain_reason_matches_doc_id(item):
    assert item["reason"] in ("topic_absent", "fact_absent")
    if item["reason"] == "topic_absent":
        assert item["doc_id"] == "", f"{item['id']}: a topic_absent question has no related document"
    else:
        assert item["doc_id"], f"{item['id']}: a fact_absent question names the related document"


def test_both_abstain_reasons_are_well_represented():
    reasons = Counter(q["reason"] for q in ITEMS if q["action"] == "ABSTAIN")
    assert reasons["topic_absent"] >= 8 and reasons["fact_absent"] >= 8, reasons


BLIND_SETS = {name: [json.loads(line) for line in (KB / name).read_text(encoding="utf-8").splitlines() if line.strip()]
              for name in ("questions_blind.jsonl", "questions_blind2.jsonl", "questions_blind3.jsonl",
                           "questions_blind4.jsonl", "questions_blind5.jsonl")}
BLIND = [q for questions in BLIND_SETS.values() for q in questions]


@pytest.mark.parametrize("name", BLIND_SETS)
def test_blind_set_meets_its_brief(name):
    """≥ 60 questions, ≥ 20 per action, ≥ 8 with the topic present but the fact absent (issue 15)."""
    questions = BLIND_SETS[name]
    counts = Counter(q["action"] for q in questions)
    assert len(questions) >= 60 and all(counts[a] >= 20 for a in ACTIONS), counts
    reasons = Counter(q["reason"] for q in questions if q["action"] == "ABSTAIN")
    assert reasons["fact_absent"] >= 8, reasons


def test_blind_question_ids_are_unique_across_the_sets():
    assert len({q["id"] for q in BLIND}) == len(BLIND)


@pytest.mark.parametrize("item", BLIND, ids=[q["id"] for q in BLIND])
def test_blind_question_fields_and_evidence(item):
    for key in COMMON + REQUIRED[item["action"]]:
        assert key in item, f"{item['id']} lacks {key!r}"
    assert item["domain"] in (*DOMAINS, "none")
    if item["doc_id"]:
        assert item["doc_id"] in DOCUMENTS, f"{item['id']}: doc_id {item['doc_id']!r} does not resolve"
    if item["action"] in ("ANSWER", "ASK") and item["evidence"]:
        assert item["evidence"] in DOCUMENTS[item["doc_id"]], f"{item['id']}: evidence not verbatim"
    if item["action"] == "ABSTAIN":
        assert (item["reason"] == "topic_absent") == (item["doc_id"] == ""), item["id"]
