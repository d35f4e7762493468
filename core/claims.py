"""Question → claim, the hypothesis that NLI checks passages against (seed 001).

Seed 001 found three recurring schemas when questions are rewritten as claims:
existential ("There exists a person who …"), comparative ("One of X or Y is …")
and conjunctive ("X and Y are both …"; decomposed into one sub-claim per
entity). Yes/no questions become the plain statement ("I can get X."), and a
statement (a ContractNLI hypothesis) is used as it is. Rule-based on the spaCy
parse; deterministic.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from core import models, voice
from core.text import spelled_contractions, split_sentences
from core.types import Claim

WH_WORDS = {"who", "whom", "whose", "what", "which", "when", "where", "why", "how"}
# How a wh-word is phrased in the existential claim, and the answer's entity type.
WH_TARGET = {
    "who": ("a person who", "PERSON"), "whom": ("a person whom", "PERSON"),
    "whose": ("a person whose", "PERSON"), "when": ("a time when", "DATE"),
    "where": ("a place where", "PLACE"), "why": ("a reason why", ""),
    "how much": ("an amount such that", "MONEY"), "how many": ("a number such that", "NUMBER"),
    "how long": ("a duration such that", "DURATION"), "how old": ("an age such that", "NUMBER"),
    "how measure": ("a measure such that", "MEASURE"), "how often": ("a frequency with which", ""),
    "how": ("a way in which", ""), "what": ("something that", ""), "which": ("something that", ""),
}
# The relative words a target ends in, which a fronted preposition replaces ("a duration such that" →
# "a duration for which", "a person who" → "a person to whom").
RELATIVE_TAIL = re.compile(r"\s+(?:such that|in which|that|who|whom|when|where|why)$")
# "How soon / how quickly …?" asks what "How long …?" does.
HOW_LONG = {"soon": "long", "quickly": "long"}
# Copular questions ("How much is X?", "Where is X?") become "There exists <target> X".
COPULA_TARGET = {"how much": "an amount for", "how many": "a number for", "how long": "a duration for",
                 "how old": "an age for", "when": "a date for", "where": "a location for",
                 "who": "information about who is", "what": "information about",
                 "which": "information about", "why": "a reason for"}
# "How tall is X?" asks for a measurement, whose noun names it: "There exists a height for X."
MEASURE_NOUNS = {"tall": "height", "high": "height", "long": "length", "wide": "width", "deep": "depth",
                 "far": "distance", "big": "size", "large": "size", "heavy": "weight", "old": "age"}
# Nouns after "what/which" that fix the answer type.
NOUN_TYPE = {
    "year": "DATE", "date": "DATE", "day": "DATE", "month": "DATE", "deadline": "DATE", "century": "DATE",
    "town": "PLACE", "city": "PLACE", "country": "PLACE", "river": "PLACE", "place": "PLACE",
    "village": "PLACE", "region": "PLACE", "county": "PLACE",
    "amount": "MONEY", "cost": "MONEY", "price": "MONEY", "fee": "MONEY",
    "rate": "RATE",  # an hourly rate is money, an interest or VAT rate a percentage
    "number": "NUMBER", "age": "NUMBER", "population": "NUMBER", "percentage": "NUMBER", "proportion": "NUMBER",
    "fraction": "NUMBER", "duration": "DURATION",
    "person": "PERSON", "engineer": "PERSON", "architect": "PERSON", "founder": "PERSON",
    "author": "PERSON", "designer": "PERSON", "captain": "PERSON", "composer": "PERSON",
}
# What is measured in time: "how much notice" asks for a length of time ("30 days' written notice").
TIME_NOUNS = frozenset({"time", "notice", "warning"})
# The auxiliaries after an object wh-word ("What did …", "What can …"), not a copula's ("What is …").
DO_OR_MODAL = frozenset("do does did can could will would shall should may might must".split())
# Verbs whose object is a sum of money: "What did the first iPod cost?", "What does the Recipient have to pay?".
PRICE_VERBS = frozenset("cost costs costed pay pays paid spend spends spent charge charges charged earn earns earned".split())
# The verbs that may come before it ("What will I need to pay?", "What will I get paid?"), and the dependency
# labels of a verb that heads a clause of its own ("What do I need to do to get paid?" asks what to do).
LEADING_TO_A_PRICE = frozenset({"have", "need", "want", "expect", "get", "be", "go"})
CLAUSE_VERB_DEPS = frozenset({"ROOT", "xcomp", "ccomp", "advcl", "conj"})
# Units of time: "how many years" asks for a duration ("7 years"), not a date.
TIME_UNITS = frozenset("second minute hour day night week fortnight month year decade century".split())

# Dependency labels of a clause's subject: "there" in "is there a fee" is an expletive.
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "expl", "csubj"})
# "How much <noun>" asks for money only when the noun is money; "How much storage" asks for a measure
# ("30GB"), "How much time" for a duration. A name after it is a scheme ("How much Child Benefit").
MONEY_NOUNS = frozenset({"money", "cash", "tax", "rent", "salary", "pay", "wage", "interest", "funding", "income",
                         "compensation", "grant", "allowance", "benefit", "pension", "fine", "penalty", "debt",
                         "deposit", "charge", "credit", "loan", "support", "help", "budget", "revenue", "profit",
                         "bonus", "payment", "refund", "discount", "award", "bursary", "subsidy"})


_WH = "|".join(sorted(WH_WORDS))
# The wh-phrases that can be a clause's subject ("Who can apply?", "How many teams were selected?").
SUBJECT_WH = frozenset({"who", "what", "which", "whose", "how many", "how much"})
# The auxiliaries an inverted question opens with ("Can I …", "Is there …").
AUXILIARIES = r"am|are|is|was|were|do|does|did|can|could|will|would|shall|should|may|might|must|have|has"
# An auxiliary before its subject: "can I", "is the", "don't you".
_INVERTED = rf"(?:{AUXILIARIES})(?:n't)?\s+(?:i|you|we|my|your|our|the|this|that|it|there|he|she|they)\b"
# A sentence that asks, by its word order, whatever its punctuation: "Can I get …", "How much is the …".
QUESTION_FORM = re.compile(rf"^\W*(?:(?:how|what|when|where|which|who|why)(?:\s+[\w'-]+)?\s+)?{_INVERTED}", re.I)
# Words that open a subordinate clause: its scene stays in the claim ("… once the NDA is terminated").
SUBORDINATE = frozenset("after before once when whenever if since until unless while during in on at for by "
                        "from under within".split())
# A question after a clause that sets its scene ("Once the NDA is terminated, how long do sections 1-6 keep
# applying?", "When the agreement ends, can we keep a record copy?", "If it gets a subpoena, within how many
# days must it tell the others?") or after a remark ("I'm reading about X - what year was she born?").
# The prepositions a wh-phrase can carry to the front with it ("…, within how many days must it tell the others?").
PIED_PIPING = r"in|on|at|by|for|from|to|with|within|under|after|before|since|until|during|of|about|into|over|through"
LEADING_CLAUSE = re.compile(rf"^(?P<lead>[^?]+?)(?P<sep>,|\s[-–—]\s)\s*"
                            rf"(?P<question>(?:(?:{PIED_PIPING})\s+(?:{_WH})|{_WH}|{AUXILIARIES})\b[^?]*\?)\s*$",
                            re.IGNORECASE)
# A yes/no question after what the user states in the same sentence ("I'm 62, can I get the Winter Fuel
# Payment?", "been off sick for 5 days now, do i get sick pay?"): the statement is said, not asked.
STATED_LEAD = re.compile(rf"^(?P<lead>[^?]+?)(?:,|;|\s[-–—]\s)\s*(?:(?:so|and|but)\s+)?(?P<question>{_INVERTED}[^?]*\?)\s*$",
                         re.I)
# What makes a lead a clause of its own (a statement) rather than the question's topic ("The Harlow Bridge, is
# it open on Sundays?"): a form of "be", "have" or "do", or a contracted one.
CLAUSE_VERB = re.compile(r"\b(?:am|is|are|was|were|been|have|has|had|do|does|did)\b|\w['’](?:m|s|re|ve)\b", re.I)
_FIRST_PERSON = r"(?:i|i'm|i've|we|we're|my|our)\b"
FIRST_PERSON_LEAD = re.compile(rf"^{_FIRST_PERSON}", re.I)
# … and a wh-question after what the asker states of themselves ("we're a small firm taking on a 17 year old
# apprentice, how much grant do we get?"); a lead about anything else names what the question is about
# ("Harlow's old swing bridge, when did it open?") and stays with it, as does a goal the question asks how to
# reach ("I want to vote by post, what do I do?").
STATED_LEAD_WH = re.compile(rf"^(?P<lead>{_FIRST_PERSON}[^?]+?)(?:,|;)\s*(?:(?:so|and|but)\s+)?"
                            rf"(?P<question>(?:{_WH})\b[^?]*\?)\s*$", re.I)
GOAL = re.compile(r"\b(?:want|wants|need|needs|like|wish|hope|plan|planning|trying)\s+to\b", re.I)
# … and the same typed with no comma, where only the asker's own words can lead ("im 70 can i get it").
STATED_LEAD_UNMARKED = re.compile(rf"^(?P<lead>{_FIRST_PERSON}[^?,;]*?)\s+(?P<question>(?:{AUXILIARIES})"
                                  r"(?:n't)?\s+(?:i|we)\b[^?]*\?)\s*$", re.I)
# Words that open a phrase setting a question's scene besides a subordinating word ("Apart from the burial
# itself, how much …?", "As of April 2014, how many …?", "Regardless of their affiliations, who …?").
ADVERBIAL_LEAD = frozenset("apart aside besides according as because regardless despite except excluding including "
                           "other given unlike instead beyond without with during throughout among between".split())
REPLY_WORDS = 3  # a lead this short before a comma is a reply ("Yes", "Sounds good", "OK then"), not a statement
# Words that only lead into a question ("So when does it start?", "Roughly how much of the sunlight …?",
# "OK, what's the fee?", "So can I get it?", "and once I send my invoice, how soon …?"): the question
# starts after them. A hedge ("roughly", "now") is dropped only before a wh-word: "Now is the time to
# apply?" starts with its subject.
_DISCOURSE = r"so|and|but|ok|okay|well|right|hi|hello"
_HEDGE = r"roughly|approximately|about|around|exactly|precisely|just|also|then|now|please"
LEAD_IN = re.compile(rf"^(?:(?:(?:{_DISCOURSE}|{_HEDGE})\b,?\s+){{1,3}}(?=(?:{_WH})\b)"
                     rf"|(?:(?:{_DISCOURSE})\b,?\s+){{1,2}}(?=(?:{AUXILIARIES}|{'|'.join(sorted(SUBORDINATE))})\b))",
                     re.IGNORECASE)


# A wh-word's contracted auxiliary ("When's the deadline?", "Who's got the key?", "Where'd it go?"),
# which the parser reads as a possessive: spelled out, as "has" before a participle, "would" before
# the verbs it usually goes with.
WH_CONTRACTION = re.compile(rf"\b(?P<wh>{_WH})['’](?P<aux>s|re|d)\b(?=(?P<next>\s+\w+)?)", re.IGNORECASE)
_HAS_BEFORE = frozenset({"been", "got", "gotten", "had", "done"})
_WOULD_BEFORE = frozenset({"be", "have", "like", "want", "rather", "need"})


def _spelled_out(m: re.Match) -> str:
    after = (m.group("next") or "").strip().lower()
    aux = m.group("aux").lower()
    if aux == "s":
        return f"{m.group('wh')} {'has' if after in _HAS_BEFORE else 'is'}"
    if aux == "re":
        return f"{m.group('wh')} are"
    return f"{m.group('wh')} {'would' if after in _WOULD_BEFORE else 'did'}"


# A yes/no question opened by a negative auxiliary ("Can't I claim it?", "Isn't the fee £20?") asks
# whether the positive holds, as the asker expects: its claim is the positive statement.
NEGATIVE_LEAD = re.compile(r"^(?P<aux>ca|wo|sha|do|does|did|is|are|was|were|could|would|should|have|has|had|must|need)"
                           r"n['’]t\b", re.IGNORECASE)
_NEGATIVE_STEMS = {"ca": "can", "wo": "will", "sha": "shall"}
NEGATIONS = frozenset({"not", "n't"})


def _positive(m: re.Match) -> str:
    aux = m.group("aux")
    full = _NEGATIVE_STEMS.get(aux.lower(), aux.lower())
    return full.capitalize() if aux[0].isupper() else full


def stated_lead(sentence: str) -> tuple[str, str] | None:
    """(what the user states, the question) of a sentence that states something before it asks: "My mum
    is 84, can she get a bus pass?" → ("My mum is 84", "can she get a bus pass?"). None for a
    scene the question is asked in ("If I move to Spain, can I …?"), a topic with no verb of its own
    ("The Harlow Bridge, is it …?") or a short reply ("Sounds good, can I apply?")."""
    m = STATED_LEAD.match(sentence.strip()) or STATED_LEAD_UNMARKED.match(sentence.strip())
    if m is None:
        m = STATED_LEAD_WH.match(sentence.strip())
        m = None if m is None or GOAL.search(m.group("lead")) else m
    if m is None:
        return None
    lead = m.group("lead").strip()
    first = lead.split()[0].lower()
    if first in SUBORDINATE or first in ADVERBIAL_LEAD or len(split_sentences(lead, typed=True)) > 1:
        return None  # a scene, or a question begun in an earlier sentence ("… our NDA. What are we …?")
    verb = CLAUSE_VERB.search(lead) or any(voice.known_verb(w) for w in re.findall(r"[a-z]+", lead))
    if not verb or (len(lead.split()) <= REPLY_WORDS and not FIRST_PERSON_LEAD.match(lead)):
        return None
    return lead, m.group("question")


def asks(sentence: str) -> bool:
    """Whether a sentence asks by its words, whatever its punctuation: a question's word order ("can i get
    it") or a wh-word first ("who designed the harlow bridge")."""
    words = sentence.split()
    return bool(words) and (QUESTION_FORM.match(sentence) is not None or words[0].lower() in WH_WORDS)


