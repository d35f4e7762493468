"""Calibrated signals: the logistic calibrators, the referent count, the shipped calibrators."""
from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from core import calibrated
from core.calibrated import Calibrator, referents
from core.text import tokenize
from core.types import Passage, Query, RetrievedPassage
from tests import factories


def _calibrator(**changes) -> Calibrator:
    base = Calibrator(name="p_fact", question="?", features=("a", "b"), mean=(0.5, 1.0), scale=(0.5, 2.0),
                      coef=(2.0, -1.0), intercept=0.25)
    return replace(base, **changes)


def test_probability_is_the_logistic_of_the_standardised_features():
    c = _calibrator()
    values = {"a": 1.0, "b": 3.0}
    z = 0.25 + 2.0 * (1.0 - 0.5) / 0.5 - 1.0 * (3.0 - 1.0) / 2.0
    assert c.probability(values) == pytest.approx(1 / (1 + math.exp(-z)))
    assert c.contributions(values) == pytest.approx({"a": 2.0, "b": -1.0})


def test_a_calibrator_round_trips_through_json_and_rejects_ragged_arrays():
    c = _calibrator(held_out_auroc={"sharc": 0.8})
    assert Calibrator.from_json(json.loads(json.dumps(c.to_json()))) == c
    broken = c.to_json() | {"coef": [1.0]}
    with pytest.raises(ValueError, match="differ in length"):
        Calibrator.from_json(broken)


def test_a_conditional_calibrator_is_multiplied_by_what_it_is_conditional_on():
    depends = _calibrator(name="p_depends")
    open_given = _calibrator(name="p_open", coef=(-1.0, 0.5), given="p_depends", held_out_auroc={"sharc": 0.77})
    values = {"a": 1.0, "b": 3.0}
    found = calibrated.chained(values, {"p_open": open_given, "p_depends": depends})
    assert found["p_depends"] == pytest.approx(depends.probability(values))
    assert found["p_open"] == pytest.approx(open_given.probability(values) * depends.probability(values))
    assert Calibrator.from_json(json.loads(json.dumps(open_given.to_json()))) == open_given
    # the other side: P(fact) = P(depends) · 1 + (1 − P(depends)) · P(fact | not depends)
    fact_otherwise = _calibrator(name="p_fact", coef=(0.5, 0.5), given="p_depends", given_value=False, otherwise=1.0,
                                   held_out_auroc={"contractnli": 0.8})
    found = calibrated.chained(values, {"p_fact": fact_otherwise, "p_depends": depends})
    d = depends.probability(values)
    assert found["p_fact"] == pytest.approx(d + (1 - d) * fact_otherwise.probability(values))
    assert Calibrator.from_json(json.loads(json.dumps(fact_otherwise.to_json()))) == fact_otherwise


def test_a_calibrator_fitted_within_another_target_gives_the_chance_of_both():
    """P(fact stated) is fitted on questions whose topic is covered: shown and gated, it is P(topic) · P(fact | topic)
    on the side where the answer does not turn on the asker, and 1 (the rule is the fact) on the other."""
    depends, topic = _calibrator(name="p_depends", coef=(-1.0, 0.2)), _calibrator(name="p_topic", coef=(0.3, -0.4))
    fact = _calibrator(name="p_fact", coef=(0.5, 0.5), given="p_depends", given_value=False, otherwise=1.0,
                       within="p_topic", held_out_auroc={"kb": 0.8})
    values = {"a": 1.0, "b": 3.0}
    found = calibrated.chained(values, {"p_fact": fact, "p_depends": depends, "p_topic": topic})
    d, t = depends.probability(values), topic.probability(values)
    assert found["p_fact"] == pytest.approx(d + (1 - d) * t * fact.probability(values))
    assert found["p_fact"] < calibrated.chained(values, {"p_fact": replace(fact, within=""), "p_depends": depends,
                                                         "p_topic": topic})["p_fact"]
    assert Calibrator.from_json(json.loads(json.dumps(fact.to_json()))) == fact
    with pytest.raises(ValueError, match="within 'p_topic', which the file lacks"):
        calibrated.chained(values, {"p_fact": fact, "p_depends": depends})


def test_the_shipped_fact_calibrator_is_fitted_within_the_topic():
    assert calibrated.load()["p_fact"].within == "p_topic"


def test_a_conditional_calibrator_without_its_condition_or_in_a_loop_is_a_clear_error():
    with pytest.raises(ValueError, match="lacks"):
        calibrated.chained({"a": 1.0, "b": 1.0}, {"p_open": _calibrator(name="p_open", given="p_depends")})
    loop = {"x": _calibrator(name="x", given="y"), "y": _calibrator(name="y", given="x")}
    with pytest.raises(ValueError, match="conditional on each other"):
        calibrated.chained({"a": 1.0, "b": 1.0}, loop)


@pytest.mark.parametrize("text, points", [
    # ShARC train rule texts (training data): bullets; inline lists, counted by their comma-separated
    # parts (2 + 2: a rough count); conditional clauses; a statement with none
    ("## North Korea\n\nThe banned luxury goods for North Korea are:\n\n* pure bred horses\n"
     "* caviar and caviar substitutes\n* truffles and goods containing truffles", 3),
    ("Other types of bankruptcy include Chapters 9, 12 and 15. Cases under these chapters of the bankruptcy "
     "code involve municipalities, family farmers and fisherman, and international cases.", 4),
    ("If your child has a baby, you can make the claim for both of them if they live with you. "
     "The money will be paid to you.", 1),
    ("You can also claim your State Pension abroad.", 0),
])
def test_rule_points_count_what_a_dialogue_may_have_to_settle(text, points):
    assert calibrated.rule_points(text) == points


def _retrieved(doc_id: str, title: str, fused: float, rank: int) -> RetrievedPassage:
    passage = Passage(id=f"{doc_id}#0", doc_id=doc_id, title=title, text="…", start=0, end=1)
    return RetrievedPassage(passage, rank, 0.5, 1.0, 1.0, fused)


NDAS = (_retrieved("contracts/brightline", "Mutual Non-Disclosure Agreement: Brightline Analytics and Harrowgate", 0.80, 1),
        _retrieved("contracts/orrin", "Non-Disclosure Agreement: Orrin Robotics to Kestrel Logistics", 0.76, 2))


def test_two_equally_matching_documents_the_question_does_not_tell_apart_are_two_referents():
    assert len(referents("How long does the agreement last?", NDAS)) == 2


