"""The three action agents (seed 002 §9) and answer-level abstention (seed 004 layers 2–3).

The gate decides; an agent only writes the response. ANSWER is extractive by default (the
sentence of the kept evidence that best answers, the answer span when the question asks
for a date, amount, person or place; "Yes"/"No" with the deciding conditions when the
user's facts settled them) and generated only by a capable backend. ASK asks exactly one
question, about the most relevant missing condition that was not asked before. ABSTAIN says
why, and tells "the topic is absent from the KB" apart from "the topic is there but the
needed fact is not", naming the closest document. Every response records what wrote it.

Answer-level checks: ``grounding_scores`` (an NLI call) and the pure ``grounding_check`` /
``hedging_check`` return the comparisons a gate rule shows; ``respond_checked`` (what the
UI and CLI call after ``decide()``) writes the response and applies them: either can turn
ANSWER into ABSTAIN.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence

from core import calibrated, models, nli, prompts, quantities, units
from core import settings as settings_mod
from core.abduction import nli_units
from core.bands import AgeBands, age_bands, banded, told_age
from core.gate import TOPIC_ABSENT_RULES, compare, comparison_text, first_that_fires
from core.generation import Backend, TemplateBackend, backend_for
from core.evidence import answer_value
from core.text import STOPWORDS, normalized, split_sentences, tokenize
from core.types import (Abduction, AnswerCheck, Citation, Condition, Decision, NliScores, Response,
                        RetrievedPassage, RuleResult, Trace)
from core.variables import object_lead, still_open

TYPE_WORDS = {"PERSON": "the person", "DATE": "the date", "PLACE": "the place", "MONEY": "the amount", "RATE": "the rate",
              "NUMBER": "the number", "DURATION": "the duration", "MEASURE": "the measurement",
              "PROCEDURE": "the way to do it"}
ANSWER_MODES = ("auto", "extractive", "generated")
MAX_CHOICES = 4  # documents a "which one do you mean" question lists
# The clarifications answered in words ("the Orrin NDA", "I'm 23"), not yes or no.
WORDED_ASKS = frozenset({"which_one", "age"})





def _cite(p: RetrievedPassage, sentence: str) -> Citation:
    return Citation(p.passage.id, p.passage.doc_id, p.passage.title, sentence)


def _passage(trace: Trace, passage_id: str) -> RetrievedPassage | None:
    return next((p for p in trace.passages if p.passage.id == passage_id), None)


def fired_comparisons(decision: Decision, first: bool = False) -> str:
    """The deciding rule by the numbers it compared, "rule fact_absent: p_fact 0.38 < 0.66" (its explanation is
    written for the gate trace, settings and all): every comparison, or only its first, the signal it is about
    (the others are the conditions it applies under); the decision's reason where none was recorded."""
    fired = next((r for r in decision.rules if r.fired and r.name == decision.rule and r.comparisons), None)
    if fired is None:
        return decision.reason
    shown = fired.comparisons[:1] if first else fired.comparisons
    return f"rule {decision.rule}: " + "; ".join(comparison_text(c, 2, verdict=False) for c in shown)


# --- ANSWER ------------------------------------------------------------------------------

# Where one thing the user said ends and the next begins: a comma or semicolon, or "and"/"but" before a new subject
# ("I'm 72, I have lived in Calvera for ten years and our household income is £12,000 a year").
CLAUSE_BREAK = re.compile(r"\s*[,;]\s+|\s+(?:and|but)\s+(?=(?:I|I'm|I've|we|we're|we've|my|our|he|she|they|it)\b)")


def what_decided(condition: Condition) -> str:
    """What the user said that decided ``condition``, to quote in a yes or a no: a reply to a follow-up as the
    answer to that question ("you answered “no” to “Have you lived in Calvera for 5 years?”", not the two run
    together as if the user had said the question), else "you said: " and the part of the statement that decided
    it: the one clause that decides it alone the same way by arithmetic, else the one clause sharing most of its
    words, else the whole statement. A scenario of three facts quoted whole under each of three conditions says
    nothing about which fact met which."""
    support = condition.support.strip().rstrip(" .")
    if condition.method.startswith("history"):
        question, mark, reply = support.rpartition("?")
        if mark and reply.strip():
            return f"you answered “{reply.strip()}” to “{question.strip()}?”"
    return f"you said: {_deciding_clause(condition, support)}"


