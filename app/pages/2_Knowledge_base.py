"""The knowledge base: its documents and passages, uploads into a new or existing KB, re-indexing.
Folders are confined to the project's kbs/ and sample_kb/ plus the roots allowed by AW_ALLOWED_ROOTS
(core.paths); a new KB that cannot be indexed is removed again."""
from pathlib import Path

import streamlit as st

from app import wiring
from components.settings_panel import current_values
from core.kb import SUFFIXES, KnowledgeBaseError
from core.kb.progress import ProgressLine
from core.models import ModelUnavailable
from core.paths import ENV, PathNotAllowed

st.set_page_config(page_title="Knowledge base · Answerability Workbench", page_icon="📚", layout="wide")

PENDING_KB = "aw_kb_pending"  # a folder to select on the next run (the menu is drawn before the buttons)
REPORT = "aw_upload_report"
UPLOADS = "aw_uploads"  # how many uploads were processed (names the uploader widget)
values = current_values()


def open_folder() -> None:
    text = st.session_state.get("aw_kb_path", "").strip()
    if not text:
        return
    try:
        folder = wiring.allowed_path(text)
        if not folder.is_dir():
            raise PathNotAllowed(f"{text} {'is not a folder' if folder.exists() else 'does not exist'}: the knowledge "
                                 f"base is still {st.session_state.get(wiring.KB_KEY) or 'the one selected'}.")
        st.session_state[wiring.KB_KEY] = wiring.remember_kb(folder)
    except PathNotAllowed as exc:
        st.session_state[REPORT] = {"errors": [str(exc)]}


def progress_bar(label: str):
    bar = st.progress(0.0, text=label)
    line = ProgressLine()

    def update(done: int, total: int, stage: str) -> None:
        bar.progress(min(1.0, done / total) if total else 1.0, text=f"{label} — {line(done, total, stage)}")
    return update


def reindex(folder: Path, created: bool = False) -> None:
    """Index ``folder`` and select it; a KB this upload ``created`` that fails to index is removed."""
    try:
        kb = wiring.reindex(folder, values, progress_bar(f"Indexing {wiring.display_path(folder)}"))
    except (KnowledgeBaseError, ModelUnavailable, ValueError) as exc:
        st.session_state[REPORT] = st.session_state.get(REPORT, {}) | {"errors": [str(exc)]}
        if created:
            wiring.discard_new_kb(folder)
            st.session_state[REPORT]["errors"].append(f"{wiring.display_path(folder)} was removed again: nothing "
                                                      "of this upload was kept.")
            st.rerun()
    else:
        stats = kb.stats
        st.session_state[REPORT] = st.session_state.get(REPORT, {}) | {"indexed": (
            f"Indexed {wiring.display_path(folder)}: {stats.get('documents')} documents, {stats.get('passages')} "
            f"passages ({stats.get('embedded_passages')} embedded now, {stats.get('reused_passages')} reused from "
            f"the previous index) in {stats.get('seconds')} s.")}
    st.session_state[PENDING_KB] = wiring.remember_kb(folder)
    st.rerun()


if PENDING_KB in st.session_state:
    st.session_state[wiring.KB_KEY] = st.session_state.pop(PENDING_KB)

st.title("Knowledge base", anchor=False)
choices = wiring.kb_choices()
if st.session_state.get(wiring.KB_KEY) not in choices:
    st.session_state[wiring.KB_KEY] = choices[0]
left, right = st.columns([2, 2], vertical_alignment="bottom")
left.selectbox("Knowledge base", choices, key=wiring.KB_KEY, persist_state="session",
               help="Also the KB the Inspect page analyses against.")
right.text_input("…or open a folder (relative to the project, or absolute)", key="aw_kb_path",
                 on_change=open_folder, placeholder="e.g. kbs/my_docs",
                 help=f"Only folders under kbs/ and sample_kb/, or under a root the server was started with in "
                      f"{ENV} (several separated by ':').")

report = st.session_state.pop(REPORT, None)
if report:
    for line in report.get("errors", ()):
        st.error(line)
    for line in report.get("skipped", ()):
        st.error(f"Skipped {line}")
    for line in report.get("notes", ()):
        st.warning(line)
    if report.get("indexed"):
        st.success(report["indexed"])