def typed_question(text: str) -> str:
    """The question of a text typed without a question mark: its last sentence in a question's word order or
    opening with a wh-word ("im 67 and ive lived in calvera my whole life. can i get the bus pass"), given
    its "?"; the text as it is when none asks (a statement to check)."""
    if "?" in text:
        return text
    for sentence in reversed([s.text.rstrip(" .!") for s in split_sentences(text, typed=True)]):
        if asks(sentence) or stated_lead(sentence + "?") is not None:
            return sentence + "?"
    return text


def wh_question_first(text: str) -> str:
    """The question with its wh-part first: words that only lead into a question are dropped, a
    negative auxiliary that opens it asks about the positive, a scene-setting clause moves after it,
    a remark before a dash is dropped (the claim is about what is asked; the remark stays in the
    question)."""
    text = NEGATIVE_LEAD.sub(_positive, WH_CONTRACTION.sub(_spelled_out, LEAD_IN.sub("", text)))
    m = LEADING_CLAUSE.match(text)
    if not m:
        return text
    lead, question = m.group("lead").strip(), m.group("question")
    question = question[0].upper() + question[1:]
    if m.group("sep") != ",":
        return question
    first = lead.split()[0].lower()
    # a participle opens a scene too ("Going on the lighthouse tour this summer, how many steps …?")
    participle = first.endswith("ing") and voice.known_verb(first)
    if first not in SUBORDINATE and first not in ADVERBIAL_LEAD and not participle:
        topic = _named_topic(lead, question)
        if topic is not None:
            return topic
        # "Yes, what is the fee?", "Sounds good, can I apply?": a reply, no scene to keep; a longer lead
        # stays with the question
        return question if len(lead.split()) <= REPLY_WORDS else text
    return f"{question[:-1].rstrip()} {lead[0].lower()}{lead[1:]}?"


