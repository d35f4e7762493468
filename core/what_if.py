"""What would change the verdict: the gate thresholds nearest to flipping the action, and the signal
value each must cross — read from the gate's own comparisons and checked by deciding again.

For a teacher or a demo: "the answer stands until Sufficiency < moves above 0.43". Pure arithmetic
over a trace's signals (``decide`` only, no model call), so it can run on every slider move.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from core import settings as settings_mod
from core.gate import decide
from core.gate.rules import places_to_tell
from core.types import Decision, Trace


@dataclass(frozen=True)
class VerdictChange:
    """Moving ``setting`` from ``current`` to ``threshold`` (across the signal's ``value``) makes the
    gate take ``action`` by ``rule``; ``threshold`` lies on the slider's grid."""
    setting: str
    label: str
    current: float
    signal: str
    value: float
    threshold: float
    action: str
    rule: str

    @property
    def distance(self) -> float:
        return abs(self.threshold - self.current)

    @property
    def direction(self) -> str:
        return "raise" if self.threshold > self.current else "lower"


def _thresholds_read(trace: Trace, values: Mapping[str, Any], base: Decision, name: str) -> list[tuple[str, float]]:
    """(signal, value) of every comparison whose threshold is the setting ``name`` — found by nudging
    the setting and seeing which thresholds move, so no second table of rule → setting is kept."""
    setting = settings_mod.BY_NAME[name]
    step = setting.step if setting.kind == "int" else setting.step / 2  # a whole-number setting moves by whole steps
    nudge = step if values[name] + step <= setting.high else -step
    moved = decide(trace, {**values, name: values[name] + nudge})
    found = []
    for before, after in zip(base.rules, moved.rules):
        for c, d in zip(before.comparisons, after.comparisons):
            if c.threshold != d.threshold:
                found.append((c.signal, c.value))
    return found


def _grid(setting: settings_mod.Setting, x: float, up: bool) -> list[float]:
    """Slider positions just past ``x`` in one direction (the point on it, then the next one)."""
    steps = (x - setting.low) / setting.step
    first = math.floor(steps + 1e-9) if not up else math.ceil(steps - 1e-9)
    points = [setting.low + k * setting.step for k in ((first, first - 1) if not up else (first, first + 1))]
    return [round(p, 6) for p in points if setting.low <= p <= setting.high]


def verdict_changes(trace: Trace, values: Mapping[str, Any] | None = None, limit: int = 2) -> list[VerdictChange]:
    """The ``limit`` gate thresholds whose smallest move changes the action, nearest first (empty
    for the learned gate, whose thresholds are not the sliders')."""
    values = settings_mod.resolve(values)
    if values["gate_model"] != "rules":
        return []
    base = decide(trace, values)
    found: list[VerdictChange] = []
    for setting in settings_mod.SETTINGS:
        if setting.group != "thresholds":
            continue
        current = float(values[setting.name])
        best: VerdictChange | None = None
        for signal, value in _thresholds_read(trace, values, base, setting.name):
            for threshold in _grid(setting, value, up=value >= current):
                if threshold == current:
                    continue
                moved = decide(trace, {**values, setting.name: threshold})
                if moved.action != base.action:
                    change = VerdictChange(setting.name, setting.label or setting.name, current, signal, value,
                                           threshold, moved.action, moved.rule)
                    if best is None or change.distance < best.distance:
                        best = change
                    break
        if best is not None:
            found.append(best)
    return sorted(found, key=lambda c: c.distance)[:limit]


def describe(change: VerdictChange) -> str:
    """One plain sentence for the card. The signal is shown to as many places as tell it from the new threshold
    (a P(topic covered) of 0.9996 shown as 1.000 read as if raising the bar to 1 could not pass it)."""
    places = places_to_tell(change.value, change.threshold)
    return (f"{change.direction.title()} “{change.label}” from {change.current:g} to {change.threshold:g} "
            f"(past {change.signal} = {change.value:.{places}f}) and the verdict becomes {change.action} "
            f"(rule {change.rule}).")
