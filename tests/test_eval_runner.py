"""The batch runner: trace cache, resume, keys, per-document-set KBs, errors, the report and the CLI.

Most tests use a fake pipeline (counting its calls); the last ones run the real
pipeline on a few ShARC and ContractNLI items when the shared data and the NLI model exist.
"""
from __future__ import annotations

import argparse
import gc
import json
import weakref
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from core import models, settings
from core.evaluation import cli as eval_cli
from core.evaluation import metrics as M
from core.evaluation.importers import Dataset, LabelledItem, load_dataset
from core.evaluation.runner import (BatchRunner, documents_key, evaluate, kb_folder,
                                    prediction_records)
from core.gate.learned import LearnedGate
from core.gate.table import regate
from tests.factories import signals, trace

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
DOC_A = ("a", "Winter Fuel Payment", "You can get it if you were born before 1955.")
DOC_B = ("b", "Reduced VAT", "Some goods have a reduced VAT rate.")


class FakeKB:
    def __init__(self, folder: Path):
        self.folder = folder
        self.fingerprint = "fp-" + folder.name


class FakePipeline:
    """Signals follow the question text, so each item's trace is distinct and predictable."""
    calls = 0

    def __init__(self, kb, fail_on: str = "", interrupt_after: int | None = None):
        self.kb, self.fail_on, self.interrupt_after = kb, fail_on, interrupt_after

    def analyze(self, query, values):
        if self.interrupt_after is not None and FakePipeline.calls >= self.interrupt_after:
            raise KeyboardInterrupt
        FakePipeline.calls += 1
        if self.fail_on and self.fail_on in query.question:
            raise ValueError("the question is too odd to analyse")
        words = len(query.question.split())
        sig = signals(ambiguity=0.9 if "it" in query.question.split() else 0.0,
                      incompleteness=0.5 if not (query.scenario or query.history) else 0.0,
                      sufficiency=0.1 if "passport" in query.question else 0.8, coverage=words / 10)
        base = trace(sig)
        # its passage says what the question asks (P(fact stated) reads that), so the signals above decide
        said = replace(base.passages[0], passage=replace(base.passages[0].passage, text=query.question))
        return replace(base, query=query, passages=(said,), kb=str(self.kb.folder))


def items() -> list[LabelledItem]:
    return [
        LabelledItem("i1", "Can I get Winter Fuel Payment?", "ANSWER", scenario="I was born in 1950.",
                     answers=("Yes",), documents=(DOC_A,)),
        LabelledItem("i2", "Can I get Winter Fuel Payment?", "ASK", documents=(DOC_A,)),
        LabelledItem("i3", "How do I renew my passport?", "ABSTAIN", documents=(DOC_B,)),
        LabelledItem("i4", "Is it reduced?", "ASK", history=(("Is it food?", "Yes"),), documents=(DOC_B,)),
        LabelledItem("i5", "Do goods have a reduced rate?", "ANSWER", scenario="I sell goods.",
                     evidence=("Some goods have a reduced VAT rate.",), documents=(DOC_B,)),
    ]


def dataset(setting: str = "reading", its=None) -> Dataset:
    its = tuple(its or items())
    return Dataset(items=its, format="sharc", path="/data/fake.json", setting=setting,
                   all_documents=(DOC_A, DOC_B), total=len(its))


@pytest.fixture
def fake(tmp_path):
    """A runner factory with a fake KB opener and pipeline; counts KB opens and analyses."""
    FakePipeline.calls = 0
    opened: list[Path] = []

    def make(values=None, **pipeline_kwargs):
        def open_kb(folder, vals):
            opened.append(Path(folder))
            return FakeKB(Path(folder))
        return BatchRunner(values, tmp_path / "cache", show_bar=False, open_kb=open_kb,
                           make_workbench=lambda kb: FakePipeline(kb, **pipeline_kwargs))
    make.opened = opened
    return make


def test_second_run_analyses_nothing(fake):
    first = fake().run(dataset())
    assert (first.analysed, first.cached, FakePipeline.calls) == (5, 0, 5)
    assert len(fake.opened) == 2  # one KB per distinct document set, not per item
    second = fake().run(dataset())
    assert (second.analysed, second.cached, FakePipeline.calls) == (0, 5, 5)
    assert second.traces == first.traces and [i.id for i in second.items] == ["i1", "i2", "i3", "i4", "i5"]
    assert len(fake.opened) == 2  # nothing reopened either
    assert "5 from the cache" in second.summary()


