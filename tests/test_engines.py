"""The optional engines of the ``scale`` extra, each against a real local instance: LanceDB as the
vector store (embedded in a temp index folder, and a shared database given by $AW_LANCEDB_URI) and
batch evaluation on a real Dask cluster (local worker processes, and a scheduler reached over TCP).
Each group is skipped, with the reason, where its engine is not installed; the messages a missing
engine gives are tested without it.
"""
from __future__ import annotations

import json
import shutil
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from core import models, settings
from core.evaluation import sharded
from core.evaluation.importers import Dataset
from core.evaluation.runner import BatchRunner, TraceCache
from core.kb import KnowledgeBase, KnowledgeBaseError, index_settings
from core.kb import index as kb_index
from core.kb import lancedb_store
from core.pipeline import Pipeline, make_query
from core.retrieval import Retriever
from core.text import stable_hash
from tests.conftest import SAMPLE_DOCS, SAMPLE_QUESTIONS
from tests.fakes import FakeModels
from tests.processes import free_port
from tests.test_eval_runner import FakeKB, FakePipeline, _cli, dataset

LANCEDB = "lancedb is not installed (the scale extra: .venv/bin/pip install -e '.[scale]')"
DASK = "dask.distributed is not installed (the scale extra: .venv/bin/pip install -e '.[scale]')"
LANCE_SETTINGS = {"chunk_chars": 300, "chunk_overlap": 0, "vector_store": "lancedb"}
DOCS = {
    "passport.md": "# Renew a passport\n\nYou can renew your passport online. The fee is £88.50 online.\n",
    "bins.txt": "Household waste is collected every other week. Garden waste is collected from March.\n",
    "dogs.md": "# Dog microchipping\n\nEvery dog must be microchipped by the time it is 8 weeks old.\n",
}


@pytest.fixture
def fake_embed():
    with models.using(FakeModels()) as fake:
        yield fake


@pytest.fixture
def kb_dir(tmp_path):
    folder = tmp_path / "kb"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text)
    return folder


@pytest.fixture
def no_lancedb_uri(monkeypatch):
    monkeypatch.delenv(lancedb_store.URI_ENV, raising=False)


# --- messages without the engines ---------------------------------------------------------

def test_a_missing_engine_says_how_to_install_it(kb_dir, fake_embed, monkeypatch, no_lancedb_uri):
    monkeypatch.setitem(sys.modules, "lancedb", None)  # import lancedb now raises ImportError
    with pytest.raises(KnowledgeBaseError, match=r"vector_store=lancedb.*pip install -e '\.\[scale\]'"):
        KnowledgeBase.build(kb_dir, LANCE_SETTINGS)
    monkeypatch.setitem(sys.modules, "distributed", None)
    runner = sharded.DaskBatchRunner(None, kb_dir.parent / "cache", show_bar=False,
                                     open_kb=lambda f, v: FakeKB(Path(f)), make_workbench=FakePipeline)
    with pytest.raises(ValueError, match=r"--engine dask.*pip install -e '\.\[scale\]'"):
        runner.run(dataset())


def test_faiss_stays_the_default_and_its_fingerprint_is_unchanged(kb_dir, fake_embed, no_lancedb_uri):
    assert settings.BY_NAME["vector_store"].default == "faiss"
    kb = KnowledgeBase.build(kb_dir)
    assert "vector_store" not in kb.manifest and (kb_dir / ".index" / "faiss.index").is_file()
    # the key as it was before the store was a setting: indexes built then stay up to date
    config = {k: v for k, v in index_settings(None).items() if k != "vector_store"}
    files = {rel: e["sha256"] for rel, e in kb.manifest["files"].items()}
    assert kb.fingerprint == stable_hash({"format": kb_index.FORMAT_VERSION, "embedder": models.role_source("embedder"),
                                          "config": config, "files": sorted(files.items())}, length=12)


