"""The knowledge base: read a folder of documents, chunk them on sentence boundaries, and keep a
persisted hybrid index (FAISS over normalised embeddings + BM25) in ``<folder>/.index/``.

Re-indexing reuses the passages and embeddings of files whose bytes, chunk settings and embedder
are unchanged, so editing one file re-embeds only that file. The new index is written in a
sibling temp directory and swapped in with renames, so a crash mid-build keeps the old one.
"""
from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import logging
import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from core import models
from core.settings import BY_NAME, resolve
from core.types import Passage, Sentence, to_dict

FORMAT_VERSION = 3  # bump when chunking or the stored layout changes: old indexes are rebuilt
INDEX_DIR = ".index"
SUFFIXES = (".txt", ".md", ".pdf", ".jsonl")
EMBED_BATCH = 256  # passages per embed() call: the unit of progress and of crash-safety tests

Progress = Callable[[int, int, str], None]


class KnowledgeBaseError(RuntimeError):
    """The KB folder or its index cannot be used; the message says what to do."""


@dataclass(frozen=True)
class Document:
    """One document as read from the KB folder (a file, or one line of a .jsonl file)."""
    id: str
    title: str
    text: str
    source: str  # the file's path relative to the KB folder


# --- sentence splitting ----------------------------------------------------------------

_HEADING = re.compile(r"[ \t]{0,3}(?P<unit>#{1,6}[ \t]+(?P<body>.*?))[ \t]*#*[ \t]*")
_MARKER = r"(?:[-*+•▪◦‣–]|\d{1,3}[.)]|[a-z][.)]|\((?:\d{1,3}|[a-z]|[ivx]{1,4})\))"
_BULLET = re.compile(r"[ \t]*(?P<unit>" + _MARKER + r"[ \t]+\S.*?)[ \t]*")
_RULE = re.compile(r"[ \t]*([-*_])(?:[ \t]*\1){2,}[ \t]*")
_ROW = re.compile(r"[ \t]*\|(?P<body>.*)\|[ \t]*")
_ROW_RULE = re.compile(r"[\s|:\-]*")
_HEADING_PREFIX = re.compile(r"#{1,6}[ \t]")
_BULLET_PREFIX = re.compile(_MARKER + r"[ \t]")
_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s)")
_LAST_WORD = re.compile(r"\S+$")
# "e.g. Carer's Allowance" and "Mr. Smith" do not end a sentence; "No. 5", "p. 12" only before a digit.
_ABBREVIATIONS = frozenset(
    "e.g. i.e. al. mr. mrs. ms. dr. st. prof. vs. cf. approx. inc. ltd. co. jr. sr. dept. est. viz.".split())
_DIGIT_ABBREVIATIONS = frozenset(
    "no. nos. p. pp. vol. art. sec. para. fig. ch. jan. feb. mar. apr. jun. jul. aug. sep. sept. oct. nov. dec."
    .split())
_ACRONYM = re.compile(r"(?:[a-z]\.){2,}|[A-Z]\.")


@dataclass(frozen=True)
class _Unit:
    start: int
    end: int
    kind: str  # heading | bullet | sentence


def split_sentences(text: str) -> list[Sentence]:
    """Sentences of ``text`` with offsets into it (``text[s.start:s.end] == s.text``).

    Each markdown heading line and each bullet / numbered item (with its indented continuation
    lines) is one sentence whatever its punctuation, because the pipeline reads a bullet as one
    condition; it keeps its marker ("## Eligibility", "* are aged 16 or over") so readers can tell
    it apart (see ``sentence_kind``). Prose is split after . ! ? unless the next word is lowercase
    or the period ends a known abbreviation, an initial or a decimal.
    """
    return [Sentence(text[u.start:u.end], u.start, u.end) for u in _units(text)]


def sentence_kind(sentence: Sentence | str) -> str:
    """``heading``, ``bullet`` or ``sentence``, read from the marker a sentence starts with."""
    text = sentence.text if isinstance(sentence, Sentence) else sentence
    if _HEADING_PREFIX.match(text):
        return "heading"
    if _BULLET_PREFIX.match(text):
        return "bullet"
    return "sentence"