def test_per_item_knowledge_bases_are_let_go_before_the_next_one_opens(tmp_path):
    """Memory does not grow with the number of document sets: besides the one being opened, at most the
    previous KB (still referenced until the next replaces it) is alive, whatever the number of sets."""
    alive: weakref.WeakSet = weakref.WeakSet()
    most = []

    def open_kb(folder, values):
        gc.collect()
        most.append(len(alive))
        kb = FakeKB(Path(folder))
        alive.add(kb)
        return kb
    its = [LabelledItem(f"i{n}", "Can I get it?", "ASK", documents=((f"d{n}", f"Doc {n}", f"Rule number {n}."),))
           for n in range(6)]
    run = BatchRunner(None, tmp_path / "cache", show_bar=False, open_kb=open_kb,
                      make_workbench=FakePipeline).run(dataset(its=its))
    assert run.analysed == 6 and len(most) == 6 and max(most) <= 1


def test_interrupted_run_resumes_where_it_stopped(fake):
    with pytest.raises(KeyboardInterrupt):
        fake(interrupt_after=3).run(dataset())
    assert FakePipeline.calls == 3
    resumed = fake().run(dataset())
    assert (resumed.analysed, resumed.cached, FakePipeline.calls) == (2, 3, 5)


def test_partial_last_record_is_dropped_and_redone(fake):
    run = fake().run(dataset())
    path = Path(run.cache_file)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])  # a crash mid-write of the last record
    again = fake().run(dataset())
    assert (again.analysed, again.cached) == (1, 4)
    assert all(json.loads(line) for line in path.read_text().splitlines())


def test_gate_settings_do_not_invalidate_traces_other_settings_do(fake):
    fake().run(dataset())
    assert fake({"amb_max": 0.9, "rule_ambiguity": False}).run(dataset()).analysed == 0
    assert fake({"top_k": 3}).run(dataset()).analysed == 5


def test_pooled_setting_uses_one_kb_of_all_documents(fake, tmp_path):
    run = fake().run(dataset("pooled"))
    assert run.analysed == 5 and len(fake.opened) == 1
    lines = (fake.opened[0] / "docs.jsonl").read_text().splitlines()
    assert [json.loads(x)["id"] for x in lines] == ["a", "b"]
    assert {t.kb for t in run.traces} == {str(fake.opened[0])}


def test_kb_folder_is_keyed_by_content(tmp_path):
    a = kb_folder([DOC_A, DOC_B], tmp_path)
    assert kb_folder([DOC_B, DOC_A], tmp_path) == a  # order-independent
    assert kb_folder([DOC_A], tmp_path) != a
    assert documents_key([DOC_A]) != documents_key([(DOC_A[0], DOC_A[1], DOC_A[2] + " ")])
    assert json.loads((a / "docs.jsonl").read_text().splitlines()[0]) == {"id": "a", "title": DOC_A[1],
                                                                          "text": DOC_A[2]}


def test_unanalysable_items_are_reported_and_not_retried(fake):
    run = fake(fail_on="passport").run(dataset())
    assert set(run.errors) == {"i3"} and "too odd" in run.errors["i3"]
    assert [i.id for i in run.items] == ["i1", "i2", "i4", "i5"]
    calls = FakePipeline.calls
    assert fake(fail_on="passport").run(dataset()).errors == run.errors and FakePipeline.calls == calls
    empty = LabelledItem("i9", "Anything?", "ABSTAIN")
    run = fake().run(dataset(its=[*items(), empty]))
    assert "no documents" in run.errors["i9"]


def test_progress_callback(fake, tmp_path):
    seen = []
    runner = fake()
    runner.progress = lambda done, total, stage: seen.append((done, total, stage))
    runner.run(dataset())
    assert seen[-1] == (5, 5, "analyse") and ("index" in {s for _, _, s in seen})
    assert [d for d, _, s in seen if s == "analyse"] == [1, 2, 3, 4, 5]


def test_regate_evaluate_and_prediction_records(fake):
    run = fake().run(dataset())
    gated = regate(run.table, settings.defaults())
    # fake signals: no context → incompleteness 0.5 → ASK (i2, and i3 before its low sufficiency counts);
    # i4 says "it" (ambiguity 0.9) but has answered a follow-up: a dialogue under way is not asked what it means
    assert run.traces[3].signals.follow_ups_answered == 1
    assert list(gated.actions) == ["ANSWER", "ASK", "ASK", "ANSWER", "ANSWER"]
    assert list(gated.rules) == ["default_answer", "missing_variables", "missing_variables", "default_answer",
                                 "default_answer"]
    report = evaluate(run, gated.codes)
    assert report["actions"] == M.action_metrics(run.gold, gated.codes)
    assert report["actions"]["accuracy"] == pytest.approx(3 / 5)  # i3 asked instead of abstaining, i4 answered
    assert report["auroc_answer_vs_ask"]["n"] == 3  # items with scenario or history, gold ANSWER/ASK
    rows = prediction_records(run, gated.codes, gated.rules)
    assert [r["action"] for r in rows] == list(gated.actions) and rows[2]["gold"] == "ABSTAIN"
    assert rows[0]["signals"]["sufficiency"] == 0.8 and rows[0]["kb"].endswith(documents_key([DOC_A]))
    json.dumps(rows)  # JSON-ready


