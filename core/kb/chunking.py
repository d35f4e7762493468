"""Chunking: a document's text into passages of about ``chunk_chars`` characters on sentence
boundaries (the sentence units of ``core.text``), each passage keeping its sentences' offsets."""
from __future__ import annotations

from core.kb.readers import Document
from core.text import Unit, trim_span, units
from core.types import Passage, Sentence


def chunk_document(doc: Document, chunk_chars: int, chunk_overlap: int) -> list[Passage]:
    """Passages of about ``chunk_chars`` characters that end on sentence boundaries.

    A heading starts a new passage (sections stay together); the last ``chunk_overlap``
    sentences of a passage split for size are repeated at the start of the next. A sentence
    longer than ``chunk_chars`` is cut at whitespace so no passage outgrows the embedder.
    """
    if chunk_chars < 1 or chunk_overlap < 0:
        raise ValueError(f"chunk_chars must be ≥ 1 and chunk_overlap ≥ 0, not {chunk_chars}, {chunk_overlap}")
    pieces = [piece for u in units(doc.text) for piece in _cut(doc.text, u, chunk_chars)]
    chunks: list[list[Unit]] = []
    current: list[Unit] = []
    for unit in pieces:
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


def _cut(text: str, unit: Unit, limit: int) -> list[Unit]:
    pieces, start = [], unit.start
    while unit.end - start > limit:
        cut = max(text.rfind(" ", start, start + limit), text.rfind("\n", start, start + limit))
        if cut <= start:
            cut = start + limit
        pieces.append(Unit(start, trim_span(text, start, cut)[1], unit.kind))
        start = trim_span(text, cut, unit.end)[0]
    pieces.append(Unit(start, unit.end, unit.kind))
    return pieces
