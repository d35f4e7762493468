"""Session-wide real models and the sample knowledge base, loaded once.

Tests that need the project's NLI model skip with a reason when its weights are
absent (they are committed under models/, so this only happens mid-training).
"""
from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DOCS = ROOT / "sample_kb" / "documents"
SAMPLE_QUESTIONS = ROOT / "sample_kb" / "questions.jsonl"
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture
def fresh_generation_cache():
    """An empty generated-text cache before and after the test, so every generation is a real call."""
    from core.generation import CACHE
    CACHE.clear()
    yield
    CACHE.clear()


def build_small_kb(folder: Path, docs: dict[str, str]):
    """A knowledge base of ``docs`` (file name -> text) built in ``folder``, in 400-character passages."""
    from core.kb import KnowledgeBase
    folder.mkdir()
    for name, text in docs.items():
        (folder / name).write_text(text)
    return KnowledgeBase.build(folder, {"chunk_chars": 400, "chunk_overlap": 0})


@pytest.fixture(scope="session")
def nli_model():
    from core import models, nli
    if not Path(models.role_source("nli")).is_dir():
        pytest.skip(f"NLI weights not found at {models.role_source('nli')} (train with scripts/train_nli.py)")
    nli.get_nli()
    return nli


@pytest.fixture(scope="session")
def sample_kb():
    from core import settings
    from core.kb import KnowledgeBase
    return KnowledgeBase.open(SAMPLE_DOCS, settings.defaults())


@pytest.fixture(scope="session")
def sample_questions() -> list[dict]:
    return [json.loads(line) for line in SAMPLE_QUESTIONS.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="session")
def sample_pipeline(sample_kb, nli_model):
    from core.pipeline import Pipeline
    return Pipeline(sample_kb)


@pytest.fixture(scope="session")
def sample_traces(sample_pipeline, sample_questions):
    """Every sample question analysed once with default settings (shared by several tests)."""
    from core.pipeline import make_query
    return {q["id"]: sample_pipeline.analyze(make_query(q["question"], q.get("scenario", ""), q.get("history", [])))
            for q in sample_questions}


@pytest.fixture
def fake_models():
    """Fake model roles (``tests.fakes.FakeModels``) in use for the test's code that is given none."""
    from core import models
    from tests.fakes import FakeModels
    fake = FakeModels()
    with models.using(fake):
        yield fake


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a connection fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args}")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
