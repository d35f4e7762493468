"""Amounts the evidence gives by the asker's age, and the age the asker told.

A guide often states an amount or a length of time once per age band ("The weekly rate is £71.70 for people aged
under 25 and £90.50 for people aged 25 or over."). Until the asker tells an age, the amount turns on something
nobody has said: the gate asks it (rule ``value_by_age``, reading ``Signals.n_age_bands`` and ``age_told``)
rather than answer with one band's value or refuse for want of a single one. Once an age is told, the analysis's
answer (``Trace.answer``, chosen by ``core.pipeline``'s answer stage over the evidence's) is that age's value,
citing its sentence, so the UI, the CLI and batch evaluation give the same one. Arithmetic on the texts only
(``core.quantities``), no model.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Sequence

from core.quantities import Quantity, extract, within_bound
from core.types import AnswerChoice, Query, RetrievedPassage
from core.variables import FIRST_PERSON

# The quantity kind (``core.quantities``) of the value a question of each answer type asks for, where a rule text
# may give it by the asker's age, and the entity label an answer of that kind carries (``core.evidence.VALUE_LABELS``:
# spaCy reads "13 weeks" as a DATE).
AGE_BANDED = {"MONEY": "money", "RATE": "money", "DURATION": "duration"}
BAND_LABELS = {"money": "MONEY", "duration": "DATE"}
AGE_ASKED = re.compile(r"\b(?:how old|age|aged|born)\b", re.I)  # a follow-up that asked it
BORN = re.compile(r"\bborn\b", re.I)  # "I was born in 1961" gives an age too
AGE_BOUNDS = {"<": "under {}", "<=": "{} or under", ">": "over {}", ">=": "{} or over", "==": "{}"}
BANDS_PASSAGES = 3  # the top retrieved passages read for bands (those of the top document only)


@dataclass(frozen=True)
class AgeBands:
    """Values of the asked kind that a passage gives for askers of different ages."""
    passage_id: str
    text: str  # the sentence, or two adjacent sentences, that give them
    kind: str  # the quantity kind of the values: "money" or "duration"
    values: tuple[str, ...]  # "£71.70", "£90.50"
    ages: tuple[str, ...]  # "under 25", "25 or over": the ages as the text bounds them
    bounds: tuple[tuple[Quantity, ...], ...]  # per value, the age quantities that qualify it (none: any other age)

    def value_for(self, age: float) -> str:
        """The value for an asker of ``age``: the one whose bounds hold it, the tightest where several do (84 is
        "80 or over" before "66 or over"), the unqualified one where none does; "" where that leaves none or two."""
        holding = [(k, b) for k, b in enumerate(self.bounds) if b and all(within_bound(age, q) for q in b)]
        if holding:
            return self.values[max(holding, key=lambda kb: _tightness(kb[1], age))[0]]
        otherwise = [v for v, b in zip(self.values, self.bounds) if not b]
        return otherwise[0] if len(otherwise) == 1 else ""


def age_bands(query: Query, answer_type: str, passages: Sequence[RetrievedPassage]) -> AgeBands | None:
    """Where the asker's own question ("How much Jobseeker's Allowance would I get?": first person, or told with a
    scenario) asks for an amount or a length of time (``answer_type``), the first sentence of the top document's
    retrieved passages that, alone or with the next, gives two values or more of that kind with an age bound
    ("The weekly rate is £71.70 for people aged under 25 and £90.50 for people aged 25 or over."; "up to 13 weeks
    (or 17 weeks if you're aged 60 or over)"), with its values and the ages that qualify each. Read on training
    data before the gate relied on it: with no age told it holds for 2 of the 270 train-KB questions, both to be
    asked ("How far ahead can I claim Housing Benefit?" while moving), and for 5 of the 2,330 ConditionalQA train
    questions, 3 of them with an answer that turns on a condition (a quarter of them do); on no ShARC, ContractNLI
    or SQuAD training question. It does not check that the values are of the thing asked: a savings limit asked of
    a page whose only banded amount is the weekly rate is asked the age too."""
    if not (FIRST_PERSON.search(query.question) or query.scenario.strip()):
        return None
    return banded(answer_type, passages)


def banded(answer_type: str, passages: Sequence[RetrievedPassage]) -> AgeBands | None:
    """The values of ``answer_type``'s kind that the top document's retrieved passages give by age, whoever asks
    (``age_bands`` without its asker): what an answer to "How much is the Winter Fuel Payment?" gives in full
    rather than as one band's value."""
    kind = AGE_BANDED.get(answer_type)
    if not kind or not passages:
        return None
    top = passages[0].passage.doc_id
    for retrieved in passages[:BANDS_PASSAGES]:
        if retrieved.passage.doc_id != top:
            continue
        sentences = [s.text for s in retrieved.passage.sentences if not s.text.lstrip().startswith("#")] \
            or [retrieved.passage.text]
        for k in range(len(sentences)):
            for text in (sentences[k],) + ((f"{sentences[k]} {sentences[k + 1]}",) if k + 1 < len(sentences) else ()):
                found = extract(text)
                values = [q for q in found if q.kind == kind]
                ages = [q for q in found if q.kind == "age"]
                if len({round(q.value, 2) for q in values}) >= 2 and ages:
                    return AgeBands(retrieved.passage.id, text, kind, tuple(q.text for q in values),
                                    tuple(dict.fromkeys(_age_bound(q) for q in ages)), _qualifying(values, ages))
    return None


def answer_by_age(query: Query, answer_type: str, passages: Sequence[RetrievedPassage]) -> AnswerChoice | None:
    """The answer where the evidence gives the amount asked by age (``age_bands``) and the age the asker told
    (``told_age``) picks one of its values: that value, citing the sentence that gives it. None otherwise (no
    bands, no age told, or an age no band holds), and the answer is chosen as for any question."""
    bands = age_bands(query, answer_type, passages)
    age = told_age(query)[1] if bands is not None else None
    value = bands.value_for(age) if bands is not None and age is not None else ""
    return AnswerChoice(bands.passage_id, bands.text, value, BAND_LABELS[bands.kind]) if value else None


def _qualifying(values: Sequence[Quantity], ages: Sequence[Quantity]) -> tuple[tuple[Quantity, ...], ...]:
    """Per value, the ages that qualify it: those after it up to the next value where the text first gives a
    value ("£71.70 for people aged under 25 and £90.50 for people aged 25 or over"), those before it back to
    the previous value where it first gives an age ("aged 66 to 79 gets £200 … aged 80 or over gets £300")."""
    after = values[0].span[0] < ages[0].span[0]
    edges = [q.span[0] for q in values]
    out = []
    for k, value in enumerate(values):
        low, high = (edges[k], edges[k + 1] if k + 1 < len(edges) else math.inf) if after else \
            (edges[k - 1] if k else -math.inf, edges[k])
        out.append(tuple(a for a in ages if low < a.span[0] < high))
    return tuple(out)


def _tightness(bounds: Sequence[Quantity], age: float) -> float:
    """How closely a band's bounds fit an age (the smallest gap from the age to a bound: higher is tighter)."""
    return -min(abs(age - b.value) for b in bounds)


def told_age(query: Query) -> tuple[bool, float | None]:
    """Whether the asker has told an age (the question, the scenario or a reply says one or a birth, or a
    follow-up asked it), and the first one said where a number gives it ("I'm 23", "a 23-year-old", a bare
    "70" replied to "How old are you?")."""
    said = " ".join([query.question, query.scenario, *(reply for _, reply in query.history)])
    ages = [q.value for q in extract(said) if q.kind == "age"] + [
        q.value for asked, reply in query.history if AGE_ASKED.search(asked)
        for q in extract(reply) if q.kind in ("number", "count")]
    told = bool(ages) or bool(BORN.search(said)) or any(AGE_ASKED.search(asked) for asked, _ in query.history)
    return told, (ages[0] if ages else None)


def _age_bound(age: Quantity) -> str:
    """An age as the text bounds it: "under 25", "25 or over"."""
    return AGE_BOUNDS.get(age.relation, "{}").format(f"{age.value:g}")
