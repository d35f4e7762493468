"""Condition reading against ShARC train: extraction precision/recall and fact-check accuracy.

    .venv/bin/python bench/bench_conditions.py [--max-utterances 400] [--show N]

TRAINING data (../shared/data/train/), used here to develop condition reading; no number below is
a held-out figure. The rules are hand-written, two thresholds were chosen on these figures (said
below), and they say how well the reading copes with real rule text and real scenarios.

1. Extraction (sharc_train_conditions.json, 628 rule trees). The gold conditions of a tree are its
   follow-up questions' rule spans: one gold condition per distinct set of spans, its text the
   spans joined, lead-in spans ("You must have:") left out because the bullets under them are the
   conditions. ``extract_conditions`` runs on every passage of the snippet. Matching is by token
   F1 over lower-cased words (bullet marks and punctuation dropped): a gold condition is FOUND
   when some extracted condition reaches F1 >= 0.5 with it (recall = found / gold), an extracted
   condition is CORRECT when it reaches F1 >= 0.5 with some gold condition (precision = correct /
   extracted).

2. Fact checks (sharc_train_trees.json, utterances with a scenario). ShARC's ``evidence`` lists
   the follow-up questions the scenario answers, with the answer: a labelled (scenario, condition,
   Yes/No) pair. The condition is the follow-up question as a statement (the claim builder's polar
   statement, "Do you get X?" -> "I get X."), checked by ``VariableStage`` against the scenario
   alone. The tree's other follow-up questions (from the gold conditions file), not in the evidence
   or the history, are pairs the scenario does not settle: their gold status is "missing". That gold is
   loose: ShARC's evidence lists only the follow-ups of the dialogue's own path, so a scenario often settles
   a question of its tree that the evidence leaves out ("I am in Nigeria" and "Are you in Serbia?"). Of 40
   such pairs read as settled, drawn at random and read by hand (sixty-third session), 28 were read right and
   12 wrong (10 by NLI, 2 by arithmetic), so "unsettled pairs read as settled" counts mostly readings that are
   right; see docs/methods.md, seed 002 §3.1.
   Reported: accuracy on each gold status, and how often a settled pair is decided the wrong way.
   ``condition_unrelated`` (0.9, of 0.7 / 0.8 / 0.9 / 0.95 and off; and to establish only) and
   ``condition_contradict_direct`` (0.2, of 0 / 0.1 / 0.2 / 0.3) were chosen on these figures.

3. History matching (sharc_train_trees.json, utterances with a history). Each answered follow-up
   question has gold rule spans (sharc_train_conditions.json); ``VariableStage`` matches it to one of
   the conditions extracted from the snippet. A match is CORRECT when the condition reaches token
   F1 >= 0.5 with the question's gold spans (precision = correct / matched); recall counts the
   questions whose gold condition was extracted (some condition reaches F1 >= 0.5) and got matched
   to such a condition.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core import settings, voice  # noqa: E402
from core.claims import ClaimBuilder  # noqa: E402
from core.kb import Document, chunk_document  # noqa: E402
from core.pipeline import make_query  # noqa: E402
from core.types import Condition  # noqa: E402
from core.variables import VariableStage, as_read, extract_conditions, follow_up_support  # noqa: E402

TRAIN = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "train"
TOKEN = re.compile(r"[a-z0-9£$%']+")
MATCH_F1 = 0.5


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text.lower().replace("\u2019", "'"))


def token_f1(a: str, b: str) -> float:
    x, y = tokens(a), tokens(b)
    common = sum((Counter(x) & Counter(y)).values())
    if not common:
        return 0.0
    p, r = common / len(x), common / len(y)
    return 2 * p * r / (p + r)


def gold_conditions(tree: dict) -> list[str]:
    out = []
    for spans in tree["questions"].values():
        body = [s for s in spans if not s.rstrip().endswith(":")] or spans
        text = " ".join(s.strip() for s in body)
        if text and text not in out:
            out.append(text)
    return out


def extraction(trees: dict, show: int) -> None:
    n_gold = found = n_extracted = correct = 0
    misses: list[tuple[str, list[str]]] = []
    for tree_id, tree in trees.items():
        doc = Document(tree_id, "ShARC", tree["snippet"], f"{tree_id}.md")
        extracted = [c.text for p in chunk_document(doc, 4000, 0) for c in extract_conditions(p)]
        gold = gold_conditions(tree)
        hits = [max((token_f1(e, g) for e in extracted), default=0.0) >= MATCH_F1 for g in gold]
        n_gold += len(gold)
        found += sum(hits)
        n_extracted += len(extracted)
        correct += sum(max((token_f1(e, g) for g in gold), default=0.0) >= MATCH_F1 for e in extracted)
        if not all(hits) and len(misses) < show:
            misses.append((tree["snippet"], [g for g, h in zip(gold, hits) if not h]))
    precision = correct / n_extracted if n_extracted else 0.0
    recall = found / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    print(f"EXTRACTION on {len(trees)} ShARC train trees (TRAINING data, not fitted, token F1 >= {MATCH_F1}):")
    print(f"  gold conditions {n_gold}, extracted {n_extracted}")
    print(f"  precision {precision:.3f}  recall {recall:.3f}  F1 {f1:.3f}")
    for snippet, missed in misses:
        print("  --- missed:", missed, "\n      in:", snippet.replace("\n", " | ")[:300])


def fact_checks(utterances: list[dict], trees: dict, limit: int, show: int) -> None:
    claims = ClaimBuilder()
    stage = VariableStage(**settings.for_stage(settings.resolve({}), "variables"))
    statement_of: dict[str, str] = {}

    def statement(question: str) -> str:
        if question not in statement_of:
            statement_of[question] = claims.run(question).text
        return statement_of[question]

    confusion: Counter = Counter()
    shown = 0
    used = 0
    start = time.perf_counter()
    for u in utterances:
        if used >= limit:
            break
        if not u.get("scenario") or not u.get("evidence"):
            continue
        used += 1
        gold = {e["follow_up_question"]: "established" if e["follow_up_answer"] == "Yes" else "contradicted"
                for e in u["evidence"]}
        asked = {h["follow_up_question"] for h in u.get("history", [])}
        for q in trees.get(u["tree_id"], {}).get("questions", {}):
            if q not in gold and q not in asked:
                gold[q] = "missing"
        conditions = []
        for q in gold:
            text = statement(q)
            conditions.append(Condition(text=text, user_voice=voice.to_user_voice(text), kind="bullet",
                                        passage_id=u["tree_id"]))
        checked = stage.check(conditions, make_query(u["question"], u["scenario"]))
        for (q, want), c in zip(gold.items(), checked):
            confusion[(want, c.status)] += 1
            if want != c.status and want != "missing" and shown < show:
                shown += 1
                print(f"  --- gold {want}, read {c.status} ({c.method}): {c.text!r}\n      scenario: {u['scenario']!r}")
    print(f"FACT CHECKS on {used} ShARC train utterances with a scenario (TRAINING data; condition_unrelated "
          f"and condition_contradict_direct chosen on it), "
          f"{time.perf_counter() - start:.0f} s:")
    statuses = ("established", "contradicted", "missing")
    print("  gold \\ read     " + "  ".join(f"{s:>12}" for s in statuses) + "   accuracy")
    for want in statuses:
        row = [confusion[(want, s)] for s in statuses]
        total = sum(row)
        print(f"  {want:<14}" + "  ".join(f"{n:>12}" for n in row) + f"   {row[statuses.index(want)] / total if total else 0:.3f}")
    settled = sum(confusion[(w, s)] for w in statuses[:2] for s in statuses)
    wrong_way = confusion[("established", "contradicted")] + confusion[("contradicted", "established")]
    decided = sum(confusion[(w, s)] for w in statuses[:2] for s in statuses[:2])
    print(f"  settled pairs decided: {decided}/{settled}; decided the wrong way: {wrong_way} "
          f"({wrong_way / decided if decided else 0:.3f} of decided); unsettled pairs read as settled: "
          f"{confusion[('missing', 'established')] + confusion[('missing', 'contradicted')]}"
          f"/{sum(confusion[('missing', s)] for s in statuses)}")


def history_matching(utterances: list[dict], trees: dict) -> None:
    stage = VariableStage(**settings.for_stage(settings.resolve({}), "variables"))
    conditions_of: dict[str, list[Condition]] = {}
    matched = correct = answerable = found = dialogues = 0
    for u in utterances:
        if not u.get("history"):
            continue
        tree_id = u["tree_id"]
        if tree_id not in conditions_of:
            doc = Document(tree_id, "ShARC", u["snippet"], f"{tree_id}.md")
            conditions_of[tree_id] = next((found_ for p in chunk_document(doc, 4000, 0)
                                           if (found_ := extract_conditions(p)[:stage.max_conditions])), [])
        conditions = conditions_of[tree_id]
        if not conditions:
            continue
        dialogues += 1
        history = tuple((h["follow_up_question"], h["follow_up_answer"]) for h in u["history"])
        gold = [" ".join(s.strip() for s in ([x for x in spans if not x.rstrip().endswith(":")] or spans))
                for spans in (trees[tree_id]["questions"][q] for q, _ in history)]
        pairs = [(i, next(j for j, (q, a) in enumerate(history) if c.support == follow_up_support(q, a)))
                 for i, c in enumerate(stage._by_history(conditions, as_read(make_query(u["question"], history=history))))
                 if c is not None]
        matched += len(pairs)
        correct += sum(token_f1(conditions[i].text, gold[j]) >= MATCH_F1 for i, j in pairs)
        for j, g in enumerate(gold):
            right = {i for i, c in enumerate(conditions) if token_f1(c.text, g) >= MATCH_F1}
            answerable += bool(right)
            found += any((i, j) in pairs for i in right)
    print(f"HISTORY MATCHING on {dialogues} ShARC train dialogues (TRAINING data; history_match chosen on it):")
    print(f"  matched {matched}: precision {correct / matched if matched else 0:.3f}; "
          f"recall {found / answerable if answerable else 0:.3f} of {answerable} answered questions whose condition was extracted")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-utterances", type=int, default=400,
                        help="fact checks on at most this many utterances (in file order; CPU time)")
    parser.add_argument("--show", type=int, default=0, help="print this many misses of each part")
    parser.add_argument("--skip-facts", action="store_true", help="extraction only (no NLI model)")
    args = parser.parse_args()
    trees = json.loads((TRAIN / "sharc_train_conditions.json").read_text())
    extraction(trees, args.show)
    if not args.skip_facts:
        utterances = json.loads((TRAIN / "sharc_train_trees.json").read_text())
        fact_checks(utterances, trees, args.max_utterances, args.show)
        history_matching(utterances, trees)


if __name__ == "__main__":
    main()