def _deciding_clause(condition: Condition, support: str) -> str:
    clauses = [c.strip(" .") for c in CLAUSE_BREAK.split(support) if c.strip(" .")]
    if len(clauses) < 2:
        return support
    if condition.method.startswith("numeric"):
        wording = (condition.text, condition.user_voice)
        whole = next((found.status for text in wording if (found := quantities.check(text, [support]))), None)
        deciding = [c for c in clauses
                    if any((found := quantities.check(text, [c])) and found.status == whole for text in wording)]
        return deciding[0] if len(deciding) == 1 else support
    wanted = set(tokenize(f"{condition.text} {condition.user_voice}")) - STOPWORDS
    shared = [len(wanted & set(tokenize(c))) for c in clauses]
    best = max(shared)
    return clauses[shared.index(best)] if best and shared.count(best) == 1 else support


class AnswerAgent:
    """Extractive by default; generated when ``mode`` is "generated", or "auto" with a capable backend."""

    def __init__(self, generator: Backend | None = None, mode: str = "auto", max_tokens: int = 128):
        if mode not in ANSWER_MODES:
            raise ValueError(f"answer mode must be one of {', '.join(ANSWER_MODES)}, not {mode!r}")
        self.generator = generator or TemplateBackend()
        self.mode = mode
        self.max_tokens = max_tokens

    def run(self, trace: Trace, decision: Decision, abduction: Abduction | None = None) -> Response:
        if decision.answer_polarity:
            return self._polarity(trace, decision.answer_polarity)
        if abduction is not None and abduction.supported:
            return self._premise(trace, abduction)
        if self.mode == "generated" or (self.mode == "auto" and self.generator.capable):
            return self._generated(trace)
        return self._extractive(trace)

    def _polarity(self, trace: Trace, polarity: str) -> Response:
        """"Yes"/"No" with the deciding conditions (and the user's facts that decided them) cited."""
        wanted = "established" if polarity == "yes" else "contradicted"
        deciding = [c for c in trace.variables.conditions if c.status == wanted]
        citations = tuple(self._condition_citation(trace, c) for c in deciding)
        title = citations[0].title if citations else "the rules"
        # A disqualifier ("You cannot get SSP if you are already receiving Maternity Allowance") is met by not
        # holding: its text is what rules the user out, not a condition to meet (a browser walkthrough read
        # "sets the condition “you are already receiving Maternity Allowance”, but you said: I am already
        # receiving Maternity Allowance")
        if polarity == "yes":
            required = [c for c in deciding if c.kind != "disqualifier"]
            parts = [f"you meet {'the condition' if len(required) == 1 else 'the conditions'}: "
                     + "; ".join(f"“{c.text}” ({what_decided(c)})" for c in required)] if required else []
            parts += [f"“{c.text}”, which would rule you out, does not apply ({what_decided(c)})"
                      for c in deciding if c.kind == "disqualifier"]
            text = f"Yes. According to “{title}”, " + "; and ".join(parts) + "."
        else:
            text = f"No. “{title}” " + "; it also ".join(
                f"rules you out if “{c.text}”, and {what_decided(c)}" if c.kind == "disqualifier"
                else f"sets the condition “{c.text}”, but {what_decided(c)}" for c in deciding) + "."
        return Response("ANSWER", text, "polarity", "rules", citations, answer=polarity.capitalize())

    @staticmethod
    def _condition_citation(trace: Trace, c: Condition) -> Citation:
        p = _passage(trace, c.passage_id)
        return Citation(c.passage_id, p.passage.doc_id if p else "", p.passage.title if p else "", c.text)

    def _premise(self, trace: Trace, abduction: Abduction) -> Response:
        """The gap closed by a premise the KB supports outside E: cite the evidence and the premise's source."""
        best = abduction.best
        citations = [Citation(best.support_passage, best.support_doc, best.support_title, best.support_sentence)]
        kept = trace.kept_passages()
        if kept:
            citations.insert(0, _cite(kept[0], self._best_sentence(trace, kept[0])))
        # the premise's sentence need not name the asked entity: the premise links it to the evidence's
        found = answer_value(trace.query.question, trace.claim.answer_type, [best.support_sentence],
                             [best.support_title], about_entity=False)
        span = found.value if found else ""
        lead = f"{span}. " if span else ""
        text = (f"{lead}According to “{best.support_title}”: {best.support_sentence} "
                f"(This supplies the missing premise “{best.text}”.)")
        return Response("ANSWER", text, "premise", "extractive", tuple(citations),
                        answer=span or best.support_sentence, statement=best.support_sentence)

    def _extractive(self, trace: Trace) -> Response:
        kept = trace.kept_passages()
        choice = trace.answer
        passage = _passage(trace, choice.passage_id) if choice else None
        if not kept or passage is None:
            return Response("ANSWER", "The knowledge base returned no passage to answer from.", "extractive",
                            "extractive", warning="ANSWER without evidence: the gate should have abstained")
        polar = ""
        if trace.claim.schema in ("polar", "statement"):
            polar = {"entailment": "Yes", "contradiction": "No"}.get(_label_of(trace, passage, choice.sentence), "")
        # a measurement asked in another unit than the text's: both ("120 metres (about 394 feet)")
        answer = units.in_asked_unit(trace.query.question, choice.value) if choice.value else polar
        sentence = choice.sentence
        bands = banded(trace.claim.answer_type, trace.passages) if choice.value else None
        if bands is not None and bands.passage_id == choice.passage_id and choice.value in bands.values \
                and not told_age(trace.query)[0]:
            # one band's value of an amount the text gives by age, asked by nobody in particular ("How much is the
            # Winter Fuel Payment?"): every band, as the text gives them, not "£300" alone
            answer, sentence = f"{' or '.join(bands.values)}, by age", bands.text
        lead = f"{answer}. " if answer else ""
        text = f"{lead}According to “{passage.passage.title}”: {sentence}"
        return Response("ANSWER", text, "extractive", "extractive", (_cite(passage, sentence),),
                        answer=answer or sentence, statement=sentence)

    def _best_sentence(self, trace: Trace, p: RetrievedPassage) -> str:
        premises = nli.premise_sentences(p.passage)
        n = next((n for n in trace.nli if n.passage_id == p.passage.id), None)
        # ``best_sentence`` indexes ``passage.sentences``, not the filtered premise list.
        return dict(premises).get(n.best_sentence, premises[0][1]) if n is not None else premises[0][1]

    def _generated(self, trace: Trace) -> Response:
        kept = trace.kept_passages()[:3]
        sources = [(f"{p.passage.title} | {p.passage.id}", p.passage.text) for p in kept]
        fallback = self._extractive(trace)
        out = self.generator.generate(prompts.answer(trace.query.question, sources, trace.query.history),
                                      self.max_tokens, fallback=fallback.text)
        if out.backend == "template":
            return replace(fallback, warning=out.error)
        citations = tuple(_cite(p, self._best_sentence(trace, p)) for p in kept)
        return Response("ANSWER", out.text, "generated", out.backend, citations, answer=out.text, statement=out.text)


