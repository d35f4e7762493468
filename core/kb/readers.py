"""Reading a knowledge-base folder: .txt, .md, .pdf and .jsonl files into Documents, with a
human-readable line for every problem met (never an exception for bad content)."""
from __future__ import annotations

import dataclasses
import io
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

from core.text import HEADING, jsonl_records

SUFFIXES = (".txt", ".md", ".pdf", ".jsonl")


class KnowledgeBaseError(RuntimeError):
    """The KB folder or its index cannot be used; the message says what to do."""


@dataclass(frozen=True)
class Document:
    """One document as read from the KB folder (a file, or one line of a .jsonl file)."""
    id: str
    title: str
    text: str
    source: str  # the file's path relative to the KB folder


def read_documents(folder: str | Path) -> tuple[list[Document], list[str]]:
    """Every document under ``folder`` and a human-readable line per problem met on the way."""
    root = Path(folder)
    documents, problems, seen = [], [], {}
    for rel in list_files(root):
        docs, file_problems = read_file(rel, (root / rel).read_bytes())
        documents += dedupe(rel, docs, seen, file_problems)
        problems += file_problems
    return documents, problems


def list_files(root: Path) -> list[str]:
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


def read_file(rel: str, data: bytes) -> tuple[list[Document], list[str]]:
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
    for n, obj, error in jsonl_records(text):
        if error:
            problems.append(f"{rel}:{n}: {error}; line skipped")
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
        if (m := HEADING.fullmatch(line)) and m.group("body"):
            return m.group("body")
    first, _, rest = text.strip().partition("\n")
    if rel.endswith(".txt") and len(first.strip()) <= 100 and rest.startswith("\n") \
            and not first.rstrip().endswith((".", "!", "?", ":", ",")):
        return first.strip()
    stem = re.sub(r"[_\-\s]+", " ", Path(rel).stem).strip()
    return stem[:1].upper() + stem[1:]


def dedupe(rel: str, docs: list[Document], seen: dict[str, str], problems: list[str]) -> list[Document]:
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
