"""Evaluate the gate on a labelled set: metrics, confusion matrices, sweeps, calibration and the learned
gate, all re-computed from cached traces as the sidebar's gate sliders move (no model call)."""
import hashlib
import time
from pathlib import Path

import numpy as np
import streamlit as st

from app import wiring
from components import evaluation as ev
from components.common import md
from components.settings_panel import apply_values, render_settings
from core import settings as settings_mod
from core.evaluation import (BatchRunner, DatasetError, Objective, evaluate, load_dataset,
                             prediction_records, regate, suggest_thresholds, sweep, sweep_2d)
from core.evaluation import metrics as M
from core.evaluation.calibration import GATE_SETTINGS, SWEEP_METRICS, signal_report, switched_on_reading, rules_reading
from core.evaluation.importers import FORMATS
from core.evaluation.learned_gate import cross_validate, fit_learned_gate
from core.evaluation.transfer import SAMPLE_KB_SETS
from core.gate.learned import STRUCTURES
from core.kb import KnowledgeBaseError
from core.models import ModelUnavailable
from core.paths import ENV, PathNotAllowed
from core.types import ACTIONS

st.set_page_config(page_title="Evaluate · Answerability Workbench", page_icon="📊", layout="wide")

RUN = "aw_eval_run"  # {"id", "run"}: the analysed labelled set
LEARNED = "aw_eval_learned"  # {"id", "codes", "probs"}: the learned gate's out-of-fold predictions
SUGGESTION = "aw_eval_suggestion"  # {"id", "suggestion"}: thresholds suggested for this run
TO_INSPECT = "aw_eval_open"  # an item to open on Inspect (set by a callback, acted on in the body)
UPLOADS = wiring.ROOT / ".cache" / "eval" / "uploads"
RATE_FILE = wiring.ROOT / ".cache" / "eval" / "rate.json"  # seconds per item measured on the last run
TRANSFER = "aw_eval_transfer_rows"
TRANSFER_REPLICATES = 500  # group resamples behind each interval of the transfer table
TABS = ["Overview", "Rule vs learned gate", "Sweeps", "Calibrate", "Items", "Signal strength"]
SHARED = wiring.ROOT.parent / "shared" / "data"
SOURCES = {  # label -> (format, path); the shared files only where they exist
    "Sample KB questions": ("jsonl", wiring.SAMPLE_QUESTIONS),
    **{name[0].upper() + name[1:]: ("jsonl", wiring.SAMPLE_QUESTIONS.with_name(file))
       for name, file in SAMPLE_KB_SETS.items() if file != wiring.SAMPLE_QUESTIONS.name},
    "ShARC dev half (shared/data)": ("sharc", SHARED / "sharc_dev_half_a.json"),
    "ContractNLI dev (shared/data)": ("contractnli", SHARED / "contractnli_dev.json"),
}
OTHER, UPLOAD = "A file on this machine", "Upload a file"
KB_SETTINGS = {"reading": "each item's own documents", "pooled": "all the file's documents as one"}
GATE_NUMERIC = [n for n in GATE_SETTINGS if settings_mod.BY_NAME[n].kind in ("int", "float")]
# What a sweep opens on: the calibrated bars first (each a probability, read by a rule on by default), then any
# threshold a switched-on rule reads; a threshold only switched-off rules read draws flat lines.
SWEEP_FIRST = ("fact_min", "open_max", "topic_min", "statement_fact_min")


def live_thresholds(values) -> list[str]:
    """The gate's numeric settings that a rule switched on in ``values`` reads, ``SWEEP_FIRST`` first."""
    ordered = [n for n in SWEEP_FIRST if n in GATE_NUMERIC] + [n for n in GATE_NUMERIC if n not in SWEEP_FIRST]
    return [n for n in ordered if switched_on_reading(n, values)] or ordered