def _units(text: str) -> list[_Unit]:
    units: list[_Unit] = []
    para: list[int] = []  # [start, end] of the prose paragraph being gathered
    item: _Unit | None = None  # the open bullet, which indented lines continue

    def flush() -> None:
        nonlocal item
        if item is not None:
            units.append(item)
            item = None
        if para:
            units.extend(_Unit(s, e, "sentence") for s, e in _split_prose(text, para[0], para[1]))
            para.clear()

    pos = 0
    for line in text.splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        body = line.rstrip("\r\n")
        if not body.strip() or _RULE.fullmatch(body):
            flush()
        elif m := _HEADING.fullmatch(body):
            flush()
            if m.group("body"):
                units.append(_Unit(start + m.start("unit"), start + m.end("unit"), "heading"))
        elif m := _BULLET.fullmatch(body):
            flush()
            item = _Unit(start + m.start("unit"), start + m.end("unit"), "bullet")
        elif m := _ROW.fullmatch(body):
            flush()
            if not _ROW_RULE.fullmatch(m.group("body")):
                s, e = _strip(text, start + m.start(), start + m.end())
                units.append(_Unit(s, e, "sentence"))
        elif item is not None and body[:1] in " \t":
            item = dataclasses.replace(item, end=start + len(body.rstrip()))
        else:
            if item is not None:
                flush()
            s, e = _strip(text, start, start + len(body))
            if para:
                para[1] = e
            else:
                para[:] = [s, e]
    flush()
    return units


