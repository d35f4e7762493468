"""Ingestion, chunking and the persisted incremental index (core/kb/).

Most tests use a small deterministic bag-of-words embedder so they are fast and can count embed
calls; the real embedder is exercised end to end in test_retrieval.py.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from core.kb import index as kb_index
from core.kb.index import PARTIAL_DIR
from core.kb.progress import ProgressLine, duration
from core import cli, models
from core.kb import EMBED_BATCH, Document, KnowledgeBase, KnowledgeBaseError, chunk_document, read_documents
from core.text import sentence_kind, split_sentences
from tests.fakes import FakeModels, bag_of_words

CARERS = """# Carer's Allowance

You could get £81.90 a week if you care for someone at least 35 hours a week. You do not have to be \
related to, or live with, the person you care for.

## Eligibility

All of the following must apply:
- you are 16 or over
- you spend at least 35 hours a week caring for someone
- you have been in England, Scotland or Wales for at least 2 of the last 3 years
- you are not in full-time education

## Earnings

Your earnings must be £196 or less a week after tax, e.g. after National Insurance. Expenses can include \
50% of your pension contributions. Mr. Jones at St. Anne's office handles claims, i.e. the local one.
"""

PASSPORT = """# Renew a passport

You can renew your passport online or by post. It usually takes 3 weeks. The fee is £88.50 online.
You must not book travel until the new passport has arrived.
"""

BINS = """Household waste is collected every other week. Put your bin out by 7am on collection day.
Garden waste is collected from March to November if you pay the annual charge.
"""


@pytest.fixture
def fake_embed():
    """Hashed bag-of-words embeddings (``tests.fakes.FakeModels``) for the KB built in the test."""
    fake = FakeModels()
    with models.using(fake):
        yield fake


@pytest.fixture
def kb_dir(tmp_path):
    folder = tmp_path / "kb"
    (folder / "policy").mkdir(parents=True)
    (folder / "policy" / "carers_allowance.md").write_text(CARERS)
    (folder / "passport.md").write_text(PASSPORT)
    (folder / "bin_collections.txt").write_text(BINS)
    return folder


def text_pdf(lines: list[str]) -> bytes:
    """A one-page PDF whose content stream draws ``lines`` in Helvetica (valid xref and all)."""
    ops = " ".join(f"({line}) Tj T*" for line in lines)
    content = f"BT /F1 12 Tf 14 TL 72 720 Td {ops} ET"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        "/Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(content)} >>\nstream\n{content}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out, offsets = "%PDF-1.4\n", []
    for n, obj in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n{obj}\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n"
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    return out.encode("latin-1")


# --- sentences ---------------------------------------------------------------------------

def test_sentences_respect_abbreviations_decimals_and_money():
    text = ("You could get £1,200.50 a year, e.g. as a carer. Mr. Smith lives on St. Mary's Road. "
            "The rate rose by 3.5 per cent. See No. 5 for details! Is it taxable? Yes.")
    assert [s.text for s in split_sentences(text)] == [
        "You could get £1,200.50 a year, e.g. as a carer.", "Mr. Smith lives on St. Mary's Road.",
        "The rate rose by 3.5 per cent.", "See No. 5 for details!", "Is it taxable?", "Yes."]
    assert [s.text for s in split_sentences("Bring proof, i.e. A passport. Then wait.")] == [
        "Bring proof, i.e. A passport.", "Then wait."]


def test_each_bullet_and_heading_is_one_unit():
    sentences = split_sentences(CARERS)
    texts = [s.text for s in sentences]
    assert "## Eligibility" in texts and "# Carer's Allowance" in texts
    for bullet in ("- you are 16 or over", "- you spend at least 35 hours a week caring for someone",
                   "- you have been in England, Scotland or Wales for at least 2 of the last 3 years",
                   "- you are not in full-time education"):
        assert bullet in texts
    kinds = {s.text: sentence_kind(s) for s in sentences}
    assert kinds["- you are 16 or over"] == "bullet"
    assert kinds["## Eligibility"] == "heading"
    assert kinds["All of the following must apply:"] == "sentence"
    assert kinds["You do not have to be related to, or live with, the person you care for."] == "sentence"


def test_numbered_items_continuations_and_tables():
    text = ("Steps:\n1. Fill in the form. Sign it.\n  (b) Post it\n   to the office\n\n"
            "| Rate | Amount |\n|---|---|\n| Weekly | £81.90 |\n\n---\n## Notes ##\n")
    texts = [s.text for s in split_sentences(text)]
    assert texts == ["Steps:", "1. Fill in the form. Sign it.", "(b) Post it\n   to the office",
                     "| Rate | Amount |", "| Weekly | £81.90 |", "## Notes"]
    assert [sentence_kind(t) for t in texts] == ["sentence", "bullet", "bullet", "sentence", "sentence", "heading"]


def test_sentence_offsets_round_trip():
    for text in (CARERS, PASSPORT, BINS, "  leading space. Trailing  \n\n\n- x\n"):
        for s in split_sentences(text):
            assert text[s.start:s.end] == s.text and s.text == s.text.strip() and s.text


# --- chunking ----------------------------------------------------------------------------

def _doc(text: str, doc_id: str = "policy/carers_allowance") -> Document:
    return Document(doc_id, "Carer's Allowance", text, doc_id + ".md")


@pytest.mark.parametrize("chunk_chars,overlap", [(200, 0), (200, 1), (300, 2), (700, 1), (4000, 0)])
def test_chunk_offsets_round_trip(chunk_chars, overlap):
    doc = _doc(CARERS)
    passages = chunk_document(doc, chunk_chars, overlap)
    assert [p.id for p in passages] == [f"{doc.id}#{n}" for n in range(len(passages))]
    for p in passages:
        assert doc.text[p.start:p.end] == p.text
        assert p.doc_id == doc.id and p.title == doc.title and p.source == doc.source and p.sentences
        for s in p.sentences:
            assert doc.text[s.start:s.end] == s.text and p.start <= s.start < s.end <= p.end
    covered = {(s.start, s.end) for p in passages for s in p.sentences}
    assert covered == {(s.start, s.end) for s in split_sentences(doc.text)}  # nothing lost


def test_overlap_repeats_last_sentences_of_size_split_chunks():
    text = " ".join(f"Sentence number {n} says something about allowances." for n in range(30))
    doc = _doc(text)
    no_overlap = chunk_document(doc, 200, 0)
    assert sum(len(p.sentences) for p in no_overlap) == 30
    for overlap in (1, 2):
        passages = chunk_document(doc, 200, overlap)
        assert len(passages) > 3
        for a, b in zip(passages, passages[1:]):
            assert a.sentences[-overlap:] == b.sentences[:overlap]
            assert len(b.sentences) > overlap  # every chunk moves forward
        assert max(len(p.text) for p in passages) <= 200 + 60


def test_heading_starts_a_new_passage():
    passages = chunk_document(_doc(CARERS), 2000, 1)
    assert [p.text.split("\n")[0] for p in passages] == ["# Carer's Allowance", "## Eligibility", "## Earnings"]
    eligibility = passages[1]
    kinds = [sentence_kind(s) for s in eligibility.sentences]
    assert kinds == ["heading", "sentence", "bullet", "bullet", "bullet", "bullet"]


def test_overlong_sentence_is_cut_at_whitespace():
    text = " ".join(["word"] * 1000)  # 4,999 characters, no punctuation (a badly extracted PDF)
    passages = chunk_document(_doc(text), 300, 1)
    assert all(len(p.text) <= 300 for p in passages)
    assert all(not p.text.startswith(" ") and "wor d" not in p.text for p in passages)
    assert sum(len(s.text.split()) for p in passages for s in p.sentences) >= 1000


def test_bad_chunk_settings_raise():
    with pytest.raises(ValueError, match="chunk_chars"):
        chunk_document(_doc(CARERS), 0, 1)


# --- reading -----------------------------------------------------------------------------

def test_read_documents_ids_titles_and_hidden_files(kb_dir):
    (kb_dir / "tide_clerk.txt").write_text("The Tide Clerk\n\nThe Tide Clerk is a novel published in 1961.\n")
    (kb_dir / ".hidden.md").write_text("# Secret\n\nNot indexed.")
    (kb_dir / ".index").mkdir()
    (kb_dir / ".index" / "stray.md").write_text("# Stray\n\nNot indexed.")
    (kb_dir / "faq.jsonl").write_text(
        json.dumps({"id": "q1", "title": "Lost passport", "text": "Report a lost passport online."}) + "\n"
        + json.dumps({"id": 7, "text": "Bins go out on Monday."}) + "\n")
    docs, problems = read_documents(kb_dir)
    by_id = {d.id: d for d in docs}
    assert set(by_id) == {"policy/carers_allowance", "passport", "bin_collections", "tide_clerk", "faq/q1", "faq/7"}
    assert problems == []
    assert by_id["policy/carers_allowance"].title == "Carer's Allowance"
    assert by_id["policy/carers_allowance"].source == "policy/carers_allowance.md"
    assert by_id["bin_collections"].title == "Bin collections"  # its first line is a sentence
    assert by_id["tide_clerk"].title == "The Tide Clerk"  # a plain-text title line
    assert by_id["faq/q1"].title == "Lost passport" and by_id["faq/q1"].source == "faq.jsonl"
    assert by_id["faq/7"].title == "7" and by_id["faq/7"].text == "Bins go out on Monday."


def test_malformed_jsonl_lines_are_reported_and_skipped(kb_dir):
    (kb_dir / "faq.jsonl").write_text(
        json.dumps({"id": "a", "title": "A", "text": "First answer."}) + "\n"
        + '{"id": "b", "text": "broken\n'
        + json.dumps({"id": "c", "title": "C"}) + "\n"
        + "\n"
        + json.dumps({"id": "d", "title": "D", "text": "Fourth answer."}) + "\n")
    docs, problems = read_documents(kb_dir)
    assert {d.id for d in docs} >= {"faq/a", "faq/d"}
    assert not {"faq/b", "faq/c"} & {d.id for d in docs}
    assert any(p.startswith("faq.jsonl:2:") and "not valid JSON" in p for p in problems)
    assert any(p.startswith("faq.jsonl:3:") and '"text"' in p for p in problems)
    assert len(problems) == 2


def test_non_utf8_file_is_reported_and_read(kb_dir):
    (kb_dir / "cafe.txt").write_bytes("The café charges £5 for parking.".encode("cp1252"))
    docs, problems = read_documents(kb_dir)
    cafe = next(d for d in docs if d.id == "cafe")
    assert cafe.text == "The café charges £5 for parking."
    assert len(problems) == 1 and problems[0].startswith("cafe.txt: not valid UTF-8") and "cp1252" in problems[0]
    assert len(docs) == 4


def test_broken_and_empty_files_are_reported_and_the_rest_read(kb_dir):
    (kb_dir / "broken.pdf").write_bytes(b"%PDF-1.4\n\x00\x01garbage that is not a pdf\xff\xfe" * 20)
    (kb_dir / "empty.md").write_text("")
    (kb_dir / "notes.docx").write_bytes(b"PK\x03\x04")
    docs, problems = read_documents(kb_dir)
    assert {d.id for d in docs} == {"policy/carers_allowance", "passport", "bin_collections"}
    assert any(p.startswith("broken.pdf: cannot read the PDF") for p in problems)
    assert "empty.md: the file is empty; skipped" in problems
    assert any(p.startswith("notes.docx: not a .txt") for p in problems)
    assert len(problems) == 3


def test_text_pdf_is_read(tmp_path):
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "parking_permits.pdf").write_bytes(text_pdf(
        ["Residents can apply for a parking permit online.", "A permit costs 60 pounds a year."]))
    docs, problems = read_documents(folder)
    assert problems == []
    [doc] = docs
    assert doc.id == "parking_permits" and doc.title == "Parking permits" and doc.source == "parking_permits.pdf"
    assert "Residents can apply for a parking permit online." in doc.text
    assert [s.text for s in split_sentences(doc.text)] == [
        "Residents can apply for a parking permit online.", "A permit costs 60 pounds a year."]


def test_duplicate_document_ids_are_renamed_not_dropped(kb_dir):
    (kb_dir / "passport.txt").write_text("Passport text in a second file.")
    docs, problems = read_documents(kb_dir)
    ids = [d.id for d in docs]
    assert "passport" in ids and "passport~2" in ids
    assert any("passport.txt: document id 'passport' is already used by passport.md" in p for p in problems)


def test_missing_and_empty_folders_raise(tmp_path):
    with pytest.raises(KnowledgeBaseError, match="does not exist"):
        read_documents(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / ".index").mkdir()
    with pytest.raises(KnowledgeBaseError, match="holds no .txt, .md, .pdf or .jsonl files"):
        read_documents(tmp_path / "empty")
    with pytest.raises(KnowledgeBaseError, match="does not exist"):
        KnowledgeBase.load(tmp_path / "nope")
    with pytest.raises(KnowledgeBaseError, match=r"run `python -m core index"):
        KnowledgeBase.load(tmp_path / "empty")


def test_folder_with_only_unreadable_files_raises_on_build(tmp_path, fake_embed):
    (tmp_path / "broken.pdf").write_bytes(b"not a pdf")
    with pytest.raises(KnowledgeBaseError, match="broken.pdf: cannot read the PDF"):
        KnowledgeBase.build(tmp_path)


# --- the index ---------------------------------------------------------------------------

def test_build_writes_a_complete_index_that_loads(kb_dir, fake_embed):
    calls = []
    kb = KnowledgeBase.build(kb_dir, {"chunk_chars": 300, "chunk_overlap": 1},
                             progress=lambda done, total, stage: calls.append((done, total, stage)))
    index = kb_dir / ".index"
    assert {p.name for p in index.iterdir()} >= {"manifest.json", "passages.jsonl", "embeddings.npy",
                                                 "faiss.index", "documents.jsonl", "bm25"}
    manifest = json.loads((index / "manifest.json").read_text())
    assert manifest["embedder"] == models.role_source("embedder")
    assert manifest["chunking"] == {"chunk_chars": 300, "chunk_overlap": 1}
    assert manifest["index_type"] == "flat" and manifest["counts"]["passages"] == len(kb.passages)
    assert set(manifest["files"]) == {"policy/carers_allowance.md", "passport.md", "bin_collections.txt"}
    carers = manifest["files"]["policy/carers_allowance.md"]
    assert len(carers["sha256"]) == 64 and carers["passages"][0] == "policy/carers_allowance#0"

    loaded = KnowledgeBase.load(kb_dir)
    assert loaded.passages == kb.passages and loaded.fingerprint == kb.fingerprint
    assert loaded.embeddings.dtype == np.float32 and loaded.embeddings.shape == (len(kb.passages), FakeModels.dim)
    assert np.allclose(np.linalg.norm(loaded.embeddings, axis=1), 1.0, atol=1e-5)
    p = loaded.passage("passport#0")
    assert p.source == "passport.md" and loaded.documents["passport"].text[p.start:p.end] == p.text
    assert loaded.documents["policy/carers_allowance"].title == "Carer's Allowance"
    with pytest.raises(KeyError, match="no passage"):
        loaded.passage("passport#99")
    carers_passages = [q for q in loaded.passages if q.doc_id == "policy/carers_allowance"]
    assert len(carers_passages) > 1  # 300-character chunks: the opening is one passage of several
    assert loaded.opening("policy/carers_allowance") == min(carers_passages, key=lambda q: q.start)
    assert loaded.opening("no/such/document") is None
    assert {stage for _, _, stage in calls} == {"read", "embed", "write"}  # the graph is built per question
    assert (3, 3, "read") in calls and calls[-1] == (1, 1, "write")
    rows, scores = loaded.dense_search(loaded.embeddings[2], 3)
    assert rows[0] == 2 and scores[0] == pytest.approx(1.0, abs=1e-5)
    bm25 = loaded.bm25_scores("passport renewal fee")
    assert kb.passages[int(np.argmax(bm25))].doc_id == "passport"
    assert not loaded.bm25_scores("zzzz qqqq").any()


def test_incremental_reindex_embeds_only_what_changed(kb_dir, fake_embed):
    first = KnowledgeBase.build(kb_dir, {"chunk_chars": 300})
    assert first.stats["embedded_passages"] == len(first.passages) and first.stats["reused_files"] == 0
    old_rows = {p.id: first.embeddings[i] for i, p in enumerate(first.passages)}

    fake_embed.texts = 0
    again = KnowledgeBase.build(kb_dir, {"chunk_chars": 300})
    assert fake_embed.texts == 0 and again.stats["embedded_passages"] == 0
    assert again.stats["reused_files"] == 3 and again.passages == first.passages
    assert again.fingerprint == first.fingerprint

    (kb_dir / "passport.md").write_text(PASSPORT + "\nChildren's passports last 5 years.\n")
    (kb_dir / "bin_collections.txt").unlink()
    (kb_dir / "libraries.md").write_text("# Libraries\n\nLibrary membership is free for residents.\n")
    fake_embed.texts = 0
    third = KnowledgeBase.build(kb_dir, {"chunk_chars": 300})
    changed = [p for p in third.passages if p.doc_id in ("passport", "libraries")]
    assert fake_embed.texts == len(changed) == third.stats["embedded_passages"]
    assert third.stats["reused_files"] == 1 and third.stats["removed_files"] == 1
    assert not any(p.doc_id == "bin_collections" for p in third.passages)
    assert "bin_collections" not in third.documents
    assert "bin_collections.txt" not in third.manifest["files"]
    for i, p in enumerate(third.passages):
        if p.doc_id == "policy/carers_allowance":
            assert np.array_equal(third.embeddings[i], old_rows[p.id])
    assert third.fingerprint != first.fingerprint
    assert third._dense.ntotal == len(third.passages)


def test_changed_chunking_or_embedder_re_embeds_everything(kb_dir, fake_embed):
    KnowledgeBase.build(kb_dir, {"chunk_chars": 300})
    rechunked = KnowledgeBase.build(kb_dir, {"chunk_chars": 1000})
    assert rechunked.stats["embedded_passages"] == len(rechunked.passages)
    assert rechunked.manifest["chunking"]["chunk_chars"] == 1000

    hnsw = KnowledgeBase.build(kb_dir, {"chunk_chars": 1000, "index_type": "hnsw"})
    assert hnsw.stats["embedded_passages"] == 0 and hnsw.manifest["index_type"] == "hnsw"
    assert hasattr(KnowledgeBase.load(kb_dir)._dense, "hnsw")
    rows, _ = hnsw.dense_search(hnsw.embeddings[1], 2)
    assert rows[0] == 1

    with models.using(FakeModels(embedder="/models/other-embedder")):
        other = KnowledgeBase.build(kb_dir, {"chunk_chars": 1000})
    assert other.stats["embedded_passages"] == len(other.passages)
    assert other.manifest["embedder"] == "/models/other-embedder"


def test_problems_are_kept_and_re_reported_for_unchanged_files(kb_dir, fake_embed):
    (kb_dir / "broken.pdf").write_bytes(b"garbage")
    (kb_dir / "faq.jsonl").write_text('{"id": "a", "text": "An answer."}\nnot json\n')
    kb = KnowledgeBase.build(kb_dir)
    assert any(p.startswith("broken.pdf:") for p in kb.problems)
    assert any(p.startswith("faq.jsonl:2:") for p in kb.problems)
    assert "faq/a#0" in {p.id for p in kb.passages}
    again = KnowledgeBase.build(kb_dir)
    assert again.problems == kb.problems and again.stats["reused_files"] == 5
    assert KnowledgeBase.load(kb_dir).problems == kb.problems


def test_crash_mid_build_leaves_the_previous_index_intact_and_the_next_build_resumes(kb_dir, fake_embed,
                                                                                     monkeypatch):
    before = KnowledgeBase.build(kb_dir, {"chunk_chars": 200})
    # enough new text for several embedding batches; the second batch crashes
    (kb_dir / "big.md").write_text("\n\n".join(f"## Band {n}\n\nCouncil tax band {n} applies." for n in range(600)))
    big = next(d for d in read_documents(kb_dir)[0] if d.id == "big")
    new_passages = len(chunk_document(big, 200, 1))
    assert new_passages > 2 * EMBED_BATCH
    with models.using(FakeModels(fail_on_embed_call=2)), pytest.raises(RuntimeError, match="simulated crash"):
        KnowledgeBase.build(kb_dir, {"chunk_chars": 200})
    after = KnowledgeBase.load(kb_dir)
    assert after.fingerprint == before.fingerprint and after.passages == before.passages
    assert sorted(p.name for p in kb_dir.iterdir() if p.name.startswith(".index")) == [".index", PARTIAL_DIR]
    assert len(list((kb_dir / PARTIAL_DIR).glob("*.npy"))) == 1  # the batch finished before the crash

    # a crash while the new index is being written (after embeddings and FAISS, before BM25)
    monkeypatch.setattr(kb_index, "build_bm25", lambda texts: (_ for _ in ()).throw(OSError("disk full")))
    resumed = FakeModels()
    with models.using(resumed), pytest.raises(OSError, match="disk full"):
        KnowledgeBase.build(kb_dir, {"chunk_chars": 200})
    assert resumed.texts == new_passages - EMBED_BATCH  # resumed after the saved batch
    after = KnowledgeBase.load(kb_dir)
    assert after.fingerprint == before.fingerprint and after.passages == before.passages
    assert sorted(p.name for p in kb_dir.iterdir() if p.name.startswith(".index")) == [".index", PARTIAL_DIR]

    monkeypatch.undo()
    finished = FakeModels()
    with models.using(finished):
        kb = KnowledgeBase.build(kb_dir, {"chunk_chars": 200})
    assert finished.texts == 0 and len(kb.passages) == len(before.passages) + new_passages
    assert [p.name for p in kb_dir.iterdir() if p.name.startswith(".index")] == [".index"]
    # the vectors read back from the saved batch are those the passages' texts embed to
    assert np.allclose(kb.embeddings, bag_of_words([kb_index._indexed_text(p) for p in kb.passages], FakeModels.dim))


def test_crash_between_the_renames_is_recovered(kb_dir, fake_embed):
    before = KnowledgeBase.build(kb_dir)
    (kb_dir / ".index").rename(kb_dir / ".index.old-deadbeef")  # the state right after the first rename
    (kb_dir / ".index.tmp-cafebabe").mkdir()  # and a half-written new index
    assert KnowledgeBase.load(kb_dir).fingerprint == before.fingerprint
    KnowledgeBase.build(kb_dir)
    assert sorted(p.name for p in kb_dir.iterdir() if p.name.startswith(".index")) == [".index"]


def test_damaged_index_raises_a_clear_error(kb_dir, fake_embed):
    KnowledgeBase.build(kb_dir)
    (kb_dir / ".index" / "faiss.index").write_bytes(b"rubbish")
    with pytest.raises(KnowledgeBaseError, match=r"FAISS index .* cannot be read.*python -m core index"):
        KnowledgeBase.load(kb_dir)
    rebuilt = KnowledgeBase.open(kb_dir)
    assert rebuilt._dense.ntotal == len(rebuilt.passages)


def test_open_loads_when_up_to_date_and_rebuilds_otherwise(kb_dir, fake_embed):
    built = KnowledgeBase.open(kb_dir, {"chunk_chars": 300})
    calls = fake_embed.calls["embedder"]
    same = KnowledgeBase.open(kb_dir, {"chunk_chars": 300, "top_k": 9})  # non-index settings are ignored
    assert fake_embed.calls["embedder"] == calls and same.fingerprint == built.fingerprint
    (kb_dir / "bin_collections.txt").write_text(BINS + "Bulky items need a booking.\n")
    changed = KnowledgeBase.open(kb_dir, {"chunk_chars": 300})
    assert changed.fingerprint != built.fingerprint and changed.stats["embedded_passages"] >= 1
    resized = KnowledgeBase.open(kb_dir, {"chunk_chars": 500})
    assert resized.manifest["chunking"]["chunk_chars"] == 500
    with pytest.raises(ValueError, match="chunk_chars"):
        KnowledgeBase.open(kb_dir, {"chunk_chars": 5})


def test_text_of_stopwords_only_still_indexes(tmp_path, fake_embed):
    (tmp_path / "it.txt").write_text("It is what it is.")
    kb = KnowledgeBase.build(tmp_path)
    assert len(kb.passages) == 1 and not kb.bm25_scores("what is it").any()


def test_index_command_says_when_nothing_was_rebuilt(kb_dir, fake_embed, capsys):
    assert cli.main(["index", str(kb_dir)]) == 0
    first = capsys.readouterr().out
    assert first.startswith("indexed ") and "embedded_passages" in first
    assert cli.main(["index", str(kb_dir)]) == 0
    again = capsys.readouterr().out
    assert "is up to date" in again and "nothing to do" in again and "embedded_passages" not in again
    (kb_dir / "passport.md").write_text(PASSPORT + "Children's passports last 5 years.\n")
    assert cli.main(["index", str(kb_dir)]) == 0
    assert capsys.readouterr().out.startswith("indexed ")


def test_progress_line_gives_the_stage_rate_and_time_left():
    now = [100.0]
    line = ProgressLine(clock=lambda: now[0])
    assert line(0, 1000, "embed") == "embed: 0/1,000"  # no rate before anything was done
    now[0] += 10
    assert line(250, 1000, "embed") == "embed: 250/1,000 · 25.0/s, about 30 s left"
    now[0] += 90
    assert line(500, 8000, "embed") == "embed: 500/8,000 · 5.0/s, about 25 min 00 s left"
    assert line(8000, 8000, "embed") == "embed: 8,000/8,000"  # finished: nothing left to estimate
    # a resumed stage's first report (batches read back) is not counted as work done
    assert line(3000, 5000, "write") == "write: 3,000/5,000"
    now[0] += 2
    assert line(3100, 5000, "write") == "write: 3,100/5,000 · 50.0/s, about 38 s left"
    assert duration(2 * 3600 + 5 * 60) == "2 h 05 min"


def test_auto_index_type_is_exact_for_small_kbs_and_hnsw_for_large_ones(kb_dir, fake_embed, monkeypatch):
    small = KnowledgeBase.build(kb_dir, {"chunk_chars": 300})
    assert small.manifest["index_type"] == "flat" and not hasattr(small._dense, "hnsw")
    assert kb_index.dense_kind("flat", 10**9) == "flat" and kb_index.dense_kind("auto", 10**9) == "hnsw"
    monkeypatch.setattr(kb_index, "HNSW_FROM", len(small.passages))
    large = KnowledgeBase.build(kb_dir, {"chunk_chars": 300, "index_type": "auto"})
    assert large.stats["embedded_passages"] == 0  # only the dense index changed
    assert large.manifest["index_type"] == "hnsw" and hasattr(KnowledgeBase.load(kb_dir)._dense, "hnsw")
