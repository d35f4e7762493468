"""What the pages share: the cached knowledge bases, pipelines and models, the analysed trace
and its clarification dialogue in session state, the sample questions, and uploads into a KB folder.

Heavy objects are ``st.cache_resource`` (one copy for every session of the server); the
analysed question, its dialogue and the current Trace are per-session ``st.session_state``.
Moving a gate slider re-decides only the dialogue's current turn (``decide()``, no analysis);
other settings replay the dialogue's replies through the Pipeline, whose per-stage caches re-run
only the stages they affect.
"""
from __future__ import annotations

import json
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import streamlit as st

from core import settings as settings_mod
from core.dialogue import Dialogue
from core.kb import SUFFIXES, KnowledgeBase, KnowledgeBaseError, index_settings, read_documents
from core.paths import TEXT_SUFFIXES, PathNotAllowed, binary_reason, confine
from core.service import Workbench, respond
from core.types import Decision, Query, Response, RuleResult, Trace, to_dict

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_KB = ROOT / "sample_kb" / "documents"
SAMPLE_QUESTIONS = ROOT / "sample_kb" / "questions.jsonl"
KBS_DIR = ROOT / "kbs"  # default home of knowledge bases made on the Knowledge base page

KB_KEY = "aw_kb"  # the selected KB folder (shared by the Inspect and Knowledge base pages)
EXTRA_KBS_KEY = "aw_kb_extra"  # folders chosen by path during this session
QUERY_KEY = "aw_query"  # the Query last analysed
QUERY_KB_KEY = "aw_query_kb"  # the KB menu entry it was analysed against (the results belong to both)
TRACE_KEY = "aw_trace"
DECISION_KEY = "aw_decision"
DIALOGUE_KEY = "aw_dialogue"  # the core.dialogue.Dialogue of the question analysed
DIALOGUE_ID_KEY = "aw_dialogue_id"  # [KB and query, non-gate settings] it was analysed with
MOVE_KEY = "aw_dialogue_move"  # a reply or an edit from a button callback, applied on the next run
RESPONSE_KEY = "aw_response"  # the Response the action card shows
RESPONSES_KEY = "aw_responses"  # core.service.respond results for the current trace (see checked_response)
QUESTION_KEY, SCENARIO_KEY, HISTORY_KEY = "aw_question", "aw_scenario", "aw_history"  # the Inspect form
ANALYSE_NOW_KEY = "aw_analyse_now"  # set by whoever fills the form: Inspect analyses it on its next run


# --- knowledge bases -------------------------------------------------------------------

def display_path(folder: str | Path) -> str:
    """A folder relative to the project when it is inside it (shorter in menus)."""
    path = Path(folder).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def resolve_folder(text: str) -> Path:
    """A user-typed folder: relative paths are taken from the project root."""
    path = Path(text.strip()).expanduser()
    return (path if path.is_absolute() else ROOT / path).resolve()


def allowed_path(text: str) -> Path:
    """A user-typed folder or file, resolved and confined to the roots the server allows
    (``core.paths``); PathNotAllowed says which roots those are and how to add one."""
    if not text.strip():
        raise PathNotAllowed("Type a path.")
    return confine(resolve_folder(text))


def _has_documents(folder: Path) -> bool:
    return any(p.is_file() and p.suffix.lower() in SUFFIXES for p in folder.rglob("*") if ".index" not in p.parts)


def kb_choices(base: Path = KBS_DIR) -> list[str]:
    """The sample KB, every folder under ``kbs/`` and folders picked this session."""
    found = [DEFAULT_KB]
    if base.is_dir():  # a folder with no document in it (an upload that failed) is no knowledge base
        found += sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".") and _has_documents(p))
    found += [Path(p) for p in st.session_state.get(EXTRA_KBS_KEY, [])]
    return list(dict.fromkeys(display_path(p) for p in found))


