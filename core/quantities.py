"""Numeric checks of conditions that state quantities: ages, durations, money, hours, counts, years.

An SNLI-trained model does no arithmetic: "I am 67" against "the applicant is over 65"
comes out neutral, and "fourteen months" against "at least two years" is a coin toss.
This module reads each number with its unit and relation words ("at least", "or over",
"between X and Y"), turns condition and fact into intervals and compares them, so such
a condition is decided by arithmetic the trace can show ("14 months < 24 months required").
Pure regular expressions: fast, deterministic, no model.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from datetime import date

from core.text import STOPWORDS, straight_quotes

KINDS = ("age", "duration", "money", "hours", "count", "year", "number")


@dataclass(frozen=True)
class Quantity:
    """A number read from text, in normalised units.

    ``value``: ages in years, durations in months, money as the amount written (``unit`` says
    the currency and period, e.g. "£/week"), hours as written ("hours/week"), counts as a
    number of ``unit`` (a singular noun such as "child"), years as a (fractional) year.
    ``relation`` is how the text bounds the value (>=, >, <=, <, ==); ``subject`` says whose
    age or count it is: "" for the user, or "child" / "partner". A bare number right after a noun
    ("a Tier 4 sponsor", "a level 3 qualification") is that noun's ``label``: it compares only with a
    number of the same label or of none ("level 3" is no bound on a Tier 4 sponsor); an exact labelled
    number names a thing, ``named`` ("student visa" in "a Tier 4 (General) student visa"), and compares
    only with one that names it too.
    """
    value: float
    kind: str
    unit: str
    relation: str = "=="
    span: tuple[int, int] = (0, 0)
    subject: str = ""
    text: str = ""
    label: str = ""  # the noun a bare number is of ("tier" in "a Tier 4 sponsor", "level" in "level 3")
    named: tuple[str, ...] = ()  # the stems of the words after a labelled number ("sponsor" of "a Tier 4 sponsor")


@dataclass(frozen=True)
class NumericCheck:
    """The arithmetic verdict on one condition: which fact decided it and why."""
    status: str  # established | contradicted
    fact: str
    condition_quantity: Quantity
    fact_quantity: Quantity
    explanation: str


# --- vocabulary -----------------------------------------------------------------------

_ONES = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000}
_WORD = r"\b(?:" + "|".join(sorted([*_ONES, *_TENS, *_SCALES, "dozen"], key=len, reverse=True)) + r")\b"
_WORDS = (rf"{_WORD}(?:(?:\s+|-){_WORD}"
          rf"|(?:(?<=hundred)|(?<=thousand)|(?<=million))\s+and\s+{_WORD})*")
_TIME = r"(?:years?|yrs?|months?|weeks?|wks?|days?|decades?|fortnights?)"

# "within five (5) business days": contracts repeat a spelled-out number in digits, and spaCy's entity
# model then reads "five" as a bare number and "(5) business days" as nothing.
_REPEATED_IN_DIGITS = re.compile(rf"(?P<words>{_WORDS})\s+\(\d[\d,.]*\)", re.I)

_NUMBER = re.compile(
    rf"(?<![\w.,])(?:(?P<digits>\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    rf"(?P<suffix>k|m|bn|st|nd|rd|th)?|(?P<words>{_WORDS})"
    rf"|(?P<half>half\s+an?)(?=\s+{_TIME}\b)|(?P<article>an?)(?=\s+{_TIME}\b)|(?P<couple>a\s+couple\s+of))"
    rf"(?P<andhalf>\s+and\s+a\s+half)?(?!\w)", re.I)

# Months per unit (durations) and years per unit (ages).
_MONTHS = {"year": 12.0, "yr": 12.0, "month": 1.0, "week": 12 / 52.1775, "wk": 12 / 52.1775,
           "day": 12 / 365.25, "decade": 120.0, "fortnight": 24 / 52.1775}
# Periods of money/hours amounts that convert into each other (per year).
_PER_YEAR = {"week": 52.0, "fortnight": 26.0, "month": 12.0, "year": 1.0}
_PERIOD_WORDS = {"weekly": "week", "fortnightly": "fortnight", "monthly": "month", "yearly": "year", "annual": "year",
                 "annually": "year", "annum": "year", "yr": "year", "wk": "week", "daily": "day",
                 "hourly": "hour", "pa": "year", "pw": "week", "pcm": "month"}
_CURRENCY = {"£": "£", "pound": "£", "pounds": "£", "quid": "£", "gbp": "£", "$": "$", "dollar": "$",
             "dollars": "$", "usd": "$", "€": "€", "euro": "€", "euros": "€", "eur": "€"}
_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august",
                "september", "october", "november", "december")
# a month's name or its abbreviation ("July", "Sept."), as a regular expression
MONTH_RE = r"(?:" + "|".join(_MONTH_NAMES) + r"|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\.?"

_RELATIONS = {
    ">=": ("at least", "a minimum of", "minimum of", "no less than", "not less than", "no fewer than",
           "not fewer than", "not under", "not below", "not younger than", "upwards of"),
    ">": ("more than", "over", "above", "greater than", "older than", "longer than", "higher than",
          "exceeding", "in excess of", "after", "just over", "over the age of", "above the age of"),
    "<=": ("at most", "up to", "no more than", "not more than", "a maximum of", "maximum of",
           "not exceeding", "not over", "not above", "no longer than", "no older than", "not older than",
           "up until", "until", "by", "within", "within the last", "within the past", "in the last", "in the past",
           "in the previous", "in the preceding", "during the last", "during the past", "during the previous",
           "during the preceding", "over the last", "over the past", "over the previous", "over the preceding"),
    "<": ("less than", "under", "below", "fewer than", "younger than", "shorter than", "lower than",
          "before", "nearly", "almost", "just under", "under the age of", "below the age of"),
    "between": ("between", "from"),
}
_PHRASE_REL = {p: rel for rel, phrases in _RELATIONS.items() for p in phrases}
_PRE = re.compile(r"(?:^|(?<=[^\w']))(?P<rel>" + "|".join(
    re.escape(p).replace(r"\ ", r"\s+") for p in sorted(_PHRASE_REL, key=len, reverse=True)) + r")\s*$")
# A bound named by its noun: "up to a maximum indebtedness of $1,392,000", "a minimum income of £12,000".
_PRE_NAMED = re.compile(
    r"(?:^|(?<=[^\w']))(?:up\s+to\s+)?(?:an?\s+|the\s+)?(?P<rel>maximum|minimum)\s+(?:[a-z]+\s+){1,2}of\s*$", re.I)
_YEAR_ONLY = {"after", "before", "until", "up until", "by"}
_POST_GE = re.compile(r"^\s*(?:(?:or|and)\s+(?:over|more|older|above|greater|longer|higher|upwards|after)\b|\+|plus\b)")
_POST_LE = re.compile(r"^\s*(?:or|and)\s+(?:under|less|fewer|younger|below|lower|shorter|before|earlier)\b")
_BARE_RANGE = re.compile(r"\s*(?:to|–|-)\s*\d")
_INVERT = {">=": "<", ">": "<=", "<=": ">", "<": ">="}

_PERSON = {"child": "child", "children": "child", "kid": "child", "kids": "child", "son": "child",
           "sons": "child", "daughter": "child", "daughters": "child", "baby": "child", "babies": "child",
           "boy": "child", "girl": "child", "dependant": "child", "dependants": "child",
           "partner": "partner", "spouse": "partner", "husband": "partner", "wife": "partner",
           "mum": "parent", "mom": "parent", "mother": "parent", "dad": "parent", "father": "parent",
           "parent": "parent", "parents": "parent", "grandmother": "grandparent", "grandfather": "grandparent",
           "grandparent": "grandparent", "grandparents": "grandparent", "gran": "grandparent",
           "grandma": "grandparent", "grandpa": "grandparent", "nan": "grandparent", "brother": "sibling",
           "sister": "sibling", "sibling": "sibling",
           "i": "", "i'm": "", "me": "", "my": "", "you": "", "you're": "", "your": "", "applicant": "",
           "applicants": "", "claimant": "", "employee": "", "worker": "", "tenant": "", "person": "",
           "man": "", "woman": "", "driver": "", "drivers": "", "people": "", "resident": "", "student": ""}
_COUNT_NOUNS = {"child": "child", "children": "child", "kid": "child", "kids": "child", "son": "child",
                "sons": "child", "daughter": "child", "daughters": "child", "dependant": "child",
                "dependants": "child", "dependent": "child", "dependents": "child",
                "employee": "employee", "employees": "employee", "staff": "employee", "worker": "employee",
                "workers": "employee", "people": "person", "persons": "person", "person": "person",
                "adult": "adult", "adults": "adult", "bedroom": "bedroom", "bedrooms": "bedroom",
                "room": "room", "rooms": "room", "vehicle": "vehicle", "vehicles": "vehicle",
                "car": "vehicle", "cars": "vehicle", "property": "property", "properties": "property",
                "pet": "pet", "pets": "pet", "dog": "dog", "dogs": "dog", "job": "job", "jobs": "job"}
_NOT_COUNT = {"hours", "hrs", "times", "percent", "years", "months", "weeks", "days", "pounds", "dollars",
              "euros", "less", "plus", "yes", "was", "has", "is", "this", "its", "his", "as", "us"}
# "I am 68", "I'm only 68", "she turned 19": a person's number after a copula (a word such as "only" or "now" between).
_COPULA = re.compile(r"(?:\b(?:is|are|am|be|was|were|been|being|turn(?:s|ed|ing)?|reach(?:es|ed|ing)?)"
                     r"|'m|'re|'s)(?:\s+(?:only|just|now|currently|still|already))?\s*$")
_AGE_CUE = re.compile(r"\b(?:aged?|age\s+of|ages)\s*$")
_PERSON_BEFORE = re.compile(r"\b(?:child|children|kids?|sons?|daughters?|bab(?:y|ies)|drivers?|people"
                            r"|persons?|adults?|anyone|someone|applicants?|dependants?|partner|spouse)\s*$")
_OR_BETWEEN = re.compile(r"\s*(?:,\s*(?:or\s+)?|or\s+)")  # "3 or 4", "2, 3 or 4"
# "or" that belongs to a bound ("level 7 or above", "1 year or longer") and joins no alternatives
OR_IN_BOUND = re.compile(r"\bor\s+(?:above|over|more|longer|higher|greater|less|under|fewer|below|older|younger|"
                         r"earlier|later|after|before)\b", re.I)
_ANOTHER_WAY = re.compile(r"\bor\b", re.I)
_BOTH_HOLD = re.compile(r"\b(?:and|but)\b|[.;]", re.I)
_NEGATED = re.compile(r"(?:\bnot|n't|\bnever)\s+(?:\w+\s+)?$")
_NONE_OF = re.compile(r"\b(?:no|(?:don't|do\s+not|doesn't|does\s+not|haven't|have\s+not|hasn't|has\s+not)"
                      r"\s+(?:have\s+|got\s+)?any)\s+(?P<noun>[a-z]+)\b")


def _normalise(text: str) -> str:
    """Lower case with curly quotes straightened (same length, so spans stay valid)."""
    return straight_quotes(text).replace("\u2013", "-").lower()


def without_repeated_digits(text: str) -> str:
    """``text`` with each spelled-out number's repetition in digits dropped ("five (5) business days" →
    "five business days"), so that a named-entity model reads the whole value."""
    return _REPEATED_IN_DIGITS.sub(lambda m: m.group("words"), text)


def _words_value(words: str) -> float:
    total = current = 0
    for word in re.findall(r"[a-z]+", words):
        if word == "and":
            continue
        if word in _ONES:
            current += _ONES[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word in ("dozen", "hundred"):
            current = (current or 1) * (12 if word == "dozen" else 100)
        else:
            total += (current or 1) * _SCALES[word]
            current = 0
    return float(total + current)


def singular(noun: str) -> str:
    """A plural noun's singular ("babies" → "baby", "churches" → "church", "novels" → "novel")."""
    if noun.endswith("ies"):
        return noun[:-3] + "y"
    if noun.endswith(("ches", "shes", "sses", "xes")):
        return noun[:-2]
    return noun[:-1] if noun.endswith("s") and not noun.endswith("ss") else noun


