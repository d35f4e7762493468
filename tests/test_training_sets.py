"""The training domains read from ../shared/data/train: groups kept whole, held-out articles apart."""
from __future__ import annotations

import pytest

from core.evaluation import training
from core.evaluation.training import group_of

pytestmark = pytest.mark.skipif(not training.TRAIN_DIR.is_dir(), reason=f"{training.TRAIN_DIR} is missing")


def test_sharc_train_groups_by_rule_tree_and_adds_irrelevant_items_from_other_trees():
    data = training.sharc_train()
    trees = {group_of(i) for i in data.items if not i.extra.get("synthetic")}
    assert len(trees) == 439
    snippet_of = {group_of(i): i.documents[0] for i in data.items if not i.extra.get("synthetic")}
    irrelevant = [i for i in data.items if i.extra.get("synthetic") == "irrelevant"]
    assert irrelevant and all(i.action == "ABSTAIN" for i in irrelevant)
    # asked against another tree's rule text, grouped with the tree the question came from
    assert all(i.documents[0] != snippet_of[group_of(i)] for i in irrelevant)
    assert {i.action for i in data.items} == {"ANSWER", "ASK", "ABSTAIN"}


def test_contractnli_train_forms_one_shortened_contract_per_nda_holding_each_rows_evidence():
    data = training.contractnli_train(contracts=5)
    groups = {}
    for item in data.items:
        groups.setdefault(group_of(item), []).append(item)
    assert len(groups) == 5 and all(len(g) == training.CONTRACT_HYPOTHESES for g in groups.values())
    for items in groups.values():
        assert len({i.documents for i in items}) == 1  # one contract text per NDA
        text = items[0].documents[0][2]
        assert all(e in text for i in items for e in i.evidence)
    assert {i.action for i in data.items} == {"ANSWER", "ABSTAIN"}


def test_contractnli_train_holds_only_contracts_the_nli_model_never_trained_on(tmp_path):
    """The domain's contracts sit in the NLI mixture's test or calib slice, and the mixture splits
    ContractNLI by that same key, so none of their pairs is in the slice the model was trained on."""
    import csv

    from tests.scripts import load_script
    data = training.contractnli_train(contracts=20)
    contracts = {int(group_of(i).removeprefix("nda")) for i in data.items}
    assert len(contracts) == 20
    assert {training.nli_slice(str(g), "contractnli") for g in contracts} <= {"test", "calib"}
    # the mixture's builder: contract g's pairs go to nli_slice(g) (12 contracts give every slice)
    path = tmp_path / "contracts.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["concatenated_spans", "hypothesis", "label", "num_spans",
                                                    "num_tokens"])
        writer.writeheader()
        for g in range(12):
            for h in range(training.CONTRACT_HYPOTHESES):
                writer.writerow({"concatenated_spans": f"Clause of contract {g}.", "hypothesis": f"Hypothesis {h}.",
                                 "label": "2", "num_spans": g, "num_tokens": 100 + g})
    slices = load_script("build_nli_mix").contract_rows(path)
    found = {int(r["premise"].split()[-1].rstrip(".")): part for part, rows in slices.items() for r in rows}
    assert found == {g: training.nli_slice(str(g), "contractnli") for g in range(12)}
    assert set(found.values()) == {"train", "calib", "test"}


def test_squad_held_out_articles_never_appear_in_the_fitting_set():
    fit = training.squad_train(per_article=20)
    held = training.squad_train(held_out=True, per_article=20)
    assert {group_of(i) for i in fit.items}.isdisjoint({group_of(i) for i in held.items})
    assert len({group_of(i) for i in held.items}) == len(training.SQUAD_HELD_OUT)
    assert not any(i.extra.get("synthetic") for i in held.items)
    # one pooled knowledge base; the topic-absent articles' paragraphs are not in it
    assert len({i.documents for i in fit.items}) == 1
    absent = [i for i in fit.items if i.extra.get("synthetic") == "topic_absent"]
    assert absent and all(i.action == "ABSTAIN" for i in absent)
    kb_titles = {d[1] for d in fit.items[0].documents}
    assert {group_of(i) for i in absent}.isdisjoint(kb_titles)
    assert {group_of(i) for i in fit.items if not i.extra.get("synthetic")} <= kb_titles


