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
from typing import Any, Mapping, Sequence

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
    update.used = lambda: bool(bars)  # type: ignore[attr-defined]
    return update


def _open_or_build(folder: Path, values: dict[str, Any]):
    """(the KB, whether its index was built or refreshed now) — a progress bar shows any build."""
    from core.kb import KnowledgeBase
    progress = _progress_bar("indexing")
    try:
        kb = KnowledgeBase.open(folder, values, progress=progress)
    finally:
        progress.close()
    for problem in kb.problems:
        print(f"warning: {problem}", file=sys.stderr)
    return kb, progress.used()


def open_kb(folder: Path, values: dict[str, Any]):
    """Load the KB's index, building or refreshing it (with a progress bar) when files changed."""
    return _open_or_build(folder, values)[0]


def cmd_index(args, values) -> int:
    kb, built = _open_or_build(Path(args.dir), values)
    if not built:  # the manifest's figures are the last build's, not this command's
        print(f"{kb.folder} is up to date: {len(kb.passages)} passages from {len(kb.documents)} documents, "
              f"indexed {kb.manifest.get('built_at', 'earlier')}; nothing to do")
        return 0
    stats = getattr(kb, "stats", {}) or {}
    print(f"indexed {len(kb.passages)} passages from {len(kb.documents)} documents in {kb.folder}"
          + (f" ({', '.join(f'{k} {v}' for k, v in stats.items())})" if stats else ""))
    return 0


def _print_warnings(*warnings: str) -> None:
    """Configuration problems and generator fallbacks, on stderr whatever the output format."""
    for warning in warnings:
        if warning:
            print(f"warning: {warning}", file=sys.stderr)


def cmd_ask(args, values) -> int:
    from core.pipeline import make_query
    from core.service import Workbench
    from core.types import to_dict
    query = make_query(args.question, args.scenario or "", _history(args.history))
    outcome = Workbench(open_kb(Path(args.kb), values)).ask(query, values)
    _print_warnings(*outcome.trace.warnings, outcome.response.warning)
    if args.json:
        print(json.dumps({"trace": to_dict(outcome.trace), "decision": to_dict(outcome.decision),
                          "response": to_dict(outcome.response), "checks": to_dict(outcome.checks)},
                         indent=2, ensure_ascii=False))
    else:
        print(render_trace(outcome.trace, outcome.decision))
        print(render_response(outcome))
    return 0


def cmd_chat(args, values) -> int:
    from core.service import Workbench
    return chat_main(args, values, Workbench(open_kb(Path(args.kb), values)))


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
    from core.gate import comparison_text
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
    lines.append("\nPASSAGES (rank  fused = α·dense + (1−α)·bm25/max, ranked less any scenario penalty on its "
                 "document  |  NLI of the claim by the best sentence)")
    nli_by_id = {n.passage_id: n for n in trace.nli}
    for p in trace.passages:
        n = nli_by_id.get(p.passage.id)
        nli_txt = (f"{n.claim.label:<13} e={n.claim.entailment:.2f} n={n.claim.neutral:.2f} "
                   f"c={n.claim.contradiction:.2f} {'kept' if n.kept else 'filtered'}") if n else ""
        penalty = f", scenario −{p.scenario_penalty:.3f}" if p.scenario_penalty else ""
        lines.append(f"  {p.rank}. {p.fused:.3f} (dense {p.dense:.3f}, bm25 {p.bm25_norm:.2f}{penalty})  "
                     f"{p.passage.title} [{p.passage.id}]  {nli_txt}")
        if n and p.passage.sentences:
            best = p.passage.sentences[min(n.best_sentence, len(p.passage.sentences) - 1)].text
            lines.append(textwrap.indent(textwrap.fill(f"best: {best}", 100), "       "))
            decides = n.decisive_text(p.passage)
            if n.decisive and n.decisive.label != n.claim.label and decides:
                lines.append(textwrap.indent(textwrap.fill(
                    f"decides most ({n.decisive.label} e={n.decisive.entailment:.2f} n={n.decisive.neutral:.2f} "
                    f"c={n.decisive.contradiction:.2f}): {decides}", 100), "       "))
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
        comps = " and ".join(comparison_text(c) for c in r.comparisons)
        state = "FIRED" if r.fired else ("off" if not r.enabled else "-")
        lines.append(f"  {state:<5} {r.name:<18} → {r.action:<7} {comps}")
    polarity = f" ({decision.answer_polarity})" if decision.answer_polarity else ""
    lines.append(f"\nACTION  {decision.action}{polarity}  by rule '{decision.rule}': {decision.reason}")
    return "\n".join(lines)


