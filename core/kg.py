"""The decision-weighted knowledge graph of seed 002 §6–7, built per question over the retrieved
passages (``KnowledgeBase.graph_of``) and queried for that question.

Build (``GraphBuilder.run``): spaCy named entities are the nodes, after the seed's validator (no
pronouns, stopwords, pure numbers or strings under 3 characters; seven categories). Edges are
subject–verb–object triples (confidence 0.8) and verb–preposition–object chains (0.7) whose both
ends are entities; weak verbs (copulae, auxiliaries) give none of their own. Each sentence is parsed
on its own (headings and bullets are units, so NER never runs across them). Each triple is rendered
as a short sentence and validated with the embedding model: ``sem`` = cosine(triple sentence, its
source) + log(1 + freq)·0.03; edges with ``sem`` < τ_edge are dropped, then isolated nodes are
pruned. The source is the extraction sentence by default: the seed compares with the whole chunk,
which on 700-character passages measures how central a fact is to its passage rather than whether
the triple is grounded (on the sample KB it dropped "River Ost flows to Sable Sea" and kept
"Museum keeps from twentieth centuries"); ``validate_against="passage"`` restores the seed's check.
An edge's weight is seed Eq. 17 with the Eq. 22 cap, ``w = min(cap, α·sem + (1−α)·act)``, where
``act`` starts at the extraction confidence and decision reinforcement (``reinforce``, Phase 3)
moves it.

Query (``SubgraphQuery.run``): the question's entities and embedding (and each known variable)
are matched to nodes, the 2-hop ego graph around them is cut to the top triples by weight that are
relevant to the question, ``?var`` nodes for missing variables hang off their nearest anchor by
``requires`` edges, and PathScore (Eq. 18) is the best product of edge weights along a path
between matched entities. The result is plain data for the gate and the UI.
"""
from __future__ import annotations

import heapq
import json
import math
import os
import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from core import models
from core.text import content_words
from core.types import KgEdge, KgNode, NodeMatch, Passage, Subgraph, from_dict, to_dict

FORMAT_VERSION = 1
Progress = Callable[[int, int, str], None]

# spaCy NER labels → the seed's seven categories. CARDINAL and ORDINAL are counts, not things: dropped.
CATEGORIES = {
    "PERSON": "Person", "ORG": "Organisation", "GPE": "Location", "LOC": "Location", "FAC": "Location",
    "WORK_OF_ART": "Work", "PRODUCT": "Work", "LAW": "Work", "EVENT": "Event", "NORP": "Concept",
    "LANGUAGE": "Concept", "DATE": "Attribute", "TIME": "Attribute", "MONEY": "Attribute",
    "QUANTITY": "Attribute", "PERCENT": "Attribute",
}
PRONOUNS = frozenset("i me my mine myself you your yours yourself yourselves he him his himself she her hers "
                     "herself it its itself we us our ours ourselves they them their theirs themselves this "
                     "that these those who whom whose which what".split())
WEAK_VERBS = frozenset({"be", "have", "do", "become", "seem"})
SUBJECT_DEPS = ("nsubj", "nsubjpass")
OBJECT_DEPS = ("dobj", "dative", "oprd")
PURE_NUMBER = re.compile(r"[\d\s.,:/%£$€¥+\-–]+")
MARKDOWN = re.compile(r"(?m)^[ \t]*(?:#{1,6}|[*\-•+]|\d{1,3}[.)]|\([a-z0-9]{1,4}\))[ \t]+")
LEADING_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)
POSSESSIVE = re.compile(r"\s*['’]s?$")


@dataclass(frozen=True)
class KgStats:
    """Size of the graph and what validation kept, for the index page and the bench."""
    passages: int
    candidate_triples: int  # triple occurrences extracted before validation
    unique_triples: int  # distinct (subject, relation, object) before validation
    edges: int
    nodes: int
    kept_ratio: float  # edges / unique_triples
    nodes_before_pruning: int
    avg_weight: float
    categories: dict[str, int]
    seconds: float
    layer: str = "base"  # base | reinforced
    reinforced_items: int = 0
    reinforced_edges: int = 0


# --- entities -------------------------------------------------------------------------