def _split_prose(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans, pos = [], start
    for m in _END.finditer(text, start, end):
        nxt = _strip(text, m.end(), end)[0]
        if nxt >= end or text[nxt].islower() or _is_abbreviation(text, start, m, text[nxt]):
            continue
        spans.append(_strip(text, pos, m.end()))
        pos = nxt
    spans.append(_strip(text, pos, end))
    return [(s, e) for s, e in spans if e > s]


def _is_abbreviation(text: str, start: int, m: re.Match, next_char: str) -> bool:
    if m.group() != ".":
        return False
    word = _LAST_WORD.search(text, max(start, m.end() - 30), m.end()).group().lstrip("([\"'“‘")
    low = word.lower()
    return (low in _ABBREVIATIONS or _ACRONYM.fullmatch(word) is not None
            or (next_char.isdigit() and low in _DIGIT_ABBREVIATIONS))


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


# --- chunking --------------------------------------------------------------------------

def chunk_document(doc: Document, chunk_chars: int, chunk_overlap: int) -> list[Passage]:
    """Passages of about ``chunk_chars`` characters that end on sentence boundaries.

    A heading starts a new passage (sections stay together); the last ``chunk_overlap``
    sentences of a passage split for size are repeated at the start of the next. A sentence
    longer than ``chunk_chars`` is cut at whitespace so no passage outgrows the embedder.
    """
    if chunk_chars < 1 or chunk_overlap < 0:
        raise ValueError(f"chunk_chars must be ≥ 1 and chunk_overlap ≥ 0, not {chunk_chars}, {chunk_overlap}")
    units = [piece for u in _units(doc.text) for piece in _cut(doc.text, u, chunk_chars)]
    chunks: list[list[_Unit]] = []
    current: list[_Unit] = []
    for unit in units:
        if current and unit.kind == "heading" and any(u.kind != "heading" for u in current):
            chunks.append(current)
            current = []
        elif current and unit.end - current[0].start > chunk_chars:
            chunks.append(current)
            keep = min(chunk_overlap, len(current) - 1)
            current = current[len(current) - keep:] if keep else []
        current.append(unit)
    if current:
        chunks.append(current)
    passages = []
    for n, chunk in enumerate(chunks):
        start, end = chunk[0].start, chunk[-1].end
        sentences = tuple(Sentence(doc.text[u.start:u.end], u.start, u.end) for u in chunk)
        passages.append(Passage(id=f"{doc.id}#{n}", doc_id=doc.id, title=doc.title, text=doc.text[start:end],
                                start=start, end=end, sentences=sentences, source=doc.source))
    return passages


def _cut(text: str, unit: _Unit, limit: int) -> list[_Unit]:
    pieces, start = [], unit.start
    while unit.end - start > limit:
        cut = max(text.rfind(" ", start, start + limit), text.rfind("\n", start, start + limit))
        if cut <= start:
            cut = start + limit
        pieces.append(_Unit(start, _strip(text, start, cut)[1], unit.kind))
        start = _strip(text, cut, unit.end)[0]
    pieces.append(_Unit(start, unit.end, unit.kind))
    return pieces


# --- reading ---------------------------------------------------------------------------

def read_documents(folder: str | Path) -> tuple[list[Document], list[str]]:
    """Every document under ``folder`` and a human-readable line per problem met on the way."""
    root = Path(folder)
    documents, problems, seen = [], [], {}
    for rel in _list_files(root):
        docs, file_problems = _read_file(rel, (root / rel).read_bytes())
        documents += _dedupe(rel, docs, seen, file_problems)
        problems += file_problems
    return documents, problems


def _list_files(root: Path) -> list[str]:
    """Relative paths ("a/b.md") of the files to consider, hidden files and folders left out."""
    if not root.is_dir():
        raise KnowledgeBaseError(f"knowledge base folder {root} does not exist or is not a folder: "
                                 f"create it and put .txt, .md, .pdf or .jsonl files in it")
    files = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        base = Path(dirpath).relative_to(root)
        files += [(base / f).as_posix() for f in filenames if not f.startswith(".")]
    files.sort()
    if not any(Path(f).suffix.lower() in SUFFIXES for f in files):
        raise KnowledgeBaseError(f"knowledge base folder {root} holds no .txt, .md, .pdf or .jsonl files: "
                                 f"add documents, then run `python -m core index {root}`")
    return files


def _read_file(rel: str, data: bytes) -> tuple[list[Document], list[str]]:
    """The documents in one file and its problems; never raises for bad content."""
    suffix = Path(rel).suffix.lower()
    if suffix not in SUFFIXES:
        return [], [f"{rel}: not a .txt, .md, .pdf or .jsonl file; skipped"]
    if not data.strip():
        return [], [f"{rel}: the file is empty; skipped"]
    doc_id = Path(rel).with_suffix("").as_posix()
    if suffix == ".pdf":
        text, problems = _pdf_text(rel, data)
        return ([Document(doc_id, _title(text, rel), text, rel)] if text else []), problems
    text, problems = _decode(rel, data)
    if suffix == ".jsonl":
        docs, line_problems = _jsonl_documents(rel, doc_id, text)
        return docs, problems + line_problems
    if not text.strip():
        return [], problems + [f"{rel}: the file holds only whitespace; skipped"]
    return [Document(doc_id, _title(text, rel), text, rel)], problems


def _decode(rel: str, data: bytes) -> tuple[str, list[str]]:
    try:
        text, problems = data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        try:
            text, encoding = data.decode("cp1252"), "cp1252"
        except UnicodeDecodeError:
            text, encoding = data.decode("latin-1"), "latin-1"
        problems = [f"{rel}: not valid UTF-8 (byte {exc.start}); read as {encoding}, so check its "
                    f"non-ASCII characters, or save the file as UTF-8"]
    return text.replace("\r\n", "\n").replace("\r", "\n"), problems


def _pdf_text(rel: str, data: bytes) -> tuple[str, list[str]]:
    from pypdf import PdfReader
    logger = logging.getLogger("pypdf")
    level = logger.level
    logger.setLevel(logging.ERROR)  # damage is reported as a problem below, not logged as well
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            return "", [f"{rel}: the PDF is password-protected; save a decrypted copy to index it"]
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
    except Exception as exc:  # pypdf raises many types for damaged files; any of them means "unreadable"
        return "", [f"{rel}: cannot read the PDF ({type(exc).__name__}: {exc}); re-export or repair it"]
    finally:
        logger.setLevel(level)
    text = "\n\n".join(p for p in pages if p)
    if not text:
        return "", [f"{rel}: the PDF has no extractable text (a scan?); run OCR on it or add a text version"]
    return text, []


def _jsonl_documents(rel: str, stem_id: str, text: str) -> tuple[list[Document], list[str]]:
    docs, problems = [], []
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{rel}:{n}: not valid JSON ({exc.msg}); line skipped")
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str) or not obj["text"].strip():
            problems.append(f'{rel}:{n}: expected an object with a non-empty "text" string; line skipped')
            continue
        if not isinstance(obj.get("id"), (str, int)) or not str(obj["id"]).strip():
            problems.append(f'{rel}:{n}: expected an "id" (string or number); line skipped')
            continue
        title = obj.get("title") if isinstance(obj.get("title"), str) and obj["title"].strip() else str(obj["id"])
        docs.append(Document(f"{stem_id}/{str(obj['id']).strip()}", title.strip(), obj["text"], rel))
    return docs, problems


