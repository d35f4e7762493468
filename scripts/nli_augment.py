"""Project-generated NLI pairs that teach the SNLI model a perspective shift.

SNLI pairs are photo captions; the workbench asks whether a user's first-person
statement ("I am 67 and live in Scotland") entails a rule's condition phrased in
the third person ("The applicant lives in Scotland"). These templated pairs are
mixed into training (and a held-out slice is kept for tests). Quantities are not
taught here: they are checked numerically in ``core.variables``.
"""
from __future__ import annotations

import random

ROLES = ["The applicant", "The employee", "The user", "The claimant", "The tenant",
         "The student", "The customer", "The worker", "The resident", "The caller"]

# (first-person fact, third-person condition, negated third-person condition)
FACTS = [
    ("I live in Scotland.", "{r} lives in Scotland.", "{r} does not live in Scotland."),
    ("I live in Wales.", "{r} lives in Wales.", "{r} does not live in Wales."),
    ("I am a UK citizen.", "{r} is a UK citizen.", "{r} is not a UK citizen."),
    ("I am married.", "{r} is married.", "{r} is not married."),
    ("I have two children.", "{r} has children.", "{r} has no children."),
    ("I own my home.", "{r} owns a home.", "{r} does not own a home."),
    ("I am self-employed.", "{r} is self-employed.", "{r} is not self-employed."),
    ("I work full time.", "{r} works full time.", "{r} does not work full time."),
    ("I am a registered carer.", "{r} is a registered carer.", "{r} is not a registered carer."),
    ("I am disabled.", "{r} has a disability.", "{r} has no disability."),
    ("I receive a state pension.", "{r} receives a state pension.", "{r} does not receive a state pension."),
    ("I am pregnant.", "{r} is pregnant.", "{r} is not pregnant."),
    ("I rent my flat from a private landlord.", "{r} rents from a private landlord.", "{r} does not rent from a private landlord."),
    ("I have a valid driving licence.", "{r} has a driving licence.", "{r} does not have a driving licence."),
    ("I am enrolled at a university.", "{r} is enrolled at a university.", "{r} is not enrolled at a university."),
    ("I was born in France.", "{r} was born in France.", "{r} was not born in France."),
    ("I am unemployed.", "{r} is unemployed.", "{r} has a job."),
    ("I have a job.", "{r} is employed.", "{r} is unemployed."),
    ("My business is a charity.", "{r}'s business is a charity.", "{r}'s business is not a charity."),
    ("I have paid National Insurance contributions.", "{r} has paid National Insurance contributions.", "{r} has not paid National Insurance contributions."),
    ("I am a veteran of the armed forces.", "{r} is a veteran.", "{r} is not a veteran."),
    ("I care for my elderly mother.", "{r} cares for a relative.", "{r} does not care for anyone."),
    ("My partner and I live together.", "{r} lives with a partner.", "{r} lives alone."),
    ("I don't have any savings.", "{r} has no savings.", "{r} has savings."),
    ("I am not a citizen of the UK.", "{r} is not a UK citizen.", "{r} is a UK citizen."),
    ("I don't work.", "{r} does not work.", "{r} works."),
    ("I have never been married.", "{r} is not married.", "{r} is married."),
    ("I run a small farm.", "{r} runs a farm.", "{r} does not run a farm."),
    ("I signed the agreement last year.", "{r} signed the agreement.", "{r} did not sign the agreement."),
    ("I am a member of the union.", "{r} is a union member.", "{r} is not a union member."),
]


# Facts about the same topic: never paired with each other as "neutral".
RELATED = [{2, 24}, {3, 26}, {16, 17, 25}, {4, 22}]


def _unrelated(i: int, j: int) -> bool:
    return i != j and not any(i in group and j in group for group in RELATED)


def generate_pairs(seed: int = 13) -> list[tuple[str, str, str]]:
    """(premise, hypothesis, label) triples in three balanced labels."""
    rng = random.Random(seed)
    pairs: list[tuple[str, str, str]] = []
    for i, (fact, cond, neg) in enumerate(FACTS):
        unrelated = [j for j in range(len(FACTS)) if _unrelated(i, j)]
        for role in ROLES:
            pairs.append((fact, cond.format(r=role), "entailment"))
            pairs.append((fact, neg.format(r=role), "contradiction"))
            other = FACTS[rng.choice(unrelated)]
            pairs.append((fact, other[1].format(r=role), "neutral"))
            # A fact embedded in a longer first-person scenario still entails.
            filler = rng.choice(["I am 40 years old.", "I have lived here for a while.",
                                 "Last month I moved house.", "I work in retail."])
            pairs.append((f"{filler} {fact}", cond.format(r=role), "entailment"))
    rng.shuffle(pairs)
    return pairs
