"""Re-gating equals decide() item by item; sweeps; threshold search recovers planted thresholds;
the learned gate fits, calibrates and round-trips through JSON."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from core import settings
from core.evaluation import metrics as M
from core.evaluation.calibration import (GATE_SETTINGS, Objective, grid, save_suggestion, suggest_thresholds, sweep,
                                         sweep_2d)
from core.evaluation.learned_gate import cross_validate, fit_learned_gate
from core.gate import RULE_NAMES, decide_signals
from core.gate.learned import RULE_VERDICT, LearnedGate, feature_matrix, gate_settings
from core.gate.table import SignalTable, compile_rules, regate
from core.types import ACTIONS
from tests.factories import signals

OUTCOMES = ("satisfied", "failed", "undetermined", "none")


def random_signals(rng: np.random.Generator, n: int):
    out = []
    for _ in range(n):
        out.append(signals(
            confidence=float(rng.random()), coverage=float(rng.random()), score_gap=float(rng.random() * 0.3),
            ambiguity=float(rng.choice([0.0, 0.3, 0.5, 1.0, rng.random()])), topic_spread=float(rng.random()),
            nli_conflict=float(rng.random()), sufficiency=float(rng.random()),
            answer_type_found=float(rng.random() < 0.8), incompleteness=float(rng.choice([0.0, 0.5, rng.random()])),
            n_contradicted=int(rng.integers(0, 2)), condition_outcome=str(rng.choice(OUTCOMES)),
            kg_matched=int(rng.integers(0, 3)), kg_has_var=float(rng.random() < 0.3),
            evidence_coverage=float(rng.random()), premise_supported=float(rng.random() < 0.3),
            ambiguity_heuristics={"short_query": float(rng.random() < 0.2), "dangling_pronoun": float(rng.random())},
            p_topic=float(rng.random()), p_fact=float(rng.random()), p_open=float(rng.random()),
            p_met=float(rng.random()), p_depends=float(rng.random()), n_conditions=int(rng.integers(0, 3)),
            n_referents=int(rng.integers(1, 4)), n_described=int(rng.integers(0, 3)),
            n_unknown_names=int(rng.random() < 0.1), n_rivalled_names=int(rng.random() < 0.1),
            n_age_bands=int(rng.choice([0, 0, 2])), age_told=int(rng.random() < 0.5),
            statement=int(rng.random() < 0.3), yes_no=int(rng.random() < 0.5),
            follow_ups_answered=int(rng.integers(0, 2)), has_scenario=int(rng.random() < 0.4),
            conditions_met=int(rng.random() < 0.2)))
    return out


def random_values(rng: np.random.Generator) -> dict:
    values = {}
    for name in GATE_SETTINGS:
        s = settings.BY_NAME[name]
        values[name] = bool(rng.random() < 0.7) if s.kind == "bool" else float(rng.choice(grid(name)))
    return settings.resolve(values)


def test_every_gate_rule_compiles_to_numpy():
    table = SignalTable.from_signals(random_signals(np.random.default_rng(9), 50))
    compiled = compile_rules(table)
    assert compiled is not None, "a core.gate rule cannot be replayed from its comparisons: regate would loop"
    assert [switch for switch, _, _ in compiled] == [f"rule_{name}" for name in RULE_NAMES]
    low = dict((switch, comps) for switch, _, comps in compiled)["rule_low_retrieval"]
    assert [(op, t) for _, op, t in low] == [("<", "conf_min"), ("<", "coverage_min")]
    assert (low[0][0] == table.columns["confidence"]).all()
    # a statement to check is held to its own bar: the fact rule's threshold source differs by row
    (_, _, bar), = dict((switch, comps) for switch, _, comps in compiled)["rule_fact_absent"]
    assert set(bar.sources) == {"fact_min", "statement_fact_min"}
    assert [bar.sources[k] for k in bar.index] == [
        "statement_fact_min" if s.statement else "fact_min" for s in table.signals]


def test_regate_equals_decide_item_by_item():
    rng = np.random.default_rng(0)
    sigs = random_signals(rng, 400)
    has_passages = rng.random(400) > 0.05
    table = SignalTable.from_signals(sigs, has_passages)
    for _ in range(25):
        values = random_values(rng)
        gated = regate(table, values)
        for s, p, code, rule in zip(sigs, has_passages, gated.codes, gated.rules):
            d = decide_signals(s, values, bool(p))
            assert (ACTIONS[code], rule) == (d.action, d.rule)


def test_regate_on_1000_traces_runs_the_rules_as_array_comparisons():
    """What makes a slider move cheap: the rules replayed over whole columns, not decide() row by row. Its speed
    is ``bench/bench_eval.py``'s to print (a wall-clock bound here failed on a busy machine)."""
    table = SignalTable.from_signals(random_signals(np.random.default_rng(1), 1000))
    assert table.compiled is not None
    gated = regate(table, {"amb_max": 0.5})
    assert len(gated.codes) == len(gated.rules) == 1000


