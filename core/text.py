"""Text helpers every stage shares, one copy each: sentence splitting, list markers, stopwords,
BM25 tokens, the JSONL reader, a bounded LRU cache and a stable hash of JSON-able parts.

The sentence splitter is the one the index chunks with, so the evidence, the conditions and the
answer's grounding check all see the same sentences.
"""
from __future__ import annotations

import dataclasses
import hashlib
import html
import json
import re
import threading
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterator, Sequence

from core.types import Sentence

# HTML a question or a scenario may be pasted with. A block element ends a phrase, an inline one only marks it up;
# a script or a style says nothing. Only the tags HTML defines count: "income < £12,000 and age > 66" holds none.
_INLINE_TAGS = "a|abbr|b|big|cite|code|em|font|i|mark|q|s|small|span|strong|sub|sup|u"
_BLOCK_TAGS = "blockquote|br|dd|div|dl|dt|h[1-6]|hr|li|ol|p|pre|table|tbody|td|th|thead|tr|ul"
_HIDDEN_ELEMENT = re.compile(r"<(script|style)\b[^<>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(rf"</?(?:(?P<inline>{_INLINE_TAGS})|{_BLOCK_TAGS})\b[^<>]*?/?>", re.IGNORECASE)
_ENTITY = re.compile(r"&(?:[A-Za-z]+\d*|#\d+|#[xX][0-9A-Fa-f]+);")


def written_as_names(question: str, text: str) -> set[str]:
    """The question's words, however typed, that ``text`` writes only as names: capitalised after a
    lower-case word (not opening a sentence) and never in lower case ("harrowgate" of "… between
    Brightline and Harrowgate", "Orrin's sales guy" opening a question)."""
    typed = {w.lower() for w in re.findall(r"\b[A-Za-z]\w*", question)} - STOPWORDS
    capitalised = {w.lower() for w in re.findall(r"(?<=[a-z,;] )[A-Z]\w*", text)}
    return typed & capitalised - set(re.findall(r"\b[a-z]\w*", text))


# A name of several capitalised words as a text writes it ("Harlow Bridge", "Home Insulation Grant", "Osric Vell").
_TITLED_RUN = re.compile(r"\b[A-Z][\w'-]*(?:[ \t]+[A-Z][\w'-]*)+")


def with_names_capitalised(question: str, text: str) -> str:
    """A question typed without capitals, with the names ``text`` writes capitalised as ``text`` writes them: a run
    of capitalised words ("the harlow bridge" → "the Harlow Bridge", though "bridge" is a common word too) and a
    word written only as a name (``written_as_names``). "who designed the harlow bridge?" had named nothing to the
    parser, which took the page's first person-like value ("Calvera"). A question with a capital past its first
    letter already says which of its words are names, and is left as typed."""
    if re.search(r"[A-Z]", question[1:]):
        return question
    out = question
    runs = {" ".join(w for w in m.group().split()): None for m in _TITLED_RUN.finditer(text)}
    for run in sorted(runs, key=len, reverse=True):
        words = run.split()
        while words and words[0].lower() in STOPWORDS:  # "The Harlow Bridge" opening a sentence
            words = words[1:]
        if len(words) > 1:
            phrase = " ".join(words)
            out = re.sub(rf"(?<![\w'-]){re.escape(phrase.lower())}(?![\w'-])", phrase, out)
    names = written_as_names(out, text)
    return re.sub(r"\b[a-z]\w*", lambda m: m.group().capitalize() if m.group() in names else m.group(), out) \
        if names else out


def without_markup(text: str) -> str:
    """``text`` as it reads without the HTML it was pasted with: tags dropped (a block's as a space), scripts and
    styles with their content, entities ("&amp;") decoded. A question read with its tags became a claim with "<p>"
    in it, and no sentence entails that; text with no tag or entity comes back unchanged."""
    if "<" not in text and "&" not in text:
        return text
    stripped = _TAG.sub(lambda m: "" if m.group("inline") else " ", _HIDDEN_ELEMENT.sub(" ", text))
    return _ENTITY.sub(lambda m: html.unescape(m.group()), stripped)


# A list-item marker: a bullet glyph, "1." / "2)" / "a." / "(a)" / "(iv)" (an opening "(" optional).
MARKER = r"(?:[-*+•·▪◦‣–—]|\(?\d{1,3}[.)]|\(?[a-z][.)]|\((?:\d{1,3}|[a-z]|[ivx]{1,4})\))"
LIST_MARKER = re.compile(r"^\s*" + MARKER + r"\s+")


def strip_list_marker(text: str) -> str:
    """``text`` without the list-item marker it starts with ("* are aged 66" → "are aged 66")."""
    return LIST_MARKER.sub("", text, count=1)


# --- sentences ---------------------------------------------------------------------------

HEADING = re.compile(r"[ \t]{0,3}(?P<unit>#{1,6}[ \t]+(?P<body>.*?))[ \t]*#*[ \t]*")
_BULLET = re.compile(r"[ \t]*(?P<unit>" + MARKER + r"[ \t]+\S.*?)[ \t]*")
_RULE = re.compile(r"[ \t]*([-*_])(?:[ \t]*\1){2,}[ \t]*")
_ROW = re.compile(r"[ \t]*\|(?P<body>.*)\|[ \t]*")
_ROW_RULE = re.compile(r"[\s|:\-]*")
_HEADING_PREFIX = re.compile(r"#{1,6}[ \t]")
_BULLET_PREFIX = re.compile(MARKER + r"[ \t]")
_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s)")
_LAST_WORD = re.compile(r"\S+$")
# "e.g. Carer's Allowance" and "Mr. Smith" do not end a sentence; "No. 5", "p. 12" only before a digit.
_ABBREVIATIONS = frozenset(
    "e.g. i.e. al. mr. mrs. ms. dr. st. prof. vs. cf. approx. inc. ltd. co. jr. sr. dept. est. viz.".split())
