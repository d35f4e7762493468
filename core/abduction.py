"""Abductive premises (seed 000): when the evidence is insufficient, propose the missing
premise and check it before anything relies on it.

Trigger: Sufficiency(Q,E) < τ. Candidates, at most ``m`` from each source: the generator's
("What assumption would make reasoning possible?"), one per missing condition (the condition
in the user's voice: "I have lived in Calvera for at least 3 years."), one per given KG
edge or triple, and the claim itself (the fact the question needs, which the KB may state outside E).
Validation, in two NLI batches over sentences and neighbouring-sentence pairs: a candidate that
an evidence sentence about the same things contradicts is rejected (and kept, marked);
Entail(E,p) = max entailment of p by the evidence; Retrieve(p) = max entailment of p by the
passages retrieved for p outside E; Score = α·Entail +
β·Retrieve; p* is the best candidate not rejected. A p* that the KB outside E supports closes
the gap (ANSWER, citing it). Otherwise a premise about the user names what to ASK; with
none, the needed fact is not in the KB (ABSTAIN). Premises about the user are never
"supported" by the KB: only the user can establish them.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable, Sequence

from core import models, nli, prompts
from core.generation import Backend, TemplateBackend
from core.kb import KnowledgeBase
from core.retrieval import Retriever
from core.stepback import content_words
from core.text import normalized
from core.types import Abduction, Condition, Generated, KgEdge, NliScores, Premise, RetrievedPassage

LINE_PREFIX = re.compile(r"^\s*(?:[*\-•]|\d+[.):]|premise\s*\d*\s*[:.)-])\s*", re.I)
FIRST_PERSON = re.compile(r"^(?:i|my|i'm|i've)\b", re.I)
SENTENCE_END = re.compile(r"[.!?…][\"'”’)]*$")
NONE_LINE = re.compile(r"^(?:none|n/a)\b", re.I)
OUTCOMES = ("not_needed", "answer", "ask", "abstain")

Predict = Callable[[list[tuple[str, str]]], list[NliScores]]


class AbductionStage:
    """Generate and validate missing premises; ``predict`` defaults to ``core.nli.predict``."""

    def __init__(self, tau: float = 0.5, m: int = 3, alpha: float = 0.5, beta: float = 0.5,
                 reject_contradiction: float = 0.5, support_min: float = 0.5, top_k: int = 3,
                 related_overlap: float = 0.4, fusion_alpha: float = 0.6, generator: Backend | None = None,
                 max_tokens: int = 48, predict: Predict | None = None):
        for name, value in (("tau", tau), ("alpha", alpha), ("beta", beta), ("fusion_alpha", fusion_alpha),
                            ("reject_contradiction", reject_contradiction), ("support_min", support_min),
                            ("related_overlap", related_overlap)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"abduction {name} must lie in [0, 1], not {value!r}")
        if m < 1 or top_k < 1:
            raise ValueError(f"abduction needs m ≥ 1 and top_k ≥ 1 (got m={m}, top_k={top_k})")
        self.tau, self.m, self.alpha, self.beta = tau, m, alpha, beta
        self.reject_contradiction, self.support_min, self.top_k = reject_contradiction, support_min, top_k
        self.related_overlap = related_overlap
        self.fusion_alpha = fusion_alpha
        self.generator = generator or TemplateBackend()
        self.max_tokens = max_tokens
        self._predict = predict

    def predict(self, pairs: list[tuple[str, str]]) -> list[NliScores]:
        if self._predict is not None:
            return self._predict(pairs)
        return nli.predict(pairs)

    def run(self, kb: KnowledgeBase, question: str, claim: str, evidence: Sequence[RetrievedPassage],
            sufficiency: float, missing: Sequence[Condition | str] = (), known: Sequence[str] = (),
            kg: Sequence[KgEdge | tuple[str, str, str]] = ()) -> Abduction:
        """``evidence``: the kept passages E; ``missing``: the variables stage's open conditions;
        ``known``: the user's stated facts; ``kg``: optional bridges, graph edges (their rendered
        sentence is the premise) or (subject, relation, object) triples."""
        if sufficiency >= self.tau:
            return Abduction(False, sufficiency, self.tau)
        if not evidence:
            return Abduction(True, sufficiency, self.tau, outcome="abstain",
                             warnings=("no evidence was retrieved, so no premise can bridge it",))
        evidence = list(evidence)[: self.top_k]  # E: the best kept passages (bounds the NLI pairs)
        candidates, warnings = self._candidates(question, claim, evidence, missing, known, kg)
        scored = self._validate(kb, candidates, evidence)
        scored.sort(key=lambda p: (p.status == "rejected", -p.score))
        best = scored[0] if scored and scored[0].status != "rejected" else None
        if best is not None and best.status == "supported":
            outcome, ask_about = "answer", ""
        else:
            # What to ask: a missing condition first, else another statement about the user.
            user = sorted((p for p in scored if p.status == "about_user" and p.origin != "claim"),
                          key=lambda p: p.origin != "missing_variable")
            outcome, ask_about = ("ask", user[0].variable or user[0].text) if user else ("abstain", "")
        return Abduction(True, sufficiency, self.tau, tuple(scored), best, outcome, ask_about, tuple(warnings))

    # --- candidates ---------------------------------------------------------------------

    def _candidates(self, question, claim, evidence, missing, known, kg) -> tuple[list[Premise], list[str]]:
        out: list[Premise] = []
        for item in list(missing)[: self.m]:
            variable = item.text if isinstance(item, Condition) else str(item)
            text = item.user_voice if isinstance(item, Condition) and item.user_voice else _user_voice(variable)
            out.append(Premise(text=text, origin="missing_variable", variable=variable))
        for item in list(kg)[: self.m]:
            out.append(Premise(text=_kg_sentence(item), origin="kg"))
        if claim.strip():
            out.append(Premise(text=_sentence(claim), origin="claim"))
        warnings: list[str] = []
        generated, lines = self.generate(question, [_closest_sentence(p, question) for p in evidence[:2]], known)
        if generated.error:
            warnings.append(generated.error)
        out += [Premise(text=line, origin="generator", backend=generated.backend) for line in lines]
        seen: set[str] = set()
        unique = []
        for p in out:
            if normalized(p.text) not in seen:
                seen.add(normalized(p.text))
                unique.append(p)
        return unique, warnings

    def generate(self, question: str, hint: Sequence[str], known: Sequence[str]) -> tuple[Generated, list[str]]:
        """The generator's reply and the premises taken from it: at most ``m`` lines (decoding
        stops there), none repeating the hint sentences or the user's facts; none from the template."""
        generated = self.generator.generate(prompts.premises(question, hint, known, self.m), self.max_tokens,
                                            max_lines=self.m)
        if generated.error or generated.backend == "template":
            return generated, []
        skip = {normalized(s) for s in list(known) + list(hint)}
        return generated, [line for line in _premise_lines(generated.text)[: self.m] if normalized(line) not in skip]

    # --- validation ---------------------------------------------------------------------

    def _validate(self, kb: KnowledgeBase, candidates: list[Premise],
                  evidence: Sequence[RetrievedPassage]) -> list[Premise]:
        if not candidates:
            return []
        ev = [(p.passage.id, u) for p in evidence for u in nli_units(nli.premise_texts(p.passage))]
        scores = self.predict([(u, c.text) for c in candidates for _, u in ev])
        world = [i for i, c in enumerate(candidates) if not _about_user(c)]
        outside = self._outside(kb, [candidates[i].text for i in world], {p.passage.id for p in evidence})
        pairs, owners = [], []
        for i, found in zip(world, outside):
            for passage, sentence in found:
                pairs.append((sentence, candidates[i].text))
                owners.append((i, passage, sentence))
        support = self.predict(pairs) if pairs else []
        best_support: dict[int, tuple[float, RetrievedPassage, str]] = {}
        for (i, passage, sentence), s in zip(owners, support):
            if i not in best_support or s.entailment > best_support[i][0]:
                best_support[i] = (s.entailment, passage, sentence)
        out = []
        for i, c in enumerate(candidates):
            block = scores[i * len(ev):(i + 1) * len(ev)]
            e = max(range(len(ev)), key=lambda k: block[k].entailment)
            # An SNLI-trained model calls many unrelated sentence pairs contradictions; only a
            # unit about the same things (sharing enough of p's content words) may reject p.
            words = content_words(c.text)
            related = [k for k, (_, u) in enumerate(ev)
                       if words and len(words & content_words(u)) >= self.related_overlap * len(words)]
            x = max(related, key=lambda k: block[k].contradiction) if related else e
            entail, contradiction = block[e].entailment, (block[x].contradiction if related else 0.0)
            retrieve, sup, sup_sentence = best_support.get(i, (0.0, None, ""))
            # A sentence elsewhere in the KB that entails p more strongly than a related evidence
            # sentence contradicts it wins: the weaker contradiction is the model reading "designed
            # by Edith Marlowe" against "Edith Marlowe was born in Tessby".
            rejected = contradiction >= self.reject_contradiction and contradiction > max(entail, retrieve)
            where = ev[x] if rejected else ev[e]
            status = ("rejected" if rejected else "about_user" if _about_user(c)
                      else "supported" if retrieve >= self.support_min
                      else "in_evidence" if entail >= self.support_min else "unsupported")
            out.append(replace(c, entail=round(entail, 4), contradiction=round(contradiction, 4),
                               evidence_passage=where[0], evidence_sentence=where[1],
                               retrieve=round(retrieve, 4), support_passage=sup.passage.id if sup else "",
                               support_doc=sup.passage.doc_id if sup else "",
                               support_title=sup.passage.title if sup else "", support_sentence=sup_sentence,
                               score=round(self.alpha * entail + self.beta * retrieve, 4),
                               status=status))
        return out

    def _outside(self, kb: KnowledgeBase, texts: list[str],
                 exclude: set[str]) -> list[list[tuple[RetrievedPassage, str]]]:
        """For each premise, the sentences of its top_k retrieved passages that are not in E."""
        if not texts:
            return []
        retriever = Retriever(top_k=self.top_k + len(exclude), fusion_alpha=self.fusion_alpha)
        vectors = models.embed(texts)
        out = []
        for text, vector in zip(texts, vectors):
            found = [p for p in retriever.run(kb, text, query_vector=vector) if p.passage.id not in exclude]
            out.append([(p, u) for p in found[: self.top_k] for u in nli_units(nli.premise_texts(p.passage))])
        return out