# --- extraction -----------------------------------------------------------------------

def extract(text: str) -> list[Quantity]:
    """Every quantity in ``text``, in order.

    "between X and Y" (and "from X to Y") gives two quantities, the bounds ``>=`` X and ``<=`` Y.
    """
    if not isinstance(text, str):
        raise TypeError(f"extract() takes a string, not {type(text).__name__}")
    low = _normalise(text)
    found: list[Quantity] = []
    consumed = 0
    pending_upper = -1  # where the second bound of "between X and Y" is expected
    for m in _NUMBER.finditer(low):
        if m.start() < consumed:
            continue
        quantity, end = _read(text, low, m)
        if quantity is None:
            continue
        consumed = end
        if quantity.span[0] == pending_upper:
            found[-1], quantity = _one_kind(found[-1], _replace(quantity, relation="<="))
            if quantity.kind == found[-1].kind and "/" in quantity.unit and "/" not in found[-1].unit:
                found[-1] = _replace(found[-1], unit=quantity.unit)  # "between £100 and £200 a week"
            pending_upper = -1
        elif quantity.relation == "between" or (quantity.relation == "==" and _BARE_RANGE.match(low[end:])):
            # "between 16 and 24", "from 16 to 24", and a bare "aged 16 to 24"
            quantity = _replace(quantity, relation=">=")
            joint = re.match(r"\s*(?:and|to|-|–)\s*", low[end:])
            pending_upper = end + joint.end() if joint else -1
        elif found and _joined_bounds(found[-1], quantity, low):
            found[-1], quantity = _one_kind(found[-1], quantity)
        found.append(quantity)
    for m in _NONE_OF.finditer(low):
        noun = m.group("noun")
        if noun in _COUNT_NOUNS:
            found.append(Quantity(0.0, "count", _COUNT_NOUNS[noun], "==", (m.start(), m.end()),
                                  text=text[m.start():m.end()]))
    return sorted(found, key=lambda q: q.span)


HOURS_IN_A_WEEK = 7 * 24
_LOWER, _UPPER = frozenset({">=", ">"}), frozenset({"<=", "<"})
# What joins the two bounds of a range: "at least 16 and under 19", "over 18 but not yet 25"
_BOUND_JOIN = re.compile(r"\s*,?\s*(?:and|but)\s+(?:[a-z']+\s+){0,3}")


def _joined_bounds(first: Quantity, second: Quantity, low: str) -> bool:
    """``second`` closes a range ``first`` opens: a lower and an upper bound joined by "and" or "but"
    ("be at least 16 and under 19"), so what one of them measures the other does too."""
    directions = {first.relation, second.relation}
    return bool(directions & _LOWER and directions & _UPPER
                and _BOUND_JOIN.fullmatch(low[first.span[1]:second.span[0]]))


def _in_question(low: str, pos: int) -> bool:
    """True when ``pos`` lies in a sentence that ends with a question mark."""
    rest = re.search(r"[.!?\n]", low[pos:])
    return bool(rest) and rest.group() == "?"


def _replace(q: Quantity, **changes) -> Quantity:
    return Quantity(**{**q.__dict__, **changes})


def _with_kind_of(first: Quantity, second: Quantity) -> Quantity:
    """The first bound of "between 16 and 19 years" takes the unit written after the second."""
    scale = second.value / _raw_value(second) if _raw_value(second) else 1.0
    return _replace(first, value=first.value * scale, kind=second.kind, unit=second.unit,
                    subject=second.subject)


def _one_kind(first: Quantity, second: Quantity) -> tuple[Quantity, Quantity]:
    """The two bounds of one range measure one thing: a bare number takes the other bound's kind
    ("between 16 and 19 years", "at least 16 and under 19")."""
    if first.kind == "number" and second.kind != "number":
        return _with_kind_of(first, second), second
    if second.kind == "number" and first.kind != "number":
        return first, _with_kind_of(second, first)
    return first, second


