"""Does consolidation keep up with busy groups? One simulated day, the real scheduler.

    .venv/bin/python benchmarks/consolidation_keepup.py [--scheduler new|old]
        [--budget 1.0] [--groups 10] [--messages 3000] [--seed 1]

`--groups` groups say `--messages` each over one local day (Asia/Shanghai) with
daytime peaks (lunch, evening; quiet 01:00-07:00); seven of ten woke the bot this
week, the rest are silent. Time is simulated (`tests.fakes.simtime.SimTime` on the
core's `FakeClock`): arrivals are archived in 10-second slots, and every model turn
takes 3-8 simulated seconds. The fake model works like a real one: it searches, then
writes and acknowledges in the same or the next turn, and reports usage the way a
provider does (prompt tokens estimated with yuji's own `estimate_tokens` over every
message and the tool schemas, completion tokens over its answer). The budget is read
from the `llm_usage` rows that run wrote.

- `--scheduler new`: `core.consolidation.run()`, the scheduler the bot runs, on the
  default budget times `--budget` (0.1: a tenth).
- `--scheduler old`: what main did before issue 26: a tick every 10 minutes, one
  batch per tick over all chats, at most 4 batches an hour (`run_once` with
  concurrency 1 and the hourly ceiling 4; its order is the new one, awake chats first).

Reported per group: lag of each message from said to acknowledged (p50 / p95 / max,
minutes; a message still unread at the end counts with its wait so far, marked `>`),
unread at the end, consolidation tokens, lag alerts; then the day's tokens and the
busiest hour's, and a check that nothing was marked read without an acknowledged
batch holding it. The run goes on 2.5 hours past midnight so the last messages can
reach their eligibility wait.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import re
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.consolidation_overhead import WORDS
from memory_core import FakeClock, NewExperience, RecordingAlertSink, Settings, Yuji
from memory_core.llm import LLMRequest, ScriptedLLM, tool_call, tool_calls_response
from memory_core.llm.base import ChatResponse
from memory_core.prompts.budget import estimate_tokens
from memory_core.storage.schema import (
    consolidation_batches,
    consolidation_cursors,
    experiences,
    llm_usage,
)
from tests.core.nightly.seed import sh
from tests.fakes.simtime import SimTime

SLOT = timedelta(seconds=10)
DRAIN = timedelta(hours=2, minutes=30)
HOURLY = [3, 2, 1, 0.5, 0.3, 0.3, 0.5, 2, 4, 5, 6, 7, 9, 8, 5, 5, 5, 6, 7, 9, 11, 11, 9, 6]
"""Relative message rate per local hour (lunch and evening peaks)."""
AWAKE_SHARE = 0.7


class Model:
    """Turns of 3-8 simulated seconds, two or three per batch, with provider usage."""

    def __init__(self, sim: SimTime, rng: random.Random) -> None:
        self.sim = sim
        self.rng = rng
        self.turns = 0

    async def answer(self, request: LLMRequest) -> ChatResponse:
        self.turns += 1
        await self.sim.sleep(self.rng.uniform(3, 8))
        user = request.messages[1].content or ""
        token = re.search(r"token：(\S+)", user)
        assert token
        ids = [int(i) for i in re.findall(r"^#(\d+) ", user, re.M)]
        turn = sum(1 for m in request.messages if m.role == "assistant")
        write = tool_call(
            "write_memory",
            {
                "token": token.group(1),
                "type": "event",
                "subject": "群友",
                "content": f"群里聊到了第{ids[0]}条附近的话题",
                "evidence": ids[:2],
            },
        )
        ack = tool_call(
            "acknowledge",
            {"token": token.group(1), "outcome": "extracted", "summary": f"{len(ids)} 条闲聊"},
        )
        if turn == 0:
            calls = [tool_call("search_memories", {"token": token.group(1), "query": "话题"})]
        elif turn == 1 and self.rng.random() < 0.5:
            calls = [write]
        else:
            calls = [write, ack] if turn == 1 else [ack]
        response = tool_calls_response(*calls)
        prompt = "\n".join(m.content or "" for m in request.messages)
        prompt += json.dumps([t.parameters for t in request.tools], ensure_ascii=False)
        completion = "".join(c.arguments for c in response.message.tool_calls)
        usage = {
            "prompt_tokens": estimate_tokens(prompt),
            "completion_tokens": estimate_tokens(completion) + 20,
        }
        return ChatResponse(response.message, response.finish_reason, usage)


def arrivals(
    rng: random.Random, groups: int, per_group: int, day: datetime
) -> list[tuple[datetime, str]]:
    out: list[tuple[datetime, str]] = []
    for g in range(groups):
        shift = rng.randint(-1, 1)
        weights = HOURLY[-shift:] + HOURLY[:-shift] if shift else HOURLY
        for hour in rng.choices(range(24), weights=weights, k=per_group):
            at = day + timedelta(hours=hour, seconds=rng.uniform(0, 3600))
            out.append((at, f"group:{9001 + g}"))
    return sorted(out)


def quantiles(values: Sequence[float]) -> tuple[float, float, float]:
    ordered = sorted(values)
    if not ordered:
        return (0.0, 0.0, 0.0)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    return (at(0.5), at(0.95), ordered[-1])


async def run(scheduler: str, budget: float, groups: int, per_group: int, seed: int) -> None:
    rng = random.Random(seed)
    day = sh(2026, 11, 20, 0, 0)
    clock = FakeClock(day - timedelta(minutes=1))
    sim = SimTime(clock)
    model = Model(sim, random.Random(seed + 1))
    sink = RecordingAlertSink()
    plan = arrivals(rng, groups, per_group, day)
    scopes = sorted({s for _, s in plan})
    base = Settings()
    changes: dict[str, object] = {
        "consolidation_tokens_per_hour": int(base.consolidation_tokens_per_hour * budget),
        "consolidation_tokens_per_day": int(base.consolidation_tokens_per_day * budget),
    }
    if scheduler == "old":
        changes = {
            "consolidation_tokens_per_hour": 0,
            "consolidation_tokens_per_day": 0,
            "consolidation_concurrency": 1,
            "consolidation_hourly_cap": 4,
        }
    wall = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp) / "data", vector_mode="off", **changes)  # pyright: ignore[reportArgumentType]
        core = await Yuji.open(
            settings, clock=clock, llm=ScriptedLLM(default=model.answer), alert_sink=sink
        )
        service = core.consolidation
        for scope in scopes[: round(len(scopes) * AWAKE_SHARE)]:
            await core.chat_state.touch(scope, clock.now(), wake_at=clock.now())
        fed = 0

        async def feed() -> None:
            nonlocal fed
            slot_end = day
            i = 0
            while i < len(plan):
                slot_end += SLOT
                due: list[NewExperience] = []
                while i < len(plan) and plan[i][0] < slot_end:
                    at, scope = plan[i]
                    text = "".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))
                    sender = str(20000 + rng.randrange(40))
                    due.append(
                        NewExperience(
                            scope=scope,
                            fingerprint=str(i),
                            sender_id=sender,
                            sender_name=f"群友{sender[-2:]}",
                            text=text[: rng.randint(2, 60)],
                            sent_at=at,
                        )
                    )
                    i += 1
                if due:
                    await sim.sleep((slot_end - clock.now()).total_seconds())
                    await core.archive.append_many(due)
                    fed += len(due)
            await sim.sleep(10**9)  # parked for good

        async def old_ticks() -> None:
            while True:
                await sim.sleep(600)
                await core.archive.flush()
                await service.run_once()

        feeder = asyncio.create_task(feed())
        if scheduler == "old":
            loop = asyncio.create_task(old_ticks())
        else:
            await service.reconcile()
            loop = asyncio.create_task(service.run(sim.wait))
        try:
            await sim.advance(day + timedelta(days=1) + DRAIN, lambda: 2 + service.in_flight)
        finally:
            for task in (loop, feeder):
                task.cancel()
            await asyncio.gather(loop, feeder, return_exceptions=True)
        end = clock.now()
        results = await collect(core, scopes, end)
        await core.close()
    wall = time.perf_counter() - wall
    report(scheduler, budget, settings, results, sink, fed, end, wall, model.turns)


async def collect(core: Yuji, scopes: Sequence[str], end: datetime) -> dict[str, object]:
    E, B, C, U = experiences, consolidation_batches, consolidation_cursors, llm_usage
    async with core.db.read() as conn:
        exps = (await conn.execute(select(E.c.id, E.c.scope, E.c.sent_at))).all()
        batches = (
            await conn.execute(
                select(B.c.scope, B.c.first_id, B.c.last_id, B.c.message_count, B.c.finished_at)
                .where(B.c.state == "done")
                .order_by(B.c.scope, B.c.first_id)
            )
        ).all()
        cursors = {r.scope: r.acked_id for r in (await conn.execute(select(C))).all()}
        usage = (
            await conn.execute(
                select(U.c.at, U.c.scope, U.c.prompt_tokens + U.c.completion_tokens).where(
                    U.c.job == "consolidation"
                )
            )
        ).all()
    held: dict[str, int] = defaultdict(int)
    done_end: dict[str, int] = defaultdict(int)
    spans: dict[str, list[tuple[int, int, datetime]]] = defaultdict(list)
    for scope, first, last, count, finished in batches:
        held[scope] += count
        done_end[scope] = max(done_end[scope], last)
        spans[scope].append((first, last, finished))
    by_scope: dict[str, list[tuple[int, datetime]]] = defaultdict(list)
    for eid, scope, sent in exps:
        by_scope[scope].append((eid, sent))
    lags: dict[str, list[float]] = defaultdict(list)
    unread: dict[str, int] = defaultdict(int)
    for scope, items in by_scope.items():
        mine = spans[scope]
        j = 0
        for eid, sent in sorted(items):
            while j < len(mine) and mine[j][1] < eid:
                j += 1
            if j < len(mine) and mine[j][0] <= eid <= mine[j][1]:
                lags[scope].append((mine[j][2] - sent).total_seconds())
            else:
                unread[scope] += 1
                lags[scope].append((end - sent).total_seconds())
    honest = all(
        cursors.get(s, 0) == done_end.get(s, 0)
        and held.get(s, 0) == sum(1 for eid, _ in by_scope[s] if eid <= cursors.get(s, 0))
        for s in scopes
    )
    tokens: dict[str, int] = defaultdict(int)
    hours: dict[datetime, int] = defaultdict(int)
    for at, scope, n in usage:
        tokens[str(scope)] += int(n)
        hours[at.replace(minute=0, second=0, microsecond=0)] += int(n)
    return {
        "lags": lags,
        "unread": unread,
        "tokens": tokens,
        "hours": hours,
        "honest": honest,
        "scopes": scopes,
    }


def report(
    scheduler: str,
    budget: float,
    settings: Settings,
    results: dict[str, object],
    sink: RecordingAlertSink,
    fed: int,
    end: datetime,
    wall: float,
    turns: int,
) -> None:
    lags: dict[str, list[float]] = results["lags"]  # type: ignore[assignment]
    unread: dict[str, int] = results["unread"]  # type: ignore[assignment]
    tokens: dict[str, int] = results["tokens"]  # type: ignore[assignment]
    hours: dict[datetime, int] = results["hours"]  # type: ignore[assignment]
    scopes: list[str] = results["scopes"]  # type: ignore[assignment]
    alerts: dict[str, int] = defaultdict(int)
    for key, _ in sink.fired:
        if key.startswith("consolidation-lag:"):
            alerts[key.split(":", 1)[1]] += 1
    print(
        f"scheduler {scheduler}, budget x{budget:g} ({settings.consolidation_tokens_per_hour}/h, "
        f"{settings.consolidation_tokens_per_day}/day), concurrency "
        f"{settings.consolidation_concurrency}, hourly ceiling {settings.consolidation_hourly_cap or 'off'}"
    )
    print(f"{fed} messages archived; simulated until {end.isoformat()}; {turns} model turns")
    print(
        f"{'group':<12}{'msgs':>6}{'p50 min':>9}{'p95 min':>9}{'max min':>9}{'unread':>8}{'tokens':>11}{'alerts':>7}"
    )
    for scope in scopes:
        p50, p95, top = quantiles(lags[scope])
        more = ">" if unread.get(scope) else " "
        print(
            f"{scope:<12}{len(lags[scope]):>6}{p50 / 60:>9.1f}{more}{p95 / 60:>8.1f}{more}{top / 60:>8.1f}"
            f"{unread.get(scope, 0):>8}{tokens.get(scope, 0):>11}{alerts.get(scope, 0):>7}"
        )
    total = sum(tokens.values())
    peak = max(hours.values(), default=0)
    print(f"tokens: {total} in all, busiest hour {peak}; nothing marked read: {results['honest']}")
    print(
        f"wall {wall:.0f} s on {platform.machine()} {platform.processor() or ''} ({platform.python_version()})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--scheduler", choices=("new", "old"), default="new")
    parser.add_argument("--budget", type=float, default=1.0)
    parser.add_argument("--groups", type=int, default=10)
    parser.add_argument("--messages", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    asyncio.run(run(args.scheduler, args.budget, args.groups, args.messages, args.seed))


if __name__ == "__main__":
    main()
