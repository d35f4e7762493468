"""Conditions rewritten in the user's own voice (for NLI) and as yes/no questions (for ASK).

Rules say "The applicant must be a resident of Wexbridge" or, under "You can get it if
you:", just "* are aged 65 or over". Users say "I live in Wexbridge". The NLI model was
taught to compare first-person facts with conditions (scripts/nli_augment.py), and it does
that best when both sides speak of "I": so a condition is put in the first person before
NLI ("I am a resident of Wexbridge."), and in the second person when the ASK agent needs a
clarification question ("Are you a resident of Wexbridge?"). Pure rules: deterministic,
instant, and each rewrite can be read in the trace.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from core.text import straight_quotes, strip_list_marker

# --- vocabulary -----------------------------------------------------------------------

_ROLES = set("""applicant claimant employee worker tenant user customer student resident caller person
individual taxpayer borrower homeowner buyer seller member recipient beneficiary driver patient parent
carer pensioner veteran candidate participant subscriber policyholder owner trader householder
occupier traveller traveler visitor""".split())
_ROLE_PLURALS = {r + "s": r for r in _ROLES} | {"people": "person", "persons": "person"}
_ROLE_PRONOUNS = {"anyone", "someone", "everyone", "those", "whoever", "anybody", "somebody"}
_PERSON_NOUNS = _ROLES | set("""citizen national carer guardian child spouse partner widow widower appointee
apprentice landlord farmer director volunteer refugee adult minor husband wife mother father son daughter
graduate professional""".split())

_VERBS = set("""accept achieve act add agree allow answer appeal appear apply approve arrange arrive ask attach
attend be bear become begin belong book borrow bring build buy call cancel care carry cease change charge check
choose claim clean close collect come complete confirm contact consider consume continue contribute cost count cover create cross deal decide
declare defer delay deliver depend deposit die display divorce do donate drink drive earn eat employ end engage
enjoy enrol enroll enter exceed exist expect export face fail fall feel file fill find finish fit fly
follow fund gain get give go grow hand happen have hear help hire hold import include inform inherit install
insure intend invest involve join keep know lack lead learn lease leave lend let lie live look lose make
manage manufacture marry mean meet miss move need nominate notify obtain occupy offer open operate opt
order overpay owe own park pass pay perform place plan practise practice prefer prepare present process
produce prove provide publish purchase put qualify raise reach read receive recover reduce refer
refuse register relocate remain remarry remember remove renew rent repair repay replace report represent
request require reside resign retain retire return review ride run satisfy save say see seek sell send
serve set settle share show sign sit sleep smoke sort speak spend sponsor stand start stay stop store study
submit subscribe succeed suffer supply support survive take talk teach tell think trade train transfer
transport travel treat try turn undergo understand undertake upgrade use visit volunteer vote wait walk
want wear win wish withdraw work worry write""".split())
_IRREGULAR_PAST = {
    "was": "be", "were": "be", "had": "have", "did": "do", "said": "say", "went": "go", "got": "get",
    "gave": "give", "made": "make", "paid": "pay", "took": "take", "came": "come", "became": "become",
    "left": "leave", "kept": "keep", "held": "hold", "ran": "run", "sold": "sell", "bought": "buy",
    "brought": "bring", "built": "build", "sent": "send", "spent": "spend", "lent": "lend", "met": "meet",
    "told": "tell", "found": "find", "lost": "lose", "began": "begin", "wrote": "write", "chose": "choose",
    "drove": "drive", "knew": "know", "saw": "see", "thought": "think", "felt": "feel", "meant": "mean",
    "sat": "sit", "stood": "stand", "understood": "understand", "won": "win", "fell": "fall", "flew": "fly",
    "grew": "grow", "rode": "ride", "spoke": "speak", "taught": "teach", "wore": "wear",
    "withdrew": "withdraw", "underwent": "undergo", "undertook": "undertake", "overpaid": "overpay",
    "repaid": "repay", "led": "lead", "heard": "hear", "sought": "seek", "slept": "sleep", "ate": "eat",
    "drank": "drink", "died": "die", "lay": "lie"}
_PARTICIPLES = set(_IRREGULAR_PAST) - {"was", "were", "did", "went", "gave", "took", "came", "became",
                                       "ran", "began", "wrote", "chose", "drove", "knew", "saw", "fell",
                                       "flew", "grew", "rode", "spoke", "wore", "withdrew", "underwent",
                                       "undertook", "ate", "drank", "lay"}
_PARTICIPLES |= set("""been done gone gotten given taken come become run begun written chosen driven known
seen fallen flown grown ridden spoken worn withdrawn undergone undertaken born borne eaten drunk lain
put set let read""".split())
_THIRD = {"be": "is", "have": "has", "do": "does", "go": "goes"}
_ADVERBS = set("""also still already currently usually normally ordinarily only just now ever always legally
habitually actually really previously recently permanently temporarily regularly genuinely lawfully
mainly mostly personally jointly solely otherwise then""".split())
_MODALS = {"can": "can", "could": "could", "may": "may", "might": "might", "will": "will",
           "would": "would", "cannot": "can", "can't": "can", "couldn't": "could", "won't": "will",
           "wouldn't": "would", "mightn't": "might"}
_REQUIRE = ("will need to", "will have to", "are required to", "is required to", "need to", "needs to",
            "have to", "has to", "must", "should", "shall", "mustn't", "shouldn't")
_BE = {"am": "pres", "is": "pres", "are": "pres", "'m": "pres", "'re": "pres", "was": "past", "were": "past",
       "isn't": "pres", "aren't": "pres", "wasn't": "past", "weren't": "past"}
_HAVE = {"have": "pres", "has": "pres", "'ve": "pres", "had": "past", "haven't": "pres", "hasn't": "pres",
         "hadn't": "past"}
_DO = {"do": "pres", "does": "pres", "did": "past", "don't": "pres", "doesn't": "pres", "didn't": "past"}
_ADJ_START = set("""aged born based resident registered employed self-employed unemployed married divorced
widowed separated single pregnant disabled eligible entitled able unable responsible qualified enrolled
retired insured authorised authorized allowed required over under between in on at from outside within
not liable subject exempt related living working studying aware""".split())
# Words that start a predicate but never follow "have" as a perfect ("have aged children" is not one).
_NOT_PARTICIPLES = _ADJ_START - {"born", "based", "registered", "employed", "married", "divorced", "retired",
                                 "enrolled", "qualified", "separated", "widowed", "insured", "authorised",
                                 "authorized", "allowed", "required"}
_DETERMINERS = {"the", "a", "an", "this", "that", "these", "those", "any", "each", "every", "all", "some",
                "no", "its", "their", "his", "her", "our", "one", "another", "such"}
_PREPOSITIONS = {"to", "for", "with", "by", "from", "about", "of", "on", "at", "than", "into", "onto",
                 "upon", "towards", "toward", "against", "without", "behind", "like", "as", "in", "between"}
_SUBORDINATORS = {"if", "when", "unless", "that", "and", "or", "but", "because", "whether", "while",
                  "until", "before", "after", "once", "since", "where", "so", "though", "although"}
# "no" or "never" opening a clause's tail negates it: "have no children", "have never been married"
_NEGATING_WORD = re.compile(r"(no|never)\s+", re.I)
# A role noun whose phrase names the user ("the person you care for") names someone else.
_SECOND_PERSON = {"you", "your", "you're", "you've", "yourself"}
_MAIN_SPLIT = {"can", "cannot", "can't", "may", "must", "mustn't", "will", "won't", "should", "shouldn't",
               "are", "is", "were", "was", "do", "don't", "does", "doesn't", "need", "needs", "qualify",
               "qualifies", "get", "gets", "have", "has"}

_LEADING = re.compile(r"^(?:(?:and|or|but)\s+)?(?:if\s+and\s+only\s+if|only\s+if|if|unless|when|whenever|where"
                      r"|provided\s+that|providing\s+that|provided|as\s+long\s+as|so\s+long\s+as|in\s+case)\b[\s,]*", re.I)
_TRAILING = re.compile(r"(?:[\s,;:.!?]+|(?:^|\s+)(?:and|or|and/or)\b)+$", re.I)


@dataclass(frozen=True)
class _Clause:
    """A condition split into subject, finite verb and the rest (kept verbatim)."""
    subject: str  # "I" for the user, else a noun phrase or pronoun as written
    person: str  # "1" (the user), "3" (it, my employer), "3p" (they, my children)
    verb: str  # lemma: be, have, do, a modal, or a lexical verb
    tense: str  # pres | past
    surface: str = ""  # the verb as written (past forms, modals)
    negated: bool = False
    contracted: bool = False
    perfect: bool = False  # "have" as the auxiliary of "have lived"
    adverbs: str = ""
    tail: str = ""
    role: bool = False  # the subject was a role noun: "they"/"their" in the tail mean the user
    plural: bool = False  # the subject was a plural role: "are students" → "am a student"
    then: "_Clause | None" = None  # the main clause of "Applicants who are students cannot apply"


# --- public API -----------------------------------------------------------------------

def to_user_voice(condition: str, lead: str = "", negate: bool = False) -> str:
    """The condition as a first-person statement: "are aged 65 or over" → "I am aged 65 or over."

    ``lead`` is the sentence a bullet hangs from ("To qualify you must:", "if your baby:");
    its subject and verb are joined to the bullet, so "is born early" under "if your baby:"
    becomes "My baby is born early." Negations are kept ("I am not ...", "I cannot apply").
    ``negate=True`` states the opposite ("I am not aged 65 or over.", "I have children." for
    "have no children"): an SNLI model that misses negation in a fact ("I don't smoke" comes
    out as entailing "I smoke") can then be asked which of the two the fact entails more.
    """
    clause = _parse(_prepare(condition, lead))
    if negate:
        clause = _negated(clause)
    text = _statement(clause)
    if clause.then is not None:
        text = f"{text} and {_statement(clause.then)}"
    return _sentence(text, ".")


def to_question(condition: str, lead: str = "") -> str:
    """A yes/no clarification question in the second person: "Are you aged 65 or over?"

    A negated condition is asked in its positive form ("are not in full-time education" → "Are you in
    full-time education?", "have no children" → "Do you have children?"): "Are you not in full-time
    education?" leaves a "no" meaning either. The reply is read against the condition like any stated
    fact, so a "yes" there fails it. For "Applicants who are students cannot apply" it asks about the
    condition only: "Are you a student?"
    """
    clause = _parse(_prepare(condition, lead))
    marker = _NEGATING_WORD.match(clause.tail)
    if (clause.negated and clause.verb not in _MODALS.values()) or marker:  # "may not consume" is the rule's, kept
        clause = _negated(clause)
        if marker and not clause.negated and marker.group(1).lower() == "never":
            clause = _with(clause, tail=f"ever {clause.tail}")  # "have never been married" → "Have you ever been married?"
    return _sentence(_question(clause), "?")


_PAST_OF = {lemma: past for past, lemma in _IRREGULAR_PAST.items()
            if past not in ("was", "were", "lay") and past not in _PARTICIPLES - {"had", "did"}} | {"be": "was"}


_SAME_PAST = set("cost split put set let hit cut shut quit spread bet burst hurt cast broadcast".split())
# Verbs of two syllables stressed on the last, whose final consonant doubles (occur → occurred; offer,
# stressed on the first, → offered)
_STRESSED_LAST = frozenset("occur recur incur concur refer prefer confer defer deter infer transfer admit commit "
                           "permit submit omit emit transmit regret control patrol compel expel propel rebel "
                           "equip".split())


def known_verb(word: str) -> bool:
    """Whether ``word`` is a verb form this module knows ("open", "opened", "built")."""
    return _verb_info(word.lower()) is not None or word.lower() in _SAME_PAST


# Words whose spelling and sound disagree on the article ("a one", "a user", "an hour").
_VOWEL_SPELT_CONSONANT = re.compile(r"(?:one\b|once\b|uni|use|usu|eu|ewe)", re.I)
_SILENT_H = re.compile(r"(?:hour|honest|honou?r|heir)", re.I)
_ACRONYM = re.compile(r"[A-Z]{2,}\b")
_VOWEL_LETTER_NAMES = "AEFHILMNORSX"  # "an EU national", "an NDA", "a UK resident"


def indefinite(phrase: str) -> str:
    """The indefinite article for ``phrase`` ("an age", "a notice period", "a one", "an hour", "an EU
    national")."""
    if _ACRONYM.match(phrase):
        return "an" if phrase[0] in _VOWEL_LETTER_NAMES else "a"
    vowel = phrase[:1].lower() in "aeiou"
    if vowel and _VOWEL_SPELT_CONSONANT.match(phrase) or not vowel and not _SILENT_H.match(phrase):
        return "a"
    return "an"


def inflect(lemma: str, form: str) -> str:
    """A verb's "base", "third" (person singular) or "past" form: inflect("open", "past") → "opened"."""
    if form == "third":
        return _third(lemma)
    if form != "past" or lemma in _SAME_PAST:
        return lemma
    if lemma in _PAST_OF:
        return _PAST_OF[lemma]
    for past, base in _IRREGULAR_PAST.items():
        if base == lemma:
            return past
    if lemma.endswith("e"):
        return lemma + "d"
    if re.search(r"[^aeiou]y$", lemma):
        return lemma[:-1] + "ied"
    if re.fullmatch(r"[^aeiou]*[aeiou][bdgmnpt]", lemma) or lemma in _STRESSED_LAST:
        return lemma + lemma[-1] + "ed"  # one syllable: stop → stopped (but open → opened); occur → occurred
    return lemma + "ed"


# --- preparation ----------------------------------------------------------------------

def _clean(text: str) -> str:
    text = re.sub(r"\s+", " ", straight_quotes(text)).strip()
    previous = None
    while previous != text:
        previous = text
        text = strip_list_marker(text)
        text = _LEADING.sub("", text)
        text = _TRAILING.sub("", text).strip()
    return text


def _prepare(condition: str, lead: str) -> str:
    if not isinstance(condition, str) or not isinstance(lead, str):
        raise TypeError("condition and lead must be strings")
    text = _clean(condition)
    if not text:
        raise ValueError("the condition is empty: pass the text of a rule's condition, e.g. 'you are over 65'")
    clause = _lead_clause(lead) if lead.strip() else ""
    if not clause or _subject_start(text):
        return text
    first, _, rest = text.partition(" ")
    if first[:1].isupper() and first[1:].islower() and first.lower() in _VERBS | _ADJ_START | set(_BE) | set(_HAVE):
        text = f"{first.lower()} {rest}".strip()
    if re.search(r"\bthe following\b", clause, re.I):
        return re.sub(r"\bthe following\b", text, clause, count=1, flags=re.I)
    return f"{clause} {text}"


def _lead_clause(lead: str) -> str:
    """The subject (and verb) a bullet list's lead-in gives its items: "if you:" → "you"."""
    lead = re.sub(r"\s+", " ", straight_quotes(lead)).strip().rstrip(":").strip()
    parts = re.split(r"\b(?:if|when|whenever|unless|where|provided that|as long as)\b", lead, flags=re.I)
    if len(parts) > 1:
        return parts[-1].strip(" ,")
    m = re.search(r"\b(?:you|your \w+|the \w+|a person|an? \w+)\s+(?:must|should|will need to|needs? to|have to|has to"
                  r"|may not|must not|cannot|can't|are required to|is required to)$", lead, re.I)
    return m.group() if m else ""


def _subject_start(text: str) -> bool:
    words = text.lower().split()
    first = words[0]
    return (first in ("you", "you're", "you've", "you'd", "you'll", "i", "i'm", "i've", "your", "my")
            or first.removesuffix("'s") in _ROLE_PLURALS
            or (first in ("the", "a", "an", "any", "each", "every", "all") and len(words) > 1
                and words[1].removesuffix("'s") in _ROLES | set(_ROLE_PLURALS)))


# --- parsing --------------------------------------------------------------------------

def _words(text: str) -> list[tuple[str, int, int]]:
    """(lowercase word without surrounding punctuation, start, end) for each word."""
    out = []
    for m in re.finditer(r"\S+", text):
        word = m.group().lower().strip("\"(),;:.!?[]")
        out.append((word, m.start(), m.end()))
    return out


def _verb_info(word: str) -> tuple[str, str] | None:
    """(lemma, form) with form base | s | past | ing, or None when ``word`` is not a known verb form."""
    if word in _IRREGULAR_PAST:
        return _IRREGULAR_PAST[word], "past"
    if word in _PARTICIPLES:
        return word, "past"
    if word in _VERBS:
        return word, "base"
    endings = (("ies", "y", "s"), ("es", "", "s"), ("s", "", "s"), ("ied", "y", "past"), ("ed", "", "past"),
               ("d", "", "past"), ("ing", "", "ing"), ("ing", "e", "ing"))
    for suffix, add, form in endings:
        if word.endswith(suffix):
            stem = word[: -len(suffix)] + add
            if stem in _VERBS:
                return stem, form
            if form in ("past", "ing") and len(stem) > 2 and stem[-1] == stem[-2] and stem[:-1] in _VERBS:
                return stem[:-1], form  # stopped, running
    return None


def _is_participle(word: str) -> bool:
    info = _verb_info(word)
    return word in _PARTICIPLES or (info is not None and info[1] == "past") or word.endswith("ed")


def _is_finite(word: str, after_subject: bool) -> bool:
    if word in _BE or word in _HAVE or word in _DO or word in _MODALS or word in ("must", "should", "shall",
                                                                                   "mustn't", "shouldn't"):
        return True
    info = _verb_info(word)
    if info is None:
        return False
    return info[1] in ("s", "past") or (after_subject and info[1] == "base")


def _parse(text: str) -> _Clause:
    words = _words(text)
    keys = [w for w, _, _ in words]
    first = keys[0]
    you = {"you": "", "i": "", "you're": "'re", "i'm": "'m", "you've": "'ve", "i've": "'ve",
           "you'd": "'d", "i'd": "'d", "you'll": "will", "i'll": "will"}
    if (first in ("you", "i") and len(keys) > 2 and keys[1] in ("and", "or")) or (
            first == "both" and len(keys) > 1 and keys[1] in ("you", "i")):
        return _noun_subject(text, words, 0, "")  # "(both) you and your partner live together"
    if first in you:
        return _verb_group(text, words, 1, "I", "1", contraction=you[first])
    role_at = 1 if first in ("the", "a", "an", "any", "each", "every", "all") and len(keys) > 1 else 0
    head = keys[role_at]
    if head.endswith("'s") and (head[:-2] in _ROLES or head[:-2] in _ROLE_PLURALS) and role_at + 1 < len(keys):
        return _noun_subject(text, words, role_at + 1, "my ")  # "The applicant's business is ..."
    if head in _ROLES or head in _ROLE_PLURALS or (role_at == 0 and head in _ROLE_PRONOUNS):
        main = next((i for i in range(role_at + 1, len(keys)) if keys[i] in _MAIN_SPLIT), None)
        if main is not None and _SECOND_PERSON & set(keys[role_at + 1:main]):
            return _noun_subject(text, words, 0, "", verb_at=main)  # "The person you care for must ...": not the user
        return _role_subject(text, words, role_at, plural=head not in _ROLES and head not in ("anyone", "someone"))
    if first in ("your", "my"):
        return _noun_subject(text, words, 0, "")
    if first in ("it's", "that's", "there's", "he's", "she's"):
        nxt = keys[1] if len(keys) > 1 else ""
        verb, tense = ("have", "pres") if nxt == "been" or (_is_participle(nxt) and nxt not in _ADJ_START) else ("be", "pres")
        return _Clause(text[:words[0][2] - 2], "3", verb, tense, contracted=True, perfect=verb == "have",
                       tail=text[words[0][2]:].strip())
    if first in ("they", "he", "she", "it", "there", "we", "this"):
        person = "3p" if first in ("they", "we") else "3"
        return _verb_group(text, words, 1, text[:words[0][2]], person)
    if first == "not" or _is_finite(first, after_subject=True):
        info = _verb_info(first)
        third = first in ("is", "was", "has", "does", "isn't", "wasn't", "hasn't", "doesn't") or (
            info is not None and info[1] == "s" and first not in _VERBS)
        return _verb_group(text, words, 0, "it" if third else "I", "3" if third else "1")
    if first in _ADJ_START or (first.endswith("ing") and _verb_info(first)):
        return _Clause("I", "1", "be", "pres", tail=text)
    for i in range(1, min(len(keys), 8)):
        if keys[i - 1] not in _DETERMINERS | _PREPOSITIONS and _is_finite(keys[i], after_subject=False):
            return _noun_subject(text, words, 0, "", verb_at=i)
    person_noun = any(k in _PERSON_NOUNS or k.rstrip("s") in _PERSON_NOUNS for k in keys[:4])
    return _Clause("I" if person_noun else "it", "1" if person_noun else "3", "be", "pres", tail=text)


def _noun_subject(text: str, words, start: int, prefix: str, verb_at: int | None = None) -> _Clause:
    """A noun-phrase subject ("your employer", "the animal"): it runs up to its finite verb."""
    keys = [w for w, _, _ in words]
    if verb_at is None:
        verb_at = next((i for i in range(start + 1, min(len(keys), start + 8))
                        if keys[i - 1] not in _DETERMINERS | _PREPOSITIONS and _is_finite(keys[i], True)), None)
    if verb_at is None:
        return _Clause("it", "3", "be", "pres", tail=text)
    subject = prefix + text[words[start][1]:words[verb_at - 1][2]]
    plural = bool(re.search(r" (?:and|or) ", subject)) or keys[verb_at] in (
        "are", "were", "have", "do", "don't", "aren't", "weren't", "haven't") or (
        keys[verb_at] in _VERBS and (keys[verb_at - 1].endswith("s") or keys[verb_at - 1] in ("children", "people"))) or any(
        k in _ROLE_PLURALS or k == "children" for k in keys[start:min(verb_at, start + 2)])  # "the people you care for must ..."
    return _verb_group(text, words, verb_at, subject, "3p" if plural else "3")


def _role_subject(text: str, words, at: int, plural: bool) -> _Clause:
    """"The applicant must be ..." speaks of the user; so do "Applicants who ..." and "Drivers under 18 ..."."""
    keys = [w for w, _, _ in words]
    role = _ROLE_PLURALS.get(keys[at], keys[at])
    nxt = at + 1
    if nxt >= len(keys):
        return _Clause("I", "1", "be", "pres", tail=f"{indefinite(role)} {role}", role=True)
    relative = keys[nxt] in ("who", "that")
    if not relative and not _is_finite(keys[nxt], True) and not any(k in _MAIN_SPLIT for k in keys[nxt:]):
        return _Clause("I", "1", "be", "pres", tail=text, role=True)  # "a resident of Wexbridge"
    if relative or not _is_finite(keys[nxt], True):
        begins = nxt + 1 if keys[nxt] in ("who", "that") else nxt
        split = next((i for i in range(begins + 1, len(keys)) if keys[i] in _MAIN_SPLIT), None)
        if split is not None:
            head = text[words[begins][1]:words[split - 1][2]]
            if keys[nxt] not in ("who", "that"):
                head = f"are {indefinite(role)} {role} {head}" if plural else f"is {indefinite(role)} {role} {head}"
            condition = _verb_group(head, _words(head), 0, "I", "1", plural=plural, role=True)
            main = _verb_group(text, words, split, "I", "1", role=True)
            return _with(condition, then=main)
    return _verb_group(text, words, nxt, "I", "1", plural=plural, role=True)


def _with(clause: _Clause, **changes) -> _Clause:
    return _Clause(**{**clause.__dict__, **changes})


# Adverbs that presuppose the positive: negated they read oddly ("does not get already", "I do not live still
# in Calvera"), and the NLI model entailed "The person I care for does not already get a qualifying disability
# benefit" from "my neighbour, who gets Personal Independence Allowance" at 0.93 (0.54 without "already").
_PRESUPPOSING = frozenset({"already", "still", "also"})


def _negated(clause: _Clause) -> _Clause:
    """The clause with its polarity flipped: "no"/"never" opening the tail go, or "not" comes or goes (and
    with it an adverb that presupposes the positive, ``_PRESUPPOSING``)."""
    marker = _NEGATING_WORD.match(clause.tail)
    if marker and not clause.negated:
        return _with(clause, tail=clause.tail[marker.end():])
    if clause.verb == "do" and clause.negated:  # "I don't smoke" → "I smoke"
        inner = _parse(f"I {clause.tail}")
        return _with(inner, subject=clause.subject, person=clause.person, role=clause.role,
                     tense=clause.tense if inner.tense == "pres" else inner.tense)
    if clause.negated:
        return _with(clause, negated=False)
    adverbs = " ".join(a for a in clause.adverbs.split() if a.lower() not in _PRESUPPOSING)
    first, _, rest = clause.tail.partition(" ")
    tail = rest if first.lower() in _PRESUPPOSING and rest else clause.tail  # "have already applied"
    return _with(clause, negated=True, adverbs=adverbs, tail=tail)


def _verb_group(text: str, words, i: int, subject: str, person: str, contraction: str = "",
                plural: bool = False, role: bool = False) -> _Clause:
    """Read the finite verb at ``words[i]`` (after any adverbs); requirement modals are dropped."""
    keys = [w for w, _, _ in words]
    base = dict(subject=subject, person=person, plural=plural, role=role)

    def tail_from(j: int) -> str:
        return text[words[j][1]:].strip() if j < len(words) else ""

    if contraction in ("'re", "'m"):
        return _after_verb(_Clause(verb="be", tense="pres", contracted=True, **base), keys, i, tail_from)
    if contraction == "'ve":
        perfect = i < len(keys) and _next_is_participle(keys, i)
        return _after_verb(_Clause(verb="have", tense="pres", contracted=True, perfect=perfect, **base), keys, i, tail_from)
    if contraction == "'d":
        if i < len(keys) and _next_is_participle(keys, i):
            return _after_verb(_Clause(verb="have", tense="past", contracted=True, perfect=True, **base), keys, i, tail_from)
        return _after_verb(_Clause(verb="would", tense="pres", surface="'d", contracted=True, **base), keys, i, tail_from)
    if contraction == "will":
        return _after_verb(_Clause(verb="will", tense="pres", surface="will", **base), keys, i, tail_from)

    adverbs = []
    while i < len(keys) and keys[i] in _ADVERBS:
        adverbs.append(text[words[i][1]:words[i][2]])
        i += 1
    base["adverbs"] = " ".join(adverbs)
    if i >= len(keys):
        return _Clause(verb="be", tense="pres", tail="", **base)
    phrase = " ".join(keys[i:i + 3])
    required = next((r for r in _REQUIRE if phrase == r or phrase.startswith(r + " ")), None)
    negated = False
    if required:
        i += len(required.split())
        negated = required.endswith("n't")
        if i < len(keys) and keys[i] == "not":
            negated, i = True, i + 1
        while i < len(keys) and keys[i] in _ADVERBS:
            base["adverbs"] = (base["adverbs"] + " " + text[words[i][1]:words[i][2]]).strip()
            i += 1
        if i >= len(keys):
            return _Clause(verb="be", tense="pres", negated=negated, **base)
        verb = keys[i]
        lemma = ("be" if verb in _BE else "have" if verb in _HAVE else "do" if verb in _DO
                 else (_verb_info(verb) or (verb, ""))[0])
        clause = _Clause(verb=lemma, tense="pres", negated=negated, **base)
        if lemma == "have" and _next_is_participle(keys, i + 1):
            clause = _with(clause, perfect=True)
        return _with(clause, tail=tail_from(i + 1))
    word = keys[i]
    if word == "not":  # a fragment such as "not be in full-time education"
        inner = _verb_group(text, words, i + 1, subject, person, plural=plural, role=role)
        return _with(inner, negated=True, adverbs=base["adverbs"] or inner.adverbs)
    if word in _BE:
        contracted = word.endswith("n't")
        clause = _Clause(verb="be", tense=_BE[word], negated=contracted, contracted=contracted, **base)
        return _after_verb(clause, keys, i + 1, tail_from)
    if word in _HAVE:
        contracted = word.endswith("n't")
        clause = _Clause(verb="have", tense=_HAVE[word], negated=contracted, contracted=contracted,
                         perfect=_next_is_participle(keys, i + 1), **base)
        return _after_verb(clause, keys, i + 1, tail_from)
    if word in _DO:
        contracted = word.endswith("n't")
        clause = _Clause(verb="do", tense=_DO[word], negated=contracted, contracted=contracted, **base)
        return _after_verb(clause, keys, i + 1, tail_from)
    if word in _MODALS:
        surface = text[words[i][1]:words[i][2]].strip("\"(),;:.!?").lower()
        clause = _Clause(verb=_MODALS[word], tense="pres", surface=surface,
                         negated=word in ("cannot",) or word.endswith("n't"), **base)
        return _after_verb(clause, keys, i + 1, tail_from)
    if word == "be":
        return _with(_Clause(verb="be", tense="pres", **base), tail=tail_from(i + 1))
    info = _verb_info(word) or (word, "base")
    tense = "past" if info[1] == "past" else "pres"
    return _Clause(verb=info[0], tense=tense, surface=word, tail=tail_from(i + 1), **base)


def _next_is_participle(keys: list[str], i: int) -> bool:
    """Whether "have" at ``i - 1`` is the auxiliary of a perfect ("have (never) lived")."""
    while i < len(keys) and (keys[i] in _ADVERBS or keys[i] in ("not", "never")):
        i += 1
    return i < len(keys) and keys[i] not in _NOT_PARTICIPLES and _is_participle(keys[i])


def _after_verb(clause: _Clause, keys: list[str], i: int, tail_from) -> _Clause:
    """Take a "not" right after an auxiliary as the clause's negation; the rest is the tail."""
    if i < len(keys) and keys[i] == "not" and not clause.negated:
        return _with(clause, negated=True, tail=tail_from(i + 1))
    return _with(clause, tail=tail_from(i))


# --- rendering ------------------------------------------------------------------------

def _third(lemma: str) -> str:
    if lemma in _THIRD:
        return _THIRD[lemma]
    if re.search(r"[^aeiou]y$", lemma):
        return lemma[:-1] + "ies"
    if lemma.endswith(("s", "sh", "ch", "x", "z", "o")):
        return lemma + "es"
    return lemma + "s"


def _finite(c: _Clause) -> str:
    """The first-person (or third-person) finite verb, with its negation."""
    p, past, neg = c.person, c.tense == "past", c.negated
    if c.verb == "be":
        form = ("was" if p != "3p" else "were") if past else {"1": "am", "3": "is", "3p": "are"}[p]
        if neg and c.contracted:
            return "'m not" if form == "am" else form + "n't"
        if c.contracted and form == "am":
            return "'m"
        return form + (" not" if neg else "")
    if c.verb == "have" and (c.perfect or not neg or c.contracted):
        form = "had" if past else ("has" if p == "3" else "have")
        if neg:
            return form + ("n't" if c.contracted else " not")
        if c.contracted and p == "1":
            return "'d" if past else "'ve"
        return form
    if c.verb in _MODALS.values():
        if c.surface == "'d":
            return "'d"
        surface = c.surface or c.verb
        if neg and surface in _MODALS.values():
            return "cannot" if surface == "can" else surface + " not"
        return surface
    if c.verb == "do" or neg:
        form = "did" if past else ("does" if p == "3" else "do")
        word = form + ("n't" if c.contracted and neg else " not" if neg else "")
        return word if c.verb == "do" else f"{word} {c.verb}"
    if past:
        return c.surface
    return _third(c.verb) if p == "3" else c.verb


def _statement(c: _Clause) -> str:
    subject = "I" if c.person == "1" else _first_person(c.subject, c.role)
    subject = re.sub(r"^(Both |both )?I (and|or) (.+)$", r"\1\3 \2 I", subject)  # → "my partner and I"
    verb = _finite(c)
    tail = _first_person(c.tail, c.role, after_verb=True)
    if c.plural and c.verb == "be" and c.person == "1":
        tail = _singular_phrase(tail)
    lexical = c.verb not in ("be", "do") and c.verb not in _MODALS.values() and not (c.verb == "have" and c.perfect)
    if c.adverbs and lexical and not c.negated:
        verb = f"{c.adverbs} {verb}"
    elif c.adverbs:
        verb = f"{verb} {c.adverbs}"
    joiner = "" if verb.startswith("'") else " "
    return f"{subject}{joiner}{verb} {tail}".strip()


def _question(c: _Clause) -> str:
    subject = "you" if c.person == "1" else _second_person(c.subject, c.role)
    if subject.split(" ")[0].lower() in _DETERMINERS | {"your", "my", "it", "there", "they", "he", "she", "we",
                                                         "you", "both", "either", "neither"}:
        subject = subject[0].lower() + subject[1:]
    p, past = c.person, c.tense == "past"
    tail = _second_person(c.tail, c.role)
    if c.plural and c.verb == "be" and c.person == "1":
        tail = _singular_phrase(tail)
    rest = tail
    if c.verb == "be":
        aux = ("were" if p != "3" else "was") if past else ("is" if p == "3" else "are")
    elif c.verb == "have" and c.perfect:
        aux = "had" if past else ("has" if p == "3" else "have")
    elif c.verb in _MODALS.values():
        aux = c.verb
    else:
        aux = "did" if past else ("does" if p == "3" else "do")
        if c.verb != "do":
            rest = f"{c.verb} {tail}"
    words = [aux, subject] + (["not"] if c.negated else []) + ([c.adverbs] if c.adverbs else []) + [rest]
    return " ".join(w for w in words if w)


def _sentence(text: str, end: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([,;:.!?])", r"\1", text)
    text = _TRAILING.sub("", text)
    return text[:1].upper() + text[1:] + end


def _singular_phrase(tail: str) -> str:
    """"students" → "a student", "UK citizens of X" → "a UK citizen of X" (after "I am")."""
    words = tail.split(" ")
    for i in range(min(2, len(words))):
        word = words[i]
        if i == 1 and not words[0].isupper():
            break
        if word.lower() in ("children", "people") or (re.fullmatch(r"[a-z]{3,}s", word.lower())
                                                      and not word.lower().endswith(("ss", "us", "ous", "is"))):
            singular = {"children": "child", "people": "person"}.get(word.lower())
            if singular is None:
                singular = word[:-3] + "y" if word.endswith("ies") else word[:-1]
            return " ".join([indefinite(words[0])] + words[:i] + [singular] + words[i + 1:])
    return tail


_FIRST = [(r"\byou're\b", "I'm"), (r"\byou've\b", "I've"), (r"\byou'd\b", "I'd"), (r"\byou'll\b", "I'll"),
          (r"\byou aren't\b", "I'm not"), (r"\byou weren't\b", "I wasn't"), (r"\byou are\b", "I am"),
          (r"\byou were\b", "I was"), (r"\byourselves\b", "myself"), (r"\byourself\b", "myself"),
          (r"\byours\b", "mine"), (r"\byour\b", "my")]
_FIRST_ROLE = [(r"\bthey're\b", "I'm"), (r"\bthey've\b", "I've"), (r"\bthey'd\b", "I'd"), (r"\bthey'll\b", "I'll"),
               (r"\bthey aren't\b", "I'm not"), (r"\bthey weren't\b", "I wasn't"), (r"\bthey are\b", "I am"),
               (r"\bthey were\b", "I was"), (r"\bthemselves\b", "myself"), (r"\bthemself\b", "myself"),
               (r"\btheirs\b", "mine"), (r"\btheir\b", "my"), (r"\bthem\b", "me"), (r"\bthey\b", "I")]
_SECOND = [(r"\bI'm\b", "you're"), (r"\bI've\b", "you've"), (r"\bI'd\b", "you'd"), (r"\bI'll\b", "you'll"),
           (r"\bI am\b", "you are"), (r"\bI was\b", "you were"), (r"\bmyself\b", "yourself"), (r"\bmine\b", "yours"),
           (r"\bmy\b", "your"), (r"\bme\b", "you"), (r"\bI\b", "you")]
_SECOND_ROLE = [(r"\bthey're\b", "you're"), (r"\bthey've\b", "you've"), (r"\bthey'd\b", "you'd"),
                (r"\bthey'll\b", "you'll"), (r"\bthemselves\b", "yourself"), (r"\bthemself\b", "yourself"),
                (r"\btheirs\b", "yours"), (r"\btheir\b", "your"), (r"\bthem\b", "you"), (r"\bthey\b", "you")]


def _swap(text: str, table: list[tuple[str, str]]) -> str:
    for pattern, replacement in table:
        def repl(m: re.Match, replacement=replacement) -> str:
            return replacement[0].upper() + replacement[1:] if m.group()[0].isupper() else replacement
        text = re.sub(pattern, repl, text, flags=0 if "I" in pattern else re.I)
    return text


def _first_person(text: str, role: bool, after_verb: bool = False) -> str:
    """"your employer pays you" → "my employer pays me"; "you" is "I" where it starts a clause.

    ``after_verb``: ``text`` follows a verb, so a "you" at its start is an object ("pays | you").
    """
    text = _swap(straight_quotes(text), _FIRST + (_FIRST_ROLE if role else []))

    def you(m: re.Match) -> str:
        before = text[:m.start()].rstrip().split(" ")[-1].lower().strip(",;:") if text[:m.start()].strip() else ""
        after = text[m.end():].lstrip().split(" ")[0].lower().strip(",;:.") if text[m.end():].strip() else ""
        subject = (after in _BE or after in _HAVE or after in _DO or after in _MODALS or after in _ADVERBS
                   or after in ("must", "should", "need", "not", "never") or _is_finite(after, True))
        starts_clause = before in _SUBORDINATORS | {"both", "either", "neither"} or (not before and not after_verb)
        if before in _PREPOSITIONS or not (subject or starts_clause):
            return "me"
        return "I"
    return re.sub(r"\byou\b", you, text, flags=re.I)


def _second_person(text: str, role: bool) -> str:
    return _swap(straight_quotes(text), _SECOND + (_SECOND_ROLE if role else []))


_RELATIVE = [(r"\bwhose\b", "your"), (r"\bwho\b", "you")]


def addressed(relative_clause: str) -> str:
    """A relative clause about the people a rule is for, said to the user: "whose baby is due or who
    adopt a child" → "your baby is due or you adopt a child"; "who have completed their first year" →
    "you have completed your first year"."""
    return _swap(straight_quotes(relative_clause), _RELATIVE + _SECOND_ROLE)
