"""The signal table: many traces' signals as numpy columns, and the rule gate replayed over it.

What re-gating, sweeps, calibration and the learned gate read. ``regate`` applies the rule gate
to a whole table at once: it replays ``RULES`` themselves, each rule run once per row with
marked thresholds to record its comparisons' values, operators and the setting each reads
(``compile_rules``), so a new or reordered rule needs no change here, and a test holds the
result equal to ``decide_signals`` item by item. Re-gating 1,000 traces then takes well under a
millisecond, which is what makes threshold sweeps cheap. numpy only: no model, no scikit-learn.
"""
from __future__ import annotations

import typing
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Mapping, Sequence

import numpy as np

from core import settings as settings_mod
from core.gate.rules import RULE_NAMES, RULES, decide_signals
from core.types import ACTIONS, Signals, Trace

OUTCOMES = ("satisfied", "failed", "undetermined", "none")
NUMERIC_SIGNALS = tuple(name for name, tp in typing.get_type_hints(Signals).items() if tp in (float, int))


@dataclass(frozen=True)
class SignalTable:
    """The signals of many traces as columns: what re-gating, sweeps and the learned gate read."""
    columns: dict[str, np.ndarray]  # numeric Signals fields, "amb:<heuristic>", "ctx:…" (from traces)
    outcome: np.ndarray  # condition_outcome strings
    has_passages: np.ndarray  # bool
    signals: tuple[Signals, ...] = field(repr=False)

    @classmethod
    def from_signals(cls, signals: Sequence[Signals], has_passages: Sequence[bool] | None = None) -> "SignalTable":
        signals = tuple(signals)
        columns = {name: np.array([getattr(s, name) for s in signals], dtype=float) for name in NUMERIC_SIGNALS}
        heuristics = sorted({k for s in signals for k in s.ambiguity_heuristics})
        for k in heuristics:
            columns[f"amb:{k}"] = np.array([s.ambiguity_heuristics.get(k, 0.0) for s in signals], dtype=float)
        passages = np.ones(len(signals), bool) if has_passages is None else np.asarray(has_passages, bool)
        return cls(columns, np.array([s.condition_outcome for s in signals], dtype=object), passages, signals)

    @classmethod
    def from_traces(cls, traces: Sequence[Trace]) -> "SignalTable":
        """Signals plus the columns only a whole trace has: the dialogue context ("ctx:…") and the
        strongest NLI and retrieval scores ("nli:…", "ret:…")."""
        table = cls.from_signals([t.signals for t in traces], [bool(t.passages) for t in traces])
        rows = [{**context_features(t), **evidence_features(t)} for t in traces]
        for name in TRACE_FEATURES:
            table.columns[name] = np.array([r[name] for r in rows], dtype=float)
        return table

    def __len__(self) -> int:
        return len(self.signals)

    def take(self, index: np.ndarray | Sequence[int]) -> "SignalTable":
        idx = np.asarray(index)
        idx = np.flatnonzero(idx) if idx.dtype == bool else idx.astype(int)
        sub = SignalTable({k: v[idx] for k, v in self.columns.items()}, self.outcome[idx],
                          self.has_passages[idx], tuple(self.signals[i] for i in idx))
        if "compiled" in self.__dict__ and self.compiled is not None:  # slice it rather than recompile
            sub.__dict__["compiled"] = tuple(
                (switch, code, tuple((v[idx], op, t.take(idx) if isinstance(t, RowThresholds) else t)
                                     for v, op, t in comparisons))
                for switch, code, comparisons in self.compiled)
        return sub

    @cached_property
    def compiled(self):
        """The gate rules compiled over these rows (see ``compile_rules``); computed on first re-gate."""
        return compile_rules(self)

    def column(self, name: str) -> np.ndarray:
        """A numeric column, an ambiguity heuristic ("amb:short_query") or an outcome one-hot ("outcome:failed")."""
        if name.startswith("outcome:"):
            return (self.outcome == name.split(":", 1)[1]).astype(float)
        if name.startswith("amb:") and name not in self.columns:
            return np.zeros(len(self), float)  # a heuristic none of these signals reported
        return self.columns[name]

    def feature_columns(self) -> dict[str, np.ndarray]:
        """Every numeric column plus the outcome one-hots (for AUROC tables and the learned gate)."""
        out = dict(self.columns)
        out.update({f"outcome:{o}": self.column(f"outcome:{o}") for o in OUTCOMES})
        return out