def test_a_title_word_only_one_document_has_resolves_the_referent():
    assert referents("How long does the Orrin agreement last?", NDAS) == (NDAS[1].passage.title,)
    bridge = (_retrieved("enc/harlow_bridge", "Harlow Bridge", 0.9, 1), _retrieved("enc/harlow", "Harlow", 0.85, 2))
    assert referents("When was the Harlow Bridge opened?", bridge) == ("Harlow Bridge",)


def test_paragraphs_of_one_article_are_one_referent_and_untitled_documents_are_each_their_own():
    article = tuple(_retrieved(f"squad/spectre-{n}", "Spectre (2015 film)", 0.8 - n / 100, n + 1) for n in range(3))
    assert len(referents("Who directed it?", article)) == 1
    untitled = tuple(_retrieved(f"notes/{n}", "", 0.8 - n / 100, n + 1) for n in range(2))
    assert referents("Who directed it?", untitled) == ("notes/0", "notes/1")


def test_a_scenario_that_tells_the_documents_apart_leaves_one_referent():
    """Retrieval ranked the second NDA far down because the asker's scenario named the first one's
    parties: the documents no longer compete, though the question alone matched both alike."""
    told = (NDAS[0], replace(NDAS[1], scenario_penalty=calibrated.TOP_CLOSE + 0.05))
    assert referents("How long does it last?", told) == (NDAS[0].passage.title,)


def test_the_topic_feature_reads_the_best_match_of_the_question_or_of_all_the_user_said():
    """"Can I claim it?" matches a guide weakly; with the scenario that names the guide's subject it
    matches well, and the topic signal reads the better of the two."""
    trace = factories.trace()
    vague = replace(trace.passages[0], dense=0.2, dense_with_scenario=0.7)
    assert calibrated.features(replace(trace, passages=(vague,)))["dense_top_said"] == 0.7
    assert calibrated.features(replace(trace, passages=(replace(vague, dense_with_scenario=None),)))[
        "dense_top_said"] == 0.2


def test_a_document_far_below_the_best_is_no_referent_unless_the_question_calls_both_by_their_kind():
    """"the agreement" is a common noun both NDAs' titles share: however far down the second scores, a
    question that names nothing does not say which; "it" names no kind, and a question that names a party
    is left to retrieval, which told the documents apart by that name."""
    far = (NDAS[0], replace(NDAS[1], fused=0.80 - calibrated.TOP_CLOSE - 0.05))
    assert len(referents("How long does it last?", far)) == 1
    assert len(referents("How long does the agreement last?", far)) == 2
    assert len(referents("How long does the Orrin agreement last?", far)) == 1


def test_a_kind_the_top_document_is_not_of_brings_in_no_referent():
    """Sample-KB titles: "the grant" retrieved the School Uniform Grant first and two other grants below;
    "the payment" retrieved a grant first, so the Winter Fuel Payment further down is no competitor."""
    grants = (_retrieved("policy/school_uniform_grant", "School Uniform Grant", 0.72, 1),
              _retrieved("policy/home_insulation_grant", "Home Insulation Grant", 0.60, 2),
              _retrieved("policy/winter_fuel_payment", "Winter Fuel Payment", 0.58, 3))
    assert referents("How do I apply for the grant?", grants) == ("School Uniform Grant", "Home Insulation Grant")
    assert referents("How is the payment made?", grants) == ("School Uniform Grant",)


def test_documents_of_the_named_kind_beyond_the_retrieved_ones_are_referents_too():
    """``rivals``: the knowledge base's other documents of the kind "the agreement" names, which the top
    k (both passages from the Brightline NDA) left out; a title word the question names still picks one."""
    one_document = (NDAS[0], replace(NDAS[0], rank=2, fused=0.78))
    rival = NDAS[1].passage.title
    assert referents("How long does the agreement last?", one_document) == (NDAS[0].passage.title,)
    assert referents("How long does the agreement last?", one_document, (rival,)) == (NDAS[0].passage.title, rival)
    assert referents("How long does the Orrin agreement last?", one_document, (rival,)) == (rival,)
    trace = replace(factories.trace(), query=Query("How long does the agreement last?"), passages=one_document)
    assert calibrated.features(trace)["referents"] == 1.0
    assert calibrated.features(replace(trace, rivals=(rival,)))["referents"] == 2.0


def test_an_abbreviation_the_titles_spell_out_is_their_kind_and_a_name_typed_in_lower_case_still_tells_them_apart():
    """Fresh sample-KB questions: "the NDA" is what both non-disclosure agreements' titles spell out, so a
    document far down is a referent as for "the agreement" (one referent before, the capitals read as a
    name); a party typed in lower case, which the passages write only as a name, picks one as a capitalised
    name does."""
    preamble = "This Agreement is made between Brightline Analytics Ltd and Harrowgate Medical Systems plc."
    far = (replace(NDAS[0], passage=replace(NDAS[0].passage, text=preamble)),
           replace(NDAS[1], fused=0.80 - calibrated.TOP_CLOSE - 0.05))
    assert len(referents("how long does the NDA last?", far)) == 2
    assert len(referents("how long does the nda last?", far)) == 2
    assert len(referents("how much notice does harrowgate need to give to end the nda early?", far)) == 1
    assert calibrated.referent_kinds("How long does the NDA last?", NDAS[0].passage.title) == {"nda"}
    assert calibrated.referent_kinds("How long does the VAT return take?", NDAS[0].passage.title) == set()
    # a name opening the question, in the possessive as the passages write it
    orrin = "Orrin's sales guy told us their prices. Is that covered by the NDA?"
    assert calibrated.referent_kinds(orrin, NDAS[0].passage.title, "information disclosed by Orrin's staff") == set()


def _document(doc_id: str, title: str, text: str) -> tuple[RetrievedPassage, ...]:
    """One document of the sample knowledge base, retrieved as a single passage."""
    passage = Passage(id=f"{doc_id}#0", doc_id=doc_id, title=title, text=text, start=0, end=len(text))
    return (RetrievedPassage(passage, 1, 0.5, 1.0, 1.0, 0.9),)


BAND = _document("encyclopedia/pale_lanterns", "The Pale Lanterns", (
    "The Pale Lanterns are a Calveran folk-rock band formed in Harlow in 1979. The band's debut album, Saltwork, "
    "was released in 1982. The Pale Lanterns headlined the first Brightwater Festival in 1985. After their sixth "
    "album the group took a long break, starting in 1996. They reunited in 2011 and released the album Low Water "
    "in 2014."))