_DIGIT_ABBREVIATIONS = frozenset(
    "no. nos. p. pp. vol. art. sec. para. fig. ch. jan. feb. mar. apr. jun. jul. aug. sep. sept. oct. nov. dec."
    .split())
# Abbreviations a sentence goes on after in lower case ("… forms etc. and a passport"), which a text typed
# without capitals cannot tell from a sentence's end by its next word alone.
_LOWERCASE_ABBREVIATIONS = frozenset("etc. incl. excl. esp. min. max. yr. yrs. mo. mos. wk. wks.".split())
_ACRONYM = re.compile(r"(?:[a-z]\.){2,}|[A-Z]\.")


@dataclass(frozen=True)
class Unit:
    """A span of a text that is one sentence for the pipeline."""
    start: int
    end: int
    kind: str  # heading | bullet | sentence


def split_sentences(text: str, typed: bool = False) -> list[Sentence]:
    """Sentences of ``text`` with offsets into it (``text[s.start:s.end] == s.text``).

    Each markdown heading line and each bullet / numbered item (with its indented continuation
    lines) is one sentence whatever its punctuation, because the pipeline reads a bullet as one
    condition; it keeps its marker ("## Eligibility", "* are aged 16 or over") so readers can tell
    it apart (see ``sentence_kind``). Prose is split after . ! ? unless the next word is lowercase
    or the period ends a known abbreviation, an initial or a decimal. What a person ``typed`` (a question,
    a scenario) is split before a lowercase word too ("I am 71. can i get a bus pass?"): people skip the
    capital that documents keep, and there only an abbreviation goes on in lower case.
    """
    return [Sentence(text[u.start:u.end], u.start, u.end) for u in units(text, typed)]


def sentence_kind(sentence: Sentence | str) -> str:
    """``heading``, ``bullet`` or ``sentence``, read from the marker a sentence starts with."""
    text = sentence.text if isinstance(sentence, Sentence) else sentence
    if _HEADING_PREFIX.match(text):
        return "heading"
    if _BULLET_PREFIX.match(text):
        return "bullet"
    return "sentence"


# Words a title leaves in lower case ("Terms of Use", "Notices and Consents").
TITLE_SMALL_WORDS = frozenset({"a", "an", "and", "as", "at", "by", "for", "in", "of", "on", "or", "the", "to", "with"})
_TITLE_WORD = re.compile(r"[A-Za-z][\w'\u2019-]*")


def title_line(text: str) -> bool:
    """A line that names a section or signs a page instead of saying something: at most eight words, no
    closing punctuation, every word capitalised but the small ones. Plain-text contracts are full of them
    ("Governing Law/Disputes", "CONDUCT POLICY", "Date: 7/25/01", "(Print Name)"), and an NLI model reads a
    short title as entailing whatever shares its topic."""
    text = text.strip()
    words = _TITLE_WORD.findall(text)
    if not words or len(text.split()) > 8 or text.endswith((".", ";", ",", "!", "?")):
        return False
    return all(w[0].isupper() or w in TITLE_SMALL_WORDS for w in words) and any(w[0].isupper() for w in words)


def heading_texts(sentences: Sequence[Sentence | str]) -> list[str]:
    """The headings among ``sentences``, markers stripped."""
    texts = (s.text if isinstance(s, Sentence) else s for s in sentences)
    return [m.group("body").strip() for t in texts if (m := HEADING.fullmatch(t)) and m.group("body").strip()]


