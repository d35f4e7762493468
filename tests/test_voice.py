"""Conditions in the user's voice (for NLI) and as clarification questions (for ASK)."""
from __future__ import annotations

import pytest

from core import voice
from core.voice import to_question, to_user_voice

SMP_LEAD = "To qualify for SMP you must:"
BABY_LEAD = "You can still get Statutory Maternity Leave and SMP if your baby:"
VAT_LEAD = "You may be able to apply zero VAT when you sell the following to an eligible charity:"

# (condition, lead, first-person statement, second-person question)
CASES = [
    ("* are aged 65 or over", "You can get X if you:", "I am aged 65 or over.", "Are you aged 65 or over?"),
    ("* are aged 65 or over", "", "I am aged 65 or over.", "Are you aged 65 or over?"),
    ("You must have lived in Calvera for at least 3 years.", "",
     "I have lived in Calvera for at least 3 years.", "Have you lived in Calvera for at least 3 years?"),
    ("The applicant must be a resident of Wexbridge.", "",
     "I am a resident of Wexbridge.", "Are you a resident of Wexbridge?"),
    ("have a child under 5", "", "I have a child under 5.", "Do you have a child under 5?"),
    ("your employer is based in Calvera", "", "My employer is based in Calvera.", "Is your employer based in Calvera?"),
    ("you're self-employed", "", "I'm self-employed.", "Are you self-employed?"),
    ("Applicants who are students cannot apply", "", "I am a student and I cannot apply.", "Are you a student?"),
    ("if you are over 18", "", "I am over 18.", "Are you over 18?"),
    ("The applicant lives in Scotland.", "", "I live in Scotland.", "Do you live in Scotland?"),
    ("The employee has at least two years of continuous service.", "",
     "I have at least two years of continuous service.", "Do you have at least two years of continuous service?"),
    ("if your employer pays you", "", "My employer pays me.", "Does your employer pay you?"),
    ("earn on average at least £113 a week", SMP_LEAD,
     "I earn on average at least £113 a week.", "Do you earn on average at least £113 a week?"),
    ("give proof you’re pregnant", SMP_LEAD, "I give proof I'm pregnant.", "Do you give proof you're pregnant?"),
    ("have worked for your employer continuously for at least 26 weeks", SMP_LEAD,
     "I have worked for my employer continuously for at least 26 weeks.",
     "Have you worked for your employer continuously for at least 26 weeks?"),
    ("* is born early", BABY_LEAD, "My baby is born early.", "Is your baby born early?"),
    ("* dies after being born", BABY_LEAD, "My baby dies after being born.", "Does your baby die after being born?"),
    ("* lifeboats and associated equipment", VAT_LEAD,
     "I sell lifeboats and associated equipment to an eligible charity.",
     "Do you sell lifeboats and associated equipment to an eligible charity?"),
    ("* rescue equipment", "The eligible items include:", "It is rescue equipment.", "Is it rescue equipment?"),
    ("* You have an Honorable Discharge, and", "You may be an eligible Veteran if:",
     "I have an Honorable Discharge.", "Do you have an Honorable Discharge?"),
    ("If a worker has taken more leave than they’re entitled to", "",
     "I have taken more leave than I'm entitled to.", "Have you taken more leave than you're entitled to?"),
    ("If Species+ says the animal is banned", "",
     "Species+ says the animal is banned.", "Does Species+ say the animal is banned?"),
    ("your civil partnership was dissolved", "",
     "My civil partnership was dissolved.", "Was your civil partnership dissolved?"),
    ("you think you’ve overpaid", "", "I think I've overpaid.", "Do you think you've overpaid?"),
    ("unless you’re the appointee", "", "I'm the appointee.", "Are you the appointee?"),
    ("All drivers under 18 years old are banned from using a portable electronic device.", "",
     "I am a driver under 18 years old and I am banned from using a portable electronic device.",
     "Are you a driver under 18 years old?"),
    ("You must not be in full-time education.", "",
     "I am not in full-time education.", "Are you in full-time education?"),
    ("You must not have savings of more than £16,000.", "",
     "I do not have savings of more than £16,000.", "Do you have savings of more than £16,000?"),
    ("The applicant does not own a home.", "", "I do not own a home.", "Do you own a home?"),
    ("you don't have any savings", "", "I don't have any savings.", "Do you have any savings?"),
    ("you were born in France", "", "I was born in France.", "Were you born in France?"),
    # a role noun whose phrase names the user is someone else
    ("The person you care for must already get a qualifying disability benefit", "",
     "The person I care for already gets a qualifying disability benefit.",
     "Does the person you care for already get a qualifying disability benefit?"),
    ("A person who lives with you must be over 18", "", "A person who lives with me is over 18.",
     "Is a person who lives with you over 18?"),
    ("The people you care for must be disabled", "", "The people I care for are disabled.",
     "Are the people you care for disabled?"),
    ("Your children must live with you", "", "My children live with me.", "Do your children live with you?"),
    ("The applicant's business is a charity.", "", "My business is a charity.", "Is your business a charity?"),
    ("You should also be registered with a GP;", "",
     "I am also registered with a GP.", "Are you also registered with a GP?"),
    ("You will need to provide proof of identity.", "",
     "I provide proof of identity.", "Do you provide proof of identity?"),
    ("- not be in full-time education", "", "I am not in full-time education.", "Are you in full-time education?"),
    ("you have never been married", "", "I have never been married.", "Have you ever been married?"),
    ("there is a child under 16 in your household", "",
     "There is a child under 16 in my household.", "Is there a child under 16 in your household?"),
    ("your children live with you", "", "My children live with me.", "Do your children live with you?"),
    ("you and your partner live together", "", "My partner and I live together.", "Do you and your partner live together?"),
    ("the council gives you a grant", "", "The council gives me a grant.", "Does the council give you a grant?"),
    ("you lived abroad", "", "I lived abroad.", "Did you live abroad?"),
    ("you had a job", "", "I had a job.", "Did you have a job?"),
    ("living in Wales", "", "I am living in Wales.", "Are you living in Wales?"),
    ("a resident of Wexbridge", "", "I am a resident of Wexbridge.", "Are you a resident of Wexbridge?"),
    ("Anyone who is over 65 can apply", "", "I am over 65 and I can apply.", "Are you over 65?"),
    ("Both you and your partner must be over 18", "",
     "Both my partner and I are over 18.", "Are both you and your partner over 18?"),
    ("If you or your partner get Universal Credit", "",
     "My partner or I get Universal Credit.", "Do you or your partner get Universal Credit?"),
    ("* is a UK citizen", "The applicant must:", "I am a UK citizen.", "Are you a UK citizen?"),
    ("You need a TV licence", "", "I need a TV licence.", "Do you need a TV licence?"),
    ("The worker must have been employed for 2 years.", "",
     "I have been employed for 2 years.", "Have you been employed for 2 years?"),
    ("Tenants who have lived in the property for at least 5 years may apply.", "",
     "I have lived in the property for at least 5 years and I may apply.",
     "Have you lived in the property for at least 5 years?"),
    ("where the claimant's income is below £150 a week", "",
     "My income is below £150 a week.", "Is your income below £150 a week?"),
    ("you claimed Child Benefit before 2013", "",
     "I claimed Child Benefit before 2013.", "Did you claim Child Benefit before 2013?"),
    ("you'll be 18 or older on polling day", "",
     "I will be 18 or older on polling day.", "Will you be 18 or older on polling day?"),
    ("1. you can get help from the council; or", "", "I can get help from the council.",
     "Can you get help from the council?"),
    ("Consume retail marijuana in a retail marijuana establishment",
     "Except as otherwise provided in this chapter, a person may not:",
     "I may not consume retail marijuana in a retail marijuana establishment.",
     "May you not consume retail marijuana in a retail marijuana establishment?"),
]