def normalise(text: str) -> str:
    """The display label of an entity: whitespace collapsed, leading article and possessive removed."""
    text = " ".join(text.split()).strip(" \"'“”‘’.,;:()[]")
    text = POSSESSIVE.sub("", LEADING_ARTICLE.sub("", text))
    return text.strip(" \"'“”‘’.,;:()[]")


def node_id(label: str) -> str:
    return label.lower()


def valid_entity(label: str, tokens: Sequence[Any] = ()) -> bool:
    """The seed's hard validator; ``tokens`` (spaCy tokens of the span) catch pronoun/stopword-only spans."""
    low = label.lower()
    if len(label) < 3 or low in PRONOUNS or PURE_NUMBER.fullmatch(label):
        return False
    from spacy.lang.en.stop_words import STOP_WORDS
    words = low.split()
    if low in STOP_WORDS or words[0] in STOP_WORDS or words[-1] in STOP_WORDS:  # "east coast of"
        return False
    return not tokens or not all(t.pos_ == "PRON" or t.is_stop or t.is_punct for t in tokens)


def _entities(doc, seen: Mapping[str, tuple[str, str, str]] = {}) -> dict[int, tuple[str, str, str]]:
    """token index → (node id, label, category) for every token inside a valid entity.

    A one-word name that ends a longer name already seen in the document ("Greer" after "Anselm
    Greer") is that entity.
    """
    out = {}
    for ent in doc.ents:
        category = CATEGORIES.get(ent.label_)
        label = normalise(ent.text)
        if not category or "\n" in ent.text or not valid_entity(label, ent):
            continue
        entity = (node_id(label), label, category)
        if " " not in label:
            entity = next((e for e in seen.values() if e[1].endswith(" " + label) and e[2] != "Attribute"),
                          entity)
        for token in ent:
            out[token.i] = entity
    return out


def _units(passage: Passage) -> list[tuple[tuple[int, int], str]]:
    """The passage's sentences (headings and bullets are units of their own), markdown markers blanked,
    keyed by their offsets in the document."""
    if passage.sentences:
        return [((s.start, s.end), plain(s.text)) for s in passage.sentences if s.text.strip()]
    blocks = re.finditer(r"\S(?:.|\n(?!\s*\n))*", passage.text)
    return [((passage.start + m.start(), passage.start + m.end()), plain(m.group())) for m in blocks]


# --- triples ---------------------------------------------------------------------------

@dataclass(frozen=True)
class _Triple:
    source: str
    relation: str
    target: str
    text: str
    sentence: str
    passage_id: str
    conf: float


def plain(text: str) -> str:
    """Markdown heading and bullet markers blanked out (same length), so NER does not swallow them."""
    return MARKDOWN.sub(lambda m: " " * len(m.group()), text)


def _with_conj(tokens: Iterable[Any]) -> list[Any]:
    out = []
    for t in tokens:
        out.append(t)
        out.extend(c for c in t.conjuncts if c.i > t.i)
    return out


def _subjects(verb) -> list[Any]:
    subjects = [c for c in verb.children if c.dep_ in SUBJECT_DEPS]
    if verb.dep_ == "relcl" and (not subjects or all(s.tag_ in ("WDT", "WP") for s in subjects)):
        return [verb.head]  # "Osric Vell, who commanded …": the relative clause's subject is its head
    if not subjects and verb.dep_ == "conj" and verb.head.pos_ in ("VERB", "AUX"):
        return _subjects(verb.head)  # "X founded A and built B"
    return _with_conj(subjects)


def _verb_phrase(verb) -> str:
    words = [c for c in verb.children if c.dep_ in ("aux", "auxpass", "neg")] + [verb]
    return " ".join(t.text for t in sorted(words, key=lambda t: t.i))


class _Resolver:
    """Maps a token to an entity: itself, an apposition ("the engineer Edith Marlowe"), or, with title
    coreference, a definite description whose head is the head of the document's title ("the bridge")."""

    def __init__(self, entities: dict[int, tuple[str, str, str]], title: tuple[str, str, str] | None,
                 title_head: str):
        self.entities = entities
        self.title = title
        self.title_head = title_head

    def __call__(self, token) -> tuple[str, str, str] | None:
        if token.i in self.entities:
            return self.entities[token.i]
        for child in token.children:
            if child.dep_ == "appos" and child.i in self.entities:
                return self.entities[child.i]
        if (self.title and token.pos_ == "NOUN" and token.lemma_.lower() == self.title_head
                and any(c.dep_ == "det" and c.lower_ == "the" for c in token.children)):
            return self.title
        return None


