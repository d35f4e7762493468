"""The learned gate's inference: calibrated logistic regression over the signals (HALT-RAG style).

Features are every numeric ``Signals`` field, each ambiguity heuristic, a one-hot of
``condition_outcome``, for a gate fitted on traces the dialogue context and the strongest NLI
and retrieval scores (``core.gate.table``), and optionally the rule gate's verdict ("rule:ASK", …)
under the gate settings stored in the file (the rules' reading of conditions and referents, which
a weighted sum of the signals does not rebuild: the gate then learns where to overrule them).

Two structures. "multinomial": one multinomial logistic regression over standardised features gives
raw probabilities of the three actions; per-action isotonic or Platt calibrators make them honest.
"two-stage": the order the rule gate decides in, as two binary regressions: is there an answer to
give at all (ABSTAIN or not), then, where there is, does it wait on the asker (ASK or ANSWER), each
calibrated; P(ASK) = (1 − P(ABSTAIN)) · P(ASK | not ABSTAIN). Each step is a two-way question with a
balance of its own: whether there is anything to answer is learned from every training domain (each
holds unanswerable questions), whether the answer waits on the asker only among the questions that
have one (training domains, cross-fitted: left out one domain at a time, objective 0.646 -> 0.723;
within the domains, grouped 5-fold, 0.745 -> 0.753; every draw up both ways).

The action is the calibrated probability's argmax, by default divided by each action's training share
("balanced"); a two-stage gate decides step by step, a step going to its rarer side where that side's
probability exceeds its training share ("balanced") or one half ("argmax"). An optional precision floor
raises the bar an ANSWER must clear.

The fitted gate is a small JSON file (coefficients, scaler, calibrators): no pickle, readable and
diffable. Loading and applying it needs numpy only; fitting it (scikit-learn) is
``core.evaluation.learned_gate.fit_learned_gate``.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from core import settings as settings_mod
from core.gate.rules import answer_polarity
from core.gate.table import OUTCOMES, TRACE_PREFIXES, SignalTable, gate_table
from core.types import ACTIONS, Decision, RuleResult, Signals, Trace

KIND = "answerability-workbench-learned-gate"
VERSION = 1
CALIBRATIONS = ("isotonic", "platt")
DECISIONS = ("balanced", "argmax")
STRUCTURES = ("multinomial", "two-stage")
PROJECT_ROOT = Path(__file__).resolve().parents[2]  # a relative gate file path starts here


def feature_names(table: SignalTable) -> list[str]:
    """What the gate reads: numeric signals, ambiguity heuristics, condition-outcome one-hots."""
    return list(table.columns) + [f"outcome:{o}" for o in OUTCOMES]


RULE_VERDICT = tuple(f"rule:{a}" for a in ACTIONS)  # the rule gate's action, one-hot


def gate_settings(values: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The gate-stage settings of ``values`` (defaults filling the rest): what a gate reading the rule
    gate's verdict stores, so that later changes to the declared defaults leave its inputs alone."""
    values = settings_mod.resolve(values)
    return {s.name: values[s.name] for s in settings_mod.SETTINGS if s.stage == "gate"}


def feature_matrix(table: SignalTable, names: Sequence[str], rule_settings: Mapping[str, Any] | None = None) -> np.ndarray:
    """The columns ``names`` of ``table``; "rule:<ACTION>" is 1 where the rule gate under
    ``rule_settings`` says that action."""
    if not len(table):
        return np.zeros((0, len(names)))
    verdict = None
    if any(n in RULE_VERDICT for n in names):
        if rule_settings is None:
            raise ValueError("a gate reading the rule gate's verdict needs the gate settings it was fitted with")
        verdict = gate_table(table, settings_mod.resolve(rule_settings)).codes
    return np.column_stack([(verdict == ACTIONS.index(n[5:])).astype(float) if n in RULE_VERDICT else table.column(n)
                            for n in names])


