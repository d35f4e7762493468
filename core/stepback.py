"""Question rewrites by the generator, each checked and with a rule fallback.

Step-back (seed 003): an abstract version of the question ("Can I get X if I am 67?" →
"Who is eligible for X?") retrieves the passages that state the general rule, which the
specific question may miss; ``stepback_retrieve`` runs both queries and keeps both lists
for the trace beside the merged one. Claim rewriting (seed 001): the generator rewrites
the question in the schema the rule-based claim builder found; an output that does not
have that schema, or drops the question's content, is replaced by the rule claim. The
local 135M model fails these checks often, which is why they exist.
"""
from __future__ import annotations

import re
from dataclasses import replace

from core import models, prompts
from core.generation import Backend, TemplateBackend
from core.kb import KnowledgeBase
from core.retrieval import Retriever
from core.text import CONTENT_STOP, CONTENT_WORD, content_words
from core.types import Claim, ClaimRewrite, RetrievedPassage, StepBack, StepBackRetrieval

# "Can I get X if …", "Am I eligible for X", "Do I qualify for X" → "Who is eligible for X?"
ELIGIBILITY = re.compile(
    r"^(?:can|could|may|might|will|would|should|do|does|did|am|is|are)\s+"
    r"(?:i|we|you|my\s+\w+|our\s+\w+)\s+(?:still\s+|also\s+)?"
    r"(?:get|claim|apply\s+for|receive|qualify\s+for|be\s+eligible\s+for|eligible\s+for|be\s+entitled\s+to|"
    r"entitled\s+to|take|have)\s+(?P<thing>.+)$", re.I)
CUT_SPECIFICS = re.compile(r"\s*(?:,|\b(?:if|when|while|because|as|since|after|before|though|although|even|given|"
                           r"now|this|next|at\s+\d|for\s+\d|(?:for|to|from|with|in|at|on|of)\s+(?:my|our|his|her|their|"
                           r"me|us|him|them)\b))\b.*$", re.I)
WH = {"which", "what", "who", "whom", "whose", "when", "where", "why", "how"}
HOW_MUCH = re.compile(r"^how\s+much\b", re.I)
SPECIFIC_LABELS = {"DATE", "TIME", "CARDINAL", "QUANTITY", "MONEY", "PERCENT", "ORDINAL"}
CATEGORY = {"PERSON": "a person", "GPE": "a place", "LOC": "a place", "FAC": "a building", "ORG": "an organisation",
            "NORP": "a group", "WORK_OF_ART": "a work", "EVENT": "an event", "PRODUCT": "a product",
            "LAW": "a law", "LANGUAGE": "a language"}
# A name ending in one of these words is of that kind ("the Harlow Bridge" → "a bridge"); spaCy's
# small model labels such names inconsistently.
KIND_WORDS = set("""bridge river lake hill hills mountain island town city village county railway road street
station lighthouse harbour port festival school university college hospital church castle company shipyard
shipyards museum park band ship payment allowance grant scheme fund act agreement""".split())


# --- step-back ---------------------------------------------------------------------------


class StepBackRewriter:
    """Question → step-back question: the generator's, if it passes the checks, else the rule's."""

    def __init__(self, generator: Backend | None = None, max_tokens: int = 32):
        if max_tokens < 4:
            raise ValueError(f"max_tokens must be at least 4, not {max_tokens}")
        self.generator = generator or TemplateBackend()
        self.max_tokens = max_tokens

    def run(self, question: str) -> StepBack:
        question = " ".join(question.split())
        if not question:
            raise ValueError("the question is empty: type a question to step back from")
        rule = rule_stepback(question)
        out = self.generator.generate(prompts.stepback(question), self.max_tokens, fallback=rule, stop=("\n",))
        if out.backend == "template":
            return StepBack(question, rule, "rules", warning=out.error)
        problem = _stepback_problem(question, out.text)
        if problem:
            return StepBack(question, rule, "rules", generated=out.text,
                            warning=f"the generated step-back question {problem}; used the rule")
        return StepBack(question, _one_question(out.text), out.backend, generated=out.text)


def _one_question(text: str) -> str:
    text = text.strip().strip('"“”')
    return text[: text.index("?") + 1] if "?" in text else text