def test_bad_worker_counts_and_a_worker_with_other_code_are_refused(tmp_path):
    with pytest.raises(ValueError, match="whole number ≥ 1"):
        sharded.DaskBatchRunner(None, tmp_path, workers=0)
    runner = BatchRunner(None, tmp_path)  # the key is checked before the shard is opened
    with pytest.raises(ValueError, match="other analysis code or models"):
        sharded.analyse_shard(runner, None, "a-key-from-elsewhere")


# --- LanceDB --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def lance():
    return pytest.importorskip("lancedb", reason=LANCEDB)


def test_lancedb_embedded_index_searches_as_faiss_does(lance, kb_dir, tmp_path, fake_embed, no_lancedb_uri):
    faiss_kb = KnowledgeBase.build(kb_dir, {"chunk_chars": 300, "chunk_overlap": 0})
    copy = tmp_path / "copy"
    shutil.copytree(kb_dir, copy)
    lance_kb = KnowledgeBase.open(copy, LANCE_SETTINGS)
    assert lance_kb.stats["embedded_passages"] == 0  # only the store changed: nothing re-embedded
    assert lance_kb.fingerprint != faiss_kb.fingerprint  # so caches keyed by it tell them apart
    assert lance_kb.manifest["vector_store"] == {"engine": "lancedb", "uri": "", "table": "vectors"}
    assert (copy / ".index" / "lancedb").is_dir() and not (copy / ".index" / "faiss.index").exists()
    assert KnowledgeBase.open(copy, LANCE_SETTINGS).manifest["built_at"] == lance_kb.manifest["built_at"]
    for question in ("passport fee", "when is garden waste collected", "puppy chip age"):
        vector = models.embed([question])[0]
        rows, scores = lance_kb.dense_search(vector, 10)
        faiss_rows, faiss_scores = faiss_kb.dense_search(vector, 10)
        assert rows.tolist() == faiss_rows.tolist() and rows.dtype == faiss_rows.dtype
        np.testing.assert_allclose(scores, faiss_scores, atol=1e-5)
    # back to FAISS: rebuilt in place, again without embedding
    back = KnowledgeBase.open(copy, {"chunk_chars": 300, "chunk_overlap": 0})
    assert back.fingerprint == faiss_kb.fingerprint and back.stats["embedded_passages"] == 0


def test_lancedb_keeps_hybrid_scoring_with_the_real_embedder(lance, sample_kb, tmp_path, no_lancedb_uri):
    """The sample KB in LanceDB (exact and HNSW) ranks every sample question's passages as FAISS does."""
    copy = tmp_path / "kb"
    shutil.copytree(SAMPLE_DOCS, copy)  # with its FAISS index: the LanceDB builds re-embed nothing
    questions = [json.loads(line)["question"] for line in SAMPLE_QUESTIONS.read_text().splitlines()[::6]]
    retriever = Retriever(top_k=5, fusion_alpha=settings.BY_NAME["fusion_alpha"].default)
    for index_type in ("flat", "hnsw"):
        lance_kb = KnowledgeBase.build(copy, {"vector_store": "lancedb", "index_type": index_type})
        assert lance_kb.stats["embedded_passages"] == 0
        for question in questions:
            vector = models.embed([question])[0]
            expected = retriever.run(sample_kb, question, vector)
            got = retriever.run(lance_kb, question, vector)
            assert [r.passage.id for r in got] == [r.passage.id for r in expected], (index_type, question)
            for a, b in zip(got, expected):
                assert (a.dense, a.bm25, a.fused) == pytest.approx((b.dense, b.bm25, b.fused), abs=1e-5)


def test_lancedb_kb_gives_the_faiss_kb_decisions(lance, sample_kb, nli_model, tmp_path, sample_questions,
                                                 no_lancedb_uri):
    copy = tmp_path / "kb"
    shutil.copytree(SAMPLE_DOCS, copy)
    lance_kb = KnowledgeBase.open(copy, {"vector_store": "lancedb"})
    for q in sample_questions[::24]:
        query = make_query(q["question"], q.get("scenario", ""), q.get("history", []))
        a, b = Pipeline(sample_kb).analyze(query), Pipeline(lance_kb).analyze(query)
        assert [p.passage.id for p in a.passages] == [p.passage.id for p in b.passages]
        assert a.signals == b.signals and a.claim == b.claim


