"""Where indexing time goes on a corpus of real documents, and what retrieval and analysis cost on it.

    .venv/bin/python bench/bench_scale.py [--documents 2000] [--queries 300] [--analyses 15]
        [--vector-store faiss|lancedb] [--index-type auto|flat|hnsw] [--passages 100000]

The corpus is assembled from the real text in ``../shared/data`` (read only, nothing fitted):
every SQuAD 2.0 train paragraph of the ten articles (one document each, titled by its article),
every distinct ShARC rule snippet (train trees and the dev half), the ContractNLI dev contracts,
the ConditionalQA train evidence of each gov.uk page, then FEVER-NLI evidence texts until
``--documents`` is reached. It is written under ``.cache/bench-scale/`` and indexed with the
default local setup (``KnowledgeBase.build``), timing each stage from the build's own progress
reports; ``--vector-store lancedb`` puts the vectors in LanceDB (embedded, or at $AW_LANCEDB_URI; the
scale extra). Then: retrieval recall@5 of the gold SQuAD paragraph for answerable SQuAD questions,
the dense search's p50 for them, and ``analyze()`` p50/p95 for a few.

``--passages N`` adds a large KB: the corpus plus synthetic passages up to N in all, each three
real sentences drawn at random (seeded) from the corpus and the MultiNLI and FEVER-NLI texts, 50 to
a ``.jsonl`` file. It is indexed once into ``.cache/bench-scale/large-N`` (kept, so a second run only
loads it) and measured the same way: index throughput, peak RSS, recall@5 among the distractors,
``analyze()`` p50/p95. Prints figures; asserts nothing.
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
from core.text import split_sentences

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
OUT = ROOT / ".cache" / "bench-scale" / "corpus"
PER_FILE = 50  # synthetic passages per .jsonl file of the large KB


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


def sentence_pool(docs: dict[str, str]) -> list[str]:
    """Distinct real sentences of the corpus and of the MultiNLI and FEVER-NLI pairs (premises and
    hypotheses), 30 to 400 characters long."""
    texts = list(docs.values())
    for path in sorted((DATA / "train" / "nli").glob("*.tsv")):
        with path.open(encoding="utf-8", newline="") as handle:
            texts += [field for row in csv.reader(handle, delimiter="\t") if row and row[0] != "label"
                      for field in row[1:3]]
    return list(dict.fromkeys(s.text for text in texts for s in split_sentences(text) if 30 <= len(s.text) <= 400))


def write_large(folder: Path, docs: dict[str, str], total: int) -> int:
    """Write the corpus plus synthetic three-sentence passages (seeded) into ``folder``; how many synthetic."""
    pool = sentence_pool(docs)
    rng = random.Random(0)
    synthetic = max(0, total - len(docs) * 2)  # the corpus's own documents give about two passages each
    for name, text in docs.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "synthetic").mkdir(parents=True, exist_ok=True)
    for first in range(0, synthetic, PER_FILE):
        lines = [json.dumps({"id": f"s{n:06d}", "title": f"Synthetic {n}", "text": " ".join(rng.sample(pool, 3))})
                 for n in range(first, min(first + PER_FILE, synthetic))]
        (folder / "synthetic" / f"{first // PER_FILE:05d}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return synthetic


def build_timed(folder: Path, config: dict, label: str) -> KnowledgeBase:
    """Index ``folder`` (or load it when its index is current) and print where the time went."""
    stages: dict[str, list[float]] = {}

    def progress(done: int, total: int, stage: str) -> None:
        now = time.perf_counter()
        stages.setdefault(stage, [now, now])[1] = now

    started = time.perf_counter()
    kb = KnowledgeBase.open(folder, config, progress=progress)
    seconds = time.perf_counter() - started
    if stages:
        print(f"index {label} ({config['vector_store']}, {config['index_type']}): {len(kb.passages)} passages in "
              f"{seconds:.1f} s = {len(kb.passages) / seconds:.1f} passages/s; peak RSS {peak_rss():.0f} MB")
        for stage, (first, last) in stages.items():
            print(f"  {stage:<36} {last - first:7.1f} s")
    else:
        print(f"index {label}: {len(kb.passages)} passages loaded in {seconds:.1f} s (indexed earlier: "
              f"{kb.stats.get('seconds')} s); peak RSS {peak_rss():.0f} MB")
    return kb


def peak_rss() -> float:
    """This process's peak resident memory so far, in MB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(kb: KnowledgeBase, questions: list[tuple[str, str]], queries: int, analyses: int) -> None:
    """Recall@5 of the gold SQuAD paragraph, the dense search's p50 and ``analyze()`` p50/p95."""
    rng = random.Random(0)
    asked = rng.sample(questions, min(queries, len(questions)))
    retriever = Retriever(top_k=5, fusion_alpha=0.5)
    hits, searches = 0, []
    vectors = models.embed([question for question, _ in asked])
    for (question, gold), vector in zip(asked, vectors):
        t0 = time.perf_counter()
        kb.dense_search(vector, 20)  # the candidate pool the retriever asks for at top_k=5
        searches.append(time.perf_counter() - t0)
        found = {p.passage.doc_id for p in retriever.run(kb, question, vector)}
        hits += Path(gold).with_suffix("").as_posix() in found
    print(f"  retrieval recall@5 of the gold SQuAD paragraph: {hits}/{len(asked)} = {hits / max(len(asked), 1):.3f}"
          + (f"; dense search p50 {statistics.median(searches) * 1000:.1f} ms" if searches else ""))
    pipeline = Pipeline(kb)
    times = []
    for question, _ in asked[:analyses]:
        t0 = time.perf_counter()
        pipeline.analyze(make_query(question))
        times.append(time.perf_counter() - t0)
    if times:
        q = statistics.quantiles(times, n=20) if len(times) > 1 else times * 19
        print(f"  analyze(): p50 {statistics.median(times):.2f} s, p95 {q[18]:.2f} s over {len(times)} questions; "
              f"peak RSS {peak_rss():.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--analyses", type=int, default=15)
    parser.add_argument("--vector-store", choices=BY_NAME["vector_store"].choices, default="faiss")
    parser.add_argument("--index-type", choices=BY_NAME["index_type"].choices, default=BY_NAME["index_type"].default)
    parser.add_argument("--passages", type=int, default=0, help="also build and measure a KB of this many passages")
    args = parser.parse_args()
    config = {"vector_store": args.vector_store, "index_type": args.index_type}

    docs, questions = assemble(args.documents)
    if args.passages:
        folder = OUT.parent / f"large-{args.passages}"
        if not (folder / ".index").is_dir():
            shutil.rmtree(folder, ignore_errors=True)
            print(f"large KB: the corpus and {write_large(folder, docs, args.passages)} synthetic passages in {folder}")
        measure(build_timed(folder, config, "large KB"), questions, args.queries, args.analyses)
        return
    shutil.rmtree(OUT, ignore_errors=True)
    for name, text in docs.items():
        (OUT / name).parent.mkdir(parents=True, exist_ok=True)
        (OUT / name).write_text(text, encoding="utf-8")
    kinds = {}
    for name in docs:
        kinds[name.split("/")[0]] = kinds.get(name.split("/")[0], 0) + 1
    print(f"corpus: {len(docs)} documents ({', '.join(f'{k} {v}' for k, v in kinds.items())}) in {OUT}")
    measure(build_timed(OUT, config, "corpus"), questions, args.queries, args.analyses)


if __name__ == "__main__":
    main()
