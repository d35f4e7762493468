"""Batch analysis of a labelled set with an on-disk trace cache.

Every item is analysed once per (item, documents, non-gate settings, models,
analysis code) and its Trace is appended to a JSONL cache file as soon as it
exists, so an interrupted run resumes where it stopped and a second run analyses
nothing. In
the reading setting each distinct document set (a ShARC snippet, an NDA) gets its
own small knowledge base, indexed once under the cache folder and keyed by the
documents' content hash. Gate thresholds are not part of any key: re-gating the
cached traces (``core.evaluation.calibration.regate``) needs no model.
"""
from __future__ import annotations

import ast
import hashlib
import json
import os
import sys
import threading
import time
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from core import calibrated, models
from core import settings as settings_mod
from core.evaluation import metrics as M
from core.evaluation.importers import Dataset, Document, LabelledItem
from core.gate import answer_polarity
from core.gate.table import SignalTable
from core.text import stable_hash
from core.types import ACTIONS, Trace, from_dict, to_dict

DEFAULT_CACHE = models.PROJECT_ROOT / ".cache" / "eval"
EVIDENCE_PER_ITEM = 3  # without an evidence selection: best sentences of this many kept passages

Progress = Callable[[int, int, str], None]


# --- knowledge bases for document sets --------------------------------------------------

def documents_key(documents: Sequence[Document]) -> str:
    """A content hash of a document set (order-independent): the KB's cache key."""
    return stable_hash(sorted(map(list, documents)), length=16)


def kb_folder(documents: Sequence[Document], cache_dir: Path) -> Path:
    """A KB folder holding ``documents`` as one ``docs.jsonl`` (written once, atomically)."""
    folder = Path(cache_dir) / "kbs" / documents_key(documents)
    target = folder / "docs.jsonl"
    if not target.exists():
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".docs.jsonl.{os.getpid()}.tmp"
        tmp.write_text("".join(json.dumps({"id": d, "title": t, "text": x}, ensure_ascii=False) + "\n"
                               for d, t, x in documents), encoding="utf-8")
        tmp.replace(target)
    return folder


def _open_kb(folder: Path, values: Mapping[str, Any]):
    from core.kb import KnowledgeBase
    return KnowledgeBase.open(folder, values)


def _make_workbench(kb):
    from core.service import Workbench
    return Workbench(kb)


# --- the trace cache --------------------------------------------------------------------

class TraceCache:
    """An append-only JSONL file of {"key", "id", "trace" | "error"} records.

    Each record is one write followed by fsync; a record cut short by a crash is
    dropped on the next open (the file is truncated back to its last full line).
    """

    def __init__(self, path: Path):
        self.path = Path(path)

    def load(self) -> dict[str, dict]:
        if not self.path.exists():
            return {}
        data = self.path.read_bytes()
        end = data.rfind(b"\n") + 1
        if end < len(data):  # a partial last record from an interrupted run
            with open(self.path, "r+b") as f:
                f.truncate(end)
        records = {}
        for line in data[:end].splitlines():
            if line.strip():
                record = json.loads(line)
                records[record["key"]] = record
        return records

    def add(self, record: dict) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())


# Files in a model folder that describe the model without changing what it computes: editing its
# card must not make every cached trace stale.
NOT_MODEL_FILES = (".md", ".gitattributes")


def model_stamp() -> dict[str, Any]:
    """Each model role's source and a hash of its files' contents, so retrained weights invalidate
    traces and a checkout that only rewrites the same files (a branch switch) does not. A model folder
    is named by its folder name, not its path: the same weights in a moved checkout, a second working
    tree or another virtual environment keep their traces (with the full path, each copy of the project
    re-analysed everything: 40 minutes for the training and report sets)."""
    stamp = {}
    for role, source in models.model_ids().items():
        path = Path(source)
        folder = path.is_dir()
        files = sorted(f for f in path.iterdir() if f.is_file() and not f.name.endswith(NOT_MODEL_FILES)) \
            if folder else []
        stamp[role] = [path.name if folder else source,
                       stable_hash([[f.name, _file_digest(f, *_size_and_time(f))] for f in files], length=16)]
    return stamp


