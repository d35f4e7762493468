"""The NLI role: loading any 3-way cross-encoder directory, batched cached scoring, sentence choice.

Real-model tests use the project's model (models/nli-minilm-l6-snli), or the directory in
AW_NLI, or while it is being trained the newest checkpoint under /tmp/nli; they skip when
none exists. The model loads once per session.
"""
from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from core import models, nli
from core.types import NliScores
from core.voice import to_user_voice

CHECKPOINTS = Path("/tmp/nli")


def _nli_dir() -> Path | None:
    if os.environ.get("AW_NLI"):
        return Path(os.environ["AW_NLI"]) if Path(os.environ["AW_NLI"]).is_dir() else None
    if models.DEFAULT_NLI_DIR.is_dir():
        return models.DEFAULT_NLI_DIR
    found = [p for p in CHECKPOINTS.glob("nli-minilm-l6-snli*") if (p / "config.json").is_file()]
    return max(found, key=lambda p: (p / "config.json").stat().st_mtime) if found else None


@pytest.fixture(scope="session")
def real_nli():
    path = _nli_dir()
    if path is None:
        pytest.skip(f"no NLI model: {models.DEFAULT_NLI_DIR} is absent (train it with "
                    "`python scripts/train_nli.py`), no checkpoint under /tmp/nli, and AW_NLI is unset")
    with pytest.MonkeyPatch.context() as mp:
        if str(path) != models.role_source("nli"):
            mp.setitem(models._overrides, "nli", str(path))
            mp.delitem(models._cache, "nli", raising=False)
        nli.get_nli()
        yield nli
        models._cache.pop("nli", None)


def label(premise: str, hypothesis: str) -> str:
    return nli.predict([(premise, hypothesis)])[0].label


# --- real model -----------------------------------------------------------------------

@pytest.mark.parametrize("premise, hypothesis, expected", [
    ("A man is playing a guitar on a stage.", "A man is playing an instrument.", "entailment"),
    ("Two dogs are running through a snowy field.", "Animals are outside.", "entailment"),
    ("A group of children are swimming in a lake.", "Kids are in the water.", "entailment"),
    ("A child is sleeping in a bed.", "The child is playing football outside.", "contradiction"),
    ("A man is riding a bicycle down the street.", "A man is sitting on a couch at home.", "contradiction"),
    ("A woman is standing in an empty kitchen.", "A woman is swimming in the ocean.", "contradiction"),
    ("A woman is reading a book in a park.", "The woman is reading a novel for her class.", "neutral"),
    ("A boy is kicking a ball in a yard.", "The boy is playing with his father.", "neutral"),
    ("An old man is walking down a road.", "The man is going to visit his daughter.", "neutral"),
])
def test_obvious_pairs_are_labelled_right(real_nli, premise, hypothesis, expected):
    scores = nli.predict([(premise, hypothesis)])[0]
    assert scores.label == expected, scores
    assert math.isclose(scores.entailment + scores.neutral + scores.contradiction, 1.0, rel_tol=1e-5)


@pytest.mark.parametrize("fact, condition, expected", [
    ("I live in Scotland.", "The applicant lives in Scotland.", "entailment"),
    ("I am 67 years old and I live in Scotland.", "The applicant lives in Scotland.", "entailment"),
    ("I am a UK citizen.", "The claimant must be a UK citizen.", "entailment"),
    ("I am self-employed and work from home.", "you're self-employed", "entailment"),
    ("I am not married.", "The applicant is married.", "contradiction"),
    ("I work full time as a nurse.", "The claimant must be unemployed.", "contradiction"),
    ("I live in Scotland.", "The applicant has two children.", "neutral"),
])
def test_perspective_shift_after_voice_conversion(real_nli, fact, condition, expected):
    assert label(fact, to_user_voice(condition)) == expected


@pytest.mark.parametrize("fact, condition", [
    ("I don't have a driving licence.", "The applicant has a driving licence."),
    ("I have never been married.", "The applicant is married."),
    ("I have no children.", "The applicant has children."),
    ("I don't smoke.", "The applicant smokes."),
])
def test_negated_facts_are_caught_by_scoring_the_negated_condition(real_nli, fact, condition):
    """The SNLI model reads "I don't smoke" as entailing "I smoke" (word overlap); asked about
    both the condition and its negation, it prefers the negation, which is the contradiction."""
    positive, negative = nli.predict([(fact, to_user_voice(condition)),
                                      (fact, to_user_voice(condition, negate=True))])
    assert negative.entailment > 0.5 and negative.entailment > positive.entailment


def test_best_sentence_picks_the_sentence_that_entails(real_nli):
    passage = ["A woman is painting a fence in her garden.", "Two boys are playing chess at a table.",
               "A brown dog is swimming across a lake.", "An old man is selling fruit at a market."]
    index, scores = nli.best_sentence(passage, "An animal is in the water.")
    assert index == 2
    assert scores.entailment > 0.9
    others = nli.predict([(s, "An animal is in the water.") for s in passage[:2] + passage[3:]])
    assert all(o.entailment < scores.entailment - 0.2 for o in others)


