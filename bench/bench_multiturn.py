"""Multi-turn vs single-turn decision accuracy on the ShARC dev half (issue 7).

    .venv/bin/python bench/bench_multiturn.py [--limit 150] [--seed 0] [--data PATH]

Each utterance is read against its own rule snippet (a one-document KB, built once per snippet
in a temporary folder and keyed by its content hash). Three ways of deciding it:

- single-turn: the question and scenario only, the dialogue history ignored;
- history, one shot: the question, scenario and history analysed together (one ``analyze``);
- dialogue loop: ``core.dialogue.decide_with_history`` — turn 0 is the question and scenario,
  each history answer the reply to its follow-up; the last turn decides (and abstains when all
  that is still open was asked already).

Accuracy is the share of utterances whose action (ANSWER / ASK / ABSTAIN) matches the gold one,
overall and split by whether the utterance has a history; "yes/no" is the share of gold Yes/No
utterances answered with the right polarity. PassiveQA reports 78.4 % single-turn vs 25.6 %
multi-turn for its planner.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from core import settings  # noqa: E402
from core.dialogue import decide_with_history  # noqa: E402
from core.evaluation.importers import load_dataset  # noqa: E402
from core.evaluation.runner import documents_key, kb_folder  # noqa: E402
from core.gate import decide  # noqa: E402
from core.kb import KnowledgeBase  # noqa: E402
from core.pipeline import Pipeline, make_query  # noqa: E402

SHARC = ROOT.parent / "shared" / "data" / "sharc_dev_half_a.json"
MODES = ("single-turn", "history, one shot", "dialogue loop")


def run(path: Path, limit: int | None, seed: int | None) -> None:
    values = settings.defaults()
    dataset = load_dataset("sharc", path, limit=limit, seed=seed)
    print(dataset.describe())
    pipelines: dict[str, Pipeline] = {}
    rows = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for n, item in enumerate(dataset.items, 1):
            key = documents_key(item.documents)
            if key not in pipelines:
                pipelines[key] = Pipeline(KnowledgeBase.open(kb_folder(item.documents, Path(tmp)), values))
            pipeline = pipelines[key]
            single = decide(pipeline.analyze(make_query(item.question, item.scenario), values), values)
            oneshot = decide(pipeline.analyze(make_query(item.question, item.scenario, item.history), values), values)
            dialogue = decide_with_history(pipeline, item, values)
            rows.append((item, [(single.action, single.answer_polarity), (oneshot.action, oneshot.answer_polarity),
                                (dialogue.action, dialogue.decision.answer_polarity
                                 if dialogue.action == "ANSWER" else "")]))
            if n % 25 == 0:
                print(f"  {n}/{len(dataset.items)} utterances, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    seconds = time.perf_counter() - started
    print(f"{len(rows)} utterances over {len(pipelines)} snippets in {seconds:.0f} s\n")
    report(rows)


def report(rows) -> None:
    groups = {"all": rows, "no history": [r for r in rows if not r[0].history],
              "with history": [r for r in rows if r[0].history]}
    print(f"{'decision accuracy':<22}" + "".join(f"{g + f' (n={len(rs)})':>24}" for g, rs in groups.items()))
    for m, mode in enumerate(MODES):
        cells = []
        for rs in groups.values():
            right = sum(r[1][m][0] == r[0].action for r in rs)
            cells.append(f"{right / len(rs):>23.1%} " if rs else f"{'—':>24}")
        print(f"{mode:<22}" + "".join(cells))
    yes_no = [r for r in rows if r[0].answers and r[0].answers[0].lower() in ("yes", "no")]
    print(f"\nyes/no right (gold Yes/No, n={len(yes_no)}): " + ", ".join(
        f"{mode} {sum(r[1][m] == ('ANSWER', r[0].answers[0].lower()) for r in yes_no) / max(1, len(yes_no)):.1%}"
        for m, mode in enumerate(MODES)))
    for m, mode in enumerate(MODES):
        confusion = Counter((r[0].action, r[1][m][0]) for r in rows)
        print(f"\n{mode}: gold → predicted")
        for gold in ("ANSWER", "ASK", "ABSTAIN"):
            print(f"  {gold:<8}" + "  ".join(f"{pred} {confusion[(gold, pred)]:>4}"
                                             for pred in ("ANSWER", "ASK", "ABSTAIN")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=SHARC, help="a ShARC v1 JSON file")
    parser.add_argument("--limit", type=int, default=None, help="analyse N utterances (a seeded sample with --seed)")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    run(args.data, args.limit, args.seed)


if __name__ == "__main__":
    main()
