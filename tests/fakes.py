"""Stand-ins passed into the code under test (never patched into its modules): model roles, a
knowledge base and a pipeline. Real models and real text stay the rule; these make logic tests
fast and let them count and fail model calls."""
from __future__ import annotations

import re
import zlib
from dataclasses import replace

import numpy as np

from core.models import Models
from core.types import Condition, Query, VariableState
from core.variables import NO, YES, combine, still_open
from core.voice import to_question, to_user_voice
from tests.factories import signals
from tests.ui_factories import rich_trace

WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
CONDITIONS = ("are aged 66 or over", "have lived in Calvera for 5 years", "have a household income below £20,000")


class FakeModels(Models):
    """Model roles with a hashed bag-of-words embedder (L2-normalised like the real one, 64-d);
    spaCy and NLI stay real. Counts calls (``calls``) and embedded texts (``texts``); with
    ``fail_on_embed_call=n`` the n-th embed call raises (a crash mid-build)."""
    dim = 64

    def __init__(self, fail_on_embed_call: int | None = None, **sources: str):
        super().__init__(**sources)
        self.fail_on_embed_call = fail_on_embed_call
        self.texts = 0
        self.embedded: list[list[str]] = []

    def embed(self, texts, batch_size: int = 64):
        self.calls["embedder"] += 1
        if self.fail_on_embed_call is not None and self.calls["embedder"] >= self.fail_on_embed_call:
            raise RuntimeError("simulated crash while embedding")
        self.texts += len(texts)
        self.embedded.append(list(texts))
        return bag_of_words(texts, self.dim)

    def embedding_dim(self) -> int:
        return self.dim


def bag_of_words(texts, dim: int = 64) -> np.ndarray:
    """Deterministic unit vectors from hashed lower-cased words (no all-zero rows)."""
    out = np.zeros((len(texts), dim), dtype="float32")
    for i, text in enumerate(texts):
        for word in WORD.findall(text.lower()):
            out[i, zlib.crc32(word.encode()) % dim] += 1.0
    out[:, 0] += 1e-3
    return out / np.linalg.norm(out, axis=1, keepdims=True)


class FakeKB:
    """What the pages read of a knowledge base before analysing: its identity and problems."""
    fingerprint = "fake-kb"
    problems = ()


class FakePipeline:
    """A pipeline over one hand-made trace (``tests.ui_factories.rich_trace``), with fake model roles.

    With ``conditions`` its conditions resolve like the variables stage's: a yes/no reply to a
    condition's question establishes / contradicts it; "I am N" settles the age condition. Records
    each query and each analysis's settings."""

    def __init__(self, conditions: tuple[str, ...] | None = CONDITIONS, models: Models | None = None):
        self.conditions = conditions
        self.models = models or FakeModels()
        self.queries: list[Query] = []
        self.settings: list[dict] = []

    def analyze(self, query, overrides=None):
        self.queries.append(query)
        self.settings.append(dict(overrides or {}))
        base = rich_trace(question=query.question)
        if self.conditions is None:
            return base
        pid = base.passages[0].passage.id
        conds = []
        for text in self.conditions:
            status, support = "missing", ""
            for q, a in query.history:
                if q == to_question(text) and (YES.match(a) or NO.match(a)):
                    status, support = ("established" if YES.match(a) else "contradicted"), f"{q} {a}"
                elif text.startswith("are aged") and a.startswith("I am ") and a[5:7].isdigit():
                    status, support = ("established" if int(a[5:7]) >= 66 else "contradicted"), a
            conds.append(Condition(text, to_user_voice(text), "bullet", pid, status, support,
                                   method="history" if support else ""))
        outcome = combine(conds)
        missing = tuple(c.text for c in still_open(conds)) if outcome == "undetermined" else ()
        known = tuple(c.text for c in conds if c.status == "established")
        incompleteness = len(missing) / (len(known) + len(missing)) if known or missing else 0.0
        variables = VariableState(known, tuple(conds), missing, incompleteness, outcome)
        sig = signals(incompleteness=incompleteness, n_conditions=len(conds), n_missing=len(missing),
                      n_contradicted=sum(c.status == "contradicted" for c in conds), condition_outcome=outcome)
        return replace(base, query=query, variables=variables, signals=sig)


class RecordingModels(Models):
    """The real roles of ``real`` (loaded once, shared with it), recording every batch embedded."""

    def __init__(self, real: Models):
        super().__init__()
        self.real = real
        self.embedded: list[list[str]] = []

    def load(self, role, loader):
        return self.real.load(role, loader)

    def embed(self, texts, batch_size: int = 64):
        self.embedded.append(list(texts))
        return super().embed(texts, batch_size)
