"""Labelled sets in their published formats → one ``LabelledItem`` shape.

Each format's labels are relative to the item's own documents (ShARC's rule
snippet, the NDA, the SQuAD paragraph, the ten HotpotQA paragraphs), so the
default *reading* setting gives every item a knowledge base of its own documents;
*pooled* puts every document of the file into one knowledge base (as PassiveQA
did). The project's own JSONL format points at a KB folder instead, which is
always pooled. A malformed file raises ``DatasetError`` naming the file, the line
and what to fix; nothing is returned half-read.
"""
from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from core.text import jsonl_records
from core.types import ACTIONS

DEFAULT_KB_FOLDER = Path(__file__).resolve().parents[2] / "sample_kb" / "documents"
FORMATS = ("sharc", "contractnli", "squad2", "hotpotqa", "jsonl")
SETTINGS = ("reading", "pooled")

Document = tuple[str, str, str]  # (doc_id, title, text)


class DatasetError(ValueError):
    """A labelled file cannot be read; the message names the file, the line and the fix."""


@dataclass(frozen=True)
class LabelledItem:
    """One labelled question with the documents its label is relative to."""
    id: str
    question: str
    action: str  # gold: ANSWER | ASK | ABSTAIN
    scenario: str = ""
    history: tuple[tuple[str, str], ...] = ()
    answers: tuple[str, ...] = ()  # gold answer strings ("Yes"/"No" for rule questions)
    evidence: tuple[str, ...] = ()  # gold evidence texts (sentences or spans)
    documents: tuple[Document, ...] = ()  # the item's own documents
    is_statement: bool = False  # a claim to check (ContractNLI hypothesis), not a question
    source: str = ""  # the format it came from
    extra: dict[str, Any] = field(default_factory=dict, hash=False)

    @property
    def has_context(self) -> bool:
        return bool(self.scenario.strip() or self.history)


@dataclass(frozen=True)
class Dataset:
    """Items of one file and how their knowledge bases are formed."""
    items: tuple[LabelledItem, ...]
    format: str
    path: str
    setting: str  # reading | pooled
    all_documents: tuple[Document, ...] = ()  # every document of the file (pooled setting)
    kb_folder: str = ""  # the jsonl format's knowledge base folder
    total: int = 0  # items in the file before --limit / sampling

    def documents_for(self, item: LabelledItem) -> tuple[Document, ...]:
        """The documents forming ``item``'s knowledge base in this setting."""
        return self.all_documents if self.setting == "pooled" else item.documents

    def counts(self) -> dict[str, int]:
        return {a: sum(i.action == a for i in self.items) for a in ACTIONS}

    def describe(self) -> str:
        folder = Path(self.kb_folder).resolve()
        root = DEFAULT_KB_FOLDER.parents[1]
        shown_folder = folder.relative_to(root) if folder.is_relative_to(root) else folder
        kb = f"KB folder {shown_folder}" if self.kb_folder else f"{self.setting} setting"
        shown = f"{len(self.items)} of {self.total}" if self.total != len(self.items) else f"{len(self.items)}"
        counts = ", ".join(f"{a} {n}" for a, n in self.counts().items())
        return f"{self.format} {Path(self.path).name}: {shown} items ({counts}); {kb}"