NOVELIST = _document("encyclopedia/isolde_fenn", "Isolde Fenn", (
    "Isolde Fenn (1933–2008) was a Calveran novelist, born in Varnholm. She is best known for her first novel, "
    "The Tide Clerk. The Tide Clerk was published in 1961. Her later novels include A House Upon the Ost (1970) "
    "and Winter Ledger (1984)."))


@pytest.mark.parametrize("question, passages, expected", [
    # sample-KB questions a helper wrote from the documents alone, labelled ASK ("which album?")
    ("what year did the pale lanterns album come out? my dad has it on vinyl", BAND,
     ("the debut album", "the sixth album", "Low Water")),
    ("What year was Isolde Fenn's novel published?", NOVELIST, ("The Tide Clerk", "another novel")),
    # a word the document says of several of them singles none out ("Her later novels include …")
    ("what year was isolde fenn's later novel published", NOVELIST, ("The Tide Clerk", "another novel")),
    # the band's name as written, between the determiner and the kind
    ("When did the Pale Lanterns album come out?", BAND, ("Saltwork", "the sixth album", "Low Water")),
])
def test_a_kind_the_top_document_names_several_of_is_several_referents_within_it(question, passages, expected):
    found = referents(question, passages)
    assert len(found) >= 2 and set(found) & set(expected)


@pytest.mark.parametrize("question, passages", [
    ("When was the band's debut album released?", BAND),  # a word singles one out
    ("When was the album Low Water released?", BAND),  # the name after the noun
    ("When was the Pale Lanterns album Low Water released?", BAND),
    ("When did the band release Saltwork?", BAND),  # names one; "the band" is one thing
    ("What year was her first novel published?", NOVELIST),
    ("When was the novel The Tide Clerk published?", NOVELIST),
    ("What's the fare on the Northline?", BAND),  # a wh-word's contraction refers to nothing
])
def test_a_question_that_singles_one_out_has_one_referent(question, passages):
    assert len(referents(question, passages)) == 1


def test_with_probabilities_fills_every_calibrated_signal_without_touching_the_rest():
    c = {name: _calibrator(name=name, features=("dense_top", "coverage"), mean=(0.0, 0.0), scale=(1.0, 1.0))
         for name in calibrated.PROBABILITIES}
    trace = factories.trace()
    out = calibrated.with_probabilities(trace, c)
    for name in calibrated.PROBABILITIES:
        assert 0.0 < getattr(out.signals, name) < 1.0
    assert out.signals.n_referents == 1
    assert replace(out.signals, **{n: getattr(trace.signals, n) for n in calibrated.PROBABILITIES}) == trace.signals
    assert calibrated.with_probabilities(out, c) == out


def test_with_probabilities_counts_the_follow_ups_answered_yes_or_no():
    c = {name: _calibrator(name=name, features=("dense_top", "coverage"), mean=(0.0, 0.0), scale=(1.0, 1.0))
         for name in calibrated.PROBABILITIES}
    trace = factories.trace()
    assert calibrated.with_probabilities(trace, c).signals.follow_ups_answered == 0
    history = (("Do you live in England?", "No"), ("Are you over 65?", "Let me check."),
               ("Do you get Pension Credit?", "Yes, the guarantee part"))
    dialogue = replace(trace, query=replace(trace.query, history=history))
    assert calibrated.with_probabilities(dialogue, c).signals.follow_ups_answered == 2  # "Let me check." settles nothing


def _with_conditions(*conditions, history=()):
    """A hand-made trace whose condition reader found ``conditions`` ((text, status, group) each, or
    (text, status, group, support) for one an answered follow-up settled)."""
    from core.types import Condition, VariableState
    read = tuple(Condition(text=t, user_voice=t, kind="bullet", passage_id="doc#0", group=g, status=st,
                           support=rest[0] if rest else "", method="history (similarity 0.90)" if rest else "")
                 for t, st, g, *rest in conditions)
    trace = factories.trace()
    return replace(trace, query=replace(trace.query, question="Is my child eligible?", history=history),
                   variables=VariableState((), read, (), 0.0, "undetermined"))


def test_unsaid_share_is_the_share_of_each_conditions_words_the_dialogue_has_not_said():
    """ShARC's "Are you a female Vietnam Veteran? Yes" matched the whole condition, but said nothing
    of its child with a birth defect (training data's phrasing)."""
    condition = ("you are a female Vietnam Veteran with a child who has a birth defect", "established", "all")
    asked = _with_conditions(condition, history=(("Are you a female Vietnam Veteran?", "Yes"),))
    words = set(tokenize(condition[0]))
    unsaid = words - set(tokenize("Is my child eligible? Are you a female Vietnam Veteran? Yes"))
    assert calibrated.features(asked)["unsaid_share"] == pytest.approx(len(unsaid) / len(words))
    assert 0 < calibrated.features(asked)["unsaid_share"] < calibrated.features(_with_conditions(condition))["unsaid_share"]
    assert calibrated.features(factories.trace())["unsaid_share"] == 0.0  # no conditions


def test_what_is_left_after_the_condition_the_last_follow_up_settled():
    """A dialogue asks about a rule's conditions in their order: where its last follow-up landed says
    what is still open, and a reply can decide a list by itself (no to an all-of list, yes to an any-of)."""
    own, built, income = "own your home", "live in a property built before 1990", "earn less than £32,000"
    asked = ("Do you own your home?", "Yes")
    first = _with_conditions((own, "established", "all", "Do you own your home? Yes"), (built, "missing", "all"),
                             (income, "missing", "all"), history=(asked,))
    values = calibrated.features(first)
    assert values["last_follow_up_read"] == 1.0
    assert values["missing_after_last"] == 2.0 and values["yes_with_more_after"] == 2.0
    assert values["last_reply_decides"] == 0.0
    # the last follow-up asked about the last condition: nothing is left after it
    last = ("Do you earn less than £32,000?", "Yes")
    done = calibrated.features(_with_conditions(
        (own, "missing", "all"), (built, "missing", "all"),
        (income, "established", "all", "Do you earn less than £32,000? Yes"), history=(last,)))
    assert done["missing_after_last"] == 0.0 and done["yes_with_more_after"] == 0.0
    # a follow-up the reader matched to no condition: every missing condition may still be open
    unread = calibrated.features(_with_conditions((own, "missing", "all"), (built, "missing", "all"),
                                                  history=(("Are you a tenant?", "No"),)))
    assert unread["last_follow_up_read"] == 0.0 and unread["missing_after_last"] == 2.0
    assert unread["last_reply_decides"] == 1.0  # a no in an all-of list
    either = calibrated.features(_with_conditions((own, "established", "any", "Do you own your home? Yes"),
                                                  (built, "missing", "any"), history=(asked,)))
    assert either["last_reply_decides"] == 1.0 and either["yes_with_more_after"] == 0.0
    assert calibrated.features(factories.trace())["last_follow_up_read"] == 0.0  # no history


