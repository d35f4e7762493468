"""Command line: ``python -m core index DIR``, ``ask "question"``, ``chat "question"``, ``eval``, ``calibrate``.

Every setting in ``core.settings`` is a ``--set name=value`` flag; ``--list-settings``
prints them with their defaults, ranges and explanations.
"""
from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path
from typing import Any, Sequence

from core import settings as settings_mod

DEFAULT_KB = Path(__file__).resolve().parent.parent / "sample_kb" / "documents"


def _progress_bar(desc: str):
    """A tqdm-backed progress callback (done, total, stage) for long work; the bar appears
    only once there is progress to show, so an error is the first thing printed."""
    from tqdm import tqdm
    bars = []

    def update(done: int, total: int, stage: str) -> None:
        if not bars:
            bars.append(tqdm(total=total, desc=desc, unit="item", file=sys.stderr, leave=False))
        bar = bars[0]
        if bar.total != total:
            bar.reset(total=total)
        bar.set_description(f"{desc}: {stage}")
        bar.n = done
        bar.refresh()
    update.close = lambda: bars and bars[0].close()  # type: ignore[attr-defined]
    return update


def open_kb(folder: Path, values: dict[str, Any]):
    """Load the KB's index, building or refreshing it (with a progress bar) when files changed."""
    from core.kb import KnowledgeBase
    progress = _progress_bar("indexing")
    try:
        kb = KnowledgeBase.open(folder, values, progress=progress)
    finally:
        progress.close()
    for problem in kb.problems:
        print(f"warning: {problem}", file=sys.stderr)
    return kb


def cmd_index(args, values) -> int:
    kb = open_kb(Path(args.dir), values)
    stats = getattr(kb, "stats", {}) or {}
    print(f"indexed {len(kb.passages)} passages from {len(kb.documents)} documents in {kb.folder}"
          + (f" ({', '.join(f'{k} {v}' for k, v in stats.items())})" if stats else ""))
    return 0


def cmd_ask(args, values) -> int:
    from core.gate import decide
    from core.pipeline import Pipeline, make_query
    from core.types import to_dict
    query = make_query(args.question, args.scenario or "", _history(args.history))
    kb = open_kb(Path(args.kb), values)
    trace = Pipeline(kb).analyze(query, values)
    decision = decide(trace, values)
    if args.json:
        print(json.dumps({"trace": to_dict(trace), "decision": to_dict(decision)}, indent=2))
    else:
        print(render_trace(trace, decision))
    return 0


def cmd_chat(args, values) -> int:
    from core.dialogue import chat_main
    return chat_main(args, values, open_kb(Path(args.kb), values))


def _history(items: Sequence[str] | None) -> list[tuple[str, str]]:
    """``--history "Are you over 65?=Yes"`` pairs."""
    out = []
    for item in items or ():
        q, sep, a = item.rpartition("=")
        if not sep:
            raise ValueError(f"--history takes 'question=answer', not {item!r}")
        out.append((q.strip(), a.strip()))
    return out