def load_dataset(fmt: str, path: str | Path, *, setting: str | None = None, limit: int | None = None,
                 seed: int | None = None, kb_folder: str | Path | None = None) -> Dataset:
    """Read a labelled file. ``limit`` keeps the first N items, or a seeded random N (file order kept)
    when ``seed`` is given. ``kb_folder`` is the jsonl format's knowledge base (default: the sample KB)."""
    if fmt not in FORMATS:
        raise DatasetError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file; give the path of a {fmt} file")
    if limit is not None and limit < 1:
        raise DatasetError(f"--limit must be at least 1, not {limit}")
    if fmt == "jsonl":
        if setting == "reading":
            raise DatasetError("the jsonl format's knowledge base is the folder given with --kb: "
                               "its items have no documents of their own, so use --setting pooled")
        setting = "pooled"
    setting = setting or "reading"
    if setting not in SETTINGS:
        raise DatasetError(f"unknown setting {setting!r}: use reading or pooled")
    text = _read_text(path)
    items = READERS[fmt](text, str(path))
    if not items:
        raise DatasetError(f"{path}: no labelled items found; is this a {fmt} file?")
    _check_unique(items, path, text)
    total = len(items)
    all_docs = _all_documents(items)
    if limit is not None and limit < len(items):
        if seed is None:
            items = items[:limit]
        else:
            keep = sorted(random.Random(seed).sample(range(len(items)), limit))
            items = [items[i] for i in keep]
    folder = ""
    if fmt == "jsonl":
        folder = str(Path(kb_folder) if kb_folder else DEFAULT_KB_FOLDER)
        if not Path(folder).is_dir():
            raise DatasetError(f"knowledge base folder {folder} does not exist: pass the folder the "
                               f"questions refer to with --kb")
    return Dataset(items=tuple(items), format=fmt, path=str(path), setting=setting,
                   all_documents=all_docs, kb_folder=folder, total=total)


# --- shared helpers --------------------------------------------------------------------

def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot be read ({exc.strerror})") from None


def _parse_json(text: str, path: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and _json_lines(text):
            raise DatasetError(f"{path}: one JSON object per line (JSON Lines), not one JSON document: read it "
                               "with the jsonl format") from None
        raise DatasetError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno})") from None


def _json_lines(text: str) -> bool:
    """Whether the text's first line is a JSON object of its own (a file of JSON Lines)."""
    first = text.lstrip().split("\n", 1)[0]
    try:
        return isinstance(json.loads(first), dict)
    except json.JSONDecodeError:
        return False


def _line_of(text: str, value: Any) -> int | None:
    """The line where ``value`` (an item id) first appears as a JSON string, to point at the item."""
    if not isinstance(value, str) or not value:
        return None
    at = text.find(json.dumps(value))
    return text.count("\n", 0, at) + 1 if at >= 0 else None


class _Where:
    """Builds 'file:line: item N (id X): problem' messages."""

    def __init__(self, path: str, text: str, label: str, item_id: Any = None, line: int | None = None):
        self.path, self.label = path, label
        self.line = line if line is not None else _line_of(text, item_id)
        self.item_id = item_id

    def error(self, problem: str) -> DatasetError:
        where = f"{self.path}:{self.line}" if self.line else self.path
        ident = f" (id {self.item_id})" if self.item_id not in (None, "") else ""
        return DatasetError(f"{where}: {self.label}{ident}: {problem}")


def _req_str(obj: dict, key: str, where: _Where, allow_empty: bool = False) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        raise where.error(f"expected a non-empty string in {key!r}, found {_shown(value)}")
    return value


def _opt_str(obj: dict, key: str, where: _Where) -> str:
    value = obj.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise where.error(f"{key!r} must be a string, found {_shown(value)}")
    return value


def _req_list(obj: dict, key: str, where: _Where) -> list:
    value = obj.get(key)
    if not isinstance(value, list):
        raise where.error(f"expected a list in {key!r}, found {_shown(value)}")
    return value


def _shown(value: Any) -> str:
    return "nothing" if value is None else f"{type(value).__name__} {json.dumps(value)[:40]}"


def _doc(prefix: str, title: str, text: str) -> Document:
    """A document whose id is its content hash, so equal texts are one document across items."""
    digest = hashlib.sha1(f"{title}\n{text}".encode()).hexdigest()[:10]
    return (f"{prefix}-{digest}", title.strip() or prefix, text)


def _all_documents(items: Iterable[LabelledItem]) -> tuple[Document, ...]:
    seen: dict[str, Document] = {}
    for item in items:
        for doc in item.documents:
            seen.setdefault(doc[0], doc)
    return tuple(seen.values())


def _check_unique(items: list[LabelledItem], path: Path, text: str) -> None:
    seen: set[str] = set()
    for n, item in enumerate(items, 1):
        if item.id in seen:
            raise _Where(str(path), text, f"item {n}", item.id).error(
                "this id is used by an earlier item; ids must be unique")
        seen.add(item.id)