def test_alternatives_of_a_list_already_met_are_not_counted_as_open():
    """"You may get Cold Weather Payments if you're getting: Pension Credit, Income Support, …" with the scenario
    "I get Pension Credit": the other benefits of that any-of list no longer decide anything, so neither what is
    left after the last follow-up nor the conditions nothing the user said touches count them; an all-of
    condition still missing does count."""
    pension, support, allowance = "Pension Credit", "Income Support", "income-based Jobseeker's Allowance"
    met = calibrated.features(_with_conditions((pension, "established", "any"), (support, "missing", "any"),
                                               (allowance, "missing", "any")))
    assert met["missing_after_last"] == 0.0 and met["unaddressed"] == 0.0
    unmet = calibrated.features(_with_conditions((pension, "missing", "any"), (support, "missing", "any"),
                                                 (allowance, "missing", "any")))
    assert unmet["missing_after_last"] == 3.0 and unmet["unaddressed"] == 3.0
    more = calibrated.features(_with_conditions((pension, "established", "any"), (support, "missing", "any"),
                                                ("live in England", "missing", "all")))
    assert more["missing_after_last"] == 1.0 and more["unaddressed"] == 1.0


def test_an_outcome_is_weighed_by_the_share_of_its_readings_that_rest_on_more_than_nli():
    """A reply, arithmetic or the fact's own words decide a condition more surely than an NLI score; a number
    met whose rest NLI read is read by NLI too."""
    from core.types import Condition, VariableState
    from core.variables import UNRELATED_NLI, read_without_nli

    def condition(status, method):
        return Condition(text="are aged 66 or over", user_voice="I am aged 66 or over.", kind="bullet",
                         passage_id="doc#0", status=status, method=method)

    assert read_without_nli(condition("established", "numeric: 70 years > 66 years required"))
    assert read_without_nli(condition("contradicted", "history (similarity 0.91)"))
    assert read_without_nli(condition("contradicted", "negation: the fact denies “work”"))
    assert not read_without_nli(condition("established", "nli"))
    assert not read_without_nli(condition("established", UNRELATED_NLI))
    assert not read_without_nli(condition("missing", ""))
    assert not read_without_nli(condition(
        "established", "numeric: 18 hours a week > 16 hours a week required; the rest: nli (no related fact)"))

    def outcome(name, *conditions):
        trace = factories.trace()
        signals = replace(trace.signals, condition_outcome=name)
        return calibrated.features(replace(trace, signals=signals,
                                           variables=VariableState((), conditions, (), 0.0, name)))

    half = outcome("satisfied", condition("established", "numeric: 70 years > 66 years required"),
                   condition("established", "nli"), condition("missing", ""))
    assert half["satisfied_surely"] == 0.5 and half["failed_surely"] == 0.0
    failed = outcome("failed", condition("contradicted", "history (similarity 0.90)"), condition("established", "nli"))
    assert failed["failed_surely"] == 1.0 and failed["satisfied_surely"] == 0.0
    assert outcome("undetermined", condition("established", "words: the fact states the condition"),
                   condition("missing", "nli"))["satisfied_surely"] == 0.0


def test_real_an_outcome_read_by_arithmetic_is_read_surer_than_one_nli_read(sample_pipeline):
    from core.pipeline import make_query
    fuel = calibrated.features(sample_pipeline.analyze(make_query(
        "Can I get the Winter Fuel Payment?",
        "I'm 72, I have lived in Calvera for ten years and our household income is £12,000 a year.")))
    assert fuel["outcome_satisfied"] == fuel["satisfied_surely"] == 1.0  # three bounds, each met by arithmetic
    young = calibrated.features(sample_pipeline.analyze(make_query("Can I get the Older Person's Bus Pass?", "I'm 40.")))
    assert young["outcome_failed"] == young["failed_surely"] == 1.0
    # the age met by arithmetic, the main home in Calvera by NLI (no place named after "in"): half of what decides it
    said = calibrated.features(sample_pipeline.analyze(make_query(
        "Can I get the Older Person's Bus Pass?", "I'm 70 and Calvera has been my home for forty years.")))
    assert said["outcome_satisfied"] == 1.0 and said["satisfied_surely"] == 0.5
    # the home named in Calvera is settled by the place itself
    placed = calibrated.features(sample_pipeline.analyze(make_query(
        "Can I get the Older Person's Bus Pass?", "I'm 70 and my only home is a flat in Calvera.")))
    assert placed["outcome_satisfied"] == placed["satisfied_surely"] == 1.0


def test_real_the_last_follow_up_is_located_among_the_rules_conditions(sample_pipeline):
    from core.pipeline import make_query
    question = "Can I get the Home Insulation Grant?"
    first = calibrated.features(sample_pipeline.analyze(make_query(question, "", [("Do you own your home?", "Yes")])))
    second = calibrated.features(sample_pipeline.analyze(make_query(
        question, "", [("Do you own your home?", "Yes"), ("Was your home built before 1990?", "Yes")])))
    assert first["last_follow_up_read"] == second["last_follow_up_read"] == 1.0
    assert 0 < second["missing_after_last"] == first["missing_after_last"] - 1


def test_real_points_a_scenario_settles_are_no_longer_undecided(sample_pipeline):
    """A scenario settles a rule's points as replies do: without follow-ups, the points left undecided fall
    as the scenario settles bullets, while the points unanswered by replies stay where they were. On a first turn
    the scenario's reading is read again by features of their own, which a dialogue's later turns leave at 0."""
    from core.pipeline import make_query
    question = "Can I get the Winter Fuel Payment?"
    bare = calibrated.features(sample_pipeline.analyze(make_query(question)))
    told = calibrated.features(sample_pipeline.analyze(make_query(
        question, "I'm 72, I have lived in Calvera for ten years and our household income is £12,000 a year.")))
    assert bare["points_unanswered"] == told["points_unanswered"] > 0
    assert bare["points_undecided"] == bare["points_unanswered"]
    assert told["points_undecided"] <= told["points_unanswered"] - 2
    # read again on a first turn only: once a follow-up is answered, the dialogue walks the rule instead
    assert told["points_undecided_first_turn"] == told["points_undecided"]
    assert told["established_first_turn"] >= 2 and told["scenario_words_first_turn"] == told["scenario_words"] > 0
    later = calibrated.features(sample_pipeline.analyze(make_query(
        question, "I'm 72.", [("Do you live in Calvera?", "Yes")])))
    assert later["history_turns"] == 1
    assert later["points_undecided_first_turn"] == later["established_first_turn"] == 0.0
    assert later["scenario_words_first_turn"] == 0.0 < later["scenario_words"]