def test_best_sentences_is_one_call_and_matches_single_calls(real_nli):
    passages = [["A man is cooking dinner.", "A cat sleeps on the sofa."],
                ["The girls are singing in a choir.", "A bus stops at the corner."],
                ["A farmer drives a tractor across a field."]]
    hypotheses = ["An animal is resting.", "People are singing.", "Someone is driving a vehicle."]
    before = models.CALLS["nli"]
    batched = nli.best_sentences(passages, hypotheses)
    assert models.CALLS["nli"] == before + 1
    assert [i for i, _ in batched] == [1, 0, 0]
    assert batched == [nli.best_sentence(p, h) for p, h in zip(passages, hypotheses)]


def test_predict_is_batched_cached_and_counted(real_nli, monkeypatch):
    pairs = [("A man is running.", f"A person is moving number {i}.") for i in range(5)]
    first = nli.predict(pairs, batch_size=2)
    scored = []
    original = nli._score
    monkeypatch.setattr(nli, "_score", lambda model, batch: scored.append(batch) or original(model, batch))
    before = models.CALLS["nli"]
    again = nli.predict(pairs + [pairs[0]], batch_size=2)
    assert again == first + [first[0]]
    assert scored == []  # every pair came from the cache
    assert models.CALLS["nli"] == before + 1
    assert nli.predict([]) == [] and models.CALLS["nli"] == before + 1


# --- loader (tiny random models, no training needed) -----------------------------------

def _tiny_model_dir(path: Path, id2label: dict[int, str], bias: list[float]) -> Path:
    """A 1-layer BERT classifier whose logits are fixed by its bias, saved fp16 like the project's."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification
    config = BertConfig(vocab_size=30522, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, num_labels=3, id2label=id2label,
                        label2id={v: k for k, v in id2label.items()})
    model = BertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor(bias))
    model.half().save_pretrained(path)
    AutoTokenizer.from_pretrained(models.role_source("embedder")).save_pretrained(path)
    return path


@pytest.fixture
def isolated_nli(monkeypatch):
    """Point the NLI role at a test directory without touching the session's loaded model."""
    def use(path: Path) -> None:
        monkeypatch.setattr(models, "_overrides", {"nli": str(path)})
        monkeypatch.setattr(models, "_cache", {})
    return use


def test_label_order_is_read_from_the_config(tmp_path, isolated_nli):
    # This model's order is entailment/neutral/contradiction (not the project's), in mixed case.
    path = _tiny_model_dir(tmp_path / "other-order", {0: "ENTAILMENT", 1: "Neutral", 2: "contradiction"},
                           bias=[3.0, 0.0, -3.0])
    isolated_nli(path)
    scores = nli.predict([("A man is running.", "A person moves.")])[0]
    exp = [math.exp(x) for x in (3.0, 0.0, -3.0)]
    assert scores.label == "entailment"
    assert scores.entailment == pytest.approx(exp[0] / sum(exp), abs=1e-3)
    assert scores.neutral == pytest.approx(exp[1] / sum(exp), abs=1e-3)
    assert scores.contradiction == pytest.approx(exp[2] / sum(exp), abs=1e-3)
    loaded = nli.get_nli()
    assert loaded.label_index == {"entailment": 0, "neutral": 1, "contradiction": 2}
    assert next(loaded.model.parameters()).dtype.is_floating_point
    assert str(next(loaded.model.parameters()).dtype) == "torch.float32"  # fp16 on disk, fp32 in memory


def test_unknown_label_names_are_refused_with_advice(tmp_path, isolated_nli):
    isolated_nli(_tiny_model_dir(tmp_path / "generic", {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, [0.0, 0.0, 0.0]))
    with pytest.raises(models.ModelUnavailable, match="id2label"):
        nli.get_nli()


def test_missing_directory_says_how_to_get_a_model(tmp_path, isolated_nli):
    missing = tmp_path / "no-such-model"
    isolated_nli(missing)
    with pytest.raises(models.ModelUnavailable) as err:
        nli.predict([("a", "b")])
    message = str(err.value)
    assert str(missing) in message and "scripts/train_nli.py" in message and "AW_NLI" in message


def test_best_sentences_scores_windows_and_reports_their_start(monkeypatch):
    """A condition split over two sentences is found by the window that joins them."""
    def fake_predict(pairs, batch_size=32):
        return [NliScores(0.9, 0.05, 0.05) if "red hat" in p and "violin" in p else
                NliScores(0.4, 0.5, 0.1) if "violin" in p else NliScores(0.1, 0.8, 0.1) for p, _ in pairs]
    monkeypatch.setattr(nli, "predict", fake_predict)
    passage = ["The weather is cold.", "A man wears a red hat.", "He plays the violin.", "People pass by."]
    index, scores = nli.best_sentence(passage, "A man in a red hat plays the violin.")
    assert (index, scores.entailment) == (1, 0.9)
    index, scores = nli.best_sentence(passage[2:], "Someone plays music.")
    assert (index, scores.entailment) == (0, 0.4)


@pytest.mark.parametrize("call, message", [
    (lambda: nli.predict([("only one string",)]), "pairs of strings"),
    (lambda: nli.predict([("a", "b")], batch_size=0), "batch_size"),
    (lambda: nli.best_sentence([], "h"), "no sentences"),
    (lambda: nli.best_sentence("A whole passage.", "h"), "list of sentences"),
    (lambda: nli.best_sentences([["a"]], ["h1", "h2"]), "one hypothesis per passage"),
])
def test_bad_input_is_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()
