"""The gate: ANSWER / ASK / ABSTAIN from a trace's signals and the thresholds, calling no model.

``rules``: the rule table and its one "first enabled rule that fires" loop, with every comparison
reported; ``table``: many traces' signals as numpy columns and the rules replayed over them;
``learned``: the learned gate's inference from its JSON file. Imports only ``core.types`` and
``core.settings`` (a test holds it so): fitting lives in ``core.evaluation``.
"""
from __future__ import annotations

from typing import Any, Mapping

from core import settings as settings_mod
from core.gate.rules import (FACT_ABSENT_RULES, RULE_NAMES, RULES, TOPIC_ABSENT_RULES, answer_polarity, compare,
                             comparison_text, decide_signals, first_that_fires)
from core.types import Decision, Trace

__all__ = ["FACT_ABSENT_RULES", "RULES", "RULE_NAMES", "TOPIC_ABSENT_RULES", "answer_polarity", "compare", "comparison_text", "decide", "decide_signals", "first_that_fires"]


def decide(trace: Trace, thresholds: Mapping[str, Any] | None = None) -> Decision:
    """ANSWER / ASK / ABSTAIN for a trace; ``thresholds`` override the declared defaults. With
    ``gate_model=learned`` the learned gate decides and the rules are reported as they evaluated."""
    values = settings_mod.resolve(thresholds)
    decision = decide_signals(trace.signals, values, has_passages=bool(trace.passages))
    if values["gate_model"] == "learned":
        from core.gate.learned import load_cached  # numpy only, and only when asked for
        return load_cached(values["learned_gate_file"]).as_decision(trace, decision, values["learned_gate_file"])
    return decision
