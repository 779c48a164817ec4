"""Recall latency at 1k / 10k / 100k memories in one chat, beside a raw FTS5 query.

    .venv/bin/python benchmarks/recall_latency.py [--sizes 1000,10000,100000] [--queries 200]
        [--vector on|shadow|off] [--context 3] [--pending N] [--keep DIR] [--rounds N]

Each size gets a fresh temporary database filled through the public write path
(`core.memories.write_many`) with generated everyday memories about the chat's
members, each citing a message of its own said over the past 120 days (archived and
acknowledged, as consolidation leaves them), valid from then; the questions are made from memories of the chat (so most find something)
and from unrelated words (so some stay silent). Reported per size: p50 / p95 of
`core.recall.recall` and of a plain `bm25` top-5 FTS5 query on the same index.
With `--vector on` (the default, as in production) dense retrieval is part of every
question (the bundled e5; every memory is embedded first, which takes a while at
100k); `--vector off` measures words and links only.

`--context N` (context mode) also times every question again with N turns before it
(short sentences made from other memories of the chat, member and bot turns taking
turns, as the chat path hands them over), in the same run: `ctx p50` / `ctx p95`
beside the wake alone (recall reads a turn by its words; no turn is embedded), and
`react p95`: reactions ("是啊，真的好累", "羡慕了") after the same turns, which lean on
them (memory_core/recall/wake.py) and are embedded a second time joined with them.

`--pending N` also archives N messages of the chat that no consolidation has read (said
before the questions, embedded as the bot embeds them in the background): a busy chat's
recent messages are a recall source of their own (memory_core/recall/quotes.py), searched beside
the memories.

The first-person questions ("我…") are asked by nobody (`我… p95`) and by a member
(`asker p95`) in turns, question by question, so the difference is what knowing the
asker costs (the carried stage, carried.py, runs for a wake about someone) and not
what the machine did meanwhile.

`--keep DIR` keeps each size's filled and embedded store under DIR and reuses it on the
next run (filling 10k memories takes minutes; timing them, seconds), and `--rounds N`
times the same questions N times in a row, one line each: on a shared machine, the
rounds show how much of a p95 is the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memory_core import FakeClock, Settings, Yuji
from memory_core.eval import vector_eval
from memory_core.eval.generate import distractors
from memory_core.eval.loader import acknowledge_through
from memory_core.eval.metrics import percentile
from memory_core.recall.wake import Turn
from memory_core.settings import VectorMode
from memory_core.tokenize import bigram_tokens
from memory_core.types import Asker, EvidenceRef, NewExperience

SCOPE = "group:1"
MEMBERS = ["小明", "阿杰", "老周", "胖虎", "小鹿", "大刘", "糖糖", "阿May"]
DAYS = 120
REACTIONS = ["是啊，真的好累", "哈哈哈哈", "太惨了吧", "羡慕了", "我也想去", "真的假的", "好吧"]
"""The memories' messages were said over this many days before the questions."""
QUESTIONS = ["小明最近在忙什么", "有人去过日本吗", "谁的猫生病了", "周末去哪玩", "阿杰换工作了吗"]


async def fill(core: Yuji, size: int) -> list[str]:
    """`size` memories about the chat's members, each citing a message of its own said
    over the past `DAYS` days and valid from then (what a named day finds), every
    message acknowledged by consolidation."""
    made = distractors(size, members=MEMBERS, chinese=True, seed=size)
    start = core.clock.now() - timedelta(days=DAYS)
    step = timedelta(days=DAYS) / size
    said: list[tuple[int, datetime]] = []
    for i, g in enumerate(made):
        sent = start + i * step
        exp = await core.archive.append(
            NewExperience(
                scope=SCOPE,
                fingerprint=f"said-{i}",
                sender_id=str(2 + (MEMBERS.index(g.subject) if g.subject in MEMBERS else 99)),
                sender_name=g.subject,
                text=g.content,
                sent_at=sent,
            )
        )
        said.append((exp, sent))
    await core.archive.flush()
    await acknowledge_through(core, SCOPE, said[-1][0])
    items = [
        g.to_write((EvidenceRef(experience_id=exp),), valid_from=sent)
        for g, (exp, sent) in zip(made, said, strict=True)
    ]
    for first in range(0, len(items), 5000):
        await core.memories.write_many(SCOPE, items[first : first + 5000], changed_by="bench")
    return [g.content for g in made]


