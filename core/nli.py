"""The NLI role: a 3-way cross-encoder that scores (premise, hypothesis) pairs.

Any local sequence-classification directory with the three labels works (the project
trains its own: ``python scripts/train_nli.py``); the label order is read from the
model's ``config.id2label``, never assumed. Weights load once per process in float32 on the
CPU. Where ``onnxruntime`` and ``onnx`` are installed, the model is exported once to ONNX (cached
under ``ONNX_CACHE``, keyed by the weights' hash) and run by ONNX Runtime: the same logits to
1e-5, about 2x faster on 2 cores (``bench/bench_nli.py``); otherwise PyTorch runs it. Dynamic
int8 (``backend="int8"``) is faster still but lost 1-3 accuracy points, so it is never the
default. Logits are divided by the temperature in the model's ``calibration.json`` (1.0 if
absent) so that a 0.7 probability means about 70 %.
The role can instead be answered by a server speaking Text Embeddings Inference's ``POST /predict``
(``AW_NLI_URL``, ``AW_NLI_MODEL``; ``ServedNli``): it is asked for raw logits (``raw_scores``), which
are divided by ``AW_NLI_TEMPERATURE`` (the served model's calibration.json value; 1.0 if unset)
like the local model's.
Results are cached per pair, so re-checking a condition or a passage costs nothing.
Models trained on short SNLI captions judge long passages poorly, so ``best_sentence``
scores a hypothesis against each sentence (and each pair of neighbouring sentences) and
keeps the best one.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from core import models, serving
from core.text import sentence_kind, strip_list_marker, title_line
from core.types import NLI_LABELS, NliScores, Passage, PassageNli

MAX_LENGTH = 256
# Written by scripts/train_nli.py beside the weights: {"temperature": T}.
CALIBRATION_FILE = "calibration.json"
ONNX_CACHE = Path(os.environ.get("AW_ONNX_CACHE", Path.home() / ".cache" / "answerability-workbench" / "onnx"))
BACKENDS = ("onnx", "torch", "int8")
CACHE_SIZE = 50_000
TEMPERATURE_ENV = "AW_NLI_TEMPERATURE"  # for a served model: the temperature in its calibration.json
PROBE = ("A man is sleeping on a bench.", "A man is asleep.")  # asked of a server when the role loads


@dataclass
class NliModel:
    """A loaded cross-encoder, the position of each label in its logits, and its pair cache."""
    tokenizer: Any
    model: Any
    label_index: dict[str, int]
    source: str
    temperature: float = 1.0
    backend: str = "torch"
    session: Any = None  # the ONNX Runtime session when backend == "onnx"
    server: "ServedNli | None" = None  # the scoring server when backend == "server"
    cache: OrderedDict = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def get_nli() -> NliModel:
    """The NLI model of ``core.models.role_source("nli")``, loaded on first use."""
    return models.current().load("nli", _load)


def _load() -> NliModel:
    served = models.current().server("nli")
    return load_served(*served) if served else load_model(models.role_source("nli"))


def default_backend() -> str:
    """ONNX Runtime where it (and ``onnx``, for the export) is installed, else PyTorch float32."""
    found = all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))
    return "onnx" if found else "torch"


def load_model(source: str, backend: str | None = None) -> NliModel:
    """Load a 3-way NLI directory for CPU inference with ``backend`` (default ``default_backend()``)."""
    backend = backend or default_backend()
    if backend not in BACKENDS:
        raise ValueError(f"NLI backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    if not Path(source).is_dir():
        raise models.ModelUnavailable(
            f"NLI model directory {source} does not exist: train it with `python scripts/train_nli.py` "
            f"(writes models/nli-minilm-l6-mix), or point the AW_NLI environment variable at a local "
            f"3-way NLI cross-encoder directory")
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    try:
        tokenizer = AutoTokenizer.from_pretrained(source)
        model = AutoModelForSequenceClassification.from_pretrained(source, dtype=torch.float32)
    except (OSError, ValueError) as exc:
        raise models.ModelUnavailable(f"NLI model directory {source} cannot be loaded ({exc}); it needs "
                                      "config.json, weights and tokenizer files as written by save_pretrained") from None
    model.to("cpu").eval()
    session = None
    if backend == "int8":
        model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    elif backend == "onnx":
        session = _onnx_session(Path(source), model, tokenizer)
    labels = {int(i): str(name).lower() for i, name in model.config.id2label.items()}
    label_index = {name: i for i, name in labels.items()}
    if sorted(label_index) != sorted(NLI_LABELS):
        raise models.ModelUnavailable(
            f"NLI model in {source} has labels {sorted(labels.values())} in config.id2label; it needs exactly "
            f"{', '.join(NLI_LABELS)} (edit id2label in its config.json if they are named otherwise)")
    return NliModel(tokenizer, model, label_index, source, _temperature(Path(source)), backend, session)


class ServedNli:
    """The NLI role answered by a server speaking Text Embeddings Inference's ``POST {url}/predict``
    for sequence-pair classification: ``{"inputs": [[premise, hypothesis], ...], "truncate": true,
    "raw_scores": true}`` returns, per pair, ``[{"label": ..., "score": ...}, ...]`` with every label
    of the model and its raw logit (``raw_scores``; without it TEI returns softmax probabilities,
    which could not be calibrated here). Labels are matched by name, whatever their case or order."""

    def __init__(self, url: str, timeout: float = models.SERVER_TIMEOUT):
        self.url = url
        self.timeout = timeout
        self.who = f"the NLI server {url} ({models.SERVED['nli'][0]})"

    def logits(self, pairs: list[tuple[str, str]]) -> list[list[float]]:
        """One row of logits per pair, columns in ``NLI_LABELS`` order; ModelUnavailable names the
        server and what went wrong (nothing falls back to the local model)."""
        expected = f"label scores for {len(pairs)} pairs"
        try:
            data = serving.post_json(f"{self.url}/predict", {"inputs": [list(p) for p in pairs], "truncate": True,
                                                             "raw_scores": True},
                                     who=self.who, expected=expected, timeout=self.timeout)
            try:
                rows = [{str(item["label"]).lower(): float(item["score"]) for item in row} for row in data]
            except (KeyError, TypeError, ValueError):
                raise serving.bad_reply(self.who, expected, data) from None
            if len(rows) != len(pairs):
                raise serving.bad_reply(self.who, expected, data)
        except serving.ServerError as exc:
            raise models.ModelUnavailable(f"{exc}. Start the server, or unset AW_NLI_URL to use the local "
                                          "NLI model") from None
        for row in rows:
            if sorted(row) != sorted(NLI_LABELS):
                raise models.ModelUnavailable(
                    f"{self.who} returned the labels {sorted(row)}; the NLI role needs exactly "
                    f"{', '.join(NLI_LABELS)} (serve a 3-way NLI model whose config.json id2label names them)")
        return [[row[label] for label in NLI_LABELS] for row in rows]


def served_temperature() -> float:
    """``AW_NLI_TEMPERATURE`` (1.0 if unset): a served model's calibration file is not readable here."""
    raw = os.environ.get(TEMPERATURE_ENV, "").strip() or "1"
    try:
        temperature = float(raw)
    except ValueError:
        temperature = math.nan
    if not (math.isfinite(temperature) and temperature > 0):
        raise models.ModelUnavailable(f"{TEMPERATURE_ENV} must be a positive number (the temperature in the "
                                      f"served model's {CALIBRATION_FILE}), not {raw!r}")
    return temperature