def headings(sentences: Sequence[Sentence | str]) -> str:
    """What the headings among ``sentences`` say, joined ("1619 bursary fund: eligibility. Vulnerable
    student bursary"): a passage starts at its section's heading, which names what its sentences are
    about when they do not ("You could get up to £1,200 …")."""
    return ". ".join(heading_texts(sentences))


def units(text: str, typed: bool = False) -> list[Unit]:
    """The units of ``text`` in order: headings, bullets (with their continuation lines), prose sentences
    (``typed``: see ``split_sentences``)."""
    units: list[Unit] = []
    para: list[int] = []  # [start, end] of the prose paragraph being gathered
    item: Unit | None = None  # the open bullet, which indented lines continue

    def flush() -> None:
        nonlocal item
        if item is not None:
            units.append(item)
            item = None
        if para:
            units.extend(Unit(s, e, "sentence") for s, e in _split_prose(text, para[0], para[1], typed))
            para.clear()

    pos = 0
    for line in text.splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        body = line.rstrip("\r\n")
        if not body.strip() or _RULE.fullmatch(body):
            flush()
        elif m := HEADING.fullmatch(body):
            flush()
            if m.group("body"):
                units.append(Unit(start + m.start("unit"), start + m.end("unit"), "heading"))
        elif m := _BULLET.fullmatch(body):
            flush()
            item = Unit(start + m.start("unit"), start + m.end("unit"), "bullet")
        elif m := _ROW.fullmatch(body):
            flush()
            if not _ROW_RULE.fullmatch(m.group("body")):
                s, e = trim_span(text, start + m.start(), start + m.end())
                units.append(Unit(s, e, "sentence"))
        elif item is not None and body[:1] in " \t":
            item = dataclasses.replace(item, end=start + len(body.rstrip()))
        else:
            if item is not None:
                flush()
            s, e = trim_span(text, start, start + len(body))
            if para:
                para[1] = e
            else:
                para[:] = [s, e]
    flush()
    return units


def _split_prose(text: str, start: int, end: int, typed: bool = False) -> list[tuple[int, int]]:
    spans, pos = [], start
    for m in _END.finditer(text, start, end):
        nxt = trim_span(text, m.end(), end)[0]
        if nxt >= end or (text[nxt].islower() and not typed) or _is_abbreviation(text, start, m, text[nxt]):
            continue
        spans.append(trim_span(text, pos, m.end()))
        pos = nxt
    spans.append(trim_span(text, pos, end))
    return [(s, e) for s, e in spans if e > s]


def _is_abbreviation(text: str, start: int, m: re.Match, next_char: str) -> bool:
    if m.group() != ".":
        return False
    word = _LAST_WORD.search(text, max(start, m.end() - 30), m.end()).group().lstrip("([\"'“‘")
    low = word.lower()
    return (low in _ABBREVIATIONS or _ACRONYM.fullmatch(word) is not None
            or ((next_char.isdigit() or next_char.islower()) and low in _DIGIT_ABBREVIATIONS)
            # "U.S. military": in lower case only the dotted form of an acronym matches
            or (next_char.islower() and (low in _LOWERCASE_ABBREVIATIONS or _ACRONYM.fullmatch(low) is not None)))


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


# --- words -------------------------------------------------------------------------------

_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
# Function words (NLTK's English list plus modals and contractions). bm25s's 33-word list keeps
# "do", "when", "from", "my", whose incidental matches max-normalisation would blow up to 1.0.
STOPWORDS = frozenset("""
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers
herself it its itself they them their theirs themselves what which who whom whose this that these those am
is are was were be been being have has had having do does did doing a an the and but if or because as
until while of at by for with about against between into through during before after above below to from
up down in out on off over under again further then once here there when where why how all any both each
few more most other some such no nor not only own same so than too very can will just should now could
would may might must shall also cannot can't don't doesn't didn't isn't aren't wasn't weren't won't
wouldn't shouldn't couldn't haven't hasn't hadn't i'm i've i'd i'll you're you've you'd you'll we're
we've they're they've it's that's there's let's
""".split())


_STRAIGHT = str.maketrans({"\u2019": "'", "\u2018": "'"})


def straight_quotes(text: str) -> str:
    """Typographic apostrophes made plain ("can\u2019t" → "can't"), same length: gov.uk and most
    published text write them curly, and every cue written with "'" ("can't", "aren't") must still match."""
    return text.translate(_STRAIGHT)


# A negative contraction typed without its apostrophe ("I havent been offered a place", "dont", "cant").
_BARE_CONTRACTION = re.compile(r"\b(do|does|did|ca|wo|is|are|was|were|have|has|had|should|would|could|need)nt\b", re.I)


