"""Every prompt the generator sees, in one place.

The local model is SmolLM2-135M: it follows a short instruction only when it has seen the
pattern, so the rewriting prompts (step-back, claim, premises) are few-shot, as chat turns.
The agent prompts are the ones of seed 002 appendix A (A.2 answer, A.3 ask, A.4 abstain);
they are sent only to a capable backend. The examples use topics outside the sample
knowledge base so that a test cannot pass by the model copying an example.
"""
from __future__ import annotations

from typing import Sequence

Messages = list[dict[str, str]]

# Seed 002 A.3 / A.4 deterministic fallbacks.
ASK_TEMPLATE = "Regarding {anchor}: could you specify {missing}?"
ABSTAIN_TEMPLATE = "I'm unable to answer this query. {reason} You may want to consult a specialised source."


def _few_shot(system: str, examples: Sequence[tuple[str, str]], user: str) -> Messages:
    messages = [{"role": "system", "content": system}]
    for question, answer in examples:
        messages += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    messages.append({"role": "user", "content": user})
    return messages


# --- step-back (seed 003) ---------------------------------------------------------------

STEPBACK_SYSTEM = ("Rewrite the user's specific question as a more general step-back question about the "
                   "rule, topic or background behind it. Drop personal details, numbers and dates. "
                   "Reply with the general question only.")
STEPBACK_EXAMPLES = (
    ("Can I get Housing Benefit if I am 24 and rent a flat in Leeds?", "Who is eligible for Housing Benefit?"),
    ("Which school did Estella Leopold attend between August 1954 and November 1954?",
     "What was Estella Leopold's education history?"),
    ("How much Child Benefit does a parent of three children get per week?", "How is Child Benefit calculated?"),
    ("May the recipient show the supplier's price list to its auditors?",
     "What may the recipient do with confidential information?"),
)


def stepback(question: str) -> Messages:
    return _few_shot(STEPBACK_SYSTEM, STEPBACK_EXAMPLES, question)


# --- claim rewriting (seed 001's three schemas, plus yes/no → statement) -----------------

CLAIM_SYSTEM = ("Rewrite the question as one claim that a passage containing the answer would support. "
                "Reply with the claim only.")
# Examples per schema: the rule-based claim builder already knows the question's schema, and
# the small model copies the form of examples far more reliably than it follows a description.
CLAIM_EXAMPLES = {
    "existential": (
        ("Who wrote the novel Middlemarch?", "There exists a person who wrote the novel Middlemarch."),
        ("When was the Eiffel Tower completed?", "There exists a date when the Eiffel Tower was completed."),
        ("How much does a passport renewal cost?", "There exists an amount that a passport renewal costs."),
    ),
    "comparative": (
        ("Which is older, Oxford or Cambridge?", "One of Oxford or Cambridge is older."),
        ("Who was born first, Keith Bostic or Jerry Glanville?", "One of Keith Bostic or Jerry Glanville was born first."),
    ),
    "conjunctive": (
        ("Are Ferocactus and Silene both types of plant?", "Ferocactus and Silene are both types of plant."),
        ("Do Scott Derrickson and Ed Wood have the same nationality?",
         "Scott Derrickson and Ed Wood have the same nationality."),
    ),
    "polar": (
        ("Can I claim Child Benefit for my nephew?", "I can claim Child Benefit for my nephew."),
        ("Is the Sydney Opera House a listed building?", "The Sydney Opera House is a listed building."),
        ("Does my employer have to pay me during jury service?", "My employer has to pay me during jury service."),
    ),
}


def claim(question: str, schema: str) -> Messages:
    """Few-shot with examples of the schema the rules found (seed 001's three, or polar)."""
    if schema not in CLAIM_EXAMPLES:
        raise ValueError(f"no claim examples for schema {schema!r}; known: {', '.join(CLAIM_EXAMPLES)}")
    return _few_shot(CLAIM_SYSTEM, CLAIM_EXAMPLES[schema], question)


# --- abductive premises (seed 000: "What assumption would make reasoning possible?") -----

PREMISES_SYSTEM = ("The evidence does not fully answer the question. Write the missing premises: short "
                   "factual statements that, if true, would let the evidence answer the question. "
                   "One statement per line, no numbering.")
PREMISES_EXAMPLES = (
    ("Question: Can I get Carer's Allowance?\n"
     "Evidence: You can get Carer's Allowance if you care for someone for at least 35 hours a week.\n"
     "Known: I look after my mother.\nWrite 2 missing premises.",
     "I care for my mother for at least 35 hours a week.\nMy mother needs care for at least 35 hours a week."),
    ("Question: In which city was the architect of Tower Bridge born?\n"
     "Evidence: Tower Bridge was designed by the architect Horace Jones.\nKnown: none\n"
     "Write 2 missing premises.",
     "Horace Jones was born in London.\nThe architect of Tower Bridge was born in the city of London."),
)


def premises(question: str, evidence: Sequence[str], known: Sequence[str], m: int) -> Messages:
    user = (f"Question: {question}\nEvidence: {' '.join(evidence) or 'none'}\n"
            f"Known: {'; '.join(known) or 'none'}\nWrite {m} missing premises.")
    return _few_shot(PREMISES_SYSTEM, PREMISES_EXAMPLES, user)


# --- agents (seed 002 appendix A) ----------------------------------------------------------

def _history_block(history: Sequence[tuple[str, str]]) -> str:
    turns = [f"Q: {q}\nA: {a}" for q, a in list(history)[-3:]]
    return ("Conversation so far:\n" + "\n".join(turns) + "\n\n") if turns else ""


def answer(query: str, sources: Sequence[tuple[str, str]], history: Sequence[tuple[str, str]] = ()) -> Messages:
    """A.2: context-grounded answering; ``sources`` are (label, text) pairs."""
    context = "\n\n".join(f"[Source {i} | {label}]\n{text}" for i, (label, text) in enumerate(sources, 1))
    user = ("You are a knowledgeable assistant. Answer the query using ONLY the provided context. "
            "Be concise and factual.\n\n"
            f"{_history_block(history)}Query: {query}\n\nContext:\n\n{context}\n\nAnswer:")
    return [{"role": "user", "content": user}]


def ask(query: str, missing: str, known: Sequence[str], history: Sequence[tuple[str, str]] = ()) -> Messages:
    """A.3: exactly one clarification question about ``missing``."""
    user = ("Ask ONE focused clarification question to help answer the user's query.\n\n"
            f"{_history_block(history)}User query: {query}\n\nMissing information: {missing}\n"
            f"Known context: {'; '.join(known) or 'none'}\n\n"
            "Rules:\n- Ask exactly ONE question ending with ?\n- Be specific about what is missing\n"
            "- Reference the query topic directly\n\nClarification question:")
    return [{"role": "user", "content": user}]


def abstain(query: str, reason: str, history: Sequence[tuple[str, str]] = ()) -> Messages:
    """A.4: a brief, honest refusal that states ``reason``."""
    note = ("Already resolved in earlier turns: " + "; ".join(q for q, _ in history) + "\n") if history else ""
    user = ("You cannot answer the following query from the available knowledge base.\n"
            "Write a brief, honest refusal. Explain why you cannot answer.\nDo NOT make up information.\n\n"
            f"{note}Query: {query}\n\nReason: {reason}\n\nYour response:")
    return [{"role": "user", "content": user}]
