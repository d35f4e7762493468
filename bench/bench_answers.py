"""Answer extraction: exact match / F1 of the value the ANSWER agent extracts.

    .venv/bin/python bench/bench_answers.py [--skip-kb] [--show N]

1. SQuAD 2.0 train, first 10 articles (../shared/data/train/squad2_train_first10.json, TRAINING
   data), reading setting: each question against its own paragraph. Articles 1-5 were used to look
   at errors while developing (DEVELOPMENT); articles 6-10 were not looked at and are the figures to
   quote (HELD-OUT articles, not questions). Nothing is fitted on either. Only questions whose claim
   asks for a typed value (a date, a person, a place, an amount, a number, a measure) get a value;
   the rest are counted apart. For each: is a value found (``core.evidence.answer_value`` over the
   paragraph's sentences, those sharing most question words first: the pipeline puts the NLI-best
   sentence first, which needs the NLI model and is left out here), its SQuAD exact match and token
   F1 against the gold answers, and on unanswerable questions how often a value is "found" anyway.
   The baseline is the rule before issue 15: the first value of the asked type in the same sentence
   order, with no check that the sentence is about the asked entity or the asked kind of value.

2. The sample KB's questions (sample_kb/questions.jsonl, REPORT only, nothing tuned on it): every
   gold-ANSWER item with a span answer (not Yes/No) is analysed by the pipeline and answered by the
   ANSWER agent as if the gate had answered; EM/F1 against the gold answer, and whether the gold
   answer appears in the response text.

3. With ``--yes-no``: the Yes or No the ANSWER agent gives, on cached traces, to every gold-ANSWER yes/no
   question not about the asker and asked with no scenario or history (ContractNLI's hypotheses, the sample KB's
   "Is the bus pass valid on trains?") of the training and report sets: right against the gold Yes/No, and the
   cited sentence within the gold evidence. The baseline is the rule before ``core.evidence.decided_by``: the
   best-entailing sentence of the first answer passage, and its NLI label.

4. With ``--pipeline-sets``: the value the whole pipeline chose (``Trace.answer``: retrieval, several
   passages, the NLI filter) for every gold-ANSWER question with a span answer and a typed claim, on the
   training sets the gate is fitted on (SQuAD train articles, the train KB; TRAINING data, answers not
   fitted) and the report sets (SQuAD held-out articles, the sample KB's two question sets). Traces come
   from the evaluation cache (``core.evaluation.BatchRunner``), analysed where they are not there yet.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core import models  # noqa: E402
from core.claims import ClaimBuilder  # noqa: E402
from core.evaluation.importers import read_squad2  # noqa: E402
from core.evaluation.metrics import answer_f1, answer_metrics, normalize_answer as normalize  # noqa: E402
from core.evidence import VALUE_LABELS, answer_candidates, answer_value, full_name  # noqa: E402
from core.text import split_sentences  # noqa: E402

TRAIN = ROOT.parent / "shared" / "data" / "train"
DEVELOPMENT_ARTICLES = 5


def best_scores(prediction: str, golds) -> tuple[float, float]:
    return (max(float(normalize(prediction) == normalize(g)) for g in golds),
            max(answer_f1(prediction, g) for g in golds))


def baseline_value(answer_type: str, sentences: list[str]) -> str:
    """The first entity of the asked type in sentence order (the rule before issue 15, without its
    nearest-word choice): no test that the sentence is about the asked entity or kind."""
    wanted = VALUE_LABELS[answer_type]
    for doc in models.parse(sentences):
        for e in doc.ents:
            if e.label_ in wanted:
                return e.text
    return ""


def squad(path: Path, show: int) -> None:
    items = read_squad2(path.read_text(), str(path))
    titles = list(dict.fromkeys(i.extra["title"] for i in items))
    claims = ClaimBuilder()
    for part, chosen in (("DEVELOPMENT articles 1-5", titles[:DEVELOPMENT_ARTICLES]),
                         ("HELD-OUT articles 6-10", titles[DEVELOPMENT_ARTICLES:])):
        rows = {"answerable": [], "unanswerable": []}
        untyped = Counter()
        shown = 0
        for item in (i for i in items if i.extra["title"] in chosen):
            answerable = item.action == "ANSWER"
            claim = claims.run(item.question)
            if claim.answer_type not in VALUE_LABELS:
                untyped["answerable" if answerable else "unanswerable"] += 1
                continue
            _, title, context = item.documents[0]
            sentences = [s.text for s in split_sentences(context)]
            order = [s for _, s in answer_candidates(item.question, [("", sentences)])]
            found = answer_value(item.question, claim.answer_type, order, [title] * len(order))
            value = full_name(found.value, found.label, [context]) if found else ""
            base = baseline_value(claim.answer_type, order)
            if answerable:
                em, fs = best_scores(value, item.answers) if value else (0.0, 0.0)
                bem, bfs = best_scores(base, item.answers) if base else (0.0, 0.0)
                rows["answerable"].append((bool(value), em, fs, bool(base), bem, bfs))
                if value and not em and shown < show:
                    shown += 1
                    print(f"  --- {item.question!r} ({claim.answer_type}): got {value!r}, gold {item.answers[0]!r}")
            else:
                rows["unanswerable"].append((bool(value), bool(base)))
        a, u = rows["answerable"], rows["unanswerable"]
        n = len(a) or 1
        print(f"SQuAD 2.0 train, {part} (TRAINING data, not fitted): {len(a)} typed answerable, "
              f"{len(u)} typed unanswerable questions; untyped (no value asked): {dict(untyped)}")
        print(f"  answer_value : found {sum(r[0] for r in a) / n:.3f}  EM {sum(r[1] for r in a) / n:.3f}  "
              f"F1 {sum(r[2] for r in a) / n:.3f}  | found on unanswerable "
              f"{sum(r[0] for r in u) / (len(u) or 1):.3f}")
        print(f"  baseline     : found {sum(r[3] for r in a) / n:.3f}  EM {sum(r[4] for r in a) / n:.3f}  "
              f"F1 {sum(r[5] for r in a) / n:.3f}  | found on unanswerable "
              f"{sum(r[1] for r in u) / (len(u) or 1):.3f}")
        found = [r for r in a if r[0]]
        if found:
            print(f"  answer_value precision when found: EM {sum(r[1] for r in found) / len(found):.3f}  "
                  f"F1 {sum(r[2] for r in found) / len(found):.3f}")


def sample_kb(show: int) -> None:
    from core.agents import AnswerAgent
    from core.kb import KnowledgeBase
    from core.pipeline import Pipeline, make_query
    from core.settings import resolve
    from core.types import Decision

    values = resolve({})
    items = [json.loads(x) for x in (ROOT / "sample_kb" / "questions.jsonl").read_text().splitlines() if x.strip()]
    items = [i for i in items if i["action"] == "ANSWER" and i.get("answer") and i["answer"] not in ("Yes", "No")]
    pipeline = Pipeline(KnowledgeBase.open(ROOT / "sample_kb" / "documents", values))
    answered = Decision("ANSWER", "default_answer", "scored as if the gate answered", ())
    ems, f1s, contained = [], [], []
    for item in items:
        trace = pipeline.analyze(make_query(item["question"], item.get("scenario", ""), item.get("history", [])), values)
        response = AnswerAgent().run(trace, answered)
        em, fs = best_scores(response.answer, [item["answer"]])
        ems.append(em)
        f1s.append(fs)
        contained.append(normalize(item["answer"]) in normalize(response.text))
        if not em and show:
            print(f"  --- {item['id']} {item['question']!r}: answer {response.answer[:80]!r}, gold {item['answer']!r}")
    n = len(items) or 1
    print(f"SAMPLE KB (REPORT only), {len(items)} gold-ANSWER questions with a span answer, answered as if the "
          f"gate said ANSWER: EM {sum(ems) / n:.3f}  F1 {sum(f1s) / n:.3f}  gold in response text "
          f"{sum(contained) / n:.3f}")


def _span_answer(item) -> bool:
    """A gold ANSWER whose answer is a span of text, not Yes or No."""
    return item.action == "ANSWER" and bool(item.answers) and item.answers[0].strip().lower() not in ("yes", "no")


def pipeline_sets() -> None:
    from core.evaluation import BatchRunner
    from core.evaluation.training import training_sets
    from core.evaluation.transfer import report_sets

    sets = {**{f"{name} (TRAINING)": ds for name, ds in training_sets().items()},
            **{f"{name} (REPORT)": ds for name, ds in report_sets().items()}}
    for name, dataset in sets.items():
        if not any(map(_span_answer, dataset.items)):
            continue  # yes/no answers only (ShARC, ContractNLI): no value to extract
        run = BatchRunner(None).run(dataset)
        typed = [(item.answers, trace.answer.value if trace.answer else "")
                 for item, trace in zip(run.items, run.traces) if _span_answer(item) and trace.claim.answer_type]
        scores = answer_metrics([golds for golds, _ in typed], [value for _, value in typed])
        print(f"PIPELINE ANSWERS, {name}: {scores['n']} typed gold answers  EM {scores['exact_match'] or 0:.3f}  "
              f"F1 {scores['f1'] or 0:.3f}")


def _evidence_cited(sentence: str, evidence) -> bool:
    cited = normalize(sentence)
    return bool(cited) and any(cited in normalize(e) or normalize(e) in cited for e in evidence)


def yes_no_sets() -> None:
    from core.agents import AnswerAgent
    from core.evaluation import BatchRunner
    from core.evaluation.training import training_sets
    from core.evaluation.transfer import report_sets
    from core.evidence import choose_answer
    from core.types import Decision
    from core.variables import FIRST_PERSON

    answer = Decision(action="ANSWER", rule="default_answer", reason="as if the gate had answered", rules=())
    sets = {**{f"{name} (TRAINING)": ds for name, ds in training_sets().items()},
            **{f"{name} (REPORT)": ds for name, ds in report_sets().items()}}
    for name, dataset in sets.items():
        asked = [i for i in dataset.items if i.action == "ANSWER" and i.answers and not i.scenario and not i.history
                 and normalize(i.answers[0]) in ("yes", "no") and not FIRST_PERSON.search(i.question)]
        if not asked:
            continue
        run = BatchRunner(None).run(replace(dataset, items=tuple(asked)))
        tally = Counter()
        for item, trace in zip(run.items, run.traces):
            if trace.claim.schema not in ("polar", "statement"):
                continue
            gold = normalize(item.answers[0])
            before = choose_answer(item.question, "", trace.passages, trace.nli)
            n = next((n for n in trace.nli if before and n.passage_id == before.passage_id), None)
            label = {"entailment": "yes", "contradiction": "no"}.get(n.claim.label if n else "", "")
            now = AnswerAgent().run(trace, answer)
            tally["n"] += 1
            tally[f"gold {gold}"] += 1
            for when, said, sentence in (("before", label, before.sentence if before else ""),
                                         ("now", normalize(now.answer or ""), now.statement)):
                tally[f"{when} right"] += said == gold
                tally[f"{when} right, gold {gold}"] += said == gold
                tally[f"{when} evidence"] += _evidence_cited(sentence, item.evidence)
        if tally["n"]:
            print(f"YES/NO, {name}: {tally['n']} gold-ANSWER yes/no claims ({tally['gold yes']} yes, {tally['gold no']} no)"
                  f"  right {tally['before right']} -> {tally['now right']}"
                  f" (gold yes {tally['before right, gold yes']} -> {tally['now right, gold yes']},"
                  f" gold no {tally['before right, gold no']} -> {tally['now right, gold no']})"
                  f"  cited sentence in the gold evidence {tally['before evidence']} -> {tally['now evidence']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--squad", default=str(TRAIN / "squad2_train_first10.json"))
    parser.add_argument("--skip-kb", action="store_true", help="SQuAD only (no retrieval or NLI model)")
    parser.add_argument("--skip-squad", action="store_true", help="the sample KB only")
    parser.add_argument("--show", type=int, default=0, help="print this many wrong answers")
    parser.add_argument("--yes-no", action="store_true",
                        help="also the Yes/No of yes/no claims not about the asker on the training and report sets "
                             "(cached traces)")
    parser.add_argument("--pipeline-sets", action="store_true",
                        help="also the whole pipeline's typed answers on the training and report sets (cached traces)")
    args = parser.parse_args()
    if not args.skip_squad:
        squad(Path(args.squad), args.show)
    if not args.skip_kb:
        sample_kb(args.show)
    if args.yes_no:
        yes_no_sets()
    if args.pipeline_sets:
        pipeline_sets()


if __name__ == "__main__":
    main()