# A lead that names what the question's pronoun stands for: a noun phrase, opened by a determiner or a
# possessive or holding a name ("The Harlow Bridge, is it open on Sundays?", "Harlow's old swing bridge, when
# did it open?"), with no verb of its own. A name is capitalised, so only the determiners ignore case; the
# asker's own "my" or "our" opens a statement (``FIRST_PERSON_LEAD``).
DETERMINERS = ("the", "this", "that", "these", "those")
TOPIC_OPENING = re.compile(rf"^(?i:{'|'.join(DETERMINERS)}|your|his|her|their)\b|^[A-Z]\w*['’]s\b"
                           r"|^\S+\s+(?:\S+\s+)*?[A-Z]")
THIRD_PERSON = re.compile(r"\b(?:it|they|them|he|him|she|her)\b", re.I)


def _named_topic(lead: str, question: str) -> str | None:
    """The question with the lead in place of its first third-person pronoun, or None when the lead names
    no topic (a verb of its own, a reply) or the question has no such pronoun."""
    words = re.findall(r"[A-Za-z]+(?:['’][a-z]+)?", lead)
    plain_words = [re.sub(r"['’]s$", "", w) for w in words]
    if not TOPIC_OPENING.match(lead) or any(voice.known_verb(w.lower()) for w in plain_words if w[:1].islower()) \
            or CLAUSE_VERB.search(re.sub(r"['’]s\b", "", lead)) or FIRST_PERSON_LEAD.match(lead):
        return None
    pronoun = THIRD_PERSON.search(question)
    if pronoun is None:
        return None
    topic = lead[0].lower() + lead[1:] if lead.split()[0].lower() in DETERMINERS else lead
    return f"{question[:pronoun.start()]}{topic}{question[pronoun.end():]}"


# A yes/no question that names its own alternative as a clause after "or" ("Was there a festival in 2020 or did
# it get called off?", "Is it open on Sundays or not?", "Do I need to apply or is it automatic?"): the first
# alternative's answer answers it, and as one claim the two read as no sentence at all ("There was a festival
# in 2020 or did it get called off."), which NLI finds neutral to the sentence that settles it.
ALTERNATIVE_CLAUSE = re.compile(rf",?\s+or\s+(?:not\b|(?:{AUXILIARIES}|had|need)(?:n['’]t)?\s+\w)[^?]*(?=\?\s*$)", re.I)
POLAR_OPENING = re.compile(rf"^\W*(?:{AUXILIARIES}|had|need)(?:n['’]t)?\b", re.I)
MIN_ALTERNATIVE_WORDS = 3  # "Do I or does my partner need to apply?" offers no clause before its "or"


def first_alternative(text: str) -> str:
    """The question ending at its first alternative, where its last sentence is a yes/no question whose
    second alternative is a clause of its own; the text as it is otherwise ("Is it held in July or August?"
    offers values, and "Does it matter whether I apply or not?" asks about both)."""
    start = max((m.end() for m in re.finditer(r"[.!?]\s+(?=\S)", text)), default=0)
    question = text[start:]
    m = ALTERNATIVE_CLAUSE.search(question)
    if m is None or not POLAR_OPENING.match(question) or "whether" in question[:m.start()].lower() \
            or len(question[:m.start()].split()) < MIN_ALTERNATIVE_WORDS:
        return text
    return text[:start] + question[:m.start()] + question[m.end():]


# The pronouns of a question that stand for what the user just stated ("My dad's got the older person's bus
# pass, can he use it on the ferries?"): a person is the statement's own subject named by the asker's
# possessive ("my dad") or as a person; a thing is the one singular noun phrase left, or failing that the
# one object. "They" is left as it is (a plural, a firm, a person of unsaid gender).
PERSON_PRONOUNS = frozenset({"he", "she", "him", "her", "his"})
OWNER_DETERMINERS = frozenset({"my", "our", "your"})


def _lead_referents(lead: str, asks_of_a_person: bool) -> tuple[str | None, str | None]:
    """(the person, the thing) a stated lead names for the question's pronouns, each None unless one is clear;
    ``asks_of_a_person``: the question has a pronoun for a person, so the lead's person is not the thing
    ("My car is 12 years old, can I get it insured?" has none)."""
    chunks = [c for c in models.parse([lead])[0].noun_chunks if c.root.pos_ in ("NOUN", "PROPN")]
    people = [c for c in chunks if c[0].lower_ in OWNER_DETERMINERS or c.root.ent_type_ == "PERSON"]
    person = people[0] if len(people) == 1 and people[0].root.dep_ in SUBJECT_DEPS and asks_of_a_person else None
    things = [c for c in chunks if c.root.tag_ in ("NN", "NNP") and c.root.ent_type_ != "PERSON"
              and not (asks_of_a_person and c in people)]
    objects = [c for c in things if c.root.dep_ == "dobj"]
    thing = things[0] if len(things) == 1 else objects[0] if len(objects) == 1 else None

    def phrase(chunk) -> str | None:
        if chunk is None:
            return None
        words = chunk.text.split()
        first = words[0].lower()
        words[0] = "the" if first in ("a", "an") else first if first in OWNER_DETERMINERS | set(DETERMINERS) else words[0]
        return " ".join(words)
    return phrase(person), phrase(thing)


def with_lead_referents(lead: str, question: str) -> str:
    """``question`` with its first pronoun for a person and its first "it" put back as what ``lead`` stated
    them to be: "can he use it on the ferries?" after "my dad's got the bus pass" → "can my dad use the bus
    pass on the ferries?". A claim of pronouns leaves NLI to guess what they stand for."""
    tokens = models.parse([question])[0]
    person, thing = _lead_referents(spelled_contractions(lead), any(t.lower_ in PERSON_PRONOUNS for t in tokens))
    out = []
    for token in tokens:
        text = token.text
        if person and token.lower_ in PERSON_PRONOUNS:
            text = f"{person}'s" if token.dep_ == "poss" or token.lower_ == "his" else person
            person = None  # the first pronoun only
        elif thing and token.lower_ == "it":
            text, thing = thing, None
        out.append(text + token.whitespace_)
    return "".join(out)


# A question that asks only whether what the user has just said holds ("my boss says he can carry on paying me
# the apprentice rate. is that right?", "Our engineers want to open up one of the prototypes - is that allowed
# under the NDA?"). As a claim, "That is right." names nothing NLI could find in a passage; the claim is what
# was said, and a wish asked about as a permission is claimed as one ("Our engineers may open up one of the
# prototypes under the NDA."). What follows the verdict word may only place it ("under the NDA"); "Is it true
# that …?" states its own claim.
ENDORSEMENT = re.compile(r"^\W*(?:is|was|would|will)\s+(?P<referent>that|this|it)\s+(?:be\s+)?"
                         r"(?:(?P<permission>allowed|permitted|ok|okay|legal|lawful|fine|acceptable)|right|true|correct)\b"
                         r"(?P<tail>(?:\s+(?:under|by|in|for|with|within|according to|at|on|from)\b[^?]*)?)\s*\?\s*$", re.I)
REPORTED = re.compile(r"^(?:(?P<who>.+?)\s+(?:says?|said|tells? me|told me|reckons?|thinks?)|(?:i|we)(?:\s+(?:was|were|have been)|"
                      r"['’]ve been)\s+told)\s+(?:that\s+)?(?P<clause>.+)$", re.I)
WISH = re.compile(r"^(?P<who>.+?)(?:\s+(?:wants?|wanted|would like|needs?|plans?|intends?|hopes?|(?:am|are|is) planning)|['’]d like)"
                  r"\s+to\s+(?P<act>.+)$", re.I)
PRONOUN = re.compile(r"^(?:he|she|they|it|i|we|you)$", re.I)
# "my boss says he can …": "he" is the boss (not after "he says"); "they" only before a modal, which agrees with
# any subject ("the school says they do not …" would not)
SAID_BY_THEM = re.compile(r"^(?:he|she|they(?=\s+(?:can|could|may|might|must|will|would|should|shall)\b))\b", re.I)