folder = wiring.selected_kb()
try:
    kb = wiring.load_kb(folder, values)
except (KnowledgeBaseError, ModelUnavailable) as exc:
    kb = None
    st.error(str(exc))
    if isinstance(exc, KnowledgeBaseError):  # its message names the command line; this page does the same
        st.info("Here, add documents under **Add documents** below (into the selected knowledge base): they are "
                "indexed at once.")

if kb is not None:
    docs = list(kb.documents.values())
    per_doc: dict[str, int] = {}
    for p in kb.passages:
        per_doc[p.doc_id] = per_doc.get(p.doc_id, 0) + 1
    cols = st.columns(4)
    cols[0].metric("Documents", len(docs))
    cols[1].metric("Passages", len(kb.passages))
    cols[2].metric("Problems", len(kb.problems))
    cols[3].metric("Index", kb.fingerprint, help="Fingerprint of the files, chunk settings and embedder.")
    chunking = kb.manifest.get("chunking", {})
    store = kb.manifest.get("vector_store")
    vectors = "FAISS" if not store else f"LanceDB at {store['uri']}" if store["uri"] else "embedded LanceDB"
    st.caption(f"Folder {folder} · chunks of ~{chunking.get('chunk_chars')} characters, overlap "
               f"{chunking.get('chunk_overlap')} sentence(s) · {kb.manifest.get('index_type')} index in {vectors} · "
               f"built {kb.manifest.get('built_at')}")
    for problem in kb.problems:
        st.warning(problem)
    st.subheader("Documents", anchor=False)
    st.dataframe([{"id": d.id, "title": d.title, "file": d.source, "passages": per_doc.get(d.id, 0),
                   "characters": len(d.text)} for d in docs], hide_index=True, width="stretch")
    st.subheader("Passages", anchor=False)
    doc_id = st.selectbox("Document", [d.id for d in docs], key="aw_kb_doc")
    st.dataframe([{"passage": p.id, "sentences": len(p.sentences), "characters": len(p.text), "text": p.text}
                  for p in kb.passages if p.doc_id == doc_id], hide_index=True, width="stretch")
    if st.button("Re-index this knowledge base", key="aw_reindex",
                 help="Reads changed files again, reuses the rest, and applies the sidebar's index settings."):
        reindex(folder)

st.divider()
st.subheader("Add documents", anchor=False)
st.caption(f"Files ({', '.join(SUFFIXES)}) are checked one by one: a file the reader cannot get text from is "
           "reported and skipped; a name already in the folder gets a new name, so nothing indexed is lost. "
           "The index is then refreshed, re-embedding only new or changed files.")
target = st.radio("Into", ["a new knowledge base", "the selected knowledge base"], key="aw_upload_target",
                  horizontal=True)
if target == "a new knowledge base":
    base_col, name_col = st.columns(2)
    base_col.text_input("Parent folder", value=wiring.display_path(wiring.KBS_DIR), key="aw_kb_base")
    name_col.text_input("Name", key="aw_kb_name", placeholder="e.g. my_policies")
# A fresh key after each upload empties the uploader, so the same files are not added twice.
files = st.file_uploader("Documents", accept_multiple_files=True, key=f"aw_upload_{st.session_state.get(UPLOADS, 0)}")
if st.button("Add and index", type="primary", key="aw_add", disabled=not files):
    created = target == "a new knowledge base"
    try:
        if created:
            dest = wiring.new_kb_folder(wiring.resolve_folder(st.session_state.get("aw_kb_base", "kbs")),
                                        st.session_state.get("aw_kb_name", ""))
        else:
            dest = wiring.allowed_path(str(folder))
    except ValueError as exc:  # PathNotAllowed too
        st.error(str(exc))
    else:
        result = wiring.add_files(dest, [(f.name, f.getvalue()) for f in files])
        st.session_state[UPLOADS] = st.session_state.get(UPLOADS, 0) + 1
        st.session_state[REPORT] = {"skipped": result.skipped, "notes": result.notes}
        if result.added:
            reindex(dest, created)
        else:
            st.session_state[REPORT]["errors"] = ["No file could be added, so the index was not changed."]
            st.rerun()
