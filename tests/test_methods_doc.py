"""docs/methods.md explains every "seed 00N …" citation in the code, and the Methods page renders it.

A citation is "seed 00N" followed by optional places in that document: §3.5, §3.4–3.7, §6–7,
Eq. 12, Eq. 17, 18 and 22, layer 1, layers 2–3, rule 2, appendix A, A.3. It resolves when the doc
has a heading that names the same seed and each of its places (headings are read with the same
patterns, so "rules 1–6" in a heading covers "rule 2"). Anything else — a made-up section, an
equation or layer the doc does not explain, a sixth seed — fails the test with its file and line.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app import wiring
from tests.conftest import ROOT
from tests.ui_factories import rich_trace

DOC = ROOT / "docs" / "methods.md"
METHODS = ROOT / "app" / "pages" / "1_Methods.py"
SCANNED = ("core", "app", "components", "scripts", "bench")
TEXT_SUFFIXES = {".py", ".md", ".sh", ".toml", ".txt", ".json"}

CITATION = re.compile(r"\bseed\s+(00\d)\b", re.I)
NUMBERS = r"\d+(?:\s*(?:,|and|–|-)\s*\d+)*"  # "17, 18 and 22", "2–3"
PLACE = re.compile(
    rf"§\s*(?P<section>\d+(?:\.\d+)*)(?:\s*[–-]\s*(?P<section_end>\d+(?:\.\d+)*))?"
    rf"|(?i:eqs?\.)\s*(?P<eq>{NUMBERS})"
    rf"|(?i:layers?)\s+(?P<layer>{NUMBERS})"
    rf"|(?i:rules?)\s+(?P<rule>{NUMBERS})"
    rf"|(?i:appendix)\s+(?P<appendix>[A-Z](?:\.\d+)?)\b"
    rf"|\b(?P<appendix_part>[A-Z]\.\d+)\b")
# What may stand between a citation's places: spaces, commas, "and", "/", an opening bracket, or
# the seed's own architecture name ("seed 002 v3 §5.3").
BETWEEN = re.compile(r"(?:\s|,|;|/|\(|\band\b|\bv\d\b)*")


def _numbers(text: str) -> list[str]:
    """'17, 18 and 22' → 17, 18, 22; '2–3' → 2, 3; '1–6' → 1 … 6."""
    out: list[str] = []
    tokens = re.findall(r"\d+|[–-]", text)
    for i, tok in enumerate(tokens):
        if tok in "–-":
            continue
        if i >= 2 and tokens[i - 1] in "–-":
            out.extend(str(n) for n in range(int(tokens[i - 2]) + 1, int(tok) + 1))
        else:
            out.append(tok)
    return out


def _sections(start: str, end: str | None) -> list[str]:
    """'3.4'–'3.7' → 3.4, 3.5, 3.6, 3.7; '6'–'7' → 6, 7; a range it cannot enumerate → both ends."""
    if end is None:
        return [start]
    head, _, first = start.rpartition(".")
    last = end.rpartition(".")[2] if "." not in end or end.rpartition(".")[0] == head else None
    if last is None or int(last) < int(first):
        return [start, end]
    return [f"{head}.{n}" if head else str(n) for n in range(int(first), int(last) + 1)]


def _places(match: re.Match) -> set[tuple[str, str]]:
    if match["section"]:
        return {("§", s) for s in _sections(match["section"], match["section_end"])}
    for kind in ("eq", "layer", "rule"):
        if match[kind]:
            return {(kind, n) for n in _numbers(match[kind])}
    return {("appendix", match["appendix"] or match["appendix_part"])}


def citations(text: str) -> list[tuple[str, frozenset[tuple[str, str]], int]]:
    """Every citation in ``text``: (seed number, the places it names, its offset)."""
    found = []
    for cite in CITATION.finditer(text):
        places: set[tuple[str, str]] = set()
        pos = cite.end()
        while (place := PLACE.match(text, BETWEEN.match(text, pos).end())) and place.end() > pos:
            places |= _places(place)
            pos = place.end()
        found.append((cite[1], frozenset(places), cite.start()))
    return found


def headings(doc: str) -> list[tuple[int, str]]:
    return [(len(m[1]), m[2].strip()) for m in re.finditer(r"^(#{2,3}) (.+)$", doc, re.M)]


def heading_index(doc: str) -> dict[str, set[tuple[str, str]]]:
    """Seed number → every place some heading of that seed names."""
    index: dict[str, set[tuple[str, str]]] = {}
    for _, title in headings(doc):
        seeds = {s for s, _, _ in citations(title)}
        if len(seeds) == 1:
            index.setdefault(seeds.pop(), set()).update(p for m in PLACE.finditer(title) for p in _places(m))
    return index


def missing(seed: str, places: frozenset[tuple[str, str]], index: dict[str, set[tuple[str, str]]]) -> str | None:
    """The citation as far as no heading explains it ("seed 002 §99"), or None when it resolves."""
    if seed in index and places <= index[seed]:
        return None
    names = {"§": "§{}", "eq": "Eq. {}", "layer": "layer {}", "rule": "rule {}", "appendix": "appendix {}"}
    lacking = sorted(places - index.get(seed, set()), key=lambda p: (p[0], [int(x) if x.isdigit() else x
                                                                              for x in p[1].split(".")]))
    return " ".join([f"seed {seed}"] + [names[kind].format(value) for kind, value in lacking])


def unresolved(text: str, index: dict[str, set[tuple[str, str]]]) -> list[str]:
    return [m for seed, places, _ in citations(text) if (m := missing(seed, places, index))]


@pytest.fixture(scope="module")
def doc() -> str:
    return DOC.read_text(encoding="utf-8")


def test_citations_are_parsed_with_every_place_they_name():
    [(seed, places, _)] = citations("The numbers the gate reads (seed 002 §3.4–3.7, more).")
    assert seed == "002" and places == {("§", "3.4"), ("§", "3.5"), ("§", "3.6"), ("§", "3.7")}
    parsed = citations("after seed 002 v3 §5.3 (conflict); Seed 004 layers 2 and 3; seed 002 Eq. 17, 18 and 22; "
                       "seed 002 §6–7; seed 002 appendix A (A.2 answer); seed 002 rule 2; seed 000 (τ)")
    assert [(s, set(p)) for s, p, _ in parsed] == [
        ("002", {("§", "5.3")}), ("004", {("layer", "2"), ("layer", "3")}),
        ("002", {("eq", "17"), ("eq", "18"), ("eq", "22")}), ("002", {("§", "6"), ("§", "7")}),
        ("002", {("appendix", "A"), ("appendix", "A.2")}), ("002", {("rule", "2")}), ("000", set())]
    # Words after a citation are not places: "uses 4", ": 0.70", "'s 0.98".
    assert all(not p for _, p, _ in citations("(seed 002 uses 4) (seed 002: 0.70) (seed 003's 0.98)"))


def test_a_made_up_citation_does_not_resolve(doc):
    index = heading_index(doc)
    assert unresolved("# seed 002 §3.5 and seed 004 layer 1", index) == []
    assert unresolved("x = 1  # seed 002 §99", index) == ["seed 002 §99"]
    assert unresolved("seed 002 §3.12–3.14", index) == ["seed 002 §3.14"]
    assert unresolved("seed 002 Eq. 12 and seed 002 Eq. 99", index) == ["seed 002 Eq. 99"]
    assert unresolved("seed 004 layer 4; seed 005; seed 002 rule 7; seed 002 A.9", index) == [
        "seed 004 layer 4", "seed 005", "seed 002 rule 7", "seed 002 appendix A.9"]


def test_every_citation_in_the_code_resolves_to_a_heading_of_the_doc(doc):
    index = heading_index(doc)
    problems, seen = [], 0
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix not in TEXT_SUFFIXES or "__pycache__" in path.parts or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            for seed, places, offset in citations(text):
                seen += 1
                if lacking := missing(seed, places, index):
                    line = text.count("\n", 0, offset) + 1
                    problems.append(f"{path.relative_to(ROOT)}:{line}: {lacking} has no heading in docs/methods.md")
    assert seen > 50, "the scan found almost no citations: is the pattern still right?"
    assert not problems, "\n".join(problems)


def test_each_seed_has_a_section_with_its_reference_and_each_heading_names_one_seed(doc):
    sections = [title for level, title in headings(doc) if level == 2]
    for n in range(5):
        [section] = [s for s in sections if s.startswith(f"seed 00{n} — ")]
        body = doc.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
        assert "**Reference:**" in body and "**What the workbench takes from it:**" in body, section
    for level, title in headings(doc):
        if level == 3:
            assert len({s for s, _, _ in citations(title)}) == 1, f"### {title} should carry one citation key"


def test_the_modules_the_doc_names_exist(doc):
    named = set(re.findall(r"`((?:core|app|components|scripts|tests)/[\w/]+\.py)`", doc))
    assert {"core/signals.py", "core/gate/rules.py", "core/kg.py", "core/agents.py"} <= named
    missing = [p for p in named if not (ROOT / p).is_file()]
    assert not missing, missing


def test_every_formula_has_balanced_math_delimiters(doc):
    for level, title in headings(doc):
        body = doc.split(title + "\n", 1)[1].split("\n#", 1)[0]
        assert body.count("$") % 2 == 0 and body.count("$$") % 2 == 0, f"unbalanced $ under {title}"


def _live_keys() -> list[str]:
    tree = ast.parse(METHODS.read_text(encoding="utf-8"))
    [live] = [n.value for n in tree.body if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "LIVE"]
    return [ast.literal_eval(k) for k in live.keys]


def test_each_live_value_of_the_page_belongs_to_exactly_one_heading(doc):
    titles = [title for _, title in headings(doc)]
    for key in _live_keys():
        assert sum(t.startswith(key) for t in titles) == 1, key


def test_the_methods_page_renders_the_doc_headings_without_a_question():
    at = AppTest.from_file(str(METHODS), default_timeout=30).run()
    assert not at.exception
    doc_headings = headings(DOC.read_text(encoding="utf-8"))
    assert [h.value for h in at.header] == [t for lvl, t in doc_headings if lvl == 2] + ["Settings that cite a source"]
    assert [h.value for h in at.subheader] == [t for lvl, t in doc_headings if lvl == 3]
    assert "Analyse a question on the Inspect page" in at.info[0].value
    assert any("Eq. 12" in m.value and r"\max_{k=1..K}" in m.value for m in at.markdown)
    calibrators, table = at.dataframe[0].value, at.dataframe[-1].value  # the shipped calibrators, then settings
    assert set(calibrators["probability"]) >= {"p_topic", "p_fact", "p_open"}
    assert {"conflict_max", "amb_max", "fusion_alpha"} <= set(table["setting"])
    assert all("seed 00" in h.lower() for h in table["what it does"])


def test_the_methods_page_shows_each_formula_with_live_values():
    at = AppTest.from_file(str(METHODS), default_timeout=30)
    at.session_state[wiring.TRACE_KEY] = rich_trace()
    at.run()
    assert not at.exception
    live = [m.value for m in at.markdown if m.value.startswith("**Live:**")]
    assert len(live) == len(_live_keys()) + 1  # and the gate's decision
    text = " ".join(live)
    assert "Conf = **0.900**" in text and "Coverage = **0.900**" in text
    assert "1 / (2 + 1) = **0.333**" in text and "ρ = **0.667**" in text
    assert "fired **missing_variables** → **ASK**" in text and "0.60·0.710 + 0.40·1.000 = **0.826**" in text


# --- Each section reads as a description; its development record is folded under RECORD. ---

RECORD = "<!-- how it was chosen -->"
PARAGRAPH_MAX = 1500  # characters of one visible paragraph, table row or list item


def doc_parts(doc: str) -> list[tuple[str, str, str]]:
    """(title, description, record) for the intro ('') and each ## / ### section."""
    pieces = re.split(r"^(#{2,3} .+)$", doc, flags=re.M)
    parts = [("", pieces[0].split("\n", 1)[1] if pieces[0].startswith("# ") else pieces[0], "")]
    for title, body in zip(pieces[1::2], pieces[2::2]):
        description, _, record = body.partition(RECORD)
        parts.append((title.lstrip("# ").strip(), description, record))
    return parts


