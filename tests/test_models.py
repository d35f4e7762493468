"""``core.models.Models``: the embedding and parse memos (the model roles themselves are tested where they are used)."""
from __future__ import annotations

import numpy as np

from core.models import Models


class RecordingEncoder:
    """Stands in for the sentence-transformers model: a vector from each text's length, every call recorded."""

    def __init__(self):
        self.calls: list[list[str]] = []

    def encode(self, texts, **options):
        self.calls.append(list(texts))
        return np.array([[float(len(t)), 1.0] for t in texts])


class EncoderModels(Models):
    def __init__(self, encoder, **options):
        super().__init__(**options)
        self.encoder = encoder

    def embedder(self):
        return self.encoder


def test_texts_seen_again_are_not_embedded_again_and_come_back_in_order():
    encoder = RecordingEncoder()
    models = EncoderModels(encoder)
    first = models.embed(["a", "bb", "a"])
    assert encoder.calls == [["a", "bb"]] and first[:, 0].tolist() == [1.0, 2.0, 1.0]
    again = models.embed(["bb", "ccc"])
    assert encoder.calls[-1] == ["ccc"] and again[:, 0].tolist() == [2.0, 3.0]
    models.embed(["a", "ccc"])
    assert len(encoder.calls) == 2 and models.calls["embedder"] == 2


def test_the_memo_keeps_only_the_most_recent_texts():
    encoder = RecordingEncoder()
    models = EncoderModels(encoder, embed_memo=2)
    models.embed(["a", "bb", "ccc"])
    models.embed(["a"])  # the oldest was forgotten: embedded again
    assert encoder.calls[-1] == ["a"] and len(models._vectors) == 2


class RecordingPipeline:
    """Stands in for the spaCy pipeline: a "Doc" per text (the text upper-cased), every batch recorded."""

    def __init__(self):
        self.calls: list[list[str]] = []

    def pipe(self, texts, batch_size: int = 32):
        texts = list(texts)
        self.calls.append(texts)
        return [t.upper() for t in texts]


def test_sentences_parsed_before_are_not_parsed_again(monkeypatch):
    monkeypatch.setattr("core.models.PARSE_MEMO", 3)
    nlp = RecordingPipeline()
    models = Models()
    models.load("spacy", lambda: nlp)
    assert models.parse(["a", "b", "a"]) == ["A", "B", "A"] and nlp.calls == [["a", "b"]]
    assert models.parse(["b", "c"]) == ["B", "C"] and nlp.calls[-1] == ["c"]
    models.parse(["a", "b", "c"])
    assert len(nlp.calls) == 2 and models.calls["spacy"] == 2  # no call when every text is remembered
    models.parse(["d"])  # past the memo's size the oldest ("a") is forgotten
    models.parse(["a"])
    assert nlp.calls[-1] == ["a"] and len(models._docs) == 3