@dataclass(frozen=True)
class LearnedGate:
    """A fitted learned gate; build with ``fit`` or ``load``, use with ``decide`` / ``predict``."""
    features: tuple[str, ...]
    classes: tuple[str, ...]  # the actions seen in training, in ACTIONS order
    mean: np.ndarray
    scale: np.ndarray
    # multinomial: (n_classes, n_features), for two classes one row, for the second class; two-stage: two
    # rows, ABSTAIN against the rest, then ASK against ANSWER (zeros for a step its training data lacked)
    coef: np.ndarray
    intercept: np.ndarray
    calibration: str  # isotonic | platt
    # per class (multinomial) or per step (two-stage): {"x", "y"} (isotonic) or {"a", "b"} (platt)
    calibrators: tuple[dict[str, list[float]], ...]
    priors: np.ndarray  # training share of each class; two-stage: of ABSTAIN, and of ASK among the rest
    decision: str = "balanced"
    answer_threshold: float | None = None  # min calibrated P(ANSWER) to answer (from the precision floor)
    info: dict[str, Any] = field(default_factory=dict)
    rule_settings: dict[str, Any] | None = None  # the gate settings behind its "rule:…" features, if it reads them
    structure: str = "multinomial"  # or "two-stage" (the module docstring)

    # -- applying --
    def probabilities(self, table: SignalTable) -> np.ndarray:
        """Calibrated probabilities, shape (n, 3) in ACTIONS order (0 for actions not trained on)."""
        missing = [f for f in self.features
                   if not (f in table.columns or f in RULE_VERDICT or f.startswith(("outcome:", "amb:")))]
        if any(f.startswith(TRACE_PREFIXES) for f in missing):
            raise ValueError("this learned gate reads the dialogue context and passage scores: "
                             "give it the whole Trace, not bare Signals")
        if missing:
            raise ValueError(f"the learned gate was trained on signals these traces lack ({', '.join(missing)}): "
                             f"retrain it with `python -m core calibrate … --learned-gate`")
        Z = (feature_matrix(table, self.features, self.rule_settings) - self.mean) / self.scale
        if self.structure == "two-stage":
            return self.compose(*self.step_probabilities(Z))
        probs = self.calibrate(logistic_probabilities((self.coef, self.intercept), Z, len(self.classes)))
        out = np.zeros((len(table), len(ACTIONS)))
        for c, name in enumerate(self.classes):
            out[:, ACTIONS.index(name)] = probs[:, c]
        return out

    def predict(self, table: SignalTable) -> tuple[np.ndarray, np.ndarray]:
        """(action codes, probabilities) for every row; rows without passages abstain."""
        probs = self.probabilities(table)
        codes = self.choose(probs)
        codes[~table.has_passages] = ACTIONS.index("ABSTAIN")
        return codes, probs

    def decide(self, trace: Trace | Signals, has_passages: bool = True) -> tuple[str, dict[str, float]]:
        """The action for one question and the calibrated probability of each action.

        Pass the Trace: a gate trained on traces also reads the dialogue context and passage scores;
        bare Signals suffice only for a gate trained on a table made from signals.
        """
        if isinstance(trace, Trace):
            table = SignalTable.from_traces([trace])
        else:
            table = SignalTable.from_signals([trace], [has_passages])
        codes, probs = self.predict(table)
        return ACTIONS[codes[0]], {a: float(p) for a, p in zip(ACTIONS, probs[0])}

    def as_decision(self, trace: Trace, rule_decision: Decision, source: str = "") -> Decision:
        """The learned gate's Decision for one trace, in the shape ``core.gate.decide`` returns: a
        ``learned_gate`` entry that decides, then the rule gate's rules as they evaluated, none firing
        (so the gate trace still shows what each rule would have done)."""
        action, probs = self.decide(trace)
        shown = ", ".join(f"P({a}) {probs[a]:.2f}" for a in ACTIONS if a in self.classes)
        fitted = self.info.get("dataset") or f"{self.info.get('n', '?')} labelled items"
        if self.structure == "two-stage":
            how = ("decided step by step, abstain or not, then ask or answer, each step taking its rarer side where "
                   + ("that side's probability exceeds its share of the training labels" if self.decision == "balanced"
                      else "that side is the more probable") + self._steps(probs))
        else:
            how = ("the highest after dividing each by its share of the training labels" if self.decision == "balanced"
                   else "the highest")
        floor = (f"; ANSWER needs P(ANSWER) ≥ {self.answer_threshold:.2f}" if self.answer_threshold is not None
                 else "")
        reads = (" and the rule gate's verdict under the settings it was fitted with" if self.rule_settings is not None
                 else "")
        model = ("two logistic regressions, abstain or not and then ask or answer," if self.structure == "two-stage"
                 else "logistic regression")
        reason = (f"Learned gate{f' {source}' if source else ''} ({model} over the signals{reads}, "
                  f"{self.calibration}-calibrated, fitted on {fitted}): {shown}; {action} is {how}{floor}. "
                  f"The rule gate would say {rule_decision.action} (rule {rule_decision.rule}).")
        decided = RuleResult("learned_gate", action, True, True, (), reason)
        rules = tuple(dataclasses.replace(r, fired=False) for r in rule_decision.rules)
        return Decision(action=action, rule="learned_gate", reason=reason, rules=(decided, *rules),
                        answer_polarity=answer_polarity(action, trace.signals.condition_outcome))

    def _steps(self, probs: Mapping[str, float]) -> str:
        """Each step's probability beside the bar it had to clear, for a two-stage gate's reason."""
        abstain, ask = (float(p[0]) for p in self.split(np.array([[probs[a] for a in ACTIONS]])))
        bars = self._bars()
        steps = []
        if "ABSTAIN" in self.classes:
            steps.append(f"P(ABSTAIN) {abstain:.2f} against {bars[0]:.2f}")
        if self._asks_or_answers():
            steps.append(f"P(ASK | not ABSTAIN) {ask:.2f} against {bars[1]:.2f}")
        return f" ({', then '.join(steps)})" if steps else ""

    def _bars(self) -> tuple[float, float]:
        """What P(ABSTAIN) and P(ASK | not ABSTAIN) must exceed in a two-stage gate."""
        return tuple(self.priors) if self.decision == "balanced" else (0.5, 0.5)

    def _asks_or_answers(self) -> bool:
        """Whether a two-stage gate's second step was fitted (its training data held both ASK and ANSWER)."""
        return {"ASK", "ANSWER"} <= set(self.classes)

    def step_probabilities(self, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A two-stage gate's calibrated P(ABSTAIN) and P(ASK | not ABSTAIN) from standardised features (a
        step fitted on one side only keeps its raw score, which ``compose`` overrides)."""
        raw = sigmoid(Z @ self.coef.T + self.intercept)
        abstain, ask = (apply_calibrator(c, raw[:, k], self.calibration) if c else raw[:, k]
                        for k, c in enumerate(self.calibrators))
        return abstain, ask

    def split(self, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``compose`` undone: P(ABSTAIN) and P(ASK | not ABSTAIN) from (n, 3) probabilities."""
        abstain = probs[:, ACTIONS.index("ABSTAIN")]
        rest = 1 - abstain
        return abstain, np.divide(probs[:, ACTIONS.index("ASK")], rest, out=np.zeros(len(probs)), where=rest > 0)

    def calibrate(self, raw: np.ndarray) -> np.ndarray:
        cal = np.column_stack([apply_calibrator(c, raw[:, i], self.calibration)
                               for i, c in enumerate(self.calibrators)])
        total = cal.sum(axis=1, keepdims=True)
        return np.where(total > 0, cal / np.where(total > 0, total, 1), 1.0 / cal.shape[1])

    def compose(self, abstain: np.ndarray, ask: np.ndarray) -> np.ndarray:
        """A two-stage gate's (n, 3) probabilities from its steps' calibrated P(ABSTAIN) and P(ASK | not
        ABSTAIN); a step its training data lacked a side of is sure (no ASK: P(ASK | …) = 0)."""
        if "ABSTAIN" not in self.classes:
            abstain = np.zeros_like(abstain)
        if not self._asks_or_answers():
            ask = np.full_like(ask, float("ASK" in self.classes))
        out = np.zeros((len(abstain), len(ACTIONS)))
        out[:, ACTIONS.index("ABSTAIN")] = abstain
        out[:, ACTIONS.index("ASK")] = (1 - abstain) * ask
        out[:, ACTIONS.index("ANSWER")] = (1 - abstain) * (1 - ask)
        return out

    def choose(self, probs: np.ndarray) -> np.ndarray:
        """Action codes from (n, 3) probabilities: (balanced) argmax, or step by step for a two-stage gate;
        then the ANSWER precision floor."""
        if self.structure == "two-stage":
            return self._choose_by_steps(probs)
        idx = [ACTIONS.index(c) for c in self.classes]
        p = probs[:, idx]
        weighted = p / self.priors if self.decision == "balanced" else p
        order = np.argsort(-weighted, axis=1, kind="stable")
        choice = order[:, 0]
        if self.answer_threshold is not None and "ANSWER" in self.classes:
            a = self.classes.index("ANSWER")
            demote = (choice == a) & (p[:, a] < self.answer_threshold)
            choice = np.where(demote, order[:, 1], choice)
        return np.array(idx)[choice]

    def _choose_by_steps(self, probs: np.ndarray) -> np.ndarray:
        answer, ask, abstain = (ACTIONS.index(a) for a in ("ANSWER", "ASK", "ABSTAIN"))
        p_abstain, p_ask = self.split(probs)
        bars = self._bars()
        if self._asks_or_answers():
            codes = np.where(p_ask > bars[1], ask, answer)
        else:
            codes = np.full(len(probs), ask if "ASK" in self.classes else answer)
        if self.answer_threshold is not None and "ANSWER" in self.classes:
            # an answer below the floor goes to the more probable of the other two
            demote = (codes == answer) & (probs[:, answer] < self.answer_threshold)
            other = ask if "ASK" in self.classes else abstain
            if {"ASK", "ABSTAIN"} <= set(self.classes):
                other = np.where(probs[:, ask] >= probs[:, abstain], ask, abstain)
            codes = np.where(demote, other, codes)
        if "ABSTAIN" in self.classes:
            codes = np.where(p_abstain > bars[0], abstain, codes)
        return codes

    # -- the JSON file --
    def to_json(self) -> dict[str, Any]:
        return {"kind": KIND, "version": VERSION, "features": list(self.features), "classes": list(self.classes),
                "scaler": {"mean": self.mean.tolist(), "scale": self.scale.tolist()},
                "coef": self.coef.tolist(), "intercept": self.intercept.tolist(),
                "calibration": {"method": self.calibration, "per_class": list(self.calibrators)},
                "priors": self.priors.tolist(), "decision": self.decision,
                "answer_threshold": self.answer_threshold, "info": self.info, "structure": self.structure,
                **({"rule_settings": self.rule_settings} if self.rule_settings is not None else {})}

    def save(self, path: str | Path) -> None:
        """Write the gate as JSON (atomically: a crash leaves the old file)."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=1))
        tmp.replace(path)

    @classmethod
    def load(cls, path: str | Path) -> "LearnedGate":
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"cannot read learned gate {path}: {exc}") from None
        if not isinstance(data, dict) or data.get("kind") != KIND:
            raise ValueError(f"{path} is not a learned-gate file (made by `python -m core calibrate --learned-gate`)")
        if data.get("version") != VERSION:
            raise ValueError(f"{path} is a version {data.get('version')} learned gate; this code reads version "
                             f"{VERSION}: retrain it")
        try:
            return cls(features=tuple(data["features"]), classes=tuple(data["classes"]),
                       mean=np.array(data["scaler"]["mean"], float), scale=np.array(data["scaler"]["scale"], float),
                       coef=np.array(data["coef"], float), intercept=np.array(data["intercept"], float),
                       calibration=data["calibration"]["method"],
                       calibrators=tuple(data["calibration"]["per_class"]), priors=np.array(data["priors"], float),
                       decision=data["decision"], answer_threshold=data["answer_threshold"], info=data["info"],
                       rule_settings=data.get("rule_settings"),
                       structure=_structure(data.get("structure", "multinomial")))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"learned gate {path} is damaged ({type(exc).__name__}: {exc}); retrain it") from None


def _structure(name: str) -> str:
    if name not in STRUCTURES:
        raise ValueError(f"unknown structure {name!r} (one of {', '.join(STRUCTURES)})")
    return name


_LOADED: dict[tuple[str, int], LearnedGate] = {}


def load_cached(path: str | Path) -> LearnedGate:
    """``LearnedGate.load`` memoised by path and modification time (the gate runs on every slider move);
    a relative path starts at the project root."""
    file = Path(path)
    file = file if file.is_absolute() else PROJECT_ROOT / file
    try:
        stamp = file.stat().st_mtime_ns
    except OSError:
        raise ValueError(f"learned gate file {path} does not exist: fit one on the Evaluate page or with "
                         f"`python -m core calibrate … --learned-gate FILE`, or set the gate model to "
                         f"rules") from None
    key = (str(file), stamp)
    if key not in _LOADED:
        _LOADED.clear()  # one gate in use at a time; a rewritten file replaces the old entry
        _LOADED[key] = LearnedGate.load(file)
    return _LOADED[key]


def logistic_probabilities(model: tuple[np.ndarray, np.ndarray], Z: np.ndarray, n_classes: int) -> np.ndarray:
    """Logistic-regression probabilities from stored coefficients (sklearn's own formulas)."""
    coef, intercept = model
    scores = Z @ coef.T + intercept
    if n_classes == 2:
        p1 = sigmoid(scores[:, 0])
        return np.column_stack([1 - p1, p1])
    scores = scores - scores.max(axis=1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=1, keepdims=True)


def apply_calibrator(cal: Mapping[str, Any], p: np.ndarray, method: str) -> np.ndarray:
    """Raw probabilities through one fitted calibrator: {"x", "y"} (isotonic) or {"a", "b"} (Platt)."""
    if method == "isotonic":
        return np.interp(p, cal["x"], cal["y"])
    return sigmoid(cal["a"] * logit(p) + cal["b"])


def sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + e^-x), without overflow for a large |x| (a steep Platt slope on a sure probability)."""
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, dtype=float)))


def logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