def paragraphs(text: str) -> list[str]:
    """Blocks between blank lines, with each table row and each list item counted on its own."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        lines = [line for line in block.split("\n") if line.strip()]
        if lines and all(line.lstrip().startswith("|") for line in lines):
            out.extend(lines)
            continue
        current: list[str] = []
        for line in lines:
            if re.match(r"\s*(?:[-*+]|\d+\.) ", line) and current:
                out.append(" ".join(current))
                current = []
            current.append(line.strip())
        if current:
            out.append(" ".join(current))
    return out


def visible_problems(doc: str) -> list[str]:
    """What a reader sees unfolded that reads as a development log: 'session', an overlong paragraph."""
    problems = []
    for title, description, record in doc_parts(doc):
        where = title or "the intro"
        if RECORD in record:
            problems.append(f"{where}: more than one record line")
        if re.search(r"\bsessions?\b", description, re.I):
            problems.append(f"{where}: 'session' in the description")
        problems += [f"{where}: a paragraph of {len(p)} characters: {p[:60]}…"
                     for p in paragraphs(description) if len(p) > PARAGRAPH_MAX]
    return problems


def test_the_description_checks_catch_a_session_and_a_long_paragraph():
    clean = "# Methods\n\nIntro.\n\n## seed 000 — x\n\nWhat it computes.\n\n" + RECORD + "\n\nLast session: 0.1 → 0.2.\n"
    assert visible_problems(clean) == []
    assert visible_problems(clean.replace("What it computes.", "Since the tenth session it computes.")) == [
        "seed 000 — x: 'session' in the description"]
    long = "word " * 400
    [problem] = visible_problems(clean.replace("What it computes.", f"- **Departures:** {long}\n  {long}"))
    assert problem.startswith("seed 000 — x: a paragraph of 40")
    assert visible_problems(clean.replace("What it computes.", f"| a | {long} |")) != []
    assert visible_problems(clean + "\n" + RECORD + "\n") == ["seed 000 — x: more than one record line"]


def test_each_section_reads_as_a_description_with_its_record_folded(doc):
    assert RECORD in METHODS.read_text(encoding="utf-8"), "the page must fold at the doc's record line"
    assert not visible_problems(doc), "\n".join(visible_problems(doc))
    parts = doc_parts(doc)
    recorded = [title for title, _, record in parts if record.strip()]
    assert len(recorded) >= 6 and "" not in recorded
    assert sum(len(d) for _, d, _ in parts) < len(doc) / 2, "most of the doc should be folded record"
    for title, description, record in parts:
        if title.startswith("seed 002 §3."):  # the formulas stay in the description, not the record
            assert record.count("$$") == 0, title
    # the record reads as a record: no session talk there either
    assert not re.search(r"\bsessions?\b", doc, re.I)


def test_the_methods_page_folds_each_record_into_an_expander(doc):
    at = AppTest.from_file(str(METHODS), default_timeout=30).run()
    assert not at.exception
    recorded = [(title, record) for title, _, record in doc_parts(doc) if record.strip()]
    folds = [e for e in at.expander if e.label == "How it was chosen"]
    assert len(folds) == len(recorded)
    assert all(not e.proto.expanded for e in folds)
    folded = [m.value for e in folds for m in e.markdown]
    outside = [m.value for m in at.markdown if m.value not in folded]
    # a measurement of the record is shown in its fold and nowhere else; the description outside, not in it
    for text in ("0.7677 → 0.7701", "round 62", "0.7687 → 0.7697"):
        assert any(text in m for m in folded), text
        assert not any(text in m for m in outside), text
    assert any(r"\max_{k=1..K}" in m for m in outside) and not any(r"\max_{k=1..K}" in m for m in folded)
    assert not any(re.search(r"\bsessions?\b", m, re.I) for m in outside)
