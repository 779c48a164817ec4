"""Simulated time for asyncio code that reads a `FakeClock`: discrete events, no waiting.

Actors (the consolidation scheduler, a message feeder, the fake model's turns) sleep
with `sleep(s)` or `wait(event, timeout_s)` (the scheduler's `Wait`). `advance(until,
actors)` moves the clock: whenever every one of the `actors()` is parked (and no
parked waiter's event is already set), the clock jumps to the earliest wake-up and
that sleeper resumes. Work that is not simulated time (database round trips in
threads, tasks in between) is waited for with real, tiny sleeps, so the simulated
clock never moves while an actor still computes: what takes 5 simulated seconds is
the model's turn, never the database.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from memory_core import FakeClock

SETTLE_POLL_S = 0.0005
STABLE_ROUNDS = 3


@dataclass(eq=False)
class _Park:
    at: datetime
    future: asyncio.Future[None]
    event: asyncio.Event | None = None

    @property
    def parked(self) -> bool:
        return not self.future.done() and not (self.event is not None and self.event.is_set())


class SimTime:
    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self._parks: list[_Park] = []

    def now(self) -> datetime:
        return self.clock.now()

    async def sleep(self, seconds: float) -> None:
        await self._park(seconds, None)

    async def wait(self, event: asyncio.Event, timeout_s: float) -> None:
        """The consolidation scheduler's `Wait` on simulated time."""
        if event.is_set():
            return
        await self._park(timeout_s, event)

    async def _park(self, seconds: float, event: asyncio.Event | None) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        park = _Park(self.clock.now() + timedelta(seconds=max(0.0, seconds)), future, event)
        self._parks.append(park)
        watcher: asyncio.Task[bool] | None = None
        if event is not None:
            watcher = asyncio.ensure_future(event.wait())
            watcher.add_done_callback(lambda _w: future.done() or future.set_result(None))
        try:
            await future
        finally:
            if watcher is not None:
                watcher.cancel()
            self._parks.remove(park)

    def parked(self) -> int:
        return sum(1 for p in self._parks if p.parked)

    async def settle(self, actors: Callable[[], int]) -> None:
        """Return once every actor is parked, stably (their tasks have run)."""
        stable = 0
        while stable < STABLE_ROUNDS:
            await asyncio.sleep(0)
            if self.parked() >= actors():
                stable += 1
            else:
                stable = 0
                await asyncio.sleep(SETTLE_POLL_S)

    async def advance(self, until: datetime, actors: Callable[[], int]) -> None:
        """Run the actors in simulated time until `until` (or nobody is left parked)."""
        while True:
            await self.settle(actors)
            waiting = [p for p in self._parks if p.parked]
            if not waiting:
                return
            first = min(p.at for p in waiting)
            if first > until:
                self.clock.set(until)
                return
            if first > self.clock.now():
                self.clock.set(first)
            for park in waiting:
                if park.at <= self.clock.now() and not park.future.done():
                    park.future.set_result(None)