def source_form():
    """The labelled-set chooser; returns (format, path, setting, limit, seed) or None if incomplete."""
    options = [k for k, (_, p) in SOURCES.items() if Path(p).is_file()] + [OTHER, UPLOAD]
    source = st.selectbox("Labelled set", options, key="aw_eval_source")
    left, mid, right, far = st.columns(4)
    if source in SOURCES:
        fmt, path = SOURCES[source]
        left.text_input("Format", fmt, key=f"aw_eval_format_of_{fmt}", disabled=True,
                        help="The format of this shipped labelled set.")
    else:
        fmt = left.selectbox("Format", FORMATS, key="aw_eval_format",
                             help="sharc / contractnli / squad2 / hotpotqa: the published JSON formats; jsonl: this "
                                  "project's own schema (sample_kb/questions.jsonl), questions about the selected KB.")
        path = None
        if source == OTHER:
            typed = st.text_input("Path of the file (relative paths start at the project root)", key="aw_eval_path",
                                  help=f"Only files under kbs/ and sample_kb/, or under a root the server was started "
                                       f"with in {ENV}.")
            try:
                path = wiring.allowed_path(typed) if typed.strip() else None
            except PathNotAllowed as exc:
                st.error(str(exc))
                path = None
        else:
            upload = st.file_uploader("Labelled file", type=["json", "jsonl"], key="aw_eval_upload")
            if upload is not None:
                data = upload.getvalue()
                UPLOADS.mkdir(parents=True, exist_ok=True)
                path = UPLOADS / f"{hashlib.sha256(data).hexdigest()[:12]}-{wiring.SAFE_NAME.sub('_', upload.name)}"
                if not path.exists():
                    path.write_bytes(data)
        if path is None:
            return None
    if fmt == "jsonl":  # a question file names no documents: it is asked of a knowledge base
        mid.text_input("Knowledge base", "the one chosen on Inspect", key="aw_eval_setting_jsonl", disabled=True,
                       help="jsonl questions are asked of the knowledge base selected on the Inspect page.")
        setting = "reading"
    else:
        setting = mid.selectbox("Knowledge base", ("reading", "pooled"), key="aw_eval_setting",
                                format_func=KB_SETTINGS.get,
                                help="Each item's own documents (the ShARC snippet, the NDA) form its KB — the labels "
                                     "are relative to them; or all documents of the file form one KB (as PassiveQA "
                                     "did).")
    limit = right.number_input("Items (0 = all)", 0, 100_000, 0, 50, key="aw_eval_limit",
                               help="Analyse only this many items: the first N, or a random N with a seed.")
    seed = far.number_input("Sample seed (−1 = first N)", -1, 10_000, -1, key="aw_eval_seed")
    return fmt, Path(path), setting, int(limit) or None, None if seed < 0 else int(seed)


class Progress:
    """The run's progress bar; it measures the rate of the items analysed now (cached ones excluded),
    which estimates the time left and, kept on disk, the next run's duration."""

    def __init__(self, total_hint: str):
        self.bar = st.progress(0.0, text=f"Analysing {total_hint}…")
        self.started = time.perf_counter()
        self.first: int | None = None  # items already cached when the run began (the first report)
        self.analysed = 0

    def __call__(self, done: int, total: int, stage: str) -> None:
        if self.first is None:
            self.first = done
        self.analysed = done - self.first
        rate = self.analysed / self.elapsed() if self.analysed else 0.0
        eta = f" · about {(total - done) / rate:.0f} s left" if rate else ""
        self.bar.progress(min(1.0, done / total) if total else 1.0,
                          text=f"{stage}: {done}/{total} items" + (f" · {rate:.2f} items/s{eta}" if rate else ""))

    def elapsed(self) -> float:
        return max(time.perf_counter() - self.started, 1e-9)


def analyse(choice, values) -> None:
    fmt, path, setting, limit, seed = choice
    try:
        dataset = load_dataset(fmt, path, setting=None if fmt == "jsonl" else setting, limit=limit, seed=seed,
                               kb_folder=wiring.selected_kb() if fmt == "jsonl" else None)
        wiring.load_models()
        bar = st.empty()
        with bar.container():
            progress = Progress(dataset.describe())
            run = BatchRunner(values, progress=progress, show_bar=False).run(dataset)
        bar.empty()
        ev.record_rate(RATE_FILE, progress.analysed, progress.elapsed())
    except (DatasetError, KnowledgeBaseError, ModelUnavailable, ValueError) as exc:
        st.error(str(exc))
        return
    if not run.traces:
        st.error("No item could be analysed: " + "; ".join(list(run.errors.values())[:3]))
        return
    st.session_state[RUN] = {"id": f"{run.cache_file}:{len(run.traces)}:{limit}:{seed}", "run": run}
    st.session_state.pop(LEARNED, None)
    st.session_state.pop(SUGGESTION, None)