def test_table_columns_take_and_feature_columns():
    sigs = random_signals(np.random.default_rng(2), 10)
    table = SignalTable.from_signals(sigs)
    assert table.columns["sufficiency"][3] == sigs[3].sufficiency
    assert table.columns["amb:short_query"][4] == sigs[4].ambiguity_heuristics["short_query"]
    sub = table.take([1, 3])
    assert len(sub) == 2 and sub.signals == (sigs[1], sigs[3])
    feats = table.feature_columns()
    assert feats["outcome:failed"].tolist() == [float(s.condition_outcome == "failed") for s in sigs]
    assert "condition_outcome" not in table.columns and "ambiguity_heuristics" not in table.columns


def planted(n: int, seed: int = 0):
    """ASK exactly when ambiguity > 0.62; every other signal clean."""
    rng = np.random.default_rng(seed)
    amb = rng.random(n)
    table = SignalTable.from_signals([signals(ambiguity=float(a)) for a in amb])
    gold = np.where(amb > 0.62, "ASK", "ANSWER")
    return table, gold


def test_sweep_one_setting():
    table, gold = planted(300)
    s = sweep(table, gold, None, "amb_max")
    assert s["values"] == grid("amb_max") and len(s["metrics"]["macro_f1"]) == 101
    best = s["values"][int(np.argmax(s["metrics"]["macro_f1"]))]
    assert abs(best - 0.62) <= 0.011 and s["current"] == settings.BY_NAME["amb_max"].default
    assert s["metrics"]["coverage"][0] < s["metrics"]["coverage"][-1]  # higher amb_max asks less
    with pytest.raises(ValueError, match="not a setting the gate rules read"):
        sweep(table, gold, None, "top_k")


def test_sweep_2d_shape_and_values():
    table, gold = planted(200)
    s = sweep_2d(table, gold, None, "amb_max", "sufficiency_min", max_points=11)
    assert len(s["z"]) == len(s["y_values"]) == 11 and len(s["z"][0]) == len(s["x_values"]) == 11
    j = s["x_values"].index(0.6)
    assert s["z"][0][j] == pytest.approx(M.macro_f1(gold, regate(table, {"amb_max": 0.6, "sufficiency_min": 0.0}).codes))


def test_suggest_recovers_a_planted_threshold_out_of_fold(tmp_path):
    table, gold = planted(400)
    sug = suggest_thresholds(table, gold, names=["amb_max"], folds=5)
    assert abs(sug.values["amb_max"] - 0.62) <= 0.011
    assert sug.out_of_fold["macro_f1"] > 0.97 and len(sug.fold_values) == 5
    assert M.action_metrics(gold, sug.oof_codes) == sug.out_of_fold
    save_suggestion(sug, tmp_path / "p.json")
    assert settings.load_preset(tmp_path / "p.json")["amb_max"] == sug.values["amb_max"]


def test_search_over_several_thresholds_finds_two_planted_rules():
    rng = np.random.default_rng(5)
    n = 300
    suff, inc = rng.random(n), rng.choice([0.0, 0.0, 0.25, 0.5, 0.75], n)
    table = SignalTable.from_signals([signals(sufficiency=float(s), incompleteness=float(i))
                                      for s, i in zip(suff, inc)])
    gold = np.where(inc > 0.3, "ASK", np.where(suff < 0.2, "ABSTAIN", "ANSWER"))  # the gate's rule order
    on = {"rule_low_sufficiency": True}  # off by default
    before = M.macro_f1(gold, regate(table, on).codes)
    sug = suggest_thresholds(table, gold, on, names=["incompleteness_max", "sufficiency_min", "amb_max", "conf_min"],
                             folds=3, restarts=1)
    assert before < 0.8 and sug.out_of_fold["macro_f1"] > 0.95
    assert 0.25 <= sug.values["incompleteness_max"] < 0.5 and 0.15 <= sug.values["sufficiency_min"] <= 0.25