def test_a_shared_lancedb_uri_holds_each_kb_and_drops_replaced_tables(lance, kb_dir, tmp_path, fake_embed,
                                                                      monkeypatch):
    shared = tmp_path / "team-db"
    monkeypatch.setenv(lancedb_store.URI_ENV, str(shared))
    other = tmp_path / "other"
    shutil.copytree(kb_dir, other)
    (other / "extra.md").write_text("# Libraries\n\nMembers can borrow up to 12 books at a time.\n")
    first, second = KnowledgeBase.build(kb_dir, LANCE_SETTINGS), KnowledgeBase.build(other, LANCE_SETTINGS)
    assert first.manifest["vector_store"]["uri"] == str(shared) and not (kb_dir / ".index" / "lancedb").exists()
    tables = lambda: set(lance.connect(str(shared)).list_tables().tables)  # noqa: E731
    assert tables() == {first.manifest["vector_store"]["table"], second.manifest["vector_store"]["table"]}

    (kb_dir / "bins.txt").write_text(DOCS["bins.txt"] + "Recycling boxes are emptied on the same day.\n")
    rebuilt = KnowledgeBase.open(kb_dir, LANCE_SETTINGS)
    assert tables() == {rebuilt.manifest["vector_store"]["table"], second.manifest["vector_store"]["table"]}
    vector = models.embed(["recycling boxes"])[0]
    assert rebuilt.passages[rebuilt.dense_search(vector, 1)[0][0]].doc_id == "bins"

    # a crash while writing the rest of the index leaves the previous index and its table in use
    with monkeypatch.context() as patch, pytest.raises(OSError, match="disk full"):
        patch.setattr(kb_index, "build_bm25", lambda texts: (_ for _ in ()).throw(OSError("disk full")))
        KnowledgeBase.build(kb_dir, LANCE_SETTINGS)
    after = KnowledgeBase.load(kb_dir)
    assert after.manifest["vector_store"] == rebuilt.manifest["vector_store"]
    assert after.dense_search(vector, 1)[0].tolist() == rebuilt.dense_search(vector, 1)[0].tolist()

    # another URI (or none) is another store: the KB is re-indexed there
    monkeypatch.delenv(lancedb_store.URI_ENV)
    embedded = KnowledgeBase.open(kb_dir, LANCE_SETTINGS)
    assert embedded.manifest["vector_store"]["uri"] == "" and embedded.fingerprint != rebuilt.fingerprint
    assert rebuilt.manifest["vector_store"]["table"] not in tables()


def test_an_unusable_uri_or_a_lost_table_is_a_clear_error(lance, kb_dir, tmp_path, fake_embed, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a database")
    monkeypatch.setenv(lancedb_store.URI_ENV, str(blocker))
    with pytest.raises(KnowledgeBaseError, match=rf"LanceDB at {blocker} \(\$AW_LANCEDB_URI\)"):
        KnowledgeBase.build(kb_dir, LANCE_SETTINGS)
    monkeypatch.delenv(lancedb_store.URI_ENV)
    KnowledgeBase.build(kb_dir, LANCE_SETTINGS)
    shutil.rmtree(kb_dir / ".index" / "lancedb")
    with pytest.raises(KnowledgeBaseError, match="vector table vectors cannot be read"):
        KnowledgeBase.load(kb_dir)
    assert KnowledgeBase.open(kb_dir, LANCE_SETTINGS).dense_search(models.embed(["dog"])[0], 2)[0].size == 2


# --- Dask -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def distributed():
    return pytest.importorskip("distributed", reason=DASK)


def _records(run, cache_dir: Path) -> str:
    """A run's cache records as text, its cache folder (in the paths of per-item KBs) written as CACHE."""
    return json.dumps(TraceCache(Path(run.cache_file)).load(), sort_keys=True).replace(str(cache_dir), "CACHE")


@pytest.fixture
def plain_main(monkeypatch):
    """Spawned worker processes run ``__main__``'s file again; after the app tests that can be an
    AppTest page script, which fails outside Streamlit, so the workers get a main module without a file."""
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))


