"""The NLI role: loading any 3-way cross-encoder directory, batched cached scoring, sentence choice.

Real-model tests use the project's model (models/nli-minilm-l6-mix) or the directory in
AW_NLI; they skip when neither exists. The model loads once per session.
"""
from __future__ import annotations

import contextlib
import json
import math
import os
from pathlib import Path

import pytest

from core import models, nli
from core.types import NliScores, Passage, PassageNli, Sentence
from core.voice import to_user_voice


def _nli_dir() -> Path | None:
    if os.environ.get("AW_NLI"):
        return Path(os.environ["AW_NLI"]) if Path(os.environ["AW_NLI"]).is_dir() else None
    return models.DEFAULT_NLI_DIR if models.DEFAULT_NLI_DIR.is_dir() else None


@pytest.fixture(scope="session")
def real_nli():
    path = _nli_dir()
    if path is None:
        pytest.skip(f"no NLI model: {models.DEFAULT_NLI_DIR} is absent (train it with "
                    "`python scripts/train_nli.py`), no checkpoint under /tmp/nli, and AW_NLI is unset")
    found = models.Models(nli=str(path)) if str(path) != models.role_source("nli") else models.DEFAULT
    with models.using(found):
        nli.get_nli()
        yield nli


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


@pytest.mark.parametrize("clause, hypothesis, expected", [
    ("Upon termination of this Agreement, the Recipient shall promptly return or destroy all documents "
     "containing Confidential Information.",
     "Receiving Party shall destroy or return some Confidential Information upon the termination of Agreement.",
     "entailment"),
    ("Confidential Information means all information disclosed by the Discloser, whether in writing, "
     "orally or by inspection, including business, financial and marketing information.",
     "Confidential Information shall only include technical information.", "contradiction"),
    # A related but irrelevant clause: the SNLI-only model called such pairs contradictions.
    ("This Agreement shall be governed by and construed in accordance with the laws of the State of New York.",
     "Receiving Party shall not solicit some of Disclosing Party's representatives.", "neutral"),
])
def test_contract_clauses(real_nli, clause, hypothesis, expected):
    assert label(clause, hypothesis) == expected


@pytest.mark.parametrize("fact, condition, expected", [
    ("I am a registered childminder.", "you are a registered childminder", "entailment"),
    ("I am not an apprentice.", "you are an apprentice", "contradiction"),
    ("I am 40 and I rent my flat.", "you get Pension Credit", "neutral"),
])
def test_bullet_fragment_conditions(real_nli, fact, condition, expected):
    """Rule conditions are often bullet fragments in the second person, not sentences."""
    assert label(fact, condition) == expected


def test_temperature_of_the_model_directory_is_applied(real_nli):
    """Probabilities are softmax(logits / T) with the T that train_nli.py fitted on held-out pairs."""
    import torch
    loaded = nli.get_nli()
    stored = json.loads((Path(loaded.source) / nli.CALIBRATION_FILE).read_text())["temperature"]
    assert loaded.temperature == stored and loaded.temperature != 1.0
    pair = ("A man is playing a guitar on a stage.", "A man is performing music.")
    encoded = loaded.tokenizer([pair[0]], [pair[1]], return_tensors="pt")
    with torch.inference_mode():
        logits = loaded.model(**encoded).logits.float()[0]
    raw = torch.softmax(logits, dim=-1)
    calibrated = torch.softmax(logits / stored, dim=-1)
    scores = nli.score_batch(loaded, [pair])[0]
    assert scores.entailment == pytest.approx(float(calibrated[loaded.label_index["entailment"]]), abs=1e-5)
    assert abs(scores.entailment - float(raw[loaded.label_index["entailment"]])) > 1e-3


def _reference_pairs():
    return [("A man is playing a guitar on a stage.", "A man is playing an instrument."),
            ("A child is sleeping in a bed.", "The child is playing football outside."),
            ("A woman is reading a book in a park.", "The woman is reading a novel for her class."),
            ("I live in Scotland.", "The applicant lives in Scotland."),
            ("I am not married.", "The applicant is married.")]


def test_int8_model_agrees_with_fp32_on_clear_pairs(real_nli):
    fp32 = nli.load_model(nli.get_nli().source, backend="torch")
    int8 = nli.load_model(nli.get_nli().source, backend="int8")
    assert int8.backend == "int8" and int8.temperature == fp32.temperature
    pairs = _reference_pairs()
    assert [s.label for s in nli.score_batch(int8, pairs)] == [s.label for s in nli.score_batch(fp32, pairs)]


