"""Recall latency at 1k / 10k / 100k memories in one chat, beside a raw FTS5 query.

    .venv/bin/python benchmarks/recall_latency.py [--sizes 1000,10000,100000] [--queries 200]
        [--vector on|shadow|off]

Each size gets a fresh temporary database filled through the public write path
(`core.memories.write_many`) with generated everyday memories about the chat's
members; the questions are made from memories of the chat (so most find something)
and from unrelated words (so some stay silent). Reported per size: p50 / p95 of
`core.recall.recall` and of a plain `bm25` top-5 FTS5 query on the same index.
With `--vector on` (the default, as in production) dense retrieval is part of every
question (the bundled e5; every memory is embedded first, which takes a while at
100k); `--vector off` measures words and links only.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from memory_core import FakeClock, Settings, Yuji
from memory_core.eval import vector_eval
from memory_core.eval.generate import distractors
from memory_core.eval.metrics import percentile
from memory_core.settings import VectorMode
from memory_core.tokenize import bigram_tokens
from memory_core.types import EvidenceRef, NewExperience

SCOPE = "group:1"
MEMBERS = ["小明", "阿杰", "老周", "胖虎", "小鹿", "大刘", "糖糖", "阿May"]
QUESTIONS = ["小明最近在忙什么", "有人去过日本吗", "谁的猫生病了", "周末去哪玩", "阿杰换工作了吗"]


async def fill(core: Yuji, size: int) -> list[str]:
    exp = await core.archive.append(
        NewExperience(
            scope=SCOPE, fingerprint="bench", sender_id="1", text="bench", sent_at=core.clock.now()
        )
    )
    evidence = (EvidenceRef(experience_id=exp),)
    made = distractors(size, members=MEMBERS, chinese=True, seed=size)
    items = [g.to_write(evidence) for g in made]
    for start in range(0, len(items), 5000):
        await core.memories.write_many(SCOPE, items[start : start + 5000], changed_by="bench")
    return [g.content for g in made]


def questions(contents: list[str], count: int, rng: random.Random) -> list[str]:
    out: list[str] = []
    for i in range(count):
        if i % 4 == 3:
            out.append(rng.choice(QUESTIONS))
            continue
        text = rng.choice(contents)
        start = rng.randrange(max(len(text) - 8, 1))
        out.append(text[start : start + 8] + "是怎么回事")
    return out


async def timed(core: Yuji, qs: list[str]) -> tuple[list[float], list[float]]:
    """Milliseconds of `recall` per question (after ten to warm up), and of the plain
    bm25 top 5 on the same index."""
    for q in qs[:10]:
        await core.recall.recall(SCOPE, q)
    recall_ms: list[float] = []
    for q in qs:
        t = time.perf_counter()
        await core.recall.recall(SCOPE, q)
        recall_ms.append((time.perf_counter() - t) * 1000)
    raw_ms: list[float] = []
    for q in qs:
        tokens = bigram_tokens(q)
        t = time.perf_counter()
        await core.memory_repo.bm25(SCOPE, tokens, limit=5)
        raw_ms.append((time.perf_counter() - t) * 1000)
    return recall_ms, raw_ms


async def measure(size: int, count: int, vector: VectorMode = "on") -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="yuji-bench-") as tmp:
        clock = FakeClock(datetime(2026, 11, 20, 12, tzinfo=UTC))
        settings = Settings(data_dir=Path(tmp), vector_mode=vector)
        core = await Yuji.open(settings, clock=clock)
        try:
            started = time.perf_counter()
            contents = await fill(core, size)
            load_s = time.perf_counter() - started
            if vector != "off":
                await vector_eval.prepare(core)
            recall_ms, raw_ms = await timed(core, questions(contents, count, random.Random(size)))
        finally:
            await core.close()
    return {
        "size": size,
        "load_s": round(load_s, 1),
        "recall_p50": round(percentile(recall_ms, 50), 2),
        "recall_p95": round(percentile(recall_ms, 95), 2),
        "fts5_p50": round(percentile(raw_ms, 50), 2),
        "fts5_p95": round(percentile(raw_ms, 95), 2),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--vector", choices=["on", "shadow", "off"], default="on")
    args = parser.parse_args()
    print(f"{'memories':>9} {'load s':>7} {'recall p50':>11} {'p95':>7} {'fts5 p50':>9} {'p95':>7}")
    for size in (int(s) for s in args.sizes.split(",")):
        r = await measure(size, args.queries, args.vector)
        print(
            f"{r['size']:>9} {r['load_s']:>7} {r['recall_p50']:>11} {r['recall_p95']:>7}"
            f" {r['fts5_p50']:>9} {r['fts5_p95']:>7}",
            flush=True,
        )


if __name__ == "__main__":
    asyncio.run(main())