def endorsed_claim(text: str) -> str | None:
    """What a question asking whether the user's own statement holds claims (``ENDORSEMENT``): the reported
    clause of "X says …", the wish of "X wants to …" as a permission, or the statement itself; None for any
    other question. The statement is the lead of the question's sentence or the sentence before it."""
    sentences = [s.text.strip() for s in split_sentences(text, typed=True)]
    if not sentences:
        return None
    stated = stated_lead(sentences[-1])
    if stated is not None:
        statement, question = stated
    elif len(sentences) > 1:
        statement, question = sentences[-2].rstrip(" .!;:"), sentences[-1]
    else:
        return None
    m = ENDORSEMENT.match(question)
    if m is None:
        return None
    tail = m.group("tail").rstrip()
    reported, wish = REPORTED.match(statement), WISH.match(statement)
    if reported is not None:
        clause = reported.group("clause")
        who = reported.group("who")
        pronoun = SAID_BY_THEM.match(clause)
        if who and pronoun and not PRONOUN.match(who):
            clause = who + clause[pronoun.end():]
        return clause + tail
    if wish is not None and m.group("permission"):
        return f"{wish.group('who')} may {wish.group('act')}{tail}"
    return statement + tail if m.group("referent").lower() != "it" else None


@dataclass(frozen=True)
class ClaimBuilder:
    """Build the claim (and sub-claims) for a question; stateless, so one instance serves all."""

    def run(self, question: str) -> Claim:
        text = " ".join(spelled_contractions(question).split())
        if not text:
            raise ValueError("the question is empty")
        text = typed_question(text)
        endorsed = endorsed_claim(text)
        if endorsed is not None:  # "My boss says he can pay me the apprentice rate. Is that right?"
            return Claim(text=_sentence(endorsed), schema="polar")
        stated = stated_lead(text)
        if stated is not None:  # "My mum is 84, can she get a bus pass?": the statement is a fact, not asked
            question = with_lead_referents(*stated)
            text = question[0].upper() + question[1:]
        text = first_alternative(wh_question_first(text))
        doc = models.parse([text])[0]
        questions = [s for s in doc.sents if s.text.rstrip().endswith("?")]
        if len(list(doc.sents)) > 1 and questions and not _cut_short(doc, questions[-1]):
            # "Can I get X? I am 70." — the claim comes from the question sentence
            doc = questions[-1].as_doc()
            text = doc.text
        tokens = [t for t in doc if not t.is_space]
        first = tokens[0].lower_
        fronted_prep = len(tokens) > 2 and tokens[0].pos_ == "ADP" and tokens[1].lower_ in WH_WORDS
        is_question = text.endswith("?") or first in WH_WORDS or tokens[0].pos_ == "AUX" or fronted_prep
        if not is_question:
            return Claim(text=_sentence(text), schema="statement")
        comparative = _comparative(doc)
        if comparative:
            return comparative
        if first in WH_WORDS:
            return _wh_claim(tokens)
        if fronted_prep:
            return _wh_claim(tokens[1:], preposition=tokens[0].lower_)
        if tokens[0].pos_ != "AUX":
            late = _late_wh(tokens)
            if late is not None:
                k, fronted = late
                if fronted:  # "In 1713 who did the Qing emperor grant a title to?": the scene goes last
                    return self.run(f"{_join(tokens[k:])} {tokens[0].text[:1].lower()}{_join(tokens[:k])[1:]}?")
                return _in_situ_claim(tokens, k)
        return _conjunctive(tokens) or Claim(text=_sentence(_declarative(tokens)), schema="polar")


def _cut_short(doc, sentence) -> bool:
    """Whether the parser's last question "sentence" is only the end of one: the end of a title cut at its
    colon ("What category of game is Legend of Zelda: | Twilight Princess?") or after an abbreviation
    ("What does Chopin's Op. 63 | No. 3 have that is rare?"), which asks nothing by itself though the text
    opened as a question."""
    words = [t for t in sentence if not t.is_space and not t.is_punct]
    if not words or words[0].pos_ == "AUX" or any(t.lower_ in WH_WORDS for t in words):
        return False
    before = doc[:sentence.start].text.rstrip()
    return before.endswith(":") or not words[0].text[:1].isupper() or doc[0].lower_ in WH_WORDS


# What an asked-for phrase left in place becomes in the claim ("Beyoncé's documentary was called what?" →
# "… was called something."); a wh-word with a noun phrase becomes "some" and the phrase.
IN_SITU = {"who": "someone", "whom": "someone", "what": "something", "which": "something", "when": "at some time",
           "where": "somewhere", "why": "for some reason", "how long": "for some time", "how old": "some age",
           "how many": "some number", "how much": "some amount"}
IN_SITU_HOW = frozenset({"many", "much", "long", "old"})  # "how" + these asks for an amount, a length, an age
# Words after which a wh-word opens a relative clause, not a question ("the singer who won …").
_RELATIVE_AFTER = frozenset({"NOUN", "PROPN", "PRON"})
# What may open the scene before a wh-question that follows without a comma ("In 1713 who did …?").
_SCENE_POS = frozenset({"ADP", "ADV", "SCONJ", "NUM"})


def _wh_span(tokens, k: int) -> tuple[str, int]:
    """The wh-phrase at ``k`` (its wh, as ``WH_TARGET`` names it) and the position after it."""
    wh, end = tokens[k].lower_, k + 1
    if wh == "how":
        if end < len(tokens) and tokens[end].lower_ in IN_SITU_HOW:
            wh, end = f"how {tokens[end].lower_}", end + 1
        else:
            return "", end
    if wh in ("what", "which", "whose", "how many", "how much"):
        head, phrase_end = _wh_noun_phrase(tokens, end)
        if head is not None:
            end = phrase_end
    return wh, end



def _late_wh(tokens) -> tuple[int, bool] | None:
    """Where a question that does not open with its wh-word asks it: (position, whether a question
    follows it in question order after a scene — "In 1713 who did …?" — rather than leaving it in
    place — "Beyoncé's documentary was called what?"). None for a wh-word that opens a relative or an
    embedded clause ("the singer who won …", "I wonder what the fee is"), or where there is none."""
    for k in range(1, len(tokens)):
        t = tokens[k]
        if t.lower_ not in WH_WORDS or t.tag_ not in ("WDT", "WP", "WP$", "WRB"):
            continue
        last = all(r.is_punct for r in tokens[k + 1:])
        if tokens[k - 1].pos_ in _RELATIVE_AFTER and t.lower_ not in ("what", "how") and not last:
            # a relative clause; "what" and "how" open none after a noun ("gave the film how many stars?"),
            # and none opens with nothing after it ("Chopin gave a yearly performance where?")
            continue
        wh, end = _wh_span(tokens, k)
        if not wh:
            return None
        rest = [r for r in tokens[end:] if not r.is_punct]
        if not rest or not any(r.dep_ in SUBJECT_DEPS for r in rest):
            return k, False
        if rest[0].pos_ in ("AUX", "VERB") and tokens[0].pos_ in _SCENE_POS:
            return k, True
        return None
    return None


def _in_situ_claim(tokens, k: int) -> Claim:
    """The existential claim of a question that leaves its wh-phrase in place: the phrase becomes "some"
    ("Daniel Craig stars as Blofeld in what 2015 film?" → "Daniel Craig stars as Blofeld in some 2015
    film."); the answer's type is what the phrase would ask at the front."""
    wh, end = _wh_span(tokens, k)
    probe = _wh_claim(tokens[k:])
    noun = _join(tokens[k + len(wh.split()):end])
    if noun:
        phrase = {"how many": f"some number of {noun}", "how much": f"some amount of {noun}",
                  "whose": f"someone's {noun}"}.get(wh, f"some {noun}")
    else:
        phrase = IN_SITU[wh]
    text = " ".join(part for part in (_join(tokens[:k]), phrase, _join(tokens[end:])) if part)
    return Claim(text=_sentence(text), schema="existential", wh=probe.wh, answer_type=probe.answer_type)