def served_source(url: str, model: str) -> str:
    """What a served NLI role is recorded as: protocol, model name, URL and temperature, each of
    which changes its probabilities."""
    return f"tei:{model}@{url} (temperature {served_temperature():g})"


def load_served(url: str, model: str) -> NliModel:
    """The NLI role answered by the server at ``url``, asked one pair now so that a server that is
    down or names other labels fails at load."""
    server = ServedNli(url)
    server.logits([PROBE])
    return NliModel(None, None, {label: i for i, label in enumerate(NLI_LABELS)}, served_source(url, model),
                    served_temperature(), "server", server=server)


def _onnx_session(source: Path, model, tokenizer):
    """An ONNX Runtime session of ``model``, exported on first use and cached by the weights' hash."""
    import onnxruntime
    import torch
    digest = hashlib.sha256()
    for weights in sorted(source.glob("*.safetensors")) + sorted(source.glob("*.bin")):
        digest.update(weights.read_bytes())
    path = ONNX_CACHE / f"nli-{digest.hexdigest()[:16]}.onnx"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        example = tokenizer(["A premise."], ["A hypothesis."], return_tensors="pt")
        # In the order of the model's forward() arguments (the tokenizer's own order differs).
        names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in example]
        partial = path.with_name(f"{path.stem}.{os.getpid()}.part")
        torch.onnx.export(model, tuple(example[n] for n in names), str(partial), input_names=names,
                          output_names=["logits"], opset_version=17, dynamo=False,
                          dynamic_axes={**{n: {0: "batch", 1: "tokens"} for n in names}, "logits": {0: "batch"}})
        os.replace(partial, path)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = torch.get_num_threads()
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _temperature(source: Path) -> float:
    path = source / CALIBRATION_FILE
    if not path.is_file():
        return 1.0
    try:
        temperature = float(json.loads(path.read_text())["temperature"])
    except (ValueError, KeyError, TypeError) as exc:
        raise models.ModelUnavailable(f"{path} must be JSON with a numeric \"temperature\" ({exc})") from None
    if not temperature > 0:
        raise models.ModelUnavailable(f"{path}: temperature must be positive, not {temperature}")
    return temperature