def learned_predictions(run, run_id: str, calibration: str, floor: float | None, structure: str):
    """The learned gate's out-of-fold actions and probabilities on this run (memoised per options)."""
    key = [run_id, calibration, floor, structure]
    stored = st.session_state.get(LEARNED)
    if stored is None or stored["id"] != key:
        with st.spinner("Fitting the learned gate fold by fold…"):
            codes, probs = cross_validate(run.table, run.gold, calibration=calibration, precision_floor=floor,
                                          structure=structure)
        stored = st.session_state[LEARNED] = {"id": key, "codes": codes, "probs": probs}
    return stored["codes"], stored["probs"]


def open_item(item_id: str) -> None:
    st.session_state[TO_INSPECT] = item_id


def overview(run, gated, values) -> None:
    report = evaluate(run, gated.codes)
    defaults = M.action_metrics(run.gold, regate(run.table, {}).codes)
    st.subheader("Rule gate with the sidebar's settings", anchor=False)
    st.caption("Re-gated from the cached signals on every slider move (no model call). Changes are against the "
               "default settings.")
    ev.render_headline(report["actions"], defaults)
    present = [a for i, a in enumerate(ACTIONS) if (run.gold == i).any()]
    if len(present) < 2:  # a browser walkthrough: the first 8 items of a set were all ANSWER, and nothing said so
        st.warning(f"Every item of this run is gold {present[0]}: the other actions' recall is undefined and the "
                   "learned gate cannot be fitted. The first N items of a file are often of one kind; a sample seed "
                   "draws a random N.")
    left, right = st.columns([2, 3])
    left.plotly_chart(ev.confusion_figure(report["actions"]["confusion"]["matrix"]), key="eval_confusion",
                      theme=None, config={"displayModeBar": False})
    right.dataframe(ev.per_action_rows(report["actions"]), hide_index=True, width="stretch")
    extras = []
    auc = report["auroc_answer_vs_ask"]
    if auc["value"] is not None:
        extras.append(f"ANSWER-vs-ASK AUROC of I(q) over the {auc['n']} items with a scenario or history: "
                      f"**{auc['value']:.3f}** (0.5 is chance)")
    if report["answers"]["n"]:
        a = report["answers"]
        extras.append(f"Answers (the yes/no the conditions decide, else the value extracted) EM "
                      f"**{ev.fmt(a['exact_match'])}**, F1 **{ev.fmt(a['f1'])}** over {a['n']} answered items with a "
                      "gold answer")
    if report["evidence"]["n"]:
        e = report["evidence"]
        extras.append(f"Evidence precision **{ev.fmt(e['precision'])}**, recall **{ev.fmt(e['recall'])}** over "
                      f"{e['n']} items with gold evidence (a predicted sentence matches a gold one when either "
                      f"contains the other or their token F1 ≥ 0.5)")
    right.markdown("\n\n".join(extras))
    with st.expander("Errors by rule: which rule decided the wrong items"):
        wrong = gated.codes != run.gold
        rules, counts = np.unique(gated.rules[wrong], return_counts=True)
        st.dataframe([{"rule": r, "wrong items": int(c), "of items it decided": int((gated.rules == r).sum())}
                      for r, c in sorted(zip(rules, counts), key=lambda x: -x[1])], hide_index=True)