async def pend(core: Yuji, contents: list[str], count: int) -> None:
    """`count` messages of the chat no consolidation has read, embedded."""
    rng = random.Random(count)
    start = core.clock.now() - timedelta(hours=1)
    for i in range(count):
        said = rng.choice(contents)
        await core.archive.append(
            NewExperience(
                scope=SCOPE,
                fingerprint=f"pending-{i}",
                sender_id=str(i % len(MEMBERS) + 2),
                sender_name=MEMBERS[i % len(MEMBERS)],
                text=said[:40],
                sent_at=start + timedelta(seconds=2 * i),
            )
        )
    await core.archive.flush()
    if core.message_vectors is not None:
        while await core.message_vectors.embed_pending():
            pass


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


def contexts(contents: list[str], count: int, turns: int, rng: random.Random) -> list[list[Turn]]:
    """`turns` short turns before each question (member and bot taking turns)."""
    out: list[list[Turn]] = []
    for _ in range(count):
        said = [rng.choice(contents)[:20] for _ in range(turns)]
        out.append([Turn(t, is_bot=i % 2 == 1, scope=SCOPE) for i, t in enumerate(said)])
    return out


@dataclass
class Timed:
    recall_ms: list[float]
    raw_ms: list[float]
    answered: float
    """The share of questions that got a memory or a quote (an empty chat gets none)."""
    quoted: float
    """The share that got a recent message quoted."""


async def timed(
    core: Yuji, qs: list[str], ctx: list[list[Turn]] | None = None, asker: Asker | None = None
) -> Timed:
    """Milliseconds of `recall` per question (after ten to warm up; with `ctx`, each
    with its turns before it; asked by `asker`), and of the plain bm25 top 5 on the
    same index."""
    turns = ctx or [[] for _ in qs]
    for q, c in zip(qs[:10], turns[:10], strict=True):
        await core.recall.recall(SCOPE, q, context=c, asker=asker)
    recall_ms: list[float] = []
    answered = quoted = 0
    for q, c in zip(qs, turns, strict=True):
        t = time.perf_counter()
        got = await core.recall.recall(SCOPE, q, context=c, asker=asker)
        recall_ms.append((time.perf_counter() - t) * 1000)
        answered += bool(got.items or got.quotes)
        quoted += bool(got.quotes)
    raw_ms: list[float] = []
    for q in qs:
        tokens = bigram_tokens(q)
        t = time.perf_counter()
        await core.memory_repo.bm25(SCOPE, tokens, limit=5)
        raw_ms.append((time.perf_counter() - t) * 1000)
    return Timed(recall_ms, raw_ms, answered / len(qs), quoted / len(qs))


async def paired(core: Yuji, qs: list[str], asker: Asker) -> tuple[list[float], list[float]]:
    """Milliseconds of `recall` per question asked by nobody and by `asker`, in turns
    (after ten of each to warm up): on a shared machine a busy spell falls on both."""
    for q in qs[:10]:
        await core.recall.recall(SCOPE, q)
        await core.recall.recall(SCOPE, q, asker=asker)
    nobody: list[float] = []
    member: list[float] = []
    for i, q in enumerate(qs):
        order = ((None, nobody), (asker, member))
        for who, out in order if i % 2 == 0 else order[::-1]:
            t = time.perf_counter()
            await core.recall.recall(SCOPE, q, asker=who)
            out.append((time.perf_counter() - t) * 1000)
    return nobody, member