def test_an_answer_without_written_responses_is_the_polarity_else_the_value_the_trace_chose(fake):
    """Browser walkthrough: Evaluate scored only yes/no answers, so a confident wrong name counted for nothing."""
    from core.evaluation.runner import predicted_answers
    from core.types import AnswerChoice
    run = fake().run(dataset())
    valued = replace(run.traces[4], answer=AnswerChoice("b#0", "Some goods have a reduced VAT rate.", "a reduced rate"))
    run = replace(run, traces=run.traces[:4] + (valued,),
                  items=run.items[:4] + (replace(run.items[4], answers=("the standard rate",)),))
    gated = regate(run.table, settings.defaults())
    assert gated.actions[4] == "ANSWER" and predicted_answers(run, gated.codes)[4] == "a reduced rate"
    assert predicted_answers(run, gated.codes)[1] is None, "an ASK gives no answer"
    report = evaluate(run, gated.codes)
    assert report["answers"]["source"] == "polarity or value" and report["answers"]["exact_match"] == 0.0


def _prefill(tmp_path, path: Path, fmt: str = "sharc") -> Path:
    """Fill the trace cache for a file with the fake pipeline, so the CLI needs no model."""
    FakePipeline.calls = 0
    BatchRunner(None, tmp_path / "cache", show_bar=False, open_kb=lambda f, v: FakeKB(Path(f)),
                make_workbench=FakePipeline).run(load_dataset(fmt, path))
    return tmp_path / "cache"


