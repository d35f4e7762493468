"""Build the training knowledge base's documents from ``../shared/data/train`` (FIT data only).

The sample KB is what a person uses the workbench on: one knowledge base of policy pages, contracts and
encyclopedia articles, asked about in every way at once. No training domain looks like it (ShARC gives
one rule text per question, ContractNLI one contract, SQuAD only encyclopedia articles), so a gate fitted
on them never sees a policy question asked beside an encyclopedia article. This script assembles such a
knowledge base from training text alone; ``train_kb/questions.jsonl`` holds questions written against it
from the documents alone (see ``train_kb/README.md``).

- policy: the ShARC train rule texts of ten guide pages, each page's snippets in the order they first
  appear, titled from the page's address ("…/winter-fuel-payment/eligibility" → "Winter fuel payment:
  eligibility");
- encyclopedia: the first eight paragraphs of each SQuAD 2.0 train article that is not held out (seven);
- contracts: three ContractNLI train NDAs, each the union of its 17 hypotheses' evidence spans.

    python scripts/build_train_kb.py            # writes train_kb/documents/
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the held-out articles and the training folder are core's

from core.evaluation.training import SQUAD_HELD_OUT, TRAIN_DIR  # noqa: E402
GUIDES = (
    "https://www.gov.uk/tier-4-general-visa/eligibility",
    "https://www.gov.uk/working-tax-credit/eligibility",
    "https://www.gov.uk/winter-fuel-payment/eligibility",
    "https://www.gov.uk/cold-weather-payment/eligibility",
    "https://www.gov.uk/1619-bursary-fund/eligibility",
    "https://www.gov.uk/housing-benefit/how-to-claim",
    "https://www.gov.uk/employee-rights-when-on-leave",
    "https://www.gov.uk/mandatory-reconsideration",
    "https://www.gov.uk/additional-state-pension/inheriting",
    "https://www.gov.uk/national-minimum-wage/who-gets-the-minimum-wage",
)
PARAGRAPHS = 8
CONTRACTS = (0, 1, 2)  # ContractNLI train blocks of 17 rows
CONTRACT_ROWS = 17


def slug(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()  # "Beyoncé" → "beyonce"
    return re.sub(r"[^a-z0-9]+", "_", plain.lower()).strip("_")


def guide_title(url: str) -> str:
    parts = [p for p in url.split("/")[3:] if p and p != "guidance"]
    words = [p.replace("-", " ") for p in parts]
    return (words[0][:1].upper() + words[0][1:] + "".join(f": {w}" for w in words[1:])).strip()


def policy_documents(train_dir: Path) -> dict[str, str]:
    trees = json.loads((train_dir / "sharc_train_trees.json").read_text(encoding="utf-8"))
    out = {}
    for url in GUIDES:
        snippets = list(dict.fromkeys(t["snippet"].strip() for t in trees if t["source_url"] == url))
        if not snippets:
            raise SystemExit(f"no ShARC train snippet comes from {url}")
        title = guide_title(url)
        out[f"policy/{slug(title)}.md"] = f"# {title}\n\n" + "\n\n".join(snippets) + "\n"
    return out


def encyclopedia_documents(train_dir: Path) -> dict[str, str]:
    articles = json.loads((train_dir / "squad2_train_first10.json").read_text(encoding="utf-8"))["data"]
    out = {}
    for n in range(len(articles)):
        if n in SQUAD_HELD_OUT:
            continue
        title = articles[n]["title"].replace("_", " ")
        paragraphs = [p["context"].strip() for p in articles[n]["paragraphs"][:PARAGRAPHS]]
        out[f"encyclopedia/{slug(title)}.md"] = f"# {title}\n\n" + "\n\n".join(paragraphs) + "\n"
    return out


def contract_documents(train_dir: Path) -> dict[str, str]:
    with (train_dir / "contractnli_train.csv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    out = {}
    for n in CONTRACTS:
        block = rows[n * CONTRACT_ROWS:(n + 1) * CONTRACT_ROWS]
        spans = list(dict.fromkeys(s.strip() for row in block for s in row["concatenated_spans"].split("\n")
                                   if s.strip()))
        out[f"contracts/nda_{n + 1}.md"] = f"# Non-disclosure agreement {n + 1}\n\n" + "\n\n".join(spans) + "\n"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "train_kb" / "documents")
    args = parser.parse_args()
    documents = {**policy_documents(TRAIN_DIR), **encyclopedia_documents(TRAIN_DIR), **contract_documents(TRAIN_DIR)}
    for name, text in documents.items():
        path = args.out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    print(f"wrote {len(documents)} documents under {args.out}")


if __name__ == "__main__":
    main()