# --- ASK ---------------------------------------------------------------------------------

class AskAgent:
    """Exactly one clarification question, never about a condition already asked in the history."""

    def __init__(self, generator: Backend | None = None, repeat_similarity: float = 0.8,
                 anchor_similarity: float = 0.2, max_tokens: int = 40):
        if not 0.0 <= repeat_similarity <= 1.0 or not 0.0 <= anchor_similarity <= 1.0:
            raise ValueError("repeat_similarity and anchor_similarity must lie in [0, 1]")
        self.generator = generator or TemplateBackend()
        self.repeat_similarity = repeat_similarity
        self.anchor_similarity = anchor_similarity
        self.max_tokens = max_tokens

    def run(self, trace: Trace, decision: Decision, abduction: Abduction | None = None) -> Response:
        asked = [q for q, _ in trace.query.history]
        if decision.rule == "value_by_age" and \
                (bands := age_bands(trace.query, trace.claim.answer_type, trace.passages)) is not None:
            return self._age(trace, bands)
        options = self._options(trace, abduction) or (
            self._to_confirm(trace) if decision.rule == "condition_open" else [])
        if not options:
            return self._which_one(trace, asked)
        # a bullet "Universal Credit" under "… if you're getting:" is asked as "Are you getting Universal Credit?"
        leads = {c.text: object_lead(c.text, c.lead) for c in trace.variables.conditions}
        questions = [self._voice_question(text, leads.get(text, "")) for text, _, _ in options]
        fresh = self._not_asked(options, questions, asked)
        if not fresh:
            listed = "; ".join(f"“{text}”" for text, _, _ in options)
            return Response("ABSTAIN", f"I have already asked about {listed}, and the answers do not settle the "
                            "question, so I cannot decide it from the knowledge base.", "already_asked", "rules",
                            target=options[0][0])
        i = fresh[0]
        text, kind, passage_id = options[i]
        question, backend, warning = self._phrase(trace, text, passage_id, questions[i])
        p = _passage(trace, passage_id)
        citations = (_cite(p, text),) if p else ()
        return Response("ASK", question, "generated" if backend not in ("rules", "template") else kind, backend,
                        citations, target=text, warning=warning)

    def _options(self, trace: Trace, abduction: Abduction | None) -> list[tuple[str, str, str]]:
        """(missing text, kind, passage id), most relevant first: the condition abduction named,
        then the open conditions in the document's order."""
        out = [(c.text, "condition", c.passage_id) for c in trace.variables.conditions if c.status == "missing"]
        if abduction is not None and abduction.outcome == "ask" and abduction.ask_about:
            named = [o for o in out if o[0] == abduction.ask_about]
            out = named + [o for o in out if o[0] != abduction.ask_about] if named else \
                [(abduction.ask_about, "premise", abduction.best.support_passage if abduction.best else "")] + out
        return out

    @staticmethod
    def _age(trace: Trace, bands: AgeBands) -> Response:
        """The amount turns on an age nobody has told: ask it, quoting the values by age."""
        p = _passage(trace, bands.passage_id)
        source = f" “{p.passage.title}” gives " if p else " The knowledge base gives "
        values = f"{', '.join(bands.values[:-1])} and {bands.values[-1]}"
        question = (f"How old are you?{source}{values} by age "
                    f"({', '.join(bands.ages)}): “{bands.text}”")
        citations = (_cite(p, bands.text),) if p else ()
        return Response("ASK", question, "age", "rules", citations, target="your age")

    @staticmethod
    def _to_confirm(trace: Trace) -> list[tuple[str, str, str]]:
        """Every condition read from the user's own words, the least sure reading first: P(condition
        open) says one is probably not settled though each was read as settled ("I live in Glasgow"
        for "you'll be living in the UK …"), so the question confirms it rather than asking which
        document the user means. A condition an answered follow-up settled is not asked again."""
        rank = {"nli": 0, "words": 1, "negation": 1, "place": 2, "numeric": 3}
        read = [c for c in trace.variables.conditions
                if c.status in ("established", "contradicted") and not c.method.startswith("history")]
        read.sort(key=lambda c: rank.get(c.method.split(" ")[0].rstrip(":"), 0))
        return [(c.text, "condition", c.passage_id) for c in read]

    def _not_asked(self, options, questions: list[str], asked: list[str]) -> list[int]:
        if not asked:
            return list(range(len(options)))
        texts = [t for t, _, _ in options]
        vectors = models.embed(texts + questions + asked)
        n = len(options)
        cond, ques, hist = vectors[:n], vectors[n:2 * n], vectors[2 * n:]
        normal = {normalized(q) for q in asked}
        fresh = []
        for i in range(n):
            similarity = max(float((cond[i] @ hist.T).max()), float((ques[i] @ hist.T).max()))
            if normalized(questions[i]) not in normal and similarity < self.repeat_similarity:
                fresh.append(i)
        return fresh

    @staticmethod
    def _voice_question(condition: str, lead: str = "") -> str:
        from core import voice
        question = voice.to_question(condition, lead)
        return question if question.endswith("?") and len(question) >= 10 else ""

    def _phrase(self, trace: Trace, missing: str, passage_id: str, voiced: str) -> tuple[str, str, str]:
        """(question, backend, warning): the generator's (capable backends only), the condition
        as a yes/no question, or seed 002's template."""
        anchor = self._anchor(trace, missing, passage_id)
        template = prompts.ASK_TEMPLATE.format(anchor=anchor, missing=_lower_first(missing.rstrip(" .")))
        fallback = voiced or template
        if not self.generator.capable:
            return fallback, "rules", ""
        known = list(trace.variables.known)
        out = self.generator.generate(prompts.ask(trace.query.question, missing, known, trace.query.history),
                                      self.max_tokens, fallback=fallback)
        text = out.text.strip()
        if out.backend == "template":
            return fallback, "rules", out.error
        if "?" not in text or len(text) < 10:
            return fallback, "rules", f"the generated clarification {text!r} is not a question; used the rule"
        return text[: text.index("?") + 1], out.backend, ""

    def _anchor(self, trace: Trace, missing: str, passage_id: str) -> str:
        """Seed 002: the known variable closest to the missing one (cosine ≥ threshold), else the document."""
        known = list(trace.variables.known)
        if known:
            vectors = models.embed([missing] + known)
            sims = vectors[1:] @ vectors[0]
            best = int(sims.argmax())
            if float(sims[best]) >= self.anchor_similarity:
                return known[best]
        p = _passage(trace, passage_id)
        return p.passage.title if p else "your question"

    def _which_one(self, trace: Trace, asked: list[str]) -> Response:
        """No open condition (the gate asked because of ambiguity or conflict): ask which of the
        things the question could mean it is about (``calibrated.described``: the documents that each say
        all it says of the thing; else ``calibrated.referents``, the knowledge base's other documents of
        the kind it names included), else which of the top two documents."""
        titles = list(calibrated.described(trace.query.question, trace.passages, trace.query.scenario))[:MAX_CHOICES]
        if len(titles) < 2:
            titles = list(calibrated.referents(trace.query.question, trace.passages, trace.rivals))[:MAX_CHOICES]
        if len(titles) < 2:
            titles = list(dict.fromkeys(p.passage.title for p in trace.passages))[:2]
        anchor = trace.variables.known[0] if trace.variables.known else "your question"
        if len(titles) >= 2:
            missing = "which one you mean: " + ", ".join(f"“{t}”" for t in titles[:-1]) + f" or “{titles[-1]}”"
        else:
            missing = "what exactly you are asking about"
        question = prompts.ASK_TEMPLATE.format(anchor=anchor, missing=missing)
        if normalized(question) in {normalized(q) for q in asked}:
            return Response("ABSTAIN", "I already asked which topic you mean and still cannot tell which "
                            "document answers the question.", "already_asked", "rules", target=missing)
        citations = tuple(_cite(p, nli.premise_texts(p.passage)[0]) for p in trace.passages[:2])
        return Response("ASK", question, "which_one", "rules", citations, target=missing)