def _stepback_problem(question: str, text: str) -> str:
    """Why a generated step-back question is unusable ("" if it is fine)."""
    text = _one_question(text)
    words = CONTENT_WORD.findall(text)
    if not text.endswith("?"):
        return "is not a question"
    if not 3 <= len(words) <= 25:
        return f"has {len(words)} words"
    if " ".join(words).lower() == " ".join(CONTENT_WORD.findall(question)).lower():
        return "repeats the question"
    if not content_words(text) & content_words(question):
        return "is about something else"
    return ""


def rule_stepback(question: str) -> str:
    """The rule step-back: eligibility questions ask who is eligible; "how much" asks how it
    is calculated; otherwise dates and numbers are dropped and other names become their kind,
    and if nothing was specific the question becomes "What is known about <topic>?"."""
    text = question.strip().rstrip("?.! ")
    match = ELIGIBILITY.match(text)
    if match:
        thing = CUT_SPECIFICS.sub("", match.group("thing")).strip(" ,")
        if thing:
            return f"Who is eligible for {thing}?"
    doc = models.parse([text])[0]
    topic = _topic(doc)
    name = re.sub(r"^(?:my|your|our|his|her|their)\b", "the", topic.text, flags=re.I) if topic else ""
    if HOW_MUCH.match(text) and topic:
        return f"How is {name} calculated?"
    general = _generalise(doc, topic)
    if general and general.lower() != text.lower():
        return general[:1].upper() + general[1:] + "?"
    return f"What is known about {name}?" if topic else f"{text}?"  # nothing to abstract from


def _specific(ent) -> bool:
    """A date, number or amount (spaCy's small model also labels "the 1998" an EVENT)."""
    return ent.label_ in SPECIFIC_LABELS or not any(t.pos_ in ("PROPN", "NOUN") for t in ent)


def _topic(doc):
    """The first named entity that is not a date or number, else the first content noun phrase."""
    ents = [e for e in doc.ents if not _specific(e)]
    if ents:
        # The noun phrase around the name, when there is one ("the Greer valve", not "Greer").
        around = [c for c in doc.noun_chunks if c.start <= ents[0].start < c.end and c[0].lower_ not in WH]
        return around[0] if around else ents[0]
    chunks = [c for c in doc.noun_chunks if c.root.pos_ in ("NOUN", "PROPN") and c.root.lower_ not in CONTENT_STOP
              and c[0].lower_ not in WH]
    # "Can my employer refuse parental leave?" is about the leave, not the employer.
    chunks.sort(key=lambda c: c[0].lower_ in ("my", "your", "our", "his", "her", "their"))
    return chunks[0] if chunks else None


def _generalise(doc, topic) -> str:
    """Drop dates/numbers (with their preposition); other names → their kind ("a place")."""
    drop: set[int] = set()
    swap: dict[int, str] = {}
    for ent in doc.ents:
        if (topic is not None and topic.start <= ent.start < topic.end) or any(t.lower_ in WH for t in ent):
            continue  # keep the topic, and the asked-for slot ("which year")
        if _specific(ent):
            drop.update(t.i for t in ent if t.pos_ != "DET")
            if ent.start > 0 and doc[ent.start - 1].pos_ == "ADP":
                drop.add(ent.start - 1)
        elif ent.label_ in CATEGORY:
            last = ent[-1].lower_
            swap[ent.start] = f"a {last}" if last in KIND_WORDS else CATEGORY[ent.label_]
            drop.update(range(ent.start + 1, ent.end))
    if not drop and not swap:
        return ""
    out = "".join((swap[t.i] + t.whitespace_) if t.i in swap else "" if t.i in drop else t.text_with_ws for t in doc)
    return " ".join(out.split()).rstrip(" ,")