def comparison(run, run_id, gated, values) -> None:
    st.subheader("Rule gate vs learned gate", anchor=False)
    st.caption("The learned gate is a logistic regression over every signal (plus the dialogue context: answered "
               "follow-ups, scenario length), its probabilities calibrated on out-of-fold predictions (HALT-RAG "
               "style). Its figures here are out-of-fold (5-fold): each item is predicted by a gate fitted on "
               "the other folds, so they are comparable with the rule gate's, which is not fitted on this data.")
    a, b = st.columns(2)
    calibration = a.radio("Calibration", ("isotonic", "platt"), horizontal=True, key="aw_eval_calibration")
    structure = a.radio("Structure", STRUCTURES, horizontal=True, key="aw_eval_structure",
                        help="One multinomial regression over the three actions, or two steps: abstain or not, "
                             "then ask or answer among the rest (how the shipped general gate decides).")
    floor_on = b.toggle("ANSWER precision floor", key="aw_eval_floor_on",
                        help="Answer only where the out-of-fold precision of ANSWER reaches the floor.")
    floor = b.slider("Floor", 0.5, 0.99, 0.8, 0.01, key="aw_eval_floor", disabled=not floor_on) if floor_on else None
    try:
        codes, probs = learned_predictions(run, run_id, calibration, floor, structure)
    except ValueError as exc:
        st.warning(f"The learned gate cannot be fitted on this set: {str(exc).rstrip('.')}.")
        return
    rule_m, learned_m = M.action_metrics(run.gold, gated.codes), M.action_metrics(run.gold, codes)
    left, right = st.columns(2)
    for column, title, m, key in ((left, "Rule gate (sidebar settings)", rule_m, "cmp_rule"),
                                  (right, "Learned gate (out-of-fold)", learned_m, "cmp_learned")):
        with column:
            st.markdown(f"**{title}** · macro-F1 **{ev.fmt(m['macro_f1'])}** · hallucination "
                        f"**{ev.fmt(m['hallucination_rate'])}** · coverage **{ev.fmt(m['coverage'])}**")
            st.plotly_chart(ev.confusion_figure(m["confusion"]["matrix"]), key=key, theme=None,
                            config={"displayModeBar": False})
    curves = {"A(q) (rule signals)": M.risk_coverage(run.gold == M.ANSWER, run.table.columns["answerability"]),
              "P(ANSWER) (learned)": M.risk_coverage(run.gold == M.ANSWER, probs[:, 0])}
    st.markdown("**Selective risk–coverage**: answer the items with the highest score first; the risk is the share "
                "of answered items whose gold action is not ANSWER. AURC is the mean risk (lower is better).")
    st.plotly_chart(ev.risk_coverage_figure(curves), key="eval_risk", theme=None, config={"displayModeBar": False})
    save, use, _ = st.columns([1, 1, 2])
    if save.button("Fit on all items and save for Inspect", key="aw_eval_save_gate",
                   help="Writes gates/<set>.json and switches the sidebar's gate model to it."):
        gate = fit_learned_gate(run.table, run.gold, calibration=calibration, precision_floor=floor,
                               structure=structure, info={"dataset": run.dataset.describe(),
                                                          "out_of_fold_macro_f1": learned_m["macro_f1"]})
        target = wiring.ROOT / "gates" / f"{Path(run.dataset.path).stem}-{run.dataset.format}.json"
        target.parent.mkdir(exist_ok=True)
        gate.save(target)
        st.session_state["aw_eval_gate_saved"] = wiring.display_path(target)
    saved = st.session_state.get("aw_eval_gate_saved")
    if saved:
        use.button("Use it on Inspect", key="aw_eval_use_gate", on_click=apply_values,
                   args=({**values, "gate_model": "learned", "learned_gate_file": saved},),
                   help="Sets Gate model = learned and the learned gate file in the sidebar.")
        st.caption(f"Saved {saved}.")


def flat_sweep_note(name: str, values) -> None:
    """Say why a sweep of a threshold that no switched-on rule reads is flat, and which switch would change that."""
    if switched_on_reading(name, values):
        return
    rules = ", ".join(f"`{r}`" for r in rules_reading(name))
    st.info(f"{ev.setting_label(name)} is read only by rules switched off in the sidebar ({rules}), so moving it "
            "changes no verdict and the sweep is flat. Switch one of them on under the gate settings to see "
            "what it does.")