def render_trace(trace, decision) -> str:
    """The trace as readable text: stages, signals, the rules and the action."""
    s = trace.signals
    lines = [f"QUESTION  {trace.query.question}"]
    if trace.query.scenario:
        lines.append(f"SCENARIO  {trace.query.scenario}")
    for q, a in trace.query.history:
        lines.append(f"HISTORY   {q} → {a}")
    lines.append(f"\nCLAIM ({trace.claim.schema}{', expects ' + trace.claim.answer_type if trace.claim.answer_type else ''})"
                 f"  {trace.claim.text}")
    for sub in trace.claim.sub_claims:
        lines.append(f"  sub-claim  {sub}")
    lines.append("\nPASSAGES (rank  fused = α·dense + (1−α)·bm25/max  |  NLI of the claim by the best sentence)")
    nli_by_id = {n.passage_id: n for n in trace.nli}
    for p in trace.passages:
        n = nli_by_id.get(p.passage.id)
        nli_txt = (f"{n.claim.label:<13} e={n.claim.entailment:.2f} n={n.claim.neutral:.2f} "
                   f"c={n.claim.contradiction:.2f} {'kept' if n.kept else 'filtered'}") if n else ""
        lines.append(f"  {p.rank}. {p.fused:.3f} (dense {p.dense:.3f}, bm25 {p.bm25_norm:.2f})  "
                     f"{p.passage.title} [{p.passage.id}]  {nli_txt}")
        if n and p.passage.sentences:
            best = p.passage.sentences[min(n.best_sentence, len(p.passage.sentences) - 1)].text
            lines.append(textwrap.indent(textwrap.fill(f"best: {best}", 100), "       "))
    if trace.fallback:
        lines.append("  (no passage passed the entailment filter: all are kept — seed 001 fallback)")
    v = trace.variables
    lines.append(f"\nVARIABLES  I(q) = {v.incompleteness:.2f}  outcome: {v.outcome}")
    lines.append(f"  known: {', '.join(v.known) or '—'}")
    for c in v.conditions:
        lines.append(f"  [{c.status:<12}] ({c.kind}, {c.group}) {c.text}"
                     + (f"  ← {c.support} [{c.method}]" if c.support else ""))
    lines.append("\nSIGNALS")
    for name in ("confidence", "dense_top", "score_gap", "coverage", "ambiguity", "topic_spread", "nli_conflict",
                 "sufficiency", "answer_type_found", "answerability", "incompleteness"):
        lines.append(f"  {name:<18} {getattr(s, name):.3f}")
    lines.append("  ambiguity heuristics: " + ", ".join(f"{k} {v:.2f}" for k, v in s.ambiguity_heuristics.items()))
    lines.append("\nGATE (priority order)")
    for r in decision.rules:
        comps = " and ".join(f"{c.signal} {c.value:.3f} {c.op} {c.threshold:.3f} {'✓' if c.holds else '✗'}"
                             for c in r.comparisons)
        state = "FIRED" if r.fired else ("off" if not r.enabled else "-")
        lines.append(f"  {state:<5} {r.name:<18} → {r.action:<7} {comps}")
    polarity = f" ({decision.answer_polarity})" if decision.answer_polarity else ""
    lines.append(f"\nACTION  {decision.action}{polarity}  by rule '{decision.rule}': {decision.reason}")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m core", description="Answerability Workbench pipeline")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="override a setting (repeatable); see --list-settings")
    parser.add_argument("--preset", help="a preset JSON file of settings")
    parser.add_argument("--list-settings", action="store_true", help="print every setting and exit")
    sub = parser.add_subparsers(dest="command")
    # --set and --preset also work after the subcommand: `python -m core ask "…" --set top_k=8`.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--set", action="append", default=[], dest="sub_set", metavar="NAME=VALUE",
                        help="override a setting (repeatable)")
    common.add_argument("--preset", dest="sub_preset", help="a preset JSON file of settings")
    p_index = sub.add_parser("index", parents=[common], help="build or refresh the index of a KB folder")
    p_index.add_argument("dir", nargs="?", default=str(DEFAULT_KB))
    p_ask = sub.add_parser("ask", parents=[common], help="analyse one question and print the trace and action")
    p_ask.add_argument("question")
    p_ask.add_argument("--scenario", default="", help="facts the user states about themselves")
    p_ask.add_argument("--history", action="append", metavar="'QUESTION=ANSWER'",
                       help="an answered follow-up question (repeatable)")
    p_ask.add_argument("--kb", default=str(DEFAULT_KB), help="knowledge base folder (default: the sample KB)")
    p_ask.add_argument("--json", action="store_true", help="print the trace and decision as JSON")
    p_chat = sub.add_parser("chat", parents=[common],
                            help="a clarification dialogue: replies are read from stdin, one per line")
    p_chat.add_argument("question")
    p_chat.add_argument("--scenario", default="", help="facts the user states about themselves")
    p_chat.add_argument("--kb", default=str(DEFAULT_KB), help="knowledge base folder (default: the sample KB)")
    from core.evaluation import cli as eval_cli
    eval_cli.add_subcommands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list_settings:
        print(settings_mod.markdown_table())
        return 0
    if not args.command:
        parser.print_help()
        return 2
    from core.kb import KnowledgeBaseError
    from core.models import ModelUnavailable
    try:
        preset = getattr(args, "sub_preset", None) or args.preset
        values = settings_mod.load_preset(preset) if preset else settings_mod.defaults()
        values.update(settings_mod.parse_assignments(args.set + getattr(args, "sub_set", [])))
        if args.command in ("eval", "calibrate"):
            from core.evaluation import cli as eval_cli
            return eval_cli.run(args, values)
        return {"index": cmd_index, "ask": cmd_ask, "chat": cmd_chat}[args.command](args, values)
    except (ValueError, KnowledgeBaseError, ModelUnavailable) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