def remember_kb(folder: Path) -> str:
    """Add a folder to this session's KB menu and return its menu entry (PathNotAllowed outside the
    allowed roots)."""
    entry = display_path(confine(folder))
    extra = st.session_state.setdefault(EXTRA_KBS_KEY, [])
    if entry not in extra:
        extra.append(entry)
    return entry


def selected_kb() -> Path:
    return resolve_folder(st.session_state.get(KB_KEY) or display_path(DEFAULT_KB))


@st.cache_resource(show_spinner=False, max_entries=8)
def open_kb(folder: str, index_key: str) -> KnowledgeBase:
    """The KB's index, built or refreshed when its files or index settings changed (shared)."""
    return KnowledgeBase.open(folder, json.loads(index_key))


def load_kb(folder: Path, values: Mapping[str, Any]) -> KnowledgeBase:
    with st.spinner(f"Opening the knowledge base {display_path(folder)} (indexing it if needed)…"):
        return open_kb(str(folder), json.dumps(index_settings(values), sort_keys=True))


# --- models and pipelines --------------------------------------------------------------

@st.cache_resource(show_spinner="Loading the models (once per server)…")
def load_models() -> dict[str, str]:
    """Load every model role once for the whole server; ModelUnavailable names what to install."""
    from core import models
    return models.DEFAULT.warm_up()


@st.cache_resource(show_spinner=False, max_entries=8)
def pipeline_for(fingerprint: str, _kb: KnowledgeBase) -> Workbench:
    """One Workbench (pipeline, stage caches and lock) per KB index, shared by every session."""
    return Workbench(_kb)


QUEUED = "Queued: another session is analysing this same question; yours continues from its results when it ends."


@dataclass(frozen=True)
class SessionWorkbench:
    """What a session's Dialogue analyses with: the shared Workbench, telling this user when they queue."""
    shared: Workbench

    @property
    def models(self):
        return self.shared.models

    def analyze(self, query: Query, overrides: Mapping[str, Any] | None = None) -> Trace:
        return self.shared.analyze(query, overrides, on_wait=lambda: st.toast(QUEUED, icon="⏳"))


def _model_values(values: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if settings_mod.BY_NAME[k].stage != "gate"}


def current_dialogue(kb: KnowledgeBase, query: Query, values: Mapping[str, Any]) -> Dialogue:
    """The dialogue about ``query``: started on a new question, re-gated when only gate settings
    moved (no analysis), replayed with the same replies when another setting changed, then moved
    by a pending reply or edit (``MOVE_KEY``). Raises DialogueError for a move it cannot take;
    the dialogue before the move stays current."""
    question_id = json.dumps([kb.fingerprint, to_dict(query)], sort_keys=True)
    model_id = json.dumps(_model_values(values), sort_keys=True)
    dialogue: Dialogue | None = st.session_state.get(DIALOGUE_KEY)
    stored = st.session_state.get(DIALOGUE_ID_KEY) or [None, None]
    move = st.session_state.pop(MOVE_KEY, None)
    if dialogue is not None and stored[0] == question_id and stored[1] == model_id:
        dialogue = dialogue.regate(values)
    else:
        load_models()
        with st.spinner("Analysing…"):
            if dialogue is not None and stored[0] == question_id:
                dialogue = dialogue.replay(values)
            else:
                dialogue = Dialogue.start(SessionWorkbench(pipeline_for(kb.fingerprint, kb)), query, dict(values))
    _keep(dialogue, question_id, model_id)
    if move is not None:
        with st.spinner("Reading your reply…"):
            kind, *args = move
            dialogue = dialogue.answer(args[0], question=args[1]) if kind == "answer" else dialogue.rewind(*args)
        _keep(dialogue, question_id, model_id)
    return dialogue


def _keep(dialogue: Dialogue, question_id: str, model_id: str) -> None:
    st.session_state[DIALOGUE_KEY] = dialogue
    st.session_state[DIALOGUE_ID_KEY] = [question_id, model_id]
    st.session_state[TRACE_KEY] = dialogue.trace