def test_entity_swaps_ask_the_question_about_another_entity_of_the_same_kind_in_the_article():
    import random

    from core.evaluation.importers import LabelledItem
    paragraph = ("Beyoncé released her fifth studio album in December 2013. Kelly Rowland released her debut "
                 "album in 2002. Both sang in Destiny's Child.")
    doc = ("squad", "Beyoncé", paragraph)
    asked = LabelledItem(id="q1", question="When did Beyoncé release her fifth studio album?", action="ANSWER",
                         answers=("December 2013",), evidence=("Beyoncé released her fifth studio album in December 2013.",),
                         documents=(doc,), extra={"title": "Beyoncé"})
    unnamed = LabelledItem(id="q2", question="When was the fifth album released?", action="ANSWER",
                           answers=("December 2013",), evidence=asked.evidence, documents=(doc,), extra={"title": "Beyoncé"})
    swaps = training.entity_swaps([asked, unnamed], random.Random(0))
    assert swaps == [(asked, "When did Kelly Rowland release her fifth studio album?")]


def test_squad_train_adds_questions_about_another_entity_as_topic_present_fact_absent():
    fit = training.squad_train(per_article=20, swaps_per_article=5)
    by_id = {i.id: i for i in fit.items}
    swaps = [i for i in fit.items if i.extra.get("synthetic") == "entity_swap"]
    assert swaps and all(i.action == "ABSTAIN" and not i.answers and not i.evidence for i in swaps)
    absent = {group_of(i) for i in fit.items if i.extra.get("synthetic") == "topic_absent"}
    for swap in swaps:
        original = by_id[swap.id.removesuffix("/swap")]
        assert original.action == "ANSWER" and swap.question != original.question
        assert group_of(swap) == group_of(original) and group_of(swap) not in absent  # its article is in the KB
        assert swap.documents == original.documents
    per_article = {}
    for swap in swaps:
        per_article[group_of(swap)] = per_article.get(group_of(swap), 0) + 1
    assert len(per_article) >= 3 and max(per_article.values()) <= 5
    assert not any(i.extra.get("synthetic") for i in training.squad_train(held_out=True, per_article=20).items)


def test_training_kb_documents_are_what_the_build_script_makes_from_the_training_data(tmp_path):
    import subprocess
    import sys
    subprocess.run([sys.executable, str(training.ROOT / "scripts" / "build_train_kb.py"), "--out", str(tmp_path)],
                   check=True, capture_output=True)
    built = {p.relative_to(tmp_path): p.read_text(encoding="utf-8") for p in tmp_path.rglob("*.md")}
    shipped = {p.relative_to(training.TRAIN_KB / "documents"): p.read_text(encoding="utf-8")
               for p in (training.TRAIN_KB / "documents").rglob("*.md")}
    assert len(built) == 20 and built == shipped


def test_training_kb_questions_resolve_and_group_by_document():
    data = training.kb_train()
    assert len(data.items) == 385 and len({i.id for i in data.items}) == 385
    assert {a: sum(i.action == a for i in data.items) for a in ("ANSWER", "ASK", "ABSTAIN")} == {
        "ANSWER": 129, "ASK": 130, "ABSTAIN": 126}
    texts = {}
    for path in (training.TRAIN_KB / "documents").rglob("*.md"):
        texts[path.relative_to(training.TRAIN_KB / "documents").with_suffix("").as_posix()] = path.read_text(
            encoding="utf-8")
    for item in data.items:
        doc = item.extra.get("doc_id", "")
        assert group_of(item) == (doc or "none") and item.extra["domain"] == "kb"
        assert not doc or doc in texts, f"{item.id}: {doc!r} is not a document"
        assert all(e in texts[doc] for e in item.evidence), f"{item.id}: evidence not verbatim"
        if item.action == "ABSTAIN":
            assert (item.extra.get("reason") == "topic_absent") == (not doc), item.id


def test_conditionalqa_train_asks_where_an_answer_holds_only_under_conditions_and_keeps_lists_as_lists():
    data = training.conditionalqa_train()
    assert len(data.items) == 2330 and {i.extra["domain"] for i in data.items} == {"conditionalqa"}
    assert {a: sum(i.action == a for i in data.items) for a in ("ANSWER", "ASK", "ABSTAIN")} == {
        "ANSWER": 1691, "ASK": 548, "ABSTAIN": 91}
    assert len({i.documents for i in data.items}) == 1  # every guide in one knowledge base
    guides = {d[0]: d for d in data.items[0].documents}
    assert len({group_of(i) for i in data.items}) == len(guides) == 435
    probate = next(d for d in guides.values() if d[1] == "Applying for probate")
    assert "<" not in probate[2] and "\n* brothers and sisters\n" in probate[2]
    for item in data.items:
        assert item.scenario and item.question
        guide = guides[item.extra["guide"]][2]
        assert all(e in guide for e in item.evidence), item.id  # its evidence is in its own guide
        assert bool(item.answers) == (item.action != "ABSTAIN")
    # an answer with conditions the scenario leaves open
    bursary = next(i for i in data.items if i.question == "Will I be eligible for a social work bursary?"
                   and "approved undergraduate" in i.scenario)
    assert bursary.action == "ASK" and bursary.answers == ("yes",)
