"""Benchmark the NLI model on the held-out slices of every training source, per CPU backend.

Prints, per source, accuracy on the ``test`` slice of ``scripts/build_nli_mix.py`` (SNLI test
3-way, MultiNLI 2-way, FEVER-NLI 2-way, ContractNLI 3-way, ShARC condition/fact 3-way,
perspective-shift 3-way), the expected calibration error before and after the model's
temperature, how often each backend (PyTorch fp32, dynamic int8, ONNX Runtime when installed)
agrees with fp32 on the label, and pairs/s of each on MultiNLI held-out pairs (batches of 32, sorted by length, as ``core.nli.predict`` scores them).
These slices were never fitted on (the temperature is fitted on the separate ``calib`` slice).

    OMP_NUM_THREADS=2 python bench/bench_nli.py --data /tmp/nli-mix --limit 500
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import torch  # noqa: E402

from core import models, nli  # noqa: E402
from train_nli import LABELS, read_slice, source_metrics, target  # noqa: E402

SPEED_PAIRS = 256
BATCH = 32


def logits_of(model: nli.NliModel, pairs: list[tuple[str, str]]) -> torch.Tensor:
    """Raw logits (order ``LABELS``) of ``pairs``, scored in length-sorted batches."""
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
    out = torch.empty((len(pairs), len(LABELS)))
    columns = [model.label_index[label] for label in LABELS]
    for start in range(0, len(order), BATCH):
        idx = order[start:start + BATCH]
        out[idx] = nli.logits_batch(model, [pairs[i] for i in idx])[:, columns]
    return out


def pairs_per_second(model: nli.NliModel, pairs: list[tuple[str, str]]) -> float:
    logits_of(model, pairs[:BATCH])  # warm-up
    start = time.perf_counter()
    logits_of(model, pairs)
    return len(pairs) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path("/tmp/nli-mix"), help="build_nli_mix.py output")
    parser.add_argument("--model", default=models.role_source("nli"))
    parser.add_argument("--limit", type=int, default=None, help="pairs per source (a seeded sample)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if not (args.data / "test.jsonl.gz").is_file():
        raise SystemExit(f"{args.data}/test.jsonl.gz not found: run `python scripts/build_nli_mix.py --out {args.data}`")
    torch.set_num_threads(args.threads)
    rows = read_slice(args.data / "test.jsonl.gz")
    if args.limit:
        by_source: dict[str, list[dict]] = {}
        for r in rows:
            by_source.setdefault(r["source"], []).append(r)
        rows = [r for group in by_source.values() for r in random.Random(0).sample(group, min(args.limit, len(group)))]
    pairs = [(r["premise"], r["hypothesis"]) for r in rows]
    targets = torch.tensor([target(r["label"]) for r in rows])
    sources = [r["source"] for r in rows]
    load = os.getloadavg()[0]

    backends = ["torch", "int8"] + (["onnx"] if nli.default_backend() == "onnx" else [])
    loaded = {name: nli.load_model(args.model, backend=name) for name in backends}
    temperature = loaded["torch"].temperature
    results = {}
    for name, model in loaded.items():
        logits = logits_of(model, pairs)
        results[name] = {"logits": logits, "raw": source_metrics(logits, targets, sources),
                         "calibrated": source_metrics(logits / temperature, targets, sources)}
    agree = {name: {} for name in backends}
    for src in sorted(set(sources)):
        idx = [i for i, s in enumerate(sources) if s == src]
        reference = results["torch"]["logits"][idx].argmax(-1)
        for name in backends:
            agree[name][src] = float((results[name]["logits"][idx].argmax(-1) == reference).float().mean())
    mnli_pairs = [p for p, s in zip(pairs, sources) if s == "mnli"][:SPEED_PAIRS]
    speed = {name: pairs_per_second(model, mnli_pairs) for name, model in loaded.items()}

    print(f"model {args.model}  temperature {temperature:.3f}  threads {args.threads}  "
          f"load average at start {load:.1f}  pairs per source {args.limit or 'all'}")
    print(f"{'source':<12} {'n':>5} {'way':>3}  {'ECE raw':>7} {'ECE T':>6}  "
          + "  ".join(f"{name + ' acc':>9} {'agree':>6}" for name in backends))
    for src, m in results["torch"]["calibrated"].items():
        print(f"{src:<12} {m['n']:>5} {m['way']:>3}  {results['torch']['raw'][src]['ece']:>7.3f} {m['ece']:>6.3f}  "
              + "  ".join(f"{results[name]['raw'][src]['accuracy']:>9.2%} {agree[name][src]:>6.1%}" for name in backends))
    print(f"pairs/s on {len(mnli_pairs)} MultiNLI held-out pairs (batches of {BATCH}, length-sorted): "
          + ", ".join(f"{name} {rate:.1f}" for name, rate in speed.items())
          + f"; shipped backend here: {nli.default_backend()} (load average now {os.getloadavg()[0]:.1f})")
    print(json.dumps({"speed": speed, "agree": agree, "temperature": temperature,
                      **{name: {"raw": r["raw"], "calibrated": r["calibrated"]} for name, r in results.items()}}))

if __name__ == "__main__":
    main()
