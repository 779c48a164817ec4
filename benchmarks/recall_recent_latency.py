"""Recall latency with recent chat as a source: 10k memories and 20k unconsolidated
messages in one chat, each question asked with the source on and with it off.

    .venv/bin/python benchmarks/recall_recent_latency.py [--memories 10000]
        [--messages 20000] [--queries 200] [--vector off|on] [--vectors random|e5]
        [--keep DIR]

Memories are generated everyday facts about the chat's members (written through
`core.memories.write_many`), messages generated chat lines by the same members
(through `core.archive`, so the full-text index is filled by the archive writer as in
the bot), none acknowledged. Questions are pieces of memories and of messages, plus
some that match nothing. With `--vector on` every memory and message needs a vector:
`--vectors e5` embeds them with the bundled model (about 27 texts a second here: embed
once with `--keep DIR`, later runs reuse DIR), `--vectors random` stores random unit
vectors (the cost of scoring is the same; what is found is not meaningful). Reported:
p50 / p95 of `core.recall.recall` with the recent source and without it. Each
question is looked at once untimed first (`explain`: the question's vector and its
terms' counts are made then and cached), so the label timed first does not carry
the embedding alone; that look's own time is printed apart.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

from memory_core import FakeClock, Settings, Yuji
from memory_core.eval import vector_eval
from memory_core.eval.generate import distractors
from memory_core.eval.metrics import percentile
from memory_core.storage.memories.memory_repo import MemoryRepo
from memory_core.types import EvidenceRef, NewExperience
from memory_core.vectors.store import IndexRow, VectorIndex, model_folder

SCOPE = "group:1"
MEMBERS = ["小明", "阿杰", "老周", "胖虎", "小鹿", "大刘", "糖糖", "阿May"]
NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)


async def fill(core: Yuji, memories: int, messages: int) -> tuple[list[str], list[str]]:
    exp = await core.archive.append(
        NewExperience(scope=SCOPE, fingerprint="bench", sender_id="1", text="bench", sent_at=NOW)
    )
    made = distractors(memories, members=MEMBERS, chinese=True, seed=memories)
    items = [g.to_write((EvidenceRef(experience_id=exp),)) for g in made]
    for start in range(0, len(items), 5000):
        await core.memories.write_many(SCOPE, items[start : start + 5000], changed_by="bench")
    lines = distractors(messages, members=MEMBERS, chinese=True, seed=messages + 1)
    start = NOW - timedelta(hours=30)
    step = timedelta(hours=29) / max(messages, 1)
    for chunk in range(0, messages, 2000):
        await core.archive.append_many(
            [
                NewExperience(
                    scope=SCOPE,
                    fingerprint=f"m{i}",
                    sender_id=str(100 + i % len(MEMBERS)),
                    sender_name=MEMBERS[i % len(MEMBERS)],
                    text=lines[i].content,
                    sent_at=start + step * i,
                )
                for i in range(chunk, min(chunk + 2000, messages))
            ]
        )
    await core.archive.flush()
    return [g.content for g in made], [g.content for g in lines]


async def random_vectors(core: Yuji) -> None:
    """Random unit vectors for every memory (the index file) and message (the table)."""
    dense = core.vectors
    assert dense is not None
    embedder = dense.embedder
    rng = np.random.default_rng(0)
    repo: MemoryRepo = core.memory_repo
    async with core.db.read() as conn:
        found = await repo.visible_ids(SCOPE, NOW, retrospective=True, conn=conn)
    rows = tuple(IndexRow(i, 1, SCOPE, "", "x") for i in sorted(found))
    matrix = rng.normal(size=(len(rows), embedder.dim)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    VectorIndex(embedder.model_id, embedder.dim, rows, matrix).save(
        model_folder(core.settings.vectors_dir, embedder.model_id)
    )
    messages = core.message_vectors
    assert messages is not None
    while pending := await messages.repo.unembedded(embedder.model_id, 5000):
        m = rng.normal(size=(len(pending), embedder.dim)).astype(np.float32)
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        await messages.repo.store_vectors(embedder.model_id, [(r.id, r.scope) for r in pending], m)


def questions(
    memories: list[str], messages: list[str], count: int, rng: random.Random
) -> list[str]:
    out: list[str] = []
    for i in range(count):
        if i % 4 == 3:
            out.append(rng.choice(["周末去哪玩", "有人去过日本吗", "谁的猫生病了", "在吗"]))
            continue
        text = rng.choice(memories if i % 2 else messages)
        start = rng.randrange(max(len(text) - 8, 1))
        out.append(text[start : start + 8] + "是怎么回事")
    return out


async def measure(args: argparse.Namespace, folder: Path) -> None:
    clock = FakeClock(NOW)
    settings = Settings(data_dir=folder, vector_mode=args.vector)
    core = await Yuji.open(settings, clock=clock)
    try:
        marker = folder / "filled"
        if not marker.exists():
            started = time.perf_counter()
            await fill(core, args.memories, args.messages)
            if args.vector == "on":
                if args.vectors == "e5":
                    await vector_eval.prepare(core)
                    assert core.message_vectors is not None
                    while await core.message_vectors.embed_pending(256):
                        pass
                else:
                    await random_vectors(core)
            marker.write_text(f"{time.perf_counter() - started:.0f} s\n")
        async with core.db.read() as conn:
            mem_rows = await conn.exec_driver_sql("SELECT content FROM memories LIMIT 20000")
            memories = [str(r[0]) for r in mem_rows]
            msg_rows = await conn.exec_driver_sql("SELECT text FROM experiences LIMIT 30000")
            messages = [str(r[0]) for r in msg_rows]
        qs = questions(memories, messages, args.queries, random.Random(1))
        recent = core.recall.recent
        timings: dict[str, list[float]] = {"on": [], "off": [], "first": []}
        quoted = 0
        for q in qs[:10]:
            await core.recall.recall(SCOPE, q)
        for q in qs:
            # What the first ask of a question pays whichever runs first (its vector,
            # its terms' counts), paid here untimed so neither label carries it.
            t = time.perf_counter()
            await core.recall.explain(SCOPE, q)
            timings["first"].append((time.perf_counter() - t) * 1000)
            for label in ("on", "off"):
                core.recall.recent = recent if label == "on" else None
                t = time.perf_counter()
                result = await core.recall.recall(SCOPE, q)
                timings[label].append((time.perf_counter() - t) * 1000)
                quoted += label == "on" and bool(result.quotes)
        core.recall.recent = recent
        print(
            f"{args.memories} memories + {args.messages} unconsolidated messages in one chat, "
            f"vectors {args.vector}{'/' + args.vectors if args.vector == 'on' else ''}, "
            f"{len(qs)} questions ({quoted} with quotes)"
        )
        for label in ("off", "on"):
            ms = timings[label]
            print(
                f"  recent source {label:>3}: p50 {percentile(ms, 50):6.1f} ms"
                f"  p95 {percentile(ms, 95):6.1f} ms"
            )
        ms = timings["first"]
        print(
            f"  (a question's first look, embedding it: p50 {percentile(ms, 50):.1f} ms"
            f"  p95 {percentile(ms, 95):.1f} ms, in neither line above)"
        )
    finally:
        await core.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--vector", choices=["on", "off"], default="off")
    parser.add_argument("--vectors", choices=["random", "e5"], default="random")
    parser.add_argument("--keep", type=Path, help="build here once and reuse it")
    args = parser.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        await measure(args, args.keep)
        return
    with tempfile.TemporaryDirectory(prefix="yuji-bench-") as tmp:
        await measure(args, Path(tmp))


if __name__ == "__main__":
    asyncio.run(main())