RULE_LABELS = ("default_answer", "no_passages", *RULE_NAMES)  # Gated.rule_index → rule name


CONTEXT_FEATURES = ("ctx:history_turns", "ctx:history_yes", "ctx:history_no", "ctx:scenario_words",
                    "ctx:established")


def context_features(trace: Trace) -> dict[str, float]:
    """How much the user has already told: answered follow-ups (and how), scenario length, conditions
    established. ``Signals`` lacks these, yet on ShARC the number of answered follow-ups separates
    ANSWER from ASK better than any signal (AUROC 0.70); the learned gate reads them from the trace."""
    answers = [a.strip().lower() for _, a in trace.query.history]
    return {"ctx:history_turns": float(len(answers)),
            "ctx:history_yes": float(sum(a.startswith("yes") for a in answers)),
            "ctx:history_no": float(sum(a.startswith("no") for a in answers)),
            "ctx:scenario_words": float(len(trace.query.scenario.split())),
            "ctx:established": float(sum(c.status == "established" for c in trace.variables.conditions))}


EVIDENCE_FEATURES = ("nli:max_entailment", "nli:max_contradiction", "ret:top_dense", "ret:top_bm25")
TRACE_FEATURES = CONTEXT_FEATURES + EVIDENCE_FEATURES
TRACE_PREFIXES = ("ctx:", "nli:", "ret:")  # columns SignalTable.from_traces adds to the signals


def evidence_features(trace: Trace) -> dict[str, float]:
    """The strongest passage-level NLI and retrieval scores. The signals summarise them through the
    claim's schema and the entailment filter; on ContractNLI the raw maxima add to the learned gate
    (out-of-fold macro-F1 0.698 → 0.716 over three seeds, ShARC unchanged at 0.797)."""
    return {"nli:max_entailment": max((n.claim.entailment for n in trace.nli), default=0.0),
            "nli:max_contradiction": max((n.claim.contradiction for n in trace.nli), default=0.0),
            "ret:top_dense": max((p.dense for p in trace.passages), default=0.0),
            "ret:top_bm25": max((p.bm25 for p in trace.passages), default=0.0)}


@dataclass(frozen=True)
class Gated:
    """Actions (and the deciding rule) for every row of a table under one configuration."""
    codes: np.ndarray  # ACTIONS index per item
    rule_index: np.ndarray  # RULE_LABELS index of the deciding rule per item

    @property
    def actions(self) -> np.ndarray:
        return np.array(ACTIONS, dtype=object)[self.codes]

    @property
    def rules(self) -> np.ndarray:
        return np.array(RULE_LABELS, dtype=object)[self.rule_index]


_CODE = {a: i for i, a in enumerate(ACTIONS)}
_OPS = {"<": np.less, ">": np.greater, ">=": np.greater_equal, "<=": np.less_equal, "==": np.equal}
_MARK = 1e12  # thresholds are looked up as _MARK + k, so each comparison shows which setting it reads

@dataclass(frozen=True, eq=False)
class RowThresholds:
    """A comparison whose threshold source differs between rows (a statement to check is held to
    ``statement_fact_min``, a question to ``fact_min``): each row's index into ``sources``."""
    sources: tuple[Any, ...]  # setting names or literals
    index: np.ndarray

    def take(self, idx: np.ndarray) -> "RowThresholds":
        return RowThresholds(self.sources, self.index[idx])

    def thresholds(self, values: Mapping[str, Any]) -> np.ndarray:
        """Each row's threshold under ``values``."""
        return np.array([_threshold(s, values) for s in self.sources], dtype=float)[self.index]