def _about_user(p: Premise) -> bool:
    return p.origin == "missing_variable" or bool(FIRST_PERSON.match(p.text))


def _user_voice(condition: str) -> str:
    from core import voice
    return voice.to_user_voice(condition)



def nli_units(sentences: list[str]) -> list[str]:
    """Each sentence and each pair of neighbours ("It was designed by …" needs the sentence
    before it to say what "it" is), as ``core.nli.best_sentences`` scores passages."""
    return sentences + [f"{a} {b}" for a, b in zip(sentences, sentences[1:])]


def _closest_sentence(p: RetrievedPassage, question: str) -> str:
    """The passage sentence sharing most content words with the question (a prompt hint)."""
    words = content_words(question)
    return max(nli.premise_texts(p.passage), key=lambda s: len(words & content_words(s)))


def _premise_lines(text: str) -> list[str]:
    """Generated text → premise statements: one per line, numbering stripped, 3–40 words, no
    questions, no "None …" filler. A last line that does not end a sentence was cut off by the
    token limit ("The ship that Osric Vell commanded from 1931 to 1945") and is dropped."""
    lines = [LINE_PREFIX.sub("", line).strip().strip('"“”') for line in text.splitlines()]
    lines = [line for line in lines if line]
    if lines and not SENTENCE_END.search(lines[-1]):
        lines.pop()
    return [_sentence(line) for line in lines
            if not line.endswith("?") and not NONE_LINE.match(line) and 3 <= len(line.split()) <= 40]


def _kg_sentence(item: KgEdge | tuple[str, str, str]) -> str:
    """A graph edge's rendered sentence ("Edith Marlowe was born in Tessby."; its relation is a
    lemma, "bear_in"), or a (subject, relation, object) triple joined into one."""
    if isinstance(item, KgEdge) and item.text.strip():
        return _sentence(item.text)
    if isinstance(item, KgEdge) or len(item) != 3 or not all(isinstance(x, str) and x.strip() for x in item):
        raise ValueError(f"a KG bridge is a graph edge with a sentence or a (subject, relation, object) "
                         f"triple of strings, not {item!r}")
    s, r, o = (x.strip() for x in item)
    return _sentence(f"{s} {r.replace('_', ' ')} {o}")


def _sentence(text: str) -> str:
    text = " ".join(text.split()).rstrip(" .")
    return text[:1].upper() + text[1:] + "."