def clarification_question(trace: Trace, decision: Decision, asked: Sequence[str] = (),
                           generator: Any = None, repeat_similarity: float = 0.8) -> Response:
    """The ASK agent's question about the first open condition not in ``asked`` (condition texts
    of earlier turns), or an ABSTAIN response when every open condition was asked already. The
    agent hears the premise abduction named (unless it was asked already) and skips conditions
    whose cosine with an earlier follow-up reaches ``repeat_similarity``."""
    open_now = [c for c in still_open(trace.variables.conditions) if c.text in trace.variables.missing]
    fresh = tuple(c for c in open_now if c.text not in set(asked))
    if open_now and not fresh:
        listed = "; ".join(f"“{c.text}”" for c in open_now)
        return Response("ABSTAIN", f"I have already asked about {listed}, and the replies do not settle it, "
                        "so I cannot decide the question from the knowledge base.", "already_asked", "rules",
                        target=open_now[0].text)
    # The agent chooses among the missing conditions it is shown: show it only the fresh ones.
    settled = tuple(c for c in trace.variables.conditions if c.status != "missing")
    view = replace(trace, variables=replace(trace.variables, conditions=settled + fresh))
    abduction = trace.abduction if trace.abduction is None or trace.abduction.ask_about not in asked else None
    return AskAgent(generator, repeat_similarity).run(view, decision, abduction)


