"""Multi-turn clarification (seed 002 §3.8, §3.11): ask, read the reply, decide again.

A ``Dialogue`` is one question followed over turns. Each turn is the pipeline's analysis of the
question with every reply so far in its history, the gate's decision on it and, when the gate
asks, the one clarification put to the user. A reply joins the history as (clarification, reply)
and the question is analysed again — S_{t+1} = S_t ∪ resolve(q_t, a_t) (Eq. 20). The question is
unchanged, so the Pipeline's stage caches serve retrieval, evidence, the claim and NLI; only the
variables stage (which reads a yes/no reply as an answered follow-up and any other reply as a
stated fact) and the cheap stages after it run again.

Each turn records the conditions the previous reply settled and ρ_t = |V_known| / (|V_known| +
|V_missing|) (Eq. 15). No condition is asked about twice: a reply that settles nothing is said
so, the next question targets a condition still open, and when everything open was asked
already the dialogue abstains and says why. Dialogues are immutable: ``answer``, ``rewind``,
``regate`` and ``replay`` return new ones, so "start over" and editing an earlier reply are pure.
A turn's clarification is written by ``core.service.respond``, as every other response; printing a
dialogue is the command line's (``core.cli``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Protocol, Sequence

from core import settings as settings_mod
from core.gate import decide
from core.pipeline import make_query
from core.service import respond
from core.text import STOPWORDS, normalized
from core.types import Condition, Decision, Query, Response, Trace

MAX_REPLY_CHARS = 2000


class DialogueError(ValueError):
    """A reply or an edit the dialogue cannot take; the message says why and what to do."""


class Analyser(Protocol):
    def analyze(self, query: Query, overrides: Mapping[str, Any] | None = None) -> Trace: ...


@dataclass(frozen=True)
class Turn:
    """One analysis of the question and what the dialogue did with it.

    ``action`` is the gate's, except that the dialogue abstains when the gate asks but everything
    still open was asked already (``override`` says so). ``resolved``: the conditions the previous
    reply moved out of missing, with their new status; ``note`` tells the user what it settled.
    """
    trace: Trace
    decision: Decision
    action: str
    question: str = ""  # the clarification put to the user (ASK)
    target: str = ""  # what it asks about: a condition's text, or what else is missing
    kind: str = ""  # condition | premise | which_one | age | generated (the ASK agent's kinds)
    reply: str = ""  # the user's reply; "" while the turn is open
    resolved: tuple[Condition, ...] = ()
    rho: float = 1.0
    note: str = ""
    override: str = ""
    response: Response | None = None  # when the gate asks: the ASK agent's question, or its refusal (override)

    @property
    def answered(self) -> bool:
        return bool(self.reply)


def resolution_rate(trace: Trace) -> float:
    """ρ_t = |known| / (|known| + |missing|) (seed 002 Eq. 15); 1 when nothing is known or missing."""
    known, missing = len(trace.variables.known), len(trace.variables.missing)
    return known / (known + missing) if known + missing else 1.0


@dataclass(frozen=True)
class Dialogue:
    """One question over turns; the last turn is the current state."""
    workbench: Analyser = field(compare=False, repr=False)  # core.service.Workbench, or a stand-in
    query: Query  # the question, the scenario and any history given before the dialogue began
    values: dict[str, Any]  # the settings the next turn is analysed and decided with
    turns: tuple[Turn, ...]
    generator: Any = field(default=None, compare=False, repr=False)  # the ASK agent's; None: the generator setting

    @classmethod
    def start(cls, workbench: Analyser, query: Query | str, values: Mapping[str, Any] | None = None,
              generator: Any = None) -> "Dialogue":
        """Analyse the question (turn 0)."""
        query = make_query(query) if isinstance(query, str) else query
        empty = cls(workbench, query, settings_mod.resolve(values), (), generator)
        return replace(empty, turns=(empty._turn(query.history, None),))

    # --- the current state -------------------------------------------------------------

    @property
    def current(self) -> Turn:
        return self.turns[-1]

    @property
    def trace(self) -> Trace:
        return self.current.trace

    @property
    def decision(self) -> Decision:
        return self.current.decision

    @property
    def action(self) -> str:
        return self.current.action

    @property
    def done(self) -> bool:
        """True once the dialogue answers or abstains (nothing is asked)."""
        return self.current.action != "ASK"

    @property
    def history(self) -> tuple[tuple[str, str], ...]:
        """The given history, then every answered turn as (clarification, reply)."""
        return self.query.history + tuple((t.question, t.reply) for t in self.turns if t.answered)

    @property
    def asked(self) -> tuple[str, ...]:
        """What the turns asked about (condition texts), in order."""
        return self.asked_before(len(self.turns))

    # --- moves -----------------------------------------------------------------------------

    def answer(self, reply: str, question: str | None = None) -> "Dialogue":
        """Reply to the current clarification and analyse again.

        ``question`` names what was asked when it is not the dialogue's own question (a ShARC
        history turn, a question shown under other gate settings); it is taken as history even
        when the current turn does not ask.
        """
        reply = " ".join(str(reply or "").split())
        if not reply:
            raise DialogueError("The reply is empty: type an answer (or press yes / no).")
        if len(reply) > MAX_REPLY_CHARS:
            raise DialogueError(f"The reply is {len(reply):,} characters long; the limit is {MAX_REPLY_CHARS:,}. "
                                "Answer the question asked; put other background in the scenario.")
        current = self.current
        if question is None:
            if current.action != "ASK":
                raise DialogueError(f"Nothing is being asked: turn {len(self.turns) - 1} ends the dialogue with "
                                    f"{current.action}. Start over, or edit an earlier reply.")
            question = current.question
        question = " ".join(question.split())
        if not question:
            raise DialogueError("The question answered is empty: say which question the reply answers.")
        target = current.target if question == current.question else ""
        answered = replace(current, question=question, target=target, reply=reply)
        turns = self.turns[:-1] + (answered,)
        moved = replace(self, turns=turns)
        return replace(moved, turns=turns + (moved._turn(moved.history, answered),))

    def rewind(self, turn_index: int, new_reply: str | None = None) -> "Dialogue":
        """Re-open turn ``turn_index`` (0 = start over): later turns are dropped and, with
        ``new_reply``, the turn is answered again. Turns before it are kept as they are (their
        analyses depend only on what came before them)."""
        n = len(self.turns)
        if isinstance(turn_index, bool) or not isinstance(turn_index, int) or not 0 <= turn_index < n:
            raise DialogueError(f"There is no turn {turn_index!r}: the dialogue has {n} turn"
                                f"{'s' if n != 1 else ''} (0–{n - 1}).")
        turn = self.turns[turn_index]
        reopened = replace(self, turns=self.turns[:turn_index] + (replace(turn, reply=""),))
        if new_reply is None:
            return reopened
        if not turn.question:
            raise DialogueError(f"Turn {turn_index} asked nothing ({turn.action}), so it has no reply to edit.")
        return reopened.answer(new_reply, question=turn.question)

    def regate(self, values: Mapping[str, Any]) -> "Dialogue":
        """The current turn decided again under new gate settings: no analysis runs, and the ASK
        agent only when another rule now decides. Earlier turns stay as they happened."""
        values = settings_mod.resolve(values)
        current = self.current
        decision = decide(current.trace, values)
        moved = replace(self, values=values)
        if decision == current.decision:
            return moved
        if (decision.action, decision.rule) == (current.decision.action, current.decision.rule):
            turn = replace(current, decision=decision)  # same rule, other numbers: the same question stands
        else:
            turn = moved._decided(current.trace, decision, self.asked_before(len(self.turns) - 1),
                                  current.resolved, current.note)
        return replace(moved, turns=self.turns[:-1] + (turn,))

    def replay(self, values: Mapping[str, Any]) -> "Dialogue":
        """The same replies to the same questions, analysed under other settings."""
        again = Dialogue.start(self.workbench, self.query, values, self.generator)
        for turn in self.turns:
            if turn.answered:
                again = again.answer(turn.reply, question=turn.question)
        return again

    def asked_before(self, turn_index: int) -> tuple[str, ...]:
        """What turns before ``turn_index`` asked about."""
        return tuple(dict.fromkeys(t.target for t in self.turns[:turn_index] if t.target and t.question))

    # --- one turn ----------------------------------------------------------------------------

    def _turn(self, history: tuple[tuple[str, str], ...], previous: Turn | None) -> Turn:
        trace = self.workbench.analyze(self._as_analysed(history), self.values)
        decision = decide(trace, self.values)
        resolved, note = (), ""
        if previous is not None:
            was_missing = {c.text for c in previous.trace.variables.conditions if c.status == "missing"}
            resolved = tuple(c for c in trace.variables.conditions if c.text in was_missing and c.status != "missing")
            note = reply_note(previous, resolved)
        return self._decided(trace, decision, self.asked, resolved, note)

    def _as_analysed(self, history: tuple[tuple[str, str], ...]) -> Query:
        """The query a turn analyses: a reply to "which one do you mean?" names the thing the question is about
        ("When was it built (Harlow Bridge)?"), the latest such reply if several; it is no answer to a condition,
        so it stays out of the history the conditions are read from."""
        picked = [t for t in self.turns if t.answered and t.kind == "which_one"]
        if not picked:
            return replace(self.query, history=history)
        chosen = {(t.question, t.reply) for t in picked}
        return replace(self.query, question=with_referent(self.query.question, chosen_referent(picked[-1])),
                       history=tuple(turn for turn in history if turn not in chosen))

    def _decided(self, trace: Trace, decision: Decision, asked: Sequence[str], resolved: tuple[Condition, ...],
                 note: str) -> Turn:
        turn = Turn(trace, decision, decision.action, resolved=resolved, rho=resolution_rate(trace), note=note)
        if decision.action != "ASK":
            return turn
        response, _ = respond(trace, decision, self.values, asked, self.generator,
                              getattr(self.workbench, "models", None))
        if response.action != "ASK":
            return replace(turn, action=response.action, override=response.text, response=response)
        return replace(turn, question=response.text, target=response.target, kind=response.kind, response=response)


ORDINAL_CHOICE = {"first": 0, "1": 0, "second": 1, "2": 1, "third": 2, "3": 2, "fourth": 3, "4": 3}


def chosen_referent(turn: Turn) -> str:
    """What a reply to "which one do you mean: “A” or “B”?" (``turn.target``) chose: the option it names most of
    the words of ("I mean the Harlow Bridge"), else the one it picks by place ("the second", "2"), else the reply
    as typed (it may name a thing the question did not offer)."""
    def words(text: str) -> set[str]:
        return set(normalized(text).split()) - STOPWORDS
    options = re.findall(r"“([^”]+)”", turn.target)
    reply = normalized(turn.reply).split()
    said = set(reply)
    shares = [len(said & words(o)) / max(1, len(words(o))) for o in options]
    if shares and max(shares) > 0 and shares.count(max(shares)) == 1:
        return options[shares.index(max(shares))]
    places = [ORDINAL_CHOICE[w] for w in reply if w in ORDINAL_CHOICE]
    if len(places) == 1 and places[0] < len(options):
        return options[places[0]]
    if "last" in said and options:
        return options[-1]
    return turn.reply.strip().rstrip(".!")


def with_referent(question: str, referent: str) -> str:
    """The question with the thing it is about named after it: "When was it built?" and "Harlow Bridge" make
    "When was it built (Harlow Bridge)?", which retrieval, the claim and the answer's entity test all read."""
    return f"{question.rstrip().rstrip('?').rstrip()} ({referent})?"


