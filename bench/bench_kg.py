"""Knowledge-graph figures: build time and size for the sample KB and a synthetic 5,000-passage KB,
and query-time subgraph latency (target: p50 ≤ 100 ms).

    .venv/bin/python bench/bench_kg.py [--passages 5000] [--budget 600] [--threads 1] [--no-synthetic] [--keep DIR]

The synthetic KB recombines the sample KB's sentences into 10-passage documents and renames every
entity per document with invented names, so the graph keeps growing instead of repeating the same
triples. If building it would take longer than ``--budget`` seconds (measured on a 10 % slice
first), the full build is skipped and the figure is extrapolated from the measured rate, said so.
Nothing is written to the sample KB; the synthetic graph is saved (to time save/load) under a temp
directory, or in ``--keep DIR``, from where a later run loads it to re-measure latency only.
"""
from __future__ import annotations

import argparse
import json
import random
import resource
import tempfile
import time
from pathlib import Path

import numpy as np  # noqa: E402

from core import kg, models  # noqa: E402
from core.kb import Document, chunk_document, read_documents  # noqa: E402
from core.text import sentence_kind, split_sentences  # noqa: E402
from core.settings import defaults  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_kb" / "documents"
QUESTIONS = ROOT / "sample_kb" / "questions.jsonl"
SYLLABLES = ("mar low tes by var holm gren nock cor ran dun mere ost fenn sol lis bright kes trel rin har row "
             "gate ard morr vell lund dorn pale wick thorn ald bury brae calder elm hollin").split()
FIRST_NAMES = ("Edith Anselm Isolde Mira Tobias Osric Hedda Colm Piet Agnes Bram Celia Dora Ewan Freya Gideon "
               "Hilde Ivo Jora Kasimir Lena Magnus Nell Otto").split()


def sample_passages() -> list:
    docs, _ = read_documents(SAMPLE)
    values = defaults()
    return [p for d in docs for p in chunk_document(d, values["chunk_chars"], values["chunk_overlap"])]


def invented(rng: random.Random, name: str, label: str) -> str:
    """A made-up name of the same shape: a person gets a first name and a surname; "Corran Shipyards"
    becomes "<new> Shipyards", keeping the word that says what kind of thing it is."""
    word = "".join(rng.choice(SYLLABLES) for _ in range(rng.choice((2, 3)))).capitalize()
    words = name.split()
    if words[0].lower() == "the":
        return f"{words[0]} {invented(rng, ' '.join(words[1:]), label)}" if len(words) > 1 else word
    if label == "PERSON":
        return f"{rng.choice(FIRST_NAMES)} {word}"
    return " ".join([word] + words[1:])


def synthetic_passages(n: int, seed: int = 7) -> list:
    """~n passages: documents of ten 5-sentence paragraphs drawn from the sample KB's sentences, with
    each named entity renamed consistently within a document."""
    docs, _ = read_documents(SAMPLE)
    pool = [s.text for d in docs for s in split_sentences(d.text)
            if sentence_kind(s) == "sentence" and len(s.text.split()) >= 5]
    parsed = models.parse(pool)
    names = [[(e.text, e.label_) for e in doc.ents if e.label_ in ("PERSON", "ORG", "GPE", "LOC", "FAC",
                                                                    "WORK_OF_ART", "EVENT", "PRODUCT")]
             for doc in parsed]
    rng = random.Random(seed)
    out, d = [], 0
    while len(out) < n:
        d += 1
        rename: dict[str, str] = {}
        paragraphs = []
        for _ in range(10):
            picked = rng.sample(range(len(pool)), 5)
            text = " ".join(pool[i] for i in picked)
            for name, label in sorted({n for i in picked for n in names[i]}, key=lambda n: -len(n[0])):
                text = text.replace(name, rename.setdefault(name, invented(rng, name, label)))
            paragraphs.append(text)
        title = kg.normalise(next(iter(rename.values()), f"Topic {d}"))
        body = f"# {title}\n\n" + "\n\n".join(paragraphs)
        out += chunk_document(Document(f"synthetic/doc_{d:04d}", title, body, f"doc_{d:04d}.md"), 700, 1)
    return out[:n]


class StageClock:
    """A progress callback that remembers when each stage started and finished."""

    def __init__(self):
        self.first: dict[str, float] = {}
        self.last: dict[str, float] = {}

    def __call__(self, done: int, total: int, stage: str) -> None:
        now = time.perf_counter()
        self.first.setdefault(stage, now)
        self.last[stage] = now

    def report(self) -> str:
        return ", ".join(f"{stage.split(': ')[-1]} {self.last[stage] - self.first[stage]:.1f} s"
                         for stage in self.first)


def describe(graph: kg.KnowledgeGraph, seconds: float, clock: StageClock) -> None:
    s = graph.stats
    print(f"  build {seconds:.1f} s ({clock.report()}); {s.passages / seconds:.1f} passages/s")
    print(f"  candidate triples {s.candidate_triples} ({s.unique_triples} distinct) → edges {s.edges}, "
          f"kept ratio {s.kept_ratio:.2f}; nodes {s.nodes} (of {s.nodes_before_pruning} entities before "
          f"pruning isolated ones); avg weight {s.avg_weight:.3f}")
    print(f"  categories: {json.dumps(s.categories)}")


