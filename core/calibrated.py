"""Signals as calibrated probabilities: small logistic models over named features of the trace.

Each probability answers one question the gate asks, and means the same on every knowledge base
because it was fitted on several (``scripts/fit_signals.py``, on ``../shared/data/train`` only):

- ``p_topic``: the knowledge base covers what the question is about;
- ``p_fact``: the asked fact is stated in the evidence. A question whose answer turns on the asker's
  circumstances is answered by the rule the evidence states, so it is ``p_depends`` + (1 − ``p_depends``)
  × ``p_topic`` × P(fact | topic, it does not), the latter fitted on the articles and contracts alone
  (held-out AUROC on ContractNLI 0.79 → 0.80 against one model over every domain) and only where the
  topic is covered: a fact is stated only where its topic is (``Calibrator.within``);
- ``p_open``: some condition the answer depends on is not established by what the user said. It is
  the product of two models: ``p_depends``, whether the answer turns on the asker's circumstances at
  all (a rule text about eligibility, not a fact stated in an article or a contract), fitted on every
  domain, and the chance a condition is open given that it does, fitted on the rule texts alone. One
  model over all domains spent its weight telling the domains apart: on held-out ShARC rule trees it
  ranked open against settled at AUROC 0.70, the product at 0.768;
- ``p_met``: every condition is met, so the answer is yes;
- ``p_depends`` (a signal too): whether the answer turns on the asker's circumstances. With the gate's
  ``depends_min`` above 0, only such a question is judged by the evidence's uncovered topics.

Several referents are counted against the knowledge base rather than estimated from the wording
(``referents``): on AmbigNQ the five surface heuristics of seed 002 §3.5 separate questions with
several readings from those with one at AUROC 0.51, no better than chance.

A model is data: its features, their standardisation, coefficients, intercept, what it was
fitted on and its held-out AUROC, in one JSON file (``models/signals.json``). ``features(trace)``
reads only the trace, so re-fitting needs no re-analysis, and the contributions of each feature
(coefficient × standardised value) are shown in the workbench. No model is called here.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

from core.bands import age_bands, told_age
from core.evidence import KIND_SYNONYMS
from core.quantities import singular, without_ending
from core.retrieval import ACRONYM, acronym_expansions
from core.text import LIST_MARKER, STOPWORDS, normalized, plain, straight_quotes, tokenize, written_as_names
from core.types import Trace
from core.variables import (FIRST_PERSON, GENERIC_ASK, NO, UNSURE, YES, all_required_met, conditions_apply,
                            content_words, follow_up_support, met_alternatives, read_without_nli, still_open)

DEFAULT_FILE = Path(__file__).resolve().parent.parent / "models" / "signals.json"
PROBABILITIES = ("p_topic", "p_fact", "p_open", "p_met", "p_depends")
# A list item or a conditional clause: each usually states one condition of a rule.
CONDITION_MARKER = re.compile(r"(?m)^\s*(?:[*\-•]|\d+[.)]|\([a-z0-9]+\))\s|\b(?:if|unless|only if|provided that|as long as)\b",
                              re.IGNORECASE)
TOP_CLOSE = 0.10  # passages whose retrieval score is within this of the best compete as referents
# Commas that separate the items of an inline list (not those before a relative clause or an example).
LIST_COMMA = re.compile(r",\s+(?!and\b|or\b|but\b|which\b|who\b|for example|including|unless|if)", re.IGNORECASE)
CONDITIONAL = re.compile(r"\b(?:if|unless|only if|provided that|as long as|except)\b", re.IGNORECASE)


# "the grant", "this agreement", "the Orrin agreement": a thing referred to by a common noun (lower case:
# a name is a title), after any names that qualify it
DEFINITE = re.compile(r"\b(?:the|this|that)\s+(?:[A-Z][\w'-]*\s+)*([a-z][a-z'-]*)")


def referent_kinds(question: str, top_title: str, retrieved_text: str = "") -> set[str]:
    """The common nouns by which a question naming nothing refers to a thing ("the grant", "this
    agreement") that the top document's title shares: what makes other documents so titled rivals. An
    abbreviation the title spells out, word by word, is such a noun too ("the NDA" of "Mutual
    Non-Disclosure Agreement"), and no name; a word typed in lower case that the retrieved passages
    (``retrieved_text``) write only as a name is one, however typed ("end the nda with brightline")."""
    question = straight_quotes(question)
    abbreviations = {m.group(1).lower() for m in ABBREVIATED.finditer(question) if titled_as(m.group(1), top_title)}
    names = _names(question) | {w for w in written_as_names(question, retrieved_text) if not titled_as(w, top_title)}
    if names - abbreviations:  # a name ("the Orrin Robotics agreement") is what retrieval told them apart by
        return set()
    kinds = {t for m in DEFINITE.finditer(question) for t in tokenize(m.group(1))} | abbreviations
    return {k for k in kinds if titled_as(k, top_title)}


def retrieved_text(passages) -> str:
    """The retrieved passages' text, in which ``referent_kinds`` finds the names a question types in lower case."""
    return " ".join(p.passage.text for p in passages)


# "the NDA", "this SMP": an abbreviation a question refers to one thing by
ABBREVIATED = re.compile(r"\b(?:the|this|that)\s+" + ACRONYM.pattern)


def titled_as(kind: str, title: str) -> bool:
    """Whether a title calls its thing ``kind``: one of its words, or an abbreviation it spells out word by
    word as retrieval reads one (``acronym_expansions``: "nda" of "Mutual Non-Disclosure Agreement")."""
    return kind.lower() in tokenize(title) or bool(acronym_expansions(kind.upper(), (title,)))


def referents(question: str, passages, rivals: Sequence[str] = ()) -> tuple[str, ...]:
    """The things the question could mean: the titles of the documents whose best passage scores
    within ``TOP_CLOSE`` of the top one, and of those further down that a question naming nothing refers
    to by a common noun the top document's title shares ("the grant", retrieved with the School Uniform
    Grant first and the Home Insulation Grant and the Small Business Start-up Grant below it), and
    ``rivals``: the titles of the knowledge base's documents retrieval did not return that share that
    noun (``Trace.rivals``) — documents
    that share a title (the paragraphs of one article) are one thing; an untitled document is its own —
    unless the question names one of them by a title word the others lack ("the Harlow Bridge" picks
    the bridge's article over the town's; a question naming several is resolved to the first it
    names). Each is given by its title (or document id). Several referents that the question cannot
    tell apart ("the agreement" with two NDAs) are what a clarification resolves."""
    if not passages:
        return ()
    question_terms = set(tokenize(question))
    best = passages[0].score
    kinds = referent_kinds(question, passages[0].passage.title, retrieved_text(passages))
    shown: dict[str, str] = {}  # referent key → its title as written
    titles: dict[str, set[str]] = {}
    for p in passages:
        tokens = tokenize(p.passage.title)
        key, words = " ".join(tokens) or p.passage.doc_id, set(tokens)
        if (best - p.score <= TOP_CLOSE or any(titled_as(k, p.passage.title) for k in kinds)) and key not in titles:
            titles[key] = words
            shown[key] = p.passage.title or p.passage.doc_id
    for title in rivals:
        tokens = tokenize(title)
        key = " ".join(tokens) or title
        if key not in titles:
            titles[key] = set(tokens)
            shown[key] = title
    documents = tuple(shown[k] for k in _told_apart(question_terms, titles))
    return documents if len(documents) > 1 else instances(question, passages) or documents


# Words that single out one of several things of a kind ("her first novel", "the latest album")
SINGLING_OUT = (r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|debut|last|latest|final|"
                r"next|new|newest|previous|earlier|later|original|current|former|only|main|best-known|biggest|"
                r"largest|oldest|tallest|longest|earliest|highest)")
# A possessive or definite determiner a question refers to one thing of a kind with ("the pale lanterns
# album", "Isolde Fenn's novel", "her novel"); not a wh-word's or pronoun's contraction ("what's the fare")
REFERRING = re.compile(r"\b(?:the|this|that|her|his|their|its|"
                       r"(?!(?:what|who|where|how|when|why|it|that|there|here|he|she|let)'s)\w+'s?)\s+")
# A name given to one of them: "the album Low Water", "debut album, Saltwork", "her first novel, The Tide Clerk"
_INSTANCE_NAME = r"\"?[A-Z][\w'-]*(?:\s+(?:(?:of|the|upon|on|and|in)\s+)?[A-Z][\w'-]*)*\"?"
# Words that restrict a noun to one thing after it ("the album called …", "the album that …", "the novel 1961")
RESTRICTED_AFTER = re.compile(r"\s+(?:[A-Z\d\"]|called\b|named\b|titled\b|that\b|which\b|who\b|whose\b|where\b)")
# Saying "them" in the plural: "her later novels", "their six albums"
_SEVERAL = r"(?:her|his|their|its|several|two|three|four|five|six|seven|eight|nine|ten|many|other|later|earlier|both|\d+)"


def _said_of_several(word: str, noun: str, text: str) -> bool:
    """Whether ``text`` says ``word`` of several things of kind ``noun`` ("later novels"): then the word
    singles none of them out."""
    return any(singular(plural) == noun and plural != noun
               for plural in re.findall(rf"\b{re.escape(word)}\s+([a-z]+)", text, re.I))


def _instances_named(noun: str, text: str) -> list[str]:
    """The distinct things of kind ``noun`` a document names, each by its name or the word that singles it
    out ("Saltwork", "the sixth album", "Low Water"), and "another <noun>" when it speaks of them in the
    plural ("her later novels")."""
    found: list[str] = []
    kind = re.escape(noun)
    for m in re.finditer(rf"(?:\b({SINGLING_OUT})\s+(?:[a-z]\w*\s+)?)?\b{kind}\b(?:,?[ ]+({_INSTANCE_NAME}))?", text):
        label = m.group(2).strip('"') if m.group(2) else (f"the {m.group(1)} {noun}" if m.group(1) else "")
        if label and label not in found:
            found.append(label)
    spoken_of = (word for m in re.finditer(rf"\b{_SEVERAL}\s+([a-z]+)(?:\s+([a-z]+))?", text) for word in m.groups() if word)
    if any(word != noun and singular(word) == noun for word in spoken_of):
        found.append(f"another {noun}")
    return found


def instances(question: str, passages) -> tuple[str, ...]:
    """The things of one kind the top document names several of, when the question refers to one of them
    by that kind alone ("When did the Pale Lanterns album come out?" of a band with a debut album,
    Saltwork, a sixth, and Low Water; "Isolde Fenn's novel" of a writer with three): they would answer
    differently, so the question has several referents within the one document. A word that singles one
    out ("her first novel"), a name after the noun ("the album Low Water") or a restricting clause ("the
    album that …") leaves one; so does a question naming one of them."""
    if not passages:
        return ()
    question = straight_quotes(question)
    top = passages[0].passage.doc_id
    text = straight_quotes(" ".join(p.passage.text for p in passages if p.passage.doc_id == top))
    for m in REFERRING.finditer(question):
        after = question[m.end():]
        # the owner's name may stand between the determiner and the kind ("the Pale Lanterns album")
        words = re.match(r"(?:[A-Za-z][\w-]*(?:\s+|$))*", after).group(0).split()[:4]
        for k, noun in enumerate(words):
            if re.fullmatch(SINGLING_OUT, noun) and k + 1 < len(words) and _said_of_several(noun, words[k + 1], text):
                continue  # "her later novel" of "Her later novels include …": still one of several
            if re.fullmatch(SINGLING_OUT, noun) or noun in STOPWORDS or len(noun) < 3:
                break
            said = re.search(rf"\b{re.escape(noun)}\b", after)
            if not noun.islower() or RESTRICTED_AFTER.match(after[said.end():]):
                continue
            found = _instances_named(noun, text)
            if len(found) >= 2 and not any(label.lower() in question.lower() for label in found):
                return tuple(found)
    return ()


def _told_apart(question_terms: set[str], titles: Mapping[str, set[str]]) -> list[str]:
    """The candidates (key → title words) the question still leaves open: the first it names by a title
    word no other candidate has ("the Harlow Bridge" picks the bridge over the town), else all of them."""
    named = [k for k, words in titles.items()
             if question_terms & (words - set().union(*(w for o, w in titles.items() if o != k)))]
    return named[:1] if named else list(titles)


def described(question: str, passages, scenario: str = "") -> tuple[str, ...]:
    """The documents among ``passages`` that each say, in one passage, everything a question naming
    nothing says of the thing it refers to by a common noun ("When was the ship launched?": Corran
    Shipyards' article, which says it launched a liner, and the liner's, which says when she was
    launched), by their titles (documents sharing a title are one thing), unless the question names one
    of them by a title word the others lack. What the user said besides (``scenario``) counts as the
    question does: a title word it names singles a document out, and a document it ranked down
    (``RetrievedPassage.scenario_penalty``) is not meant. Two or more mean the question cannot be
    answered until it says which; unlike ``referents`` it needs no close retrieval scores, so it holds
    where nothing retrieved scores well."""
    question = straight_quotes(question)
    if _names(question) or not DEFINITE.search(question):
        return ()
    said = content_words(question) - GENERIC_ASK
    if not said:
        return ()
    titles: dict[str, str] = {}  # referent key → its title as written
    for p in passages:
        # one passage says it all, not scattered mentions
        if said <= content_words(p.passage.text) and p.scenario_penalty <= TOP_CLOSE:
            key = " ".join(tokenize(p.passage.title)) or p.passage.doc_id
            titles.setdefault(key, p.passage.title or p.passage.doc_id)
    told = set(tokenize(f"{question} {scenario}"))
    return tuple(titles[k] for k in _told_apart(told, {k: set(k.split()) for k in titles}))


# A name of two words or more: capitalised words, or words with a capital inside ("iPod Nano"), one after
# another or joined by "of (the)" ("Bank of England").
_NAME_WORD = r"(?:[A-Z]|[a-z]+[A-Z])[\w'.-]*"
MULTIWORD_NAME = re.compile(rf"{_NAME_WORD}(?:\s+(?:of\s+(?:the\s+)?)?{_NAME_WORD})+")
POSSESSIVE = re.compile(r"'s?(?=\s|$|[^\w])")


def _name_key(text: str) -> str:
    """A name as plain lower-case words: accents, possessives and punctuation left out ("Beyoncé's" and
    "Beyonce" agree, as do "Wi-Fi" and "Wi Fi")."""
    return normalized(plain(POSSESSIVE.sub("", straight_quotes(text))))


def multiword_names(question: str) -> list[str]:
    """The question's names of two words or more, as written. A sentence's first words are capitalised
    whatever they are: function words there ("What", "Under the", "Because of") start no name; a
    possessive ends one ("Chopin's Op. 63" is Chopin's, "Game Radar's list" Game Radar's)."""
    names = []
    for sentence in re.split(r"(?<=[.?!])\s+", straight_quotes(question)):
        for m in MULTIWORD_NAME.finditer(sentence):
            words = m.group(0).rstrip(".").split()
            if not sentence[:m.start()].strip():
                while words and words[0].lower() in STOPWORDS:
                    words = words[1:]
            run: list[str] = []
            for k, word in enumerate(words):
                run.append(word)
                if POSSESSIVE.search(word) or k == len(words) - 1:
                    if len(run) >= 2:
                        names.append(" ".join(run))
                    run = []
    return names


def unknown_names(trace: Trace) -> tuple[str, ...]:
    """The names of two words or more that a question asking for a fact gives and no retrieved passage
    mentions ("Who wrote the music for Twilight Kondo?" against an article on Twilight Princess and its
    composer Koji Kondo): nothing retrieved can state a fact about a thing it never names. Only for a
    wh-question not about the asker: a statement's names ("Receiving Party") are a contract's defined terms,
    which each document spells its own way ("the Recipient"), and a rule question names the scheme its rule
    text often leaves unsaid ("Can I get Winter Fuel Payment?")."""
    question = trace.query.question
    if trace.claim.schema != "existential" or FIRST_PERSON.search(question):
        return ()
    text = f" {_name_key(' '.join(p.passage.text for p in trace.passages))} "
    titles = [p.passage.title for p in trace.passages]
    names = []
    for name in multiword_names(question):
        # an abbreviation a retrieved title spells out names a document's kind, not part of a name: "the
        # Orrin Robotics NDA" is Orrin Robotics' non-disclosure agreement
        runs = re.split(rf"\s*{ACRONYM.pattern}\s*", name) if acronym_expansions(name, titles) else [name]
        names += [run for run in runs if len(run.split()) >= 2]

    def spellings(key: str) -> set[str]:
        """Singular or plural either side ("iPod Nanos" / "iPod Nano"); "the CEO of Apple" written
        "Apple's CEO" (possessives are dropped from ``text``)."""
        head, of, owner = key.partition(" of the ") if " of the " in key else key.partition(" of ")
        keys = {key, f"{owner} {head}"} if of else {key}
        return keys | {f"{k}s" for k in keys} | {k.removesuffix("s") for k in keys}
    return tuple(name for name in names if not any(f" {key} " in text for key in spellings(_name_key(name))))


def _overlap(terms: set[str], text: str) -> float:
    """Share of ``terms`` found among ``text``'s tokens (0 with no terms)."""
    if not terms:
        return 0.0
    return len(terms & set(tokenize(text))) / len(terms)


# Words that frame a question rather than say what it asks, matched by ``_prefix``: the stems every eligibility
# question shares (``GENERIC_ASK``: "claim", "eligibl"), the answer's kind ("how many people", "what year") and
# filler ("ok", "still"). "get", "receive", "pay" (stemmed "earn" there), "need", "name", "time" and "date" stay
# asked words: leaving them out too lowered the cross-fitted training objective (``presets/README.md``,
# seventy-fifth session).
QUESTION_FRAME = frozenset(w[:5] for w in GENERIC_ASK | set(tokenize(
    "many much long often far old kind year number people person place happen ok still way thing well really "
    "actually")))


def _prefix(word: str) -> str:
    """A word without its inflection, cut to five letters: "opened" meets "open", "designed" "designer"
    and "directed" "director". A word with no ending loses a final -e only if it is longer than three
    letters."""
    stem = without_ending(word)
    return (stem.rstrip("e") if stem != word or len(word) > 3 else word)[:5]


def _prefixes(text: str) -> set[str]:
    """``_prefix`` of each content word of ``text``."""
    return {_prefix(w) for w in tokenize(text)}


def asked_terms(question: str, title: str) -> list[str]:
    """What a question asks beyond its topic, as its words: its words less its names, the top document's
    title and the words that only frame a question ("Who designed the Arden Lighthouse?" → ["designed"])."""
    topic = _prefixes(" ".join(_names(question))) | _prefixes(title) | QUESTION_FRAME
    return list(dict.fromkeys(w for w in tokenize(question) if _prefix(w) not in topic))


def asked_words(question: str, title: str) -> set[str]:
    """``asked_terms`` as they are compared with a passage's words (``_prefix``)."""
    return {_prefix(w) for w in asked_terms(question, title)}


def _kinds_named() -> dict[str, frozenset[str]]:
    """For each word (as ``_prefix`` reads it) that names a kind of value by another word, the kinds it names:
    "inhabitants" says "population", "fare" says "price" (the answer's value reader's synonyms,
    ``core.evidence.KIND_SYNONYMS``)."""
    kinds: dict[str, set[str]] = {}
    for kind, words in KIND_SYNONYMS.items():
        for word in words:
            kinds.setdefault(_prefix(word), set()).add(_prefix(kind))
    return {word: frozenset(named) for word, named in kinds.items()}


KINDS_NAMED = _kinds_named()


def _with_kinds(said: set[str]) -> set[str]:
    """A sentence's word prefixes and the kinds of value they name (``KINDS_NAMED``): a question asking for the
    population is answered by a sentence that counts inhabitants ("What is the population of Varnholm?" had
    P(fact stated) 0.47 beside "it had 412,000 inhabitants")."""
    return said.union(*(KINDS_NAMED[w] for w in said if w in KINDS_NAMED))


def asked_found(trace: Trace) -> float:
    """The largest share of the question's asked words (``asked_words``) that one sentence of a top
    passage holds with the sentence before it, a kind of value said by another word included (``_with_kinds``;
    1 when it asks nothing beyond its topic). A passage about
    the topic that never says what is asked ("designed") rarely states the fact; read over the words,
    not the NLI verdict, which finds a wh-question's claim neutral whether or not the answer is there
    (train KB wh-questions: AUROC 0.77, against 0.67 for P(fact stated) fitted without them)."""
    if not trace.passages:
        return 0.0
    asked = asked_words(trace.query.question, trace.passages[0].passage.title)
    if not asked:
        return 1.0
    best = 0.0
    for p in trace.passages[:3]:
        texts = [s.text for s in p.passage.sentences] or [p.passage.text]
        words = [_with_kinds(_prefixes(text)) for text in texts]
        for k, said in enumerate(words):
            best = max(best, len(asked & (said | (words[k - 1] if k else set()))) / len(asked))
    return best


def rivalled_names(trace: Trace) -> tuple[str, ...]:
    """The names of two words or more the question gives that the sentence giving the answer's value (read with
    its passage's title) does not say, while it says a rival: a name with the same head word and other words
    ("How much is Maternity Allowance a week?" answered from "Carer's Allowance is £81.90 a week"; the
    Yongle Emperor asked of, the Hongwu Emperor said). The value is another thing's. A shorter or longer form
    of the name ("Lee" for Harper Lee, "the University of Notre Dame" for Notre Dame) is no rival. None without
    a value to give."""
    if not trace.passages or trace.answer is None or not trace.answer.value:
        return ()
    passage = next((p.passage for p in trace.passages if p.passage.id == trace.answer.passage_id),
                   trace.passages[0].passage)
    around = straight_quotes(f"{trace.answer.sentence} . {passage.title}")

    def words(name: str) -> tuple[str, ...]:
        return tuple(w.removesuffix("s") for w in _name_key(name).split() if w not in STOPWORDS)

    def rivals(asked: tuple[str, ...], other: tuple[str, ...]) -> bool:
        """The same head word ("Allowance", "Emperor"), and each with a word the other lacks."""
        return bool(asked and other) and asked[-1] == other[-1] and bool(set(asked) - set(other)) \
            and bool(set(other) - set(asked))
    said = {words(m.group(0)) for m in MULTIWORD_NAME.finditer(around)}
    return tuple(name for name in multiword_names(trace.query.question)
                 if (asked := words(name)) not in said and any(rivals(asked, other) for other in said))


def unaddressed(trace: Trace, share: float = 0.5) -> int:
    """Conditions still open (``still_open``: not the other items of a list one item already meets) that nothing
    the user said touches: no answered follow-up, scenario sentence or the question itself shares ``share`` of the
    condition's content words (a follow-up asked about it is a paraphrase)."""
    said = [trace.query.question, *trace.query.scenario.split("."), *(q for q, _ in trace.query.history)]
    said_terms = [set(tokenize(t)) for t in said if t.strip()]
    count = 0
    for condition in still_open(trace.variables.conditions):
        words = set(tokenize(condition.text))
        if not any(len(words & t) >= share * len(words) for t in said_terms if words):
            count += 1
    return count


def unsaid_share(trace: Trace) -> float:
    """Mean over the conditions of the share of their content words that nothing in the dialogue says
    (question, scenario, follow-ups and replies): a follow-up asks about a condition in its words, so a
    condition whose words are still unsaid is probably still open, however the reader matched it
    ("Are you a female Vietnam Veteran?" leaves "with a child who has a birth defect" unsaid)."""
    conditions = trace.variables.conditions
    if not conditions:
        return 0.0
    query = trace.query
    said = set(tokenize(" ".join([query.question, query.scenario, *(f"{q} {a}" for q, a in query.history)])))
    shares = [len(words - said) / len(words) for c in conditions if (words := set(tokenize(c.text)))]
    return sum(shares) / len(shares) if shares else 0.0


def last_settled(trace: Trace) -> int | None:
    """The index of the condition the dialogue's last follow-up settled; None without a history or
    when that follow-up spoke to no condition the reader found (it missed part of the rule)."""
    if not trace.query.history:
        return None
    said = follow_up_support(*trace.query.history[-1])
    settled = [k for k, c in enumerate(trace.variables.conditions) if c.method.startswith("history") and c.support == said]
    return settled[-1] if settled else None


def rule_points(text: str) -> int:
    """How many points a rule text makes that a dialogue may have to settle: its bullets, or in running
    text the comma-separated parts of its inline lists ("municipalities, family farmers and fishermen": 2)
    and its conditional clauses; the larger count. A rough count read from the text itself, whatever the
    condition reader made of it: ShARC asks about list items that no condition cue introduces."""
    lines = text.splitlines()
    bullets = sum(bool(LIST_MARKER.match(line)) for line in lines)
    inline = 0
    for line in lines:
        if LIST_MARKER.match(line) or line.startswith("#"):
            continue
        for sentence in re.split(r"(?<=[.!?])\s+", line):
            commas = len(LIST_COMMA.findall(sentence))
            if commas and re.search(r"\b(?:and|or)\b", sentence):
                inline += commas + 1
            elif CONDITIONAL.search(sentence):
                inline += 1
    return max(bullets, inline)


def _names(text: str) -> set[str]:
    """Capitalised words after the first (names: "Normandy", "Harlow Bridge"), lower-cased."""
    words = re.findall(r"[A-Za-z][\w'-]*", text)
    return {w.lower() for w in words[1:] if w[0].isupper() and w.lower() not in STOPWORDS}


def _bare_name(text: str) -> bool:
    """A list item that is only a name: a few words, none a verb or a pronoun the rule would state a condition with."""
    words = text.lower().split()
    return 0 < len(words) <= 6 and not set(words) & {"you", "you're", "your", "be", "are", "is", "have", "has", "not",
                                                       "can", "cannot", "must", "if", "who", "get", "live"}


def answered(trace: Trace) -> list[str]:
    """The user's replies to follow-up questions that answer yes or no, lower-cased: "Let me check." and "I don't
    know" (which opens like a no) settle nothing and count as no turn."""
    said = (straight_quotes(a).strip().lower() for _, a in trace.query.history)
    return [a for a in said if (YES.match(a) or NO.match(a)) and not UNSURE.search(a)]


def _left_over(count: int) -> int:
    """What a rule text's points or markers leave once replies or decided conditions are counted off, held
    within [-4, 8]: a long rule text or a long dialogue says no more past that."""
    return max(min(count, 8), -4)


def _read_without_nli(conditions, status: str) -> float:
    """The share of the conditions read as ``status`` whose reading rests on more than an NLI score."""
    deciding = [c for c in conditions if c.status == status]
    return sum(map(read_without_nli, deciding)) / len(deciding) if deciding else 0.0


def features(trace: Trace) -> dict[str, float]:
    """Every named feature the calibrators may read, from the trace alone (no model call)."""
    s = trace.signals
    q_terms = set(tokenize(trace.query.question))
    passages = trace.passages
    top = passages[0] if passages else None
    kept = [n for n in trace.nli if n.kept] or list(trace.nli)
    evidence_texts = [e.text for e in trace.evidence.sentences] if trace.evidence else []
    sentences = [sent.text for p in passages[:3] for sent in p.passage.sentences] or \
                [p.passage.text for p in passages[:3]]
    conditions = trace.variables.conditions
    best_score = top.score if top else 0.0
    close = [p for p in passages if best_score - p.score <= TOP_CLOSE]
    answers = answered(trace)
    yes_no = float(trace.claim.schema in ("polar", "statement"))
    personal = float(bool(FIRST_PERSON.search(trace.query.question)))
    same_document = tuple(p.passage for p in passages if top and p.passage.doc_id == top.passage.doc_id)
    bearing = personal * float(conditions_apply(trace.query.question, same_document))
    neutral_min = min((n.verdict.neutral for n in kept), default=1.0)
    entailment_max = max((n.claim.entailment for n in kept), default=0.0)
    dense_question = (1.0 - yes_no) * s.dense_top
    q_names = _names(trace.query.question)
    top_words = {w.lower() for p in passages[:3] for w in re.findall(r"[A-Za-z][\w'-]*", p.passage.text)}
    markers = len(CONDITION_MARKER.findall(top.passage.text)) if top else 0
    points = rule_points(top.passage.text) if top else 0
    established = min(sum(c.status == "established" for c in conditions), 6)
    scenario_words = math.log1p(len(trace.query.scenario.split()))
    # the rule's points that no condition decided accounts for, however it was decided
    points_undecided = bearing * _left_over(points - sum(c.status != "missing" for c in conditions))
    first_turn = float(not answers)  # no follow-up answered yet
    last = last_settled(trace)
    # the conditions after the one the last follow-up settled (all of them when it settled none)
    after_last = conditions[last + 1:] if last is not None else conditions
    open_now = still_open(conditions)
    unclear = [c for c in conditions if c.group == "unclear"]
    # a list of bare names under "if you get:" ("Pension Credit", "Income Support", …) names alternatives
    names_listed = bool(unclear) and all(_bare_name(c.text) for c in unclear)
    all_of = any(c.group == "all" for c in conditions)
    any_of = any(c.group == "any" for c in conditions) or names_listed
    last_yes = bool(answers) and answers[-1].startswith("yes")
    last_no = bool(answers) and answers[-1].startswith("no")
    return {
        # topic
        "dense_top": s.dense_top,
        # what the user said as a whole: a vague question ("Can I claim it?") whose scenario names the topic
        "dense_top_said": max((max(p.dense, p.dense_with_scenario or 0.0) for p in passages), default=0.0),
        "bm25_top_raw": math.log1p(max((p.bm25 for p in passages), default=0.0)),
        "coverage": s.coverage,
        "title_overlap": _overlap(q_terms, top.passage.title) if top else 0.0,
        # the question's names found in the top passages (a topic is its names more than its words)
        "names_found": (len(q_names & top_words) / len(q_names)) if q_names else 1.0,
        "has_names": float(bool(q_names)),
        "best_sentence_overlap": max((_overlap(q_terms, t) for t in sentences), default=0.0),
        "kg_matched": float(min(s.kg_matched, 3)),
        "question_terms": float(min(len(q_terms), 12)),
        # fact
        "sufficiency": s.sufficiency,
        "entailment_max": entailment_max,
        "contradiction_max": max((n.verdict.contradiction for n in kept), default=0.0),
        "neutral_min": neutral_min,
        # A statement about the world ("Receiving Party shall not …") is settled by a sentence that
        # entails or contradicts it; a wh-question's claim ("… is some date") is neutral to most
        # sentences even when one holds the answer, and a rule text says nothing either way about a
        # claim on the asker ("I can get it"). The same NLI score means different things for the
        # three, so each has its own feature.
        "personal": personal,
        "decided_statement": yes_no * (1.0 - personal) * (1.0 - neutral_min),
        "entailed_statement": yes_no * (1.0 - personal) * entailment_max,
        "decided_question": (1.0 - yes_no) * (1.0 - neutral_min),
        # How closely the best passage matches a wh-question, apart from a statement's or a yes/no claim's:
        # a passage that answers "When did the bridge open?" is usually the one most like it, while the
        # same standard hypotheses are asked of every contract, so a close match says little there (SQuAD
        # train raw AUROC 0.81 against 0.63 on ContractNLI train; cross-fitted training objective
        # 0.7592 -> 0.7631, every fold draw up)
        "dense_question": dense_question,
        # The same closeness once more where a sentence about the asked entity gives a value of the asked type: a
        # passage close to "How tall is …?" that gives no height is on the topic without stating the fact
        # (held-out AUROC SQuAD train 0.615 -> 0.650, train KB 0.887 -> 0.898; docs/methods.md)
        "typed_question": dense_question * s.answer_type_found,
        "evidence_coverage": s.evidence_coverage,
        "evidence_overlap": max((_overlap(q_terms, t) for t in evidence_texts), default=0.0),
        "answer_type_found": s.answer_type_found,
        "asked_found": asked_found(trace),
        "yes_no_claim": yes_no,
        "premise_supported": s.premise_supported,
        # conditions
        "n_conditions": float(min(len(conditions), 6)),
        "n_missing": float(min(s.n_missing, 6)),
        "n_established": float(established),
        "n_contradicted": float(min(s.n_contradicted, 3)),
        "incompleteness": s.incompleteness,
        "outcome_satisfied": float(s.condition_outcome == "satisfied"),
        "outcome_failed": float(s.condition_outcome == "failed"),
        # The same outcomes, weighed by the share of the conditions deciding them that were read from a reply,
        # arithmetic or the facts' own words rather than from an NLI score: on ShARC train, 11 % of the
        # utterances whose satisfied outcome rests on such readings alone still asked a follow-up, against 41 %
        # where NLI decided them (failed: 8 % against 33 %). (Cross-fitted: P(condition open)'s held-out AUROC
        # 0.841 -> 0.843, up on all five fold draws.)
        "satisfied_surely": float(s.condition_outcome == "satisfied") * _read_without_nli(conditions, "established"),
        "failed_surely": float(s.condition_outcome == "failed") * _read_without_nli(conditions, "contradicted"),
        "history_turns": float(min(len(answers), 6)),
        "history_yes": float(min(sum(a.startswith("yes") for a in answers), 6)),
        "history_no": float(min(sum(a.startswith("no") for a in answers), 6)),
        "scenario_words": scenario_words,
        # how the conditions combine: one "no" fails an all-of list, one "yes" settles an any-of list
        "all_group": float(all_of),
        "any_group": float(any_of),
        "unclear_group": float(bool(unclear) and not names_listed),
        "no_in_all_group": float(all_of and any(a.startswith("no") for a in answers)),
        "yes_in_any_group": float(any_of and any(a.startswith("yes") for a in answers)),
        "unasked": float(min(max(len(conditions) - len(answers), 0), 6)),
        "unaddressed": float(min(unaddressed(trace), 6)),
        "unsaid_share": unsaid_share(trace),
        # an unclear list with one item met and another not is decided under either reading (all of
        # them needed: failed; any one enough: met), though the reader cannot say which
        "unclear_decided": float({"established", "contradicted"} <= {c.status for c in conditions if c.group == "unclear"}),
        # read from the best passage's text itself, whatever the condition reader made of it; a
        # passage's conditions bear on a question about the asker ("Can I …", not "What does clause
        # 4 say?") and about what the passage's document is about ("Can my landlord evict me?" is
        # not about the insulation grant whose rules mention landlords)
        "condition_markers": bearing * min(markers, 8),
        "markers_unanswered": bearing * _left_over(markers - len(answers)),
        "points_unanswered": bearing * _left_over(points - len(answers)),
        # A scenario settles points as replies do: "I'm 72, I have lived in Calvera for ten years and our
        # household income is £12,000 a year" settles the Winter Fuel Payment's bullets with no follow-up
        # asked (ShARC train, cross-fitted: the training objective 0.7580 -> 0.7592, P(condition open)
        # held out 0.838 -> 0.840)
        "points_undecided": points_undecided,
        # The same read again on a first turn, when the scenario is all the user has said besides the
        # question: there the conditions it settles and what it leaves undecided are the whole story, while
        # later a dialogue's follow-ups walk the rule in its order (ShARC train, cross-fitted: objective
        # 0.7631 -> 0.7648, every fold draw up; P(condition open) held out 0.840 -> 0.845)
        "points_undecided_first_turn": first_turn * points_undecided,
        "established_first_turn": first_turn * established,
        # One item of a list that one item meets ("benefits including: … Carer's Allowance …", "the right to
        # return if they take: … 4 weeks or less of unpaid Parental Leave") established by the scenario before
        # any follow-up: the rule is decided whatever the other items say (ShARC train, cross-fitted: objective
        # 0.7758 -> 0.7766, every fold draw up; at any turn: 0.7759)
        "alternative_met_first_turn": first_turn * float(bool(met_alternatives(conditions))),
        "scenario_words_first_turn": first_turn * scenario_words,
        "last_answer_yes": float(last_yes),
        "last_answer_no": float(last_no),
        # A dialogue asks about a rule's conditions in their order and stops once the rule is decided:
        # where the last follow-up landed says what is left (ShARC train, grouped 5-fold: p_open's
        # held-out AUROC 0.818 -> 0.825 with these four)
        "last_follow_up_read": float(last is not None),
        # (This count and ``unaddressed`` leave out the other items of a list one item already meets: "I get
        # Pension Credit" settles "if you're getting: Pension Credit, Income Support, …". ShARC train and the train
        # KB, cross-fitted: objective 0.7649 / 0.7671 / 0.7537 -> 0.7661 / 0.7675 / 0.7546 over three fold draws)
        "missing_after_last": float(min(sum(c in open_now for c in after_last), 6)),
        "yes_with_more_after": float(last_yes and all_of) * min(len(after_last), 6),
        "last_reply_decides": float((last_yes and any_of) or (last_no and all_of)),
        # referents
        "ambiguity": s.ambiguity,
        **{f"amb_{k}": v for k, v in sorted(s.ambiguity_heuristics.items())},
        "competing_documents": float(min(len({p.passage.doc_id for p in close}), 4)),
        "referents": float(min(len(referents(trace.query.question, passages, trace.rivals)), 4)),
        "topic_spread": s.topic_spread,
        "score_gap": s.score_gap,
    }


@dataclass(frozen=True)
class Calibrator:
    """P(target) = σ(intercept + Σ coef_i · (x_i − mean_i) / scale_i), fitted on training data."""
    name: str
    question: str  # what the probability answers, in plain words
    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    trained_on: str = ""
    held_out_auroc: dict[str, float] | None = None  # per domain, grouped cross-validation
    # A conditional model: the calibrator it is conditional on, the side of it this model covers
    # (P(target | given) or P(target | not given)) and the probability on the other side. The signal is
    # their mixture (``chained``); ``probability`` is the conditional part alone.
    given: str = ""
    given_value: bool = True
    otherwise: float = 0.0
    # A model fitted only where another calibrator's target holds (P(fact stated) on questions whose topic the
    # knowledge base covers): that one's probability multiplies this one's before any ``given`` mixing, so the
    # signal is the chance of both, not of the target on the rows it was fitted on (``chained``).
    within: str = ""

    def contributions(self, values: Mapping[str, float]) -> dict[str, float]:
        """Each feature's push on the log-odds (positive raises the probability)."""
        return {f: c * (float(values.get(f, 0.0)) - m) / s
                for f, m, s, c in zip(self.features, self.mean, self.scale, self.coef)}

    def probability(self, values: Mapping[str, float]) -> float:
        z = self.intercept + sum(self.contributions(values).values())
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "question": self.question, "features": list(self.features),
                "mean": list(self.mean), "scale": list(self.scale), "coef": list(self.coef),
                "intercept": self.intercept, "trained_on": self.trained_on,
                "held_out_auroc": self.held_out_auroc or {},
                **({"given": self.given, "given_value": self.given_value, "otherwise": self.otherwise}
                   if self.given else {}), **({"within": self.within} if self.within else {})}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Calibrator":
        n = len(data["features"])
        if not (len(data["mean"]) == len(data["scale"]) == len(data["coef"]) == n):
            raise ValueError(f"calibrator {data.get('name')!r}: features, mean, scale and coef differ in length")
        return cls(name=data["name"], question=data.get("question", ""), features=tuple(data["features"]),
                   mean=tuple(map(float, data["mean"])), scale=tuple(map(float, data["scale"])),
                   coef=tuple(map(float, data["coef"])), intercept=float(data["intercept"]),
                   trained_on=data.get("trained_on", ""), held_out_auroc=dict(data.get("held_out_auroc") or {}),
                   given=data.get("given", ""), given_value=bool(data.get("given_value", True)),
                   otherwise=float(data.get("otherwise", 0.0)), within=data.get("within", ""))


@lru_cache(maxsize=8)
def load(path: str | Path = DEFAULT_FILE) -> dict[str, Calibrator]:
    """The calibrators of a JSON file ({"calibrators": [...]}) by name."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"signal calibrators {path} are missing: fit them with "
                                f"`python scripts/fit_signals.py`")
    data = json.loads(path.read_text(encoding="utf-8"))
    return {c["name"]: Calibrator.from_json(c) for c in data["calibrators"]}


def chained(values: Mapping[str, float], calibrators: Mapping[str, Calibrator]) -> dict[str, float]:
    """Every calibrator's probability; one fitted within another's target multiplied by that one's probability
    (P(fact stated) = P(topic covered) · P(fact stated | topic covered)), then a conditional one mixed over what
    it is conditional on: P = P(given) · P(target | given) + (1 − P(given)) · otherwise, or the same with the
    sides swapped."""
    out: dict[str, float] = {}

    def of(name: str, seen: tuple[str, ...] = ()) -> float:
        if name in seen:
            raise ValueError(f"calibrators {' -> '.join(seen + (name,))} are conditional on each other")
        if name not in calibrators:
            raise ValueError(f"calibrator {seen[-1]!r} is conditional on or within {name!r}, which the file lacks")
        if name not in out:
            c = calibrators[name]
            p = c.probability(values)
            if c.within:
                p *= of(c.within, seen + (name,))
            if c.given:
                on_side = of(c.given, seen + (name,))
                on_side = on_side if c.given_value else 1.0 - on_side
                p = on_side * p + (1.0 - on_side) * c.otherwise
            out[name] = p
        return out[name]
    for name in calibrators:
        of(name)
    return out


def probabilities(trace: Trace, calibrators: Mapping[str, Calibrator] | None = None) -> dict[str, float]:
    """Every calibrated probability of a trace."""
    calibrators = load() if calibrators is None else calibrators
    found = chained(features(trace), calibrators)
    return {name: found[name] for name in PROBABILITIES if name in found}


def with_probabilities(trace: Trace, calibrators: Mapping[str, Calibrator] | None = None) -> Trace:
    """The trace with its calibrated signals (re)computed: what the pipeline's last step does, and what
    lets re-fitted calibrators apply to cached traces without re-analysis."""
    values = features(trace)
    calibrators = load() if calibrators is None else calibrators
    probs = {name: round(p, 6) for name, p in chained(values, calibrators).items() if name in PROBABILITIES}
    n_described = len(described(trace.query.question, trace.passages, trace.query.scenario))
    bands = age_bands(trace.query, trace.claim.answer_type, trace.passages)
    signals = replace(trace.signals, n_referents=int(values["referents"]), follow_ups_answered=len(answered(trace)),
                      n_described=n_described, n_unknown_names=len(unknown_names(trace)),
                      n_rivalled_names=len(rivalled_names(trace)),
                      n_age_bands=len(bands.values) if bands else 0, age_told=int(told_age(trace.query)[0]),
                      statement=int(values["yes_no_claim"] and not values["personal"]),
                      yes_no=int(values["yes_no_claim"]), has_scenario=int(values["scenario_words"] > 0),
                      conditions_met=int(all_required_met(trace.variables.conditions)), **probs)
    return replace(trace, signals=signals)