def sweeps(run, values) -> None:
    st.subheader("Threshold sweeps", anchor=False)
    st.caption("Every metric re-gated over each grid point of a gate setting's declared range (the other settings "
               "as in the sidebar). The dashed line / red cross marks the sidebar's current value.")
    one, two = st.tabs(["1-D: metrics against one threshold", "2-D: one metric over two thresholds"])
    with one:
        a, b = st.columns([1, 2])
        live = live_thresholds(values)
        name = a.selectbox("Threshold", GATE_NUMERIC, index=GATE_NUMERIC.index(live[0]),
                           key="aw_eval_sweep", format_func=ev.setting_label)
        flat_sweep_note(name, values)
        chosen = b.multiselect("Metrics", SWEEP_METRICS, ["macro_f1", "coverage", "hallucination_rate"],
                               key="aw_eval_sweep_metrics", format_func=ev.METRIC_NAMES.get)
        if chosen:
            st.plotly_chart(ev.sweep_figure(sweep(run.table, run.gold, values, name, chosen), chosen),
                            key="eval_sweep", theme=None)
    with two:
        a, b, c = st.columns(3)
        x = a.selectbox("x", GATE_NUMERIC, index=GATE_NUMERIC.index(live[0]), key="aw_eval_x",
                        format_func=ev.setting_label)
        y = b.selectbox("y", GATE_NUMERIC, index=GATE_NUMERIC.index(live[1 % len(live)]), key="aw_eval_y",
                        format_func=ev.setting_label)
        metric = c.selectbox("Metric", SWEEP_METRICS, key="aw_eval_2d_metric", format_func=ev.METRIC_NAMES.get)
        for name in dict.fromkeys((x, y)):
            flat_sweep_note(name, values)
        if x == y:
            st.info("Choose two different thresholds.")
        else:
            st.plotly_chart(ev.heatmap_figure(sweep_2d(run.table, run.gold, values, x, y, metric, max_points=26)),
                            key="eval_heatmap", theme=None)


def ceiling_note(found, goal: Objective) -> None:
    """Whether the suggestion keeps the hallucination ceiling it was searched under, on the items it was fitted on
    and on those it was not (out of fold): a ceiling met only in-sample is not met on a new question."""
    if goal.max_hallucination is None:
        return
    ceiling = goal.max_hallucination
    inside, outside = (found.in_sample["hallucination_rate"] or 0.0), (found.out_of_fold["hallucination_rate"] or 0.0)
    if inside > ceiling:
        st.warning(f"No configuration of the searched settings keeps hallucination at or below {ceiling:.0%} on these "
                   f"items: the suggestion is the one that hallucinates least ({inside:.1%} in-sample, {outside:.1%} "
                   "out of fold). Search more settings, or accept a higher ceiling.")
    elif outside > ceiling:
        st.warning(f"The ceiling of {ceiling:.0%} holds on the items the thresholds were fitted on ({inside:.1%}) but "
                   f"not out of fold ({outside:.1%}): on questions it was not fitted on, expect the higher figure. "
                   "A lower ceiling leaves a margin.")


