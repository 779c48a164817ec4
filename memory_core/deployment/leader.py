"""Which process of the deployment runs the once-only work.

The consolidation scheduler, the nightly run, vector builds, retention, backups and
the watchdog must run once across every bot process on one store: the leader runs
them, the others skip their ticks. `Leadership.step()` takes the leader's lock when
it is free (`storage/deployment/leader_lock.py`) or checks it still holds it; the bot calls it
every `interval_s`. Gaining it runs `on_gain` (the consolidation's start-up
reconcile, which fails what the previous leader left open, so its batch is delivered
again from `acked`); losing it (the lock's connection died) runs `on_lose`, which
stops the leader-only loops before another process can take over.

On PostgreSQL a leader that takes over from a process that did not stop cleanly
(its row is still in `leadership`) sends one alert; the others never do. A takeover
right after the server itself was away (this process could not reach it within
`OUTAGE_QUIET_S`) sends none: every process lost the lock with the server, and the
outage's own alert (ops/outage.py) already told the operator.

The server is the only judge of who leads, so a dead connection can never leave two
leaders: the lock goes with the session, and a process leads only while its own
check of that session answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from memory_core.clock import Clock
from memory_core.consolidation.owner import Owner
from memory_core.ops.alerts import AlertSink
from memory_core.storage import DeploymentRepo, LeaderLock

log = logging.getLogger("yuji.leader")

STEP_S = 3.0
"""How often a follower tries the lock and the leader checks its connection."""
TAKEOVER_ALERT_KEY = "leader-takeover"
OUTAGE_QUIET_S = 300.0
"""A takeover this soon after this process could not reach the server is no news."""

Hook = Callable[[], Awaitable[None]]


STOP_WAIT_S = 10.0
"""How long a closing process waits for a leadership step under way."""


def describe(holder: str) -> str:
    """ "pid 12 on host-a" for a holder written as `<batch owner> #<token>`. Pure."""
    owner = Owner.parse(holder.split(" #", 1)[0])
    return holder if owner is None else owner.describe()


class Leadership:
    def __init__(
        self,
        lock: LeaderLock,
        repo: DeploymentRepo,
        clock: Clock,
        alerts: AlertSink,
        *,
        holder: str,
        shared: bool,
    ) -> None:
        self._lock = lock
        self._repo = repo
        self._clock = clock
        self._alerts = alerts
        self.holder = holder
        """This process, as `leadership` names it (the batch owner's form)."""
        self.shared = shared
        """Other processes may share the store (PostgreSQL): takeovers are recorded."""
        self.is_leader = False
        self.term = 0
        """Counts the times this process gained leadership (a new term reconciles again)."""
        self.led_last = False
        """This process led when last it could tell (kept while the server is away):
        the one that speaks for the deployment about an outage."""
        self._unreachable_at: float | None = None
        self.on_reach: Callable[[bool], Awaitable[None]] | None = None
        """Told after every step whether the server answered: an idle process learns of
        an outage (and its end) within a step, not at its next archive write."""
        self.on_gain: list[Hook] = []
        self.on_lose: list[Hook] = []
        self._task: asyncio.Task[None] | None = None
        self._step_lock = asyncio.Lock()
        self._stopping = asyncio.Event()

    async def step(self) -> bool:
        """Take or keep the lock once; whether this process leads now."""
        async with self._step_lock:
            held = await self._lock.hold()
            if self.on_reach is not None:
                await self.on_reach(self._lock.reachable)
            if not self._lock.reachable:
                self._unreachable_at = time.monotonic()
            elif not held:
                self.led_last = False  # the server answers: another process leads
            if held and not self.is_leader:
                self.led_last = True
                self.is_leader = True
                self.term += 1
                await self._gained()
            elif not held and self.is_leader:
                self.is_leader = False
                log.warning("leadership lost (the lock's connection ended); leader-only work stops")
                await self._run(self.on_lose)
            return self.is_leader

    def speaks_for_deployment(self) -> bool:
        """Whether this process's alerts about the shared store go out (see ops/outage.py)."""
        return not self.shared or self.is_leader or self.led_last

    async def _gained(self) -> None:
        if self.shared:
            try:
                previous = await self._repo.take_leadership(self.holder, self._clock.now())
            except Exception:  # leading matters more than the record of it
                log.exception("the leadership row could not be written")
                previous = None
            after_outage = (
                self._unreachable_at is not None
                and time.monotonic() - self._unreachable_at < OUTAGE_QUIET_S
            )
            if previous is not None and after_outage:
                log.warning(
                    "leadership taken over from %s after the database was away "
                    "(no alert: the outage's own alert covers it)",
                    describe(previous),
                )
            elif previous is not None:
                self._alerts.fire(
                    TAKEOVER_ALERT_KEY,
                    f"bot process {describe(previous)} stopped leading without a clean stop "
                    f"(killed, or its database connection died); {describe(self.holder)} "
                    "took over consolidation, nightly and upkeep",
                )
            log.info("leadership taken by %s (previous: %s)", self.holder, previous or "none")
        await self._run(self.on_gain)

    @staticmethod
    async def _run(hooks: list[Hook]) -> None:
        for hook in hooks:
            try:
                await hook()
            except Exception:  # one hook must not keep the others from running
                log.exception("leadership hook %r failed", hook)

    def start(self, interval_s: float = STEP_S) -> asyncio.Task[None]:
        """Step every `interval_s` in the background (once)."""
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._loop(interval_s), name="yuji-leadership")
        return self._task

    async def _loop(self, interval_s: float) -> None:
        while not self._stopping.is_set():
            try:
                await self.step()
            except Exception:
                log.exception("leadership step failed")
            # Not a sleep to be cancelled: a step cancelled half-way through opening a
            # connection (aiosqlite's thread, asyncpg's handshake) leaves it unclosed.
            waiter = asyncio.ensure_future(self._stopping.wait())
            try:
                await asyncio.wait({waiter}, timeout=interval_s)
            finally:
                waiter.cancel()

    async def aclose(self) -> None:
        """Stop trying (the step under way finishes first); a leader clears its row (a
        clean stop alerts nobody) and lets go."""
        self._stopping.set()
        task, self._task = self._task, None
        if task is not None:
            done, _ = await asyncio.wait({task}, timeout=STOP_WAIT_S)
            if not done:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.is_leader and self.shared:
            with contextlib.suppress(Exception):
                await self._repo.leave_leadership(self.holder)
        self.is_leader = False
        await self._lock.release()
