"""Vector side path speed with the default model (bundled USE, one thread).

    .venv/bin/python benchmarks/vector_latency.py [--dataset ../shared/eval/dev.json] [--rounds 5]

1. embed one question: every dataset question embedded alone, `--rounds` times;
   p50/p95 in ms (the budget is p50 <= 5 ms);
2. a whole `guess` (aliases read, scoring, gate, stale check) on an index of the
   dataset's memories, written straight to a temporary database;
3. `yuji embed` throughput: memories embedded per second by `sync_index`;
4. `guess` with `--scale` memories in one chat (random vectors): the worst case of a
   private chat, where "我" narrows nothing, and a group question naming one person.
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
from memory_core.recall.vector_port import VectorAsk
from memory_core.storage.schema import aliases, memories
from memory_core.vectors import UseEmbedder, VectorSide, sync_index
from memory_core.vectors.store import IndexRow, VectorIndex, model_folder


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def load(core: Yuji, data: dict[str, object]) -> None:
    now = datetime.now(UTC)
    async with core.db.write() as conn:
        for m in data["memories"]:  # type: ignore[union-attr]
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
        for a in data["aliases"]:  # type: ignore[union-attr]
            await conn.execute(
                insert(aliases).values(
                    scope=a["scope"], alias=a["alias"], canonical=a["canonical"], created_at=now
                )
            )


def arguments() -> tuple[argparse.Namespace, dict[str, Any]]:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--dataset", default=str(Path(__file__).parents[1] / "../shared/eval/dev.json")
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--scale", type=int, default=10_000, help="memories in one chat for the scale test"
    )
    args = parser.parse_args()
    return args, json.loads(Path(args.dataset).read_text("utf-8"))


async def main(args: argparse.Namespace, data: dict[str, Any]) -> None:
    questions = [q["text"] for q in data["queries"]]

    embedder = UseEmbedder()
    started = time.perf_counter()
    embedder.load()
    print(f"model load: {time.perf_counter() - started:.2f} s")
    times: list[float] = []
    for _ in range(args.rounds):
        for text in questions:
            t = time.perf_counter()
            embedder.embed([text])
            times.append((time.perf_counter() - t) * 1000)
    print(
        f"embed one question: p50 {statistics.median(times):.2f} ms, p95 {pct(times, 0.95):.2f} ms "
        f"({len(times)} calls)"
    )

    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), vector_mode="candidate")
        core = await Yuji.open(settings, embedder=embedder)
        try:
            await load(core, data)
            t = time.perf_counter()
            report = await sync_index(core.db, embedder, settings.vectors_dir)
            spent = time.perf_counter() - t
            print(
                f"yuji embed: {report.embedded} memories in {spent:.2f} s "
                f"({report.embedded / spent:.0f}/s)"
            )
            side = core.vectors
            assert isinstance(side, VectorSide)
            ids = {i + 1 for i in range(len(data["memories"]))}  # type: ignore[arg-type]
            guess_times: list[float] = []
            for _ in range(args.rounds):
                for q in data["queries"]:  # type: ignore[union-attr]
                    t = time.perf_counter()
                    await side.guess(VectorAsk(q["scope"], q["text"], ids))
                    guess_times.append((time.perf_counter() - t) * 1000)
            print(
                f"guess: p50 {statistics.median(guess_times):.2f} ms, "
                f"p95 {pct(guess_times, 0.95):.2f} ms"
            )
        finally:
            await core.close()
    await scale(embedder, args.scale, args.rounds)


async def scale(embedder: UseEmbedder, n: int, rounds: int) -> None:
    """`guess` with n memories in one private chat (no subject narrows the candidates:
    the worst case) and in a group where the question names one of 50 people."""
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), vector_mode="candidate")
        core = await Yuji.open(settings, embedder=embedder)
        try:
            now = datetime.now(UTC)
            rows: list[IndexRow] = []
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
            async with core.db.read() as conn:
                found = (
                    await conn.execute(select(memories.c.id, memories.c.scope, memories.c.subject))
                ).all()
            rows = [IndexRow(int(i), 1, str(sc), str(su), "x") for i, sc, su in found]
            matrix = rng.normal(size=(len(rows), embedder.dim)).astype(np.float32)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            folder = model_folder(settings.vectors_dir, embedder.model_id)
            VectorIndex(embedder.model_id, embedder.dim, tuple(rows), matrix).save(folder)
            side = core.vectors
            assert isinstance(side, VectorSide)
            for scope, question in (
                ("private:1", "我最近在忙什么"),
                ("group:1", "成员7最近在忙什么"),
            ):
                ids = {r.memory_id for r in rows if r.scope == scope}
                times: list[float] = []
                for _ in range(rounds * 10):
                    t = time.perf_counter()
                    await side.guess(VectorAsk(scope, question, ids))
                    times.append((time.perf_counter() - t) * 1000)
                print(
                    f"guess, {n} memories in {scope} ({question}): "
                    f"p50 {statistics.median(times):.2f} ms, p95 {pct(times, 0.95):.2f} ms"
                )
        finally:
            await core.close()


if __name__ == "__main__":
    asyncio.run(main(*arguments()))
