"""The Evaluate page through AppTest: figures from cached traces, re-gating on a slider move without
analysis, sweeps, calibration applied to the sliders, the learned gate side by side, the item
click-through to Inspect, bad files; and one real run of the sample KB's questions."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app import wiring
from components import evaluation as ev
from core import settings
from core.evaluation import BatchRunner, regate
from core.evaluation import metrics as M
from core.evaluation.calibration import switched_on_reading
from core.evaluation.importers import Dataset, LabelledItem
from tests.conftest import ROOT
from tests.test_eval_runner import FakeKB, FakePipeline

EVALUATE = str(ROOT / "app" / "pages" / "3_Evaluate.py")
DOC = ("a", "Winter Fuel Payment", "You can get it if you were born before 1955.")


def labelled_items(n: int = 36) -> tuple[LabelledItem, ...]:
    """Questions whose fake signals (see FakePipeline) separate the actions only partly."""
    rng = np.random.default_rng(1)
    out = []
    for k in range(n):
        gold = ("ANSWER", "ASK", "ABSTAIN")[k % 3]
        noisy = rng.random() < 0.25
        question = {"ANSWER": "Can I get Winter Fuel Payment this year?", "ASK": "Can I get it?",
                    "ABSTAIN": "How do I renew my passport?"}[gold if not noisy else "ANSWER"]
        scenario = "I was born in 1950." if gold == "ANSWER" or rng.random() < 0.2 else ""
        out.append(LabelledItem(f"q{k}", question, gold, scenario=scenario, documents=(DOC,)))
    return tuple(out)


@pytest.fixture
def fake_run(tmp_path):
    FakePipeline.calls = 0
    items = labelled_items()
    dataset = Dataset(items=items, format="sharc", path=str(tmp_path / "fake.json"), setting="reading",
                      all_documents=(DOC,), total=len(items))
    runner = BatchRunner(None, tmp_path / "cache", show_bar=False, open_kb=lambda f, v: FakeKB(Path(f)),
                         make_workbench=FakePipeline)
    run = runner.run(dataset)
    FakePipeline.calls = 0
    return run


def page_with(run) -> AppTest:
    at = AppTest.from_file(EVALUATE, default_timeout=60)
    at.session_state["aw_eval_run"] = {"id": "fake", "run": run}
    return at.run()


def metric(at: AppTest, label: str) -> float:
    return float(next(m.value for m in at.metric if m.label == label))


def test_figures_come_from_the_cached_traces_and_a_slider_regates_them(fake_run):
    at = page_with(fake_run)
    assert not at.exception and not at.error
    expected = M.action_metrics(fake_run.gold, regate(fake_run.table, {}).codes)
    assert metric(at, "Macro-F1") == pytest.approx(expected["macro_f1"], abs=5e-4)
    assert metric(at, "Hallucination") == pytest.approx(expected["hallucination_rate"], abs=5e-4)
    assert {"Overview", "Rule vs learned gate", "Sweeps", "Calibrate", "Items", "Signal strength"} <= {
        t.label for t in at.tabs}
    confusion = json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]
    assert sum(int(t.split("<br>")[0]) for row in confusion["text"] for t in row) == len(fake_run.traces)

    at.sidebar.slider(key="aw_set_incompleteness_max").set_value(0.6).run()  # no-scenario items stop asking
    moved = M.action_metrics(fake_run.gold, regate(fake_run.table, {"incompleteness_max": 0.6}).codes)
    assert moved["macro_f1"] != expected["macro_f1"], "the fake signals make incompleteness matter"
    assert metric(at, "Macro-F1") == pytest.approx(moved["macro_f1"], abs=5e-4)
    assert FakePipeline.calls == 0, "moving a gate slider analyses nothing"


def test_learned_gate_is_compared_out_of_fold_and_can_be_saved_for_inspect(fake_run, tmp_path, monkeypatch):
    monkeypatch.setattr(wiring, "ROOT", tmp_path)  # the saved gate goes to tmp_path/gates
    at = page_with(fake_run)
    shown = " ".join(m.value for m in at.markdown)
    assert "**Learned gate (out-of-fold)** · macro-F1" in shown and "**Rule gate (sidebar settings)**" in shown
    assert at.session_state["aw_eval_learned"]["codes"].shape == (len(fake_run.traces),)
    at.radio(key="aw_eval_structure").set_value("two-stage").run()
    assert at.session_state["aw_eval_learned"]["id"][-1] == "two-stage", "the structure refits the comparison"
    at.button(key="aw_eval_save_gate").click().run()
    saved = tmp_path / "gates" / "fake-sharc.json"
    assert saved.is_file() and json.loads(saved.read_text())["kind"] == "answerability-workbench-learned-gate"
    assert json.loads(saved.read_text())["structure"] == "two-stage"
    at.button(key="aw_eval_use_gate").click().run()
    assert at.sidebar.selectbox(key="aw_set_gate_model").value == "learned"
    assert at.sidebar.text_input(key="aw_set_learned_gate_file").value == wiring.display_path(saved)
    assert not at.exception


def test_a_run_of_one_gold_action_says_so(fake_run):
    """A browser walkthrough: the first 8 items of a set were all gold ANSWER; recall was blank and the learned gate
    could not be fitted, with nothing saying why."""
    answer = [i for i, item in enumerate(fake_run.items) if item.action == "ANSWER"]
    one_kind = dataclasses.replace(fake_run, items=tuple(fake_run.items[i] for i in answer),
                                   traces=tuple(fake_run.traces[i] for i in answer))
    at = page_with(one_kind)
    assert not at.exception
    assert any(w.value.startswith("Every item of this run is gold ANSWER") for w in at.warning)
    assert not any("Every item of this run" in w.value for w in page_with(fake_run).warning)


def test_sweeps_mark_the_current_setting(fake_run):
    at = page_with(fake_run)
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    line = next(s for s in specs if any(t.get("mode") == "lines" and t.get("name") == "Macro-F1" for t in s["data"]))
    assert any(shape.get("line", {}).get("dash") == "dash" for shape in line["layout"]["shapes"])
    heat = next(s for s in specs if s["data"][0]["type"] == "heatmap" and s["data"][-1].get("name") == "current")
    assert heat["data"][-1]["x"] == [settings.BY_NAME["fact_min"].default] and len(heat["data"][0]["x"]) == 26


def test_a_sweep_opens_on_a_threshold_a_switched_on_rule_reads_and_says_why_another_is_flat(fake_run):
    at = page_with(fake_run)
    opened = at.selectbox(key="aw_eval_sweep").value
    assert switched_on_reading(opened, settings.defaults()), "the sweep opens on a threshold that moves verdicts"
    assert not any("changes no verdict" in i.value for i in at.info)
    at.selectbox(key="aw_eval_sweep").set_value("evidence_coverage_min").run()  # read by uncovered_topics, off
    assert not settings.defaults()["rule_uncovered_topics"]
    note = next(i.value for i in at.info if "changes no verdict" in i.value)
    assert "`uncovered_topics`" in note
    at.sidebar.toggle(key="aw_set_rule_uncovered_topics").set_value(True).run()
    assert not any("changes no verdict" in i.value for i in at.info), "switched on, the threshold moves verdicts"
    assert not at.exception


def test_suggested_thresholds_apply_to_the_sliders(fake_run):
    at = page_with(fake_run)
    at.sidebar.slider(key="aw_set_incompleteness_max").set_value(0.9).run()  # ASK items are no longer asked
    at.multiselect(key="aw_eval_params").set_value(["incompleteness_max", "sufficiency_min"]).run()
    at.button(key="aw_eval_suggest").click().run()
    assert not at.exception and not at.error
    found = at.session_state["aw_eval_suggestion"]["suggestion"]
    assert found.changed["incompleteness_max"] < 0.5, "the search finds that asking pays on these items"
    at.button(key="aw_eval_apply").click().run()
    for name, value in found.changed.items():
        assert at.sidebar.slider(key=f"aw_set_{name}").value == pytest.approx(value)
    assert metric(at, "Macro-F1") == pytest.approx(found.in_sample["macro_f1"], abs=5e-4)


def test_a_suggestion_under_a_hallucination_ceiling_says_where_it_breaks_it(fake_run):
    at = page_with(fake_run)
    at.selectbox(key="aw_eval_objective").set_value("coverage").run()
    at.slider(key="aw_eval_ceiling").set_value(0.0).run()
    at.multiselect(key="aw_eval_params").set_value(["incompleteness_max", "sufficiency_min"]).run()
    at.button(key="aw_eval_suggest").click().run()
    assert not at.exception and not at.error
    found = at.session_state["aw_eval_suggestion"]["suggestion"]
    inside, outside = found.in_sample["hallucination_rate"], found.out_of_fold["hallucination_rate"]
    assert outside > 0.0, "the fake signals answer some noisy items out of fold whatever the thresholds"
    warned = " ".join(w.value for w in at.warning)
    assert ("No configuration" in warned) == (inside > 0.0)
    assert ("not out of fold" in warned) == (inside == 0.0)
    assert f"{outside:.1%}" in warned


def test_items_filtered_to_nothing_say_so(fake_run):
    """Browser walkthrough: an empty filter showed a blank grid with no columns."""
    at = page_with(fake_run)
    at.text_input(key="aw_eval_f_text").input("no such question anywhere").run()
    assert any(i.value == "No item matches these filters." for i in at.info) and not at.exception
    at.text_input(key="aw_eval_f_text").input("").run()
    assert not any(i.value == "No item matches these filters." for i in at.info)


def test_an_item_opens_on_inspect_with_its_scenario_and_kb(fake_run, tmp_path, monkeypatch):
    monkeypatch.setenv("AW_ALLOWED_ROOTS", str(tmp_path))  # the fake run's KBs live under tmp_path
    at = page_with(fake_run)
    item = next(i for i in fake_run.items if i.scenario)
    at.session_state["aw_eval_open"] = item.id  # what the row's "Open on Inspect" button sets
    at.run()
    assert at.session_state[wiring.QUESTION_KEY] == item.question
    assert at.session_state[wiring.SCENARIO_KEY] == item.scenario
    assert at.session_state[wiring.ANALYSE_NOW_KEY] is True
    trace = fake_run.traces[fake_run.items.index(item)]
    assert wiring.resolve_folder(at.session_state[wiring.KB_KEY]) == Path(trace.kb).resolve()


def test_item_filters():
    rows = [{"id": "a", "gold": "ASK", "action": "ANSWER", "correct": False, "question": "Can I?"},
            {"id": "b", "gold": "ABSTAIN", "action": "ANSWER", "correct": False, "question": "Who?"},
            {"id": "c", "gold": "ABSTAIN", "action": "ABSTAIN", "correct": True, "question": "Where?"}]
    assert [r["id"] for r in ev.filter_rows(rows, gold=["ABSTAIN"], predicted=["ANSWER"])] == ["b"]
    assert [r["id"] for r in ev.filter_rows(rows, only_mistakes=True)] == ["a", "b"]
    assert [r["id"] for r in ev.filter_rows(rows, text="wher")] == ["c"]
    assert len(ev.filter_rows(rows)) == 3


def test_a_malformed_or_missing_file_says_what_is_wrong(tmp_path, monkeypatch):
    monkeypatch.setenv("AW_ALLOWED_ROOTS", str(tmp_path))
    bad = tmp_path / "broken.json"
    bad.write_text('[{"utterance_id": "u1", "snippet": "x"')
    at = AppTest.from_file(EVALUATE, default_timeout=60).run()
    assert "press **Analyse**" in at.info[0].value
    at.selectbox(key="aw_eval_source").set_value("A file on this machine").run()
    at.selectbox(key="aw_eval_format").set_value("sharc").run()
    at.text_input(key="aw_eval_path").input(str(bad)).run()
    at.button(key="aw_eval_go").click().run()
    assert at.error and "broken.json" in at.error[0].value and "aw_eval_run" not in at.session_state
    at.text_input(key="aw_eval_path").input(str(tmp_path / "absent.json")).run()
    at.button(key="aw_eval_go").click().run()
    assert "no such file" in at.error[0].value and not at.exception


def test_a_file_outside_the_allowed_roots_is_not_read(tmp_path, monkeypatch):
    """Issue 13 item 6: "a file on this machine" read any path the browser typed."""
    monkeypatch.delenv("AW_ALLOWED_ROOTS", raising=False)
    secret = tmp_path / "secret.json"
    secret.write_text("[]")
    at = AppTest.from_file(EVALUATE, default_timeout=60).run()
    at.selectbox(key="aw_eval_source").set_value("A file on this machine").run()
    for typed in (str(secret), "/etc/passwd", "../../etc/passwd"):
        at.text_input(key="aw_eval_path").input(typed).run()
        assert "outside the folders this server may use" in at.error[0].value and "AW_ALLOWED_ROOTS" in \
            at.error[0].value
        assert at.button(key="aw_eval_go").disabled, "nothing to analyse"
    monkeypatch.setenv("AW_ALLOWED_ROOTS", str(tmp_path))
    at.text_input(key="aw_eval_path").input(str(secret) + " ").run()
    assert not at.error and not at.button(key="aw_eval_go").disabled, "an allowed root opens"


def test_the_open_tab_stays_open_after_suggesting_thresholds_and_filtering_items(fake_run):
    """Issue 13 item 5: "Suggest thresholds" and the Items filter threw the user back to Overview."""
    at = page_with(fake_run)
    at.session_state["aw_eval_tab"] = "Calibrate"
    at.run()
    at.multiselect(key="aw_eval_params").set_value(["incompleteness_max"]).run()
    at.button(key="aw_eval_suggest").click().run()
    assert at.session_state["aw_eval_tab"] == "Calibrate" and at.session_state["aw_eval_suggestion"]
    at.session_state["aw_eval_tab"] = "Items"
    at.run()
    at.multiselect(key="aw_eval_f_gold").set_value(["ASK"]).run()
    at.toggle(key="aw_eval_f_wrong").set_value(True).run()
    assert at.session_state["aw_eval_tab"] == "Items" and not at.exception


def test_apply_says_when_the_suggestion_scores_worse_than_the_current_sliders(fake_run):
    at = page_with(fake_run)
    at.multiselect(key="aw_eval_params").set_value(["incompleteness_max", "sufficiency_min"]).run()
    at.button(key="aw_eval_suggest").click().run()
    stored = at.session_state["aw_eval_suggestion"]
    goal, found = stored["goal"], stored["suggestion"]
    suggested = goal.score(np.asarray(found.out_of_fold["confusion"]["matrix"]))
    # Move the sliders to the suggestion's own in-sample optimum: the out-of-fold figure cannot beat it.
    for name, value in found.changed.items():
        at.sidebar.slider(key=f"aw_set_{name}").set_value(value).run()
    current = goal.score(np.asarray(M.action_metrics(fake_run.gold, regate(
        fake_run.table, at.session_state["aw_values"]).codes)["confusion"]["matrix"]))
    apply = at.button(key="aw_eval_apply")
    if suggested < current:
        assert apply.label == "Apply to the sliders (they score worse)"
        assert any("score worse than the sliders' current ones" in w.value and f"{current:.3f}" in w.value
                   for w in at.warning)
    else:
        assert apply.label == "Apply to the sliders" and not any("score worse" in w.value for w in at.warning)
    assert suggested <= current + 1e-9, "in-sample best is at least the out-of-fold estimate here"


def test_the_heatmap_prints_tick_values_and_keeps_its_titles_clear():
    grid = {"metric": "macro_f1", "x": "amb_max", "y": "sufficiency_min", "x_values": [i / 25 for i in range(26)],
            "y_values": [i / 25 for i in range(26)], "z": [[0.5] * 26 for _ in range(26)], "current": (0.24, 0.19)}
    fig = ev.heatmap_figure(grid)
    for axis in (fig.layout.xaxis, fig.layout.yaxis):
        assert axis.automargin and axis.showticklabels and len(axis.tickvals) >= 5
        assert list(axis.ticktext)[:2] == ["0.00", "0.20"] and axis.title.standoff > 0


def test_the_time_estimate_comes_from_the_measured_rate(tmp_path):
    rate = tmp_path / "rate.json"
    assert ev.measured_rate(rate) is None and ev.duration_text(72, None).startswith("No analysis has been timed")
    ev.record_rate(rate, items=12, seconds=60.0)  # 5 s per item
    assert ev.measured_rate(rate) == pytest.approx(5.0)
    assert ev.duration_text(72, 5.0).startswith("Analysing them the first time takes about 6 minutes (5.0 s per item")
    ev.record_rate(rate, items=0, seconds=3.0)  # a run served from the cache measures nothing
    assert ev.measured_rate(rate) == pytest.approx(5.0)


def test_real_run_on_sample_questions(nli_model, tmp_path, monkeypatch):
    """Six sample questions through the real pipeline: analysed with progress, scored, cached."""
    import core.evaluation.runner as runner_mod
    monkeypatch.setattr(runner_mod, "DEFAULT_CACHE", tmp_path / "cache")
    at = AppTest.from_file(EVALUATE, default_timeout=600).run()
    at.number_input(key="aw_eval_limit").set_value(6).run()
    at.number_input(key="aw_eval_seed").set_value(3).run()
    at.button(key="aw_eval_go").click().run()
    assert not at.exception and not at.error
    run = at.session_state["aw_eval_run"]["run"]
    assert len(run.traces) == 6 and run.analysed == 6
    assert all(t.passages for t in run.traces), "the sample KB answers its own questions with passages"
    assert 0.0 <= metric(at, "Accuracy") <= 1.0
    at.button(key="aw_eval_go").click().run()  # the second run reads every trace from the cache
    assert at.session_state["aw_eval_run"]["run"].cached == 6


def test_transfer_rows_show_intervals_as_ranges_and_undefined_figures_as_a_dash():
    shown = ev.transfer_rows([{"configuration": "defaults", "set": "ShARC half A", "n": 1003, "groups": 25,
                               "macro_f1": 0.7791, "auroc_answer_vs_ask": None,
                               "macro_f1_interval": (0.7412, 0.8123), "auroc_answer_vs_ask_interval": None}])
    assert shown == [{"configuration": "defaults", "set": "ShARC half A", "n": 1003, "groups": 25,
                      "macro_f1": "0.779", "auroc_answer_vs_ask": "—",
                      "macro_f1_interval": "0.741–0.812", "auroc_answer_vs_ask_interval": "—"}]


def test_the_knowledge_base_field_says_which_kb_a_set_is_asked_of():
    """A browser walkthrough: for the sample questions the field was a greyed-out "reading", which says nothing of
    the knowledge base a question file is asked of."""
    at = AppTest.from_file(EVALUATE, default_timeout=60).run()
    at.selectbox(key="aw_eval_source").set_value("Sample KB questions").run()
    shown = at.text_input(key="aw_eval_setting_jsonl")
    assert shown.value == "the one chosen on Inspect" and shown.disabled
    at.selectbox(key="aw_eval_source").set_value("A file on this machine").run()
    at.selectbox(key="aw_eval_format").set_value("sharc").run()
    at.text_input(key="aw_eval_path").input("sample_kb/questions.jsonl").run()  # any allowed file: the form asks on
    assert at.selectbox(key="aw_eval_setting").value == "reading"
    assert at.selectbox(key="aw_eval_setting").options == ["each item's own documents", "all the file's documents as one"]


def test_a_signal_at_chance_leans_no_way():
    """A browser walkthrough: the Signal strength tab read "0.500 (lower on ASK)"."""
    rows = ev.signal_rows([{"signal": "p_fact", "ANSWER_vs_ASK": 0.5, "ANSWER_vs_ABSTAIN": 0.2}])
    assert rows[0]["ANSWER vs ASK"] == "0.500 (no difference)"
    assert rows[0]["ANSWER vs ABSTAIN"] == "0.200 (lower on ABSTAIN)"