# --- ABSTAIN -----------------------------------------------------------------------------

class AbstainAgent:
    """A specific refusal: topic absent from the KB, or topic present but the fact missing."""

    def __init__(self, generator: Backend | None = None, max_tokens: int = 80):
        self.generator = generator or TemplateBackend()
        self.max_tokens = max_tokens

    def run(self, trace: Trace, decision: Decision, abduction: Abduction | None = None) -> Response:
        closest = trace.passages[0] if trace.passages else None
        target = closest.passage.doc_id if closest else ""
        if decision.rule in TOPIC_ABSENT_RULES or closest is None:
            kind, reason = "topic_absent", self._absent(trace, decision)
        else:
            kind, reason = "fact_absent", self._missing_fact(trace, decision, abduction)
        text = prompts.ABSTAIN_TEMPLATE.format(reason=reason)
        # a refusal for an absent topic cites nothing: the closest passage is no source of anything
        cited = closest and kind == "fact_absent"
        citations = (_cite(closest, nli.premise_texts(closest.passage)[0]),) if cited else ()
        if not self.generator.capable:
            return Response("ABSTAIN", text, kind, "rules", citations, target=target)
        out = self.generator.generate(prompts.abstain(trace.query.question, reason, trace.query.history),
                                      self.max_tokens, fallback=text)
        if out.backend == "template" or len(out.text) < 20:
            warning = out.error or f"the generated refusal {out.text!r} is too short; used the rule"
            return Response("ABSTAIN", text, kind, "rules", citations, target=target, warning=warning)
        return Response("ABSTAIN", out.text, kind, out.backend, citations, target=target)

    @staticmethod
    def _absent(trace: Trace, decision: Decision) -> str:
        if not trace.passages:
            return "The knowledge base has no passage on this topic."
        s = trace.signals
        top = trace.passages[0].passage
        if decision.rule == "score_gap" and len(trace.passages) > 1:
            second = trace.passages[1].passage
            if second.doc_id == top.doc_id:  # two passages of one document: name it once
                return (f"The knowledge base does not seem to cover this topic: no passage stands out — the "
                        f"closest two, both in “{top.title}” ({top.doc_id}), match weakly and almost equally "
                        f"(score gap {s.score_gap:.2f}).")
            return (f"The knowledge base does not seem to cover this topic: no document stands out — the closest, "
                    f"“{top.title}” ({top.doc_id}) and “{second.title}” ({second.doc_id}), match weakly and "
                    f"almost equally (score gap {s.score_gap:.2f}).")
        if decision.rule == "topic_absent":  # judged by the calibrated probability, not by retrieval's raw scores
            return (f"The knowledge base does not seem to cover this topic: the closest document, “{top.title}” "
                    f"({top.doc_id}), is probably about something else ({fired_comparisons(decision, first=True)}).")
        return (f"The knowledge base does not seem to cover this topic: the closest document, “{top.title}” "
                f"({top.doc_id}), matches only weakly (retrieval confidence {s.confidence:.2f}, "
                f"{s.coverage:.0%} of the question's terms).")

    @staticmethod
    def _missing_fact(trace: Trace, decision: Decision, abduction: Abduction | None) -> str:
        kept = trace.kept_passages() or trace.passages
        # the document of the sentence the answer would have come from, which the card quotes, where there is one (a
        # browser walkthrough: "the closest document is “SS Meridian Star”" above Osric Vell's "… he died in 1959.")
        answered = _passage(trace, trace.answer.passage_id) if trace.answer else None
        top = (answered or kept[0]).passage
        what = TYPE_WORDS.get(trace.claim.answer_type, "what the question asks")
        covered = f"The knowledge base covers this topic — the closest document is “{top.title}” ({top.doc_id}) — "
        reason = f"{covered}but it does not state {what}"
        if decision.rule == "answer_type":
            reason += (": no sentence of the evidence says how." if trace.claim.answer_type == "PROCEDURE"
                       else ": no sentence of the evidence holds a value of that kind.")
        elif decision.rule == "unknown_name":
            names = " or ".join(f"“{name}”" for name in calibrated.unknown_names(trace))
            reason += f": no passage retrieved for it mentions {names or 'what it names'}."
        elif decision.rule == "value_of_another":
            names = " or ".join(f"“{name}”" for name in calibrated.rivalled_names(trace))
            reason += (f": the value found, in “{trace.answer.sentence if trace.answer else ''}”, is said of "
                       f"something other than {names or 'what it names'}.")
        elif decision.rule == "low_sufficiency":
            reason += (f": no passage supports “{trace.claim.text}” "
                       f"(best entailment {trace.signals.sufficiency:.2f}).")
        elif decision.rule == "fact_absent" and trace.answer is not None and trace.answer.value:
            # a value of the asked kind was there: say so and why it was not given, or the card denies the sentence
            # it quotes ("does not state the number" beside "it had 412,000 inhabitants")
            reason = (f"{covered}but the evidence does not clearly state {what}: the likeliest value, "
                      f"“{trace.answer.value}” in “{trace.answer.sentence}”, is supported too weakly to give "
                      f"({fired_comparisons(decision).rstrip('.')}).")
        else:
            # a gate rule by the numbers it compared (its explanation is written for the gate trace, settings and
            # all); an answer check's reason already says what it found
            reason += f" ({fired_comparisons(decision).rstrip('.')})."
        if abduction is not None and abduction.triggered and abduction.best is not None:
            reason += f" The missing premise would be “{abduction.best.text}”, which nothing in it supports."
        return reason