def _history(turns: Any, where: _Where, q_key: str, a_key: str) -> tuple[tuple[str, str], ...]:
    if turns is None:
        return ()
    if not isinstance(turns, list):
        raise where.error(f"'history' must be a list of {{{q_key!r}, {a_key!r}}} objects")
    out = []
    for k, turn in enumerate(turns, 1):
        if not isinstance(turn, dict) or not isinstance(turn.get(q_key), str) or not isinstance(turn.get(a_key), str):
            raise where.error(f"history turn {k} must be an object with string {q_key!r} and {a_key!r}")
        out.append((turn[q_key], turn[a_key]))
    return tuple(out)


def _jsonl(text: str, path: str):
    """(line number, object) for each line of a JSONL dataset; DatasetError at the first bad line."""
    for n, obj, error in jsonl_records(text):
        if error:
            raise DatasetError(f"{path}:{n}: {error}")
        yield n, obj


def _title_of(text: str, fallback: str) -> str:
    """The first non-empty line without markdown heading marks, cut at a word within 80 characters."""
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line if len(line) <= 80 else line[:80].rsplit(" ", 1)[0]
    return fallback


# --- ShARC ------------------------------------------------------------------------------

def read_sharc(text: str, path: str) -> list[LabelledItem]:
    """ShARC v1 JSON: Yes/No → ANSWER, Irrelevant → ABSTAIN, a follow-up question → ASK."""
    data = _parse_json(text, path)
    if not isinstance(data, list):
        raise DatasetError(f"{path}: a ShARC file is a JSON list of utterances, found {type(data).__name__}")
    items = []
    for n, obj in enumerate(data, 1):
        if not isinstance(obj, dict):
            raise DatasetError(f"{path}: utterance {n} is not a JSON object")
        uid = obj.get("utterance_id")
        where = _Where(path, text, f"utterance {n}", uid)
        if not isinstance(uid, str) or not uid:
            raise where.error("expected a non-empty string in 'utterance_id'")
        snippet = _req_str(obj, "snippet", where)
        answer = _req_str(obj, "answer", where).strip()
        action = {"yes": "ANSWER", "no": "ANSWER", "irrelevant": "ABSTAIN"}.get(answer.lower(), "ASK")
        title = _title_of(snippet, "Rule")  # its heading, else its first line (not prepended twice when indexed)
        extra = {k: obj[k] for k in ("tree_id", "source_url") if isinstance(obj.get(k), str)}
        if action == "ASK":
            extra["missing"] = answer
        if obj.get("evidence"):  # the follow-ups the scenario was written from (hidden from the model)
            extra["scenario_evidence"] = obj["evidence"]
        items.append(LabelledItem(
            id=uid, question=_req_str(obj, "question", where), action=action,
            scenario=_opt_str(obj, "scenario", where),
            history=_history(obj.get("history"), where, "follow_up_question", "follow_up_answer"),
            answers=(answer,) if action == "ANSWER" else (), documents=(_doc("sharc", title, snippet),),
            source="sharc", extra=extra))
    return items


# --- ContractNLI ------------------------------------------------------------------------