def latency(graph: kg.KnowledgeGraph, questions: list[dict], repeats: int = 3) -> tuple[float, float]:
    query = kg.SubgraphQuery()
    query.run(graph, "warm up")
    times = []
    for _ in range(repeats):
        for q in questions:
            started = time.perf_counter()
            query.run(graph, q["question"], missing=q.get("missing_list", ()))
            times.append(time.perf_counter() - started)
    return float(np.percentile(times, 50) * 1000), float(np.percentile(times, 90) * 1000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=5000, help="size of the synthetic KB")
    parser.add_argument("--budget", type=float, default=600, help="seconds allowed for the synthetic build")
    parser.add_argument("--threads", type=int, default=1, help="torch and BLAS threads (1 is fastest when busy)")
    parser.add_argument("--no-synthetic", action="store_true", help="only the sample KB")
    parser.add_argument("--keep", metavar="DIR", help="save the synthetic graph in DIR; reuse it if already there")
    args = parser.parse_args()

    import threadpoolctl
    import torch
    torch.set_num_threads(args.threads)
    threadpoolctl.threadpool_limits(args.threads)  # numpy's BLAS pool stalls small queries on a busy machine
    started = time.perf_counter()
    models.parse(["warm up"])
    models.embed(["warm up"])
    print(f"models loaded in {time.perf_counter() - started:.1f} s (torch and BLAS threads: {args.threads})")
    questions = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    for q in questions:
        q["missing_list"] = (q["missing"],) if q.get("missing") else ()

    passages = sample_passages()
    print(f"\nsample KB: {len(passages)} passages")
    for against in ("sentence", "passage"):
        clock = StageClock()
        started = time.perf_counter()
        graph = kg.GraphBuilder(validate_against=against).run(passages, progress=clock)
        seconds = time.perf_counter() - started
        print(f" validation against the source {against}:")
        describe(graph, seconds, clock)
        if against == "sentence":
            sample_graph = graph
    p50, p90 = latency(sample_graph, questions)
    print(f"  subgraph latency over {len(questions)} sample questions: p50 {p50:.1f} ms, p90 {p90:.1f} ms")
    by_action: dict[str, list] = {}
    query = kg.SubgraphQuery()
    for q in questions:
        anchors = [p.id for p in passages if p.doc_id == q.get("doc_id")]
        sg = query.run(sample_graph, q["question"], missing=q["missing_list"], anchor_passages=anchors)
        by_action.setdefault(q["action"], []).append(sg)
    print("  gate flags by gold action (anchors: the gold document's passages):")
    for action, subgraphs in by_action.items():
        n = len(subgraphs)
        print(f"    {action:8s} n={n:2d}  matched>0 {sum(s.n_matched > 0 for s in subgraphs) / n:.0%}  "
              f"complete_path {sum(s.complete_path for s in subgraphs) / n:.0%}  "
              f"has_var {sum(s.has_var for s in subgraphs) / n:.0%}  "
              f"mean PathScore {np.mean([s.path_score for s in subgraphs]):.2f}")

    if not args.no_synthetic:
        graph = synthetic_graph(args)
        if graph is not None:
            synthetic_latency(graph, questions)


def synthetic_graph(args) -> kg.KnowledgeGraph | None:
    """Build (or, with --keep and a graph already there, load) the synthetic KB's graph."""
    keep = Path(args.keep) if args.keep else None
    if keep and (keep / "kg.json").is_file():
        graph = kg.KnowledgeGraph.load(keep)
        s = graph.stats
        print(f"\nsynthetic KB: graph loaded from {keep} (built there earlier: {s.passages} passages in "
              f"{s.seconds:.0f} s; {s.edges} edges, {s.nodes} nodes, kept ratio {s.kept_ratio:.2f})")
        return graph
    print(f"\nsynthetic KB: generating {args.passages} passages …")
    synthetic = synthetic_passages(args.passages)
    probe = synthetic[: max(50, len(synthetic) // 10)]
    clock = StageClock()
    started = time.perf_counter()
    kg.GraphBuilder().run(probe, progress=clock)
    rate = len(probe) / (time.perf_counter() - started)
    estimate = len(synthetic) / rate
    print(f" slice of {len(probe)} passages: {rate:.1f} passages/s ({clock.report()}) → "
          f"full build estimated at {estimate:.0f} s")
    if estimate > args.budget:
        print(f" full build skipped: the estimate exceeds the --budget of {args.budget:.0f} s. "
              f"EXTRAPOLATED build time for {len(synthetic)} passages: {estimate / 60:.1f} min")
        return None
    clock = StageClock()
    started = time.perf_counter()
    graph = kg.GraphBuilder().run(synthetic, progress=clock)
    seconds = time.perf_counter() - started
    print(f" full build of {len(synthetic)} passages (measured):")
    describe(graph, seconds, clock)
    with tempfile.TemporaryDirectory() as tmp:
        folder = keep or Path(tmp)
        started = time.perf_counter()
        graph.save(folder)
        saved = time.perf_counter() - started
        size = sum(f.stat().st_size for f in folder.glob("kg.*")) / 1e6
        started = time.perf_counter()
        graph = kg.KnowledgeGraph.load(folder)
        print(f"  save {saved:.2f} s, load {time.perf_counter() - started:.2f} s, {size:.1f} MB on disk")
    return graph


def synthetic_latency(graph: kg.KnowledgeGraph, questions: list[dict]) -> None:
    rng = random.Random(3)
    synthetic_questions = [{"question": f"What do we know about {graph.nodes[i].label}?"}
                           for i in rng.sample(range(len(graph.nodes)), min(60, len(graph.nodes)))]
    synthetic_questions += [{"question": q["question"]} for q in questions if q["action"] == "ABSTAIN"]
    p50, p90 = latency(graph, synthetic_questions, repeats=2)
    print(f"  subgraph latency over {len(synthetic_questions)} questions: p50 {p50:.1f} ms, p90 {p90:.1f} ms")
    print(f"  peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")

if __name__ == "__main__":
    main()