def respond(trace: Trace, decision: Decision, generator: Backend | None = None,
            abduction: Abduction | None = None, answer_mode: str = "auto",
            repeat_similarity: float = 0.8) -> Response:
    """The response for the gate's decision."""
    if decision.action == "ANSWER":
        return AnswerAgent(generator, answer_mode).run(trace, decision, abduction)
    if decision.action == "ASK":
        return AskAgent(generator, repeat_similarity).run(trace, decision, abduction)
    if decision.action == "ABSTAIN":
        return AbstainAgent(generator).run(trace, decision, abduction)
    raise ValueError(f"unknown action {decision.action!r}; the gate returns ANSWER, ASK or ABSTAIN")


# --- answer-level abstention (seed 004 layers 2 and 3) -------------------------------------

# Seed 004's hedging patterns (word boundaries added so "maybe" does not match inside words),
# plus its "generic filler" layer.
HEDGING_PATTERNS = (
    re.compile(r"\bI('m not sure|'m uncertain|\s+don't know)\b", re.I),
    re.compile(r"\b(I think|maybe|possibly|perhaps)\b", re.I),
    re.compile(r"\bcannot (find|determine|answer)\b", re.I),
    re.compile(r"\bno (information|data|evidence)\b", re.I),
    re.compile(r"\bnot (mentioned|specified|stated)\b", re.I),
    re.compile(r"\b(as an ai|i hope this helps|i'm just an ai|it depends)\b", re.I),
)