def test_real_a_list_one_item_meets_is_read_as_met_on_a_first_turn(sample_pipeline):
    """The Blue Parking Permit's "any of the following": being registered blind decides that list, whatever its
    other items say; the feature is the scenario's alone, so a later turn leaves it at 0. The list's other items
    are then not counted among the conditions still open."""
    from core.pipeline import make_query
    question = "Can I get a Blue Parking Permit?"
    bare = calibrated.features(sample_pipeline.analyze(make_query(question)))
    told = calibrated.features(sample_pipeline.analyze(make_query(question, "I am 40 and registered blind.")))
    later = calibrated.features(sample_pipeline.analyze(make_query(
        question, "I am 40 and registered blind.", [("Are you aged 3 or over?", "Yes")])))
    assert bare["alternative_met_first_turn"] == 0.0
    assert told["alternative_met_first_turn"] == 1.0
    assert later["alternative_met_first_turn"] == 0.0
    # the list's other items no longer decide anything: none of them is counted as still open
    assert bare["missing_after_last"] >= 4 and bare["unaddressed"] >= 3
    assert told["missing_after_last"] == told["unaddressed"] == 0.0


def test_real_the_dense_match_is_read_apart_for_a_wh_question(sample_pipeline):
    """How closely the best passage matches the question enters P(fact stated) once more for a wh-question only:
    a contract's standard hypotheses match every contract alike."""
    from core.pipeline import make_query
    asked = calibrated.features(sample_pipeline.analyze(make_query("When did the Harlow Bridge open to traffic?")))
    polar = calibrated.features(sample_pipeline.analyze(make_query("Can I get the Winter Fuel Payment?")))
    assert asked["yes_no_claim"] == 0.0 and asked["dense_question"] == asked["dense_top"] > 0.5
    assert polar["yes_no_claim"] == 1.0 and polar["dense_question"] == 0.0 < polar["dense_top"]


def test_real_the_dense_match_counts_once_more_where_a_value_of_the_asked_type_was_found(sample_pipeline):
    """A passage close to a wh-question states its answer more often when it holds a value of the asked type; a
    close passage without one is a passage on the topic, not one stating the fact."""
    from core.pipeline import make_query
    trace = sample_pipeline.analyze(make_query("When did the Harlow Bridge open to traffic?"))
    typed = calibrated.features(trace)
    assert typed["answer_type_found"] == 1.0 and typed["typed_question"] == typed["dense_question"] > 0.5
    untyped = calibrated.features(replace(trace, signals=replace(trace.signals, answer_type_found=0.0)))
    assert untyped["typed_question"] == 0.0 < untyped["dense_question"]
    polar = calibrated.features(sample_pipeline.analyze(make_query("Can I get the Winter Fuel Payment?")))
    assert polar["typed_question"] == 0.0


def test_an_unclear_list_of_bare_names_reads_as_alternatives():
    """Train KB, Cold Weather Payments: "if you get: * Pension Credit * Income Support * …" names benefits, any of
    which will do; a list of conditions with verbs ("you live in …") says neither."""
    names = calibrated.features(_with_conditions(("Pension Credit", "established", "unclear"),
                                                 ("income-based Jobseeker's Allowance", "missing", "unclear")))
    assert (names["any_group"], names["unclear_group"]) == (1.0, 0.0)
    clauses = calibrated.features(_with_conditions(("you live in Calvera", "established", "unclear"),
                                                   ("you are aged 66 or over", "missing", "unclear")))
    assert (clauses["any_group"], clauses["unclear_group"]) == (0.0, 1.0)


def test_an_unclear_list_with_one_item_met_and_another_not_is_decided():
    met, failed, open_ = (("a", "established", "unclear"), ("b", "contradicted", "unclear"), ("c", "missing", "unclear"))
    assert calibrated.features(_with_conditions(met, failed, open_))["unclear_decided"] == 1.0
    assert calibrated.features(_with_conditions(met, open_))["unclear_decided"] == 0.0
    assert calibrated.features(_with_conditions(met, ("b", "contradicted", "all")))["unclear_decided"] == 0.0


def test_the_shipped_calibrators_say_what_they_were_fitted_on_and_carry_signal():
    shipped = calibrated.load()
    assert set(calibrated.PROBABILITIES) <= set(shipped)
    for c in shipped.values():
        assert "shared/data/train" in c.trained_on
        # each separates its target on held-out groups of at least one training domain
        assert max(v for k, v in c.held_out_auroc.items() if v is not None) >= 0.65, c.name


def test_missing_calibrator_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="fit_signals.py"):
        calibrated.load(tmp_path / "none.json")


@pytest.mark.parametrize("absent, present", [
    ("What is the population of Mars?", "When was the Harlow Bridge opened?"),
])
def test_real_traces_topic_probability_separates_an_absent_topic(sample_pipeline, absent, present):
    from core.pipeline import make_query
    p_absent = sample_pipeline.analyze(make_query(absent)).signals.p_topic
    p_present = sample_pipeline.analyze(make_query(present)).signals.p_topic
    assert p_absent < 0.5 < p_present


def test_a_reply_that_settles_nothing_counts_as_no_answered_follow_up():
    from core.types import Query
    asked = "Are you aged 66 or over?"
    base = factories.trace()
    vague = calibrated.features(replace(base, query=Query("Can I get it?", "", ((asked, "Let me check."),))))
    answered = calibrated.features(replace(base, query=Query("Can I get it?", "", ((asked, "Yes, I am."),))))
    assert vague["history_turns"] == 0 and vague["last_answer_yes"] == 0
    assert answered["history_turns"] == 1 and answered["history_yes"] == 1 and answered["last_answer_yes"] == 1