# A pronoun's or wh-word's contraction typed without its apostrophe ("im 62", "ive lived here", "whats the fee");
# not the ones that spell another word ("ill", "well", "were", "its", "id", "hell", "shell", "wed").
_BARE_PRONOUN = {"im": "I'm", "ive": "I've", "youre": "you're", "youve": "you've", "theyre": "they're",
                 "theyve": "they've", "weve": "we've", "shes": "she's", "whats": "what's", "whens": "when's",
                 "wheres": "where's", "whos": "who's", "hows": "how's", "thats": "that's", "theres": "there's"}
_BARE_PRONOUN_WORD = re.compile(rf"\b(?:{'|'.join(_BARE_PRONOUN)})\b", re.I)


def _pronoun_contraction(m: re.Match) -> str:
    full = _BARE_PRONOUN[m.group().lower()]
    return full if full.startswith("I'") or not m.group()[0].isupper() else full[0].upper() + full[1:]


def spelled_contractions(text: str) -> str:
    """A contraction typed without its apostrophe given one ("havent" → "haven't", "cant" → "can't", "im" →
    "I'm", "whats" → "what's"): what a user says is read by the parser, negation cues and fact readers
    written with it. Not the same length: for reading a user's words, never for offsets into a document."""
    text = _BARE_CONTRACTION.sub(lambda m: m.group(1) + "n't", text)
    return _BARE_PRONOUN_WORD.sub(_pronoun_contraction, text)


def with_apostrophes(text: str) -> str:
    """``straight_quotes`` and ``spelled_contractions``."""
    return spelled_contractions(straight_quotes(text))


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens for BM25 (and the coverage signal): no stopwords, no possessive 's,
    plural -s folded ("allowances" → "allowance") so the two sides of a match agree."""
    tokens = []
    for token in _TOKEN.findall(straight_quotes(text).lower()):
        token = token[:-2] if token.endswith("'s") else token
        if token in STOPWORDS or (len(token) < 2 and not token.isdigit()):
            continue
        if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
            token = token[:-1]
        tokens.append(token)
    return tokens



CONTENT_WORD = re.compile(r"[A-Za-z0-9£$€%]+(?:['’][a-z]+)?")
# Function words, and what every eligibility question shares ("get", "yes") and so cannot tell topics apart.
CONTENT_STOP = STOPWORDS | {"yes", "get", "got", "one"}


def plain(text: str) -> str:
    """Lower case without accents, so "Beyonce" in a question matches "Beyoncé" in a passage."""
    return unicodedata.normalize("NFKD", text.lower()).encode("ascii", "ignore").decode()


def normalized(text: str) -> str:
    """Lower-case words and numbers only: two wordings that differ in case and punctuation compare equal."""
    return " ".join(re.findall(r"[a-z0-9£]+", text.lower()))


def content_words(text: str) -> set[str]:
    """Lower-cased words that carry meaning, cut to 5 letters so "opened"/"opening" match."""
    return {w.lower()[:5] for w in CONTENT_WORD.findall(text) if w.lower() not in CONTENT_STOP}


# --- JSONL, caches, keys -----------------------------------------------------------------

def jsonl_records(text: str) -> Iterator[tuple[int, Any, str]]:
    """(line number, object, "") for each non-empty line of JSONL ``text``; (line number, None, why)
    for a line that is not valid JSON, so each reader decides whether that skips or stops."""
    for n, line in enumerate(text.split("\n"), 1):  # not splitlines(): U+2028 may sit inside a JSON string
        if not line.strip():
            continue
        try:
            yield n, json.loads(line), ""
        except json.JSONDecodeError as exc:
            yield n, None, f"not valid JSON ({exc.msg} at column {exc.colno})"


def stable_hash(*parts: Any, length: int | None = None) -> str:
    """A SHA-1 hex digest of ``parts`` as sorted-key JSON (str() for what JSON cannot hold): the
    same parts give the same key in every process. ``length`` cuts it."""
    digest = hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
    return digest[:length] if length else digest


class LRU:
    """A bounded, thread-safe least-recently-used cache."""

    def __init__(self, size: int):
        if size < 1:
            raise ValueError(f"an LRU cache holds at least 1 entry, not {size}")
        self.size = size
        self._data: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            if key not in self._data:
                return default
            self._data.move_to_end(key)
            return self._data[key]

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def get_or(self, key: Hashable, compute: Callable[[], Any]) -> tuple[Any, bool]:
        """(value, whether it was cached); ``compute()`` runs outside the lock on a miss."""
        missing = object()
        value = self.get(key, missing)
        if value is not missing:
            return value, True
        value = compute()
        self.put(key, value)
        return value, False

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._data

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
