"""A measured answer said in the unit the question asks for.

"How long is the main span in feet?" answered from "Its main span of 120 metres …" is "120 metres (about 394
feet)": the value as the text states it (what the citation shows), then the conversion the question asked
for. Only the answer's wording changes; what the analysis found and cited does not.
"""
from __future__ import annotations

import re

# dimension -> (size in the dimension's base unit: metre, kilogram, square metre; the name said; its spellings)
UNITS: dict[str, tuple[tuple[float, str, tuple[str, ...]], ...]] = {
    "length": (
        (0.001, "millimetres", ("mm", "millimetre", "millimetres", "millimeter", "millimeters")),
        (0.01, "centimetres", ("cm", "centimetre", "centimetres", "centimeter", "centimeters")),
        (1.0, "metres", ("m", "metre", "metres", "meter", "meters")),
        (1000.0, "kilometres", ("km", "kilometre", "kilometres", "kilometer", "kilometers")),
        (0.0254, "inches", ("in", "inch", "inches")),
        (0.3048, "feet", ("ft", "foot", "feet")),
        (0.9144, "yards", ("yd", "yds", "yard", "yards")),
        (1609.344, "miles", ("mi", "mile", "miles")),
    ),
    "mass": (
        (0.001, "grams", ("g", "gram", "grams", "gramme", "grammes")),
        (1.0, "kilograms", ("kg", "kgs", "kilo", "kilos", "kilogram", "kilograms", "kilogramme", "kilogrammes")),
        (1000.0, "tonnes", ("t", "tonne", "tonnes", "metric ton", "metric tons")),
        (0.45359237, "pounds", ("lb", "lbs", "pound", "pounds")),
        (0.028349523125, "ounces", ("oz", "ounce", "ounces")),
        (6.35029318, "stone", ("stone", "stones")),  # not "st": "1st" is an ordinal
    ),
    "area": (
        (1.0, "square metres", ("m²", "m2", "sq m", "square metre", "square metres", "square meter", "square meters")),
        (1e6, "square kilometres", ("km²", "km2", "sq km", "square kilometre", "square kilometres",
                                    "square kilometer", "square kilometers")),
        (0.09290304, "square feet", ("ft²", "sq ft", "square foot", "square feet")),
        (2589988.110336, "square miles", ("mi²", "sq mi", "square mile", "square miles")),
        (10000.0, "hectares", ("ha", "hectare", "hectares")),
        (4046.8564224, "acres", ("acre", "acres")),
    ),
}
_SPELLING = {spelling: (dimension, size, name) for dimension, units in UNITS.items()
             for size, name, spellings in units for spelling in spellings}
# Longest spellings first, so "square feet" is not read as "feet"; one-letter abbreviations ("m", "t") only
# after a number, never as the unit a question asks for ("in m" is rarely typed, "in a" often).
_ALTERNATION = "|".join(re.escape(s) for s in sorted(_SPELLING, key=len, reverse=True))
_ASKED = re.compile(rf"\b(?:in|into|how\s+many)\s+({_ALTERNATION})(?![\w²])", re.I)
_VALUE = re.compile(rf"(\d[\d,]*(?:\.\d+)?)\s*({_ALTERNATION})(?![\w²])", re.I)


def asked_unit(question: str) -> tuple[str, float, str] | None:
    """(dimension, size, name) of the unit a question asks its answer in ("… in feet?", "How many miles …"), or
    None. A short abbreviation counts only where it is unmistakable ("km", "ft"): "in m" or "in t" says too little."""
    for m in _ASKED.finditer(question):
        spelling = m.group(1).lower()
        if len(spelling) > 2 or spelling in ("km", "kg", "cm", "mm", "ft", "lb", "oz", "ha"):
            return _SPELLING[spelling]
    return None


def in_asked_unit(question: str, value: str) -> str:
    """``value`` with its conversion into the unit ``question`` asks for, when the value states a quantity of
    the same dimension in another unit; otherwise ``value`` as it is."""
    asked = asked_unit(question)
    # "£5m" is five million pounds, not five metres
    stated = _VALUE.search(value) if asked and not re.search(r"[£$€¥]", value) else None
    if stated is None:
        return value
    dimension, size, name = _SPELLING[stated.group(2).lower()]
    if dimension != asked[0] or name == asked[2]:
        return value
    amount = float(stated.group(1).replace(",", "")) * size / asked[1]
    return f"{value} (about {_rounded(amount)} {asked[2]})"


def _rounded(amount: float) -> str:
    """Three significant figures, as a conversion deserves: 590.55 → "591", 0.11184 → "0.112", 48280 → "48,300"."""
    if amount == 0:
        return "0"
    digits = 3 - len(str(int(abs(amount)))) if abs(amount) >= 1 else 2 - int(f"{abs(amount):e}".split("e")[1])
    rounded = round(amount, digits)
    return f"{rounded:,.0f}" if digits <= 0 else f"{rounded:,.{digits}f}".rstrip("0").rstrip(".")