def extract_triples(doc, passage_id: str, resolve: _Resolver, svo_conf: float, prep_conf: float) -> list[_Triple]:
    """SVO and verb–preposition–object triples between entities in one parsed passage.

    Weak verbs give no triple of their own, but a copula whose complement noun carries the relation
    does give a chain ("X is a weekly payment from Y" → ``be_payment_from``).
    """
    triples = []
    for verb in doc:
        copula = verb.lemma_.lower() == "be" and any(c.dep_ == "attr" for c in verb.children)
        if not copula and (verb.pos_ != "VERB" or verb.lemma_.lower() in WEAK_VERBS):
            continue
        subjects = [(t, resolve(t)) for t in _subjects(verb)]
        subjects = [(t, e) for t, e in subjects if e]
        if not subjects:
            continue
        lemma = ("not_" if any(c.dep_ == "neg" for c in verb.children) else "") + verb.lemma_.lower()
        phrase = _verb_phrase(verb)
        targets = []  # (object token, relation, verb words, confidence)
        objects = _with_conj(c for c in verb.children if c.dep_ in (("attr",) if copula else OBJECT_DEPS))
        for obj in objects:
            if not copula:
                targets.append((obj, lemma, phrase, svo_conf))
            if not resolve(obj):  # "signed an agreement with X": chain through a non-entity object
                for prep in (c for c in obj.children if c.dep_ == "prep"):
                    for pobj in _with_conj(c for c in prep.children if c.dep_ == "pobj"):
                        targets.append((pobj, f"{lemma}_{obj.lemma_.lower()}_{prep.lower_}",
                                        f"{phrase} {obj.text} {prep.text}", prep_conf))
        for prep in (c for c in verb.children if c.dep_ in ("prep", "agent") and not copula):
            for pobj in _with_conj(c for c in prep.children if c.dep_ == "pobj"):
                targets.append((pobj, f"{lemma}_{prep.lower_}", f"{phrase} {prep.text}", prep_conf))
        sentence = verb.sent.text.strip()
        for _, (sid, slabel, _) in subjects:
            for token, relation, words, conf in targets:
                target = resolve(token)
                if target and target[0] != sid:
                    triples.append(_Triple(sid, relation, target[0], f"{slabel} {words} {target[1]}.",
                                           sentence, passage_id, conf))
    return triples


# --- the graph -------------------------------------------------------------------------