# A rule compiled over a table: (switch name, action code, ((values, op, threshold source), ...)), the
# threshold source a setting name, a literal or a RowThresholds.
CompiledRule = tuple[str, int, tuple[tuple[np.ndarray, str, Any], ...]]


def compile_rules(table: SignalTable) -> tuple[CompiledRule, ...] | None:
    """Run every gate rule once per row with marked thresholds and keep each comparison's signal
    values, operator and threshold source. A comparison's value depends only on the signals, so
    any configuration is then gated with numpy alone, by the very rules in ``core.gate`` (a new
    or reordered rule needs no change here). None if a rule does something this cannot replay
    (arithmetic on a threshold, operators or numbers of comparisons that differ between rows):
    ``regate`` then loops."""
    names = list(settings_mod.BY_NAME)
    marked = {name: _MARK + k for k, name in enumerate(names)}

    def source(threshold: float) -> Any:
        if threshold < _MARK / 10:
            return threshold
        k = threshold - _MARK
        return names[int(k)] if k == int(k) and 0 <= k < len(names) else None

    compiled = []
    for rule, action, compare, _ in RULES:
        rows = [compare(s, marked) for s in table.signals]
        if len({tuple(c.op for c in row) for row in rows}) > 1:
            return None
        comparisons = []
        for j in range(len(rows[0]) if rows else 0):
            sources = [source(row[j].threshold) for row in rows]
            if None in sources:
                return None
            distinct = tuple(dict.fromkeys(sources))
            threshold = distinct[0] if len(distinct) == 1 else RowThresholds(
                distinct, np.array([distinct.index(s) for s in sources], dtype=np.int64))
            comparisons.append((np.array([row[j].value for row in rows], dtype=float), rows[0][j].op, threshold))
        compiled.append((f"rule_{rule}", _CODE[action], tuple(comparisons)))
    return tuple(compiled)


def _threshold(source: Any, values: Mapping[str, Any]) -> Any:
    """A comparison's threshold under ``values``: a setting's value, a literal, or each row's (``RowThresholds``)."""
    if isinstance(source, RowThresholds):
        return source.thresholds(values)
    return values[source] if isinstance(source, str) else source


def regate(table: SignalTable, values: Mapping[str, Any] | None = None) -> Gated:
    """The rule gate over every row of ``table`` (``values`` may be partial: defaults fill the rest)."""
    return gate_table(table, settings_mod.resolve(values))


def gate_table(table: SignalTable, values: Mapping[str, Any]) -> Gated:
    """``regate`` with every setting given (the inner loop of sweeps and searches: no resolving)."""
    compiled = table.compiled
    if compiled is None:
        decisions = [decide_signals(s, values, bool(p)) for s, p in zip(table.signals, table.has_passages)]
        return Gated(np.array([_CODE[d.action] for d in decisions], dtype=np.int64),
                     np.array([RULE_LABELS.index(d.rule) for d in decisions], dtype=np.int64))
    n = len(table)
    codes = np.zeros(n, dtype=np.int64)
    rule_index = np.zeros(n, dtype=np.int64)
    open_ = table.has_passages.copy()
    codes[~open_] = _CODE["ABSTAIN"]
    rule_index[~open_] = 1
    for k, (switch, code, comparisons) in enumerate(compiled, start=2):
        if not values[switch]:
            continue
        fires = open_.copy()
        for signal_values, op, threshold in comparisons:
            fires &= _OPS[op](signal_values, _threshold(threshold, values))
        codes[fires] = code
        rule_index[fires] = k
        open_ &= ~fires
    return Gated(codes, rule_index)