def test_dask_worker_processes_give_the_local_runner_traces(distributed, plain_main, tmp_path):
    """Real worker processes (they import the fake pipeline themselves): same cache file name, same
    records, same traces and errors; a second run is all cache and starts no cluster."""
    kw = dict(show_bar=False, open_kb=lambda f, v: FakeKB(Path(f)),
              make_workbench=lambda kb: FakePipeline(kb, fail_on="passport"))
    for n, data in enumerate((dataset(), dataset("pooled"), Dataset(**{**dataset().__dict__, "setting": "pooled",
                                                                       "kb_folder": str(tmp_path / "folder")}))):
        local_cache, dask_cache = tmp_path / f"local-{n}", tmp_path / f"dask-{n}"
        local = BatchRunner(None, local_cache, **kw).run(data)
        dask = sharded.DaskBatchRunner(None, dask_cache, workers=2, **kw).run(data)
        assert Path(dask.cache_file).name == Path(local.cache_file).name
        assert _records(dask, dask_cache) == _records(local, local_cache)
        assert dask.items == local.items and dask.errors == local.errors and "too odd" in dask.errors["i3"]
        assert dask.analysed == len(data.items) and len(dask.traces) == len(local.traces) == 4
        again = sharded.DaskBatchRunner(None, dask_cache, scheduler="tcp://127.0.0.1:1", **kw).run(data)
        assert again.cached == len(data.items)  # the unreachable scheduler is never contacted
        assert _records(again, dask_cache) == _records(dask, dask_cache)


def test_an_unreachable_or_empty_scheduler_is_a_clear_error(distributed, tmp_path):
    port = free_port()
    kw = dict(show_bar=False, open_kb=lambda f, v: FakeKB(Path(f)), make_workbench=FakePipeline)
    runner = sharded.DaskBatchRunner(None, tmp_path / "a", scheduler=f"tcp://127.0.0.1:{port}",
                                     connect_timeout=1.0, **kw)
    with pytest.raises(ValueError, match=rf"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}.*dask worker"):
        runner.run(dataset())
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp", dashboard_address=None) as cluster:
        empty = sharded.DaskBatchRunner(None, tmp_path / "b", scheduler=cluster.scheduler_address, **kw)
        with pytest.raises(ValueError, match="has no workers"):
            empty.run(dataset())


def test_cli_eval_over_a_dask_scheduler_matches_the_local_run(distributed, nli_model, tmp_path, capsys):
    """The real pipeline on sample-KB questions: `eval` locally and with --dask-scheduler (a real
    scheduler over TCP, its worker a thread of this process) write the same traces and metrics."""
    args = ["eval", "--format", "jsonl", str(SAMPLE_QUESTIONS), "--limit", "4", "--sample-seed", "3", "--quiet"]
    assert _cli([*args, "--cache", str(tmp_path / "c-local"), "--out", str(tmp_path / "local")]) == 0
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                                  dashboard_address=None) as cluster:
        assert _cli([*args, "--cache", str(tmp_path / "c-dask"), "--out", str(tmp_path / "dask"),
                     "--dask-scheduler", cluster.scheduler_address]) == 0
    local, dask = (sorted((tmp_path / f"c-{n}" / "traces").glob("*.jsonl")) for n in ("local", "dask"))
    assert [p.name for p in local] == [p.name for p in dask] and len(local) == 1
    untimed = [{key: {**r, "trace": {**r["trace"], "timings": {}}} for key, r in TraceCache(path).load().items()}
               for path in (local[0], dask[0])]  # a trace's stage timings are the one thing that may differ
    assert untimed[0] == untimed[1] and len(untimed[0]) == 4
    metrics = [json.loads((tmp_path / n / "metrics.json").read_text()) for n in ("local", "dask")]
    assert metrics[0]["rule_gate"] == metrics[1]["rule_gate"]
    assert metrics[1]["run"]["analysed"] == 4
    predictions = [(tmp_path / n / "predictions.jsonl").read_text() for n in ("local", "dask")]
    assert predictions[0] == predictions[1]