@pytest.mark.parametrize("condition, lead, statement, question", CASES)
def test_to_user_voice(condition, lead, statement, question):
    assert to_user_voice(condition, lead) == statement


@pytest.mark.parametrize("condition, lead, statement, question", CASES)
def test_to_question(condition, lead, statement, question):
    assert to_question(condition, lead) == question


@pytest.mark.parametrize("condition", [
    "Applicants who are students cannot apply", "You must not be in full-time education.",
    "The applicant does not own a home.", "you don't have any savings", "you're not a UK citizen",
])
def test_a_negated_condition_is_stated_negated_and_asked_in_its_positive_form(condition):
    """"Are you not a UK citizen?" leaves a "no" meaning either; the reply is read against the condition."""
    statement, question = to_user_voice(condition), to_question(condition)
    assert any(n in statement for n in ("not", "n't")), statement
    assert not any(n in question for n in ("not", "n't")), question


@pytest.mark.parametrize("condition, negated", [
    ("The applicant has a driving licence.", "I do not have a driving licence."),
    ("you don't smoke", "I smoke."),
    ("The applicant is married.", "I am not married."),
    ("have no children", "I have children."),
    ("you have never been married", "I have been married."),
    ("The applicant lives in Scotland.", "I do not live in Scotland."),
    ("your employer is based in Calvera", "My employer is not based in Calvera."),
    ("you can apply", "I cannot apply."),
    ("You must not be in full-time education.", "I am in full-time education."),
    ("you lived abroad", "I did not live abroad."),
    ("you're self-employed", "I'm not self-employed."),
    ("Applicants who are students cannot apply", "I am not a student and I cannot apply."),
    # an adverb that presupposes the positive goes with it (sample KB, Carer's Allowance; ShARC-style phrasing)
    ("The person you care for must already get a qualifying disability benefit",
     "The person I care for does not get a qualifying disability benefit."),
    ("you have already applied for the full student loan", "I have not applied for the full student loan."),
    ("you still live in Calvera", "I do not live in Calvera."),
    ("you are usually resident in Calvera", "I am not usually resident in Calvera."),
])
def test_negated_user_voice_states_the_opposite(condition, negated):
    assert to_user_voice(condition, negate=True) == negated