def forget_dialogue() -> None:
    """A new question was submitted: its dialogue starts at turn 0."""
    for key in (DIALOGUE_KEY, DIALOGUE_ID_KEY, MOVE_KEY):
        st.session_state.pop(key, None)


def current_analysis(values: Mapping[str, Any]) -> tuple[Trace, Decision] | None:
    """The trace loaded on the Inspect page, re-gated with ``values`` (no model call)."""
    from core.gate import decide
    trace = st.session_state.get(TRACE_KEY)
    return None if trace is None else (trace, decide(trace, values))


def checked_response(trace: Trace, decision: Decision,
                     values: Mapping[str, Any]) -> tuple[Response, tuple[RuleResult, ...]]:
    """``core.service.respond`` memoised for the current trace by what the response depends
    on: the deciding rule (its reason and polarity follow from it, its thresholds do not matter) and
    the response settings. A gate slider that leaves the deciding rule as it was writes no new
    response, so it runs no grounding NLI; one that changes it writes the new response once."""
    from core.agents import RESPONSE_SETTINGS
    key = json.dumps([decision.action, decision.rule, decision.answer_polarity,
                      {k: values[k] for k in RESPONSE_SETTINGS}], sort_keys=True, default=str)
    memo = st.session_state.get(RESPONSES_KEY)
    if memo is None or memo["trace"] is not trace:
        memo = st.session_state[RESPONSES_KEY] = {"trace": trace, "responses": {}}
    if key not in memo["responses"]:
        dialogue = st.session_state.get(DIALOGUE_KEY)  # its workbench's models wrote the trace
        memo["responses"][key] = respond(trace, decision, values,
                                         models=getattr(getattr(dialogue, "workbench", None), "models", None))
    return memo["responses"][key]


def trace_json(trace: Trace, decision: Decision, dialogue: Dialogue | None = None) -> str:
    """The trace and decision; with a dialogue, its turns too (each without its own trace)."""
    data = {"trace": to_dict(trace), "decision": to_dict(decision)}
    if dialogue is not None:
        data["dialogue"] = [{"action": t.action, "rule": t.decision.rule, "question": t.question, "target": t.target,
                             "reply": t.reply, "rho": t.rho, "note": t.note, "override": t.override,
                             "resolved": [to_dict(c) for c in t.resolved]} for t in dialogue.turns]
    return json.dumps(data, indent=2, ensure_ascii=False)


# --- inputs ----------------------------------------------------------------------------

def parse_history(text: str) -> list[tuple[str, str]]:
    """Dialogue history typed one turn per line as "question = answer"."""
    turns = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        question, sep, answer = line.rpartition("=")
        if not sep or not question.strip() or not answer.strip():
            raise ValueError(f"History line {n} should read 'question = answer', "
                             f"e.g. 'Are you over 66? = Yes'; it reads {line.strip()[:80]!r}.")
        turns.append((question.strip(), answer.strip()))
    return turns


def history_text(history: Sequence[Mapping[str, str] | Sequence[str]]) -> str:
    """History turns ({"question", "answer"} or (question, answer)) as the form's "question = answer" lines."""
    pairs = [(h["question"], h["answer"]) if isinstance(h, Mapping) else tuple(h) for h in history]
    return "\n".join(f"{q} = {a}" for q, a in pairs)


def fill_inspect_form(question: str, scenario: str, history: Sequence, kb_folder: str | Path) -> None:
    """Load a question (with its scenario, history and KB) into the Inspect form, to be analysed when
    Inspect next runs (the sample menu and the Evaluate page's click-through use this)."""
    st.session_state[QUESTION_KEY] = question
    st.session_state[SCENARIO_KEY] = scenario
    st.session_state[HISTORY_KEY] = history_text(history)
    st.session_state[KB_KEY] = remember_kb(Path(kb_folder)) if Path(kb_folder).resolve() != DEFAULT_KB.resolve() \
        else display_path(DEFAULT_KB)
    st.session_state[ANALYSE_NOW_KEY] = True


