"""Indexing figures: passages/s for a full build, a re-index with nothing changed, load time, peak RSS.

    .venv/bin/python bench/bench_index.py [FOLDER] [--passages 5000] [--index-type auto|flat|hnsw]

Without FOLDER it indexes a copy of ``sample_kb/documents`` if that exists, else a synthetic KB of
about ``--passages`` passages built from repeated real-looking policy text. The index is written
under a temp copy, never into the folder given.
"""
from __future__ import annotations

import argparse
import resource
import shutil
import tempfile
import time
from pathlib import Path

from core import models  # noqa: E402
from core.kb import KnowledgeBase  # noqa: E402
from core.settings import BY_NAME  # noqa: E402

SAMPLE = Path(__file__).resolve().parent.parent / "sample_kb" / "documents"

PARAGRAPHS = [
    "You could get Carer's Allowance if you care for someone at least 35 hours a week and they get "
    "certain benefits. You do not have to be related to, or live with, the person you care for.",
    "To be eligible, all of the following must apply:\n- you are 16 or over\n- you spend at least 35 hours "
    "a week caring for someone\n- you have been in England, Scotland or Wales for at least 2 of the last "
    "3 years\n- you are not in full-time education",
    "Your earnings must be £196 or less a week after tax, National Insurance and expenses. Expenses can "
    "include 50% of your pension contributions, e.g. a workplace pension. The rate is £81.90 a week.",
    "You can renew your passport online, by post or in person. It usually takes 3 weeks to get a new "
    "passport. You must not book travel until you have a valid passport, i.e. the new one has arrived.",
    "Household waste is collected every other week. Put your bin out by 7am on your collection day. "
    "Garden waste is collected from March to November if you pay the annual charge of £52.50.",
    "Dogs must be microchipped by the time they are 8 weeks old. Mr. Jones, the council's animal welfare "
    "officer, can fine owners up to £500 if a dog is not microchipped. No. 12 of the schedule sets the fees.",
]


def synthetic_kb(folder: Path, passages: int) -> None:
    """Markdown files of ~40 passages each, every file slightly different so nothing is deduplicated."""
    per_file = 40
    for f in range(max(1, passages // per_file)):
        sections = []
        for s in range(per_file):
            body = PARAGRAPHS[(f + s) % len(PARAGRAPHS)]
            sections.append(f"## Section {s} of topic {f}\n\nCase reference {f}-{s}. {body}")
        (folder / f"doc_{f:04d}.md").write_text(f"# Topic {f}\n\n" + "\n\n".join(sections) + "\n")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", help="KB folder (default: sample_kb/documents or synthetic)")
    parser.add_argument("--synthetic", action="store_true", help="use the synthetic KB even if sample_kb exists")
    parser.add_argument("--passages", type=int, default=5000, help="size of the synthetic KB")
    parser.add_argument("--index-type", default=BY_NAME["index_type"].default, choices=BY_NAME["index_type"].choices)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "kb"
        source = Path(args.folder) if args.folder else (SAMPLE if SAMPLE.is_dir() and not args.synthetic else None)
        if source:
            shutil.copytree(source, work, ignore=shutil.ignore_patterns(".*"))
            print(f"KB: copy of {source}")
        else:
            work.mkdir()
            synthetic_kb(work, args.passages)
            print(f"KB: synthetic, ~{args.passages} passages")
        settings = {"index_type": args.index_type}

        started = time.perf_counter()
        models.embed(["warm up"])
        print(f"embedder load: {time.perf_counter() - started:.1f} s")

        started = time.perf_counter()
        kb = KnowledgeBase.build(work, settings)
        full = time.perf_counter() - started
        n = len(kb.passages)
        print(f"full build: {n} passages from {kb.stats['files']} files in {full:.1f} s "
              f"= {n / full:.1f} passages/s ({args.index_type})")

        started = time.perf_counter()
        kb = KnowledgeBase.build(work, settings)
        print(f"re-index, nothing changed: {time.perf_counter() - started:.2f} s "
              f"(embedded {kb.stats['embedded_passages']}, reused {kb.stats['reused_passages']})")

        started = time.perf_counter()
        KnowledgeBase.open(work, settings)
        print(f"open (up-to-date check + load): {time.perf_counter() - started:.2f} s")

        started = time.perf_counter()
        kb = KnowledgeBase.load(work)
        print(f"load: {time.perf_counter() - started:.2f} s")
        started = time.perf_counter()
        for _ in range(20):
            kb.bm25_scores("how many hours a week of caring makes me eligible")
        print(f"BM25 scoring over all passages: {(time.perf_counter() - started) / 20 * 1000:.2f} ms/query")
        print(f"peak RSS: {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
