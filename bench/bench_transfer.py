"""Print the transfer table: every gate configuration on every report set (none used to fit).

    python bench/bench_transfer.py [--preset FILE ...] [--sets "ShARC half A" ...]

Analyses each report set once (traces cached in .cache/eval/), then gates the traces under the
declared defaults, the general learned gate and any presets given: macro-F1, per-action recall,
the share of ASK, hallucination rate (ANSWER when gold is ASK or ABSTAIN), coverage, AUROC of
P(answer) for answerable vs not, and for items with a scenario or history ANSWER vs ASK; then the
95 % interval of macro-F1, hallucination and both AUROCs from resampling each set's rule trees,
contracts, articles or documents (``--replicates 0`` leaves them out).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from core import settings
from core.evaluation import BatchRunner
from core.evaluation.transfer import configurations, format_table, report_sets, table_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", action="append", default=[], help="a preset JSON file to add as a row")
    parser.add_argument("--sets", nargs="*", help="only these report sets")
    parser.add_argument("--json", help="also write the rows to this file")
    parser.add_argument("--contractnli-limit", type=int, help="only the first N ContractNLI dev hypotheses "
                        "(17 per contract, file order)")
    parser.add_argument("--replicates", type=int, default=1000, help="group resamples per interval (0: none)")
    args = parser.parse_args()
    configs = configurations()
    for path in args.preset:
        configs[Path(path).stem] = settings.resolve(settings.parse_preset(Path(path).read_text(encoding="utf-8")))
    runs = {}
    for name, dataset in report_sets(args.contractnli_limit).items():
        if args.sets and name not in args.sets:
            continue
        runs[name] = BatchRunner(None).run(dataset)
        print(f"{name}: {dataset.describe()}; {runs[name].summary()}", flush=True)
    rows = table_rows(runs, configs, args.replicates)
    print()
    print(format_table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
