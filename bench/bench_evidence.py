"""Pragmatic evidence selection against HotpotQA-style supporting facts: sentence-level precision and
recall of the selected sentences against the gold ``evidence`` of the sample questions' ANSWER items.

    .venv/bin/python bench/bench_evidence.py [--gold-passages] [--threads 1] [--verbose]

Passages come from hybrid retrieval on the sample KB (its index is built in sample_kb/documents/.index
if missing, as the tests do) or, with ``--gold-passages`` or when the index cannot be built, from the
gold document's own passages. Two baselines with the same candidate sentences put the figures in
context: the top sentences by embedding cosine with the question (as many as the pragmatic selection
chose), and every sentence (the recall ceiling). If the NLI model loads, the entailment filter's best
sentence is scored the same way and compared with the selection.
"""
from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path

import numpy as np  # noqa: E402

from core import models  # noqa: E402
from core.evidence import EvidenceSelector, candidate_sentences  # noqa: E402
from core.kb import chunk_document, read_documents  # noqa: E402
from core.text import split_sentences  # noqa: E402
from core.settings import defaults  # noqa: E402
from core.types import RetrievedPassage  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_kb" / "documents"
QUESTIONS = ROOT / "sample_kb" / "questions.jsonl"
MARKER = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)]|\([a-z0-9]{1,4}\))\s+")


def norm(text: str) -> str:
    return " ".join(MARKER.sub("", text).lower().split()).rstrip(".;:")


def same(a: str, b: str) -> bool:
    """The same sentence, allowing a bullet marker or a sentence split that differs slightly."""
    a, b = norm(a), norm(b)
    return a == b or (min(len(a), len(b)) >= 20 and (a in b or b in a))


class Score:
    """Micro-averaged sentence-level precision and recall over the questions."""

    def __init__(self):
        self.hits = self.selected = self.found = self.gold = 0

    def add(self, chosen: list[str], gold: list[str]) -> int:
        hits = sum(any(same(c, g) for g in gold) for c in chosen)
        self.hits += hits
        self.selected += len(chosen)
        self.found += sum(any(same(c, g) for c in chosen) for g in gold)
        self.gold += len(gold)
        return hits

    def line(self) -> str:
        p = self.hits / self.selected if self.selected else 0.0
        r = self.found / self.gold if self.gold else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        return f"P {p:.2f}  R {r:.2f}  F1 {f:.2f}  ({self.selected} sentences for {self.gold} gold)"


def passages_for(item: dict, kb, retriever, by_doc: dict) -> tuple[RetrievedPassage, ...]:
    if kb is None:
        return tuple(RetrievedPassage(p, i, 0.0, 0.0, 0.0, 0.0) for i, p in enumerate(by_doc[item["doc_id"]], 1))
    return retriever.run(kb, item["question"])


def load_kb(values: dict, use_gold: bool):
    if use_gold:
        return None, "the gold document's passages (--gold-passages)"
    from core.kb import KnowledgeBase, KnowledgeBaseError
    from core.retrieval import Retriever
    try:
        kb = KnowledgeBase.open(SAMPLE, values)
    except (KnowledgeBaseError, OSError) as exc:
        return None, f"the gold document's passages (the sample KB index could not be opened: {exc})"
    return (kb, Retriever(values["top_k"], values["fusion_alpha"])), \
        f"hybrid retrieval on the sample KB (top {values['top_k']}, α {values['fusion_alpha']})"


