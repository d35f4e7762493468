"""The training domains: labelled sets built from ``../shared/data/train/`` for FITTING.

Signal calibrators, the general learned gate and the declared defaults are fitted on these
and nothing else; the report sets (the ShARC dev half, ContractNLI dev, the sample KB's
question files) only measure. Each item carries its group in ``extra["group"]`` (rule tree,
contract, article) so cross-validation never splits a group.

- ``sharc``: ShARC train utterances (Yes/No → ANSWER, follow-up → ASK), plus ABSTAIN items made
  the way ShARC made its "Irrelevant" class: a question asked against another tree's rule text.
- ``contractnli``: ContractNLI train pairs. The file holds only each pair's evidence spans (or
  three random spans for NotMentioned); the 17 rows of one NDA are consecutive, so the union of
  their spans forms a shortened contract, and each hypothesis is checked against it. Only contracts
  the NLI model never trained on (``nli_slice``), as a user's contracts are.
- ``kb``: questions written from the documents alone against ``train_kb/documents/`` — ShARC train
  guide pages, SQuAD train articles and ContractNLI train NDAs in one knowledge base
  (``scripts/build_train_kb.py``; ``train_kb/README.md``): the one training domain asked the way the
  workbench is used, every kind of question against one mixed knowledge base; group = document.
- ``conditionalqa``: ConditionalQA train questions about the asker's circumstances on gov.uk guides,
  each with the asker's scenario, against one knowledge base of every guide (the file holds only each
  question's evidence sentences, so a guide is the union of its questions' evidence, lists kept as
  lists); an answer that holds only under conditions the scenario leaves open → ASK, a plain answer →
  ANSWER, not answerable → ABSTAIN; group = guide. Of the sample KB's kind (personal questions with
  scenarios, against guides retrieval has to find), but measured, not fitted (``bench/bench_guides.py``;
  not in ``training_sets``): the signals do not yet separate its answers from its clarifications
  (P(condition open) refitted on it ranks them at grouped-CV AUROC 0.56), and adding it to the fits
  lowered the other domains' objective (ShARC train 0.779 → 0.753) for nothing on its own.
- ``squad``: SQuAD 2.0 train articles pooled into one knowledge base (retrieval has to find the
  paragraph among many articles), with the questions of two articles left out of it as ABSTAIN
  (topic absent; chosen among the articles without unanswerable questions, so SQuAD's own
  unanswerable questions stay as the topic-present, fact-absent class). Articles listed in ``SQUAD_HELD_OUT`` are kept out of fitting and used to
  report, pooled the same way.
"""
from __future__ import annotations

import csv
import hashlib
import html
import json
import random
import re
from dataclasses import replace
from pathlib import Path

from core.evaluation.importers import Dataset, LabelledItem, _doc, load_dataset, read_sharc, read_squad2

ROOT = Path(__file__).resolve().parents[2]
TRAIN_DIR = ROOT.parent / "shared" / "data" / "train"
TRAIN_KB = ROOT / "train_kb"
# SQuAD train articles (0-based, file order) held out of every fit, for the transfer table.
SQUAD_HELD_OUT = (2, 5, 8)
CONTRACT_HYPOTHESES = 17
IRRELEVANT_SHARE = 0.2
# Share of groups (premises, contracts, trees) per slice of the NLI model's training mixture
# (``scripts/build_nli_mix.py``): hashed, so the split is stable.
NLI_TEST_SHARE = 0.15
NLI_CALIB_SHARE = 0.10