def _raw_value(q: Quantity) -> float:
    numbers = re.findall(r"\d+(?:\.\d+)?", q.text.replace(",", ""))
    return float(numbers[0]) if numbers else (_words_value(_normalise(q.text)) or 0.0)


def _read(text: str, low: str, m: re.Match) -> tuple[Quantity | None, int]:
    """Classify one number by its neighbours; returns the quantity and where its phrase ends."""
    value, ordinal = _value(m)
    start, end = m.start(), m.end()
    before, after = low[:start], low[end:]
    if ordinal:
        birthday = re.match(r"\s*birthday\b", after)
        if birthday:
            subject = _subject(low, start, "")
            end += birthday.end()
            return Quantity(value, "age", "years", "==", (start, end), subject, text[start:end]), end
        return None, end
    if _is_day_of_month(before, after, value, m):
        return None, end

    currency = re.search(r"([£$€])\s*$", before) or re.search(r"\b(gbp|usd|eur)\s+$", before)
    if currency:
        start = currency.start()
        before = low[:start]
    word_currency = re.match(r"\s*(?:thousand\s+|million\s+)?(pounds?|quid|dollars?|euros?|gbp|usd|eur)\b", after)
    rel, rel_start = _pre_relation(before)
    negated = bool(_NEGATED.search(low[:rel_start]))

    if currency or word_currency:
        symbol = _CURRENCY[(currency or word_currency).group(1)]
        scale = re.match(r"\s*(thousand|million|billion|k|m|bn)\b", after)
        if m.group("suffix") in ("k", "m", "bn"):
            value *= {"k": 1e3, "m": 1e6, "bn": 1e9}[m.group("suffix")]
        elif scale:
            value *= {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9}[scale.group(1)]
            end += scale.end()
        if word_currency:
            end = m.end() + word_currency.end()
        period, end = _period(low, end)
        period = period or _period_before(low[:rel_start]) or _period_past_relation(low, end)
        unit = f"{symbol}/{period}" if period else symbol
        return _finish(text, low, value, "money", unit, rel, start, end, negated, "")

    if m.group("suffix") in ("k", "m", "bn"):
        return None, end
    hours = re.match(r"\s*(?:hours?|hrs?)\b", after)
    if hours:
        period, end = _period(low, end + hours.end())
        period = period or _period_past_relation(low, end)
        return _finish(text, low, value, "hours", f"hours/{period}" if period else "hours",
                       rel, start, end, negated, "")

    percent = re.match(r"\s*(?:%|per\s*cent\b|percent\b)", after)
    if percent:
        return _finish(text, low, value, "number", "%", rel, start, end + percent.end(), negated, "")

    unit = re.match(rf"\s*-?\s*(?P<unit>{_TIME})\b(?P<old>\s*-?\s*old\b|\s+of\s+age\b)?", after)
    if unit:
        name = singular(unit.group("unit"))
        end += unit.end()
        half = re.match(r"\s+and\s+a\s+half\b", low[end:])
        if half:
            value += 0.5
            end += half.end()
        is_age = bool(unit.group("old")) or bool(_AGE_CUE.search(low[:rel_start]))
        if is_age:
            years = value * _MONTHS[name] / 12
            follower = re.match(r"\s*(\w+)", low[end:])
            subject = _subject(low, start, follower.group(1) if follower else "")
            return _finish(text, low, years, "age", "years", rel, start, end, negated, subject)
        ago = re.match(r"\s+ago\b", low[end:])
        if ago:
            end += ago.end()
        return _finish(text, low, value * _MONTHS[name], "duration", "months", rel, start, end, negated, "")

    if m.group("digits") and len(m.group("digits")) == 4 and 1900 <= value <= 2100:
        month = re.search(rf"(?:\b(\d{{1,2}})(?:st|nd|rd|th)?\s+)?\b({MONTH_RE})\s*(?:(\d{{1,2}})(?:st|nd|rd|th)?)?,?\s*$",
                          before)
        fraction = 0.0
        if month:
            index = next(i for i, name in enumerate(_MONTH_NAMES) if name.startswith(month.group(2)[:3]))
            day = int(month.group(1) or month.group(3) or 1)
            fraction = index / 12 + (day - 1) / 365.25
            rel, rel_start = _pre_relation(low[:month.start()])
            start = month.start()
        return _finish(text, low, value + fraction, "year", "year", rel, start, end, negated, "")

    if m.group("article") or m.group("half"):
        return None, end
    count = re.match(r"\s*(?:(?:or|and)\s+(?:more|over|fewer|less|under)\s+)?(?:([a-z-]+)\s+)?([a-z]+)\b", after)
    if count:
        noun = count.group(2) if count.group(1) and count.group(2) in _COUNT_NOUNS else (count.group(1) or count.group(2))
        if noun in _COUNT_NOUNS or (noun.endswith("s") and len(noun) > 3 and noun not in _NOT_COUNT
                                    and not noun.endswith("ss") and not re.match(r"\s*(?:or|and)\b", after)):
            unit_name = _COUNT_NOUNS.get(noun, singular(noun))
            if unit_name == "person" and _EMPLOYS.search(before):
                unit_name = "employee"  # "employs fewer than 10 people" counts staff
            return _finish(text, low, value, "count", unit_name, _post_relation(after) or rel, start,
                           end + count.end(), negated, "")

    period, period_end = _period(low, end)
    if period:  # "I earn about 120 a week": an amount without a currency, comparable with none
        return _finish(text, low, value, "number", f"/{period}", rel, start, period_end, negated, "")
    age_context = (_COPULA.search(low[:rel_start]) or _AGE_CUE.search(low[:rel_start])
                   or (rel != "==" and _PERSON_BEFORE.search(low[:rel_start])))
    if age_context and 0 < value < 130:
        return _finish(text, low, value, "age", "years", rel, start, end, negated, _subject(low, start, ""))
    label = _LABEL.search(before) if rel_start == len(before) else None
    if label and _content_stem(label.group(1)):
        # "a Tier 4 sponsor", "at least level 3": the number is the label's, bounded by words before it
        rel, _ = _pre_relation(before[:label.start()])
        quantity, end = _finish(text, low, value, "number", "", rel, start, end, negated, "")
        after = _NAMED_AFTER.match(low[end:])
        named = tuple(stem for word in (after.group(1).split() if after else ()) if (stem := _content_stem(word)))
        return (_replace(quantity, label=label.group(1), named=named) if quantity else None), end
    return _finish(text, low, value, "number", "", rel, start, end, negated, "")


def _value(m: re.Match) -> tuple[float, bool]:
    """The number a match spells, and whether it is an ordinal ("15th")."""
    if m.group("digits"):
        value = float(m.group("digits").replace(",", ""))
        ordinal = m.group("suffix") in ("st", "nd", "rd", "th")
    elif m.group("words"):
        value, ordinal = _words_value(m.group("words")), False
    elif m.group("half"):
        value, ordinal = 0.5, False
    elif m.group("couple"):
        value, ordinal = 2.0, False
    else:
        value, ordinal = 1.0, False
    if m.group("andhalf"):
        value += 0.5
    return value, ordinal


def _is_day_of_month(before: str, after: str, value: float, m: re.Match) -> bool:
    if not m.group("digits") or value > 31 or "." in m.group("digits"):
        return False
    return bool(re.match(rf"\s*(?:of\s+)?{MONTH_RE}\b", after) or re.search(rf"\b{MONTH_RE}\s*$", before))


def _pre_relation(before: str) -> tuple[str, int]:
    """The relation phrase that ends right before a number, and where it starts."""
    m = _PRE.search(before)
    if not m:
        named = _PRE_NAMED.search(before)
        if named:
            return ("<=" if named.group("rel").lower() == "maximum" else ">="), named.start()
        return "==", len(before)
    phrase = re.sub(r"\s+", " ", m.group("rel"))
    return _PHRASE_REL[phrase] if phrase not in _YEAR_ONLY else f"year:{_PHRASE_REL[phrase]}", m.start("rel")


