"""Batch evaluation sharded over Dask (``python -m core eval … --engine dask``, the ``scale`` extra).

The items to analyse are cut into shards, each against one knowledge base (a document set's own, or
a slice of the items of a KB folder); Dask workers open the knowledge base and analyse the shard,
and this process writes every record they return to the same trace cache, under the same keys, as
``BatchRunner`` does. So the traces, a later re-run from the cache and every metric are those of the
local runner; what is lost is per-item resumption inside a shard (a shard whose worker dies is
analysed again). Workers run local processes (``workers``) or those of a running scheduler
(``scheduler``); a worker that runs other analysis code or models than this process refuses to work.
"""
from __future__ import annotations

import logging
import math
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from core.engines import require
from core.evaluation.runner import BatchRunner, Shard

CONNECT_TIMEOUT = 10.0  # seconds to reach a scheduler before saying it cannot be reached
SHARDS_PER_THREAD = 2  # a KB folder's items are cut into this many shards per worker thread


class DaskBatchRunner(BatchRunner):
    """``BatchRunner`` whose analysis runs on Dask workers: ``workers`` local processes (``processes=False``:
    threads of this process) or the workers of the scheduler at ``scheduler`` (``tcp://host:8786``)."""

    def __init__(self, values=None, cache_dir=None, *, scheduler: str = "", workers: int = 2,
                 processes: bool = True, connect_timeout: float = CONNECT_TIMEOUT, **kwargs):
        super().__init__(values, cache_dir, **kwargs)
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"the number of Dask workers must be a whole number ≥ 1, not {workers!r}")
        self.scheduler = scheduler.strip()
        self.workers = workers
        self.processes = processes
        self.connect_timeout = connect_timeout

    def _analysed(self, shards: Sequence[Shard], folder_kb, on_open: Callable[[], None]
                  ) -> Iterator[tuple[dict[str, Any], float]]:
        """Records in the order the workers finish them (the cache is keyed, so order does not matter)."""
        if not shards:  # everything came from the cache: no cluster to start or reach
            return
        distributed = require("distributed", "batch evaluation over Dask (--engine dask)")
        with self._client(distributed) as client:
            worker_runner = BatchRunner(self.values, self.cache_dir.resolve(), show_bar=False,
                                        open_kb=self.open_kb, make_workbench=self.make_workbench)
            run_key = self.run_key()
            on_open()
            futures = [client.submit(analyse_shard, worker_runner, piece, run_key, pure=False)
                       for piece in _pieces(shards, sum(client.nthreads().values()))]
            for future in distributed.as_completed(futures):
                records, seconds = future.result()
                for n, record in enumerate(records):
                    yield record, seconds if n == 0 else 0.0

    @contextmanager
    def _client(self, distributed):
        if not self.scheduler:
            with distributed.LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=self.processes,
                                          dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
                    distributed.Client(cluster) as client:
                yield client
            return
        try:
            client = distributed.Client(self.scheduler, timeout=self.connect_timeout)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ValueError(f"cannot reach the Dask scheduler at {self.scheduler} ({exc}): start it with "
                             f"`dask scheduler` and its workers with `dask worker {self.scheduler}`, each from "
                             f"a checkout of this code with the same models") from None
        with client:
            if not client.nthreads():
                raise ValueError(f"the Dask scheduler at {self.scheduler} has no workers: start some with "
                                 f"`dask worker {self.scheduler}`")
            yield client


def _pieces(shards: Sequence[Shard], threads: int) -> list[Shard]:
    """The tasks: a document set's shard is one (its KB is built once, by one worker); a KB folder's
    items are spread over the worker threads, each piece loading the folder's index."""
    pieces = []
    for shard in shards:
        size = math.ceil(len(shard.items) / (SHARDS_PER_THREAD * max(threads, 1)))
        pieces += shard.split(size) if shard.folder else [shard]
    return pieces


def analyse_shard(runner: BatchRunner, shard: Shard, run_key: str) -> tuple[list[dict[str, Any]], float]:
    """On a worker: the shard's cache records and the seconds spent opening its knowledge base."""
    if runner.run_key() != run_key:
        raise ValueError(f"a Dask worker runs other analysis code or models than the machine that submitted the "
                         f"run (run key {runner.run_key()} there, {run_key} here; code in "
                         f"{Path(__file__).resolve().parents[2]}): start the workers from the same checkout")
    workbench, kb_error, seconds = runner.open_shard(shard)
    return list(runner.shard_records(shard, workbench, kb_error)), seconds