def nli_slice(group: str, salt: str) -> str:
    """The slice of the NLI model's training mixture a group (premise, contract, rule tree) went to:
    ``test``, ``calib`` (the temperature only) or ``train``, from a stable hash of its key."""
    h = int(hashlib.sha1(f"{salt}:{group}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "test" if h < NLI_TEST_SHARE else "calib" if h < NLI_TEST_SHARE + NLI_CALIB_SHARE else "train"


# Where an imported item names what it was asked about, when no "group" was set: a ShARC rule tree,
# a ContractNLI contract, a sample-KB document (a question whose topic is absent names none: its own)
GROUP_KEYS = ("group", "tree_id", "document", "doc_id")


def group_of(item: LabelledItem) -> str:
    """What the item's cross-validation fold and bootstrap resample go by: its rule tree, contract,
    article or document, else the item itself."""
    return str(next((item.extra[k] for k in GROUP_KEYS if item.extra.get(k)), item.id))


def _dataset(name: str, items: list[LabelledItem], path: Path) -> Dataset:
    return Dataset(items=tuple(items), format=name, path=str(path), setting="reading", total=len(items))


def sharc_train(train_dir: Path = TRAIN_DIR, seed: int = 0) -> Dataset:
    """ShARC train trees with ShARC-style irrelevant (ABSTAIN) items; group = rule tree."""
    path = train_dir / "sharc_train_trees.json"
    items = [replace(i, extra={**i.extra, "group": i.extra.get("tree_id", i.id), "domain": "sharc"})
             for i in read_sharc(path.read_text(encoding="utf-8"), str(path))]
    rng = random.Random(seed)
    snippets = {}
    for i in items:
        snippets.setdefault(group_of(i), i.documents[0])
    trees = sorted(snippets)
    firsts = {}
    for i in items:  # one irrelevant item per question, from the utterances without a history
        if not i.history and i.question not in firsts:
            firsts[i.question] = i
    wanted = int(len(items) * IRRELEVANT_SHARE / (1 - IRRELEVANT_SHARE))
    chosen = rng.sample(sorted(firsts), min(wanted, len(firsts)))
    for n, question in enumerate(chosen):
        source = firsts[question]
        other = rng.choice([t for t in trees if t != group_of(source)])
        items.append(LabelledItem(
            id=f"irrelevant-{n}", question=question, action="ABSTAIN", scenario=source.scenario,
            documents=(snippets[other],), source="sharc",
            extra={"group": group_of(source), "domain": "sharc", "synthetic": "irrelevant"}))
    return _dataset("sharc-train", items, path)


def contractnli_train(train_dir: Path = TRAIN_DIR, contracts: int | None = None, seed: int = 0) -> Dataset:
    """ContractNLI train hypotheses against each NDA's shortened text; group = contract. Only contracts
    the NLI model never trained on (its mixture's test and calib slices, ``nli_slice``): on the contracts
    it trained on, its scores are surer than on a new one, and what is fitted on them flatters the gate
    (the declared defaults hallucinated on 13 % of those contracts' NotMentioned hypotheses, on 20 % of the
    others', on 23 % of ContractNLI dev's)."""
    path = train_dir / "contractnli_train.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    groups = [rows[k:k + CONTRACT_HYPOTHESES] for k in range(0, len(rows), CONTRACT_HYPOTHESES)]
    order = [g for g in range(len(groups)) if nli_slice(str(g), "contractnli") != "train"]
    if contracts is not None:
        order = sorted(random.Random(seed).sample(order, min(contracts, len(order))))
    verdicts = {"0": ("ANSWER", "yes"), "1": ("ANSWER", "no"), "2": ("ABSTAIN", "")}
    items = []
    for g in order:
        spans = list(dict.fromkeys(s.strip() for row in groups[g] for s in row["concatenated_spans"].split("\n")
                                   if s.strip()))
        random.Random(g).shuffle(spans)  # no row's own spans first
        document = _doc("nda", f"NDA {g}", "\n\n".join(spans))
        for h, row in enumerate(groups[g]):
            action, verdict = verdicts[row["label"]]
            evidence = () if action == "ABSTAIN" else tuple(
                s.strip() for s in row["concatenated_spans"].split("\n") if s.strip())
            items.append(LabelledItem(
                id=f"nda{g}/h{h}", question=row["hypothesis"], action=action, answers=(verdict,) if verdict else (),
                evidence=evidence, documents=(document,), is_statement=True, source="contractnli",
                extra={"group": f"nda{g}", "domain": "contractnli"}))
    return _dataset("contractnli-train", items, path)


# What a swapped name may be: a thing the question names, of a kind that has namesakes in the article.
SWAP_LABELS = frozenset({"PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "EVENT", "WORK_OF_ART", "PRODUCT", "DATE"})


def entity_swaps(items: list[LabelledItem], rng: random.Random) -> list[tuple[LabelledItem, str]]:
    """SQuAD 2.0's most common unanswerable question asks about another entity than the sentence that
    answers it ("When did Enrique Iglesias release her fifth studio album?" against the sentence on
    Beyoncé's; Rajpurkar et al., 2018: 21 % of theirs). For each answerable item whose question names an
    entity that its answer sentence (``evidence[0]``) also names, the question with that entity replaced
    by another of the same kind from the same article (``extra["title"]``, among the paragraphs of
    ``items``), one the answer sentence does not name and that shares no word with the original."""
    from core import models
    paragraphs = list(dict.fromkeys(i.documents[0][2] for i in items))
    title_of = {i.documents[0][2]: i.extra["title"] for i in items}
    names: dict[tuple[str, str], set[str]] = {}  # (article, entity label) -> the names it holds
    for paragraph, doc in zip(paragraphs, models.parse(paragraphs)):
        for ent in doc.ents:
            names.setdefault((title_of[paragraph], ent.label_), set()).add(ent.text)
    out = []
    for item, question in zip(items, models.parse([i.question for i in items])):
        sentence = item.evidence[0]
        for ent in question.ents:
            if ent.label_ not in SWAP_LABELS or ent.text not in sentence:
                continue
            words = set(ent.text.lower().split())
            others = sorted(n for n in names.get((item.extra["title"], ent.label_), ())
                            if n not in sentence and not words & set(n.lower().split()))
            if others:
                out.append((item, item.question.replace(ent.text, rng.choice(others))))
                break
    return out


def squad_train(train_dir: Path = TRAIN_DIR, *, held_out: bool = False, per_article: int | None = 60,
                absent_articles: int = 2, swaps_per_article: int = 20, seed: int = 0) -> Dataset:
    """SQuAD 2.0 train articles pooled into one knowledge base, a seeded sample of ``per_article``
    questions each (all unanswerable ones kept); group = article.

    For fitting (``held_out`` false), ``absent_articles`` of the fitting articles are left out of the
    knowledge base and their questions become ABSTAIN (topic absent): a question about something
    the knowledge base does not hold, among documents about other things. Each article in the knowledge
    base also gets up to ``swaps_per_article`` of its answerable questions asked about another entity of
    the article (``entity_swaps``) as ABSTAIN (topic present, fact absent): of these articles only one
    has unanswerable questions of its own, so without them a fold that leaves it out holds no SQuAD
    question whose fact is absent. With ``held_out`` the reporting articles form the knowledge base and
    every question keeps its own label."""
    path = train_dir / "squad2_train_first10.json"
    text = path.read_text(encoding="utf-8")
    titles = [str(a.get("title", "")).replace("_", " ") for a in json.loads(text)["data"]]
    chosen = [t for n, t in enumerate(titles) if (n in SQUAD_HELD_OUT) == held_out]
    by_article: dict[str, list[LabelledItem]] = {}
    for item in read_squad2(text, str(path)):
        title = item.extra["title"]
        if title in chosen:
            by_article.setdefault(title, []).append(item)
    rng = random.Random(seed)
    # Only articles without unanswerable questions are left out: those with some (few in these
    # articles) must stay in the KB, as the "topic present, fact absent" class.
    candidates = [t for t in chosen if all(i.action == "ANSWER" for i in by_article[t])]
    absent = set() if held_out else set(rng.sample(candidates, min(absent_articles, len(candidates) - 1)))
    kb = tuple(dict.fromkeys(i.documents[0] for t in chosen if t not in absent for i in by_article[t]))
    items, asked = [], []
    for title in chosen:
        pool = by_article[title]
        impossible = [i for i in pool if i.action == "ABSTAIN"]
        answerable = [i for i in pool if i.action == "ANSWER"]
        if per_article is not None and len(impossible) + len(answerable) > per_article:
            answerable = rng.sample(answerable, max(per_article - len(impossible), per_article // 2))
        if title not in absent:
            asked += [i for i in answerable if i.evidence]
        for item in impossible + answerable:
            extra = {**item.extra, "group": title, "domain": "squad"}
            if title in absent:
                item = replace(item, action="ABSTAIN", answers=(), evidence=())
                extra["synthetic"] = "topic_absent"
            items.append(replace(item, documents=kb, extra=extra))
    if not held_out and swaps_per_article:
        swaps: dict[str, list[LabelledItem]] = {}
        for item, swapped in entity_swaps(asked, rng):
            swaps.setdefault(item.extra["title"], []).append(replace(
                item, id=f"{item.id}/swap", question=swapped, action="ABSTAIN", answers=(), evidence=(),
                documents=kb, extra={**item.extra, "group": item.extra["title"], "domain": "squad",
                                     "synthetic": "entity_swap"}))
        items += [i for title in chosen for i in swaps.get(title, [])[:swaps_per_article]]
    name = "squad-train" + ("-held-out" if held_out else "")
    return _dataset(name, items, path)


def _guide_block(evidence: str) -> tuple[str, str]:
    """(tag, text) of one ConditionalQA evidence element: a list item becomes a "* " bullet, a heading
    a "## " line, a table row its cells joined by " | "."""
    opening = re.match(r"\s*<(\w+)", evidence)
    tag = opening.group(1).lower() if opening else ""
    cells = [c.strip() for c in re.split(r"<t[dh][^>]*>", evidence) if re.sub(r"<[^>]+>", "", c).strip()]
    text = " | ".join(html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in cells) if tag == "tr" else \
        html.unescape(re.sub(r"<[^>]+>", "", evidence)).strip()
    return tag, {"li": "* ", "h2": "## ", "h3": "### "}.get(tag, "") + " ".join(text.split())


def _guide_text(evidence: list[str]) -> str:
    """A guide's text from its evidence elements: a list item stays on the line after what it follows."""
    text = ""
    for tag, line in (_guide_block(e) for e in dict.fromkeys(evidence)):
        if line.strip("*# "):
            text += ("\n" if tag == "li" and text else "\n\n" if text else "") + line
    return text


def conditionalqa_train(train_dir: Path = TRAIN_DIR, per_guide: int | None = None, seed: int = 0) -> Dataset:
    """ConditionalQA train questions against every gov.uk guide at once; group = guide (its URL)."""
    path = train_dir / "conditionalqa_train.json"
    rows = json.loads(path.read_text(encoding="utf-8"))
    by_guide: dict[str, list[dict]] = {}
    for row in rows:
        by_guide.setdefault(row["url"], []).append(row)
    texts = {url: _guide_text([e for row in questions for e in row["evidences"]]) for url, questions in by_guide.items()}
    guides = {url: _doc("govuk", url.rstrip("/").rsplit("/", 1)[-1].replace("-", " ").capitalize(), text)
              for url, text in texts.items() if text}
    kb = tuple(guides.values())
    rng = random.Random(seed)
    items = []
    for url, questions in by_guide.items():
        if per_guide is not None and len(questions) > per_guide:
            questions = rng.sample(questions, per_guide)
        for row in questions:
            answers = [a for a in row["answers"] if a and str(a[0]).strip()]
            action = ("ABSTAIN" if row["not_answerable"] or not answers
                      else "ASK" if any(conditions for _, conditions in answers) else "ANSWER")
            items.append(LabelledItem(
                id=f"cqa/{row['id']}", question=row["question"].strip(), action=action, scenario=row["scenario"].strip(),
                answers=tuple(dict.fromkeys(str(a[0]).strip() for a in answers)) if action != "ABSTAIN" else (),
                evidence=tuple(_guide_block(e)[1].lstrip("*# ") for e in row["evidences"]), documents=kb,
                source="conditionalqa", extra={"group": url, "domain": "conditionalqa", "guide": guides.get(url, ("",))[0]}))
    return _dataset("conditionalqa-train", items, path)


def kb_train(folder: Path = TRAIN_KB) -> Dataset:
    """The questions of ``train_kb/questions.jsonl`` against its documents; group = gold document
    (questions about no document form one group)."""
    dataset = load_dataset("jsonl", folder / "questions.jsonl", kb_folder=folder / "documents")
    items = [replace(i, extra={**i.extra, "group": i.extra.get("doc_id", "none"), "area": i.extra.get("domain", ""),
                               "domain": "kb"}) for i in dataset.items]
    return replace(dataset, items=tuple(items))


def training_sets(train_dir: Path = TRAIN_DIR, contracts: int | None = 60) -> dict[str, Dataset]:
    """Every fitting domain (SQuAD without its held-out articles)."""
    return {"sharc": sharc_train(train_dir), "contractnli": contractnli_train(train_dir, contracts),
            "squad": squad_train(train_dir), "kb": kb_train()}