def _size_and_time(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


@lru_cache(maxsize=256)
def _file_digest(path: Path, size: int, mtime_ns: int) -> str:
    """SHA-1 of a file's bytes (read once per process for a given size and time)."""
    digest = hashlib.sha1()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# Imported by the pipeline yet without effect on a trace (settings values are keyed themselves).
# ``calibrated`` is pure arithmetic on a finished trace and re-applied whenever traces load, so
# re-fitted calibrators or new calibrator features need no re-analysis.
NOT_ANALYSIS = {"gate", "settings", "calibrated"}


def analysis_modules() -> list[Path]:
    """The source files of ``core.pipeline`` and every ``core`` module (or package) it imports,
    transitively (read from the import statements, so the UI, the agents and the CLI are left out)."""
    root = models.PROJECT_ROOT
    todo, seen, files = ["core.pipeline"], set(), set()
    while todo:
        name = todo.pop()
        if name in seen or name.split(".")[1] in NOT_ANALYSIS:
            continue
        seen.add(name)
        path = _module_file(root, name)
        if path is None:  # a name imported from a module, not a module
            continue
        files.add(path)
        todo += [".".join(name.split(".")[:k]) for k in range(2, name.count(".") + 1)]  # its packages run too
        todo += _core_imports(path.read_text(encoding="utf-8"))
    return sorted(files)


_PARSING = threading.Lock()
AST_RETRIES = 3


@lru_cache(maxsize=512)
def _core_imports(source: str) -> tuple[str, ...]:
    """The ``core`` modules, and the names imported from them, that a module's source imports. Parsed
    once per version of a file, one parse at a time, and again on a spurious "AST constructor recursion
    depth mismatch": before 3.11.8 and 3.12.1, CPython can raise that SystemError when ASTs are built in
    two threads at once (python/cpython#106905), as a Streamlit page's script threads do — it stopped
    the Evaluate page once."""
    for attempt in range(AST_RETRIES):
        try:
            with _PARSING:
                tree = ast.parse(source)
            break
        except SystemError as exc:
            if "recursion depth mismatch" not in str(exc) or attempt == AST_RETRIES - 1:
                raise
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("core"):
            names += [node.module] * (node.module != "core") + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names += [a.name for a in node.names if a.name.startswith("core.")]
    return tuple(names)


def _module_file(root: Path, name: str) -> Path | None:
    base = root.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def code_stamp() -> str:
    """A hash of the analysis code: traces made by older pipeline code are not reused."""
    digest = hashlib.sha1()
    for path in analysis_modules():
        digest.update(path.relative_to(models.PROJECT_ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


# --- results ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Shard:
    """Items to analyse against one knowledge base: the KB folder, or the documents it is built from."""
    items: tuple[LabelledItem, ...]
    keys: tuple[str, ...]  # each item's cache key
    documents: tuple[Document, ...] = ()
    folder: str = ""

    def split(self, size: int) -> list["Shard"]:
        """Pieces of at most ``size`` items against the same knowledge base."""
        return [Shard(self.items[n:n + size], self.keys[n:n + size], self.documents, self.folder)
                for n in range(0, len(self.items), size)]


@dataclass(frozen=True)
class RunResult:
    """Traces of a labelled set (in file order) and how the run went."""
    dataset: Dataset
    items: tuple[LabelledItem, ...]  # the items that have a trace
    traces: tuple[Trace, ...]
    errors: dict[str, str]  # item id -> why it could not be analysed
    analysed: int  # items analysed in this run (the rest came from the cache)
    cached: int
    seconds: float  # wall time of this run's analysis, index builds included
    index_seconds: float  # of which opening or building knowledge bases
    values: dict[str, Any]
    cache_file: str

    @property
    def rate(self) -> float | None:
        """Items analysed per second in this run (None when everything was cached)."""
        return self.analysed / self.seconds if self.analysed and self.seconds > 0 else None

    @cached_property
    def table(self) -> SignalTable:
        return SignalTable.from_traces(self.traces)

    @cached_property
    def gold(self) -> np.ndarray:
        return M.codes([i.action for i in self.items])

    @cached_property
    def has_context(self) -> np.ndarray:
        return np.array([i.has_context for i in self.items], dtype=bool)

    def summary(self) -> str:
        rate = f", {self.rate:.2f} items/s, {self.index_seconds:.1f} s of it indexing" if self.rate else ""
        errors = f", {len(self.errors)} could not be analysed" if self.errors else ""
        return (f"{len(self.traces)} traces ({self.analysed} analysed in {self.seconds:.1f} s{rate}, "
                f"{self.cached} from the cache{errors})")


class BatchRunner:
    """Analyse every item of a dataset once, caching traces on disk.

    ``open_kb(folder, values)`` and ``make_workbench(kb)`` default to ``KnowledgeBase.open`` and
    ``core.service.Workbench``; tests pass fakes. ``outcomes`` then writes each trace's response.
    """

    def __init__(self, values: Mapping[str, Any] | None = None, cache_dir: str | Path | None = None, *,
                 progress: Progress | None = None, show_bar: bool = True,
                 open_kb: Callable[[Path, Mapping[str, Any]], Any] | None = None,
                 make_workbench: Callable[[Any], Any] | None = None):
        self.values = settings_mod.resolve(values)
        self.cache_dir = Path(cache_dir) if cache_dir else DEFAULT_CACHE
        self.progress = progress
        self.show_bar = show_bar
        self.open_kb = open_kb or _open_kb
        self.make_workbench = make_workbench or _make_workbench

    def run_key(self) -> str:
        """What every cached trace depends on besides its item: non-gate settings, models, analysis code."""
        analysis = {k: v for k, v in self.values.items() if settings_mod.BY_NAME[k].stage != "gate"}
        return stable_hash(analysis, model_stamp(), code_stamp(), length=16)

    def cache_path(self, dataset: Dataset) -> Path:
        stem = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in Path(dataset.path).stem)
        return self.cache_dir / "traces" / f"{stem}-{dataset.format}-{dataset.setting}-{self.run_key()}.jsonl"

    def run(self, dataset: Dataset) -> RunResult:
        cache = TraceCache(self.cache_path(dataset))
        records = cache.load()
        folder_kb = self.open_kb(Path(dataset.kb_folder), self.values) if dataset.kb_folder else None
        docs_keys = {item.id: folder_kb.fingerprint if folder_kb else documents_key(dataset.documents_for(item))
                     for item in dataset.items}
        keys = {item.id: _item_key(item, docs_keys[item.id]) for item in dataset.items}
        todo = [item for item in dataset.items if keys[item.id] not in records]
        cached = len(dataset.items) - len(todo)

        bar = _bar(len(dataset.items), cached) if self.show_bar and todo else None
        report = self.progress or (lambda done, total, stage: None)
        started = time.perf_counter()
        index_seconds = 0.0
        done = cached
        groups: dict[str, list[LabelledItem]] = {}
        for item in todo:
            groups.setdefault(docs_keys[item.id], []).append(item)
        shards = [Shard(tuple(group), tuple(keys[item.id] for item in group),
                        () if dataset.kb_folder else dataset.documents_for(group[0]), dataset.kb_folder)
                  for group in groups.values()]
        try:
            for record, opening in self._analysed(shards, folder_kb,
                                                  lambda: report(done, len(dataset.items), "index")):
                index_seconds += opening
                cache.add(record)
                records[record["key"]] = record
                done += 1
                report(done, len(dataset.items), "analyse")
                if bar:
                    bar.update(1)
        finally:
            if bar:
                bar.close()
        seconds = time.perf_counter() - started

        items, traces, errors = [], [], {}
        for item in dataset.items:
            record = records[keys[item.id]]
            if "error" in record:
                errors[item.id] = record["error"]
            else:
                items.append(item)
                # the calibrated signals are pure arithmetic on the trace: recomputed, so re-fitted
                # calibrators apply to cached traces without re-analysis
                traces.append(calibrated.with_probabilities(from_dict(Trace, record["trace"])))
        return RunResult(dataset=dataset, items=tuple(items), traces=tuple(traces), errors=errors,
                         analysed=len(todo), cached=cached, seconds=seconds, index_seconds=index_seconds,
                         values=dict(self.values),
                         cache_file=str(cache.path))

    def _analysed(self, shards: Sequence[Shard], folder_kb, on_open: Callable[[], None]
                  ) -> Iterator[tuple[dict[str, Any], float]]:
        """Each item's cache record as soon as it exists, with the seconds spent opening its knowledge
        base first (on a shard's first record); here, in this process, one shard after another."""
        for shard in shards:
            on_open()
            workbench, kb_error, seconds = self.open_shard(shard, folder_kb)
            for n, record in enumerate(self.shard_records(shard, workbench, kb_error)):
                yield record, seconds if n == 0 else 0.0

    def open_shard(self, shard: Shard, folder_kb=None) -> tuple[Any, str | None, float]:
        """(workbench, why there is none, seconds it took) for a shard's knowledge base; ``folder_kb``
        is the shard's folder already open."""
        started = time.perf_counter()
        if shard.folder:
            kb = folder_kb if folder_kb is not None else self.open_kb(Path(shard.folder), self.values)
            workbench, kb_error = self.make_workbench(kb), None
        else:
            workbench, kb_error = self._workbench_for(shard.documents)
        return workbench, kb_error, time.perf_counter() - started

    def shard_records(self, shard: Shard, workbench, kb_error: str | None) -> Iterator[dict[str, Any]]:
        """The cache record of each of a shard's items: its trace, or why it has none."""
        for item, key in zip(shard.items, shard.keys):
            record = {"key": key, "id": item.id}
            if kb_error:
                record["error"] = kb_error
            else:
                record.update(self._analyse(workbench, item))
            yield record

    def _workbench_for(self, documents: Sequence[Document]) -> tuple[Any, str | None]:
        from core.kb import KnowledgeBaseError
        if not documents:
            return None, "the item has no documents to form a knowledge base from"
        try:
            return self.make_workbench(self.open_kb(kb_folder(documents, self.cache_dir), self.values)), None
        except KnowledgeBaseError as exc:
            return None, f"its knowledge base could not be built: {exc}"

    def outcomes(self, run: "RunResult", values: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Item id → ``core.service.Outcome`` of its cached trace: decided with ``values`` (default: the
        run's) and the response written, as ``python -m core ask`` and the Inspect page write it."""
        from core.service import conclude
        values = settings_mod.resolve(values if values is not None else self.values)
        return {item.id: conclude(trace, values) for item, trace in zip(run.items, run.traces)}

    def _analyse(self, workbench, item: LabelledItem) -> dict[str, Any]:
        from core.pipeline import make_query
        try:
            query = make_query(item.question, item.scenario, item.history)
            return {"trace": to_dict(workbench.analyze(query, self.values))}
        except ValueError as exc:  # InputError and the stages' own input checks: the item is unusable
            return {"error": str(exc)}


def _item_key(item: LabelledItem, docs_key: str) -> str:
    return stable_hash(item.id, item.question, item.scenario, item.history, docs_key, length=16)


def _bar(total: int, initial: int):
    from tqdm import tqdm
    return tqdm(total=total, initial=initial, unit="item", desc="analysing", file=sys.stderr,
                dynamic_ncols=True, smoothing=0.1)


# --- predictions and the report ---------------------------------------------------------

def predicted_evidence(trace: Trace, limit: int = EVIDENCE_PER_ITEM) -> list[str]:
    """What the answer would cite: the pragmatic evidence selection (seed 003) when the trace has
    one, else the best sentence of each kept passage, in rank order."""
    if trace.evidence is not None and trace.evidence.sentences:
        return [s.text for s in trace.evidence.sentences]
    by_id = {n.passage_id: n for n in trace.nli}
    out = []
    for p in trace.kept_passages()[:limit]:
        n = by_id.get(p.passage.id)
        sentences = p.passage.sentences
        if n is not None and sentences:
            out.append(sentences[min(n.best_sentence, len(sentences) - 1)].text)
        else:
            out.append(p.passage.text)
    return out


def predicted_answers(run: RunResult, codes: np.ndarray,
                      outcomes: Mapping[str, Any] | None = None) -> list[str | None]:
    """Each item's answer: with ``outcomes`` (``BatchRunner.outcomes``) the answer the agents wrote
    (None where the response is not an ANSWER, e.g. withheld by a grounding check); without, what an ANSWER
    gives that the trace already holds: the yes/no where the user's conditions decide it, else the value the
    analysis chose for a question asking one (``Trace.answer``: a date, an amount, a name), so an answer quoting
    the wrong value counts against it too."""
    if outcomes is not None:
        return [_written_answer(outcomes.get(item.id)) for item in run.items]
    return [_traced_answer(ACTIONS[code], outcome, trace)
            for code, outcome, trace in zip(codes, run.table.outcome, run.traces)]


def _traced_answer(action: str, outcome: str, trace: Trace) -> str | None:
    if action != "ANSWER":
        return None
    return answer_polarity(action, outcome) or (trace.answer.value if trace.answer else "") or None


def _written_answer(outcome) -> str | None:
    return outcome.response.answer or None if outcome is not None and outcome.action == "ANSWER" else None


def prediction_records(run: RunResult, codes: np.ndarray, rules: Sequence[str] | None = None,
                       probabilities: np.ndarray | None = None,
                       outcomes: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """One JSON-ready row per item: gold, predicted action, rule, answer, evidence, signals, KB folder;
    with ``outcomes`` also the response the user would read (its action and text)."""
    answers = predicted_answers(run, codes, outcomes)
    rows = []
    for n, (item, trace) in enumerate(zip(run.items, run.traces)):
        row = {"id": item.id, "question": item.question, "scenario": item.scenario,
               "history": [list(t) for t in item.history], "gold": item.action, "action": ACTIONS[codes[n]],
               "correct": item.action == ACTIONS[codes[n]], "rule": rules[n] if rules is not None else None,
               "answer": answers[n], "gold_answers": list(item.answers),
               "evidence": predicted_evidence(trace), "gold_evidence": list(item.evidence),
               "kb": trace.kb, "signals": to_dict(trace.signals), "extra": item.extra}
        if outcomes is not None and item.id in outcomes:
            response = outcomes[item.id].response
            row["response"] = {"action": response.action, "kind": response.kind, "text": response.text}
        if probabilities is not None:
            row["probabilities"] = {a: float(p) for a, p in zip(ACTIONS, probabilities[n])}
        rows.append(row)
    return rows


def evaluate(run: RunResult, codes: np.ndarray, *, answer_score: np.ndarray | None = None,
             ask_score: np.ndarray | None = None, score_names: tuple[str, str] = ("answerability", "incompleteness"),
             outcomes: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Every metric of one configuration's actions on a run.

    ``answer_score`` orders items for the risk–coverage curve (default: the answerability
    signal A(q)); ``ask_score`` is the ANSWER-vs-ASK AUROC's score over items with a scenario
    or history (default: incompleteness I(q)). With ``outcomes`` (the responses written for these
    actions) answers are scored from the written answer text (EM/F1), and the actions the user
    reads after the answer-level checks are scored too.
    """
    table = run.table
    answer_score = table.columns["answerability"] if answer_score is None else answer_score
    ask_score = table.columns["incompleteness"] if ask_score is None else ask_score
    gold = run.gold
    sel = run.has_context & ((gold == M.ANSWER) | (gold == M.ASK))
    report = {
        "dataset": run.dataset.describe(), "format": run.dataset.format, "setting": run.dataset.setting,
        "n_items": len(run.dataset.items), "n_analysed": len(run.items), "errors": len(run.errors),
        "actions": M.action_metrics(gold, codes),
        "answers": {"source": "written" if outcomes is not None else "polarity or value",
                    **M.answer_metrics([i.answers for i in run.items], predicted_answers(run, codes, outcomes))},
        "evidence": M.evidence_metrics([i.evidence for i in run.items], [predicted_evidence(t) for t in run.traces]),
        "risk_coverage": {"score": score_names[0], **M.risk_coverage(gold == M.ANSWER, answer_score)},
        "auroc_answer_vs_ask": {"score": score_names[1], "n": int(sel.sum()),
                                "value": M.auroc(gold[sel] == M.ASK, ask_score[sel])},
    }
    if outcomes is not None:
        written = M.codes([outcomes[i.id].action for i in run.items])
        report["response_actions"] = M.action_metrics(gold, written)
    return report
