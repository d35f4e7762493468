"""The training script's epoch order: repetition factors, including a fraction that subsamples a source."""
from __future__ import annotations

from collections import Counter

import pytest

from tests.scripts import load_script


@pytest.fixture(scope="module")
def train_nli():
    return load_script("train_nli")


def test_repeat_factors_read_whole_and_fractional_factors(train_nli):
    assert train_nli.repeat_factors("contractnli=2, snli=0.15,") == {"contractnli": 2.0, "snli": 0.15}
    assert train_nli.repeat_factors("") == {}


def test_epoch_order_repeats_drops_and_subsamples_by_source(train_nli):
    sources = ["snli"] * 2000 + ["mnli"] * 10 + ["fever"] * 10
    order = train_nli.epoch_order(sources, {"snli": 0.25, "mnli": 2, "fever": 0}, seed=7)
    per_source = Counter(sources[i] for i in order)
    assert per_source["mnli"] == 20 and per_source["fever"] == 0
    assert 400 < per_source["snli"] < 600  # about a quarter of 2,000, each kept pair once
    kept = [i for i in order if sources[i] == "snli"]
    assert len(kept) == len(set(kept))


def test_epoch_order_is_fixed_by_the_seed(train_nli):
    sources = ["snli"] * 500
    assert train_nli.epoch_order(sources, {"snli": 0.5}, 1) == train_nli.epoch_order(sources, {"snli": 0.5}, 1)
    assert train_nli.epoch_order(sources, {"snli": 0.5}, 1) != train_nli.epoch_order(sources, {"snli": 0.5}, 2)
