"""Fit the calibrated signals (``core.calibrated``) on the training domains.

Each calibrator is a logistic regression over a few named features, with every training domain
weighted the same (so the largest set does not set the scale) and a held-out AUROC per domain
from cross-validation grouped by rule tree, contract or article. Targets come from the gold
labels of ``core.evaluation.training``'s sets:

- p_topic: 0 for a question asked against another tree's or article's text, else 1 (none for a SQuAD
  question asked about another entity of its article: its topic is its original's, already a row);
- p_fact: among items on topic, 1 when the gold action is ANSWER or ASK (the text states what
  decides it), 0 for ABSTAIN (SQuAD's unanswerable questions and entity swaps, ContractNLI's
  NotMentioned, the train KB's questions whose topic is there and fact not) — fitted on SQuAD,
  ContractNLI and the train KB, for questions whose answer does not turn on the asker (a rule
  question's fact is its rule: 1 on the other side of p_depends); fitted on topic-present rows, it is
  shown and gated times p_topic (``within``);
- p_depends: among answerable items, 1 for a question against a rule text about the asker's
  eligibility (ShARC), 0 for one about what an article or a contract states (SQuAD, ContractNLI);
- p_open: among answerable ShARC items, 1 for ASK (a condition is open), 0 for ANSWER — conditional
  on p_depends (the signal is their product): fitted on every domain at once, the rows of the two
  domains where nothing is ever open pulled the weights towards telling the domains apart;
- p_met: among ShARC ANSWER items, 1 for "Yes" (every condition met), 0 for "No".

Several referents are counted against the knowledge base (``core.calibrated.referents``), not
fitted: on AmbigNQ the wording alone separates several readings from one at chance.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from core.calibrated import Calibrator, features, with_probabilities
from core.evaluation import metrics as M
from core.evaluation.importers import LabelledItem
from core.evaluation.training import group_of
from core.gate.learned import sigmoid
from core.types import Trace

Target = Callable[[LabelledItem], "int | None"]
# The domains the calibrators are fitted on: each weighs the same, so the 385 questions of ``train_kb``
# would count as much as 1,735 ShARC utterances; they inform the choice of the gate's defaults instead,
# and P(fact stated), which without them never saw a question asked of a knowledge base in a user's words
# rather than a dataset's (train KB fact questions: held-out AUROC 0.69 out of domain, 0.86 fitted on them
# with ``asked_found``).
CALIBRATION_DOMAINS = ("sharc", "contractnli", "squad")
SOURCES = {"sharc": "../shared/data/train", "contractnli": "../shared/data/train", "squad": "../shared/data/train",
           "kb": "train_kb/"}  # where each domain's training items come from


def _synthetic_absent(item: LabelledItem) -> bool:
    return item.extra.get("synthetic") in ("irrelevant", "topic_absent") or item.extra.get("reason") == "topic_absent"


def _topic(item: LabelledItem) -> int | None:
    if item.extra.get("synthetic") == "entity_swap":
        return None
    return 0 if _synthetic_absent(item) else 1


def _fact(item: LabelledItem) -> int | None:
    return None if _synthetic_absent(item) else int(item.action != "ABSTAIN")


# Sources whose questions are asked against rule texts about the asker's circumstances.
RULE_TEXT_SOURCES = frozenset({"sharc"})


def _depends(item: LabelledItem) -> int | None:
    return None if item.action == "ABSTAIN" else int(item.source in RULE_TEXT_SOURCES)


def _open(item: LabelledItem) -> int | None:
    return None if item.action == "ABSTAIN" else int(item.action == "ASK")


def _met(item: LabelledItem) -> int | None:
    if item.action != "ANSWER" or item.source != "sharc" or not item.answers:
        return None
    return int(item.answers[0].strip().lower() == "yes")


@dataclass(frozen=True)
class Spec:
    name: str
    question: str
    features: tuple[str, ...]
    target: Target
    domains: tuple[str, ...] = CALIBRATION_DOMAINS
    given: str = ""  # the calibrator this one is conditional on (``Calibrator.given``)
    given_value: bool = True  # the side of it this one covers
    otherwise: float = 0.0  # the probability on the other side
    within: str = ""  # the calibrator whose target this one's rows presuppose (``Calibrator.within``)


SPECS = (
    Spec("p_topic", "Does the knowledge base cover what the question is about?",
         ("dense_top_said", "bm25_top_raw", "coverage", "title_overlap", "best_sentence_overlap", "kg_matched",
          "question_terms", "names_found", "has_names"), _topic),
    Spec("p_fact", "If the answer does not turn on the asker's circumstances, is the asked fact stated in the "
                   "evidence? (fitted where the topic is covered; shown and gated: × p_topic, and 1 on the other side "
                   "of p_depends, a rule question's fact being its rule)",
         ("sufficiency", "entailment_max", "contradiction_max", "neutral_min", "personal", "decided_statement",
          "entailed_statement", "decided_question", "evidence_coverage",
          "evidence_overlap", "answer_type_found", "asked_found", "yes_no_claim", "best_sentence_overlap", "dense_top",
          "dense_question", "typed_question", "premise_supported"), _fact, ("contractnli", "squad", "kb"), given="p_depends", given_value=False, otherwise=1.0,
         within="p_topic"),
    Spec("p_depends", "Does the answer turn on the asker's circumstances (a rule, not a stated fact)?",
         ("personal", "yes_no_claim", "condition_markers", "n_conditions", "scenario_words", "history_turns",
          "unasked", "markers_unanswered"), _depends),
    Spec("p_open", "If the answer turns on the asker's circumstances, is a condition still open? "
                   "(shown and gated: × p_depends)",
         ("personal", "n_conditions", "n_missing", "n_established", "n_contradicted", "incompleteness", "outcome_satisfied",
          "outcome_failed", "satisfied_surely", "failed_surely", "history_turns", "history_yes", "history_no",
          "scenario_words", "yes_no_claim", "all_group", "any_group", "unclear_group", "no_in_all_group",
          "yes_in_any_group", "unclear_decided", "unasked", "unaddressed", "unsaid_share", "last_answer_yes",
          "last_answer_no", "condition_markers", "markers_unanswered",
          "points_unanswered", "points_undecided", "last_follow_up_read", "missing_after_last", "yes_with_more_after",
          "last_reply_decides", "points_undecided_first_turn", "established_first_turn", "scenario_words_first_turn",
          "alternative_met_first_turn"),
         _open, ("sharc",), given="p_depends"),
    Spec("p_met", "Does the user meet every condition (the answer is yes)?",
         ("outcome_satisfied", "outcome_failed", "n_established", "n_contradicted", "n_missing", "history_yes",
          "history_no", "history_turns", "incompleteness", "no_in_all_group", "yes_in_any_group",
          "last_answer_yes", "last_answer_no", "any_group"), _met, ("sharc",)),
)


def _fit_logistic(X: np.ndarray, y: np.ndarray, w: np.ndarray, C: float = 1.0):
    from sklearn.linear_model import LogisticRegression
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale < 1e-9] = 1.0
    model = LogisticRegression(C=C, max_iter=2000)
    model.fit((X - mean) / scale, y, sample_weight=w)
    return mean, scale, model.coef_[0], float(model.intercept_[0])


def _predict(params, X: np.ndarray) -> np.ndarray:
    mean, scale, coef, intercept = params
    return sigmoid(intercept + ((X - mean) / scale) @ coef)


def _domain_weights(domains: np.ndarray) -> np.ndarray:
    """Every domain carries the same total weight, every row within it the same."""
    weights = np.zeros(len(domains))
    names = sorted(set(domains))
    for d in names:
        mask = domains == d
        weights[mask] = len(domains) / (len(names) * mask.sum())
    return weights


def rows(spec: Spec, runs: Mapping[str, tuple[Sequence[LabelledItem], Sequence[Trace]]]):
    """(feature matrix, targets, domains, groups) of the items ``spec`` is fitted on."""
    X, y, domains, groups = [], [], [], []
    for domain, (items, traces) in runs.items():
        if domain not in spec.domains:
            continue
        for item, trace in zip(items, traces):
            target = spec.target(item)
            if target is None:
                continue
            values = features(trace)
            X.append([values[f] for f in spec.features])
            y.append(target)
            domains.append(domain)
            groups.append(f"{domain}:{group_of(item)}")
    return np.array(X, float), np.array(y, int), np.array(domains), np.array(groups)


def held_out_aurocs(y: np.ndarray, oof: np.ndarray, domains: np.ndarray, groups: np.ndarray) -> dict[str, float | None]:
    """AUROC of out-of-fold probabilities per domain, over all its rows and, where some of its groups
    hold one class only, over the groups that hold both; and over every row ("all")."""
    held_out: dict[str, float | None] = {}
    for d in sorted(set(domains)):
        mask = domains == d
        auc = M.auroc(y[mask] == 1, oof[mask])
        if auc is not None:
            held_out[d] = round(float(auc), 3)
        # Pooled over groups, a domain whose negatives all sit in a few groups measures how the groups
        # differ, not the signal (SQuAD train: one article holds every unanswerable question). Within
        # the groups that hold both classes, the question is the one the gate faces on one knowledge base.
        mixed = mask & np.isin(groups, [g for g in set(groups[mask]) if len(set(y[groups == g])) == 2])
        if mixed.any() and mixed.sum() < mask.sum():
            auc = M.auroc(y[mixed] == 1, oof[mixed])
            if auc is not None:
                held_out[f"{d}, groups with both classes"] = round(float(auc), 3)
    auc_all = M.auroc(y == 1, oof)
    held_out["all"] = round(float(auc_all), 3) if auc_all is not None else None
    return held_out


# A feature that differs from its usual value in fewer than this share of the training rows cannot be
# weighed: its coefficient rests on a handful of rows, and standardised by a tiny spread it extrapolates
# (P(fact stated)'s "the question is about the asker", true of 1 in 1,000 contract and article rows, put
# every "How do I …?" at P ≈ 1 whatever the evidence said).
MIN_VARYING_SHARE = 0.01


def weighable(X: np.ndarray) -> np.ndarray:
    """The columns of ``X`` that differ from their median in at least ``MIN_VARYING_SHARE`` of the rows."""
    return np.mean(X != np.median(X, axis=0), axis=0) >= MIN_VARYING_SHARE


def fit_spec(spec: Spec, runs, folds: int = 5, seed: int = 0) -> Calibrator:
    """Fit on every row, over the features that vary there (``weighable``); the held-out AUROC per
    domain comes from grouped cross-validation (none with ``folds`` 0)."""
    from sklearn.model_selection import GroupKFold
    X, y, domains, groups = rows(spec, runs)
    if len(set(y)) < 2:
        raise ValueError(f"{spec.name}: its training rows hold one class only")
    kept = weighable(X)
    X, names = X[:, kept], tuple(f for f, k in zip(spec.features, kept) if k)
    weights = _domain_weights(domains)
    held_out = None
    if folds:
        oof = np.zeros(len(y))
        for train, test in GroupKFold(n_splits=folds, shuffle=True, random_state=seed).split(X, y, groups):
            oof[test] = _predict(_fit_logistic(X[train], y[train], weights[train]), X[test])
        held_out = held_out_aurocs(y, oof, domains, groups)
    mean, scale, coef, intercept = _fit_logistic(X, y, weights)
    counts = ", ".join(f"{d} {int((domains == d).sum())}" for d in sorted(set(domains)))
    return Calibrator(name=spec.name, question=spec.question, features=names,
                      mean=tuple(np.round(mean, 6)), scale=tuple(np.round(scale, 6)),
                      coef=tuple(np.round(coef, 6)), intercept=round(intercept, 6),
                      trained_on=f"{' and '.join(sorted({SOURCES[d] for d in set(domains)}))} "
                                 f"({counts} rows; domains weighted equally)",
                      held_out_auroc=held_out, given=spec.given, given_value=spec.given_value,
                      otherwise=spec.otherwise, within=spec.within)


def fit_all(runs, folds: int = 5) -> list[Calibrator]:
    """Every calibrator of ``SPECS`` fitted on ``runs`` ({domain: (items, traces)})."""
    return [fit_spec(spec, runs, folds) for spec in SPECS]


def cross_fitted(runs, folds: int = 5, seed: int = 0,
                 fit: Callable[..., Sequence[Calibrator]] = fit_all) -> dict[str, list[Trace]]:
    """Every trace of ``runs`` ({domain: (items, traces)}) with the probabilities of calibrators fitted
    (by ``fit``) without its rule tree, contract, article or document (``folds`` grouped folds of every
    domain).

    What the gate's thresholds and the learned gate are fitted on: probabilities from calibrators
    fitted on the same items are surer than on a new knowledge base (stacking's leakage; in sample,
    the declared defaults hallucinated on 10 % of the SQuAD training articles' unanswerable questions,
    cross-fitted on 22 %, as on the held-out articles)."""
    from sklearn.model_selection import GroupKFold
    out = {domain: list(traces) for domain, (_, traces) in runs.items()}
    splits = {domain: list(GroupKFold(n_splits=folds, shuffle=True, random_state=seed).split(
        np.zeros(len(items)), groups=[group_of(i) for i in items])) for domain, (items, _) in runs.items()}
    for k in range(folds):
        kept = {domain: ([items[i] for i in splits[domain][k][0]], [traces[i] for i in splits[domain][k][0]])
                for domain, (items, traces) in runs.items()}
        by_name = {c.name: c for c in fit(kept, folds=0)}
        for domain, (_, traces) in runs.items():
            for i in splits[domain][k][1]:
                out[domain][i] = with_probabilities(traces[i], by_name)
    return out


def save(calibrators: Sequence[Calibrator], path) -> None:
    import json
    from pathlib import Path
    data = {"kind": "answerability-workbench-signal-calibrators", "version": 1,
            "calibrators": [c.to_json() for c in calibrators]}
    Path(path).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