def calibrate(run, run_id, values) -> None:
    st.subheader("Suggested thresholds", anchor=False)
    st.caption("Coordinate ascent over the gate settings' declared ranges (restarted from random points), inside "
               "k-fold cross-validation: the out-of-fold figure estimates how the thresholds do on items they were "
               "not fitted on; the suggestion itself is then fitted on all items.")
    a, b, c = st.columns(3)
    objective = a.selectbox("Maximise", ("macro_f1", "accuracy", "coverage"), key="aw_eval_objective",
                            format_func=lambda k: "coverage with a hallucination ceiling" if k == "coverage"
                            else ev.METRIC_NAMES[k])
    ceiling = b.slider("Hallucination ceiling", 0.0, 0.5, 0.1, 0.01, key="aw_eval_ceiling",
                       disabled=objective != "coverage")
    folds = c.slider("Folds", 2, 10, 5, key="aw_eval_folds")
    names = st.multiselect("Settings to search", GATE_SETTINGS, list(GATE_SETTINGS), key="aw_eval_params",
                           format_func=ev.setting_label)
    if st.button("Suggest thresholds", key="aw_eval_suggest", disabled=not names):
        goal = Objective(objective, ceiling if objective == "coverage" else None)
        try:
            with st.spinner(f"Searching {len(names)} settings, {folds} folds…"):
                found = suggest_thresholds(run.table, run.gold, values, objective=goal, names=names, folds=folds)
        except ValueError as exc:
            st.error(str(exc))
        else:
            st.session_state[SUGGESTION] = {"id": run_id, "suggestion": found, "from": dict(values), "goal": goal}
    stored = st.session_state.get(SUGGESTION)
    if not stored or stored["id"] != run_id:
        return
    found = stored["suggestion"]
    st.markdown(f"Objective: **{found.objective}**. Out-of-fold macro-F1 **{ev.fmt(found.out_of_fold['macro_f1'])}** "
                f"(in-sample {ev.fmt(found.in_sample['macro_f1'])}, which is optimistic).")
    ev.render_headline(found.out_of_fold, M.action_metrics(run.gold, regate(run.table, stored["from"]).codes))
    st.dataframe([{"setting": k, "was": stored["from"][k], "suggested": v} for k, v in found.changed.items()]
                 or [{"setting": "—", "was": "", "suggested": "no change"}], hide_index=True)
    goal = stored["goal"]
    ceiling_note(found, goal)
    suggested = goal.score(np.asarray(found.out_of_fold["confusion"]["matrix"]))
    current = goal.score(np.asarray(M.action_metrics(run.gold, regate(run.table, values).codes)["confusion"]["matrix"]))
    worse = suggested < current
    if worse:
        st.warning(f"The suggested thresholds score worse than the sliders' current ones: {goal.describe()} "
                   f"{suggested:.3f} out-of-fold against {current:.3f} for the current settings on the same items. "
                   "Applying them would make the gate worse on this set.")
    left, right, _ = st.columns([1, 1, 2])
    left.button("Apply to the sliders (they score worse)" if worse else "Apply to the sliders", key="aw_eval_apply",
                on_click=apply_values, args=({**values, **found.changed},), disabled=not found.changed,
                help=f"Suggested {suggested:.3f} out-of-fold vs current {current:.3f} ({goal.describe()}).")
    right.download_button("Download as preset", settings_mod.preset_json({**values, **found.changed}),
                          file_name="calibrated-preset.json", mime="application/json", key="aw_eval_preset",
                          on_click="ignore")


def items_table(run, gated) -> None:
    st.subheader("Items", anchor=False)
    st.caption("One row per analysed item with the rule gate's action under the sidebar's settings. Select a row "
               "to open that question, with its scenario, history and knowledge base, on the Inspect page.")
    records = prediction_records(run, gated.codes, gated.rules)
    a, b, c, d = st.columns([1, 1, 1, 2])
    gold = a.multiselect("Gold", ACTIONS, key="aw_eval_f_gold")
    predicted = b.multiselect("Predicted", ACTIONS, key="aw_eval_f_pred")
    mistakes = c.toggle("Only mistakes", key="aw_eval_f_wrong")
    text = d.text_input("Question or id contains", key="aw_eval_f_text")
    rows = ev.table_rows(ev.filter_rows(records, gold, predicted, mistakes, text))
    st.caption(f"{len(rows)} of {len(records)} items")
    if not rows:
        st.info("No item matches these filters.")
    picked = st.dataframe(rows, hide_index=True, width="stretch", height=360, key="aw_eval_table",
                          on_select="rerun", selection_mode="single-row") if rows else None
    selected = picked.selection.rows if picked is not None else []
    if selected and selected[0] < len(rows):
        row = rows[selected[0]]
        st.button(f"Open {row['id']} on Inspect", key="aw_eval_open", type="primary", on_click=open_item,
                  args=(row["id"],))
    if run.errors:
        with st.expander(f"{len(run.errors)} item(s) could not be analysed"):
            st.dataframe([{"id": k, "why": v} for k, v in run.errors.items()], hide_index=True)


def go_to_inspect(run, item_id: str) -> None:
    for item, trace in zip(run.items, run.traces):
        if item.id == item_id:
            try:
                wiring.fill_inspect_form(item.question, item.scenario, item.history, trace.kb)
            except PathNotAllowed as exc:
                st.error(str(exc))
                return
            st.switch_page("Inspect.py")