def read_contractnli(text: str, path: str) -> list[LabelledItem]:
    """ContractNLI JSON: each hypothesis about each NDA; Entailment/Contradiction → ANSWER, NotMentioned → ABSTAIN."""
    data = _parse_json(text, path)
    if not isinstance(data, dict) or not isinstance(data.get("documents"), list) \
            or not isinstance(data.get("labels"), dict):
        raise DatasetError(f"{path}: a ContractNLI file is an object with 'documents' (list) and 'labels' (object)")
    hypotheses = {}
    for key, label in data["labels"].items():
        if not isinstance(label, dict) or not isinstance(label.get("hypothesis"), str):
            raise DatasetError(f"{path}:{_line_of(text, key) or ''}: labels[{key!r}] needs a 'hypothesis' string")
        hypotheses[key] = label["hypothesis"]
    choices = {"Entailment": ("ANSWER", "yes"), "Contradiction": ("ANSWER", "no"), "NotMentioned": ("ABSTAIN", "")}
    items = []
    for n, doc in enumerate(data["documents"], 1):
        if not isinstance(doc, dict):
            raise DatasetError(f"{path}: document {n} is not a JSON object")
        doc_key = str(doc.get("id", n))
        where = _Where(path, text, f"document {n}", doc.get("file_name") or None)
        body = _req_str(doc, "text", where)
        spans = _req_list(doc, "spans", where)
        sets = _req_list(doc, "annotation_sets", where)
        if not sets or not isinstance(sets[0], dict) or not isinstance(sets[0].get("annotations"), dict):
            raise where.error("'annotation_sets' must hold an object with 'annotations'")
        document = _doc("nda", _title_of(body, f"NDA {doc_key}"), body)
        for key, ann in sets[0]["annotations"].items():
            if key not in hypotheses:
                raise where.error(f"annotation {key!r} has no hypothesis in 'labels'")
            if not isinstance(ann, dict) or ann.get("choice") not in choices:
                raise where.error(f"annotation {key!r}: 'choice' must be one of {', '.join(choices)}")
            action, verdict = choices[ann["choice"]]
            evidence = []
            for s in ann.get("spans", []):
                if not isinstance(s, int) or not 0 <= s < len(spans) or not _is_span(spans[s], len(body)):
                    raise where.error(f"annotation {key!r}: span {s!r} does not index a [start, end] pair of 'spans'")
                evidence.append(body[spans[s][0]:spans[s][1]].strip())
            items.append(LabelledItem(
                id=f"{doc_key}/{key}", question=hypotheses[key], action=action,
                answers=(verdict,) if verdict else (), evidence=tuple(e for e in evidence if e),
                documents=(document,), is_statement=True, source="contractnli",
                extra={"choice": ann["choice"], "hypothesis_id": key, "document": doc_key}))
    return items


def _is_span(span: Any, length: int) -> bool:
    return (isinstance(span, list) and len(span) == 2 and all(isinstance(x, int) for x in span)
            and 0 <= span[0] <= span[1] <= length)


# --- SQuAD 2.0 --------------------------------------------------------------------------

def read_squad2(text: str, path: str) -> list[LabelledItem]:
    """SQuAD 2.0 JSON: is_impossible → ABSTAIN, else ANSWER with the gold answers."""
    data = _parse_json(text, path)
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise DatasetError(f"{path}: a SQuAD 2.0 file is an object with a 'data' list of articles")
    from core.text import split_sentences
    items = []
    for a, article in enumerate(data["data"], 1):
        if not isinstance(article, dict) or not isinstance(article.get("paragraphs"), list):
            raise DatasetError(f"{path}: article {a} needs a 'paragraphs' list")
        title = str(article.get("title", f"Article {a}")).replace("_", " ")
        for p, para in enumerate(article["paragraphs"], 1):
            where = _Where(path, text, f"article {a} paragraph {p}")
            if not isinstance(para, dict):
                raise where.error("not a JSON object")
            context = _req_str(para, "context", where)
            document = _doc("squad", title, context)
            sentences = split_sentences(context)
            for q, qa in enumerate(_req_list(para, "qas", where), 1):
                if not isinstance(qa, dict):
                    raise where.error(f"question {q} is not a JSON object")
                qwhere = _Where(path, text, f"article {a} paragraph {p} question {q}", qa.get("id"))
                qid = _req_str(qa, "id", qwhere)
                impossible = qa.get("is_impossible", False)
                if not isinstance(impossible, bool):
                    raise qwhere.error("'is_impossible' must be true or false")
                answers, evidence = [], []
                for ans in ([] if impossible else _req_list(qa, "answers", qwhere)):
                    if not isinstance(ans, dict) or not isinstance(ans.get("text"), str):
                        raise qwhere.error("each answer must be an object with a 'text' string")
                    answers.append(ans["text"])
                    start = ans.get("answer_start")
                    evidence += [s.text for s in sentences if isinstance(start, int) and s.start <= start < s.end]
                if not impossible and not answers:
                    raise qwhere.error("an answerable question (is_impossible false) needs at least one answer")
                items.append(LabelledItem(
                    id=qid, question=_req_str(qa, "question", qwhere), action="ABSTAIN" if impossible else "ANSWER",
                    answers=tuple(dict.fromkeys(answers)), evidence=tuple(dict.fromkeys(evidence)),
                    documents=(document,), source="squad2", extra={"title": title}))
    return items