def _title(text: str, rel: str) -> str:
    """The first markdown heading; for .txt a short unpunctuated first line set off by a blank
    line; else the file name ("carers_allowance" → "Carers allowance")."""
    for line in text.split("\n"):
        if (m := _HEADING.fullmatch(line)) and m.group("body"):
            return m.group("body")
    first, _, rest = text.strip().partition("\n")
    if rel.endswith(".txt") and len(first.strip()) <= 100 and rest.startswith("\n") \
            and not first.rstrip().endswith((".", "!", "?", ":", ",")):
        return first.strip()
    stem = re.sub(r"[_\-\s]+", " ", Path(rel).stem).strip()
    return stem[:1].upper() + stem[1:]


# --- BM25 ------------------------------------------------------------------------------

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


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens for BM25 (and the coverage signal): no stopwords, no possessive 's,
    plural -s folded ("allowances" → "allowance") so the two sides of a match agree."""
    tokens = []
    for token in _TOKEN.findall(text.lower().replace("’", "'")):
        token = token[:-2] if token.endswith("'s") else token
        if token in STOPWORDS or (len(token) < 2 and not token.isdigit()):
            continue
        if len(token) > 3 and token.endswith("s") and not token.endswith(("ss", "us", "is")):
            token = token[:-1]
        tokens.append(token)
    return tokens


def _bm25(texts: list[str]):
    import bm25s
    corpus = [tokenize(t) for t in texts]
    if not any(corpus):  # bm25s cannot index an empty vocabulary; "\0" never matches a query token
        corpus[0] = ["\0"]
    index = bm25s.BM25()
    index.index(corpus, show_progress=False)
    return index


def _indexed_text(p: Passage) -> str:
    """What is embedded and BM25-indexed: the passage under its title, so bullets keep their topic."""
    return p.text if p.title in p.text[:len(p.title) + 8] else f"{p.title}\n{p.text}"


# --- the index -------------------------------------------------------------------------

def index_settings(settings: Mapping[str, Any] | None) -> dict[str, Any]:
    """The index-stage settings (chunk_chars, chunk_overlap, index_type), checked, defaults filled."""
    names = [s.name for s in BY_NAME.values() if s.stage == "index"]
    values = resolve({k: v for k, v in (settings or {}).items() if k in names})
    return {k: values[k] for k in names}


class KnowledgeBase:
    """A loaded index: passages, their embeddings, the FAISS and BM25 indexes, and the manifest."""

    def __init__(self, folder: Path, manifest: dict, documents: dict[str, Document],
                 passages: tuple[Passage, ...], embeddings: np.ndarray, dense_index, bm25):
        self.folder = folder
        self.manifest = manifest
        self.documents = documents
        self.passages = passages
        self.embeddings = embeddings
        self.problems: tuple[str, ...] = tuple(manifest.get("problems", ()))
        self.stats: dict[str, Any] = manifest.get("stats", {})
        self.fingerprint: str = manifest["fingerprint"]
        self._dense = dense_index
        self._bm25 = bm25
        self._by_id = {p.id: i for i, p in enumerate(passages)}
        self._graph = None

    @property
    def graph(self):
        """The knowledge graph built with the index (seed 002 §6), loaded on first use."""
        if self._graph is None:
            from core.kg import KnowledgeGraph
            try:
                self._graph = KnowledgeGraph.load(self.folder / INDEX_DIR)
            except (OSError, ValueError) as exc:
                raise KnowledgeBaseError(f"the knowledge graph in {self.folder / INDEX_DIR} cannot be read "
                                         f"({exc}): run `python -m core index {self.folder}`") from None
        return self._graph

    # -- querying --
    def passage(self, passage_id: str) -> Passage:
        try:
            return self.passages[self._by_id[passage_id]]
        except KeyError:
            raise KeyError(f"no passage {passage_id!r} in the knowledge base at {self.folder}") from None

    def dense_search(self, vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Row indices and inner products of the ``k`` nearest passages (FAISS)."""
        k = min(k, len(self.passages))
        if hasattr(self._dense, "hnsw"):
            self._dense.hnsw.efSearch = max(64, k)
        scores, rows = self._dense.search(np.asarray(vector, dtype="float32").reshape(1, -1), k)
        keep = rows[0] >= 0
        return rows[0][keep], scores[0][keep]

    def bm25_scores(self, text: str) -> np.ndarray:
        """BM25 score of every passage for ``text`` (zeros when no query term is in the KB)."""
        tokens = [t for t in tokenize(text) if t in self._bm25.vocab_dict]
        if not tokens:
            return np.zeros(len(self.passages), dtype="float32")
        return self._bm25.get_scores(tokens)

    # -- building and loading --
    @classmethod
    def load(cls, folder: str | Path) -> "KnowledgeBase":
        """The index saved in ``folder/.index``; KnowledgeBaseError if there is none or it is damaged."""
        folder = Path(folder)
        if not folder.is_dir():
            raise KnowledgeBaseError(f"knowledge base folder {folder} does not exist: create it, add documents "
                                     f"and run `python -m core index {folder}`")
        index_dir = _recover(folder)
        stored = _read_index(index_dir)
        if stored is None:
            raise KnowledgeBaseError(f"no usable index in {index_dir}: run `python -m core index {folder}`")
        manifest, documents, passages, embeddings = stored
        import bm25s
        import faiss
        try:
            dense = faiss.read_index(str(index_dir / "faiss.index"))
        except RuntimeError as exc:
            raise KnowledgeBaseError(f"the FAISS index in {index_dir} cannot be read ({exc}): "
                                     f"run `python -m core index {folder}`") from None
        try:
            bm25 = bm25s.BM25.load(str(index_dir / "bm25"), show_progress=False)
        except (OSError, ValueError, KeyError) as exc:
            raise KnowledgeBaseError(f"the BM25 index in {index_dir} cannot be read ({exc}): "
                                     f"run `python -m core index {folder}`") from None
        if dense.ntotal != len(passages) or bm25.scores["num_docs"] != len(passages):
            raise KnowledgeBaseError(f"the index in {index_dir} is inconsistent: run `python -m core index {folder}`")
        return cls(folder, manifest, documents, passages, embeddings, dense, bm25)

    @classmethod
    def open(cls, folder: str | Path, settings: Mapping[str, Any] | None = None,
             progress: Progress | None = None) -> "KnowledgeBase":
        """Load the index if it matches the files, settings and embedder; otherwise (re)build it."""
        try:
            kb = cls.load(folder)
        except KnowledgeBaseError:
            return cls.build(folder, settings, progress)
        files = {rel: _sha256((Path(folder) / rel).read_bytes()) for rel in _list_files(Path(folder))}
        if kb.manifest["fingerprint"] == _fingerprint(index_settings(settings), files):
            return kb
        return cls.build(folder, settings, progress)

    @classmethod
    def build(cls, folder: str | Path, settings: Mapping[str, Any] | None = None,
              progress: Progress | None = None) -> "KnowledgeBase":
        """Index ``folder``, reusing what is unchanged from its current index, and return it loaded."""
        started = time.perf_counter()
        folder = Path(folder)
        config = index_settings(settings)
        report = progress or (lambda done, total, stage: None)
        files = _list_files(folder)
        _remove_stale(folder)
        embedder = models.role_source("embedder")
        old = _reusable(folder, config, embedder)
        entries, documents, passages, vectors = _gather(folder, files, config, old, report)
        problems = [line for e in entries.values() for line in e["problems"]]
        if not passages:
            raise KnowledgeBaseError(f"no text could be read from {folder}; fix these files and index again:\n"
                                     + "\n".join(problems))
        embeddings, embedded = _embed_missing(passages, vectors, report)

        from core.kg import GraphBuilder
        graph = GraphBuilder(edge_min=config["kg_edge_min"]).run(passages, passage_vectors=embeddings,
                                                                 progress=report)
        report(0, 1, "write")
        dense = _dense_index(embeddings, config["index_type"])
        reused_files = sum(e["reused"] for e in entries.values())
        stats = {"files": len(files), "reused_files": reused_files, "read_files": len(files) - reused_files,
                 "removed_files": len(set(old["files"]) - set(files)) if old else 0,
                 "documents": len(documents), "passages": len(passages),
                 "reused_passages": len(passages) - embedded, "embedded_passages": embedded,
                 "problems": len(problems), "seconds": round(time.perf_counter() - started, 3)}
        manifest = {
            "format": FORMAT_VERSION, "embedder": embedder, "embedding_dim": int(embeddings.shape[1]),
            "chunking": {"chunk_chars": config["chunk_chars"], "chunk_overlap": config["chunk_overlap"]},
            "index_type": config["index_type"],
            "bm25": {"library": "bm25s", "tokenizer": "lowercase words, English stopwords, plural -s folded"},
            "fingerprint": _fingerprint(config, {rel: e["sha256"] for rel, e in entries.items()}),
            "files": {rel: {k: v for k, v in e.items() if k != "reused"} for rel, e in entries.items()},
            "counts": {"files": len(files), "documents": len(documents), "passages": len(passages)},
            "problems": problems, "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "stats": stats,
            "knowledge_graph": to_dict(graph.stats),
        }
        _write_index(folder, manifest, documents, passages, embeddings, dense, graph)
        report(1, 1, "write")
        return cls.load(folder)