def test_third_person_role_conditions_become_first_person_like_the_training_pairs():
    """scripts/nli_augment.py pairs "I live in Scotland." with "The applicant lives in Scotland."."""
    for role in ("The applicant", "The employee", "The claimant", "The tenant"):
        assert to_user_voice(f"{role} lives in Scotland.") == "I live in Scotland."
        assert to_user_voice(f"{role} is a UK citizen.") == "I am a UK citizen."
        assert to_user_voice(f"{role} has a driving licence.") == "I have a driving licence."


def test_rewrites_are_deterministic_and_do_not_change_their_input():
    condition = "* have worked for your employer for 26 weeks"
    assert to_user_voice(condition, SMP_LEAD) == to_user_voice(condition, SMP_LEAD)
    assert condition == "* have worked for your employer for 26 weeks"


@pytest.mark.parametrize("bad", ["", "   ", "* ;", "and"])
def test_empty_condition_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="condition is empty"):
        to_user_voice(bad)
    with pytest.raises(ValueError, match="condition is empty"):
        to_question(bad)


def test_non_text_is_rejected():
    with pytest.raises(TypeError):
        to_user_voice(None)


@pytest.mark.parametrize("lemma, form, expected", [
    ("open", "past", "opened"), ("stop", "past", "stopped"), ("build", "past", "built"), ("cost", "past", "cost"),
    ("carry", "past", "carried"), ("be", "past", "was"), ("cover", "third", "covers"), ("open", "base", "open"),
    ("occur", "past", "occurred"), ("admit", "past", "admitted"), ("offer", "past", "offered"),
    ("visit", "past", "visited"),
])
def test_inflect(lemma, form, expected):
    assert voice.inflect(lemma, form) == expected
