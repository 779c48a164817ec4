"""`core.consolidation`: pick the next batch, run it, heal what crashed.

- `run_once(scope=None, force=False)`: one batch at most (globally serial, oldest
  waiting chat first, hourly cap unless forced), or None with `last_skip` saying why.
- `reconcile()`: at start-up, fail open batches and pull watermarks back to truth.
- `watchdog()`: fail open batches without progress for `batch_watchdog_s`.
Three failed batches in a row in one chat fire an alert; the next success recovers it.
A model that refuses tool calling stops consolidation for the life of the process
(the batch that found out is failed, nothing is lost): the log, one alert and
`lacks_tools` say so; chat does not need tools and keeps working.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from memory_core.archive.service import ArchiveService
from memory_core.clock import Clock
from memory_core.errors import LLMUnavailable
from memory_core.llm.base import LLMClient
from memory_core.ops.alerts import AlertSink, LogAlertSink
from memory_core.prompts.consolidation import Line, clip, quotes_bot_text
from memory_core.settings import LiveSettings, Settings
from memory_core.storage.consolidation_repo import (
    Batch,
    ConsolidationRepo,
    Cursor,
    CursorFix,
)
from memory_core.storage.engine import Database
from memory_core.types import Experience

from . import selection
from .owner import Owner, owner_alive, this_process
from .ports import MemoryStore
from .runner import LACKS_TOOLS, BatchReport, BatchRunner, batch_report
from .tools import BatchTools, BatchView

log = logging.getLogger("yuji.consolidation")


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
    ) -> None:
        self.live = settings
        self.clock = clock
        self.repo = ConsolidationRepo(db)
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
        self._lock = asyncio.Lock()

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
        )

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
        if self._lock.locked():
            return self._skip("a batch is already running in this process")
        async with self._lock:
            planned = await self._plan(scope, force)
            if planned is None:
                return None
            batch, experiences = planned
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
            task = asyncio.create_task(runner.run(batch, lines, tools))
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
            log.info("%s", report.describe())
            return report

    def _skip(self, reason: str) -> None:
        self.last_skip = reason
        log.debug("consolidation: %s", reason)

    def _block(self, batch: Batch | None) -> None:
        if batch is None:
            self.blocked = "another batch is still open"
        else:
            owner = Owner.parse(batch.owner or "")
            whose = owner.describe() if owner is not None else "owner unknown"
            self.blocked = f"batch {batch.id} in {batch.scope} is still open ({whose})"
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

    async def _plan(self, scope: str | None, force: bool) -> tuple[Batch, list[Experience]] | None:
        now = self.clock.now()
        limits = self.limits  # read once: the console may change it meanwhile
        still_open = await self.repo.open_batches()
        if still_open:
            still_open = await self._fail_dead_owners(still_open, now)
        if still_open:
            return self._block(still_open[0])
        if not force:
            started = await self.repo.started_since(now - timedelta(hours=1))
            if not selection.under_hourly_cap(started, now, limits.hourly_cap):
                return self._skip(f"hourly cap of {limits.hourly_cap} batches reached")
        order = selection.serial_order(await self.repo.pending(scope), now, limits, force=force)
        if not order:
            where = f" in {scope}" if scope else ""
            return self._skip(f"nothing eligible{where}")
        chosen = order[0]
        await self.archive.flush()
        experiences = await self.archive.after(chosen.scope, chosen.acked_id, limits.max_messages)
        items = [selection.Item(e.id, len(clip(e.text, limits.max_chars))) for e in experiences]
        cut = selection.cut(items, limits)
        if cut is None:
            return self._skip(f"nothing pending in {chosen.scope}")
        batch = await self.repo.create(
            chosen.scope, cut, secrets.token_urlsafe(12), now, owner=self.owner
        )
        if batch is None:
            return self._block(None)
        return batch, experiences[: cut.count]

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
        pending = await self.repo.pending(scope)
        batches = await self.repo.batches(scope, limit=1)
        return ConsolidationStatus(
            scope=scope,
            cursor=await self.repo.cursor(scope),
            pending=pending[0].count if pending else 0,
            last_batch=batches[0] if batches else None,
        )