def _wh_claim(tokens, preposition: str = "") -> Claim:
    """Seed 001's existential schema: "There exists a person who designed the bridge."."""
    wh, start = tokens[0].lower_, 1
    measure = None if preposition else _measure(tokens)  # "For how long is it valid?" asks a duration
    if measure:
        return measure
    if wh == "how" and len(tokens) > 1 and tokens[1].lower_ in ("much", "many", "long", "old", "soon", "quickly", "often"):
        wh, start = f"how {HOW_LONG.get(tokens[1].lower_, tokens[1].lower_)}", 2
    elif wh == "how" and len(tokens) > 3 and tokens[1].lower_ in ("big", "large") and tokens[2].lower_ in ("a", "an"):
        wh, start = "how much", 3  # "How big a bonus will the Treasury add?" asks how much bonus
    elif wh == "how" and len(tokens) > 2 and tokens[1].lower_ == "far" and tokens[2].lower_ in ("ahead", "back", "in"):
        # "How far ahead can I claim?", "How far back can a claim be backdated?": a length of time
        wh, start = "how long", 3 + (tokens[2].lower_ == "in" and len(tokens) > 3 and tokens[3].lower_ == "advance")
    elif wh == "how" and len(tokens) > 2 and tokens[1].lower_ == "far":
        wh, start = "how measure", 2  # "How far did the rupture travel?": a distance
    elif wh == "how" and len(tokens) > 2 and tokens[1].lower_ == "come":
        wh, start = "why", 2  # "How come the fee is not refunded?": a reason, in statement order
    target, answer_type = WH_TARGET[wh]
    if wh == "how" and _asks_a_procedure(tokens):
        answer_type = "PROCEDURE"
    noun, plural = "", False
    head, end = _wh_noun_phrase(tokens, start) if wh in ("what", "which", "whose", "how many", "how much") else (None, start)
    if head is not None and wh in ("how many", "how much") and end < len(tokens) and tokens[end].tag_ == "POS":
        owned_head, owned_end = _wh_noun_phrase(tokens, end + 1)  # "how much | jobseeker's | allowance"
        head, end = (owned_head, owned_end) if owned_head is not None else (head, end)
    if head is not None:
        noun = _join(tokens[start:end])
        lemma = tokens[head].lemma_.lower()
        if wh == "how many":  # a count, whatever is counted ("how many cities"), or a length of time
            answer_type = "DURATION" if lemma in TIME_UNITS else "NUMBER"
        else:
            answer_type = _noun_type(tokens, head, answer_type)
        if wh == "how much" and tokens[head].pos_ == "NOUN" and lemma not in NOUN_TYPE and lemma not in MONEY_NOUNS:
            answer_type = "DURATION" if lemma in TIME_NOUNS else "MEASURE"
        start = end
        plural = tokens[head].tag_ in ("NNS", "NNPS") and wh in ("what", "which")  # "Which documents …"
        target = {"how many": f"a number of {noun} that", "how much": f"an amount of {noun} that",
                  "whose": f"a person whose {noun}"}.get(wh, f"{noun} that" if plural else f"{voice.indefinite(noun)} {noun} that")
        if wh in ("what", "which") and start < len(tokens) and tokens[start].tag_ == "POS":
            # "Which country's law applies …?" asks for a country: "… a country whose law applies …"
            owned_head, owned_end = _wh_noun_phrase(tokens, start + 1)
            if owned_head is not None:
                owner = target.removesuffix(" that")
                target, start = f"{owner} whose {_join(tokens[start + 1:owned_end])}", owned_end
    elif wh == "which" and end > start:  # "Which of the parties may terminate …?"
        noun, start = _join(tokens[start:end]), end
        target = f"one {noun} that"
    elif wh in ("how much", "how many") and end > start and tokens[start].lower_ == "of":
        # "How much of the sunlight hitting the atmosphere is reflected?": a share ("about 30%"), not money
        noun, start, answer_type = _join(tokens[start:end]), end, "NUMBER"
        target = f"{'an amount' if wh == 'how much' else 'a number'} {noun} that"
    if wh == "what" and head is None and _asks_a_price(tokens):
        answer_type = "MONEY"
    if preposition and " whose " in target:  # "In which country's capital …": "a country in whose capital"
        owner, owned = target.split(" whose ", 1)
        target = f"{owner} {preposition} whose {owned}"
    elif preposition:  # "For how long …": "a duration for which …", not "a duration such for which …"
        target = _with_preposition(target, preposition)
    # "How long does the NDA run for?": "a duration for which the NDA runs", not "… such that the NDA runs for"
    stranded = _stranded_preposition(tokens) if target.endswith(" such that") else None
    copula = not preposition and not stranded and start < len(tokens) and tokens[start].lemma_ == "be" \
        and tokens[start].dep_ == "ROOT" \
        and not (start + 1 < len(tokens) and tokens[start + 1].lower_ in NEGATIONS)  # "why isn't …": a statement
    if copula and not noun and wh in COPULA_TARGET:
        subject = _join(tokens[start + 1:])
        if wh in ("what", "which"):
            # "What is the deadline for X?" → the head noun of the subject decides the type.
            # A period only as the subject itself ("What is the notice period?", not "What are the conditions
            # during the bail period?").
            answer_type = next((typed for k in range(start + 1, len(tokens))
                                if (typed := _noun_type(tokens, k) if tokens[k].head.i == tokens[start].i
                                    else NOUN_TYPE.get(tokens[k].lemma_.lower(), ""))), answer_type)
        return Claim(text=_sentence(f"There exists {COPULA_TARGET[wh]} {subject}"), schema="existential",
                     wh=wh, answer_type=answer_type)
    if stranded:
        target = _with_preposition(target, stranded.lower_)
        tokens = [t for t in tokens if t is not stranded]
    asks_subject = not preposition and _asks_the_subject(wh, tokens[start:], bool(noun))
    rest = _join(tokens[start:]) if asks_subject else _scene_last(tokens[start:])
    return Claim(text=_sentence(f"There {'exist' if plural else 'exists'} {target} {rest}"), schema="existential",
                 wh=wh, answer_type=answer_type)


ORDINAL = frozenset("first second third last only main".split())
# What may stand inside the noun phrase a wh-word opens, before its head noun or in a phrase after it.
NOUN_PHRASE_POS = frozenset({"DET", "ADJ", "NUM", "NOUN", "PROPN", "PRON"})


def _with_preposition(target: str, preposition: str) -> str:
    """A target with a preposition in its relative word's place ("a duration such that" + "for" → "a duration
    for which", "a person who" + "to" → "a person to whom")."""
    head = RELATIVE_TAIL.sub("", target)
    return f"{head} {preposition} {'whom' if head == 'a person' else 'which'}"


def _stranded_preposition(tokens):
    """The preposition a question ends on, its object fronted as the wh-phrase ("How long does it run
    | for?"), or None; not one of two ("up to"), whose first word goes with the verb."""
    words = [t for t in tokens if not t.is_punct]
    if len(words) < 3 or words[-1].pos_ != "ADP" or words[-2].pos_ in ("ADP", "PART"):
        return None
    return words[-1]


def _noun_type(tokens, k: int, default: str = "") -> str:
    """The answer type the noun at ``k`` names (``NOUN_TYPE``). A "period" is a length of time where a noun
    says of what ("the notice period", "a waiting period") or "of time" follows; alone or after a name or an
    adjective it may be an era ("the Romantic period"), which no length of time answers."""
    lemma = tokens[k].lemma_.lower()
    if lemma == "period":
        modifier = tokens[k - 1] if k > 0 else None
        of_a_noun = modifier is not None and modifier.head.i == tokens[k].i and modifier.dep_ in ("compound", "amod") \
            and modifier.pos_ in ("NOUN", "VERB") and modifier.text.islower()
        of_time = k + 2 < len(tokens) and tokens[k + 1].lower_ == "of" and tokens[k + 2].lemma_.lower() in TIME_NOUNS
        return "DURATION" if of_a_noun or of_time else default
    return NOUN_TYPE.get(lemma, default)


