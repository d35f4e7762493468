"""Where indexing time goes on a corpus of real documents, and what retrieval and analysis cost on it.

    .venv/bin/python bench/bench_scale.py [--documents 2000] [--queries 40] [--analyses 15]
        [--vector-store faiss|lancedb] [--index-type flat|hnsw]

The corpus is assembled from the real text in ``../shared/data`` (read only, nothing fitted):
every SQuAD 2.0 train paragraph of the ten articles (one document each, titled by its article),
every distinct ShARC rule snippet (train trees and the dev half), the ContractNLI dev contracts,
the ConditionalQA train evidence of each gov.uk page, then FEVER-NLI evidence texts until
``--documents`` is reached. It is written under ``.cache/bench-scale/`` and indexed with the
default local setup (``KnowledgeBase.build``), timing each stage from the build's own progress
reports; ``--vector-store lancedb`` puts the vectors in LanceDB (embedded, or at $AW_LANCEDB_URI; the
scale extra). Then: retrieval recall@5 of the gold SQuAD paragraph for answerable SQuAD questions,
the dense search's p50 for them, and ``analyze()`` p50/p95 for a few. Prints figures; asserts nothing.
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import random
import re
import resource
import shutil
import statistics
import time
from pathlib import Path

from core import models
from core.kb import KnowledgeBase
from core.pipeline import Pipeline, make_query
from core.retrieval import Retriever
from core.settings import BY_NAME

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
OUT = ROOT / ".cache" / "bench-scale" / "corpus"


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "doc"


def assemble(limit: int) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """{file name: text} of the corpus, and (question, gold file name) pairs for SQuAD."""
    docs: dict[str, str] = {}
    questions: list[tuple[str, str]] = []
    squad = json.loads((DATA / "train" / "squad2_train_first10.json").read_text(encoding="utf-8"))["data"]
    for article in squad:
        title = article["title"].replace("_", " ")
        for n, paragraph in enumerate(article["paragraphs"]):
            name = f"squad/{_slug(title)}-{n:03d}.md"
            docs[name] = f"# {title}\n\n{paragraph['context']}\n"
            questions += [(q["question"], name) for q in paragraph["qas"] if not q.get("is_impossible")]
    trees = json.loads((DATA / "train" / "sharc_train_trees.json").read_text(encoding="utf-8"))
    dev = json.loads((DATA / "sharc_dev_half_a.json").read_text(encoding="utf-8"))
    for item in [*trees, *dev]:
        snippet = item["snippet"]
        docs.setdefault(f"sharc/{_digest(snippet)}.md", snippet)
    for n, contract in enumerate(json.loads((DATA / "contractnli_dev.json").read_text(encoding="utf-8"))["documents"]):
        docs[f"contracts/nda-{n:03d}.txt"] = contract["text"]
    pages: dict[str, list[str]] = {}
    for item in json.loads((DATA / "train" / "conditionalqa_train.json").read_text(encoding="utf-8")):
        pages.setdefault(item["url"], []).extend(item["evidences"])
    for url, evidence in pages.items():
        text = re.sub(r"<[^>]+>", "", "\n\n".join(dict.fromkeys(evidence)))
        docs[f"govuk/{_slug(url.rsplit('/', 1)[-1])}.md"] = text
    for path in sorted((DATA / "train" / "nli").glob("fever_nli_2way_*.tsv")):
        with path.open(encoding="utf-8", newline="") as handle:
            for row in csv.reader(handle, delimiter="\t"):
                if len(docs) >= limit:
                    break
                if len(row) >= 3 and row[0] != "label" and len(row[1]) > 200:  # label, premise, hypothesis
                    docs.setdefault(f"fever/{_digest(row[1])}.txt", row[1])
    return dict(list(docs.items())[:limit]), questions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--analyses", type=int, default=15)
    parser.add_argument("--vector-store", choices=BY_NAME["vector_store"].choices, default="faiss")
    parser.add_argument("--index-type", choices=BY_NAME["index_type"].choices, default="flat")
    args = parser.parse_args()
    config = {"vector_store": args.vector_store, "index_type": args.index_type}

    docs, questions = assemble(args.documents)
    shutil.rmtree(OUT, ignore_errors=True)
    for name, text in docs.items():
        (OUT / name).parent.mkdir(parents=True, exist_ok=True)
        (OUT / name).write_text(text, encoding="utf-8")
    kinds = {}
    for name in docs:
        kinds[name.split("/")[0]] = kinds.get(name.split("/")[0], 0) + 1
    print(f"corpus: {len(docs)} documents ({', '.join(f'{k} {v}' for k, v in kinds.items())}) in {OUT}")

    stages: dict[str, list[float]] = {}

    def progress(done: int, total: int, stage: str) -> None:
        now = time.perf_counter()
        stages.setdefault(stage, [now, now])[1] = now

    started = time.perf_counter()
    kb = KnowledgeBase.build(OUT, config, progress=progress)
    seconds = time.perf_counter() - started
    print(f"index ({args.vector_store}, {args.index_type}): {len(kb.passages)} passages in {seconds:.1f} s = "
          f"{len(kb.passages) / seconds:.1f} passages/s; "
          f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    for stage, (first, last) in stages.items():
        print(f"  {stage:<36} {last - first:7.1f} s")

    rng = random.Random(0)
    asked = rng.sample(questions, min(args.queries, len(questions)))
    retriever = Retriever(top_k=5, fusion_alpha=0.5)
    hits, searches = 0, []
    for question, gold in asked:
        vector = models.embed([question])[0]
        t0 = time.perf_counter()
        kb.dense_search(vector, 20)  # the candidate pool the retriever asks for at top_k=5
        searches.append(time.perf_counter() - t0)
        found = {p.passage.doc_id for p in retriever.run(kb, question, vector)}
        hits += Path(gold).with_suffix("").as_posix() in found
    print(f"retrieval recall@5 of the gold SQuAD paragraph: {hits}/{len(asked)} = {hits / max(len(asked), 1):.3f}"
          + (f"; dense search p50 {statistics.median(searches) * 1000:.1f} ms" if searches else ""))

    pipeline = Pipeline(kb)
    times = []
    for question, _ in asked[:args.analyses]:
        t0 = time.perf_counter()
        pipeline.analyze(make_query(question))
        times.append(time.perf_counter() - t0)
    if times:
        q = statistics.quantiles(times, n=20) if len(times) > 1 else times * 19
        print(f"analyze(): p50 {statistics.median(times):.2f} s, p95 {q[18]:.2f} s over {len(times)} questions; "
              f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
