"""Hand-made traces for the UI tests: realistic enough to fill every panel, no model needed."""
from __future__ import annotations

from dataclasses import replace

from core.evidence import choose_answer
from core.text import split_sentences
from core.types import (Claim, Condition, NliScores, Passage, PassageNli, Query, RetrievedPassage, Trace,
                        VariableState)
from tests.factories import signals

XSS_SCRIPT = "<script>alert(1)</script>"
XSS_IMG = "<img src=x onerror=alert(1)>"

WINTER = ("# Winter Fuel Payment\n\nThe Winter Fuel Payment helps older people with heating costs. "
          "You can get it if you:\n\n- are aged 66 or over\n- have lived in Calvera for 5 years\n\n"
          "The payment is £250 a year.")
BUS = "# Older persons bus pass\n\nThe bus pass gives free off-peak travel to residents aged 66 or over."


def passage(doc_id: str, text: str, title: str, offset: int = 0) -> Passage:
    """A passage that starts ``offset`` characters into its document (sentence offsets are document-based)."""
    sentences = tuple(replace(s, start=s.start + offset, end=s.end + offset) for s in split_sentences(text))
    return Passage(id=f"{doc_id}#0", doc_id=doc_id, title=title, text=text, start=offset, end=offset + len(text),
                   sentences=sentences, source=f"{doc_id}.md")


def nli(entail: float, contradict: float = 0.05) -> NliScores:
    return NliScores(entailment=entail, neutral=round(1 - entail - contradict, 4), contradiction=contradict)


def rich_trace(doc_text: str = WINTER, *, fallback: bool = False, sig=None, with_conditions: bool = True,
               question: str = "Can I get the Winter Fuel Payment?") -> Trace:
    """Two passages (the first with a document-level offset), NLI for each, two conditions (one missing)."""
    first = passage("policy/winter_fuel_payment", doc_text, "Winter Fuel Payment", offset=120)
    second = passage("policy/older_persons_bus_pass", BUS, "Older persons bus pass")
    passages = (RetrievedPassage(first, 1, 0.71, 6.2, 1.0, 0.826),
                RetrievedPassage(second, 2, 0.52, 2.1, 0.34, 0.448))
    results = (PassageNli(first.id, nli(0.91), best_sentence=1, sub_claims=(), kept=True),
               PassageNli(second.id, nli(0.08, 0.3), best_sentence=1, sub_claims=(), kept=fallback))
    conditions = (
        Condition("are aged 66 or over", "I am aged 66 or over.", "bullet", first.id, "established",
                  "I am 70.", None, "numeric: 70 ≥ 66", "all"),
        Condition("have lived in Calvera for 5 years", "I have lived in Calvera for 5 years.", "bullet", first.id,
                  "missing", "", nli(0.2, 0.1), "nli", "all"),
    ) if with_conditions else ()
    missing = tuple(c.text for c in conditions if c.status == "missing")
    known = ("70",) + tuple(c.text for c in conditions if c.status == "established")
    variables = VariableState(known=known, conditions=conditions, missing=missing,
                              incompleteness=len(missing) / (len(known) + len(missing)) if conditions else 0.0,
                              outcome="undetermined" if conditions else "none")
    sig = sig or signals(incompleteness=variables.incompleteness, n_conditions=len(conditions),
                         n_missing=len(missing), condition_outcome=variables.outcome)
    return Trace(query=Query(question, scenario="I am 70."), passages=passages,
                 claim=Claim("I can get the Winter Fuel Payment.", "polar", source="rules"),
                 nli=results, fallback=fallback, variables=variables, signals=sig, kb="sample_kb/documents",
                 answer=choose_answer(question, "", passages, results),
                 settings={"fusion_alpha": 0.6, "entail_keep": 0.5}, timings={"retrieval": 0.01, "nli": 0.2})