def _post_relation(after: str) -> str:
    if _POST_GE.match(after):
        return ">="
    if _POST_LE.match(after):
        return "<="
    return ""


# A period named before the amount it qualifies: "a weekly household income below £450", "annual turnover
# under £250,000" (a few words between, in the same clause).
_PERIOD_BEFORE = re.compile(r"\b(weekly|fortnightly|monthly|yearly|annual)\b(?:\s+[a-z'-]+){0,4}\s*$")
# A verb of employing before a count of people: those people are staff ("employs fewer than 10 people").
_EMPLOYS = re.compile(r"\bemploy(?:s|ed|ing)?\b(?:\s+[a-z'-]+){0,3}\s*$")
# The noun a bare number follows: "tier 4", "level 3", "section 5".
_LABEL = re.compile(r"\b([a-z][a-z'-]*)\s+$")
# The (up to two) words a labelled number names, past a parenthesis: "Tier 4 (General) student visa".
_NAMED_AFTER = re.compile(r"(?:\s*\([^)]*\))?((?:\s+[a-z][a-z'-]*){1,2})")


def _period_before(before: str) -> str:
    """The period an adjective before the amount gives it ("weekly income below"), or ""."""
    m = _PERIOD_BEFORE.search(before)
    return _PERIOD_WORDS[m.group(1)] if m else ""


def _period(low: str, end: int) -> tuple[str, int]:
    """The period after an amount ("a week", "per month", "weekly"), and where it ends."""
    m = re.match(r"\s*(?:on\s+average\s+)?(?:(?:a|an|per|each|every|/|in\s+a)\s*(?P<unit>week|wk|fortnight|month|year|yr"
                 r"|annum|day|hour)\b|(?P<word>weekly|fortnightly|monthly|yearly|annually|daily|hourly|p\.?a\b\.?|pw|pcm)\b)",
                 low[end:])
    if not m:
        return "", end
    name = m.group("unit") or m.group("word").replace(".", "")
    return _PERIOD_WORDS.get(name, name), end + m.end()


def _period_past_relation(low: str, end: int) -> str:
    """The period after a trailing relation ("£151 or less a week", "35 hours or more a week"), or "": the
    relation is read where the quantity is finished (``_finish``); without its period the bound compared with
    nothing the user said per week."""
    relation = _POST_GE.match(low[end:]) or _POST_LE.match(low[end:])
    return _period(low, end + relation.end())[0] if relation else ""


# What puts "a N-year-old …" on the asker: "I am a", "I'm an", "as a" at the start of a sentence.
SAID_OF_SPEAKER = re.compile(r"(?:\b(?:i am|i'm|im|i was)|(?:^|[.!?]\s+)as)\s+an?\s+$")


def _subject(low: str, start: int, follower: str) -> str:
    """Whose age this is: a noun right after "N-year-old", else the nearest person word before it
    (across sentences: in "I have two children. One is seven." the seven is a child's age). The asker's
    own when it describes the asker ("I am a 14 year old girl", "As a 70-year-old man …")."""
    if SAID_OF_SPEAKER.search(low[:start]):
        return ""
    if follower in _PERSON:
        return _PERSON[follower]
    for word in reversed(re.findall(r"[a-z']+", low[:start])):
        if word in _PERSON:
            return _PERSON[word]
    return ""


def _finish(text: str, low: str, value: float, kind: str, unit: str, rel: str, start: int, end: int,
            negated: bool, subject: str) -> tuple[Quantity | None, int]:
    """Settle the relation (a trailing "or over" counts; a negation inverts) and build the quantity."""
    if rel.startswith("year:"):
        rel = rel[5:] if kind == "year" else "=="
    post = _post_relation(low[end:])
    if post and rel == "==":
        rel = post
        end += re.match(r"\s*(?:\+|plus|(?:or|and)\s+\w+)", low[end:]).end()
        if "/" in unit:  # the period after the relation ("£151 or less a week", ``_period_past_relation``) is its own
            end = _period(low, end)[1]
    if negated:
        if rel not in _INVERT:
            return None, end  # "I am not 65": says what the value is not, which bounds nothing
        rel = _INVERT[rel]
    return Quantity(value, kind, unit, rel, (start, end), subject, text[start:end]), end


# --- comparison -----------------------------------------------------------------------

@dataclass(frozen=True)
class _Interval:
    lo: float = -math.inf
    lo_closed: bool = False
    hi: float = math.inf
    hi_closed: bool = False

    @classmethod
    def of(cls, value: float, relation: str) -> "_Interval":
        return {">=": cls(value, True), ">": cls(value, False), "<=": cls(hi=value, hi_closed=True),
                "<": cls(hi=value, hi_closed=False)}.get(relation, cls(value, True, value, True))

    def intersect(self, other: "_Interval") -> "_Interval":
        lo, lo_closed = max((self.lo, self.lo_closed), (other.lo, other.lo_closed),
                            key=lambda b: (b[0], not b[1]))
        hi, hi_closed = min((self.hi, self.hi_closed), (other.hi, other.hi_closed),
                            key=lambda b: (b[0], b[1]))
        return _Interval(lo, lo_closed, hi, hi_closed)

    def scaled(self, factor: float) -> "_Interval":
        return _Interval(self.lo * factor, self.lo_closed, self.hi * factor, self.hi_closed)

    def below(self, value: float, closed: bool) -> bool:
        """Every point lies below a lower bound ``value`` (not reaching it, or touching an open one)."""
        return self.hi < value or (self.hi == value and not (self.hi_closed and closed))

    def above(self, value: float, closed: bool) -> bool:
        return self.lo > value or (self.lo == value and not (self.lo_closed and closed))

    def within(self, other: "_Interval") -> bool:
        lo_ok = self.lo > other.lo or (self.lo == other.lo and (other.lo_closed or not self.lo_closed))
        hi_ok = self.hi < other.hi or (self.hi == other.hi and (other.hi_closed or not self.hi_closed))
        return lo_ok and hi_ok


def within_bound(value: float, bound: Quantity) -> bool:
    """Whether ``value``, in the bound's units, lies where ``bound`` allows: 62 within "60 or over", 25 not
    within "under 25"."""
    return _Interval.of(value, "==").within(_Interval.of(bound.value, bound.relation))


# Function words, and the words of amounts and durations themselves (they name no topic).
_STOP = STOPWORDS | set("""least less need still around year years month months week weeks day days old age aged
time since ago currently continuous continuously full hour hours hr hrs yr yrs wk wks per weekly monthly
yearly annually
pound pounds dollar dollars euro euros average""".split())
_STEM_GROUPS = {
    "reside": "live lived lives living reside resided resides residing resident residence residency moved "
              "move moving stay stayed staying home homes house houses flat flats address dwelling settled",
    "work": "work worked works working job employ employed employee employer employment service served "
            "serving company firm contract hired",
    "earn": "earn earns earned earning earnings income salary wage wages paid pay make makes making bring "
            "brings gross net get gets got receive receives received",
    "child": "child children kid kids son sons daughter daughters baby babies dependant dependants",
    "study": "study studied studying student school college university course education",
    # the event and the people apart: "My wife died on 5 April 2018" dates no marriage, nor "My partner
    # reached State Pension age in May 2016" the start of a civil partnership
    "marry": "marry married marries marrying marriage marriages wed wedded wedding",
    "spouse": "partner partners spouse spouses husband husbands wife wives",
    "born": "born birth birthday",
    "care": "care cares cared caring",
    # kin ("I rent my flat from my mum" / "your landlord is a close relative"); a son or daughter is a child
    "relative": "relative relatives mum mums mom moms mother mothers dad dads father fathers parent parents "
                "brother brothers sister sisters sibling siblings gran nan grandma grandmother grandad granddad "
                "grandpa grandfather grandparent grandparents aunt aunts uncle uncles cousin cousins niece nieces "
                "nephew nephews",
}
# "look after" is caring for ("I look after my nan 20 hours a week" / "spend at least 35 hours a week caring
# for someone"); "look" alone is not ("looking for work"). A carer is not in the group: "Carer's Allowance" is
# a benefit's name, and NLI then read "I don't need to care for anyone" as denying that one gets it.
_LOOK_AFTER = re.compile(r"\blook(?:s|ed|ing)?\s+after\b")
# Kin said of a person ("my landlord isn't related to me" / "your landlord is a close relative"); not "costs
# related to your business" nor "work-related".
_RELATED_TO = re.compile(r"\brelated\s+to\s+(?:me|you|him|her|us|them|each\s+other|one\s+another)\b")
_STEM = {w: group for group, words in _STEM_GROUPS.items() for w in words.split()}
_START_WORDS = {"moved", "move", "arrived", "started", "start", "began", "begun", "joined", "since", "came",
                "relocated", "settled", "hired", "emigrated", "from"}