async def measure(
    size: int,
    count: int,
    vector: VectorMode = "on",
    turns: int = 0,
    keep: Path | None = None,
    pending: int = 0,
) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="yuji-bench-") as tmp:
        name = f"{size}-{vector}" + (f"-pending{pending}" if pending else "")
        data_dir = keep / name if keep is not None else Path(tmp)
        filled = keep is not None and data_dir.exists()
        clock = FakeClock(datetime(2026, 11, 20, 12, tzinfo=UTC))
        settings = Settings(data_dir=data_dir, vector_mode=vector)
        core = await Yuji.open(settings, clock=clock)
        try:
            started = time.perf_counter()
            if filled:
                made = distractors(size, members=MEMBERS, chinese=True, seed=size)
                contents = [g.content for g in made]
            else:
                contents = await fill(core, size)
                await pend(core, contents, pending)
            load_s = time.perf_counter() - started
            if vector != "off":
                await vector_eval.prepare(core)
            qs = questions(contents, count, random.Random(size))
            alone = await timed(core, qs)
            # The same questions in the first person, asked by a member and by nobody:
            # what knowing the asker costs.
            mine = [f"我{q}" for q in qs]
            nobody, member = await paired(core, mine, Asker("20001", (MEMBERS[0],)))
            ctx_ms: list[float] = []
            react_ms: list[float] = []
            if turns:
                ctx = contexts(contents, count, turns, random.Random(size + 1))
                ctx_ms = (await timed(core, [f"{q}。" for q in qs], ctx)).recall_ms
                said = random.Random(size + 2)
                reactions = [said.choice(REACTIONS) for _ in qs]
                # Turns of their own: a reaction after turns already embedded would be
                # timed from the vector cache.
                fresh = [[replace(t, text=f"{t.text}，{i}") for t in c] for i, c in enumerate(ctx)]
                react_ms = (await timed(core, reactions, fresh)).recall_ms
        finally:
            await core.close()
    return {
        "ctx_p50": round(percentile(ctx_ms, 50), 2),
        "ctx_p95": round(percentile(ctx_ms, 95), 2),
        "react_p95": round(percentile(react_ms, 95), 2),
        "size": size,
        "load_s": round(load_s, 1),
        "recall_p50": round(percentile(alone.recall_ms, 50), 2),
        "recall_p95": round(percentile(alone.recall_ms, 95), 2),
        "fts5_p50": round(percentile(alone.raw_ms, 50), 2),
        "fts5_p95": round(percentile(alone.raw_ms, 95), 2),
        "first_person_p95": round(percentile(nobody, 95), 2),
        "asker_p95": round(percentile(member, 95), 2),
        "answered": round(alone.answered, 3),
        "quoted": round(alone.quoted, 3),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--vector", choices=["on", "shadow", "off"], default="on")
    parser.add_argument("--context", type=int, default=0, metavar="N", help="turns before a wake")
    parser.add_argument(
        "--pending", type=int, default=0, metavar="N", help="unconsolidated messages of the chat"
    )
    parser.add_argument("--keep", type=Path, metavar="DIR", help="keep and reuse the stores here")
    parser.add_argument("--rounds", type=int, default=1, help="time the questions N times")
    args = parser.parse_args()
    print(
        f"{'memories':>9} {'load s':>7} {'recall p50':>11} {'p95':>7} {'fts5 p50':>9} {'p95':>7}"
        + f" {'answered':>9} {'quoted':>7} {'我… p95':>8} {'asker p95':>9}"
        + (f" {'ctx p50':>8} {'ctx p95':>8} {'react p95':>9}" if args.context else "")
    )
    sizes = [int(s) for s in args.sizes.split(",")]
    for size in (size for size in sizes for _ in range(args.rounds)):
        r = await measure(size, args.queries, args.vector, args.context, args.keep, args.pending)
        print(
            f"{r['size']:>9} {r['load_s']:>7} {r['recall_p50']:>11} {r['recall_p95']:>7}"
            f" {r['fts5_p50']:>9} {r['fts5_p95']:>7} {r['answered']:>9} {r['quoted']:>7}"
            f" {r['first_person_p95']:>8} {r['asker_p95']:>9}"
            + (f" {r['ctx_p50']:>8} {r['ctx_p95']:>8} {r['react_p95']:>9}" if args.context else ""),
            flush=True,
        )


if __name__ == "__main__":
    asyncio.run(main())
