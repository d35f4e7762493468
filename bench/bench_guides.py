"""Personal questions with a scenario against many guides: the gate on ConditionalQA train.

    python bench/bench_guides.py [--preset FILE ...] [--per-guide N]

TRAINING data (``../shared/data/train/conditionalqa_train.json``), but nothing is fitted on it: no
calibrator, default or learned gate has seen it, so for now it measures how the workbench transfers
to the sample KB's kind of question (a gov.uk guide, the asker's circumstances, a yes/no or a value)
at a scale the sample KB's question sets lack. ``core.evaluation.training.conditionalqa_train`` says
how the items and the one knowledge base of 435 guides are formed. Prints the transfer table's
columns for the declared defaults, the general learned gate and any presets, and how often retrieval
puts the question's own guide first and in the top five. The first run analyses 2,330 questions
(about 17 minutes on 2 cores); later runs read the trace cache.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core import settings  # noqa: E402
from core.evaluation import BatchRunner  # noqa: E402
from core.evaluation.training import conditionalqa_train  # noqa: E402
from core.evaluation.transfer import configurations, format_table, table_rows  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", action="append", default=[], help="a preset JSON file to add as a row")
    parser.add_argument("--per-guide", type=int, help="at most N questions per guide (seeded sample)")
    args = parser.parse_args()
    configs = configurations()
    for path in args.preset:
        configs[Path(path).stem] = settings.resolve(settings.parse_preset(Path(path).read_text(encoding="utf-8")))
    dataset = conditionalqa_train(per_guide=args.per_guide)
    run = BatchRunner(None).run(dataset)
    print(f"ConditionalQA train (TRAINING data, never fitted): {dataset.describe()}; {run.summary()}", flush=True)
    titles = {doc_id: title for doc_id, title, _ in dataset.items[0].documents}
    top_five = [(titles[item.extra["guide"]], [p.passage.title for p in trace.passages[:5]])
                for item, trace in zip(run.items, run.traces)]
    first = sum(bool(found) and found[0] == own for own, found in top_five) / len(top_five)
    among = sum(own in found for own, found in top_five) / len(top_five)
    print(f"retrieval: the question's own guide first for {first:.3f} of the questions, in the top five for "
          f"{among:.3f}\n")
    print(format_table(table_rows({"ConditionalQA": run}, configs)))


if __name__ == "__main__":
    main()
