"""`core.consolidation`: pick the next batches, run them, heal what crashed.

- `run()`: the scheduler (the bot starts it with `start()`): within the token budget,
  a batch as soon as a chat is eligible, up to `consolidation_concurrency` chats at a
  time, never two open in one chat (`ConsolidationRepo.create` refuses it in the same
  transaction, across processes too). Awake chats first (`selection.queue_key`). It
  sleeps until new messages are archived (`wake`, set by the archive writer), a batch
  ends, a chat comes due by waiting, or `consolidation_tick_s` passes; a chat whose
  batch failed waits a backoff (1, 2, 4 ... 60 minutes) before its next try. Each pass
  also checks every chat's lag: past `consolidation_lag_alert_h` one alert per chat,
  recovered once it catches up. Nothing is ever marked read to catch up.
- `run_once(scope=None, force=False)`: one batch now (the CLI, the console), in the
  first chat in order without an open batch; budget and ceiling unless forced; None
  with `last_skip` saying why.
- `reconcile()`: at start-up, fail open batches and pull watermarks back to truth.
- `watchdog()`: fail open batches without progress for `batch_watchdog_s`.
Three failed batches in a row in one chat fire an alert; the next success recovers it.
A model that refuses tool calling stops consolidation for the life of the process
(the batch that found out is failed, nothing is lost): the log, one alert and
`lacks_tools` say so; chat does not need tools and keeps working.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from memory_core.archive.service import ArchiveService
from memory_core.clock import Clock
from memory_core.errors import (
    ConstraintViolation,
    LLMUnavailable,
    StaleBatchRange,
    StorageError,
)
from memory_core.llm.base import LLMClient
from memory_core.ops.alerts import AlertSink, LogAlertSink
from memory_core.people.observe import mentions
from memory_core.prompts.consolidation import BatchPerson, Line, clip, quotes_bot_text
from memory_core.settings import LiveSettings, Settings
from memory_core.storage import (
    Backlog,
    Batch,
    ConsolidationRepo,
    Cursor,
    CursorFix,
    Pending,
    PeopleRepo,
    UsageRepo,
)
from memory_core.storage.engine import Database
from memory_core.types import Experience

from . import selection
from .owner import Owner, owner_alive, this_process
from .ports import MemoryStore
from .runner import LACKS_TOOLS, BatchReport, BatchRunner, batch_report
from .tools import BatchTools, BatchView

log = logging.getLogger("yuji.consolidation")

Wait = Callable[[asyncio.Event, float], Awaitable[None]]
"""How the scheduler sleeps: until the event is set or the seconds pass. A simulated
clock (the keep-up benchmark, tests) passes its own."""
BUDGET_RECHECK_S = 120.0
"""How soon the scheduler looks again while a budget or the ceiling is spent."""
RETRY_BASE_S = 60.0
RETRY_MAX_S = 3600.0
JOB = "consolidation"
"""The `llm_usage` job whose tokens the budget counts."""


async def wait_event(event: asyncio.Event, timeout_s: float) -> None:
    """Wall-clock `Wait`: return when `event` is set or after `timeout_s`.

    Not `asyncio.wait_for`: on Python 3.11 it swallows a cancellation that arrives
    while the event is being set (gh-86296), and the scheduler then never stops."""
    waiter = asyncio.ensure_future(event.wait())
    try:
        await asyncio.wait((waiter,), timeout=max(0.0, timeout_s))
    finally:
        waiter.cancel()


def retry_after_s(failures: int) -> float:
    """Backoff before the scheduler retries a chat after `failures` failed batches."""
    return min(RETRY_MAX_S, RETRY_BASE_S * 2 ** max(0, min(failures, 12) - 1))


@dataclass(frozen=True, slots=True)
class ReconcileReport:
    failed: tuple[Batch, ...]
    fixes: tuple[CursorFix, ...]


@dataclass(frozen=True, slots=True)
class ConsolidationStatus:
    scope: str
    cursor: Cursor
    pending: int
    last_batch: Batch | None
    backlog: Backlog | None = None
    """Messages and characters not acknowledged yet, and the oldest one's age (lag)."""


