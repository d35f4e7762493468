"""The guided tour on the Inspect page: three sample questions, one per action, and for the one on
screen a paragraph that walks its trace — retrieval, evidence, claim, conditions, the gate's rule —
in the numbers of this very analysis (nothing is pre-written but the choice of questions)."""
from __future__ import annotations

from dataclasses import dataclass

from core.types import Decision, Trace


@dataclass(frozen=True)
class Stop:
    action: str  # the action the sample KB's label expects
    question: str
    scenario: str = ""


# From sample_kb/questions.jsonl (enc-ans-01, pol-ask-01, enc-abs-05): one per action.
STOPS = (
    Stop("ANSWER", "When was the Harlow Bridge opened?"),
    Stop("ASK", "Am I eligible for the Winter Fuel Payment?", "I am 72 and my household income is £12,000."),
    Stop("ABSTAIN", "Who painted the Mona Lisa?"),
)
VERBS = {"ANSWER": "answers", "ASK": "asks a clarification", "ABSTAIN": "abstains"}


def why(trace: Trace, decision: Decision) -> str:
    """One paragraph walking the trace to the verdict (plain text; the caller escapes it)."""
    from components.action import rule_sentence
    s = trace.signals
    parts = []
    if trace.passages:
        top = trace.passages[0].passage
        parts.append(f"Retrieval ranked “{top.title}” first (retrieval confidence {s.confidence:.2f}; "
                     f"{s.coverage:.0%} of the question's terms were found in the passages).")
    else:
        parts.append("Retrieval found no passage at all.")
    picked = trace.evidence.sentences[0].text if trace.evidence is not None and trace.evidence.sentences else None
    if picked is not None:
        parts.append(f"The evidence step picked “{picked}”, covering {s.evidence_coverage:.0%} of the question's "
                     "topics.")
    parts.append(f"The claim checked against it, “{trace.claim.text}”, is entailed with probability "
                 f"{s.sufficiency:.2f}.")
    answer = trace.answer
    if decision.action == "ANSWER" and answer is not None and answer.value and answer.sentence != picked:
        # the value an ANSWER gives is looked for in its own stage, which may quote another sentence (under a
        # refusal it is no answer: a town offered as the painter of the Mona Lisa only confuses)
        title = next((p.passage.title for p in trace.passages if p.passage.id == answer.passage_id), "")
        parts.append(f"The value asked for, “{answer.value}”, was found in “{answer.sentence}”"
                     + (f" (“{title}”)." if title else "."))
    conditions = trace.variables.conditions
    if conditions:
        known = sum(c.status == "established" for c in conditions)
        failed = sum(c.status == "contradicted" for c in conditions)
        open_ = [c.text for c in conditions if c.status == "missing"]
        parts.append(f"The passage sets {len(conditions)} condition(s): {known} established by your facts, "
                     f"{failed} contradicted, {len(open_)} unknown" + (f" (e.g. “{open_[0]}”)." if open_ else "."))
    else:
        parts.append("The passage sets no conditions on the asker.")
    parts.append(f"The gate then {VERBS[decision.action]}: rule {decision.rule} — {rule_sentence(decision)}")
    return " ".join(parts)