def test_real_an_off_topic_documents_condition_markers_do_not_count(sample_pipeline):
    """"Can my landlord evict me?" retrieves a grant whose bulleted rules mention landlords: its markers say nothing
    about eviction, so P(condition open) must not read them."""
    from core.pipeline import make_query
    trace = sample_pipeline.analyze(make_query("Can my landlord evict me?", "I rent a flat in Harlow."))
    values = calibrated.features(trace)
    assert values["personal"] == 1.0 and values["condition_markers"] == 0.0
    on_topic = calibrated.features(sample_pipeline.analyze(make_query("Can I get the Home Insulation Grant?")))
    assert on_topic["condition_markers"] > 0


def test_held_out_auroc_is_also_read_within_groups_that_hold_both_classes():
    """SQuAD train's unanswerable questions all sit in one article: pooled over articles, a signal that
    ranks well inside that article can read as inverted (the article's mean differs), so the groups
    holding both classes get their own figure."""
    from core.evaluation.fit_signals import held_out_aurocs
    y = np.array([1, 1, 1, 1, 1, 0, 0, 0])
    oof = np.array([0.2, 0.3, 0.2, 0.3, 0.95, 0.9, 0.85, 0.8])  # article b: its answerable one ranks first
    groups = np.array(["a", "a", "a", "a", "b", "b", "b", "b"])
    domains = np.array(["squad"] * 8)
    held = held_out_aurocs(y, oof, domains, groups)
    assert held["squad"] < 0.5 and held["squad, groups with both classes"] == 1.0 and held["all"] == held["squad"]
    assert "squad, groups with both classes" not in held_out_aurocs(y, oof, domains, np.array(["a"] * 8))


def test_a_feature_that_barely_varies_in_training_is_not_weighed():
    """P(fact stated) is fitted on contracts and articles, where "the question is about the asker" is
    true of 1 row in 1,000; weighed, it put every "How do I …?" at P ≈ 1 whatever the evidence said."""
    from core.evaluation.fit_signals import MIN_VARYING_SHARE, weighable
    rng = np.random.default_rng(0)
    rare = np.zeros(1000)
    rare[:int(MIN_VARYING_SHARE * 1000) - 1] = 1.0
    X = np.column_stack([rng.random(1000), rare, np.ones(1000), np.r_[np.ones(20), np.zeros(980)]])
    assert weighable(X).tolist() == [True, False, False, True]


def _passage_of(doc_id: str, title: str, text: str, rank: int, fused: float = 0.3) -> RetrievedPassage:
    return RetrievedPassage(Passage(id=f"{doc_id}#0", doc_id=doc_id, title=title, text=text, start=0, end=len(text)),
                            rank, 0.3, 1.0, 0.3, fused)


SHIPS = (_passage_of("enc/corran_shipyards", "Corran Shipyards",
                     "The yard built fishing boats, coastal ferries and cargo ships, and in 1931 it launched the "
                     "passenger liner SS Meridian Star.", 1),
         _passage_of("enc/meridian_star", "SS Meridian Star",
                     "The SS Meridian Star was a passenger liner built by Corran Shipyards. She was launched on 3 "
                     "March 1931. The ship was 164 metres long.", 2, 0.1),
         _passage_of("enc/harlow", "Harlow", "Harlow is a market town on the River Ost.", 3, 0.05))


def test_documents_that_each_say_all_a_question_says_of_a_thing_it_names_by_a_common_noun_are_described():
    """"When was the ship launched?" names nothing: the shipyard's article (it launched a liner) and the
    liner's (she was launched) each say it, far apart in retrieval score as they are."""
    assert calibrated.described("When was the ship launched?", SHIPS) == ("Corran Shipyards", "SS Meridian Star")
    assert calibrated.referents("When was the ship launched?", SHIPS) == ("Corran Shipyards",)
    # a name, a title word only one of them has, or words no passage says all of leave one or none
    assert calibrated.described("When was the SS Meridian Star launched?", SHIPS) == ()
    assert calibrated.described("When was the liner launched by the yard?", SHIPS) == ("Corran Shipyards",)
    assert calibrated.described("When was the ship sunk?", SHIPS) == ()
    assert calibrated.described("When was a ship launched?", SHIPS) == ()  # no definite description


def test_what_the_user_said_besides_the_question_can_tell_the_described_documents_apart():
    """ConditionalQA phrasing: the scenario names a title word one candidate has, or retrieval, weighing
    the scenario, ranked a candidate's document far down: the question means the other."""
    assert calibrated.described("When was the ship launched?", SHIPS, "I'm reading about Corran's yard.") == \
        ("Corran Shipyards",)
    ranked_down = (SHIPS[0], replace(SHIPS[1], scenario_penalty=calibrated.TOP_CLOSE + 0.05))
    assert calibrated.described("When was the ship launched?", ranked_down, "I'm reading about a shipyard.") == \
        ("Corran Shipyards",)


def test_the_words_must_be_said_in_one_passage_not_scattered_over_a_document():
    """SQuAD train: "What was the earthquake named?" — two articles mention an earthquake in one
    paragraph and a name in another: neither says what the question says of the earthquake."""
    scattered = (_passage_of("squad/nyc-1", "New York City", "An earthquake shook the city in 1884.", 1),
                 _passage_of("squad/nyc-2", "New York City", "The city was named after the Duke of York.", 2),
                 _passage_of("squad/b-1", "Beyonce", "She gave a concert for the earthquake relief effort.", 3),
                 _passage_of("squad/b-2", "Beyonce", "Her daughter was named Blue Ivy.", 4))
    assert calibrated.described("What was the earthquake named?", scattered) == ()


def test_the_signal_counts_the_described_documents():
    trace = replace(factories.trace(), query=Query("When was the ship launched?"), passages=SHIPS)
    assert calibrated.with_probabilities(trace).signals.n_described == 2


# --- names no retrieved passage mentions ------------------------------------------------------------

TWILIGHT = (_passage_of("enc/twilight_princess", "The Legend of Zelda: Twilight Princess",
                        "Twilight Princess was released for the GameCube and the Wii in 2006. Koji Kondo, the "
                        "series' composer, supervised the music, and the iPod Nano bundle was sold by Beyoncé's "
                        "label in the United States.", 1),)


def _asked(question: str, schema: str = "existential", passages=TWILIGHT):
    return replace(factories.trace(), query=Query(question), passages=passages,
                   claim=factories.trace().claim.__class__("There exists something.", schema))