def predict(pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> list[NliScores]:
    """Label probabilities for each (premise, hypothesis) pair, in order.

    One call counts once in ``core.models.CALLS["nli"]`` (an empty list is no call); pairs
    already scored come from the cache and repeated pairs are scored once.
    """
    pairs = [_check_pair(p) for p in pairs]
    if not pairs:
        return []
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    models.CALLS["nli"] += 1
    nli = get_nli()
    with nli.lock:
        todo = sorted({p for p in pairs if p not in nli.cache}, key=lambda p: (len(p[0]) + len(p[1]), p))
        for start in range(0, len(todo), batch_size):
            batch = todo[start:start + batch_size]
            for pair, scores in zip(batch, score_batch(nli, batch)):
                nli.cache[pair] = scores
        results = []
        for pair in pairs:
            nli.cache.move_to_end(pair)
            results.append(nli.cache[pair])
        while len(nli.cache) > CACHE_SIZE:
            nli.cache.popitem(last=False)
    return results


def _check_pair(pair) -> tuple[str, str]:
    if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
        raise ValueError(f"predict() takes (premise, hypothesis) pairs of strings, got {pair!r}")
    return pair[0], pair[1]


def score_batch(nli: NliModel, batch: list[tuple[str, str]]) -> list[NliScores]:
    """Calibrated probabilities of one batch, uncached (``predict`` is the cached entry point)."""
    import torch
    probs = torch.softmax(logits_batch(nli, batch) / nli.temperature, dim=-1).tolist()
    idx = nli.label_index
    return [NliScores(entailment=row[idx["entailment"]], neutral=row[idx["neutral"]],
                      contradiction=row[idx["contradiction"]]) for row in probs]


def logits_batch(nli: NliModel, batch: list[tuple[str, str]]):
    """Raw (uncalibrated) logits of one batch, columns in the model's ``label_index`` order."""
    import torch
    if nli.server is not None:
        return torch.tensor(nli.server.logits(batch), dtype=torch.float32)
    kind = "np" if nli.session is not None else "pt"
    encoded = nli.tokenizer([p for p, _ in batch], [h for _, h in batch], padding=True, truncation=True,
                            max_length=MAX_LENGTH, return_tensors=kind)
    if nli.session is not None:
        feed = {i.name: encoded[i.name].astype("int64") for i in nli.session.get_inputs()}
        return torch.from_numpy(nli.session.run(None, feed)[0]).float()
    with torch.inference_mode():
        return nli.model(**encoded).logits.float()


def premise_sentences(passage: Passage) -> list[tuple[int, str]]:
    """(index in ``passage.sentences``, text) of the sentences NLI scores for a passage:
    headings dropped, markdown's and a plain-text document's title lines alike (a title entails nothing,
    though a model reads "Governing Law/Disputes" as entailing a claim about a contract's end), bullet
    markers stripped (a bullet's item, "* Universal Credit", is a condition, however short)."""
    out = [(i, strip_list_marker(s.text).strip()) for i, s in enumerate(passage.sentences)
           if not s.text.lstrip().startswith("#") and (sentence_kind(s) == "bullet" or not title_line(s.text))]
    return [(i, t) for i, t in out if t] or [(0, passage.text)]


def premise_texts(passage: Passage) -> list[str]:
    """The texts of ``premise_sentences``: what the NLI stage scored, for citing and re-scoring."""
    return [text for _, text in premise_sentences(passage)]


def decisive_premise(n: PassageNli, passage: Passage) -> str | None:
    """The text NLI scored for the sentence of ``passage`` that decides the claim most (``n.decisive_sentence``;
    None where the trace does not say which): what an answer cites."""
    return dict(premise_sentences(passage)).get(n.decisive_sentence) if n.decisive_sentence is not None else None


def best_sentence(sentences: Sequence[str], hypothesis: str) -> tuple[int, NliScores]:
    """The sentence (or start of a two-sentence window) that best entails ``hypothesis``, and its scores."""
    return best_sentences([sentences], [hypothesis])[0]


def best_sentences(passages: Sequence[Sequence[str]], hypotheses: Sequence[str],
                   batch_size: int = 32) -> list[tuple[int, NliScores]]:
    """``best_sentence`` for many (passage, hypothesis) pairs in one ``predict`` call."""
    return [(best, scores) for best, scores, _, _ in sentence_verdicts(passages, hypotheses, batch_size)]


def sentence_verdicts(passages: Sequence[Sequence[str]], hypotheses: Sequence[str],
                      batch_size: int = 32) -> list[tuple[int, NliScores, int, NliScores]]:
    """For each (passage, hypothesis): the index and scores of the sentence that best entails the
    hypothesis, and the index and scores of the one that decides it most either way (the least neutral).

    A condition or an answer can span two sentences, so each window of two neighbouring
    sentences is scored as well; a window's index is that of its first sentence. Ties go
    to the earlier candidate, single sentences before windows. The decisive sentence matters
    for a statement a passage contradicts: its best-entailing sentence may be another one.
    Where a window decides most, its index is that of whichever of its two sentences decides
    more alone, the one to cite (its scores stay the window's).
    """
    if len(passages) != len(hypotheses):
        raise ValueError(f"best_sentences() needs one hypothesis per passage: got {len(passages)} passages "
                         f"and {len(hypotheses)} hypotheses")
    plans = []
    pairs: list[tuple[str, str]] = []
    for sentences, hypothesis in zip(passages, hypotheses):
        if isinstance(sentences, str):
            raise ValueError("pass each passage as a list of sentences, not one string")
        sentences = list(sentences)
        if not sentences:
            raise ValueError("a passage has no sentences: pass at least one sentence to score the hypothesis against")
        candidates = [(i, s) for i, s in enumerate(sentences)]
        candidates += [(i, f"{sentences[i]} {sentences[i + 1]}") for i in range(len(sentences) - 1)]
        plans.append((len(pairs), [i for i, _ in candidates], len(sentences)))
        pairs += [(text, hypothesis) for _, text in candidates]
    scores = predict(pairs, batch_size=batch_size)
    results = []
    for offset, starts, singles in plans:
        own = scores[offset:offset + len(starts)]
        best = max(range(len(own)), key=lambda k: (own[k].entailment, -k))
        decisive = min(range(len(own)), key=lambda k: (own[k].neutral, k))
        decider = starts[decisive]
        if decisive >= singles:  # a window: the single sentences come first, so its two are at decider, decider + 1
            decider = min((decider, decider + 1), key=lambda i: (own[i].neutral, i))
        results.append((starts[best], own[best], decider, own[decisive]))
    return results