def transfer(values) -> None:
    """The transfer table (``bench/bench_transfer.py``): the sliders, the declared defaults and the general
    learned gate on every report set, none of which any of them was fitted on."""
    from core.evaluation.transfer import INTERVAL_NOTE, configurations, report_sets, table_rows
    with st.expander("Transfer: every report set at once", expanded=TRANSFER in st.session_state):
        st.caption("ShARC dev half A, ContractNLI dev, the held-out SQuAD articles and the sample KB's questions and "
                   "blind sets, gated by the current sliders, the declared defaults and the general learned gate. The "
                   "calibrators, defaults and learned gate were fitted on the training data alone (ShARC train trees, "
                   "ContractNLI train contracts, other SQuAD articles and the train KB's questions), none of these. "
                   "Each set is "
                   "analysed once (cached); the first run of all of them takes tens of minutes.")
        if st.button("Compute the transfer table", key="aw_eval_transfer"):
            try:
                sets = report_sets()
            except DatasetError as exc:
                st.error(f"A report set cannot be read: {exc}")
                return
            bar = st.progress(0.0, text="Analysing the report sets…")
            runs = {}
            for k, (name, dataset) in enumerate(sets.items()):
                bar.progress(k / len(sets), text=f"Analysing {name} ({len(dataset.items)} items)…")
                runs[name] = BatchRunner(values, show_bar=False).run(dataset)
            bar.empty()
            with st.spinner("Resampling each set's groups for the intervals…"):
                st.session_state[TRANSFER] = table_rows(runs, {"current sliders": values, **configurations()},
                                                        replicates=TRANSFER_REPLICATES)
        if TRANSFER in st.session_state:
            st.dataframe(ev.transfer_rows(st.session_state[TRANSFER]), hide_index=True, width="stretch")
            st.caption(f"The *_interval* columns: {INTERVAL_NOTE} ({TRANSFER_REPLICATES} resamples; *groups* says how "
                       "many each set has).")


values = render_settings("Evaluate")
st.title("Evaluate on labelled data", anchor=False)
st.caption("Analyse a labelled set once (each trace is cached on disk, so a second run, or a run interrupted by "
           "leaving the page, resumes where it stopped); every figure below is then re-gated from the cached "
           "signals as the sidebar's gate sliders move.")
transfer(values)
choice = source_form()
stored_run = st.session_state.get(RUN)
if st.button("Analyse", type="primary", key="aw_eval_go", disabled=choice is None):
    analyse(choice, values)
    stored_run = st.session_state.get(RUN)
if stored_run is None:
    n_sample = len(wiring.sample_questions())
    st.info(f"Choose a labelled set and press **Analyse**. The sample KB has {n_sample} questions. "
            f"{ev.duration_text(n_sample, ev.measured_rate(RATE_FILE))} ShARC and ContractNLI have about 1,000 "
            "items each (use *Items* for a quick look).")
    st.stop()
run = stored_run["run"]
if TO_INSPECT in st.session_state:
    go_to_inspect(run, st.session_state.pop(TO_INSPECT))
if BatchRunner(values).run_key() not in run.cache_file:
    st.warning("Settings outside the gate changed since this set was analysed: the figures still use the traces "
               "analysed with the earlier settings. Press **Analyse** to re-analyse with the new ones.")
st.markdown(f"**{md(run.dataset.describe())}** · {md(run.summary())}")
if values["gate_model"] == "learned":
    st.caption("The sidebar's gate model is *learned*: on this page the rule gate's figures still use the rules; "
               "the learned gate is compared below.")
gated = regate(run.table, values)
# A key keeps the open tab across reruns (a button or a filter in a tab used to reopen Overview).
overview_tab, compare_tab, sweep_tab, calibrate_tab, items_tab, signals_tab = st.tabs(
    TABS, key="aw_eval_tab", on_change="rerun")
with overview_tab:
    overview(run, gated, values)
with compare_tab:
    comparison(run, stored_run["id"], gated, values)
with sweep_tab:
    sweeps(run, values)
with calibrate_tab:
    calibrate(run, stored_run["id"], values)
with items_tab:
    items_table(run, gated)
with signals_tab:
    st.caption("Each signal's AUROC for telling ASK (over items with a scenario or history) or ABSTAIN from ANSWER. "
               "0.5 is chance; above 0.5 the signal is higher on the non-answer class, below lower. A rule that "
               "expects the other direction misfires on this data: check here before relying on a signal.")
    if stored_run.get("signals") is None:  # independent of the gate settings: computed once per run
        stored_run["signals"] = ev.signal_rows(signal_report(run.table, run.gold, run.has_context))
    st.dataframe(stored_run["signals"], hide_index=True, width="stretch")
