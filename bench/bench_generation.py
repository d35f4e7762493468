"""Generation figures with the local generator: per-stage latency and real outputs.

    .venv/bin/python bench/bench_generation.py [--questions 6] [--threads N] [--no-pipeline]

Stages timed per sample question (cache cleared, so every call is a real generation):
step-back question, claim rewrite, premise generation and a generated answer (the answer
agent is extractive by default; the generated answer is timed to show what it would cost).
When the NLI model is available it also times analyze() + the generation stages the
pipeline would run (step-back, claim rewrite, premises when Sufficiency < τ, the response)
and reports the p50 against the 6 s target. ``--threads`` sets torch's thread count: on a
machine whose cores are busy, fewer threads than cores avoids oversubscription.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core import models, prompts, settings  # noqa: E402
from core.claims import ClaimBuilder  # noqa: E402
from core.generation import CACHE, Backend, LocalBackend, TemplateBackend  # noqa: E402
from core.stepback import ClaimRewriter, StepBackRewriter  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DOCS = ROOT / "sample_kb" / "documents"
SAMPLE_QUESTIONS = ROOT / "sample_kb" / "questions.jsonl"


def pick_questions(n: int) -> list[dict]:
    """Spread over domains and actions: round-robin over (domain, action) groups."""
    rows = [json.loads(line) for line in SAMPLE_QUESTIONS.read_text().splitlines() if line.strip()]
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in rows:
        groups.setdefault((r["domain"], r["action"]), []).append(r)
    out: list[dict] = []
    while len(out) < n and any(groups.values()):
        for key in sorted(groups):
            if groups[key] and len(out) < n:
                out.append(groups[key].pop(0))
    return out


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - start


def summary(name: str, seconds: list[float]) -> str:
    if not seconds:
        return f"{name:<22} (not run)"
    return (f"{name:<22} n={len(seconds):<3} p50={statistics.median(seconds):6.2f} s  "
            f"max={max(seconds):6.2f} s  mean={statistics.mean(seconds):6.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=6)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--no-pipeline", action="store_true", help="skip analyze() (no NLI model needed)")
    parser.add_argument("--pipeline-only", action="store_true", help="skip the per-stage outputs")
    parser.add_argument("--template-premises", action="store_true",
                        help="abduction without generated premises (templates only) in the analyze() timing")
    args = parser.parse_args()

    import torch
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch threads: {torch.get_num_threads()}")

    local = LocalBackend()
    _, load_s = timed(local.load)
    print(f"local generator {local.id}: load {load_s:.1f} s\n")
    questions = pick_questions(args.questions)
    rules = ClaimBuilder()
    stepback, claims = StepBackRewriter(local), ClaimRewriter(local)
    times: dict[str, list[float]] = {"step-back": [], "claim rewrite": [], "premises": [], "generated answer": []}

    for q in [] if args.pipeline_only else questions:
        CACHE.clear()
        question = q["question"]
        print(f"[{q['id']}] {question}" + (f"  (scenario: {q['scenario']})" if q.get("scenario") else ""))
        sb, t = timed(lambda: stepback.run(question))
        times["step-back"].append(t)
        print(f"  step-back ({sb.source}, {t:.2f} s): {sb.abstract}"
              + (f"   [model said {sb.generated!r}: {sb.warning}]" if sb.warning else ""))
        rule_claim = rules.run(question)
        cr, t = timed(lambda: claims.run(question, rule_claim))
        times["claim rewrite"].append(t)
        print(f"  claim ({cr.claim.source}, {t:.2f} s): {cr.claim.text}"
              + (f"   [model said {cr.generated!r}: {cr.warning}]" if cr.warning else ""))
        evidence = [q["evidence"]] if q.get("evidence") else []
        known = [q["scenario"]] if q.get("scenario") else []
        out, t = timed(lambda: local.generate(prompts.premises(question, evidence, known, 3), 64))
        times["premises"].append(t)
        print(f"  premises ({out.backend}, {t:.2f} s): " + " | ".join(out.text.splitlines()))
        sources = [(q.get("doc_id", "source"), q["evidence"])] if q.get("evidence") else [("none", "")]
        out, t = timed(lambda: local.generate(prompts.answer(question, sources), 48))
        times["generated answer"].append(t)
        print(f"  generated answer ({out.backend}, {t:.2f} s): {out.text!r}\n")

    if not args.pipeline_only:
        print("Per-stage generation latency (local generator, no cache hits):")
        for name, values in times.items():
            print("  " + summary(name, values))

    if args.no_pipeline:
        return
    try:
        from core import nli
        nli.get_nli()
    except models.ModelUnavailable as exc:
        print(f"\nanalyze() not timed: {exc}")
        return
    pipeline_p50(questions, local, TemplateBackend() if args.template_premises else local)


def pipeline_p50(questions: list[dict], local: LocalBackend, premise_generator: Backend) -> None:
    """analyze() plus the generation stages the pipeline would add, per question."""
    from core.abduction import AbductionStage
    from core.agents import respond
    from core.gate import decide
    from core.kb import KnowledgeBase
    from core.pipeline import Pipeline, make_query

    values = settings.defaults()
    kb = KnowledgeBase.open(SAMPLE_DOCS, values)
    pipeline = Pipeline(kb)
    stepback, claims = StepBackRewriter(local), ClaimRewriter(local)
    abduction = AbductionStage(generator=premise_generator, fusion_alpha=values["fusion_alpha"])
    pipeline.analyze(make_query("Warm-up question about the Harlow Bridge?"))
    analyze_s, total_s = [], []
    print(f"\nanalyze() + generation per question (premises by {premise_generator.id}):")
    for q in questions:
        CACHE.clear()
        query = make_query(q["question"], q.get("scenario", ""), q.get("history", []))
        start = time.perf_counter()
        sb, sb_s = timed(lambda: stepback.run(query.question))
        cr, cr_s = timed(lambda: claims.run(query.question, ClaimBuilder().run(query.question)))
        trace, a_s = timed(lambda: pipeline.analyze(query))
        ab, ab_s = timed(lambda: abduction.run(
            kb, query.question, trace.claim.text, trace.kept_passages(), trace.signals.sufficiency,
            missing=[c for c in trace.variables.conditions if c.status == "missing"], known=query.user_facts()))
        decision = decide(trace)
        response, r_s = timed(lambda: respond(trace, decision, abduction=ab))
        total = time.perf_counter() - start
        analyze_s.append(a_s)
        total_s.append(total)
        print(f"  [{q['id']}] {decision.action:<7} (expected {q['action']:<7}) total {total:5.2f} s = step-back "
              f"{sb_s:.2f} ({sb.source}) + claim {cr_s:.2f} ({cr.claim.source}) + analyze {a_s:.2f} + "
              f"abduction {ab_s:.2f} ({ab.outcome}, {len(ab.candidates)} candidates) + response {r_s:.2f}")
        print(f"      → {response.text[:160]}")
    print("  " + summary("analyze()", analyze_s))
    print("  " + summary("analyze()+generation", total_s)
          + f"   target ≤ 6 s p50: {'met' if statistics.median(total_s) <= 6 else 'NOT met'}")


if __name__ == "__main__":
    main()