class KnowledgeGraph:
    """Nodes, edges and their embeddings (node labels, triple sentences); read-only once built."""

    def __init__(self, nodes: Sequence[KgNode], edges: Sequence[KgEdge], node_vectors: np.ndarray,
                 edge_vectors: np.ndarray, stats: KgStats, config: Mapping[str, Any]):
        self.nodes = tuple(nodes)
        self.edges = tuple(edges)
        self.node_vectors = np.asarray(node_vectors, dtype="float32")
        self.edge_vectors = np.asarray(edge_vectors, dtype="float32")
        if len(self.node_vectors) != len(self.nodes) or len(self.edge_vectors) != len(self.edges):
            raise ValueError(f"{len(self.node_vectors)} node vectors for {len(self.nodes)} nodes and "
                             f"{len(self.edge_vectors)} edge vectors for {len(self.edges)} edges: rebuild the graph")
        self.stats = stats
        self.config = dict(config)
        self.row = {n.id: i for i, n in enumerate(self.nodes)}
        self.adjacency: dict[str, list[int]] = defaultdict(list)
        for i, e in enumerate(self.edges):
            self.adjacency[e.source].append(i)
            self.adjacency[e.target].append(i)
        self.by_passage: dict[str, list[str]] = defaultdict(list)
        for n in self.nodes:
            for pid in n.passages:
                self.by_passage[pid].append(n.id)

    def node(self, nid: str) -> KgNode:
        return self.nodes[self.row[nid]]

    def bridges(self, inside: set[str], question: str) -> list[KgEdge]:
        """The bridge a multi-hop question lacks: E links the question's entity to another one
        ("The Harlow Bridge was designed by Edith Marlowe"), and the graph knows a fact about that
        other entity from outside E ("Edith Marlowe was born in Tessby"). Offered: facts about an
        entity of E that the question does not name, from passages outside E, whose relation words
        share a word with the question ("born") — any KB fact is "supported" by the KB, so only
        one about what the question asks may become p*. Most shared words first."""
        asked = content_words(question)
        middle = {n for pid in inside for n in self.by_passage.get(pid, ())
                  if not content_words(self.node(n).label) <= asked}
        ranked = []
        for i, e in enumerate(self.edges):
            if e.relation == "requires" or not e.text or e.passage_id in inside or not {e.source, e.target} & middle:
                continue
            relation = content_words(e.text) - content_words(self.node(e.source).label) \
                - content_words(self.node(e.target).label)
            shared = len(relation & asked)
            if shared:
                ranked.append((-shared, -e.weight, i))
        return [self.edges[i] for *_, i in sorted(ranked)]

    def save(self, folder: str | Path, name: str = "kg") -> None:
        """``<name>.json`` (nodes, edges, stats, settings) and ``<name>.npz`` (embeddings), written atomically."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        data = {"format": FORMAT_VERSION, "config": self.config, "stats": to_dict(self.stats),
                "nodes": to_dict(self.nodes), "edges": to_dict(self.edges)}
        tmp = folder / f".{name}.json.tmp"
        tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        tmp_npz = folder / f".{name}.tmp.npz"
        np.savez(tmp_npz, nodes=self.node_vectors, edges=self.edge_vectors)
        os.replace(tmp_npz, folder / f"{name}.npz")
        os.replace(tmp, folder / f"{name}.json")

    @classmethod
    def load(cls, folder: str | Path, name: str = "kg") -> "KnowledgeGraph":
        folder = Path(folder)
        path, npz = folder / f"{name}.json", folder / f"{name}.npz"
        if not path.is_file() or not npz.is_file():
            raise FileNotFoundError(f"no knowledge graph in {folder} ({path.name} / {npz.name} missing): "
                                    "re-index the knowledge base to build it")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            arrays = np.load(npz)
            if data.get("format") != FORMAT_VERSION:
                raise ValueError(f"format {data.get('format')!r}, expected {FORMAT_VERSION}")
            nodes = [from_dict(KgNode, n) for n in data["nodes"]]
            edges = [from_dict(KgEdge, e) for e in data["edges"]]
            graph = cls(nodes, edges, arrays["nodes"], arrays["edges"], from_dict(KgStats, data["stats"]),
                        data["config"])
        except (ValueError, KeyError, TypeError, OSError) as exc:
            raise ValueError(f"the knowledge graph in {folder} cannot be read ({exc}): re-index the "
                             "knowledge base to rebuild it") from None
        return graph


def edge_weight(sem: float, act: float, alpha: float, cap: float) -> float:
    """Seed Eq. 17 with the Eq. 22 cap."""
    return round(float(min(cap, max(0.0, alpha * sem + (1 - alpha) * act))), 4)


@dataclass(frozen=True)
class GraphBuilder:
    """Index-time construction: extraction (Phase 1), semantic validation (Phase 2), pruning."""
    edge_min: float = 0.50  # τ_edge
    svo_conf: float = 0.8
    prep_conf: float = 0.7
    freq_bonus: float = 0.03
    alpha: float = 0.5
    weight_cap: float = 0.95
    title_coref: bool = True
    validate_against: str = "sentence"  # sentence | passage
    batch: int = 64  # passages parsed per progress step

    def __post_init__(self):
        if self.validate_against not in ("sentence", "passage"):
            raise ValueError(f"validate_against must be sentence or passage, not {self.validate_against!r}")
        for name in ("edge_min", "svo_conf", "prep_conf", "alpha", "weight_cap"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], not {getattr(self, name)!r}")

    def run(self, passages: Sequence[Passage], passage_vectors: np.ndarray | None = None,
            progress: Progress | None = None) -> KnowledgeGraph:
        """The graph of ``passages``; ``passage_vectors`` (the KB's normalised passage embeddings,
        row-aligned) avoid re-embedding the passages."""
        started = time.perf_counter()
        report = progress or (lambda done, total, stage: None)
        total = len(passages)
        if passage_vectors is not None and len(passage_vectors) != total:
            raise ValueError(f"{len(passage_vectors)} passage vectors for {total} passages: pass the KB's "
                             "embeddings row-aligned with its passages, or none")

        mentions: dict[str, Counter] = defaultdict(Counter)  # id → label counts
        categories: dict[str, Counter] = defaultdict(Counter)
        node_passages: dict[str, dict[str, None]] = defaultdict(dict)
        triples: list[_Triple] = []
        titles = {p.doc_id: p.title for p in passages}
        title_heads = dict(zip(titles, (d[-1].lemma_.lower() if len(d) else "" for d in
                                        models.parse([normalise(t) for t in titles.values()]))))
        doc_id, seen, done_units = None, {}, {}  # per document: entities so far, sentences parsed
        report(0, total, "knowledge graph: parsing")
        for lo in range(0, total, self.batch):
            chunk = passages[lo:lo + self.batch]
            units = [(passage, key, text) for passage in chunk for key, text in _units(passage)]
            todo = [(passage, key, text) for passage, key, text in units
                    if (passage.doc_id, key) not in done_units]
            parsed = dict(zip(((p.doc_id, k) for p, k, _ in todo), models.parse([t for _, _, t in todo])))
            for passage, key, _ in units:
                if passage.doc_id != doc_id:
                    doc_id, seen, done_units = passage.doc_id, {}, {}
                if (doc_id, key) in done_units:  # a sentence repeated by chunk overlap: mentions only
                    for nid in done_units[(doc_id, key)]:
                        node_passages[nid][passage.id] = None
                    continue
                doc = parsed[(doc_id, key)]
                entities = _entities(doc, seen)
                for ent in doc.ents:
                    if ent.start in entities:
                        nid, label, category = entities[ent.start]
                        mentions[nid][label] += 1
                        categories[nid][category] += 1
                        node_passages[nid][passage.id] = None
                        seen.setdefault(nid, entities[ent.start])
                done_units[(doc_id, key)] = {e[0] for e in entities.values()}
                title = seen.get(node_id(normalise(passage.title))) if self.title_coref else None
                resolver = _Resolver(entities, title, title_heads.get(doc_id, ""))
                triples.extend(extract_triples(doc, passage.id, resolver, self.svo_conf, self.prep_conf))
            report(min(lo + self.batch, total), total, "knowledge graph: parsing")

        edges, edge_vectors = self._validate(passages, passage_vectors, triples, report)
        nodes, node_vectors = self._nodes(edges, mentions, categories, node_passages, report)
        stats = KgStats(passages=total, candidate_triples=len(triples),
                        unique_triples=len({(t.source, t.relation, t.target) for t in triples}),
                        edges=len(edges), nodes=len(nodes),
                        kept_ratio=len(edges) / max(1, len({(t.source, t.relation, t.target) for t in triples})),
                        nodes_before_pruning=len(mentions),
                        avg_weight=round(float(np.mean([e.weight for e in edges])), 4) if edges else 0.0,
                        categories=dict(Counter(n.category for n in nodes)),
                        seconds=round(time.perf_counter() - started, 3))
        return KnowledgeGraph(nodes, edges, node_vectors, edge_vectors, stats, self.config())

    def config(self) -> dict[str, Any]:
        return {"edge_min": self.edge_min, "svo_conf": self.svo_conf, "prep_conf": self.prep_conf,
                "freq_bonus": self.freq_bonus, "alpha": self.alpha, "weight_cap": self.weight_cap,
                "title_coref": self.title_coref, "validate_against": self.validate_against,
                "embedder": models.role_source("embedder"), "spacy": models.role_source("spacy")}

    def _validate(self, passages, passage_vectors, triples, report):
        """Phase 2: cosine(triple sentence, its source) + frequency bonus ≥ τ_edge."""
        if not triples:
            return [], np.zeros((0, 0), dtype="float32")
        row = {p.id: i for i, p in enumerate(passages)}
        texts = list(dict.fromkeys(t.text for t in triples))
        if self.validate_against == "sentence":
            texts = list(dict.fromkeys(texts + [t.sentence for t in triples]))
        elif passage_vectors is None:
            used = sorted({row[t.passage_id] for t in triples})
            texts += [passages[i].text for i in used]
        report(0, len(texts), "knowledge graph: validating triples")
        vectors = []
        step = 256
        for lo in range(0, len(texts), step):
            vectors.append(models.embed(texts[lo:lo + step]))
            report(min(lo + step, len(texts)), len(texts), "knowledge graph: validating triples")
        text_vectors = dict(zip(texts, np.concatenate(vectors)))

        def grounding(t: _Triple) -> np.ndarray:
            if self.validate_against == "sentence":
                return text_vectors[t.sentence]
            if passage_vectors is None:
                return text_vectors[passages[row[t.passage_id]].text]
            return np.asarray(passage_vectors[row[t.passage_id]], dtype="float32")

        groups: dict[tuple[str, str, str], list[tuple[float, _Triple]]] = defaultdict(list)
        for t in triples:
            cosine = float(np.dot(text_vectors[t.text], grounding(t)))
            groups[(t.source, t.relation, t.target)].append((cosine, t))
        edges, vectors = [], []
        for (source, relation, target), occurrences in groups.items():
            cosine, best = max(occurrences, key=lambda o: o[0])
            freq = len({t.passage_id for _, t in occurrences})
            sem = round(cosine + math.log1p(freq) * self.freq_bonus, 4)
            if sem < self.edge_min:
                continue
            act = max(t.conf for _, t in occurrences)
            edges.append(KgEdge(source, target, relation, edge_weight(sem, act, self.alpha, self.weight_cap),
                                sem, act, best.sentence, best.passage_id, best.text, freq, act))
            vectors.append(text_vectors[best.text])
        return edges, np.asarray(vectors, dtype="float32")

    @staticmethod
    def _nodes(edges, mentions, categories, node_passages, report):
        """Entities that kept an edge (isolated ones are pruned), with their label embeddings."""
        used = list(dict.fromkeys(n for e in edges for n in (e.source, e.target)))
        nodes = [KgNode(nid, mentions[nid].most_common(1)[0][0], "entity", categories[nid].most_common(1)[0][0],
                        sum(mentions[nid].values()), tuple(node_passages[nid])) for nid in used]
        report(0, len(nodes), "knowledge graph: embedding nodes")
        vectors = models.embed([n.label for n in nodes]) if nodes else np.zeros((0, 0), dtype="float32")
        report(len(nodes), len(nodes), "knowledge graph: embedding nodes")
        return nodes, vectors


# --- query time ------------------------------------------------------------------------

@dataclass(frozen=True)
class SubgraphQuery:
    """Seed 002 §7.1: the question's neighbourhood in the graph, ``?var`` nodes and PathScore."""
    match_min: float = 0.55
    match_top: int = 5
    known_top: int = 2
    hops: int = 2
    max_triples: int = 12
    relevance_min: float = 0.35
    var_anchor_min: float = 0.30
    var_weight: float = 0.9
    path_min: float = 0.60

    def __post_init__(self):
        for name in ("match_min", "relevance_min", "var_anchor_min", "var_weight", "path_min"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], not {getattr(self, name)!r}")
        for name in ("match_top", "known_top", "hops", "max_triples"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be ≥ 0, not {getattr(self, name)!r}")

    def run(self, graph: KnowledgeGraph, question: str, known: Sequence[str] = (),
            missing: Sequence[str] = (), anchor_passages: Sequence[str] = ()) -> Subgraph:
        """``known``/``missing``: the variables stage's strings; ``anchor_passages``: ids of the evidence
        passages, whose entities may anchor a ``?var`` even when outside the ego graph."""
        if not isinstance(question, str) or not question.strip():
            raise ValueError("the question is empty: type a question to look up in the knowledge graph")
        for name, value in (("known", known), ("missing", missing), ("anchor_passages", anchor_passages)):
            if isinstance(value, str):
                raise ValueError(f"{name} must be a list of strings, not one string: pass [{value!r}]")
        known, missing = [k for k in known if k.strip()], [m for m in missing if m.strip()]
        if not graph.nodes:
            return _empty(tuple(missing))
        doc = models.parse([question])[0]
        ents = list(dict.fromkeys(normalise(e.text) for e in doc.ents if CATEGORIES.get(e.label_)))
        ents = [e for e in ents if valid_entity(e)]
        vectors = models.embed([question] + ents + known + missing)
        q_vec, e_vecs = vectors[0], vectors[1:1 + len(ents)]
        k_vecs, m_vecs = vectors[1 + len(ents):1 + len(ents) + len(known)], vectors[1 + len(ents) + len(known):]

        matched = self._match(graph, q_vec, ents, e_vecs, k_vecs)
        seeds = [m.node for m in matched]
        ego = _ego(graph, seeds, self.hops)
        candidates = {i for n in ego for i in graph.adjacency[n]
                      if graph.edges[i].source in ego and graph.edges[i].target in ego}
        relevance = {i: float(graph.edge_vectors[i] @ q_vec) for i in candidates}
        kept = sorted((i for i in candidates if relevance[i] >= self.relevance_min),
                      key=lambda i: (-graph.edges[i].weight, -relevance[i], i))[:self.max_triples]
        edges = [graph.edges[i] for i in kept]
        node_ids = list(dict.fromkeys(seeds + [n for e in edges for n in (e.source, e.target)]))

        var_nodes, var_edges, unanchored = self._vars(graph, node_ids, anchor_passages, missing, m_vecs)
        for e in var_edges:
            if e.source not in node_ids:
                node_ids.append(e.source)
        path, path_edges, score = _best_path(seeds, [graph.edges[i] for i in sorted(candidates)], edges)
        edges += [e for e in path_edges if e not in edges]  # a multi-hop path may use a less relevant edge
        node_ids += [n for n in path if n not in node_ids]
        nodes = tuple(graph.node(n) for n in node_ids) + tuple(var_nodes)
        return Subgraph(nodes=nodes, edges=tuple(edges) + tuple(var_edges), matched=tuple(matched),
                        path=tuple(path), path_score=round(score, 4), n_matched=len(matched),
                        complete_path=bool(path) and score >= self.path_min, has_var=bool(var_nodes),
                        unanchored=tuple(unanchored))

    def _match(self, graph, q_vec, ents, e_vecs, k_vecs) -> list[NodeMatch]:
        scores: dict[str, NodeMatch] = {}

        def offer(nid: str, score: float, via: str) -> None:
            if score >= self.match_min and (nid not in scores or score > scores[nid].score):
                scores[nid] = NodeMatch(nid, round(float(score), 4), via)

        for label in ents:  # an exact name match is certain
            if node_id(label) in graph.row:
                offer(node_id(label), 1.0, "entity")
        sims = graph.node_vectors @ np.vstack([q_vec[None, :], e_vecs]).T if len(ents) else \
            (graph.node_vectors @ q_vec)[:, None]
        best = sims.max(axis=1)
        for r in np.argsort(-best, kind="stable")[:self.match_top]:
            offer(graph.nodes[r].id, float(best[r]), "question" if sims[r, 0] >= best[r] else "entity")
        question_side = sorted(scores.values(), key=lambda m: (-m.score, m.node))[:self.match_top]
        chosen = {m.node: m for m in question_side}
        for k_vec in k_vecs:
            sims_k = graph.node_vectors @ k_vec
            for r in np.argsort(-sims_k, kind="stable")[:self.known_top]:
                nid = graph.nodes[r].id
                if sims_k[r] >= self.match_min and nid not in chosen:
                    chosen[nid] = NodeMatch(nid, round(float(sims_k[r]), 4), "known")
        return list(chosen.values())

    def _vars(self, graph, node_ids, anchor_passages, missing, m_vecs):
        """Each missing variable hangs off its most similar anchor, a node of the subgraph or an entity of
        the evidence passages, if the similarity reaches ``var_anchor_min`` (the seed's 0.30)."""
        candidates = list(dict.fromkeys(node_ids + [n for p in anchor_passages for n in graph.by_passage.get(p, ())]))
        var_nodes, var_edges, unanchored = [], [], []
        if not candidates:
            return var_nodes, var_edges, list(missing)
        sims = m_vecs @ graph.node_vectors[[graph.row[n] for n in candidates]].T
        for text, row in zip(missing, sims):
            j = int(np.argmax(row))
            if row[j] < self.var_anchor_min:
                unanchored.append(text)
                continue
            vid = f"?var_{len(var_nodes) + 1}"
            anchor = graph.node(candidates[j])
            var_nodes.append(KgNode(vid, text, "var", ""))
            var_edges.append(KgEdge(anchor.id, vid, "requires", self.var_weight, round(float(row[j]), 4), 0.0,
                                    text, "", f"{anchor.label} requires {text}", 0, 0.0))
        return var_nodes, var_edges, unanchored


def _empty(missing: tuple[str, ...]) -> Subgraph:
    return Subgraph((), (), (), (), 0.0, 0, False, False, missing)


def _ego(graph: KnowledgeGraph, seeds: Sequence[str], hops: int) -> set[str]:
    ego, frontier = set(seeds), set(seeds)
    for _ in range(hops):
        nxt = set()
        for n in frontier:
            for i in graph.adjacency[n]:
                e = graph.edges[i]
                nxt.update((e.source, e.target))
        frontier = nxt - ego
        ego |= nxt
    return ego


def _best_path(seeds: Sequence[str], edges: Sequence[KgEdge],
               fallback: Sequence[KgEdge] = ()) -> tuple[list[str], list[KgEdge], float]:
    """Seed Eq. 18: the max over paths between two matched entities of the product of edge weights
    (undirected, over ``edges``): nodes, edges and score. When no two matched entities are connected,
    the strongest single edge of ``fallback`` touching a matched entity stands in for the path."""
    adjacency: dict[str, list[tuple[str, KgEdge]]] = defaultdict(list)
    for e in edges:
        if e.weight > 0:
            adjacency[e.source].append((e.target, e))
            adjacency[e.target].append((e.source, e))
    best: tuple[list[str], list[KgEdge], float] = ([], [], 0.0)
    seed_set = set(seeds)
    for start in seeds:
        # Dijkstra on −log w: the max-product path from ``start`` to every node.
        dist, prev, heap = {start: 0.0}, {}, [(0.0, start)]
        while heap:
            d, n = heapq.heappop(heap)
            if d > dist[n]:
                continue
            for m, e in adjacency[n]:
                nd = d - math.log(e.weight)
                if nd < dist.get(m, math.inf):
                    dist[m], prev[m] = nd, (n, e)
                    heapq.heappush(heap, (nd, m))
        for end in sorted(seed_set - {start}):
            if end in dist and math.exp(-dist[end]) > best[2]:
                nodes, path_edges = [end], []
                while nodes[-1] != start:
                    n, e = prev[nodes[-1]]
                    nodes.append(n)
                    path_edges.append(e)
                best = (nodes[::-1], path_edges[::-1], math.exp(-dist[end]))
    if best[0]:
        return best
    for e in fallback:
        if (e.source in seed_set or e.target in seed_set) and e.weight > best[2]:
            start = e.source if e.source in seed_set else e.target
            best = ([start, e.target if start == e.source else e.source], [e], e.weight)
    return best


# --- decision reinforcement (seed Phase 3) ------------------------------------------------

DELTAS = {"ANSWER": 0.20, "ASK": 0.05, "ABSTAIN": -0.10}


def reinforce(graph: KnowledgeGraph, labelled_items: Iterable[Any], query: SubgraphQuery | None = None,
              deltas: Mapping[str, float] = DELTAS) -> KnowledgeGraph:
    """A new graph layer whose edges are moved by labelled decisions; ``graph`` is left as it was.

    Each item is a mapping or object with ``question`` and ``action`` (ANSWER / ASK / ABSTAIN). The
    triples of the item's subgraph (which hold every path between its matched entities) get
    ``act += delta``, clipped to [0, 1]; weights are recomputed with Eq. 17 and the 0.95 cap.
    """
    query = query or SubgraphQuery()
    alpha, cap = graph.config.get("alpha", 0.5), graph.config.get("weight_cap", 0.95)
    shift: Counter = Counter()
    n_items = 0
    for item in labelled_items:
        question = item["question"] if isinstance(item, Mapping) else item.question
        action = item["action"] if isinstance(item, Mapping) else item.action
        if action not in deltas:
            raise ValueError(f"unknown action {action!r} in the labelled set: use one of {', '.join(deltas)}")
        n_items += 1
        for e in query.run(graph, question).edges:
            if e.relation != "requires":
                shift[(e.source, e.relation, e.target)] += deltas[action]
    edges = []
    for e in graph.edges:
        delta = shift.get((e.source, e.relation, e.target), 0.0)
        act = min(1.0, max(0.0, e.act + delta))
        edges.append(replace(e, act=round(act, 4), weight=edge_weight(e.sem, act, alpha, cap)))
    stats = replace(graph.stats, layer="reinforced", reinforced_items=n_items, reinforced_edges=len(shift),
                    avg_weight=round(float(np.mean([e.weight for e in edges])), 4) if edges else 0.0)
    return KnowledgeGraph(graph.nodes, edges, graph.node_vectors, graph.edge_vectors, stats, graph.config)