_POSSESSIVES = frozenset("my your his her its our their one's".split())


def phrases_folded(text: str) -> str:
    """The text normalised, with a phrase that means one word in its place ("look after" as "care", "related to
    me" as "relative")."""
    return _RELATED_TO.sub("relative", _LOOK_AFTER.sub("care", _normalise(text)))


def content_stems(text: str) -> set[str]:
    """Content words reduced to a stem ("living" → "liv"), or to a synonym group's name
    ("house", "home" and "lived" → "reside"), without function words and number words. A hyphenated
    word counts as its parts ("for-profit" as "for profit", "co-owned" as "co owned"), or as itself
    where its parts are all function words ("full-time")."""
    out = set()
    previous = ""
    for compound in re.findall(r"[a-z][a-z'-]*", phrases_folded(text)):
        if compound == "own" and previous not in _POSSESSIVES:
            out.add("own")  # the verb ("own your home"), not "your own" (a function word there)
        parts = {stem for part in compound.split("-") if part and (stem := _content_stem(part))}
        out |= parts or ({whole} if (whole := _content_stem(compound)) else set())
        previous = compound
    return out


def _content_stem(word: str) -> str:
    """The stem of one word, or "" for a function or number word."""
    word = word.removesuffix("'s")
    if word in _STOP or word in _ONES or word in _TENS:
        return ""
    return synonym_group(word) or without_ending(word).rstrip("e")  # "jobs" is work as "job" is


def synonym_group(word: str) -> str:
    """The name of the synonym group a word (lower case) belongs to ("employed" and "worked" → "work"), or ""."""
    return _STEM.get(word) or _STEM.get(without_ending(word), "")


def without_ending(word: str) -> str:
    """The word without an -ing, -ed or -(e)s ending that leaves three letters or more ("opened" → "open")."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _clause(text: str, span: tuple[int, int]) -> str:
    """The words a quantity is about: its clause up to the quantity and two words after it
    ("I have worked at my job for 3 years", "I am eight months pregnant")."""
    start, end = _clause_span(text, span)
    return text[start:end]


def _said_of(text: str, span: tuple[int, int]) -> set[str]:
    """The content stems of what the quantity at ``span`` is said of: its clause (``_clause``) without the
    quantity's own words, which say when or how much, not of what: "6 April 2016" and "5 April 2018" share
    "April", and "My wife died on 5 April 2018" dated the start of a marriage by it."""
    start, end = _clause_span(text, span)
    return content_stems(f"{text[start:span[0]]} {text[span[1]:end]}")


def _clause_span(text: str, span: tuple[int, int]) -> tuple[int, int]:
    """Where ``_clause`` starts and ends in ``text``."""
    bounds = [0] + [m.end() for m in re.finditer(r"[.;!?(]|,\s|\s-\s|\b(?:and|but)\s+(?=(?:i|i'm|i've|my|we|he|she|they"
                                                 r"|it|you|your)\b)", text, re.I)] + [len(text)]
    start = max(b for b in bounds if b <= span[0])
    end = min((b for b in bounds if b > span[1]), default=len(text))
    after = re.match(r"(?:\W*\w+){0,2}", text[span[1]:end])
    return start, span[1] + after.end()


def _compat_key(q: Quantity) -> tuple[str, str, str]:
    """Quantities compare only with the same key (money periods convert, so weekly ~ yearly)."""
    unit = q.unit
    if q.kind == "money" and "/" in unit:
        currency, period = unit.split("/")
        unit = f"{currency}/periodic" if period in _PER_YEAR else unit
    return q.kind, q.subject, unit


def same_measure(fact: Quantity, bound: Quantity) -> bool:
    """A fact's number may say how much there is of what a bound caps, whoever's it is: any number of hours
    under an hours cap, any sum under a cap on income (earnings are often given without their period), but
    no weekly or yearly amount (a wage) under a cap on a sum held (savings)."""
    if fact.kind != bound.kind:
        return False
    return not (fact.kind == "money" and "/" in fact.unit and "/" not in bound.unit)


def _scale(q: Quantity) -> float:
    """Factor that puts money on a per-year footing; 1 for everything else."""
    if q.kind == "money" and "/" in q.unit and q.unit.split("/")[1] in _PER_YEAR:
        return _PER_YEAR[q.unit.split("/")[1]]
    return 1.0


# An age the user will reach ("I'll be 66 next year", "I turn 19 next month", "she's turning 5 in
# September"): the words before it, or a bare "turn(s)/turning" with a time to come after it.
_FUTURE_AGE_BEFORE = re.compile(r"(?:\b(?:will|shall|gonna)|'ll|\bgoing\s+to)\s+(?:(?:only|just|soon|then|finally)\s+)?"
                                r"(?:be\s+)?(?:turning\s+|turn\s+|reaching\s+|reach\s+)?$")
_TURNING = re.compile(r"\bturn(?:s|ing)?\s+$")
_TIME_TO_COME = re.compile(r"^\s*(?:years?\s+old\s+)?(?:next|in|on|this|later|soon|by|before|at\s+the\s+end|tomorrow)\b")


def _future_age(low: str, q: Quantity) -> bool:
    """Whether an age is one the person will reach, not their age now."""
    before, after = low[:q.span[0]], low[q.span[1]:]
    return bool(_FUTURE_AGE_BEFORE.search(before) or (_TURNING.search(before) and _TIME_TO_COME.match(after)))


# An age given by its decade: "I'm in my 70s", "we're both in our early forties", "she's in her late teens".
_DECADE_WORDS = {"teens": 10, "twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60,
                 "seventies": 70, "eighties": 80, "nineties": 90}
_DECADE = re.compile(r"\bin\s+(?P<whose>my|his|her|their|our)\s+(?:(?P<part>early|mid|late)[\s-]*)?"
                     r"(?:(?P<digit>[1-9])0'?s|(?P<word>" + "|".join(_DECADE_WORDS) + r"))\b")
# The years of a decade each part covers (early 20s are 20-23, mid 23-26, late 26-29), and of the teens (13-19).
_DECADE_PART = {None: (0, 10), "early": (0, 4), "mid": (3, 7), "late": (6, 10)}
_TEEN_PART = {None: (13, 20), "early": (13, 16), "mid": (14, 18), "late": (17, 20)}


def _decade_ages(fact: str, low: str) -> list[tuple[Quantity, _Interval]]:
    """The ages a fact (``low``: its ``_normalise``d text) gives by their decade, each with the years it covers."""
    out = []
    for m in _DECADE.finditer(low):
        decade = int(m["digit"]) * 10 if m["digit"] else _DECADE_WORDS[m["word"]]
        lo, hi = _TEEN_PART[m["part"]] if decade == 10 else (decade + d for d in _DECADE_PART[m["part"]])
        subject = "" if m["whose"] in ("my", "our") else _subject(low, m.start(), "")
        quantity = Quantity(float(decade), "age", "years", "==", (m.start(), m.end()), subject, fact[m.start():m.end()])
        out.append((quantity, _Interval(lo, True, hi, False)))
    return out


def _born(clause_words: set[str]) -> str:
    """Whose birth a clause dates: the user's ("I was born in 1950"), or the one person word it names besides
    ("my son was born in 2019": a child's, not the user's)."""
    if clause_words & {"i", "im"}:
        return ""
    named = {_PERSON[w] for w in clause_words if _PERSON.get(w)}
    return named.pop() if len(named) == 1 else ""


# A year named relative to this one ("I moved here last year"; not "in the last year", the past twelve months).
_RELATIVE_YEAR = re.compile(r"(?<!\bthe )\b(?P<which>last|this) year\b")


def _relative_years(fact: str, low: str, reference_year: int) -> list[Quantity]:
    return [Quantity(float(reference_year - (m["which"] == "last")), "year", "year", "==", (m.start(), m.end()),
                     text=fact[m.start():m.end()]) for m in _RELATIVE_YEAR.finditer(low)]


def _fact_readings(fact: str, reference_year: int) -> list[tuple[Quantity, _Interval]]:
    """Each quantity a fact states, plus those it implies: a birth year gives an age, a start
    year ("I moved here in 2019") a duration up to now, an age to come ("I'll be 66 next year",
    undated) an age now below it, and a decade ("I'm in my 70s") the years it covers."""
    readings = []
    previous_end = 0
    low = _normalise(fact)
    stated = extract(fact)
    for q in sorted(stated + _relative_years(fact, low, reference_year), key=lambda q: q.span):
        after_previous, previous_end = previous_end, q.span[1]
        if _in_question(fact, q.span[0]):
            continue  # "Are you over 65? No" states nothing about the age
        if q.kind == "age" and q.relation == "==" and _future_age(low, q) and \
                _dated(fact, q, [(y, None) for y in stated]) is None:
            readings.append((q, _Interval(q.value - 1, True, q.value, False)))
            continue
        readings.append((q, _Interval.of(q.value * _scale(q), q.relation)))
        if q.kind != "year" or q.relation not in ("==", ">="):
            continue
        # what the year is said of: its clause, from the quantity before it on ("I was born in 1950 and have
        # lived here since 2019": 2019 is no birth year, nor 1950 the year of a move)
        start, end = _clause_span(fact, q.span)
        words = set(re.findall(r"[a-z]+", _normalise(fact[max(start, after_previous):end])))
        year = math.floor(q.value)
        if words & {"born", "birth"}:
            age = _Interval(reference_year - year - 1, True, reference_year - year, True)
            readings.append((_replace(q, kind="age", unit="years", subject=_born(words)), age))
        elif words & _START_WORDS:
            months = _Interval((reference_year - year - 1) * 12, False, (reference_year - year + 1) * 12, False)
            readings.append((_replace(q, kind="duration", unit="months"), months))
    decades = _decade_ages(fact, low)
    inside = [r for r in readings if any(d.span[0] <= r[0].span[0] < d.span[1] for d, _ in decades)]
    return [r for r in readings if r not in inside] + decades


# "Can my daughter get a permit?": the rules' "you" is the daughter, whose age the user gives as hers.
_ASKED_FOR = re.compile(r"^\W*(?:can|could|will|would|does|do|is|are|may|might|should)\s+(?:my|our)\s+([a-z]+)\b", re.I)


# Someone the question asks about by a pronoun: "can she get", "can we get her a badge" (not "her school",
# whose owner the question is not about); "my daughter": the one person the user names as theirs.
_THIRD_PERSON = re.compile(r"\b(?:she|he|she's|he's)\b|\b(?:her|him)(?=\s+(?:a|an|the|one|some|any)\b|\s*[?.!,]|\s*$)", re.I)
_ONES_OWN = re.compile(r"\b(?:my|our)\s+([a-z]+)\b", re.I)


def applicant(question: str, context: str = "") -> str:
    """Whose eligibility a question asks about, as a subject of ``_PERSON`` ("" for the user): "Can my
    daughter get …?", or "my daughter is 2, can we get her a blue badge?" and "Can she get a bus pass?" told
    "My mum is 84": a "she", or a "her" given something, in the question's last clause, where the question
    or its ``context`` (the scenario) names one person as the user's own."""
    m = _ASKED_FOR.match(question)
    if m:
        return _PERSON.get(m.group(1).lower(), "")
    asking = re.split(r"(?<=[.!?,;])\s+|\s+[-–—]\s+", question.strip())[-1]
    if not _THIRD_PERSON.search(asking):
        return ""
    named = {_PERSON[w.lower()] for w in _ONES_OWN.findall(f"{context} {question}") if w.lower() in _PERSON}
    return named.pop() if len(named) == 1 else ""