def test_coverage_objective_respects_the_hallucination_ceiling():
    rng = np.random.default_rng(3)
    suff = rng.random(400)
    gold = np.where(rng.random(400) < suff, "ANSWER", "ABSTAIN")  # noisy: no threshold separates them
    table = SignalTable.from_signals([signals(sufficiency=float(s)) for s in suff])
    on = {"rule_low_sufficiency": True}  # off by default
    sug = suggest_thresholds(table, gold, on, objective=Objective(max_hallucination=0.2), names=["sufficiency_min"])
    assert sug.in_sample["hallucination_rate"] <= 0.2
    looser = suggest_thresholds(table, gold, on, objective=Objective(max_hallucination=0.5), names=["sufficiency_min"])
    assert looser.in_sample["coverage"] > sug.in_sample["coverage"]


# --- learned gate -----------------------------------------------------------------------

def noisy_three_way(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    inc, suff = rng.random(n), rng.random(n)
    gold = np.where(suff + rng.normal(0, 0.1, n) < 0.25, "ABSTAIN",
                    np.where(inc + rng.normal(0, 0.1, n) > 0.6, "ASK", "ANSWER"))
    sigs = [signals(incompleteness=float(i), sufficiency=float(s), condition_outcome="undetermined" if i > 0.6 else "none")
            for i, s in zip(inc, suff)]
    return SignalTable.from_signals(sigs), gold, sigs


@pytest.mark.parametrize("calibration", ["isotonic", "platt"])
def test_learned_gate_fits_and_json_round_trip(tmp_path, calibration):
    table, gold, sigs = noisy_three_way(600)
    gate = fit_learned_gate(table, gold, calibration=calibration)
    codes, probs = gate.predict(table)
    assert np.allclose(probs.sum(axis=1), 1) and (probs >= 0).all()
    assert M.macro_f1(gold, codes) > 0.8
    gate.save(tmp_path / "gate.json")
    data = json.loads((tmp_path / "gate.json").read_text())  # plain JSON, no pickle
    assert data["kind"] == "answerability-workbench-learned-gate" and data["calibration"]["method"] == calibration
    loaded = LearnedGate.load(tmp_path / "gate.json")
    codes2, probs2 = loaded.predict(table)
    assert (codes2 == codes).all() and np.allclose(probs2, probs)
    action, p = loaded.decide(sigs[0])
    assert action == ACTIONS[codes[0]] and p == pytest.approx(dict(zip(ACTIONS, probs[0])))
    assert loaded.decide(sigs[0], has_passages=False)[0] == "ABSTAIN"


def test_platt_calibration_of_a_sure_probability_does_not_overflow():
    """A steep Platt slope on a probability of 1 - 1e-9 must give 0 or 1 quietly, not an overflow warning."""
    import warnings
    from core.gate.learned import apply_calibrator, sigmoid
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        p = apply_calibrator({"a": 80.0, "b": 0.5}, np.array([1e-9, 0.5, 1 - 1e-9]), "platt")
        assert p[0] == pytest.approx(0.0) and p[2] == pytest.approx(1.0) and 0.5 < p[1] < 1.0
        assert np.allclose(sigmoid(np.array([-2.0, 0.0, 3.0])), 1 / (1 + np.exp(-np.array([-2.0, 0.0, 3.0]))))


def test_isotonic_calibration_matches_sklearn():
    from sklearn.isotonic import IsotonicRegression
    from core.evaluation.learned_gate import _fit_calibrator
    from core.gate.learned import apply_calibrator
    rng = np.random.default_rng(0)
    p = rng.random(300)
    y = rng.random(300) < p
    cal = _fit_calibrator(p, y, "isotonic")
    ref = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(p, y.astype(float))
    q = np.linspace(-0.1, 1.1, 50)
    assert np.allclose(apply_calibrator(cal, q, "isotonic"), ref.predict(q))


def test_learned_gate_out_of_fold_and_two_classes():
    table, gold, _ = noisy_three_way(500, seed=1)
    codes, probs = cross_validate(table, gold, folds=4)
    assert M.macro_f1(gold, codes) > 0.75
    two = np.where(gold == "ABSTAIN", "ABSTAIN", "ANSWER")  # ContractNLI: no gold ASK
    gate = fit_learned_gate(table, two)
    c, p = gate.predict(table)
    assert gate.classes == ("ANSWER", "ABSTAIN") and (p[:, ACTIONS.index("ASK")] == 0).all()
    assert set(np.unique(c)) <= {0, 2}


def test_precision_floor_trades_coverage_for_precision():
    table, gold, _ = noisy_three_way(600, seed=2)
    free = fit_learned_gate(table, gold, decision="argmax")
    floored = fit_learned_gate(table, gold, decision="argmax", precision_floor=0.97)
    assert free.answer_threshold is None and floored.answer_threshold is not None
    c_free, c_floor = free.predict(table)[0], floored.predict(table)[0]
    answered_free, answered_floor = c_free == 0, c_floor == 0
    assert answered_floor.sum() < answered_free.sum()
    assert (gold[answered_floor] == "ANSWER").mean() > (gold[answered_free] == "ANSWER").mean()


def test_a_learned_gate_reading_the_rule_gates_verdict_keeps_the_settings_it_was_fitted_with(tmp_path):
    rng = np.random.default_rng(3)
    table = SignalTable.from_signals(random_signals(rng, 600))
    fitted_with = {**settings.defaults(), "rule_score_gap": False, "rule_missing_variables": False}
    verdict = regate(table, fitted_with).codes
    flip = rng.random(len(table)) < 0.1  # the gold action is the rules' but for a tenth of the rows
    gold = np.array(ACTIONS, dtype=object)[np.where(flip, (verdict + 1) % 3, verdict)]
    gate = fit_learned_gate(table, gold, decision="argmax", features=RULE_VERDICT, rule_settings=fitted_with)
    assert gate.rule_settings == gate_settings(fitted_with) and gate.rule_settings["rule_score_gap"] is False
    codes = gate.predict(table)[0]
    assert (codes == verdict).mean() > 0.95  # it learned to follow the rules, not the flipped tenth
    gate.save(tmp_path / "gate.json")
    loaded = LearnedGate.load(tmp_path / "gate.json")
    assert loaded.rule_settings == gate.rule_settings and (loaded.predict(table)[0] == codes).all()
    # the verdict is computed under the stored settings, not under today's declared defaults
    assert (regate(table, settings.defaults()).codes != verdict).any()
    with pytest.raises(ValueError, match="gate settings it was fitted with"):
        feature_matrix(table, RULE_VERDICT)
    assert fit_learned_gate(table, gold).rule_settings is None  # a gate on the signals alone stores none


@pytest.mark.parametrize("calibration", ["isotonic", "platt"])
def test_two_stage_gate_abstains_or_not_then_asks_or_answers(tmp_path, calibration):
    """Two binary steps: P(ASK) is P(not ABSTAIN) times the second step's P(ASK | not ABSTAIN); it fits the
    three-way data as well as the multinomial gate, out of fold too, and keeps its structure in the file."""
    table, gold, sigs = noisy_three_way(600)
    gate = fit_learned_gate(table, gold, calibration=calibration, structure="two-stage")
    codes, probs = gate.predict(table)
    assert gate.structure == "two-stage" and gate.coef.shape == (2, len(gate.features))
    assert np.allclose(probs.sum(axis=1), 1) and (probs >= 0).all()
    assert M.macro_f1(gold, codes) > 0.8
    assert M.macro_f1(gold, cross_validate(table, gold, folds=4, structure="two-stage")[0]) > 0.75
    abstain, ask = probs[:, ACTIONS.index("ABSTAIN")], probs[:, ACTIONS.index("ASK")]
    assert abs(np.corrcoef(abstain, [s.sufficiency for s in sigs])[0, 1]) > 0.5, "the first step reads sufficiency"
    rest = abstain < 0.9
    assert np.corrcoef(ask[rest] / (1 - abstain[rest]), [s.incompleteness for s, r in zip(sigs, rest) if r])[0, 1] > 0.5
    gate.save(tmp_path / "gate.json")
    assert json.loads((tmp_path / "gate.json").read_text())["structure"] == "two-stage"
    loaded = LearnedGate.load(tmp_path / "gate.json")
    assert (loaded.predict(table)[0] == codes).all() and np.allclose(loaded.predict(table)[1], probs)
    assert loaded.decide(sigs[0])[0] == ACTIONS[codes[0]]


def test_two_stage_gate_decides_step_by_step():
    """Balanced: abstain where P(ABSTAIN) exceeds its training share, whatever the second step says; else
    ask where P(ASK | not ABSTAIN) exceeds its share among the rest. Argmax: the more probable side of each
    step. A precision floor sends an answer below it to the more probable of the other two."""
    table, gold, _ = noisy_three_way(300)
    gate = dataclasses.replace(fit_learned_gate(table, gold, structure="two-stage"), priors=np.array([0.2, 0.3]))
    steps = [(0.25, 0.9), (0.1, 0.35), (0.1, 0.25), (0.6, 0.0)]  # (P(ABSTAIN), P(ASK | not ABSTAIN))
    probs = gate.compose(np.array([a for a, _ in steps]), np.array([b for _, b in steps]))
    assert [ACTIONS[c] for c in gate.choose(probs)] == ["ABSTAIN", "ASK", "ANSWER", "ABSTAIN"]
    argmax = dataclasses.replace(gate, decision="argmax")
    assert [ACTIONS[c] for c in argmax.choose(probs)] == ["ASK", "ANSWER", "ANSWER", "ABSTAIN"]
    floored = dataclasses.replace(gate, answer_threshold=0.7)  # row 3: P(ANSWER) = 0.9 * 0.75 = 0.675
    assert [ACTIONS[c] for c in floored.choose(probs)] == ["ABSTAIN", "ASK", "ASK", "ABSTAIN"]


def test_two_stage_gate_without_gold_ask_never_asks():
    table, gold, _ = noisy_three_way(400, seed=3)
    two = np.where(gold == "ABSTAIN", "ABSTAIN", "ANSWER")  # ContractNLI: no gold ASK
    gate = fit_learned_gate(table, two, structure="two-stage")
    codes, probs = gate.predict(table)
    assert gate.classes == ("ANSWER", "ABSTAIN") and (probs[:, ACTIONS.index("ASK")] == 0).all()
    assert set(np.unique(codes)) == {0, 2} and M.macro_f1(two, codes) > 0.8


def test_learned_gate_load_errors(tmp_path):
    (tmp_path / "x.json").write_text('{"kind": "something-else"}')
    with pytest.raises(ValueError, match="not a learned-gate file"):
        LearnedGate.load(tmp_path / "x.json")
    (tmp_path / "y.json").write_text('{"kind": "answerability-workbench-learned-gate", "version": 1}')
    with pytest.raises(ValueError, match="damaged"):
        LearnedGate.load(tmp_path / "y.json")
    with pytest.raises(ValueError, match="two actions"):
        fit_learned_gate(SignalTable.from_signals([signals()] * 4), ["ANSWER"] * 4)
    table, gold, _ = noisy_three_way(200)
    data = fit_learned_gate(table, gold).to_json()
    (tmp_path / "z.json").write_text(json.dumps({**data, "structure": "three-stage"}))
    with pytest.raises(ValueError, match="unknown structure 'three-stage'"):
        LearnedGate.load(tmp_path / "z.json")
    with pytest.raises(ValueError, match="structure must be one of"):
        fit_learned_gate(table, gold, structure="tree")


def test_context_features_and_a_gate_that_reads_them():
    from dataclasses import replace
    from core.gate.table import context_features
    from core.types import Condition, Query
    from tests.factories import trace
    rng = np.random.default_rng(4)
    traces, gold = [], []
    for k in range(120):
        turns = int(rng.integers(0, 4))
        t = trace(signals(incompleteness=float(rng.random())))
        t = replace(t, query=Query("Can I get it?", "I am 70 years old." if k % 2 else "",
                                   tuple((f"Q{j}?", "Yes" if j % 2 else "No") for j in range(turns))))
        traces.append(t)
        gold.append("ANSWER" if turns >= 2 else "ASK")  # the dialogue's length decides
    cond = Condition("You are over 65.", "I am over 65.", "bullet", "doc#0", status="established")
    rich = replace(traces[3], variables=replace(traces[3].variables, conditions=(cond,)))
    assert context_features(rich) == {"ctx:history_turns": len(rich.query.history),
                                      "ctx:history_yes": sum(a == "Yes" for _, a in rich.query.history),
                                      "ctx:history_no": sum(a == "No" for _, a in rich.query.history),
                                      "ctx:scenario_words": 5.0, "ctx:established": 1.0}
    table = SignalTable.from_traces(traces)
    gate = fit_learned_gate(table, gold)
    assert M.macro_f1(gold, gate.predict(table)[0]) > 0.95
    assert [gate.decide(t)[0] for t in traces[:10]] == gold[:10]
    with pytest.raises(ValueError, match="give it the whole Trace"):
        gate.decide(traces[0].signals)


def test_searchable_settings_are_those_the_rules_read():
    assert {"amb_max", "incompleteness_max", "rule_ambiguity", "conf_min"} <= set(GATE_SETTINGS)
    gate_stage = {s.name for s in settings.SETTINGS if s.stage == "gate"}
    sigs = random_signals(np.random.default_rng(6), 50)
    base = settings.defaults()
    for name in gate_stage - set(GATE_SETTINGS):  # e.g. the answer mode: moving it never changes a decision
        for value in grid(name)[:3]:
            moved = {**base, name: value}
            assert all(decide_signals(s, moved) == decide_signals(s, base) for s in sigs), name


def test_gate_model_setting_lets_a_learned_gate_decide(tmp_path):
    """``gate_model=learned`` makes core.gate.decide (the Inspect page, the CLI, the dialogue) use the
    learned gate's file; the rules stay in the decision, evaluated but not firing."""
    from dataclasses import replace
    from core.gate import decide
    from core.types import Query
    from tests.factories import trace
    rng = np.random.default_rng(7)
    traces, gold = [], []
    for k in range(90):
        inc = float(rng.random())
        traces.append(replace(trace(signals(incompleteness=inc)), query=Query(f"Can I get it {k}?")))
        gold.append("ASK" if inc > 0.5 else "ANSWER")
    fit_learned_gate(SignalTable.from_traces(traces), gold).save(tmp_path / "gate.json")
    values = {"gate_model": "learned", "learned_gate_file": str(tmp_path / "gate.json"), "incompleteness_max": 0.9}
    asking = next(t for t, g in zip(traces, gold) if g == "ASK" and t.signals.incompleteness > 0.7)
    by_rules = decide(asking, {"incompleteness_max": 0.9})
    learned = decide(asking, values)
    assert by_rules.action == "ANSWER" and learned.action == "ASK" and learned.rule == "learned_gate"
    assert learned.rules[0].fired and not any(r.fired for r in learned.rules[1:])
    assert [r.name for r in learned.rules[1:]] == [r.name for r in by_rules.rules]
    assert "P(ASK)" in learned.reason and "The rule gate would say ANSWER (rule default_answer)" in learned.reason
    with pytest.raises(ValueError, match="does not exist"):
        decide(asking, {**values, "learned_gate_file": str(tmp_path / "missing.json")})


def test_evidence_features_are_the_strongest_passage_scores():
    from dataclasses import replace
    from core.gate.table import evidence_features
    from core.types import NliScores, PassageNli
    from tests.factories import trace
    t = replace(trace(), nli=(PassageNli("doc#0", NliScores(0.2, 0.1, 0.7), 0),
                              PassageNli("doc#1", NliScores(0.6, 0.3, 0.1), 2)))
    assert evidence_features(t) == {"nli:max_entailment": 0.6, "nli:max_contradiction": 0.7,
                                    "ret:top_dense": 0.7, "ret:top_bm25": 3.0}
    assert evidence_features(trace(with_passage=False)) == dict.fromkeys(evidence_features(t), 0.0)
    table = SignalTable.from_traces([t, trace(with_passage=False)])
    assert table.columns["nli:max_entailment"].tolist() == [0.6, 0.0]


def test_rule_lift_tells_an_informative_rule_from_a_random_one():
    """A rule whose signal follows the gold action has a lift well above 1; one that fires at random
    among the items it sees has a lift near 1 (precision = base rate)."""
    from core.evaluation.calibration import rule_lift
    rng = np.random.default_rng(3)
    gold = np.array(rng.choice([M.ANSWER, M.ABSTAIN], size=600))
    sigs = [signals(p_fact=float(0.2 if g == M.ABSTAIN and rng.random() < 0.7 else 0.9),
                    evidence_coverage=float(rng.random()), p_depends=1.0) for g in gold]
    values = settings.resolve({**{f"rule_{n}": n in ("fact_absent", "uncovered_topics") for n in RULE_NAMES},
                               "fact_min": 0.5, "evidence_coverage_min": 0.5})
    rows = {r["rule"]: r for r in rule_lift(SignalTable.from_signals(sigs), gold, values)}
    assert rows["fact_absent"]["action"] == "ABSTAIN" and rows["fact_absent"]["lift"] > 1.5
    assert abs(rows["uncovered_topics"]["lift"] - 1) < 0.2
    assert rows["default_answer"]["lift"] > 1
    assert sum(r["fires"] for r in rows.values()) == len(gold)