def _asks_a_price(tokens) -> bool:
    """"What did the first iPod cost?", "What does the Recipient have to pay?": the wh-word is the object of
    a verb of paying (do or a modal follows it, so it is neither the subject, "What costs more …", nor a
    copula's, "What is the worst that can happen if I don't pay?"), and nothing else is ("What did they pay
    tribute to?"); a length of time may follow ("… pay a week?"). No other verb or clause comes first: "What
    can I do if I can't pay?" asks what to do."""
    if len(tokens) < 3 or tokens[1].lower_ not in DO_OR_MODAL:
        return False
    for k in range(2, len(tokens)):
        token = tokens[k]
        if token.lower_ not in PRICE_VERBS:
            if token.pos_ == "SCONJ" or (token.pos_ == "VERB" and token.dep_ in CLAUSE_VERB_DEPS
                                         and token.lemma_.lower() not in LEADING_TO_A_PRICE):
                return False
            continue
        after = tokens[k + 1] if k + 1 < len(tokens) else None
        if after is None or after.is_punct or after.pos_ in ("ADP", "SCONJ", "ADV", "PART"):
            return True
        if after.lower_ in ("a", "an", "per", "each", "every") and k + 2 < len(tokens):
            return tokens[k + 2].lemma_.lower() in TIME_UNITS
        return False
    return False


def _wh_noun_phrase(tokens, start: int) -> tuple[int | None, int]:
    """(head, end) of the noun phrase a wh-word opens at ``start``: the head noun past its adjectives
    and compounds ("which Chinese premier", "what notice period"), with what is coordinated with it
    ("what images and symbols") and a prepositional phrase on it up to that phrase's noun ("what type of
    music", "which teaser trailer for Spectre"). (None, end) for "which of the parties" (its of-phrase
    ends at ``end``) and (None, start) where no noun follows."""
    k = start
    while k < len(tokens) and tokens[k].dep_ in ("amod", "compound", "nummod") and tokens[k].head.i > tokens[k].i \
            and tokens[k].pos_ in NOUN_PHRASE_POS:
        k += 1
    head = k if k < len(tokens) and tokens[k].pos_ in ("NOUN", "PROPN") else None
    if head is None:
        if k == start and k < len(tokens) and tokens[k].lower_ == "of":
            return None, _reduced_relative_end(tokens, _phrase_end(tokens, k + 1), k)
        return None, start
    end = head + 1
    if end + 1 < len(tokens) and tokens[end].dep_ == "cc" and any(t.dep_ == "conj" for t in tokens[head].rights):
        end = _phrase_end(tokens, end + 1)  # "what visual images and symbols"
    if end < len(tokens) and tokens[end].pos_ == "ADP" and tokens[end].head.i == tokens[head].i:
        end = _phrase_end(tokens, end + 1)  # "which president of the US", "what event in the novel"
    return head, _reduced_relative_end(tokens, end, start)


def _reduced_relative_end(tokens, end: int, start: int) -> int:
    """``end`` moved past a participle phrase on a noun of the phrase ``tokens[start:end]`` ("the
    sunlight hitting the upper atmosphere", "the buildings designed by Wren"): the phrase says which
    of the noun's things are meant, so it stays with the noun rather than starting the clause."""
    if end >= len(tokens) or tokens[end].dep_ != "acl" or tokens[end].tag_ not in ("VBG", "VBN"):
        return end
    if not any(t.i == tokens[end].head.i for t in tokens[start:end]):
        return end
    last = tokens[end].right_edge.i
    moved = next((k + 1 for k in range(end, len(tokens)) if tokens[k].i == last), end)
    # the clause still needs its verb: "What kind of movement interfaced with the sword?" is misparsed so
    if not any(t.pos_ in ("VERB", "AUX") for t in tokens[moved:]):
        return end
    return moved


def _phrase_end(tokens, k: int) -> int:
    """The position after the noun phrase starting at ``k``: after its first noun that is no compound,
    or its pronoun ("the parties", "the iPod Nano", "his"); ``k`` itself where none follows."""
    for j in range(k, len(tokens)):
        if tokens[j].pos_ not in NOUN_PHRASE_POS and tokens[j].tag_ != "POS":
            break
        possessed = tokens[j].dep_ == "poss" or (j + 1 < len(tokens) and tokens[j + 1].tag_ == "POS")
        if not possessed and (tokens[j].pos_ == "PRON" or (tokens[j].pos_ in ("NOUN", "PROPN")
                                                           and tokens[j].dep_ != "compound")):
            if j + 2 < len(tokens) and tokens[j + 1].lower_ == "of":
                return _phrase_end(tokens, j + 2)  # "the units of the Wii version of Twilight Princess"
            return j + 1
    return k


def _negation_follows(tokens) -> bool:
    """The auxiliary that opens ``tokens`` is negated, with more to come ("can't I …", "did not find …")."""
    return len(tokens) > 2 and tokens[1].lower_ in NEGATIONS


# "How do I apply …?", "How can we renew …?": the asker asks what to do, answered by a sentence that says how
# ("Apply online through the Benefits Office …"); not "How do I know if …?", which asks whether.
PROCEDURE_AUXILIARIES = frozenset("do does can could should must".split())
PROCEDURE_ASKERS = frozenset("i we you one".split())
NOT_PROCEDURES = frozenset("know tell feel think".split())


def _asks_a_procedure(tokens) -> bool:
    if len(tokens) < 4 or tokens[1].lower_ not in PROCEDURE_AUXILIARIES or tokens[2].lower_ not in PROCEDURE_ASKERS:
        return False
    return tokens[3].pos_ in ("VERB", "AUX") and tokens[3].lemma_.lower() not in NOT_PROCEDURES | {"be"}


def _asks_the_subject(wh: str, tokens, noun_phrase: bool = False) -> bool:
    """Whether the wh-phrase is the clause's subject, so nothing is inverted: an auxiliary followed
    straight by a verb ("Who can apply?", "What has been decided?", "Who was born in Tessby?", "Who
    did not find it appealing?") or, after "be", by an adjective ("Which documents are confidential?").
    A wh-phrase with a noun is the subject too before "there", a "be" and a preposition or adjective, a
    main-verb "have" ("How many teams are there …", "… are of Greek heritage", "… is Caucasian", "What
    court has jurisdiction …") and a "be" and a predicate (``_predicate_follows``); any wh-phrase is,
    before "have to" ("Who has to sign it?")."""
    if wh not in SUBJECT_WH or len(tokens) < 2:
        return False
    if tokens[0].lemma_ == "have" and tokens[1].lower_ == "to":
        return True  # "What had to be evacuated?", "Who has to sign it?"
    if noun_phrase and tokens[0].lemma_ == "have" and not any(
            t.pos_ == "VERB" or t.tag_ in ("VB", "VBN") for t in tokens[1:]):
        return True  # "has jurisdiction over …", not "has the book been translated into"
    if tokens[0].pos_ != "AUX" or (tokens[0].lemma_ == "do" and not _negation_follows(tokens)):
        return False  # "What did Edith design?": "do" without "not" asks for an object
    if noun_phrase and (tokens[1].lower_ == "there" or (tokens[0].lemma_ == "be" and tokens[1].pos_ in ("ADP", "ADJ"))):
        return True
    if noun_phrase and tokens[0].lemma_ == "be" and tokens[1].pos_ in ("DET", "NUM") and _predicate_follows(tokens):
        return True
    after = next((t for t in tokens[1:] if t.lower_ not in NEGATIONS), None)
    if after is None or not after.text[:1].islower():  # "was Beyoncé …": a name is a subject
        return False
    return (after.pos_ in ("VERB", "AUX") or after.tag_ in ("VB", "VBN", "VBG")
            or (tokens[0].lemma_ == "be" and after.pos_ == "ADJ"))