def stepback_retrieve(kb: KnowledgeBase, question: str, retriever: Retriever, stepback: StepBack | None = None,
                      weight: float = 0.85, context: str = "") -> StepBackRetrieval:
    """Retrieve for the question and its step-back version (each with the asker's scenario,
    ``context``, weighing documents); merge by the better of the
    original retrieval score and ``weight`` × the step-back one (originals win ties),
    keeping ``retriever.top_k``. Each merged passage keeps the scores of the query that
    ranked it; only ``rank`` is renumbered."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"the step-back weight must lie in [0, 1], not {weight!r}")
    stepback = stepback or StepBackRewriter().run(question)
    vectors = models.embed([question, stepback.abstract])
    original = retriever.run(kb, question, query_vector=vectors[0], context=context)
    abstract = retriever.run(kb, stepback.abstract, query_vector=vectors[1], context=context)
    best: dict[str, tuple[float, int, RetrievedPassage, str]] = {}
    for order, (items, source, w) in enumerate(((original, "original", 1.0), (abstract, "stepback", weight))):
        for p in items:
            score = w * p.score
            known = best.get(p.passage.id)
            if known is None:
                best[p.passage.id] = (score, order * 1000 + p.rank, p, source)
            elif score > known[0]:
                best[p.passage.id] = (score, order * 1000 + p.rank, p, "both")
            else:
                best[p.passage.id] = (*known[:3], "both")
    ranked = sorted(best.values(), key=lambda x: (-x[0], x[1]))[: retriever.top_k]
    merged = tuple(replace(p, rank=i) for i, (_, _, p, _) in enumerate(ranked, 1))
    return StepBackRetrieval(stepback, original, abstract, merged, tuple(src for *_, src in ranked))


# --- claim rewriting --------------------------------------------------------------------


SCHEMA_CHECKS = {
    "existential": (lambda t: t.startswith("There exists "), 'does not start with "There exists"'),
    "comparative": (lambda t: re.match(r"^One of .+ or .+", t) is not None, 'is not of the form "One of X or Y …"'),
    "conjunctive": (lambda t: " and " in t, 'does not join two things with "and"'),
    "polar": (lambda t: not re.match(r"^(yes|no|there exists|one of|who|what|when|where|which|why|how|is|are|"
                                     r"can|could|do|does|did|will|would|should)\b", t, re.I),
              "is not a plain statement"),
}


# Words the schemas themselves bring in ("There exists a date when …"); cut like content_words.
SCHEMA_WORDS = content_words("exists information person people time date place location amount number duration "
                             "age reason way something thing both same share other")


class ClaimRewriter:
    """Question → claim by the generator, in the schema the rule claim has (seed 001)."""

    def __init__(self, generator: Backend | None = None, max_tokens: int = 40, min_overlap: float = 0.6,
                 max_added: int = 1):
        if not 0.0 <= min_overlap <= 1.0:
            raise ValueError(f"min_overlap must lie in [0, 1], not {min_overlap!r}")
        self.generator = generator or TemplateBackend()
        self.max_tokens = max_tokens
        self.min_overlap = min_overlap
        self.max_added = max_added  # content words the claim may add beyond the schema's own

    def run(self, question: str, rule_claim: Claim) -> ClaimRewrite:
        """``rule_claim`` comes from ``core.claims.ClaimBuilder``; statements are kept as they are."""
        if rule_claim.schema not in SCHEMA_CHECKS:
            return ClaimRewrite(rule_claim, rule_claim)
        out = self.generator.generate(prompts.claim(question, rule_claim.schema), self.max_tokens,
                                      fallback=rule_claim.text, stop=("\n",))
        if out.backend == "template":
            return ClaimRewrite(rule_claim, rule_claim, warning=out.error)
        text = out.text.strip().strip('"“”')
        problem = self._problem(question, text, rule_claim.schema)
        if problem:
            return ClaimRewrite(rule_claim, rule_claim, generated=out.text,
                                warning=f"the generated claim {problem}; used the rule claim")
        text = text[:1].upper() + text[1:].rstrip(" .!") + "."
        return ClaimRewrite(replace(rule_claim, text=text, source=out.backend), rule_claim,
                            generated=out.text, accepted=True)

    def _problem(self, question: str, text: str, schema: str) -> str:
        check, why = SCHEMA_CHECKS[schema]
        if not check(text):
            return why
        if text.endswith("?"):
            return "is a question"
        if re.search(r"\byou(r)?\b", text, re.I) and not re.search(r"\byou(r)?\b", question, re.I):
            return "addresses the user instead of speaking for them"
        wanted, got = content_words(question), content_words(text)
        if wanted:
            kept = len(wanted & got) / len(wanted)
            if kept < self.min_overlap:
                return f"keeps only {kept:.0%} of the question's content words"
        added = sorted(got - wanted - SCHEMA_WORDS)
        if len(added) > self.max_added:
            return f"adds words the question does not have ({', '.join(added)})"
        return ""