@pytest.mark.parametrize("question, names", [
    ("Who wrote the music for Twilight Kondo?", ["Twilight Kondo"]),
    ("Under which brand was Twilight Princess for the Nintendo Wii published?", ["Twilight Princess", "Nintendo Wii"]),
    ("Because of Beyoncé's physical shape, what slang term has been used?", []),  # "Because of" starts no name
    ("What part of the iPod Nano overheated?", ["iPod Nano"]),
    ("When was the Bank of England founded?", ["Bank of England"]),
    ("Christopher Orr of the New Yorker said what?", ["Christopher Orr of the New Yorker"]),
    ("What Nintendo game came first?", []),
    # a possessive ends a name: Chopin's Op. 63 is Chopin's, not a thing called "Chopin's Op"
    ("What does Chopin's Op. 63 No. 3 have that is rare?", []),
    ("Where did Twilight Princess rank on Game Radar's list?", ["Twilight Princess", "Game Radar's"]),
])
def test_a_questions_names_of_two_words_or_more_leave_out_the_function_words_that_open_it(question, names):
    assert calibrated.multiword_names(question) == names


def test_a_name_no_retrieved_passage_mentions_is_unknown_however_its_words_are_spelled_there():
    """SQuAD 2.0's entity swaps ("Twilight Kondo" from "Twilight Princess" and "Koji Kondo"): every word of
    the name is in the article, the name itself is not. Accents, possessives and plurals do not count."""
    assert calibrated.unknown_names(_asked("Who wrote the music for Twilight Kondo?")) == ("Twilight Kondo",)
    assert calibrated.unknown_names(_asked("Who supervised the music of Twilight Princess?")) == ()
    assert calibrated.unknown_names(_asked("Who sold the iPod Nanos in the United States?")) == ()
    assert calibrated.unknown_names(_asked("Which label is Beyonce's?")) == ()
    assert calibrated.unknown_names(_asked("What did Twilight Princess's composer Koji Kondo write?")) == ()


def test_only_a_wh_question_not_about_the_asker_is_judged_by_its_names():
    """A statement's names are a contract's defined terms ("Receiving Party"), which a document spells its
    own way; a rule question names a scheme its rule text may not ("Can I get Winter Fuel Payment?")."""
    assert calibrated.unknown_names(_asked("Receiving Party shall notify Disclosing Party.", "statement")) == ()
    assert calibrated.unknown_names(_asked("When can I get Winter Fuel Payment?")) == ()
    assert calibrated.unknown_names(_asked("When is Winter Fuel Payment paid?")) == ("Winter Fuel Payment",)
    signals = calibrated.with_probabilities(_asked("Who wrote the music for Twilight Kondo?")).signals
    assert signals.n_unknown_names == 1 and signals.statement == 0
    statement = calibrated.with_probabilities(_asked("Receiving Party shall notify Disclosing Party.", "statement"))
    assert statement.signals.statement == 1 and statement.signals.n_unknown_names == 0
    mine = calibrated.with_probabilities(_asked("Can I get Winter Fuel Payment?", "polar"))
    assert mine.signals.statement == 0  # about the asker: a rule question, not a statement to check


def test_an_abbreviation_a_retrieved_title_spells_out_is_no_part_of_a_name():
    """"the Orrin Robotics NDA" is Orrin Robotics' non-disclosure agreement (sample KB blind set, session 22):
    the contract says "Orrin Robotics", its title "Non-disclosure agreement 2". An abbreviation no title
    spells out stays part of the name ("the CEO of Apple")."""
    nda = (_passage_of("contracts/nda_2", "Non-disclosure agreement 2",
                       "This Agreement is made between Orrin Robotics Ltd and Kestrel Logistics.", 1),)
    assert calibrated.unknown_names(_asked("Which law governs the Orrin Robotics NDA?", passages=nda)) == ()
    assert calibrated.unknown_names(_asked("Which law governs the Orrin Rocketry NDA?", passages=nda)) == \
        ("Orrin Rocketry",)
    assert calibrated.unknown_names(_asked("Who is the CEO of Orrin Robotics?", passages=nda)) == \
        ("CEO of Orrin Robotics",)
    ceo = (_passage_of("enc/orrin", "Orrin Robotics", "Orrin Robotics's CEO, Mara Lind, founded it in 2009.", 1),)
    assert calibrated.unknown_names(_asked("Who is the CEO of Orrin Robotics?", passages=ceo)) == ()


def test_cross_fitted_probabilities_come_from_calibrators_that_never_saw_the_items_group():
    """The gate's thresholds are fitted on these probabilities: one from a calibrator fitted on its own
    item is surer than on a new knowledge base."""
    from core.evaluation.fit_signals import cross_fitted
    from core.evaluation.importers import LabelledItem
    items = [LabelledItem(id=f"q{k}", question="Q?", action="ANSWER", extra={"group": f"g{k // 3}"}) for k in range(30)]
    seen_groups = []

    def fit(runs, folds):  # a calibrator without features whose P(topic) names the fit it came from
        seen_groups.append({i.extra["group"] for d in runs for i in runs[d][0]})
        fold = len(seen_groups)
        return [Calibrator(name="p_topic", question="", features=(), mean=(), scale=(), coef=(),
                           intercept=math.log(fold / (100 - fold)))]
    traces = [factories.trace() for _ in items]
    scored = cross_fitted({"d": (items, traces)}, folds=5, fit=fit)["d"]
    assert len(seen_groups) == 5 and all(len(g) == 8 for g in seen_groups)  # each fit saw four fifths of the groups
    for item, trace in zip(items, scored):
        fold = round(trace.signals.p_topic * 100)
        assert item.extra["group"] not in seen_groups[fold - 1]
    assert {round(t.signals.p_topic * 100) for t in scored} == {1, 2, 3, 4, 5}  # every fit scored its held-out fifth
    assert traces == [factories.trace() for _ in items]  # the input traces are not changed


def test_a_scenario_told_with_the_question_is_a_signal_the_gate_reads():
    told = calibrated.with_probabilities(replace(factories.trace(), query=Query("Is that allowed?", "I'm a mentor.")))
    bare = calibrated.with_probabilities(replace(factories.trace(), query=Query("Is that allowed?", "  ")))
    assert (told.signals.has_scenario, bare.signals.has_scenario) == (1, 0)


@pytest.mark.parametrize("question, title, asked", [
    ("Who designed the Arden Lighthouse?", "Arden Lighthouse", {"desig"}),
    ("How many people live in Tessby?", "Tessby", {"liv"}),
    ("Who directed the movie version of The Tide Clerk?", "Isolde Fenn", {"direc", "movi", "versi"}),
    # a question that asks nothing beyond its topic and the kind of value it wants
    ("How much is the Winter Fuel Payment?", "Winter Fuel Payment", set()),
])
def test_the_asked_words_are_what_a_question_asks_beyond_its_names_its_document_and_its_frame(question, title, asked):
    assert calibrated.asked_words(question, title) == asked