def check(condition: str, facts: list[str] | tuple[str, ...], reference_year: int | None = None,
          asked_for: str = "") -> NumericCheck | None:
    """Decide ``condition`` by arithmetic on the user's ``facts``, or None when it cannot.

    None when the condition states no quantity, when no fact states one of the same kind
    (and subject: a child's age is not the user's), or when the fact's value straddles the
    bound ("over 70" against "under 75"). Durations, amounts and years must be about the same
    thing: the fact's clause shares a content word with the condition ("lived" for residence,
    "work"/"service" for employment) or has no content word at all ("I've been here 2 years").
    The fact with most shared words wins; a tie between facts that disagree gives None.
    ``reference_year`` (default: this year) turns "I moved here in 2019" into a duration. ``asked_for``
    (``applicant``'s reading of the question) names whose age the condition bounds when it names
    nobody (a question about the user's child).
    """
    if not isinstance(condition, str):
        raise TypeError(f"check() takes the condition as a string, not {type(condition).__name__}")
    if isinstance(facts, str):
        raise TypeError("check() takes a list of facts, not one string: wrap it as [fact]")
    now = _fractional_year(date.today()) if reference_year is None else reference_year + 0.5
    reference_year = reference_year or date.today().year
    groups: dict[tuple[str, str, str], tuple[Quantity, list[_Interval]]] = {}
    quantities = [_replace(q, subject=asked_for) if q.kind == "age" and not q.subject else q
                  for q in extract(condition)]
    as_of = _age_reference_dates(condition, quantities)
    previous: dict[tuple[str, str, str], Quantity] = {}
    for q in quantities:
        if q.span in as_of.values():
            continue  # "on 21 September 2025" dates the age bound; it is no condition of its own
        key = _compat_key(q)
        interval = _Interval.of(q.value * _scale(q), q.relation)
        if key not in groups:
            groups[key] = (q, [interval])
        elif _alternative(condition, previous[key], q):
            groups[key][1].append(interval)  # "a Level 3 or 4 qualification": either value will do
        else:  # "over 18 and under 65": both bounds hold
            groups[key] = (groups[key][0], [iv.intersect(interval) for iv in groups[key][1]])
        previous[key] = q
    if not groups:
        return None
    verdicts = []
    for key, (cond_q, cond_iv) in groups.items():
        condition_stems = _said_of(condition, cond_q.span)
        # A bound on the age at a stated date ("aged 66 or over on 21 September 2025"): the user's
        # age now, moved back (or on) to that date, is what the bound is compared with.
        age_at = _as_of_value(quantities, as_of, cond_q) if cond_q.span in as_of else now
        deadline = bool(_DEADLINE.search(condition[:cond_q.span[0]]))
        verdict = _check_group(cond_q, cond_iv, key, condition_stems, facts, reference_year, now, age_at, deadline)
        if verdict is not None and _denied_by_its_verb(_normalise(condition), cond_q):
            verdict = replace(verdict, status=opposite(verdict.status),
                              explanation=f"the condition denies its bound: {verdict.explanation}")
        if verdict is None:
            return None if not any(v.status == "contradicted" for v in verdicts) else verdicts[0]
        if verdict.status == "contradicted":
            return verdict
        verdicts.append(verdict)
    return verdicts[0]


def opposite(status: str) -> str:
    """A settled status the other way round ("established" ↔ "contradicted"); any other as it is."""
    return {"established": "contradicted", "contradicted": "established"}.get(status, status)


# A negation of the verb the bound is said of, in the bound's own clause: "have not employed the apprentice in the
# previous 6 months", "you don't have savings of more than £16,000". A negation right before the relation ("not
# more than", "do not earn more than") the relation has already taken in (``_NEGATED``), and is not counted again.
_VERB_NEGATION = re.compile(r"(?:\bnot|n't|\bnever)\b(?:(?!\b(?:and|or|but|who|which|that|if|unless|because|when)\b)"
                            r"[^,;.:])*$")