def evidence_sentences(trace: Trace, response: Response) -> list[list[str]]:
    """The sentences of each passage a response cites (what its statement must be grounded in)."""
    ids = list(dict.fromkeys(c.passage_id for c in response.citations))
    out = []
    for pid in ids:
        p = _passage(trace, pid)
        cited = [c.sentence for c in response.citations if c.passage_id == pid]
        out.append(nli.premise_texts(p.passage) if p else cited)
    return out


def grounding_scores(statement: str, evidence: Sequence[Sequence[str]],
                     predict: Callable[[list[tuple[str, str]]], list[NliScores]] | None = None) -> NliScores | None:
    """NLI of the answer against its evidence (passages as sentence lists, scored sentence by
    sentence and in neighbouring pairs): each answer sentence is matched with the evidence unit
    that entails it most; the result is the weakest answer sentence's entailment and the
    strongest contradiction among those matches. None when there is nothing to check."""
    if evidence and isinstance(evidence[0], str):
        raise ValueError("pass the evidence as a list of passages, each a list of sentences")
    parts = [s.text for s in split_sentences(statement.strip())]
    evidence = [u for sentences in evidence for u in nli_units([s for s in sentences if s.strip()])]
    if not parts or not evidence:
        return None
    if predict is None:
        from core import nli
        predict = nli.predict
    scores = predict([(e, s) for s in parts for e in evidence])
    best = [max(scores[i * len(evidence):(i + 1) * len(evidence)], key=lambda x: x.entailment)
            for i in range(len(parts))]
    weakest = min(best, key=lambda x: x.entailment)
    return NliScores(entailment=weakest.entailment, neutral=weakest.neutral,
                     contradiction=max(b.contradiction for b in best))


