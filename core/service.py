"""One path from a question to what the user reads: analyse → decide → respond.

``Workbench(kb).ask(query, settings)`` returns an ``Outcome``: the Trace (every model stage,
computed once and cached per stage), the gate's Decision (no model call) and the Response the
agents wrote for it, with seed 004's answer-level checks. The Inspect page (through
``app.wiring``), ``python -m core ask`` and ``chat``, the clarification dialogue and the batch
runner all go through here, so each shows the same action and text for the same question and
settings.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

from core import models as models_mod
from core import settings as settings_mod
from core.agents import clarification_question, respond_checked
from core.gate import decide
from core.generation import Backend, backend_for
from core.models import Models
from core.pipeline import Pipeline, make_query
from core.types import Decision, Query, Response, RuleResult, Trace, to_dict


@dataclass(frozen=True)
class Outcome:
    """A question's analysis, the gate's decision on it and the response written for that decision.

    ``response.action`` is what the user gets: an answer-level check (``checks``) can withhold an
    ANSWER the gate gave, and a clarification already asked turns into ABSTAIN."""
    trace: Trace
    decision: Decision
    response: Response
    checks: tuple[RuleResult, ...] = ()  # seed 004's grounding and hedging checks (ANSWER only)

    @property
    def action(self) -> str:
        return self.response.action


def respond(trace: Trace, decision: Decision, values: Mapping[str, Any] | None = None, asked: Sequence[str] = (),
            generator: Backend | None = None, models: Models | None = None) -> tuple[Response, tuple[RuleResult, ...]]:
    """The response to ``decision``: for ASK the one clarification about a condition not in ``asked``
    (condition texts of earlier turns), else the answer or refusal with the answer-level checks.
    ``generator`` overrides the ``generator`` setting; ``models`` (default: those in use) embed, parse
    and check the answer."""
    with models_mod.using(models):
        return _respond(trace, decision, settings_mod.resolve(values), asked, generator)


def _respond(trace: Trace, decision: Decision, values: Mapping[str, Any], asked: Sequence[str],
             generator: Backend | None) -> tuple[Response, tuple[RuleResult, ...]]:
    if decision.action != "ASK":
        return respond_checked(trace, decision, values, generator)
    setup = ""
    if generator is None:
        generator, setup = backend_for(values)
    response = clarification_question(trace, decision, asked, generator, values["ask_repeat_similarity"])
    if setup:
        response = replace(response, warning="; ".join(w for w in (response.warning, setup) if w))
    return response, ()


def conclude(trace: Trace, values: Mapping[str, Any] | None = None, generator: Backend | None = None,
             models: Models | None = None) -> Outcome:
    """Decide and respond for an analysed trace (what the batch runner calls on cached traces)."""
    values = settings_mod.resolve(values)
    decision = decide(trace, values)
    response, checks = respond(trace, decision, values, generator=generator, models=models)
    return Outcome(trace, decision, response, checks)


@dataclass
class Workbench:
    """The analysis pipeline over one knowledge base, and the one ``ask``.

    One Workbench may serve several threads (the app's sessions): different questions are analysed
    side by side, the same question in turn (the stage caches are thread-safe). ``pipeline`` is anything with ``analyze(query, settings) -> Trace``; by default
    the real Pipeline over ``kb`` with ``models``. ``models`` default to the pipeline's, else the
    process's one ``core.models.DEFAULT``."""
    kb: Any
    pipeline: Any = None
    models: Models | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)  # guards ``turns``
    turns: dict[str, list] = field(default_factory=dict, repr=False)  # question -> [its lock, callers on it]

    def __post_init__(self):
        if self.models is None:
            self.models = getattr(self.pipeline, "models", None) or models_mod.DEFAULT
        if self.pipeline is None:
            self.pipeline = Pipeline(self.kb, self.models)

    def analyze(self, query: Query | str, settings: Mapping[str, Any] | None = None,
                on_wait: Callable[[], None] | None = None) -> Trace:
        """The trace of ``query``. Analyses of different questions run side by side (each model takes
        its calls in turn); callers asking the same question take turns, so the second finds the
        first's stage caches. ``on_wait`` is called once when this call must wait for another's."""
        query = make_query(query) if isinstance(query, str) else query
        key = json.dumps(to_dict(query), sort_keys=True)
        with self.lock:
            entry = self.turns.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        try:
            if not entry[0].acquire(blocking=False):
                if on_wait is not None:
                    on_wait()
                entry[0].acquire()
            try:
                return self.pipeline.analyze(query, settings)
            finally:
                entry[0].release()
        finally:
            with self.lock:  # the last caller done with a question drops its lock
                entry[1] -= 1
                if entry[1] == 0:
                    self.turns.pop(key, None)

    def busy(self) -> int:
        """How many questions are being analysed right now (for a queue notice)."""
        with self.lock:
            return sum(lock.locked() for lock, _ in self.turns.values())

    def ask(self, query: Query | str, settings: Mapping[str, Any] | None = None,
            generator: Backend | None = None) -> Outcome:
        """Analyse ``query``, decide and write the response."""
        values = settings_mod.resolve(settings)
        return conclude(self.analyze(query, values), values, generator, self.models)