def nli_tools():
    try:
        from core import nli
        from core.claims import ClaimBuilder
        nli.get_nli()
        return nli, ClaimBuilder()
    except (models.ModelUnavailable, ImportError) as exc:
        print(f"\nNLI: not available ({exc}); the entailment comparison is skipped")
        return None, None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gold-passages", action="store_true", help="read the gold document, not retrieval")
    parser.add_argument("--threads", type=int, default=1, help="torch and BLAS threads (1 is fastest when busy)")
    parser.add_argument("--verbose", action="store_true", help="one line per question")
    args = parser.parse_args()
    import threadpoolctl
    import torch
    torch.set_num_threads(args.threads)
    threadpoolctl.threadpool_limits(args.threads)  # numpy's BLAS pool stalls small queries on a busy machine

    values = defaults()
    items = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    items = [q for q in items if q["action"] == "ANSWER" and q.get("evidence")]
    loaded, source = load_kb(values, args.gold_passages)
    kb, retriever = loaded if loaded else (None, None)
    docs, _ = read_documents(SAMPLE)
    by_doc = {d.id: chunk_document(d, values["chunk_chars"], values["chunk_overlap"]) for d in docs}
    selector = EvidenceSelector()
    print(f"{len(items)} ANSWER questions; passages from {source}; selector {selector}")

    pragmatic, dense, everything, reachable = Score(), Score(), Score(), 0
    nli, claims = nli_tools()
    nli_best, nli_kept_pragmatic = Score(), Score()
    agree = kept_fallbacks = 0
    latencies = []
    for item in items:
        gold = [s.text for s in split_sentences(item["evidence"])]
        retrieved = passages_for(item, kb, retriever, by_doc)
        started = time.perf_counter()
        selection = selector.run(item["question"], retrieved)
        latencies.append(time.perf_counter() - started)
        top = [r.passage for r in retrieved[:selector.top_k_passages]]
        candidates = [c.sentence.text for p in top for c in candidate_sentences(p)]
        reachable += any(same(c, g) for c in candidates for g in gold)
        chosen = [s.text for s in selection.sentences]
        hits = pragmatic.add(chosen, gold)
        everything.add(candidates, gold)
        if candidates:
            vectors = models.embed([item["question"]] + candidates)
            order = np.argsort(-(vectors[1:] @ vectors[0]), kind="stable")
            dense.add([candidates[i] for i in order[:max(1, len(chosen))]], gold)
        line = (f"  {item['id']:11s} {hits}/{len(chosen)} hit  stop={selection.stop:15s} "
                f"uncovered={list(selection.uncovered)}")
        if nli:
            claim = claims.run(item["question"]).text
            lists = [[c.sentence.text for c in candidate_sentences(p)] or [p.text] for p in top]
            best = nli.best_sentences(lists, [claim] * len(lists))
            entail = [scores.entailment for _, scores in best]
            j = int(np.argmax(entail))
            nli_sentence = lists[j][best[j][0]]
            nli_best.add([nli_sentence], gold)
            agree += nli_sentence in chosen
            kept = {top[i].id for i, e in enumerate(entail) if e >= values["entail_keep"]}
            kept_fallbacks += not kept
            nli_kept_pragmatic.add([s.text for s in selection.sentences if not kept or s.passage_id in kept], gold)
            verdict = "hit" if any(same(nli_sentence, g) for g in gold) else "miss"
            line += f"  NLI best (P(entail) {entail[j]:.2f}) {verdict}"
        if args.verbose:
            print(line)

    n = len(items)
    print(f"\ngold sentence within the top {selector.top_k_passages} passages' sentences: {reachable}/{n}")
    print(f"pragmatic selection:            {pragmatic.line()}")
    print(f"dense top-n (same count):       {dense.line()}")
    print(f"all candidate sentences:        {everything.line()}")
    print(f"selection latency: p50 {np.percentile(latencies, 50) * 1000:.0f} ms "
          f"(spaCy + one embedding batch, {args.threads} torch/BLAS thread(s))")
    if nli:
        print(f"NLI best sentence (1 per q):    {nli_best.line()}")
        print(f"pragmatic, NLI-kept passages:   {nli_kept_pragmatic.line()}  "
              f"({kept_fallbacks}/{n} questions had no passage ≥ entail_keep: all kept)")
        print(f"the NLI best sentence is one of the selected sentences for {agree}/{n} questions")


if __name__ == "__main__":
    main()