@st.cache_data(show_spinner=False)
def sample_questions(path: str = str(SAMPLE_QUESTIONS)) -> list[dict]:
    """The labelled sample questions (empty if the file is absent)."""
    file = Path(path)
    if not file.is_file():
        return []
    return [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]


# --- uploads ---------------------------------------------------------------------------

SAFE_NAME = re.compile(r"[^A-Za-z0-9._ -]+")
KB_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


@dataclass(frozen=True)
class UploadReport:
    added: tuple[str, ...]  # file names written into the KB folder
    skipped: tuple[str, ...]  # "name: why" for every file left out
    notes: tuple[str, ...] = ()  # warnings about files that were added (renamed, partly unreadable)


def add_files(folder: Path, files: Sequence[tuple[str, bytes]]) -> UploadReport:
    """Write uploaded files into ``folder`` when the KB reader can read at least one document
    from them; never overwrite a file already there (a new name is chosen instead). A text file
    whose bytes are binary is refused. The folder is made only when a file is written into it."""
    added, skipped, notes = [], [], []
    for raw_name, data in files:
        name = SAFE_NAME.sub("_", Path(raw_name).name).strip(" .") or "upload"
        if Path(name).suffix.lower() not in SUFFIXES:
            skipped.append(f"{raw_name}: not a {', '.join(SUFFIXES)} file")
            continue
        if Path(name).suffix.lower() in TEXT_SUFFIXES and (why := binary_reason(data)):
            skipped.append(f"{raw_name}: {why}")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / name).write_bytes(data)
            try:
                docs, problems = read_documents(tmp)
            except KnowledgeBaseError as exc:
                docs, problems = [], [str(exc)]
        if not docs:
            skipped.append(f"{raw_name}: " + ("; ".join(p.split(": ", 1)[-1] for p in problems)
                                               or "no text could be read"))
            continue
        folder.mkdir(parents=True, exist_ok=True)
        target, n = folder / name, 1
        while target.exists():
            n += 1
            target = folder / f"{Path(name).stem}-{n}{Path(name).suffix}"
        if target.name != name:
            notes.append(f"{raw_name}: a file of that name is already in the KB; saved as {target.name}")
        notes += [f"{raw_name}: {p.split(': ', 1)[-1]}" for p in problems]
        target.write_bytes(data)
        added.append(target.name)
    return UploadReport(tuple(added), tuple(skipped), tuple(notes))


def discard_new_kb(folder: Path) -> None:
    """Remove a knowledge base this upload created and could not index, so no half-made KB stays in
    the menu (only ever a folder inside the allowed roots)."""
    folder = confine(folder)
    if folder.is_dir() and folder != KBS_DIR.resolve():
        shutil.rmtree(folder)


def new_kb_folder(base: Path, name: str) -> Path:
    """A new KB's folder: a plain name under ``base``, which must lie in the allowed roots
    (PathNotAllowed) and must not exist yet (ValueError: adding to a KB is the other choice)."""
    if not KB_NAME.fullmatch(name.strip()):
        raise ValueError("A knowledge base name uses letters, digits, '-' and '_' (at most 64), "
                         f"starting with a letter or digit; {name.strip()!r} does not.")
    folder = confine(base) / name.strip()
    if folder.exists():
        raise ValueError(f"{display_path(folder)} exists already: choose 'the selected knowledge base' to add to it, "
                         "or another name.")
    return folder


def reindex(folder: Path, values: Mapping[str, Any], progress) -> KnowledgeBase:
    """Rebuild the KB's index (unchanged files are reused) and drop the cached copy."""
    kb = KnowledgeBase.build(folder, dict(values), progress=progress)
    open_kb.clear()
    return kb

