"""Dense retrieval speed with the default model (bundled multilingual-e5-small, 4-bit).

    .venv/bin/python benchmarks/vector_latency.py --dataset FILE.json [--rounds 5] [--scale 10000]

1. embed one question (`embed_query`): every dataset question embedded alone,
   `--rounds` times; p50/p95 in ms;
2. `yuji embed` throughput: memories embedded per second by `sync_index`;
3. dense scores (`Dense.scores`: the question embedded and scored against every
   visible memory of its chat) and a whole `core.recall.recall` with dense on, on an
   index of the dataset's memories written straight to a temporary database;
4. the same with `--scale` memories in one chat (random vectors): a private chat
   and a group where the question names one of 50 people.

FILE is any dataset in docs/eval-format.md format (e.g. one of training/corpus/).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import insert, select

from memory_core import Settings, Yuji
from memory_core.storage.schema import aliases, memories
from memory_core.vectors import Dense, E5Embedder, sync_index
from memory_core.vectors.store import IndexRow, VectorIndex, model_folder


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def line(name: str, times: list[float]) -> str:
    return f"{name}: p50 {statistics.median(times):.2f} ms, p95 {pct(times, 0.95):.2f} ms"


async def load(core: Yuji, data: dict[str, Any]) -> None:
    now = datetime.now(UTC)
    async with core.db.write() as conn:
        for m in data["memories"]:
            await conn.execute(
                insert(memories).values(
                    scope=m["scope"],
                    type=m["type"],
                    subject=m["subject"],
                    content=m["content"],
                    status="active",
                    created_at=now,
                    updated_at=now,
                )
            )
        for a in data.get("aliases", []):
            await conn.execute(
                insert(aliases).values(
                    scope=a["scope"], alias=a["alias"], canonical=a["canonical"], created_at=now
                )
            )
    await core.recall.reindex()


def arguments() -> tuple[argparse.Namespace, dict[str, Any]]:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--scale", type=int, default=10_000, help="memories in one chat for the scale test"
    )
    args = parser.parse_args()
    return args, json.loads(Path(args.dataset).read_text("utf-8"))


async def main(args: argparse.Namespace, data: dict[str, Any]) -> None:
    questions = [q["text"] for q in data["queries"]]
    embedder = E5Embedder()
    started = time.perf_counter()
    embedder.load()
    print(f"model load: {time.perf_counter() - started:.2f} s")
    times: list[float] = []
    for _ in range(args.rounds):
        for text in questions:
            t = time.perf_counter()
            embedder.embed_query(text)
            times.append((time.perf_counter() - t) * 1000)
    print(line(f"embed one question ({len(times)} calls)", times))

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), vector_mode="on")
        core = await Yuji.open(settings, embedder=embedder)
        try:
            await load(core, data)
            t = time.perf_counter()
            report = await sync_index(core.memory_repo, embedder, core.vector_place)
            spent = time.perf_counter() - t
            print(
                f"yuji embed: {report.embedded} memories in {spent:.2f} s "
                f"({report.embedded / spent:.0f}/s)"
            )
            dense = core.vectors
            assert isinstance(dense, Dense)
            now = datetime.now(UTC)
            score_ms: list[float] = []
            recall_ms: list[float] = []
            for _ in range(args.rounds):
                for q in data["queries"]:
                    ids = await core.memory_repo.visible_ids(q["scope"], now)
                    t = time.perf_counter()
                    await dense.scores(q["scope"], q["text"], ids)
                    score_ms.append((time.perf_counter() - t) * 1000)
                    t = time.perf_counter()
                    await core.recall.recall(q["scope"], q["text"], now=now)
                    recall_ms.append((time.perf_counter() - t) * 1000)
            print(line("dense scores", score_ms))
            print(line("recall, dense on", recall_ms))
        finally:
            await core.close()
    await scale(embedder, args.scale, args.rounds)


async def scale(embedder: E5Embedder, n: int, rounds: int) -> None:
    """Dense scores and recall with n memories in one private chat and in a group
    where the question names one of 50 people (random vectors)."""
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), vector_mode="on")
        core = await Yuji.open(settings, embedder=embedder)
        try:
            now = datetime.now(UTC)
            async with core.db.write() as conn:
                for scope in ("private:1", "group:1"):
                    values = [
                        {
                            "scope": scope,
                            "type": "fact",
                            "subject": f"成员{i % 50}",
                            "content": f"成员{i % 50}的第{i}条记忆",
                            "status": "active",
                            "created_at": now,
                            "updated_at": now,
                        }
                        for i in range(n)
                    ]
                    await conn.execute(insert(memories), values)
            await core.recall.reindex()
            async with core.db.read() as conn:
                found = (
                    await conn.execute(select(memories.c.id, memories.c.scope, memories.c.subject))
                ).all()
            rows = [IndexRow(int(i), 1, str(sc), str(su), "x") for i, sc, su in found]
            matrix = rng.normal(size=(len(rows), embedder.dim)).astype(np.float32)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            folder = model_folder(settings.vectors_dir, embedder.model_id)
            VectorIndex(embedder.model_id, embedder.dim, tuple(rows), matrix).save(folder)
            dense = core.vectors
            assert isinstance(dense, Dense)
            for scope, question in (
                ("private:1", "我最近在忙什么"),
                ("group:1", "成员7最近在忙什么"),
            ):
                ids = frozenset(r.memory_id for r in rows if r.scope == scope)
                score_ms: list[float] = []
                recall_ms: list[float] = []
                for _ in range(rounds * 4):
                    t = time.perf_counter()
                    await dense.scores(scope, question, ids)
                    score_ms.append((time.perf_counter() - t) * 1000)
                    t = time.perf_counter()
                    await core.recall.recall(scope, question, now=now)
                    recall_ms.append((time.perf_counter() - t) * 1000)
                print(line(f"dense scores, {n} memories in {scope} ({question})", score_ms))
                print(line(f"recall, {n} memories in {scope} ({question})", recall_ms))
        finally:
            await core.close()


if __name__ == "__main__":
    asyncio.run(main(*arguments()))