# --- HotpotQA ---------------------------------------------------------------------------

def read_hotpotqa(text: str, path: str) -> list[LabelledItem]:
    """HotpotQA distractor JSON (a list) or JSONL: context paragraphs → documents,
    supporting_facts → gold evidence; every item is answerable."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        data = _parse_json(text, path)
        rows = [(None, obj) for obj in data]
    else:
        rows = [(n, obj) for n, obj in _jsonl(text, path)]
    items = []
    for k, (line, obj) in enumerate(rows, 1):
        if not isinstance(obj, dict):
            raise DatasetError(f"{path}:{line or ''}: item {k} is not a JSON object")
        qid = obj.get("_id", obj.get("id"))
        where = _Where(path, text, f"item {k}", qid, line)
        if not isinstance(qid, str) or not qid:
            raise where.error("expected a non-empty string in '_id'")
        paragraphs: dict[str, list[str]] = {}
        for entry in _req_list(obj, "context", where):
            if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                    and isinstance(entry[1], list) and all(isinstance(s, str) for s in entry[1])):
                raise where.error("each 'context' entry must be [title, [sentence, ...]]")
            paragraphs[entry[0]] = entry[1]
        evidence = []
        for fact in obj.get("supporting_facts", []):
            if not (isinstance(fact, list) and len(fact) == 2 and isinstance(fact[0], str) and isinstance(fact[1], int)):
                raise where.error("each 'supporting_facts' entry must be [title, sentence index]")
            sentences = paragraphs.get(fact[0], [])
            if 0 <= fact[1] < len(sentences):  # HotpotQA has a few facts pointing past the paragraph
                evidence.append(sentences[fact[1]].strip())
        answer = obj.get("answer")
        items.append(LabelledItem(
            id=qid, question=_req_str(obj, "question", where), action="ANSWER",
            answers=(answer,) if isinstance(answer, str) and answer else (), evidence=tuple(evidence),
            documents=tuple(_doc("hotpot", t, "".join(s).strip()) for t, s in paragraphs.items() if "".join(s).strip()),
            source="hotpotqa", extra={k: obj[k] for k in ("type", "level") if isinstance(obj.get(k), str)}))
    return items


# --- the project's own JSONL ------------------------------------------------------------

def read_jsonl(text: str, path: str) -> list[LabelledItem]:
    """The ``sample_kb/questions.jsonl`` schema; its documents are a KB folder, given separately."""
    items = []
    for n, obj in _jsonl(text, path):
        if not isinstance(obj, dict):
            raise DatasetError(f"{path}:{n}: expected a JSON object per line")
        where = _Where(path, text, "item", obj.get("id"), n)
        qid = obj.get("id")
        if not isinstance(qid, (str, int)) or not str(qid).strip():
            raise where.error("expected an 'id' (string or number)")
        action = obj.get("action")
        if action not in ACTIONS:
            raise where.error(f"'action' must be one of {', '.join(ACTIONS)}, found {_shown(action)}")
        answer = _opt_str(obj, "answer", where)
        evidence = obj.get("evidence") or []
        evidence = [evidence] if isinstance(evidence, str) else evidence
        if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
            raise where.error("'evidence' must be a string or a list of strings")
        extra = {k: obj[k] for k in ("domain", "doc_id", "missing", "reason") if obj.get(k)}
        items.append(LabelledItem(
            id=str(qid), question=_req_str(obj, "question", where), action=action,
            scenario=_opt_str(obj, "scenario", where),
            history=_history(obj.get("history"), where, "question", "answer"),
            answers=(answer,) if answer and action == "ANSWER" else (), evidence=tuple(e for e in evidence if e),
            source="jsonl", extra=extra))
    return items


READERS: dict[str, Callable[[str, str], list[LabelledItem]]] = {
    "sharc": read_sharc, "contractnli": read_contractnli, "squad2": read_squad2,
    "hotpotqa": read_hotpotqa, "jsonl": read_jsonl,
}
