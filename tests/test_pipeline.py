"""The whole pipeline with the real models on the sample knowledge base."""
import json
import subprocess
import sys

import pytest

from core import models, settings
from core.gate import decide
from core.gate.rules import TOPIC_ABSENT_RULES
from core.kb import KnowledgeBase, KnowledgeBaseError
from core.pipeline import InputError, Pipeline, make_query
from core.types import ACTIONS, Query, Trace, from_dict, to_dict
from tests.conftest import ROOT


def macro_f1(gold, pred):
    scores = []
    for a in ACTIONS:
        tp = sum(g == a == p for g, p in zip(gold, pred))
        prec = tp / max(1, sum(p == a for p in pred))
        rec = tp / max(1, sum(g == a for g in gold))
        scores.append(2 * prec * rec / (prec + rec) if prec + rec else 0.0)
    return sum(scores) / len(scores)


def test_gold_document_is_retrieved_for_answer_questions(sample_traces, sample_questions):
    items = [q for q in sample_questions if q["action"] == "ANSWER" and q["doc_id"]]
    hits = [any(p.passage.doc_id == q["doc_id"] for p in sample_traces[q["id"]].passages[:5]) for q in items]
    assert sum(hits) / len(hits) >= 0.90, [q["id"] for q, h in zip(items, hits) if not h]


def test_gate_macro_f1_on_sample_questions(sample_traces, sample_questions):
    gold = [q["action"] for q in sample_questions]
    pred = [decide(sample_traces[q["id"]]).action for q in sample_questions]
    assert macro_f1(gold, pred) >= 0.70


def test_topic_absent_question_abstains(sample_pipeline):
    trace = sample_pipeline.analyze(make_query("Who won the 1998 world chess championship in Buenos Aires?"))
    d = decide(trace)
    assert d.action == "ABSTAIN" and d.rule in TOPIC_ABSENT_RULES | {"uncovered_topics"}


def test_quantity_in_scenario_fails_the_rule(sample_pipeline):
    trace = sample_pipeline.analyze(make_query(
        "Will I get statutory redundancy pay?",
        "I've been an employee at the paper mill for fourteen months, and last week they made me redundant."))
    service = [c for c in trace.variables.conditions if "2 years" in c.text]
    assert service and service[0].status == "contradicted" and service[0].method.startswith("numeric")
    d = decide(trace)
    assert (d.action, d.answer_polarity) == ("ANSWER", "no")


@pytest.mark.parametrize("question", ["im 62, can i get the winter fuel payment",
                                      "I'm 62 - can I get the Winter Fuel Payment?"])
def test_an_age_typed_before_the_question_decides_the_rule(sample_pipeline, question):
    """A casual-phrasing smoke check (read, never fitted): the whole input had been one statement, so no
    condition was read and a "which one do you mean: 62?" clarification came back instead of "no"."""
    trace = sample_pipeline.analyze(make_query(question))
    assert trace.claim.schema == "polar"
    age = [c for c in trace.variables.conditions if "1953" in c.text or "66" in c.text]
    assert age and age[0].status == "contradicted" and age[0].method.startswith("numeric"), trace.variables.conditions
    d = decide(trace)
    assert (d.action, d.answer_polarity) == ("ANSWER", "no")


def test_a_childs_age_decides_a_rule_asked_for_her_by_a_pronoun(sample_pipeline):
    """A helper's fresh sample-KB question (read, never fitted): "her" is the daughter the user named, so
    the permit's unnamed "aged 3 or over" is her age, 2; it had been left open as the user's own."""
    trace = sample_pipeline.analyze(make_query(
        "my daughter is 2 and she's registered blind, can we get her a blue badge for the car?"))
    age = [c for c in trace.variables.conditions if "aged 3" in c.text]
    assert age and age[0].status == "contradicted" and "2 years" in age[0].method, trace.variables.conditions
    d = decide(trace)
    assert (d.action, d.answer_polarity) == ("ANSWER", "no")