def _cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--set", action="append", default=[])
    parser.add_argument("--preset")
    eval_cli.add_subcommands(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    values = settings.defaults()
    values.update(settings.parse_assignments(args.set))
    return eval_cli.run(args, values)


def _sharc_file(tmp_path: Path, n: int = 40) -> Path:
    rng = np.random.default_rng(0)
    rows = []
    for k in range(n):
        action = rng.choice(["Yes", "No", "Are you over 65?", "Irrelevant"], p=[0.4, 0.2, 0.3, 0.1])
        question = "How do I renew my passport?" if action == "Irrelevant" else "Can I get it?" \
            if action.endswith("?") else "Can I get Winter Fuel Payment?"
        rows.append({"utterance_id": f"u{k}", "snippet": DOC_A[2], "question": question,
                     "scenario": "" if action.endswith("?") or action == "Irrelevant" else "I was born in 1950.",
                     "history": [], "answer": str(action)})
    path = tmp_path / "sharc.json"
    path.write_text(json.dumps(rows))
    return path


def test_cli_eval_writes_predictions_and_metrics(tmp_path, capsys):
    data = _sharc_file(tmp_path)
    cache = _prefill(tmp_path, data)
    assert FakePipeline.calls == 40
    out = tmp_path / "out"
    assert _cli(["eval", "--format", "sharc", str(data), "--cache", str(cache), "--quiet", "--out", str(out)]) == 0
    assert FakePipeline.calls == 40  # all from the cache: the real pipeline was never needed
    printed = capsys.readouterr().out
    metrics = json.loads((out / "metrics.json").read_text())
    assert f"macro-F1 {metrics['rule_gate']['actions']['macro_f1']:.3f}" in printed
    preds = [json.loads(x) for x in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(preds) == 40 and metrics["rule_gate"]["actions"]["n"] == 40
    assert metrics["rule_gate"]["actions"]["accuracy"] == pytest.approx(np.mean([p["correct"] for p in preds]))
    assert not list(out.glob(".*tmp"))  # nothing half-written left behind


def test_cli_calibrate_writes_preset_and_learned_gate(tmp_path, capsys):
    data = _sharc_file(tmp_path, 80)
    cache = _prefill(tmp_path, data)
    preset, gate = tmp_path / "p.json", tmp_path / "g.json"
    assert _cli(["calibrate", "--format", "sharc", str(data), "--cache", str(cache), "--quiet", "--folds", "3",
                 "--out", str(preset), "--learned-gate", str(gate), "--report", str(tmp_path / "r.json")]) == 0
    printed = capsys.readouterr().out
    assert "rule gate, calibrated (out-of-fold)" in printed and "learned gate (out-of-fold)" in printed
    assert "per-signal AUROC" in printed and "incompleteness" in printed
    values = settings.load_preset(preset)
    report = json.loads((tmp_path / "r.json").read_text())
    assert all(values[k] == v for k, v in report["suggested"].items())
    calibrated = report["comparison"]["rule gate, calibrated (in-sample)"]["macro_f1"]
    assert calibrated >= report["comparison"]["rule gate, given settings"]["macro_f1"]
    assert LearnedGate.load(gate).classes == ("ANSWER", "ASK", "ABSTAIN")
    assert LearnedGate.load(gate).structure == "multinomial"
    two_stage = tmp_path / "g2.json"
    assert _cli(["calibrate", "--format", "sharc", str(data), "--cache", str(cache), "--quiet", "--folds", "3",
                 "--out", str(preset), "--learned-gate", str(two_stage), "--structure", "two-stage"]) == 0
    assert LearnedGate.load(two_stage).structure == "two-stage"
    # the eval CLI scores the learned gate from its file
    assert _cli(["eval", "--format", "sharc", str(data), "--cache", str(cache), "--quiet",
                 "--learned-gate", str(gate), "--out", str(tmp_path / "o")]) == 0
    assert "learned_gate" in json.loads((tmp_path / "o" / "metrics.json").read_text())


def test_cli_errors_are_clear(tmp_path):
    data = _sharc_file(tmp_path)
    with pytest.raises(ValueError, match="--max-hallucination"):
        _cli(["calibrate", "--format", "sharc", str(data), "--objective", "coverage", "--out", str(tmp_path / "p")])
    with pytest.raises(ValueError, match="no such file"):
        _cli(["eval", "--format", "sharc", str(tmp_path / "none.json"), "--out", str(tmp_path / "o")])


# --- the real pipeline ------------------------------------------------------------------

@pytest.fixture(scope="module")
def real_models():
    from core import nli
    if not Path(models.role_source("nli")).is_dir():
        pytest.skip(f"NLI weights not found at {models.role_source('nli')} (train with scripts/train_nli.py)")
    nli.get_nli()


@pytest.mark.skipif(not (SHARED / "sharc_dev_half_a.json").exists(), reason="../shared/data/sharc_dev_half_a.json absent")
def test_real_pipeline_on_five_sharc_items(real_models, tmp_path):
    ds = load_dataset("sharc", SHARED / "sharc_dev_half_a.json", limit=5, seed=7)
    run = BatchRunner(None, tmp_path, show_bar=False).run(ds)
    assert run.analysed == 5 and not run.errors
    for item, t in zip(run.items, run.traces):
        snippet = item.documents[0][2]
        assert t.passages and all(p.passage.text in snippet for p in t.passages)  # its own snippet is its KB
        assert t.query.scenario == item.scenario and len(t.query.history) == len(item.history)
    before = dict(models.CALLS)
    again = BatchRunner(None, tmp_path, show_bar=False).run(ds)
    assert again.analysed == 0 and models.CALLS == before  # no model call on the second run
    assert again.traces == run.traces


@pytest.mark.skipif(not (SHARED / "contractnli_dev.json").exists(), reason="../shared/data/contractnli_dev.json absent")
def test_real_pipeline_contractnli_hypothesis_is_a_statement(real_models, tmp_path):
    ds = load_dataset("contractnli", SHARED / "contractnli_dev.json", limit=3)
    run = BatchRunner(None, tmp_path, show_bar=False).run(ds)
    assert len(run.traces) == 3
    for item, t in zip(run.items, run.traces):
        assert t.claim.schema == "statement" and t.query.question == item.question
        assert all(p.passage.text in item.documents[0][2] for p in t.passages)


def test_run_key_follows_models_and_analysis_code(fake, monkeypatch):
    from core.evaluation import runner
    key = fake().run_key()
    monkeypatch.setattr(runner, "code_stamp", lambda: "edited")
    assert fake().run_key() != key
    monkeypatch.undo()
    monkeypatch.setattr(runner, "model_stamp", lambda: {"nli": ["/other/model", 1]})
    assert fake().run_key() != key


def test_model_stamp_follows_the_weights_not_their_file_times_or_card(tmp_path, monkeypatch):
    import os
    from core.evaluation import runner
    model = tmp_path / "nli"
    model.mkdir()
    (model / "model.safetensors").write_bytes(b"weights v1")
    monkeypatch.setattr(runner.models, "model_ids", lambda: {"nli": str(model)})
    stamp = runner.model_stamp()
    os.utime(model / "model.safetensors", ns=(1, 1))  # a checkout rewrote the same bytes
    assert runner.model_stamp() == stamp
    (model / "README.md").write_text("# the model card, edited")  # describes the model, computes nothing
    assert runner.model_stamp() == stamp
    (model / "calibration.json").write_text('{"temperature": 1.5}')  # changes every probability
    calibrated = runner.model_stamp()
    assert calibrated != stamp
    (model / "model.safetensors").write_bytes(b"weights v2")  # retrained
    assert runner.model_stamp() != calibrated


def test_code_stamp_follows_the_code_the_pipeline_imports(tmp_path, monkeypatch):
    from core.evaluation import runner
    core = tmp_path / "core"
    core.mkdir()
    (core / "pipeline.py").write_text("from core import nli\nfrom core.gate import decide\n"
                                      "def f():\n    import core.signals\n")
    for name in ("nli", "signals", "gate", "agents"):
        (core / f"{name}.py").write_text("a = 1\n")
    monkeypatch.setattr(runner.models, "PROJECT_ROOT", tmp_path)
    assert [p.name for p in runner.analysis_modules()] == ["nli.py", "pipeline.py", "signals.py"]
    stamp = runner.code_stamp()
    for name in ("gate", "agents"):  # not analysis code: traces stay valid
        (core / f"{name}.py").write_text("a = 2\n")
    assert runner.code_stamp() == stamp
    (core / "signals.py").write_text("a = 2\n")  # imported inside a function: still analysis code
    assert runner.code_stamp() != stamp


def test_code_stamp_is_the_same_from_many_threads_at_once():
    """A Streamlit page reads the run key from its script thread while other threads build ASTs: the
    stamp comes out the same from every thread."""
    from concurrent.futures import ThreadPoolExecutor
    from core.evaluation import runner
    runner._core_imports.cache_clear()
    with ThreadPoolExecutor(8) as pool:
        stamps = set(pool.map(lambda _: runner.code_stamp(), range(32)))
    assert stamps == {runner.code_stamp()}
    assert runner._core_imports("from core import nli\nimport core.signals\n") == ("core.nli", "core.signals")


def test_real_analysis_modules_include_the_stages():
    from core.evaluation.runner import analysis_modules
    names = {p.relative_to(models.PROJECT_ROOT / "core").as_posix() for p in analysis_modules()}
    assert {"pipeline.py", "nli.py", "retrieval.py", "signals.py", "text.py", "kb/__init__.py", "kb/index.py",
            "kb/readers.py"} <= names
    assert not names & {"gate/__init__.py", "gate/rules.py", "cli.py", "settings.py", "service.py", "agents.py"}


def test_predicted_evidence_prefers_the_evidence_selection():
    from core.evaluation.runner import predicted_evidence
    from core.types import EvidenceSelection, EvidenceSentence, NliScores, PassageNli, Sentence
    t = trace()
    p = t.passages[0]
    sentences = (Sentence("First one.", 0, 10), Sentence("Second one.", 11, 22))
    p = replace(p, passage=replace(p.passage, text="First one. Second one.", sentences=sentences))
    t = replace(t, passages=(p,), nli=(PassageNli("doc#0", NliScores(0.9, 0.05, 0.05), 1, kept=True),))
    assert predicted_evidence(t) == ["Second one."]  # the best sentence of the kept passage
    chosen = EvidenceSentence("doc#0", 0, "First one.", 0.8, ("first",), 0, 10)
    t = replace(t, evidence=EvidenceSelection(("first",), (chosen,), (), (), (), "covered"))
    assert predicted_evidence(t) == ["First one."]


def test_model_stamp_names_a_model_folder_not_where_it_lies(tmp_path, monkeypatch):
    from core.evaluation import runner
    for copy in ("checkout", "moved"):
        model = tmp_path / copy / "models" / "nli"
        model.mkdir(parents=True)
        (model / "model.safetensors").write_bytes(b"weights v1")
    monkeypatch.setattr(runner.models, "model_ids", lambda: {"nli": str(tmp_path / "checkout" / "models" / "nli")})
    here = runner.model_stamp()
    monkeypatch.setattr(runner.models, "model_ids", lambda: {"nli": str(tmp_path / "moved" / "models" / "nli")})
    assert runner.model_stamp() == here  # the same weights elsewhere: the same traces
    (tmp_path / "moved" / "models" / "nli" / "model.safetensors").write_bytes(b"weights v2")
    assert runner.model_stamp() != here