class ConsolidationService:
    def __init__(
        self,
        db: Database,
        settings: LiveSettings,
        clock: Clock,
        *,
        archive: ArchiveService,
        memories: MemoryStore,
        llm: LLMClient | None,
        alerts: AlertSink | None = None,
        describe: Callable[[Sequence[Experience]], Awaitable[dict[int, str]]] | None = None,
        usage: UsageRepo | None = None,
    ) -> None:
        self.live = settings
        self.clock = clock
        self.db = db
        self.repo = ConsolidationRepo(db)
        self.people = PeopleRepo(db)
        self.usage = usage or UsageRepo(db)
        self.archive = archive
        self.memories = memories
        self._llm = llm
        self._alerts = alerts or LogAlertSink()
        self._describe = describe
        self.zone = ZoneInfo(self.settings.timezone)
        self.last_skip = ""
        self.lacks_tools: str | None = None
        """Why consolidation stopped: the model refused tool calling (None: it did not)."""
        self.blocked: str | None = None
        """Set when the last `run_once` could not start because a batch of another
        process (still running, or not known to be gone) is open."""
        self.owner = this_process()
        self._running: dict[int, asyncio.Task[BatchReport]] = {}
        """The runner task of each batch this process runs (the watchdog cancels them)."""
        self._batches: dict[str, asyncio.Task[BatchReport]] = {}
        """The scheduler's batch in flight per chat."""
        self._retry_at: dict[str, datetime] = {}
        self._unsettled: dict[int, str] = {}
        """Batch id -> why: batches the database failed under, to be marked failed."""
        self._lagging: set[str] = set()
        self._loop: asyncio.Task[None] | None = None
        self._closed = False
        self.wake = asyncio.Event()
        """Set when there may be new work: messages archived, a batch ended."""
        self.started = 0
        """Batches started by this process (benchmarks and tests)."""

    @property
    def settings(self) -> Settings:
        """The settings in effect now (eligibility, the hourly cap and the bot's
        names move live)."""
        return self.live.current

    @property
    def limits(self) -> selection.Limits:
        """What a batch may hold and when a chat is due, from the settings in effect now."""
        settings = self.settings
        return selection.Limits(
            max_messages=settings.batch_max_messages,
            max_chars=settings.batch_max_chars,
            min_pending=settings.eligible_min_pending,
            max_wait=timedelta(seconds=settings.eligible_max_wait_s),
            hourly_cap=settings.consolidation_hourly_cap,
            tokens_per_hour=settings.consolidation_tokens_per_hour,
            tokens_per_day=settings.consolidation_tokens_per_day,
        )

    # --- the scheduler ----------------------------------------------------------------

    def start(self, wait: Wait | None = None) -> asyncio.Task[None] | None:
        """Run the scheduler in the background (once; again if it died); None once
        `aclose` has run (a last safety tick during shutdown must not restart it)."""
        if self._closed:
            return None
        if self._loop is None or self._loop.done():
            self._loop = asyncio.create_task(self.run(wait), name="yuji-consolidation")
        return self._loop

    async def aclose(self) -> None:
        """Stop the scheduler; batches in flight fail and are delivered again later."""
        self._closed = True
        await self.stop()

    async def stop(self) -> None:
        """Stop the scheduler and its batches (this process no longer leads); they are
        delivered again by whoever runs next, and `start` may run it here again."""
        loop, self._loop = self._loop, None
        if loop is not None:
            loop.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await loop
        await self._cancel_batches()

    async def run(self, wait: Wait | None = None) -> None:
        """The scheduler loop: start what may start, sleep until there may be more."""
        sleep = wait or wait_event
        try:
            while True:
                self.wake.clear()
                try:
                    delay = await self.start_due()
                except asyncio.CancelledError:
                    raise
                except Exception:  # a pass must never end the loop
                    log.exception("consolidation scheduler pass failed")
                    delay = float(self.settings.consolidation_tick_s)
                await sleep(self.wake, delay)
        finally:
            await self._cancel_batches()

    async def _cancel_batches(self) -> None:
        tasks = list(self._batches.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    @property
    def halted(self) -> str | None:
        """Why no batch will start whatever waits (in Chinese, for the console), or
        None while batches can start."""
        if self._llm is None:
            return (
                "没有配置整理用的模型（YUJI_LLM_* 或 YUJI_CONSOLIDATION_LLM_*），这些消息会一直等着"
            )
        if self.lacks_tools is not None:
            return "整理已停止：模型不支持工具调用（换一个支持的模型后重启）"
        return None

    async def start_due(self) -> float:
        """One scheduler pass: check every chat's lag, start every batch that may start
        now; returns the seconds until the next pass is needed (a wake comes sooner)."""
        tick = float(self.settings.consolidation_tick_s)
        if self.db.full or self.db.down or not await self._settle():
            # The store's own alert said so; a batch now would only fail (and its
            # streak alert again). The first write that succeeds clears the flag.
            self._skip("the database is full or unreachable: waiting for it")
            return tick
        llm = self._llm
        now = self.clock.now()
        pendings = await self.repo.pending()
        self._check_lag(pendings, now)
        if llm is None or self.lacks_tools is not None:
            return tick
        limits = self.limits
        room = self.settings.consolidation_concurrency - len(self._batches)
        if room <= 0:
            return tick  # a batch that ends sets `wake`
        self._retry_at = {k: v for k, v in self._retry_at.items() if v > now}
        planned = await self._plan(
            None, False, pendings=pendings, slots=room, skip=set(self._retry_at)
        )
        for batch, experiences in planned:
            task = asyncio.create_task(self._execute(llm, batch, experiences))
            self._batches[batch.scope] = task
            task.add_done_callback(functools.partial(self._ended, batch.scope))
        if self.last_skip.startswith(("hourly", "daily")) and not planned:
            return min(tick, BUDGET_RECHECK_S)
        instants = [*self._retry_at.values()]
        due = selection.next_due(pendings, now, limits)
        if due is not None:
            instants.append(due)
        soonest = min(((t - now).total_seconds() for t in instants), default=tick)
        return max(0.0, min(tick, soonest))

    @property
    def in_flight(self) -> int:
        """Batches the scheduler of this process runs now."""
        return len(self._batches)

    def _ended(self, scope: str, task: asyncio.Task[BatchReport]) -> None:
        self._batches.pop(scope, None)
        self.wake.set()
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.error("consolidation: a batch of %s crashed: %r", scope, exc)

    def _check_lag(self, pendings: Sequence[Pending], now: datetime) -> None:
        """One alert per chat whose oldest unread message waited past the limit; a
        recovery once it is back under it."""
        limit = timedelta(hours=self.settings.consolidation_lag_alert_h)
        for p in pendings:
            key = f"consolidation-lag:{p.scope}"
            lag = now - p.oldest_at if p.count > 0 and p.oldest_at is not None else None
            if lag is not None and lag >= limit:
                if p.scope not in self._lagging:
                    self._lagging.add(p.scope)
                    self._alerts.fire(
                        key,
                        f"{p.scope}: consolidation is not keeping up: the oldest unread "
                        f"message has waited {lag.total_seconds() / 3600:.1f} h "
                        f"({p.count} messages behind; limit "
                        f"{self.settings.consolidation_lag_alert_h:g} h). Raise "
                        "YUJI_CONSOLIDATION_TOKENS_PER_HOUR / _PER_DAY or "
                        "YUJI_CONSOLIDATION_CONCURRENCY; nothing is skipped meanwhile.",
                    )
            elif p.scope in self._lagging:
                self._lagging.discard(p.scope)
                self._alerts.recover(key, f"{p.scope}: consolidation has caught up")

    # --- one batch -----------------------------------------------------------------

    async def run_once(
        self, *, scope: str | None = None, force: bool = False
    ) -> BatchReport | None:
        llm = self._llm
        if llm is None:
            raise LLMUnavailable("no model configured: consolidation waits (YUJI_LLM_*)")
        self.blocked = None
        if self.lacks_tools is not None:
            return self._skip(self.lacks_tools)
        planned = await self._plan(scope, force)
        if not planned:
            return None
        batch, experiences = planned[0]
        return await self._execute(llm, batch, experiences)

    async def _execute(
        self, llm: LLMClient, batch: Batch, experiences: Sequence[Experience]
    ) -> BatchReport:
        """`_run_batch`; a batch the database failed under (an outage, a full disk)
        could not even be marked failed: it is, at the first pass the database takes
        writes again, and its messages are delivered again from `acked`."""
        try:
            return await self._run_batch(llm, batch, experiences)
        except StorageError as exc:
            if isinstance(exc, ConstraintViolation):
                raise
            self._unsettled[batch.id] = f"the database failed during the batch: {exc}"
            log.warning(
                "consolidation: batch %d (%s) stopped, the database failed (%s); it is "
                "failed and redone once the database takes writes again",
                batch.id,
                batch.scope,
                exc,
            )
            raise

    async def _settle(self) -> bool:
        """Fail the batches the database failed under; False while it still refuses."""
        for batch_id, error in list(self._unsettled.items()):
            try:
                await self.repo.fail(batch_id, error, self.clock.now())
            except StorageError:
                return False
            del self._unsettled[batch_id]
        return True

    async def _run_batch(
        self, llm: LLMClient, batch: Batch, experiences: Sequence[Experience]
    ) -> BatchReport:
        """Run one latched batch to its end (done or failed) and account for it."""
        self.started += 1
        lines, view = await self._lines(batch.scope, experiences)
        runner = BatchRunner(
            llm=llm,
            repo=self.repo,
            clock=self.clock,
            zone=self.zone,
            bot_name=self.settings.bot_name,
            max_turns=self.settings.batch_max_turns,
            timeout_s=self.settings.llm_timeout_s,
        )
        tools = BatchTools(
            batch,
            view,
            memories=self.memories,
            repo=self.repo,
            now=self.clock.now,
            zone=self.zone,
            bot_names=self.settings.nicknames,
        )
        previous_failures = (await self.repo.cursor(batch.scope)).consecutive_failures
        people = await self._people(batch.scope, experiences)
        task = asyncio.create_task(runner.run(batch, lines, tools, people))
        self._running[batch.id] = task
        try:
            report = await task
        except asyncio.CancelledError:
            if not task.cancelled() or batch.id in self._running:
                raise
            report = batch_report(batch, tools, error="watchdog: no progress")
        finally:
            self._running.pop(batch.id, None)
        self._after(report, previous_failures)
        if report.state == "done":
            self._retry_at.pop(report.scope, None)
        else:
            delay = retry_after_s(report.consecutive_failures)
            self._retry_at[report.scope] = self.clock.now() + timedelta(seconds=delay)
        log.info("%s", report.describe())
        return report

    def _skip(self, reason: str) -> None:
        self.last_skip = reason
        log.debug("consolidation: %s", reason)

    def _block(self, batch: Batch | None, *, full: bool = False) -> None:
        if batch is None:
            self.blocked = "another batch is still open"
        else:
            owner = Owner.parse(batch.owner or "")
            whose = owner.describe() if owner is not None else "owner unknown"
            self.blocked = f"batch {batch.id} in {batch.scope} is still open ({whose})"
            if full:
                limit = self.settings.consolidation_concurrency
                self.blocked += f"; {limit} open at once is the limit"
        self._skip(f"blocked: {self.blocked}")

    async def _fail_dead_owners(self, batches: list[Batch], now: datetime) -> list[Batch]:
        """Fail the open batches whose process is gone; the others stay open."""
        still: list[Batch] = []
        for batch in batches:
            owner = Owner.parse(batch.owner or "")
            if owner is None or batch.owner == self.owner or owner_alive(str(owner)) is not False:
                still.append(batch)
                continue
            error = f"its process is gone ({owner.describe()})"
            failed = await self.repo.fail(batch.id, error, now)
            if failed is None:
                continue
            log.warning("consolidation: batch %d (%s) failed: %s", batch.id, batch.scope, error)
            self._streak(batch.scope, failed.consecutive_failures, error)
        return still

    async def _over_budget(self, now: datetime, limits: selection.Limits) -> str | None:
        """Why no batch may start now (budget or ceiling spent), or None."""
        if limits.tokens_per_hour or limits.tokens_per_day:
            hour = await self.usage.job_tokens(JOB, now - timedelta(hours=1))
            day = (
                await self.usage.job_tokens(JOB, now - timedelta(days=1))
                if limits.tokens_per_day
                else 0
            )
            spent = selection.within_budget(hour, day, limits)
            if spent is not None:
                return spent
        if limits.hourly_cap:
            started = await self.repo.started_since(now - timedelta(hours=1))
            if not selection.under_hourly_cap(started, now, limits.hourly_cap):
                return f"hourly ceiling of {limits.hourly_cap} batches reached"
        return None

    async def _plan(
        self,
        scope: str | None,
        force: bool,
        *,
        pendings: Sequence[Pending] | None = None,
        slots: int = 1,
        skip: set[str] | None = None,
    ) -> list[tuple[Batch, list[Experience]]]:
        """Latch up to `slots` batches, each in its own chat without an open batch, in
        `queue_key` order, within the concurrency limit (and the budget unless `force`).
        Chats in `skip` (backing off after a failure) wait."""
        now = self.clock.now()
        limits = self.limits  # read once: the console may change it meanwhile
        concurrency = self.settings.consolidation_concurrency
        still_open = await self.repo.open_batches()
        if still_open:
            still_open = await self._fail_dead_owners(still_open, now)
        busy = {b.scope: b for b in still_open}
        room = min(slots, concurrency - len(still_open))
        if room <= 0:
            self._block(still_open[0], full=True)
            return []
        if not force:
            spent = await self._over_budget(now, limits)
            if spent is not None:
                self._skip(spent)
                return []
        if pendings is None or scope is not None:
            pendings = await self.repo.pending(scope)
        due = selection.serial_order(pendings, now, limits, force=force)
        order = [p for p in due if p.scope not in busy and p.scope not in (skip or ())]
        if not order:
            waiting = [p.scope for p in due if p.scope in busy]
            if waiting:  # what is due has a batch open (here or in another process)
                self._block(busy[waiting[0]])
            else:
                where = f" in {scope}" if scope else ""
                self._skip(f"nothing eligible{where}")
            return []
        await self.archive.flush()
        planned: list[tuple[Batch, list[Experience]]] = []
        for chosen in order[:room]:
            experiences = await self.archive.after(
                chosen.scope, chosen.acked_id, limits.max_messages
            )
            items = [selection.Item(e.id, len(clip(e.text, limits.max_chars))) for e in experiences]
            cut = selection.cut(items, limits)
            if cut is None:
                continue
            try:
                batch = await self.repo.create(
                    chosen.scope,
                    cut,
                    secrets.token_urlsafe(12),
                    now,
                    owner=self.owner,
                    max_open=concurrency,
                )
            except StaleBatchRange:
                # A batch of this chat was acknowledged after `pendings` was read (one
                # of this process's ended during the pass): the next pass plans from the
                # new cursor; the chats after it, and the batches already latched, go on.
                continue
            if batch is None:  # another process opened one meanwhile
                if not planned:
                    self._block(None)
                break
            planned.append((batch, experiences[: cut.count]))
        if not planned and not self.last_skip.startswith("blocked"):
            self._skip(f"nothing pending in {order[0].scope}")
        return planned

    async def _people(self, scope: str, experiences: Sequence[Experience]) -> list[BatchPerson]:
        """The members the batch shows (its senders, then whom it @-mentions), in the
        order they first appear, with their names in this chat from the person index."""
        shown: dict[str, None] = {}
        for e in experiences:
            if not e.is_bot:
                shown.setdefault(e.sender_id.strip(), None)
            for user_id, _ in mentions(e.segments):
                shown.setdefault(user_id, None)
        known = {p.person.user_id: p for p in await self.people.in_chat(scope)}
        return [
            BatchPerson(user_id, tuple(dict.fromkeys(n.name for n in known[user_id].names)))
            for user_id in shown
            if user_id in known and not known[user_id].person.is_bot
        ]

    async def _lines(
        self, scope: str, experiences: Sequence[Experience]
    ) -> tuple[list[Line], BatchView]:
        # Images read as `[图片：描述]` where described; a missing one never waits.
        texts = await self._describe(experiences) if self._describe else {}
        by_fingerprint = {e.fingerprint: e for e in experiences}
        bot_texts = [e.text for e in experiences if e.is_bot]
        replied: dict[str, Experience | None] = {}
        for e in experiences:
            if e.reply_to and e.reply_to not in by_fingerprint and e.reply_to not in replied:
                replied[e.reply_to] = await self.archive.by_fingerprint(scope, e.reply_to)
        lines: list[Line] = []
        bot_sourced: set[int] = set()
        for e in experiences:
            target = None
            if e.reply_to:
                target = by_fingerprint.get(e.reply_to) or replied.get(e.reply_to)
            quoted = target.text if target is not None and target.is_bot else None
            repeats = not e.is_bot and quotes_bot_text(
                e.text, [*bot_texts, *([quoted] if quoted else [])]
            )
            if e.is_bot or repeats:
                bot_sourced.add(e.id)
            lines.append(
                Line(
                    id=e.id,
                    sent_at=e.sent_at,
                    sender=f"{e.sender_name}({e.sender_id})" if e.sender_name else e.sender_id,
                    text=clip(texts.get(e.id, e.text), self.settings.batch_max_chars),
                    is_bot=e.is_bot,
                    quotes_bot=repeats,
                    reply_to_id=target.id if target is not None else None,
                    quoted_bot_text=quoted,
                )
            )
        return lines, BatchView(frozenset(e.id for e in experiences), frozenset(bot_sourced))

    def _after(self, report: BatchReport, previous_failures: int) -> None:
        if report.lacks_tools:
            self.lacks_tools = f"{LACKS_TOOLS}; consolidation stopped (chat still works)"
            log.error("consolidation: %s: %s", self.lacks_tools, report.error)
            self._alerts.fire("consolidation:tools", f"{self.lacks_tools}: {report.error}")
            return
        if report.state != "done":
            self._streak(report.scope, report.consecutive_failures, report.error)
        elif previous_failures >= self.settings.batch_failures_before_alert:
            self._alerts.recover(
                f"consolidation:{report.scope}", f"{report.scope}: consolidation works again"
            )

    def _streak(self, scope: str, failures: int, last_error: str | None) -> None:
        """Alert once a chat's failed batches in a row reach the threshold."""
        if failures >= self.settings.batch_failures_before_alert:
            self._alerts.fire(
                f"consolidation:{scope}",
                f"{scope}: {failures} consolidation batches failed in a row; "
                f"last error: {last_error}",
            )

    # --- healing -------------------------------------------------------------------------

    async def reconcile(self) -> ReconcileReport:
        failed, fixes = await self.repo.reconcile(self.clock.now())
        for batch in failed:
            log.warning("reconcile: batch %d (%s) was left open; failed", batch.id, batch.scope)
        for fix in fixes:
            log.warning(
                "reconcile: %s delivered %d->%d acked %d->%d",
                fix.scope,
                *fix.delivered,
                *fix.acked,
            )
        return ReconcileReport(tuple(failed), tuple(fixes))

    async def watchdog(self) -> list[Batch]:
        now = self.clock.now()
        stale_s = self.settings.batch_watchdog_s
        killed: list[Batch] = []
        for batch in await self.repo.stale(now - timedelta(seconds=stale_s)):
            failed = await self.repo.fail(batch.id, f"watchdog: no progress for {stale_s}s", now)
            if failed is None:
                continue
            killed.append(failed.batch)
            task = self._running.pop(batch.id, None)
            if task is not None:
                task.cancel()
            self._alerts.fire(
                f"consolidation-watchdog:{batch.scope}",
                f"{batch.scope}: batch {batch.id} made no progress for {stale_s}s and was failed",
            )
            self._streak(batch.scope, failed.consecutive_failures, failed.batch.error)
        return killed

    # --- reads -------------------------------------------------------------------------

    async def status(self, scope: str) -> ConsolidationStatus:
        backlog = await self.repo.backlog(scope)
        batches = await self.repo.batches(scope, limit=1)
        return ConsolidationStatus(
            scope=scope,
            cursor=await self.repo.cursor(scope),
            pending=backlog.messages,
            last_batch=batches[0] if batches else None,
            backlog=backlog,
        )

    async def status_lines(self, scope: str) -> dict[str, str]:
        """`/status`'s backpressure line: backlog and lag of this chat."""
        backlog = await self.repo.backlog(scope)
        if backlog.messages == 0:
            return {"整理积压": "无"}
        return {
            "整理积压": f"{backlog.messages} 条 / {backlog.chars} 字，"
            f"最早一条等了 {selection.lag_text(backlog.lag_s(self.clock.now()))}"
        }