def _gather(folder: Path, files: list[str], config: Mapping[str, Any], old: dict | None, report: Progress):
    """Per-file entries, documents, passages and embedding rows (None: to embed) for every file.

    A file whose bytes are unchanged lends its stored documents, passages and embeddings, unless
    an earlier file now claims one of its document ids (then it is re-read and renamed).
    """
    entries: dict[str, dict] = {}
    seen: dict[str, str] = {}  # document id -> the file that holds it
    documents: list[Document] = []
    passages: list[Passage] = []
    vectors: list[np.ndarray | None] = []
    for n, rel in enumerate(files):
        report(n, len(files), "read")
        data = (folder / rel).read_bytes()
        sha = _sha256(data)
        entry = old["files"].get(rel) if old else None
        reuse = bool(entry and entry["sha256"] == sha and not seen.keys() & set(entry["documents"]))
        if reuse:
            file_docs = [old["documents"][d] for d in entry["documents"]]
            file_passages = [old["passages"][p] for p in entry["passages"]]
            vectors += [old["embeddings"][old["rows"][p]] for p in entry["passages"]]
            problems = list(entry["problems"])
            seen.update((d.id, rel) for d in file_docs)
        else:
            file_docs, problems = _read_file(rel, data)
            file_docs = _dedupe(rel, file_docs, seen, problems)
            file_passages = [p for d in file_docs
                             for p in chunk_document(d, config["chunk_chars"], config["chunk_overlap"])]
            vectors += [None] * len(file_passages)
        documents += file_docs
        passages += file_passages
        entries[rel] = {"sha256": sha, "documents": [d.id for d in file_docs],
                        "passages": [p.id for p in file_passages], "problems": problems, "reused": reuse}
    report(len(files), len(files), "read")
    return entries, documents, passages, vectors


