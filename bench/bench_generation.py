"""Generation figures with the local generator (issue 5): per-stage latency with real outputs,
and analyze() + response p50 against the 6 s target.

    OMP_NUM_THREADS=1 .venv/bin/python bench/bench_generation.py [--questions 6] [--threads N]
        [--stages-only | --pipeline-only] [--generated-answer]

1. Per stage, on sample questions with the generation cache cleared (every call really runs):
   the step-back question, the claim rewrite and the premises, each generated exactly as its
   pipeline stage asks for it, with the output and, where a check replaced it, why.
   ``--generated-answer`` also times the answer agent's generated mode, which the pipeline does
   not run with the local backend (it is not capable: the answer is extractive).
2. analyze() + decide() + the checked response per question, with ``generator=local``, in two
   configurations: the defaults (step-back off, LLM claim off, premises on — generated only
   when Sufficiency < τ — and the answer extractive), and every generation stage on (step-back
   and LLM claim too). Stage timings come from the trace.

The local generator runs on ``AW_GENERATOR_THREADS`` torch threads (default 1); ``--threads``
sets torch's count for everything else (NLI, embeddings). Both, and the load average, are
printed: on a shared 2-core machine the figures move with the other processes' load.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from core import models, prompts, settings  # noqa: E402
from core.abduction import AbductionStage  # noqa: E402
from core.claims import ClaimBuilder  # noqa: E402
from core.generation import CACHE, LocalBackend, generator_threads  # noqa: E402
from core.stepback import ClaimRewriter, StepBackRewriter  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DOCS = ROOT / "sample_kb" / "documents"
SAMPLE_QUESTIONS = ROOT / "sample_kb" / "questions.jsonl"
TARGET_S = 6.0
CONFIGURATIONS = {
    "defaults": {"generator": "local"},
    "all generation stages": {"generator": "local", "stepback": True, "llm_claim": True},
}


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


def describe(values: dict[str, Any]) -> str:
    """Which generation stages a configuration runs."""
    on = {flag: "on" if values[flag] else "off" for flag in ("stepback", "llm_claim")}
    premises = ("off" if not values["abduction"] else
                f"on, {'generated + ' if values['premise_generation'] else ''}templates, when Sufficiency < "
                f"{values['abduction_tau']:g}")
    answer = values["answer_mode"] + (" (extractive: the local backend is not capable)"
                                      if values["answer_mode"] == "auto" else "")
    return f"step-back {on['stepback']}; LLM claim {on['llm_claim']}; premises {premises}; answer {answer}"


def conditions() -> str:
    import torch
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"torch threads {torch.get_num_threads()} (generator {generator_threads() or 'torch default'}), "
            f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, load average {load} "
            f"on {os.cpu_count()} cores")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=6)
    parser.add_argument("--threads", type=int, default=0, help="torch threads outside generation (0: torch's default)")
    parser.add_argument("--stages-only", action="store_true", help="skip analyze() (no NLI model needed)")
    parser.add_argument("--pipeline-only", action="store_true", help="skip the per-stage outputs")
    parser.add_argument("--generated-answer", action="store_true",
                        help="also time the generated answer (not run by the pipeline with the local backend)")
    args = parser.parse_args()

    import torch
    if args.threads:
        torch.set_num_threads(args.threads)
    print(conditions())
    local = LocalBackend()
    _, load_s = timed(local.load)
    print(f"local generator {local.id}: load {load_s:.1f} s\n")
    questions = pick_questions(args.questions)
    if not args.pipeline_only:
        stage_latency(questions, local, args.generated_answer)
    if args.stages_only:
        return
    try:
        from core import nli
        nli.get_nli()
    except models.ModelUnavailable as exc:
        print(f"\nanalyze() not timed: {exc}")
        return
    p50s = {name: pipeline_p50(questions, name, overrides) for name, overrides in CONFIGURATIONS.items()}
    print(f"\nSummary ({conditions()}):")
    for name, p50 in p50s.items():
        print(f"  {name:<22} analyze()+generation p50 {p50:5.2f} s   target ≤ {TARGET_S:g} s: "
              f"{'met' if p50 <= TARGET_S else 'NOT met'}")


def stage_latency(questions: list[dict], local: LocalBackend, generated_answer: bool) -> None:
    """Each generation stage on its own, with its real output."""
    rules = ClaimBuilder()
    stepback, claims, premises = StepBackRewriter(local), ClaimRewriter(local), AbductionStage(generator=local)
    times: dict[str, list[float]] = {"step-back": [], "claim rewrite": [], "premises": []}
    if generated_answer:
        times["generated answer"] = []
    # Warm the few-shot prefix caches, as any earlier question in a session would have.
    stepback.run("Warm-up question about the Harlow Bridge?")
    for q in questions:
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
        (out, lines), t = timed(lambda: premises.generate(question, evidence, known))
        times["premises"].append(t)
        print(f"  premises ({out.backend}, {t:.2f} s): {' | '.join(lines) or '(none kept)'}"
              + (f"   [model said {out.text!r}]" if lines != out.text.splitlines() else ""))
        if generated_answer:
            sources = [(q.get("doc_id", "source"), q["evidence"])] if q.get("evidence") else [("none", "")]
            out, t = timed(lambda: local.generate(prompts.answer(question, sources), 48))
            times["generated answer"].append(t)
            print(f"  generated answer ({out.backend}, {t:.2f} s): {out.text!r}")
        print()
    print("Per-stage generation latency (local generator, no cache hits):")
    for name, values in times.items():
        print("  " + summary(name, values))


def pipeline_p50(questions: list[dict], name: str, overrides: dict[str, Any]) -> float:
    """analyze() + decide() + respond_checked() per question in one configuration; the p50."""
    from core import nli
    from core.agents import respond_checked
    from core.gate import decide
    from core.kb import KnowledgeBase
    from core.pipeline import Pipeline, make_query

    values = settings.resolve(overrides)
    kb = KnowledgeBase.open(SAMPLE_DOCS, values)
    pipeline = Pipeline(kb)  # a fresh one: no stage cache carries over from another configuration
    pipeline.analyze(make_query("Warm-up question about the Harlow Bridge?"), overrides)
    totals = []
    print(f"\nanalyze() + response, configuration '{name}': {describe(values)}")
    for q in questions:
        CACHE.clear()
        nli.get_nli().cache.clear()  # NLI pairs scored for another configuration would not be re-scored
        query = make_query(q["question"], q.get("scenario", ""), q.get("history", []))
        start = time.perf_counter()
        trace = pipeline.analyze(query, overrides)
        decision = decide(trace, overrides)
        response, _ = respond_checked(trace, decision, values)
        totals.append(time.perf_counter() - start)
        t = trace.timings
        ab = trace.abduction
        generated = [p.text for p in ab.candidates if p.origin == "generator"] if ab else []
        premises = (f"premises {t.get('premises', 0):.2f} ({len(generated)} generated)" if ab and ab.triggered
                    else "premises not triggered")
        extra = "".join(f" + {label} {t[key]:.2f}" for key, label in (("claim_rewrite", "claim rewrite"),)
                        if key in t)
        print(f"  [{q['id']}] {decision.action:<7} (expected {q['action']:<7}) total {totals[-1]:5.2f} s: "
              f"retrieval{' + step-back' if values['stepback'] else ''} {t['retrieval']:.2f}{extra} + "
              f"nli {t['nli']:.2f} + {premises}; response {response.kind} by {response.backend}")
        if trace.stepback:
            print(f"      step-back ({trace.stepback.stepback.source}): {trace.stepback.stepback.abstract}")
        if trace.claim_rewrite:
            print(f"      claim ({trace.claim.source}): {trace.claim.text}")
        for text in generated:
            print(f"      generated premise: {text}")
        print(f"      → {response.text[:160]}")
    print("  " + summary("analyze()+generation", totals))
    return statistics.median(totals)


if __name__ == "__main__":
    main()