def test_a_question_that_settles_every_condition_is_answered_yes(sample_pipeline):
    """A helper's fresh sample-KB question (read, never fitted): both conditions established on the user's
    word, and P(condition open), fitted on ShARC's first turns, still asked "Do you have your main home in
    Calvera?"."""
    trace = sample_pipeline.analyze(make_query("I turned 67 last month and my main home has always been here in "
                                               "Calvera. Am I entitled to the free bus pass for older people?"))
    assert [c.status for c in trace.variables.conditions] == ["established", "established"]
    assert trace.signals.conditions_met == 1
    d = decide(trace)
    assert (d.action, d.rule, d.answer_polarity) == ("ANSWER", "conditions_met", "yes")


def test_a_town_the_knowledge_base_places_in_its_country_meets_a_residence_condition(sample_pipeline):
    """The sample KB says where Tessby lies ("a fishing town on the east coast of the Republic of Calvera"); the
    pipeline hands that to the condition reader, so living in Tessby is a main home in Calvera."""
    trace = sample_pipeline.analyze(make_query("Can I get the free bus pass for older people?",
                                               "I'm 70 and I've lived in Tessby all my life."))
    home = next(c for c in trace.variables.conditions if "main home in Calvera" in c.text)
    assert (home.status, home.method) == ("established", "place: Tessby lies in Calvera, the knowledge base says")


def test_gate_threshold_change_costs_no_model_call(sample_pipeline, sample_questions):
    q = sample_questions[0]
    query = make_query(q["question"], q["scenario"], q["history"])
    trace = sample_pipeline.analyze(query)
    before = dict(models.CALLS)
    again = sample_pipeline.analyze(query, {"amb_max": 0.9, "conf_min": 0.1, "rule_low_sufficiency": False})
    for amb in (0.0, 0.3, 0.6, 0.9):
        decide(again, {"amb_max": amb})
    assert models.CALLS == before
    assert again.signals == trace.signals and all(v == 0.0 for k, v in again.timings.items() if k != "signals")


def test_retrieval_setting_reruns_retrieval_but_not_the_claim(sample_pipeline):
    query = make_query("Who designed the Harlow Bridge?")
    sample_pipeline.analyze(query)
    trace = sample_pipeline.analyze(query, {"top_k": 3})
    assert len(trace.passages) == 3
    assert trace.timings["retrieval"] > 0 and trace.timings["claim"] == 0.0


def test_trace_round_trips_through_json(sample_traces):
    trace = next(iter(sample_traces.values()))
    assert from_dict(Trace, json.loads(json.dumps(to_dict(trace)))) == trace


def test_a_question_pasted_as_html_is_read_as_its_text(sample_pipeline):
    """Browser walkthrough: "<p>When did the <b>Harlow Bridge</b> open?</p>" became a claim with its tags in it."""
    query = make_query("<p>When did the <b>Harlow Bridge</b> open?</p><script>alert(1)</script>",
                       "I live in Tessby &amp; work in Harlow.<br>", [("<i>Are you 66?</i>", "No")])
    assert query.question == "When did the Harlow Bridge open?"
    assert query.scenario == "I live in Tessby & work in Harlow." and query.history == (("Are you 66?", "No"),)
    trace = sample_pipeline.analyze(query)
    assert "<" not in trace.claim.text and trace.claim.answer_type == "DATE"
    assert trace.answer is not None and "1958" in trace.answer.value
    # what is no tag stays: a comparison typed with angle brackets, an ampersand in a name
    assert make_query("Is income < £12,000 and age > 66 enough?").question == "Is income < £12,000 and age > 66 enough?"
    assert make_query("Does AT&T pay & deliver?").question == "Does AT&T pay & deliver?"


@pytest.mark.parametrize("question, message", [
    ("   ", "empty"),
    ("<p> </p>", "empty"),
    ("x" * 100_000, "limit"),
])
def test_bad_questions_get_a_clear_message(question, message):
    with pytest.raises(InputError, match=message):
        make_query(question)


def test_missing_and_empty_kb_folders(tmp_path):
    with pytest.raises(KnowledgeBaseError):
        KnowledgeBase.open(tmp_path / "nope", settings.defaults())
    (tmp_path / "empty").mkdir()
    with pytest.raises(KnowledgeBaseError):
        KnowledgeBase.open(tmp_path / "empty", settings.defaults())


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)