def _embed_missing(passages: list[Passage], vectors: list, report: Progress) -> tuple[np.ndarray, int]:
    """All embedding rows, the ``None`` ones embedded in batches, and how many were embedded."""
    rows = list(vectors)
    todo = [i for i, v in enumerate(rows) if v is None]
    for done in range(0, len(todo), EMBED_BATCH):
        report(done, len(todo), "embed")
        batch = todo[done:done + EMBED_BATCH]
        for i, vector in zip(batch, models.embed([_indexed_text(passages[i]) for i in batch])):
            rows[i] = vector
    report(len(todo), len(todo), "embed")
    return np.vstack(rows).astype("float32"), len(todo)


def _dedupe(rel: str, docs: list[Document], seen: dict[str, str], problems: list[str]) -> list[Document]:
    """Rename documents whose id another file (or line) already took, so nothing is dropped."""
    out = []
    for doc in docs:
        new_id, n = doc.id, 1
        while new_id in seen:
            n += 1
            new_id = f"{doc.id}~{n}"
        if new_id != doc.id:
            problems.append(f"{rel}: document id {doc.id!r} is already used by {seen[doc.id]}; indexed as {new_id!r}")
            doc = dataclasses.replace(doc, id=new_id)
        seen[new_id] = rel
        out.append(doc)
    return out


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fingerprint(config: Mapping[str, Any], files: Mapping[str, str]) -> str:
    """A short hash of everything the index content depends on (for caches and up-to-date checks)."""
    key = {"format": FORMAT_VERSION, "embedder": models.role_source("embedder"), "config": dict(config),
           "files": sorted(files.items())}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]