def reply_note(previous: Turn, resolved: Sequence[Condition]) -> str:
    """What the reply to ``previous`` settled, in words ("" when nothing was asked)."""
    if not previous.question:
        return ""
    if previous.kind == "which_one":
        return f"Your reply chose “{chosen_referent(previous)}”: the question is now read as about it."
    listed = "; ".join(f"“{c.text}” ({c.status})" for c in resolved if c.text != previous.target)
    if previous.target and any(c.text == previous.target for c in resolved):
        status = next(c.status for c in resolved if c.text == previous.target)
        also = f" It also settled {listed}." if listed else ""
        return f"Your reply settled “{previous.target}” ({status}).{also}"
    if not previous.target and listed:
        return f"Your reply settled {listed}."
    what = f"“{previous.target}”" if previous.target else "any open condition"
    return f"Your reply “{_clip(previous.reply)}” did not settle {what}" + (
        f", but it settled {listed}." if listed else ".")


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + "…"


# --- evaluation: ShARC dialogue histories through the loop ------------------------------------

def decide_with_history(workbench: Analyser, item: Any, values: Mapping[str, Any] | None = None) -> Dialogue:
    """A labelled item (``question``, ``scenario``, ``history`` as attributes or keys; ShARC's
    follow_up_question / follow_up_answer too) run through the dialogue: the question and scenario
    make turn 0, each history answer is the reply to its question. The last turn is the decision."""
    get = item.get if isinstance(item, Mapping) else lambda name, default=None: getattr(item, name, default)
    base = make_query(get("question", ""), get("scenario", "") or "", get("history", ()) or ())
    dialogue = Dialogue.start(workbench, replace(base, history=()), values)
    for question, reply in base.history:
        if reply.strip() and question.strip():
            dialogue = dialogue.answer(reply, question=question)
    return dialogue