def _denied_by_its_verb(low: str, q: Quantity) -> bool:
    """The condition says its bound must not hold (``_VERB_NEGATION``)."""
    start, _ = _clause_span(low, q.span)
    _, rel_start = _pre_relation(low[:q.span[0]])
    return bool(_VERB_NEGATION.search(low, start, rel_start)) and not _NEGATED.search(low[:rel_start])


def _fractional_year(day: date) -> float:
    return day.year + (day.month - 1) / 12 + (day.day - 1) / 365.25


def _age_reference_dates(condition: str, quantities: list[Quantity]) -> dict[tuple[int, int], tuple[int, int]]:
    """{age bound's span: span of the date it holds at} for "aged 66 or over on 21 September 2025",
    "under 25 at 1 April 2026", "aged 18 by 31 August 2026", "65 or older as of 1 January 2026"."""
    low = _normalise(condition)
    out = {}
    for age, when in zip(quantities, quantities[1:]):
        between = low[age.span[1]:when.span[0]]
        if age.kind == "age" and when.kind == "year" and re.fullmatch(r"\s*(?:on|at|by|as\s+(?:of|at))\s+", between):
            out[age.span] = when.span
    return out


def _as_of_value(quantities: list[Quantity], as_of: dict, age: Quantity) -> float:
    """The (fractional) year of the date an age bound holds at."""
    return next(q.value for q in quantities if q.span == as_of[age.span])


TURNED = re.compile(r"\bturn(?:ed|s)?\b", re.I)


def _births(fact: str, readings) -> list[tuple[Quantity, _Interval]]:
    """When the user was born, from an age they turned on a date ("I turned 64 on 1 September 2017":
    1 September 1953; "I turned 66 in 2019": some day of 1953)."""
    out = []
    for q, _ in readings:
        if q.kind != "age" or q.relation != "==" or q.subject or not TURNED.search(_clause(fact, q.span)):
            continue
        when = _dated(fact, q, readings)
        if when is None:
            continue
        born = when - q.value
        interval = _Interval(born, True, born + 1, False) if float(when).is_integer() else _Interval(born, True, born, True)
        out.append((_replace(q, kind="year", unit="year", value=born), interval))
    return out


def _dated(fact: str, age: Quantity, readings) -> float | None:
    """The date right after an age in a fact ("I turned 66 in March 2025"), or None."""
    low = _normalise(fact)
    for q, _ in readings:
        if q.kind == "year" and q.span[0] >= age.span[1] and \
                re.fullmatch(r"\s*(?:in|on|at|by|last)?\s*", low[age.span[1]:q.span[0]]):
            return q.value
    return None


def _stated_at(fact: str, age: Quantity, readings, now: float) -> float:
    """When an age in a fact holds: the date right after it (``_dated``), else now."""
    when = _dated(fact, age, readings)
    return now if when is None else when


def _shifted(interval: _Interval, years: float) -> _Interval:
    """An age ``years`` earlier; a whole age ("I'm 71") covers the year up to the next birthday."""
    hi, hi_closed = interval.hi, interval.hi_closed
    if interval.lo == interval.hi:
        hi, hi_closed = interval.hi + 1, False
    return _Interval(interval.lo - years, interval.lo_closed, hi - years, hi_closed)


_LIFELONG = re.compile(r"\b(?:all\s+(?:of\s+)?my|my\s+(?:whole|entire))\s+life\b|\bsince\s+(?:i\s+was\s+born|birth)\b", re.I)


def _lifelong(read_facts, now: float, condition_stems: set[str]) -> list[tuple]:
    """Candidates for a duration the user gives as their life ("I've lived here all my life", "I'm 70"):
    as long as the user's age, when a fact states it. ``read_facts``: (fact, its ``_fact_readings``)."""
    ages = [_shifted(iv, _stated_at(fact, q, readings, now) - now) for fact, readings in read_facts
            for q, iv in readings if q.kind == "age" and not q.subject and q.relation == "=="]
    ages = [_Interval(math.floor(a.lo), True, math.ceil(a.hi), a.hi_closed and a.hi.is_integer()) for a in ages]
    out = []
    for fact, _ in read_facts if ages else ():
        m = _LIFELONG.search(fact)
        overlap = len(condition_stems & content_stems(_clause(fact, m.span()))) if m else 0
        if overlap:
            life = Quantity(ages[0].lo * 12, "duration", "months", "==", m.span(), "", m.group(0))
            out.append((overlap, fact, life, ages[0].scaled(12)))
    return out


# A time limit to act ("tell your employer within 7 days", "claim within 6 months of the funeral") or a window
# looked back over ("moved here within the last 2 years", "have not employed the apprentice in the previous 6
# months": an 18-month apprenticeship to come is no time since they were employed); and what says how long ago
# something happened or how long an act takes ("I moved here 18 months ago", "I told them 10 days later", "it will
# take me 5 minutes"), not how long a state has lasted ("been working there a year", "there since 2023").
_DEADLINE = re.compile(r"\b(?:within|(?:within|in|during|over)\s+the\s+(?:last|past|previous|preceding))\s*$", re.I)
# "After" counts after the quantity ("10 days after the funeral"), and before it only where the quantity ends
# the clause ("I told them after 3 days"), not where it starts a period that came first ("moved back in
# January after 6 years working abroad").
_ELAPSED = re.compile(r"\b(?:ago|later|passed)\b", re.I)
# How long an act takes, said just before the quantity ("it'll only take me about five minutes"); not "taking
# on a 19-year-old apprentice for 35 hours a week on an 18-month apprenticeship" (hiring, not time taken).
_TAKES = re.compile(r"\b(?:take|takes|taking|took)\s+(?:(?:me|us|you|him|her|them|it)\s+)?"
                    r"(?:(?:only|just|about|around|roughly|up\s+to|at\s+least|at\s+most)\s+)*$", re.I)
_AFTER = re.compile(r"\bafter\b", re.I)
_AFTER_BEFORE = re.compile(r"\bafter\s+(?:about\s+|around\s+|roughly\s+)?$", re.I)


def _elapsed(fact: str, q: Quantity, start: int, end: int) -> bool:
    """The quantity says how long ago something happened or how long an act took (``_ELAPSED``, ``_TAKES``)."""
    return bool(_ELAPSED.search(fact, start, end) or _TAKES.search(fact[start:q.span[0]])
                or _AFTER.search(fact, q.span[1], end)
                or (_AFTER_BEFORE.search(fact[start:q.span[0]]) and not re.search(r"\w", fact[q.span[1]:end])))


def _with_period_of(fact_q: Quantity, fact_iv: _Interval, cond_q: Quantity) -> Quantity:
    """A fact's quantity told without its period, given the bound's where that period is the one meant:
    earnings are a year's ("I earn about £40,000" against "less than £100,000 a year"; against "£113 a week"
    the period stays unknown, not comparable), hours of work or care a week's when a week can hold them ("I
    work part-time, about 20 hours" against "at least 16 hours a week")."""
    if fact_q.kind != cond_q.kind:
        return fact_q
    yearly_earnings = fact_q.kind == "money" and cond_q.unit == f"{fact_q.unit}/year"
    weekly_hours = fact_q.kind == "hours" and fact_q.unit == "hours" and cond_q.unit == "hours/week" \
        and fact_iv.hi <= HOURS_IN_A_WEEK
    meant = yearly_earnings or weekly_hours
    return _replace(fact_q, unit=cond_q.unit) if meant else fact_q