def render_response(outcome) -> str:
    """What the user reads: the response's action and text, its citations and the answer-level checks."""
    r = outcome.response
    lines = [f"\nRESPONSE  {r.action}  ({r.kind}, written by {r.backend})"
             + (f", the gate said {outcome.decision.action}" if r.action != outcome.decision.action else "")]
    lines.append(textwrap.indent(textwrap.fill(r.text, 100), "  "))
    for c in r.citations:
        lines.append(textwrap.indent(textwrap.fill(f"[{c.passage_id}] {c.sentence}", 100), "    "))
    for check in outcome.checks:
        state = "FIRED" if check.fired else ("off" if not check.enabled else "-")
        lines.append(f"  {state:<5} {check.name:<18} {check.explanation}")
    return "\n".join(lines)


def turn_response(dialogue, index: int):
    """The answer or refusal written for a turn (None when it asks, or the dialogue overrode the gate)."""
    from core.service import respond
    turn = dialogue.turns[index]
    if turn.action == "ASK" or turn.override:
        return None
    return respond(turn.trace, turn.decision, dialogue.values, models=getattr(dialogue.workbench, "models", None))[0]


def render_turn(dialogue, index: int, response=None) -> str:
    """One turn of a ``core.dialogue.Dialogue`` as text: action, ρ_t, what the previous reply settled
    and the question asked (or ``response``, the answer or refusal written for it)."""
    turn = dialogue.turns[index]
    d = turn.decision
    polarity = f" ({d.answer_polarity})" if turn.action == "ANSWER" and d.answer_polarity else ""
    lines = [f"TURN {index}  {turn.action}{polarity}  ρ = {turn.rho:.2f}  (rule {d.rule}"
             + (", overridden: nothing new to ask" if turn.override else "") + ")"]
    if turn.note:
        lines.append(_wrap(turn.note, "  "))
    for c in turn.resolved:
        lines.append(_wrap(f"[{c.status}] {c.text}  ← {c.support} [{c.method}]", "  resolved "))
    if turn.action == "ASK":
        lines.append(_wrap(turn.question, "  ? "))
    elif turn.override:
        lines.append(_wrap(turn.override, "  "))
    else:
        response = response or turn_response(dialogue, index)
        lines.append(_wrap(response.text, "  "))
    return "\n".join(lines)


def _wrap(text: str, prefix: str) -> str:
    return textwrap.fill(text, 100, initial_indent=prefix, subsequent_indent=" " * len(prefix))


def chat_main(args: Any, values: Mapping[str, Any], workbench: Any, stdin=None, stdout=None) -> int:
    """``python -m core chat "question" [--scenario …]``: print turn 0, then read one reply per line
    from stdin and print each new turn, until the dialogue answers or abstains or stdin ends.
    ``workbench``: a ``core.service.Workbench`` (or anything with its ``analyze``)."""
    from core.dialogue import Dialogue
    from core.pipeline import make_query
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout

    def show(dialogue, prefix: str = "") -> None:
        index = len(dialogue.turns) - 1
        response = turn_response(dialogue, index)
        _print_warnings(*dialogue.turns[index].trace.warnings, response.warning if response else "")
        print(prefix + render_turn(dialogue, index, response), file=stdout, flush=True)

    dialogue = Dialogue.start(workbench, make_query(args.question, getattr(args, "scenario", "") or ""), values)
    show(dialogue)
    for line in stdin:
        if dialogue.done:
            break
        if not line.strip():
            continue
        dialogue = dialogue.answer(line)
        show(dialogue, f"\n> {line.strip()}\n")
    if not dialogue.done:
        print("\n(no more replies: the question is still open)", file=stdout)
    return 0


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
    p_ask = sub.add_parser("ask", parents=[common], help="analyse one question and print the trace, the action and the response")
    p_ask.add_argument("question")
    p_ask.add_argument("--scenario", default="", help="facts the user states about themselves")
    p_ask.add_argument("--history", action="append", metavar="'QUESTION=ANSWER'",
                       help="an answered follow-up question (repeatable)")
    p_ask.add_argument("--kb", default=str(DEFAULT_KB), help="knowledge base folder (default: the sample KB)")
    p_ask.add_argument("--json", action="store_true", help="print the trace, decision and response as JSON")
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