def _article(question: str, text: str):
    from core.text import split_sentences
    passage = Passage(id="enc/arden#0", doc_id="enc/arden", title="Arden Lighthouse", text=text, start=0,
                      end=len(text), sentences=tuple(split_sentences(text)))
    return replace(factories.trace(), query=Query(question), passages=(RetrievedPassage(passage, 1, 0.7, 3.0, 1.0, 0.8),))


def test_asked_found_reads_whether_a_sentence_of_the_topic_says_what_is_asked():
    """A passage about the lighthouse that never says who designed it rarely states the designer; a word
    of the asked relation in another form ("designer") counts, in the sentence or the one before it."""
    built = "The Arden Lighthouse stands on Arden Head. It was built in 1871 and first lit in 1872."
    designed = "The Arden Lighthouse stands on Arden Head. Its designer was the engineer Mara Quill."
    asked = "Who designed the Arden Lighthouse?"
    assert calibrated.asked_found(_article(asked, built)) == 0.0
    assert calibrated.asked_found(_article(asked, designed)) == 1.0
    # what is asked, said over two sentences ("lamp", then "designed"): read with the one before it
    lamp = "The lamp was made in Paris. It was designed by Mara Quill. The tower is older."
    assert calibrated.asked_found(_article("Who designed the lamp of the Arden Lighthouse?", lamp)) == 1.0
    apart = "The lamp was made in Paris. The tower is older. It was designed by Mara Quill."
    assert calibrated.asked_found(_article("Who designed the lamp of the Arden Lighthouse?", apart)) == 0.5
    assert calibrated.asked_found(_article("Where is the Arden Lighthouse?", built)) == 1.0  # nothing beyond the topic
    assert calibrated.asked_found(replace(factories.trace(with_passage=False), query=Query(asked))) == 0.0


def test_asked_found_reads_a_kind_of_value_said_by_another_word():
    """Browser walkthrough: "What is the population of Varnholm?" abstained beside "it had 412,000 inhabitants",
    the sentence the answer's value reader had found (its kind synonyms: population / inhabitants / residents)."""
    census = "Varnholm is the capital. At the 2021 census it had 412,000 inhabitants."
    assert calibrated.asked_found(_article("What is the population of Varnholm?", census)) == 1.0
    assert calibrated.asked_found(_article("What is the price for adults?", "The fare is £4 for adults.")) == 1.0
    assert calibrated.asked_found(_article("What is the population of Varnholm?", "Varnholm is the capital.")) == 0.0


def test_real_the_asked_relation_is_found_for_a_stated_fact_and_not_for_an_unstated_one(sample_pipeline):
    """Sample KB: the Harlow Bridge article says when it opened; the Arden Lighthouse article never says
    who designed it, though it is all about the lighthouse."""
    from core.pipeline import make_query
    stated = calibrated.features(sample_pipeline.analyze(make_query("When did the Harlow Bridge open to traffic?")))
    unstated = calibrated.features(sample_pipeline.analyze(make_query("Who designed the Arden Lighthouse?")))
    assert stated["asked_found"] == 0.5 and unstated["asked_found"] == 0.0  # "opened", not "traffic"


def _answered(question: str, title: str, sentence: str, value: str):
    from core.types import AnswerChoice
    return replace(factories.trace(), query=Query(question), passages=_document("policy/x", title, sentence),
                   answer=AnswerChoice("policy/x#0", sentence, value, "MONEY"))


@pytest.mark.parametrize("question, title, sentence, rivalled", [
    # a helper-written sample-KB question: the rate given is Carer's Allowance's, not the one asked about
    ("How much is Maternity Allowance a week in Calvera?", "Carer's Allowance", "Carer's Allowance is £81.90 a week.",
     ("Maternity Allowance",)),
    ("How much is Carer's Allowance a week?", "Carer's Allowance", "Carer's Allowance is £81.90 a week.", ()),
    ("How much is Carer's Allowance a week?", "Carer's Allowance", "It is £81.90 a week.", ()),  # the title names it
    ("How much are Carers Allowances a week?", "Carer's Allowance", "It is £81.90 a week.", ()),  # plural, possessive
    ("Where was the author of The Tide Clerk born?", "Isolde Fenn", "Isolde Fenn was born in Varnholm.", ()),
    # a rival of the same kind, and not a shorter form of the name (SQuAD articles call people by surname)
    ("Who did the Yongle Emperor send to Tibet?", "Tibet", "The Hongwu Emperor sent envoys to Tibet.",
     ("Yongle Emperor",)),
    ("When did Harper Lee begin refusing interviews?", "To Kill a Mockingbird",
     "Starting in 1964, Lee began to turn down interviews.", ()),
    ("Who founded Notre Dame?", "University of Notre Dame", "The University of Notre Dame was founded by Edward Sorin.",
     ()),
])
def test_a_value_said_of_another_thing_of_the_kind_is_read_as_such(question, title, sentence, rivalled):
    assert calibrated.rivalled_names(_answered(question, title, sentence, "£81.90")) == rivalled
    assert calibrated.rivalled_names(replace(_answered(question, title, sentence, ""), answer=None)) == ()


def test_real_a_rate_from_another_allowance_is_refused(sample_pipeline):
    """Sample KB: no document gives Maternity Allowance's rate; the value the pipeline finds is Carer's
    Allowance's £81.90, and the gate refuses it, while asked of Carer's Allowance it answers."""
    from core.agents import respond
    from core.gate import decide
    from core.pipeline import make_query
    other = sample_pipeline.analyze(make_query("How much is Maternity Allowance a week in Calvera?"))
    own = sample_pipeline.analyze(make_query("How much is Carer's Allowance a week?"))
    assert other.answer is not None and "81.90" in other.answer.value
    assert other.signals.n_rivalled_names == 1 and own.signals.n_rivalled_names == 0
    assert (decide(other).action, decide(other).rule) == ("ABSTAIN", "value_of_another")
    assert decide(own).action == "ANSWER"
    refusal = respond(other, decide(other)).text  # says whose value it found, and for what it was asked
    assert "Carer's Allowance is £81.90 a week" in refusal and "“Maternity Allowance”" in refusal