def _check_group(cond_q: Quantity, cond_iv: list[_Interval], key, condition_stems: set[str], facts,
                 reference_year: int, now: float, age_at: float, deadline: bool = False) -> NumericCheck | None:
    """``cond_iv``: the condition's alternatives (usually one interval); ``age_at``: the (fractional)
    year the condition's age bound holds at; ``now`` when undated. A ``deadline`` (a time limit to act, or
    a window looked back over) compares only with a fact that says how long ago something happened
    (``_ELAPSED``)."""
    candidates = []
    read_facts = [(fact, _fact_readings(fact, reference_year)) for fact in facts]
    for fact, readings in read_facts:
        for fact_q, fact_iv in readings:
            fact_q = _with_period_of(fact_q, fact_iv, cond_q)
            if _compat_key(fact_q) != key or (cond_q.label and fact_q.label
                                               and _content_stem(cond_q.label) != _content_stem(fact_q.label)):
                continue
            if cond_q.relation == fact_q.relation == "==" and cond_q.named and fact_q.named and \
                    not set(cond_q.named) & set(fact_q.named):
                continue  # "a Tier 4 sponsor" says nothing of "your Tier 4 visa", which names another thing
            if fact_q.kind == "age":
                stated_at = _stated_at(fact, fact_q, readings, now)
                if stated_at != age_at:  # "I'm 71" (now) against an age on 21 September 2025
                    fact_iv = _shifted(fact_iv, stated_at - age_at)
            start, end = _clause_span(fact, fact_q.span)
            if deadline and not _elapsed(fact, fact_q, start, end):
                continue  # "been working there a year" says nothing of when the employer was told
            fact_stems = _said_of(fact, fact_q.span)
            overlap = len(condition_stems & fact_stems)
            # Ages and counts already match on whose age / what is counted. Other amounts must
            # share a content word with the condition, unless their clause has none at all
            # ("I've been here 2 years"): a pregnancy's 5 months are not 26 weeks of work.
            if cond_q.kind not in ("age", "count") and overlap == 0 and (fact_stems or cond_q.kind == "number"):
                continue
            candidates.append((overlap, fact, fact_q, fact_iv))
        if cond_q.kind == "year" and "born" in condition_stems:
            # "born on or before 5 August 1953" and "I turned 64 on 1 September 2017": a birthday dates the birth
            candidates += [(1, fact, q, iv) for q, iv in _births(fact, readings)]
    if cond_q.kind == "duration":
        candidates += _lifelong(read_facts, now, condition_stems)
    if not candidates:
        return None
    best = max(c[0] for c in candidates)
    top = [c for c in candidates if c[0] == best]
    outcomes = {_verdict_any(c[3], cond_iv)[0] for c in top}
    if len(outcomes) != 1 or None in outcomes:
        return None
    _, fact, fact_q, fact_iv = top[0]
    status, interval = _verdict_any(fact_iv, cond_iv)
    return NumericCheck(status, fact, cond_q, fact_q, _explain(status, fact_iv, interval, cond_q))


def _alternative(condition: str, first: Quantity, second: Quantity) -> bool:
    """Two exact values joined by "or" ("Level 3 or 4", "2, 3 or 4 bedrooms") are alternatives, not
    bounds that must both hold (their intersection is empty: any fact would contradict it); so are two
    quantities with an "or" of its own between them and no "and" ("at least 4 weeks (or you must expect
    it to last 4 weeks)": 5 weeks meets it; "over 18 and under 65" must both hold)."""
    between = condition[first.span[1]:second.span[0]].lower()
    if first.relation == second.relation == "==" and _OR_BETWEEN.fullmatch(between):
        return True
    rest = OR_IN_BOUND.sub(" ", between)
    return bool(_ANOTHER_WAY.search(rest)) and not _BOTH_HOLD.search(rest)


def _verdict_any(fact: _Interval, alternatives: list[_Interval]) -> tuple[str | None, _Interval]:
    """(status, the alternative it rests on): established by any alternative, contradicted by all."""
    verdicts = [(_verdict(fact, cond), cond) for cond in alternatives]
    for status, cond in verdicts:
        if status == "established":
            return status, cond
    if all(status == "contradicted" for status, _ in verdicts):
        return "contradicted", verdicts[0][1]
    return None, alternatives[0]


def _verdict(fact: _Interval, cond: _Interval) -> str | None:
    if fact.within(cond):
        return "established"
    if fact.below(cond.lo, cond.lo_closed) or fact.above(cond.hi, cond.hi_closed):
        return "contradicted"
    return None


def _explain(status: str, fact: _Interval, cond: _Interval, q: Quantity) -> str:
    """E.g. "14 months < 24 months required", "67 years > 65 years required", "£180 a week > £150 a week limit"."""
    factor = _scale(q)
    unit = _display_unit(q, fact, cond)
    shown = _show(fact.scaled(1 / factor), q, unit)
    parts = []
    if status == "contradicted":
        if fact.below(cond.lo, cond.lo_closed):
            op = "<" if fact.hi < cond.lo or not fact.hi_closed else "≤"
            parts.append(f"{shown} {op} {_num(cond.lo / factor, q, unit)} required")
        else:
            op = ">" if fact.lo > cond.hi or not fact.lo_closed else "≥"
            parts.append(f"{shown} {op} {_num(cond.hi / factor, q, unit)} limit")
        return parts[0]
    if cond.lo > -math.inf:
        op = "=" if fact.lo == fact.hi == cond.lo else (">" if fact.lo > cond.lo else "≥")
        parts.append(f"{shown} {op} {_num(cond.lo / factor, q, unit)} required")
    if cond.hi < math.inf:
        op = "=" if fact.lo == fact.hi == cond.hi else ("<" if fact.hi < cond.hi else "≤")
        parts.append(f"{shown} {op} {_num(cond.hi / factor, q, unit)} limit")
    return "; ".join(parts)


def _display_unit(q: Quantity, fact: _Interval, cond: _Interval) -> str:
    """Durations are shown in the largest unit both sides are whole in (years, months, else weeks)."""
    if q.kind != "duration":
        return ""
    values = [v for v in (fact.lo, fact.hi, cond.lo, cond.hi) if math.isfinite(v)]
    if all(abs(v / 12 - round(v / 12)) < 1e-6 for v in values):
        return "years"
    if all(abs(v - round(v)) < 1e-6 for v in values):
        return "months"
    return "weeks"


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if abs(x - round(x)) < 0.05 else f"{x:,.1f}"


def _num(value: float, q: Quantity, unit: str = "") -> str:
    """A value in the quantity's own terms: "24 months", "£150 a week", "3 children", "1990"."""
    if q.kind == "duration":
        shown = _fmt({"years": value / 12, "months": value, "weeks": value / _MONTHS["week"]}[unit])
        return f"{shown} {unit if shown != '1' else unit[:-1]}"
    if q.kind == "age":
        return f"{_fmt(value)} years"
    if q.kind == "money":
        currency, _, period = q.unit.partition("/")
        amount = f"{value:,.2f}" if abs(value - round(value)) >= 0.005 else f"{value:,.0f}"
        return f"{currency}{amount}" + (f" a {period}" if period else "")
    if q.kind == "hours":
        _, _, period = q.unit.partition("/")
        return f"{_fmt(value)} hours" + (f" a {period}" if period else "")
    if q.kind == "count":
        noun = q.unit if value == 1 else {"child": "children", "person": "people",
                                          "property": "properties"}.get(q.unit, q.unit + "s")
        return f"{_fmt(value)} {noun}"
    if q.kind == "year":
        return str(math.floor(value)) if value == math.floor(value) else f"{value:.2f}"
    return f"{q.label} {_fmt(value)}" if q.label else f"{_fmt(value)}{q.unit}"


def _show(interval: _Interval, q: Quantity, unit: str) -> str:
    if interval.lo == interval.hi:
        return _num(interval.lo, q, unit)
    if math.isfinite(interval.lo) and math.isfinite(interval.hi):
        low, high = _num(interval.lo, q, unit), _num(interval.hi, q, unit)
        if low.partition(" ")[2] == high.partition(" ")[2]:
            low = low.partition(" ")[0]
        return f"{low}–{high}"
    if math.isfinite(interval.lo):
        return f"{'at least' if interval.lo_closed else 'over'} {_num(interval.lo, q, unit)}"
    return f"{'at most' if interval.hi_closed else 'under'} {_num(interval.hi, q, unit)}"