def test_onnx_runtime_gives_the_fp32_probabilities(real_nli, tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    monkeypatch.setattr(nli, "ONNX_CACHE", tmp_path)
    source = nli.get_nli().source
    onnx_model = nli.load_model(source, backend="onnx")
    assert onnx_model.backend == "onnx" and len(list(tmp_path.glob("nli-*.onnx"))) == 1
    pairs = _reference_pairs()
    fp32 = nli.score_batch(nli.load_model(source, backend="torch"), pairs)
    for ort_scores, torch_scores in zip(nli.score_batch(onnx_model, pairs), fp32):
        assert ort_scores.entailment == pytest.approx(torch_scores.entailment, abs=1e-4)
        assert ort_scores.contradiction == pytest.approx(torch_scores.contradiction, abs=1e-4)


def test_unknown_backend_is_refused(real_nli):
    with pytest.raises(ValueError, match="backend"):
        nli.load_model(nli.get_nli().source, backend="tensorrt")

def test_title_lines_are_no_premises_and_a_short_bullet_still_is():
    """A plain-text contract's "Governing Law/Disputes" entailed "Receiving Party shall destroy or return some
    Confidential Information upon the termination of Agreement." at 0.81 (ContractNLI train): a title says
    nothing. A bullet as short ("* Universal Credit") is an item of the rule above it and stays."""
    from core.text import split_sentences
    from core.types import Passage
    text = ("Governing Law/Disputes\n\nThis Agreement is governed by the laws of England.\n\n"
            "You may get Cold Weather Payments if you're getting:\n\n* Universal Credit")
    passage = Passage(id="d#0", doc_id="d", title="D", text=text, start=0, end=len(text),
                      sentences=tuple(split_sentences(text)))
    assert nli.premise_texts(passage) == ["This Agreement is governed by the laws of England.",
                                          "You may get Cold Weather Payments if you're getting:", "Universal Credit"]


def test_best_sentence_picks_the_sentence_that_entails(real_nli):
    passage = ["A woman is painting a fence in her garden.", "Two boys are playing chess at a table.",
               "A brown dog is swimming across a lake.", "An old man is selling fruit at a market."]
    index, scores = nli.best_sentence(passage, "An animal is in the water.")
    assert index == 2
    assert scores.entailment > 0.9
    others = nli.predict([(s, "An animal is in the water.") for s in passage[:2] + passage[3:]])
    assert all(o.entailment < scores.entailment - 0.2 for o in others)


def test_best_sentences_is_one_call_and_matches_single_calls(real_nli):
    passages = [["A bus stops at the corner.", "A man is cooking dinner.", "A cat sleeps on the sofa."],
                ["The girls are singing in a choir.", "A bus stops at the corner."],
                ["A farmer drives a tractor across a field."]]
    hypotheses = ["An animal is resting.", "People are singing.", "Someone is driving a vehicle."]
    before = models.CALLS["nli"]
    batched = nli.best_sentences(passages, hypotheses)
    assert models.CALLS["nli"] == before + 1
    # the cat's sentence (2) or the window of the two sentences that ends on it (1)
    assert batched[0][0] in (1, 2) and [i for i, _ in batched[1:]] == [0, 0]
    assert batched == [nli.best_sentence(p, h) for p, h in zip(passages, hypotheses)]


def test_sentence_verdicts_keeps_the_contradicting_sentence_beside_the_entailing_one(real_nli):
    # The sentence that says the opposite of the hypothesis, after one that decides it less.
    passage = ["The dog belongs to my neighbour.", "The dog is asleep on the porch."]
    hypothesis = "The dog is running across the field."
    [(best, scores, decider, decisive)] = nli.sentence_verdicts([passage], [hypothesis])
    assert (best, scores) == nli.best_sentence(passage, hypothesis)
    assert decider == 1  # the dog's sentence, even where the window of both sentences decides most
    assert decisive.neutral <= min(s.neutral for s in nli.predict(
        [(t, hypothesis) for t in passage + [" ".join(passage)]]))
    assert decisive.contradiction > 0.5 and decisive.contradiction > scores.contradiction - 1e-9


def test_decisive_text_is_the_passage_sentence_the_trace_names():
    texts = ["The dog belongs to my neighbour.", "The dog is asleep on the porch."]
    passage = Passage("p#0", "p", "Dogs", " ".join(texts), 0, 64,
                      sentences=tuple(Sentence(t, 0, len(t)) for t in texts))
    scores = NliScores(0.1, 0.2, 0.7)
    assert PassageNli("p#0", scores, 0, decisive=scores, decisive_sentence=1).decisive_text(passage) == texts[1]
    # a trace written before the index was kept, or one that names no sentence of this passage, shows none
    assert PassageNli("p#0", scores, 0, decisive=scores).decisive_text(passage) == ""
    assert PassageNli("p#0", scores, 0, decisive=scores, decisive_sentence=2).decisive_text(passage) == ""


def test_predict_is_batched_cached_and_counted(real_nli):
    pairs = [("A man is running.", f"A person is moving number {i}.") for i in range(5)]
    first = nli.predict(pairs, batch_size=2)
    cache = nli.get_nli().cache
    assert all(p in cache for p in pairs)
    held = dict(cache)
    before = models.CALLS["nli"]
    again = nli.predict(pairs + [pairs[0]], batch_size=2)
    assert again == first + [first[0]]
    assert dict(cache) == held  # every pair came from the cache: nothing scored, nothing added
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
def isolated_nli():
    """Point the NLI role at a test directory (models of its own: the session's loaded model stays)."""
    with contextlib.ExitStack() as stack:
        yield lambda path: stack.enter_context(models.using(models.Models(nli=str(path))))


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


def test_calibration_file_divides_the_logits(tmp_path, isolated_nli):
    path = _tiny_model_dir(tmp_path / "calibrated", {0: "contradiction", 1: "entailment", 2: "neutral"},
                           bias=[-2.0, 4.0, 0.0])
    (path / nli.CALIBRATION_FILE).write_text(json.dumps({"temperature": 2.0}))
    isolated_nli(path)
    scores = nli.predict([("A man is running.", "A person moves.")])[0]
    exp = [math.exp(x / 2.0) for x in (-2.0, 4.0, 0.0)]
    assert nli.get_nli().temperature == 2.0
    assert scores.entailment == pytest.approx(exp[1] / sum(exp), abs=1e-3)


def test_bad_calibration_file_is_a_clear_error(tmp_path, isolated_nli):
    path = _tiny_model_dir(tmp_path / "bad", {0: "contradiction", 1: "entailment", 2: "neutral"}, [0.0, 0.0, 0.0])
    (path / nli.CALIBRATION_FILE).write_text(json.dumps({"temperature": 0}))
    isolated_nli(path)
    with pytest.raises(models.ModelUnavailable, match="temperature must be positive"):
        nli.get_nli()


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