def test_cli_reports_bad_input_without_a_traceback(tmp_path):
    for args in (["ask", "  "], ["ask", "x" * 5000], ["ask", "hi?", "--kb", str(tmp_path / "none")],
                 ["ask", "hi?", "--set", "amb_max=7"], ["ask", "hi?", "--set", "nope=1"]):
        result = run_cli(*args)
        assert result.returncode == 2, args
        assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr, result.stderr


def test_cli_ask_prints_trace_and_json(sample_kb, nli_model):
    result = run_cli("ask", "Who designed the Harlow Bridge?", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["decision"]["action"] in ACTIONS
    assert data["trace"]["passages"][0]["passage"]["doc_id"].startswith("encyclopedia/")
    text = run_cli("ask", "Who designed the Harlow Bridge?").stdout
    assert "GATE (priority order)" in text and "ACTION" in text


def test_every_analysis_setting_is_read_by_a_declared_stage():
    """A setting no stage declares would change a trace without changing any cache key (stale results)."""
    from core.pipeline import STAGES, SOURCES
    read = {name for stage in STAGES for name in stage.settings}
    chosen_by_sources = {"stepback", "llm_claim", "abduction", "premise_generation", "generator", "generator_timeout"}
    analysis = {s.name for s in settings.SETTINGS if s.stage not in ("gate", "index")}
    assert analysis - read - chosen_by_sources == set()
    assert all(i in SOURCES or i in [s.name for s in STAGES[:k]] for k, stage in enumerate(STAGES) for i in stage.inputs)


def test_a_stage_runs_with_exactly_its_declared_inputs_and_settings():
    from core.pipeline import Stage, StageRunner
    seen = []
    runner = StageRunner([Stage("a", ("question",), ("top_k",), lambda question, settings: seen.append(
                              (question, settings)) or len(question)),
                          Stage("b", ("a",), (), lambda a, settings: a * 2)])
    values = settings.defaults()
    results, timings = runner.run({"question": ("Who?", "Who?")}, values)
    assert results["b"] == 8 and seen == [("Who?", {"top_k": values["top_k"]})]
    again, timings = runner.run({"question": ("Who?", "Who?")}, {**values, "amb_max": 0.1})
    assert timings == {"a": 0.0, "b": 0.0} and len(seen) == 1, "a setting no stage reads re-runs nothing"
    runner.run({"question": ("Who?", "Who?")}, {**values, "top_k": values["top_k"] + 1})
    assert len(seen) == 2
    with pytest.raises(ValueError, match="reads"):
        StageRunner([Stage("c", ("nothing",), (), lambda nothing, settings: 0)])


def test_an_off_topic_documents_conditions_are_never_asked(sample_pipeline):
    """Issue 15: "Can my landlord evict me?" retrieves the Home Insulation Grant (its rules mention
    landlords), whose home-ownership condition has nothing to do with eviction."""
    from core.agents import AskAgent
    trace = sample_pipeline.analyze(make_query("Can my landlord evict me?", "I rent a flat in Harlow."))
    assert not any("own your home" in c.text for c in trace.variables.conditions)
    decision = decide(trace)
    # P(condition open) 0.43 with no condition read: on ShARC train such a personal yes/no question is
    # asked about as often as it is answered, so the default gate (open_max 0.27) asks; what it asks is
    # which document is meant, never a condition of the grant
    assert decision.action != "ANSWER"
    if decision.action == "ASK":
        asked = AskAgent().run(trace, decision).text
        assert "own" not in asked.lower().split() and "Home Insulation Grant" in asked


@pytest.mark.parametrize("question", ["Who designed the Harlow Bridge?", "who designed the harlow bridge?"])
def test_a_question_typed_in_lower_case_gets_the_answer_the_cased_one_gets(sample_pipeline, question):
    """Browser walkthrough: typed without capitals it named nothing, and was answered "Calvera"."""
    trace = sample_pipeline.analyze(make_query(question))
    assert trace.answer is not None and trace.answer.value == "Edith Marlowe", trace.answer


def test_the_answer_is_the_opening_date_not_the_construction_start(sample_pipeline):
    from core.agents import AnswerAgent
    from core.types import Decision
    trace = sample_pipeline.analyze(make_query("When did the Harlow Bridge open to traffic?"))
    assert trace.signals.answer_type_found == 1.0
    response = AnswerAgent(mode="extractive").run(trace, Decision("ANSWER", "default_answer", "", ()))
    # the bridge's own page ("opened on 14 May 1958") or its designer's ("the Harlow Bridge, which opened in
    # 1958"): the opening, never the start of construction (April 1954) the first sentence also holds
    assert response.answer in ("14 May 1958", "1958") and "1954" not in response.answer
    assert "opened" in response.citations[0].sentence and response.answer in response.citations[0].sentence


@pytest.mark.parametrize("question", ["How many robots does Orrin Robotics make?",
                                      "What is the population of Tessby?",
                                      "How much is a ticket to the Brightwater Festival?"])
def test_no_number_of_the_asked_kind_is_no_answer_type_found(sample_pipeline, question):
    assert sample_pipeline.analyze(make_query(question)).signals.answer_type_found == 0.0


def test_a_procedure_is_answered_by_the_sentence_that_says_how_and_not_where_none_does(sample_pipeline):
    from core.agents import AnswerAgent
    from core.types import Decision
    trace = sample_pipeline.analyze(make_query("How do I apply for Carer's Allowance?"))
    assert trace.claim.answer_type == "PROCEDURE" and trace.signals.answer_type_found == 1.0
    response = AnswerAgent(mode="extractive").run(trace, Decision("ANSWER", "default_answer", "", ()))
    assert response.answer.startswith("Apply online") and "form CA1" in response.answer
    # the knowledge base covers the thing asked about, or something like it, and never says how
    for question in ("How do I renew my passport?", "How do I apply for Jobseeker's Allowance?"):
        assert sample_pipeline.analyze(make_query(question)).signals.answer_type_found == 0.0, question


def test_a_yes_no_question_asked_with_circumstances_told_is_about_the_asker():
    """ShARC train: "Is this child a dependent child?" after "My spouse died 7 October 2002." turns on
    what the user told, though it says neither "I" nor "my"; a factual question does not."""
    from core.pipeline import _about_the_asker
    from core.types import Claim
    polar = Claim("This child is a dependent child.", "polar")
    assert not _about_the_asker(make_query("Is this child a dependent child?"), polar)
    assert _about_the_asker(make_query("Is this child a dependent child?", "My spouse died 7 October 2002."), polar)
    assert _about_the_asker(make_query("Is this child a dependent child?", "", [("Is the child unmarried?", "Yes")]),
                            polar)
    assert not _about_the_asker(make_query("When was the bridge opened?", "I'm 70."),
                                Claim("The bridge was opened on some date.", "existential"))


def test_documents_of_the_kind_a_question_names_count_as_referents_beyond_the_top_k(tmp_path, nli_model):
    """Three agreements in the knowledge base; the top five passages all come from the one that speaks of
    returning documents, yet "the agreement" does not say which is meant: the clarification lists all three.
    A question that names the agreement's subject ("the cyber mutual assistance agreement") brings in
    none."""
    from tests.conftest import build_small_kb
    clauses = " ".join(f"Clause {n}. The recipient shall keep the information secret for a period of {n} years."
                       for n in range(1, 9))
    docs = {f"{name}.md": f"# {title}\n\n{clauses}\n\n{extra}" for name, title, extra in (
        ("nda_1", "Non-disclosure agreement 1", "When the agreement ends, give every confidential document back "
         "to the Discloser within ten days. The Discloser may ask for the documents back at any time."),
        ("nda_2", "Non-disclosure agreement 2", "This is the cyber mutual assistance agreement between the parties."),
        ("nda_3", "Non-disclosure agreement 3", "The agreement is governed by the laws of Ireland."))}
    pipeline = Pipeline(build_small_kb(tmp_path / "ndas", docs))
    question = "Who do I give the confidential documents back to when the agreement's over?"
    values = {"top_k": 1}
    trace = pipeline.analyze(question, values)
    assert {p.passage.doc_id for p in trace.passages} == {"nda_1"}
    assert trace.rivals == ("Non-disclosure agreement 2", "Non-disclosure agreement 3")
    assert trace.signals.n_referents == 3
    assert decide(trace).rule == "several_referents"
    from core.agents import AskAgent
    asked = AskAgent().run(trace, decide(trace)).text
    assert all(f"Non-disclosure agreement {n}" in asked for n in (1, 2, 3))
    named = pipeline.analyze("When the cyber mutual assistance agreement ends, can we keep a copy?", values)
    assert named.rivals == () and named.signals.n_referents == 1
    assert from_dict(Trace, json.loads(json.dumps(to_dict(trace)))).rivals == trace.rivals


def test_a_thing_two_documents_each_say_all_of_is_asked_about_before_the_topic_rules_refuse(tmp_path, nli_model):
    """"When was the ship launched?" names nothing and matches no document well; a shipyard's article and a
    liner's each say what the question says of "the ship": the gate asks which is meant, listing both,
    where the topic and score-gap rules had refused (sample KB blind set, session 21)."""
    from tests.conftest import build_small_kb
    from core.agents import AskAgent
    docs = {"yard.md": "# Corran Shipyards\n\nCorran Shipyards was a shipbuilding company in Tessby. The yard built "
                       "fishing boats and cargo ships, and in 1931 it launched the passenger liner Meridian Star.",
            "liner.md": "# SS Meridian Star\n\nThe SS Meridian Star was a passenger liner. She was launched on 3 March "
                        "1931. The ship was 164 metres long.",
            "town.md": "# Harlow\n\nHarlow is a market town in central Calvera on the River Ost."}
    trace = Pipeline(build_small_kb(tmp_path / "ships", docs)).analyze("When was the ship launched?")
    assert trace.signals.n_described == 2
    decision = decide(trace)
    assert (decision.action, decision.rule) == ("ASK", "described_referents")
    asked = AskAgent().run(trace, decision).text
    assert "Corran Shipyards" in asked and "SS Meridian Star" in asked and "Harlow" not in asked


def test_a_question_about_a_name_the_knowledge_base_never_mentions_is_refused(tmp_path, nli_model):
    """SQuAD 2.0's entity swap: "Twilight Kondo" joins the game's name and its composer's, both in the
    article; the article says who wrote the music for Twilight Princess and nothing of Twilight Kondo."""
    from tests.conftest import build_small_kb
    from core.agents import respond
    docs = {"zelda.md": "# Twilight Princess\n\nThe Legend of Zelda: Twilight Princess is an action-adventure game "
                        "released by Nintendo in 2006. Its music was written by Toru Minegishi and Asuka Ohta, "
                        "and Koji Kondo, the series' composer, served as sound supervisor."}
    pipeline = Pipeline(build_small_kb(tmp_path / "zelda", docs))
    swapped = pipeline.analyze("Who wrote the music for Twilight Kondo?")
    assert swapped.signals.n_unknown_names == 1
    decision = decide(swapped)
    assert (decision.action, decision.rule) == ("ABSTAIN", "unknown_name")
    refusal = respond(swapped, decision)
    assert refusal.kind == "fact_absent" and "Twilight Kondo" in refusal.text
    real = pipeline.analyze("Who wrote the music for Twilight Princess?")
    assert real.signals.n_unknown_names == 0 and decide(real).rule != "unknown_name"


def test_the_only_documents_rule_is_read_though_it_never_names_what_the_question_asks_for(tmp_path, nli_model):
    """ShARC: a rule excerpt headed "Your age" is the whole knowledge base; "Working Tax Credit" is the
    question's name for it."""
    from tests.conftest import build_small_kb
    rule = {"age.md": "## Your age\n\nYou must be 16 or over to qualify."}
    query = Query("Can I qualify for Working Tax Credit?", scenario="I'm fifteen and I work part time after school.")
    trace = Pipeline(build_small_kb(tmp_path / "one", rule)).analyze(query)
    assert [c.text for c in trace.variables.conditions] == ["You must be 16 or over to qualify"]
    assert trace.variables.outcome == "failed"
    other = {**rule, "grant.md": "# Home Insulation Grant\n\nThe grant pays for loft insulation."}
    trace = Pipeline(build_small_kb(tmp_path / "two", other)).analyze(query)
    assert trace.variables.conditions == ()  # beside another document, nothing says the excerpt is the one asked about


def test_rivals_are_other_documents_of_the_named_kind_each_title_once():
    """Paragraphs of one article share its title and are one thing; the documents retrieved are not rivals."""
    from types import SimpleNamespace

    from core.kb.readers import Document
    from core.pipeline import _rivals
    from core.types import Passage, RetrievedPassage
    docs = [Document(f"squad/film-{n}", "Spectre (2015 film)", "…", "") for n in range(3)] + \
           [Document("squad/other-film", "Skyfall (2012 film)", "…", ""), Document("squad/city", "New York City", "…", "")]
    kb = SimpleNamespace(documents={d.id: d for d in docs})
    top = Passage("squad/film-0#0", "squad/film-0", "Spectre (2015 film)", "…", 0, 1)
    retrieval = ((RetrievedPassage(top, 1, 0.8, 3.0, 1.0, 0.8),), None)
    assert _rivals(kb, "Who composed the score of the film?", retrieval, {}) == ("Skyfall (2012 film)",)
    assert _rivals(kb, "Who composed the score of Spectre?", retrieval, {}) == ()  # a name: retrieval told them apart


def test_rivals_of_an_abbreviation_are_the_documents_whose_titles_spell_it_out():
    """"the NDA" of two sample-KB contracts: the other one, which retrieval left out, is its rival."""
    from types import SimpleNamespace

    from core.kb.readers import Document
    from core.pipeline import _rivals
    from core.types import Passage, RetrievedPassage
    docs = [Document("contracts/brightline", "Mutual Non-Disclosure Agreement", "…", ""),
            Document("contracts/orrin", "Orrin Robotics - Kestrel Non-Disclosure Agreement", "…", ""),
            Document("contracts/lease", "Shop Lease Agreement", "…", "")]
    kb = SimpleNamespace(documents={d.id: d for d in docs})
    top = Passage("contracts/brightline#3", "contracts/brightline", "Mutual Non-Disclosure Agreement",
                  "This Agreement starts on the Effective Date and continues for 2 years.", 0, 1)
    retrieval = ((RetrievedPassage(top, 1, 0.8, 3.0, 1.0, 0.8),), None)
    orrin = ("Orrin Robotics - Kestrel Non-Disclosure Agreement",)
    assert _rivals(kb, "How long does the NDA last?", retrieval, {}) == orrin
    assert _rivals(kb, "how long does the nda last?", retrieval, {}) == orrin


def test_a_question_about_an_unnamed_it_is_asked_about(sample_pipeline):
    trace = sample_pipeline.analyze(make_query("How long did it last?"))
    decision = decide(trace)
    assert trace.signals.ambiguity_heuristics["dangling_pronoun"] == 1.0
    assert (decision.action, decision.rule) == ("ASK", "ambiguity")


def test_the_askers_scenario_picks_the_guide_and_a_scenario_change_reruns_only_from_retrieval(tmp_path, nli_model):
    """"Do I still have to pay National Insurance?" alone is about the general guide; from someone posted
    abroad by their employer it is about the guide for going abroad, whose conditions are then read."""
    from tests.conftest import build_small_kb
    from tests.test_retrieval import NATIONAL_INSURANCE
    pipeline = Pipeline(build_small_kb(tmp_path / "guides", NATIONAL_INSURANCE))
    question = "Do I still have to pay National Insurance?"
    alone = pipeline.analyze(question)
    assert alone.passages[0].passage.doc_id == "national_insurance"
    posted = pipeline.analyze(make_query(question, scenario="My employer is sending me to work in our Berlin "
                                                             "office for two years."))
    assert posted.passages[0].passage.doc_id == "national_insurance_abroad"
    assert posted.timings["retrieval"] > 0 and posted.timings["claim"] == 0.0  # the claim is the question's
    assert any("another country" in c.text for c in posted.variables.conditions)
    by_question = pipeline.analyze(make_query(question, scenario="My employer is sending me to work in our Berlin "
                                                                  "office for two years."), {"scenario_doc_weight": 0.0})
    assert [p.passage.id for p in by_question.passages] == [p.passage.id for p in alone.passages]