def grounding_check(scores: NliScores | None, min_entailment: float = 0.5,
                    max_contradiction: float = 0.5) -> AnswerCheck:
    """Seed 004 layer 2 (pure): ABSTAIN when the answer is not entailed by its evidence, or is contradicted."""
    if scores is None:
        return AnswerCheck("answer_grounding", False, (), "no statement to ground (the answer follows from the "
                                                         "conditions, or cites nothing)")
    comparisons = (compare("answer_entailment", scores.entailment, "<", min_entailment),
                   compare("answer_contradiction", scores.contradiction, ">=", max_contradiction))
    fires = any(c.holds for c in comparisons)
    detail = (f"the answer is {'not ' if fires else ''}grounded in its evidence "
              f"(entailment {scores.entailment:.2f}, contradiction {scores.contradiction:.2f})")
    return AnswerCheck("answer_grounding", fires, comparisons, detail)


def hedging_check(text: str) -> AnswerCheck:
    """Seed 004 layer 3 (pure): ABSTAIN when the answer hedges or is generic filler."""
    matched = [m.group(0) for m in (p.search(text) for p in HEDGING_PATTERNS) if m]
    comparisons = (compare("hedging_matches", len(matched), ">", 0),)
    detail = f"hedging: {', '.join(repr(m) for m in matched)}" if matched else "no hedging"
    return AnswerCheck("hedging", bool(matched), comparisons, detail)


# The settings respond_checked reads: a cache of its result is keyed by these and (trace, decision).
RESPONSE_SETTINGS = ("generator", "generator_timeout", "answer_mode", "ask_repeat_similarity",
                     "rule_answer_grounding", "grounding_min", "grounding_contradiction_max", "rule_hedging")


def respond_checked(trace: Trace, decision: Decision, values: Mapping[str, Any] | None = None,
                    generator: Backend | None = None,
                    predict: Callable[[list[tuple[str, str]]], list[NliScores]] | None = None,
                    ) -> tuple[Response, tuple[RuleResult, ...]]:
    """The response to show for ``decision``, and for an ANSWER seed 004's answer-level checks
    as gate rules: grounding (NLI of the answer's statement against the passages it cites) and
    hedging. The first enabled check that fires turns the answer into the ABSTAIN agent's
    response with the check as its reason. Runs after ``decide()``, which stays model-free;
    ``values`` are settings (defaults fill the rest), ``generator`` overrides the ``generator``
    setting, ``predict`` the NLI model (tests)."""
    values = settings_mod.resolve(values)
    setup = ""
    if generator is None:
        generator, setup = backend_for(values)
    response = respond(trace, decision, generator, trace.abduction, values["answer_mode"],
                       values["ask_repeat_similarity"])
    if response.action != "ANSWER":
        return _with_warning(response, setup), ()
    scores = grounding_scores(response.statement, evidence_sentences(trace, response), predict)
    checks = (grounding_check(scores, values["grounding_min"], values["grounding_contradiction_max"]),
              hedging_check(response.statement))
    rules, decided = first_that_fires(  # as in the gate: the first enabled check that fires decides
        ((c.name, "ABSTAIN", c.comparisons, c.detail, c.fires) for c in checks), values)
    if decided is None:
        return _with_warning(response, setup), rules
    withheld = replace(decision, action="ABSTAIN", rule=decided.name, reason=decided.explanation)
    abstain = AbstainAgent(generator).run(trace, withheld, trace.abduction)
    note = f"the answer “{response.text}” was withheld by the {decided.name} rule: {decided.explanation}"
    return _with_warning(abstain, note, setup), rules


def _label_of(trace: Trace, passage: RetrievedPassage, sentence: str) -> str:
    """The NLI label the claim gets from ``sentence`` of ``passage``: its decisive sentence's verdict when it is
    that one (a contradicting sentence answers "no"), else the passage's best-entailing sentence's."""
    n = next((n for n in trace.nli if n.passage_id == passage.passage.id), None)
    if n is None:
        return ""
    return n.verdict.label if nli.decisive_premise(n, passage.passage) == sentence else n.claim.label


def _with_warning(response: Response, *notes: str) -> Response:
    warning = "; ".join(n for n in (response.warning, *notes) if n)
    return replace(response, warning=warning) if warning != response.warning else response



def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text