def _dense_index(embeddings: np.ndarray, index_type: str):
    import faiss
    dim = embeddings.shape[1]
    if index_type == "hnsw":
        index = faiss.IndexHNSWFlat(dim, 32, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = 80
    else:
        index = faiss.IndexFlatIP(dim)
    index.add(embeddings)
    return index


def _read_index(index_dir: Path):
    """(manifest, documents, passages, embeddings) from an index folder, or None if unusable."""
    try:
        manifest = json.loads((index_dir / "manifest.json").read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT_VERSION:
            return None
        documents = {}
        with open(index_dir / "documents.jsonl", encoding="utf-8") as f:
            for line in f:
                d = json.loads(line)
                documents[d["id"]] = Document(**d)
        passages = []
        with open(index_dir / "passages.jsonl", encoding="utf-8") as f:
            for line in f:
                d = json.loads(line)
                d["sentences"] = tuple(Sentence(**s) for s in d["sentences"])
                passages.append(Passage(**d))
        embeddings = np.load(index_dir / "embeddings.npy")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if embeddings.shape[0] != len(passages):
        return None
    return manifest, documents, tuple(passages), embeddings


def _reusable(folder: Path, config: Mapping[str, Any], embedder: str) -> dict | None:
    """What the current index can lend the new one: only if chunking and embedder are unchanged."""
    stored = _read_index(folder / INDEX_DIR)
    if stored is None:
        return None
    manifest, documents, passages, embeddings = stored
    chunking = {"chunk_chars": config["chunk_chars"], "chunk_overlap": config["chunk_overlap"]}
    if manifest.get("embedder") != embedder or manifest.get("chunking") != chunking:
        return None
    return {"files": manifest["files"], "documents": documents, "passages": {p.id: p for p in passages},
            "rows": {p.id: i for i, p in enumerate(passages)}, "embeddings": embeddings}


def _write_index(folder: Path, manifest: dict, documents: list[Document], passages: list[Passage],
                 embeddings: np.ndarray, dense, graph) -> None:
    """Write the whole index into a temp sibling, then swap it in with two renames."""
    import faiss
    final = folder / INDEX_DIR
    tmp = folder / f"{INDEX_DIR}.tmp-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        with open(tmp / "documents.jsonl", "w", encoding="utf-8") as f:
            f.writelines(json.dumps(to_dict(d), ensure_ascii=False) + "\n" for d in documents)
        with open(tmp / "passages.jsonl", "w", encoding="utf-8") as f:
            f.writelines(json.dumps(to_dict(p), ensure_ascii=False) + "\n" for p in passages)
        np.save(tmp / "embeddings.npy", embeddings)
        faiss.write_index(dense, str(tmp / "faiss.index"))
        graph.save(tmp)
        _bm25([_indexed_text(p) for p in passages]).save(str(tmp / "bm25"), show_progress=False)
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False), encoding="utf-8")
        old = folder / f"{INDEX_DIR}.old-{uuid.uuid4().hex[:8]}"
        if final.exists():
            os.replace(final, old)
        os.replace(tmp, final)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _recover(folder: Path) -> Path:
    """The index folder, first putting back the previous index if a crash hit between the renames."""
    final = folder / INDEX_DIR
    if not final.exists():
        for old in sorted(folder.glob(f"{INDEX_DIR}.old-*")):
            if (old / "manifest.json").exists():
                os.replace(old, final)
                break
    return final


def _remove_stale(folder: Path) -> None:
    """Temp folders left by builds that were killed."""
    _recover(folder)
    for stale in list(folder.glob(f"{INDEX_DIR}.tmp-*")) + list(folder.glob(f"{INDEX_DIR}.old-*")):
        shutil.rmtree(stale, ignore_errors=True)