def _predicate_follows(tokens) -> bool:
    """After "be", a noun phrase that says what the wh-phrase is ("a billionaire", "the largest donor",
    "the cause of …", "the first to …"), not a thing the wh-phrase describes ("What colour was the car?",
    "What nationality were the two friends?"), in a clause with no verb of its own ("the overheating
    issue" has none) and no stranded preposition ("Which radio was its look based on?")."""
    main = list(itertools.takewhile(lambda t: t.lower_ not in WH_WORDS and t.pos_ not in ("SCONJ", "PART"),
                                    tokens[1:]))  # up to "when …" or "to abandon …"
    words = [t for t in main if t.is_alpha]
    if not words or words[-1].pos_ == "ADP" or any(
            (t.pos_ in ("VERB", "AUX") or t.tag_ in ("VB", "VBN", "VBG")) and t.dep_ not in ("amod", "compound")
            for t in main):
        return False
    head = next((k for k, t in enumerate(words) if t.pos_ in ("NOUN", "PROPN") and t.dep_ != "compound"), None)
    return words[0].lower_ in ("a", "an") or any(t.tag_ == "JJS" or t.lower_ in ORDINAL for t in words) or (
        head is not None and head + 1 < len(words) and words[head + 1].lower_ == "of")


def _said_of_the_subject(tokens) -> bool:
    """A copular question says something of its subject after it: a participle the "is" is the auxiliary of
    ("is Kestrel still bound", "is the ferry closed"), or an adjective after the subject's noun ("is the
    permit valid", "is the bridge open to traffic"), not one before a noun ("the main arch")."""
    if tokens[2].dep_ != "ROOT":
        return True
    return any(t.tag_ == "JJ" and tokens[k - 1].pos_ in ("NOUN", "PROPN")
               and (k + 1 == len(tokens) or tokens[k + 1].pos_ not in ("NOUN", "PROPN", "ADJ"))
               for k, t in enumerate(tokens) if k > 3)


def _measure(tokens) -> Claim | None:
    """"How tall is the Arden Lighthouse?" → "There exists a height for the Arden Lighthouse." (a
    measurement of a thing; "How long is the payment made for?" stays a duration, and "How old
    is X?" an age)."""
    if len(tokens) < 4 or tokens[0].lower_ != "how" or tokens[1].lower_ not in MEASURE_NOUNS \
            or tokens[2].lemma_ != "be" or tokens[-2].pos_ == "ADP" or tokens[-1].pos_ == "ADP":
        return None
    if tokens[1].lower_ == "long" and _said_of_the_subject(tokens):
        return None  # "How long is Kestrel still bound by it?", "How long is the permit valid?": a duration
    noun = MEASURE_NOUNS[tokens[1].lower_]
    answer_type = "NUMBER" if noun == "age" else "MEASURE"
    return Claim(text=_sentence(f"There exists {voice.indefinite(noun)} {noun} for {_join(tokens[3:])}"),
                 schema="existential", wh=f"how {tokens[1].lower_}", answer_type=answer_type)


def _join(tokens) -> str:
    """Tokens back to text with their original spacing, the question mark dropped."""
    return "".join((_voice(t.text) if t.text != "?" else "") + t.whitespace_ for t in tokens).strip()


def _declarative(tokens) -> str:
    """Undo subject–auxiliary inversion: "was the bridge designed" → "the bridge was designed"."""
    if not tokens:
        return ""
    lead = tokens[0]
    if lead.pos_ != "AUX" and lead.lemma_ not in ("be", "do", "have"):
        return _join(tokens)
    clause = _subordinate_clause(tokens)
    if clause is not None:  # "can the widow inherit | if a spouse died …": the inversion is the main clause's
        return f"{_declarative(tokens[:clause])} {_join(tokens[clause:])}"
    # "why can't I apply": the negation goes with the auxiliary, after the subject
    negated = _negation_follows(tokens)
    if negated:
        tokens = [lead, *tokens[2:]]
    end = _subject_end(tokens)
    verb = _do_verb(tokens) if lead.lemma_ == "do" else None
    if verb is not None:  # "did Edith Marlowe design": the base-form verb ends the subject
        end = verb
    elif (lead.tag_ == "MD" or lead.lemma_ == "do") and end >= len(tokens) - (tokens[-1].text == "?"):
        end = _verb_read_as_noun(tokens) or end
    elif lead.tag_ == "MD" and end < len(tokens) and tokens[end].lower_ == "of":
        end = _verb_after_of(tokens, end) or end
    subject = _join(tokens[1:end])
    aux = _NEGATIVE_STEMS.get(lead.text.lower(), lead.text.lower())
    if verb is not None and not negated and not any(t.lower_ in NEGATIONS for t in tokens):
        # "did the bridge open to traffic" → "the bridge opened to traffic"
        verb = voice.inflect(tokens[end].lemma_.lower(), "past" if aux == "did" else
                             "third" if aux == "does" else "base")
        return f"{subject} {verb} {_join(tokens[end + 1:])}".strip()
    if subject.split(" ", 1)[0] == "I":
        aux = {"are": "am", "were": "was"}.get(aux, aux)
    return f"{subject} {aux}{' not' if negated else ''} {_join(tokens[end:])}".strip()


def _subordinate_clause(tokens) -> int | None:
    """Where a subordinate clause of time or condition starts after an inverted main clause ("can the widow
    or widower inherit | if a spouse passed away before 2002"), or None: a subordinating word the parse
    tags as one, three words or more in. The subject–auxiliary inversion is undone within the main clause
    alone; the parse may otherwise read the clause's verb as the main verb ("the widow or widower inherit
    if a spouse can passed away")."""
    return next((k for k in range(3, len(tokens) - 1)
                 if tokens[k].pos_ == "SCONJ" and tokens[k].lower_ in TIME_SCENE), None)


# What opens a scene of time or condition between a wh-phrase and its clause ("How long | after the agreement
# ends | may …"); a place ("Where | on the fault | is …") is left where it is, the parse of what follows it
# being the whole question's.
TIME_SCENE = frozenset("after before once when whenever if since until unless while during".split())


def _scene_last(tokens) -> str:
    """A wh-question's rest in statement order, a scene that opens it moved last ("after the agreement ends
    may X not solicit …" → "X may not solicit … after the agreement ends")."""
    inverted = _inverted_after_scene(tokens) if tokens else None
    if inverted is None:
        return _declarative(tokens)
    return f"{_declarative(tokens[inverted:])} {_join(tokens[:inverted])}"


def _inverted_after_scene(tokens) -> int | None:
    """Where the inverted clause starts after a scene that opens the rest of a wh-question ("How long |
    after the agreement ends | may Brightline not solicit …?"): the first auxiliary, two words or more into
    the rest, with a noun phrase right after it; None when the rest opens with no such scene."""
    if tokens[0].lower_ not in TIME_SCENE or tokens[0].pos_ not in ("ADP", "SCONJ"):
        return None
    for k in range(2, len(tokens) - 1):
        if tokens[k].pos_ == "AUX" and tokens[k + 1].pos_ in ("DET", "PRON", "PROPN", "NOUN"):
            return k
    return None


def _verb_read_as_noun(tokens) -> int | None:
    """Where the verb of a modal or "do" question is when the parse found none and the subject would run
    to the end: its last content word ("will the eACCR | display", "can the Three Gorges Dam | generate",
    "does the city | land in"), which the tagger read as the subject's noun; None when that word is
    capitalised (a name ends the question, not a verb)."""
    last = next((k for k in range(len(tokens) - 1, 1, -1)
                 if tokens[k].is_alpha and tokens[k].pos_ not in ("ADP", "PART", "DET", "PRON")), None)
    return last if last is not None and tokens[last].text.islower() else None


def _verb_after_of(tokens, start: int) -> int | None:
    """The verb of a modal question whose subject the parse cut at its "of" ("can members | of the public
    see", "would fans | of the band buy"): the first verb form after the "of" phrase's first noun."""
    for k in range(start + 2, len(tokens)):
        t, before = tokens[k], tokens[k - 1]
        if t.text.islower() and (t.tag_ == "VB" or voice.known_verb(t.text)) and before.pos_ in ("NOUN", "PROPN", "ADJ"):
            return k
    return None


def _do_verb(tokens) -> int | None:
    """Where the verb of a "do" question is (a position in ``tokens``), or None: the first verb before
    the clause's first preposition or subordinate clause ("did the first iPod cost | when it
    launched"), by its tag or as a verb form ``core.voice`` knows; where there is none there, the
    word right after a name or pronoun ("did Edith design", "did Beyoncé release | in 2003": a verb
    read as a noun); else the first verb after that; with none anywhere, the last word ("does the
    certificate of free sale expire", "does the agreement last", whose verb the tagger reads as an adverb)."""
    stop = next((i for i, t in enumerate(tokens[2:], start=2) if t.pos_ in ("ADP", "SCONJ", "PUNCT")
                 or t.lower_ in WH_WORDS or t.lower_ in SUBORDINATE), len(tokens))
    verbs = [i for i in range(2, len(tokens)) if tokens[i].tag_ == "VB" or tokens[i].pos_ == "VERB"]
    before = [i for i in verbs if i < stop] + [  # a known verb form, unless a noun or a base-form verb follows
        i for i in range(2, stop) if voice.known_verb(tokens[i].text) and tokens[i].text[:1].islower()  # ("wind
        and not (i + 1 < len(tokens) and (tokens[i + 1].pos_ in ("NOUN", "PROPN") or tokens[i + 1].tag_ == "VB"))]  # turbine", "bus pass get")
    after_name = [i for i in range(2, stop) if tokens[i].pos_ in ("NOUN", "VERB") and tokens[i].text[:1].islower()
                  and tokens[i - 1].pos_ in ("PROPN", "PRON")]
    words = [i for i in range(2, len(tokens)) if tokens[i].is_alpha]
    last = words[-1] if words and tokens[words[-1]].text[:1].islower() \
        and tokens[words[-1]].pos_ in ("NOUN", "VERB", "ADJ", "ADV") else None
    return (sorted(before) or after_name or verbs or [last])[0]


def _subject_end(tokens) -> int:
    """Where the subject of an inverted question ends (a position in ``tokens``): after the parse's
    subject of the auxiliary's clause when it starts right after the auxiliary ("is | there | a fee",
    "am | I | over 66"). Where that subject runs to the end, the parse has hung the predicate on it
    ("are dogs | allowed in Ashby Park", "is the library | in the town centre"): it ends before its
    head's first modifier on the right. With no such subject, at the first verb, adjective, adverb, or
    determiner that starts a new noun phrase ("is the bridge | a listed building")."""
    lead, position = tokens[0], {t.i: k for k, t in enumerate(tokens)}
    words = len(tokens) - (tokens[-1].text == "?")
    subject = next((t for t in tokens[1:] if t.dep_ in SUBJECT_DEPS and t.head in (lead, lead.head)), None)
    if subject is not None and position.get(subject.left_edge.i) == 1 and subject.right_edge.i in position:
        end = position[subject.right_edge.i] + 1
        last = tokens[end - 1]
        if end == words and end > 2 and last.text.islower() and len(last.text) > 4 and last.text.endswith("ed") \
                and tokens[end - 2].pos_ in ("NOUN", "PROPN"):
            return end - 1  # "isn't the fee | refunded": a participle the parser read as the subject's noun
        if end < words:
            return end
        modifier = next((t for t in subject.rights if t.dep_ not in ("cc", "conj", "compound", "punct")), None)
        if modifier is not None and modifier.left_edge.i in position:
            return position[modifier.left_edge.i]
    return next((i for i, t in enumerate(tokens[2:], start=2)
                 if t.pos_ in ("VERB", "ADJ", "ADV", "AUX")
                 or (t.pos_ == "DET" and tokens[i - 1].pos_ in ("NOUN", "PROPN"))), len(tokens))


def _voice(word: str) -> str:
    """Questions address the system ("you"); the claim speaks for the user ("I")."""
    return {"i": "I", "you": "I", "your": "my"}.get(word.lower(), word) if word.lower() in ("i", "you", "your") else word


def _sentence(text: str) -> str:
    text = text.strip().rstrip("?.! ")
    return text[:1].upper() + text[1:] + "." if text else text


def _comparative(doc) -> Claim | None:
    """"Which is longer, X or Y?" → "One of X or Y is longer." with a sub-claim per entity."""
    degree = [t for t in doc if t.tag_ in ("JJR", "RBR", "JJS", "RBS")]
    conj = next((t for t in doc if t.dep_ == "conj" and any(c.lower_ == "or" for c in t.head.children)), None)
    if not degree or conj is None:
        return None
    cc = next(c for c in conj.head.children if c.lower_ == "or")
    a = doc[conj.head.left_edge.i:cc.i].text.strip(" ,")
    b = doc[conj.left_edge.i:conj.right_edge.i + 1].text.strip(" ,?")
    predicate = degree[0].text if degree[0].tag_ in ("JJR", "RBR") else f"the {degree[0].text}"
    return Claim(text=_sentence(f"One of {a} or {b} is {predicate}"), schema="comparative",
                 sub_claims=(_sentence(f"There exists information about {a}"),
                             _sentence(f"There exists information about {b}")),
                 wh=doc[0].lower_ if doc[0].lower_ in WH_WORDS else "")


# The clause a coordinated subject ("X and Y", ``SUBJECT_DEPS``) must belong to for the question to split
# into one claim about each
CLAUSE_HEAD_DEPS = frozenset({"ROOT", "ccomp"})
BE_FORMS = frozenset({"am", "is", "are", "was", "were", "be"})
QUANTIFIERS = ("both", "all")


def _conjunctive(tokens) -> Claim | None:
    """"Are X and Y both Z?" → "X and Y are both Z." with sub-claims "X is Z.", "Y is Z.".

    Only where "X and Y" is the clause's subject: an "and" elsewhere joins the parts of one name or
    one claim ("register with HM Revenue and Customs", "get Universal Credit and Housing Benefit at
    the same time"), and split there the sub-claims were not sentences ("Housing Benefit can the
    same time.")."""
    if tokens[0].pos_ != "AUX":
        return None
    conj = next((t for t in tokens if t.dep_ == "conj" and t.head.dep_ in SUBJECT_DEPS
                 and t.head.head.dep_ in CLAUSE_HEAD_DEPS and any(c.lower_ == "and" for c in t.head.children)), None)
    if conj is None:
        return None
    statement = _declarative(tokens)
    doc = tokens[0].doc
    cc = next(c for c in conj.head.children if c.lower_ == "and")
    a = doc[conj.head.left_edge.i:cc.i].text.strip(" ,")
    b = doc[conj.left_edge.i:conj.right_edge.i + 1].text.strip(" ,")
    b = b.rsplit(" ", 1)[0] if b.lower().endswith(tuple(f" {q}" for q in QUANTIFIERS)) else b  # "Solange both"
    words = (statement.split(f"{b} ", 1)[1] if f"{b} " in statement else "").split()
    be = tokens[0].lemma_ == "be"
    auxiliary = BE_FORMS if be else {tokens[0].lower_}
    words = _without_quantifier(words)
    verb = ""  # the auxiliary, where the statement kept one ("are", "can"; "do" leaves none behind)
    if words and words[0].lower() in auxiliary:
        kept = words.pop(0).lower()
        verb = "is " if be else f"{kept} "
    words = _without_quantifier(words)
    if not words:
        return None
    tail = " ".join(words)
    return Claim(text=_sentence(statement), schema="conjunctive",
                 sub_claims=(_sentence(f"{a} {verb}{tail}"), _sentence(f"{b} {verb}{tail}")))


def _without_quantifier(words: list[str]) -> list[str]:
    """The words after a leading "both" or "all" ("both were born" → "were born")."""
    return words[1:] if words and words[0].lower() in QUANTIFIERS else words
