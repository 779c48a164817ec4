"""`core.nightly`: runs the night per chat, resumes, retries and opens a circuit.

`run()` handles, for every chat, each day that ended at the cutoff and was not
finished yet, oldest first (so downtime is caught up in order). Within a day the six
steps run in order from the first one without a `done` checkpoint. A step that
raises stops that chat's run; the failure is counted and a retry is due after
`nightly_retry_after_s`. After `nightly_max_failures` consecutive failed runs the
circuit opens: retries stop and the alert sink fires once. The next scheduled night
still tries once (half-open); any success closes the circuit, resets the count and
reports recovery.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import date, datetime, time, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from memory_core.clock import Clock
from memory_core.errors import ValidationError
from memory_core.llm.base import LLMClient
from memory_core.ops.alerts import AlertSink
from memory_core.settings import LiveSettings, Settings
from memory_core.storage import (
    Card,
    Diary,
    MemoryRepo,
    NightlyHealthRepo,
    NightlyRepo,
    ScopeHealth,
    StepRow,
)
from memory_core.storage.engine import Database
from memory_core.types import Recalled

from . import blocks as blocks_mod
from .context import DayRun, ModelMissing, Services
from .days import (
    day_end,
    day_of,
    day_start,
    last_complete_day,
    parse_cutoff,
    parse_day,
    pending_days,
)
from .health import next_health
from .ports import ChatScopes, MemoryPort
from .status import status_lines
from .steps import STEPS
from .types import LastRun, NightlyBlocks, StepReport, StepStatus

log = logging.getLogger("yuji.nightly")

Trigger = Literal["manual", "schedule", "retry"]
HOUSEKEEPING_SCOPE = "*"
LEASE = timedelta(minutes=30)
"""How long a step another process marked `running` is presumed alive."""


class NightlyService:
    def __init__(
        self,
        db: Database,
        settings: LiveSettings,
        clock: Clock,
        *,
        memory_repo: MemoryRepo,
        memories: MemoryPort,
        archive: ChatScopes,
        llm: LLMClient | None,
        alerts: AlertSink,
        after_cards: Callable[[str], Awaitable[int]] | None = None,
    ) -> None:
        self.repo = NightlyRepo(db, memory_repo)
        self.health = NightlyHealthRepo(db)
        self.live = settings
        self.clock = clock
        self.tz = ZoneInfo(self.settings.timezone)
        self.archive = archive
        self.services = Services(self.repo, memory_repo, memories, llm, settings, alerts)
        self._lock = asyncio.Lock()
        self.owner = uuid.uuid4().hex[:12]
        """This process's mark on the steps it runs (a lease against other processes)."""
        self.after_cards = after_cards
        """Run after a chat's cards are written: takes forgotten people out of them."""

    @property
    def settings(self) -> Settings:
        """The settings in effect now (the nightly time and the bot's name move live)."""
        return self.live.current

    @property
    def cutoff(self) -> time:
        """When a day ends for the night's work: the nightly time in effect now."""
        return parse_cutoff(self.settings.nightly_time)

    # --- running ---------------------------------------------------------------------

    async def run(
        self, *, day: str | None = None, scope: str | None = None, trigger: Trigger = "manual"
    ) -> list[StepReport]:
        """Run (or resume) the night for one chat or all; returns every step's outcome.

        `day` (YYYY-MM-DD) runs that day only; it must have ended. Without it, every
        missed day up to the last one that ended is handled, oldest first.
        """
        wanted = parse_day(day) if day is not None else None
        async with self._lock:
            now = self.clock.now()
            latest = last_complete_day(now, self.tz, self.cutoff)
            if wanted is not None and wanted > latest:
                raise ValidationError(f"{wanted} has not ended yet (it ends at the cutoff)")
            scopes = [scope] if scope is not None else await self.scopes()
            reports: list[StepReport] = []
            for name in scopes:
                reports += await self._run_scope(name, wanted, latest, trigger)
            if any(r.step == "gc" and r.outcome in ("done", "skipped") for r in reports):
                reports.append(await self._housekeeping(latest))
            return reports

    async def retry_due(self) -> list[StepReport]:
        """Re-run the chats whose failed run is due for its retry (circuit closed)."""
        reports: list[StepReport] = []
        for name in await self.health.retries_due(self.clock.now()):
            reports += await self.run(scope=name, trigger="retry")
        return reports

    async def scopes(self) -> list[str]:
        found = set(await self.archive.scopes())
        found.update(await self.repo.fragment_scopes())
        found.update(await self.repo.run_scopes())
        return sorted(found)

    async def _run_scope(
        self, scope: str, wanted: date | None, latest: date, trigger: Trigger
    ) -> list[StepReport]:
        health = await self.health.get(scope)
        if trigger == "retry" and health.circuit_open:
            return [StepReport(scope, "", "settle", "blocked", "circuit open: retries stopped")]
        if wanted is not None:
            days = [wanted]
        else:
            last = await self.repo.last_finished_day(scope)
            oldest = await self.repo.oldest_unarchived_at(scope)
            days = pending_days(
                last_done=parse_day(last) if last else None,
                oldest_material=day_of(oldest, self.tz, self.cutoff) if oldest else None,
                latest=latest,
                max_days=self.settings.nightly_catchup_days,
            )
        reports: list[StepReport] = []
        failure: str | None = None
        waiting = False
        for one in days:
            day_reports = await self._run_day(scope, one)
            reports += day_reports
            last_report = day_reports[-1]
            if last_report.outcome == "failed":
                failure = f"{last_report.day} {last_report.step}: {last_report.detail}"
                break
            if last_report.outcome == "waiting":
                waiting = True
                break
            if last_report.outcome == "blocked":
                return reports  # another process owns this chat's night: leave its health alone
        # Nothing pending also counts as healthy: a due retry with nothing left to do
        # closes the failure streak instead of coming back every tick.
        await self._record(scope, failure, waiting)
        return reports

    async def _run_day(self, scope: str, day: date) -> list[StepReport]:
        day_text = day.isoformat()
        cutoff = self.cutoff  # one day's bounds, even if the console moves the time meanwhile
        rows = await self.repo.steps(scope, day_text)
        done_details: dict[str, dict[str, object]] = {}
        reports: list[StepReport] = []
        for name, step in STEPS:
            row = rows.get(name)
            if row is not None and row.state == "done":
                done_details[name] = row.detail
                reports.append(StepReport(scope, day_text, name, "kept", "done earlier"))
                continue
            now = self.clock.now()
            busy = self._busy_elsewhere(row, now)
            if busy:
                reports.append(StepReport(scope, day_text, name, "blocked", busy))
                return reports
            run = DayRun(
                services=self.services,
                scope=scope,
                day=day,
                start=day_start(day, self.tz, cutoff),
                end=day_end(day, self.tz, cutoff),
                tz=self.tz,
                cutoff=cutoff,
                now=now,
                step=name,
                previous=row,
                done_details=done_details,
                progress={"owner": self.owner},
            )
            # The checkpoint writes belong to the step: a storage error there (a
            # locked or full disk) fails the step and counts, like the step's own.
            try:
                await self.repo.begin_step(scope, day_text, name, now, self.owner)
                result = await step(run)
                if not result.committed:
                    await self.repo.finish_step(
                        scope, day_text, name, self.clock.now(), result.detail
                    )
            except ModelMissing as exc:
                await self.repo.pause_step(scope, day_text, name, str(exc))
                reports.append(StepReport(scope, day_text, name, "waiting", str(exc), run.asks))
                return reports
            except Exception as exc:
                log.exception("nightly %s %s %s failed", scope, day_text, name)
                error = f"{type(exc).__name__}: {exc}"
                await self._mark_failed(scope, day_text, name, error)
                reports.append(StepReport(scope, day_text, name, "failed", error, run.asks))
                return reports
            done_details[name] = result.detail
            if name == "cards" and self.after_cards is not None:
                await self.after_cards(scope)
            outcome = "skipped" if result.skipped else "done"
            reports.append(StepReport(scope, day_text, name, outcome, result.summary, run.asks))
        return reports

    async def _mark_failed(self, scope: str, day: str, step: str, error: str) -> None:
        """Record the failure on the step's checkpoint; when even that write fails,
        the run still reports and counts the failure (the row stays as it was and the
        step runs again on the retry)."""
        try:
            await self.repo.fail_step(scope, day, step, self.clock.now(), error)
        except Exception:
            log.exception("nightly %s %s %s: could not record the failure", scope, day, step)

    def _busy_elsewhere(self, row: StepRow | None, now: datetime) -> str | None:
        """Another process (the bot, or `yuji nightly`) is running this step right now.

        A `running` row of this process is a crash to resume; one of another process
        counts as alive for LEASE, then as crashed too.
        """
        if row is None or row.state != "running" or row.started_at is None:
            return None
        if row.detail.get("owner") == self.owner or now - row.started_at >= LEASE:
            return None
        return f"running in another process since {row.started_at.astimezone(self.tz):%H:%M}"

    async def _record(self, scope: str, failure: str | None, waiting: bool) -> None:
        """The run's outcome into the chat's health, read again and saved in one write
        transaction: a change made while the night ran (the console closing the
        circuit) is counted from, never overwritten with what was read before it."""
        now = self.clock.now()
        settings = self.settings
        before, after = await self.health.update(
            scope,
            now,
            lambda health: next_health(
                health,
                failure,
                waiting,
                now,
                max_failures=settings.nightly_max_failures,
                retry_after=timedelta(seconds=settings.nightly_retry_after_s),
            ),
        )
        key = f"nightly:{scope}"
        if failure is None and not waiting:
            if before.consecutive_failures or before.circuit_open:
                self.services.alerts.recover(key, f"夜间整理 {scope} 恢复正常")
        elif failure is not None and after.circuit_open and not before.circuit_open:
            self.services.alerts.fire(
                key,
                f"夜间整理 {scope} 连续失败 {after.consecutive_failures} 次，已停止自动重试。"
                f"最后的错误：{failure}",
            )

    async def _housekeeping(self, latest: date) -> StepReport:
        """Once per run: merge the derived full-text index. (Old logs are not pruned here:
        the log sink that writes them drops them, nonebot_plugin_yuji/ops_logs.py.)"""
        notes: list[str] = []
        try:
            optimized = await self.services.memory_repo.optimize_derived()
            if optimized:
                notes.append(f"optimized {', '.join(optimized)}")
        except Exception as exc:  # housekeeping never fails the night
            log.warning("nightly housekeeping: %s", exc)
            notes.append(f"housekeeping error: {exc}")
        return StepReport(HOUSEKEEPING_SCOPE, latest.isoformat(), "gc", "done", "; ".join(notes))

    # --- reading ---------------------------------------------------------------------

    async def blocks(
        self, scope: str, now: datetime, recalled: Sequence[Recalled]
    ) -> NightlyBlocks:
        return await blocks_mod.build(
            scope,
            now,
            recalled,
            repo=self.repo,
            memories=self.services.memories,
            tz=self.tz,
            cutoff=self.cutoff,
            recent_diaries=self.settings.nightly_recent_diaries,
        )

    async def cards(self, scope: str) -> list[Card]:
        """The current version of each card that exists, in the fixed order of the seven."""
        current = await self.repo.current_cards(scope)
        return [current[kind] for kind, _ in blocks_mod.card_pairs(current)]

    async def card_history(self, scope: str, kind: str) -> list[Card]:
        return await self.repo.card_history(scope, kind)

    async def diary(self, scope: str, day: str) -> Diary | None:
        return await self.repo.diary(scope, day)

    async def last_run(self, scope: str) -> LastRun:
        return last_run_of(
            scope, await self.repo.latest_day_steps(scope), await self.health.get(scope)
        )

    async def status_lines(self, scope: str) -> dict[str, str]:
        """`/status` lines for the chat (the chat helper's ExtraStatus)."""
        return status_lines(await self.last_run(scope), self.tz)


def last_run_of(scope: str, rows: Sequence[StepRow], health: ScopeHealth) -> LastRun:
    """A chat's latest night from the rows of its steps (in the order they ran)."""
    return LastRun(
        scope=scope,
        day=rows[0].day if rows else None,
        steps=tuple(StepStatus(r.step, r.state, r.attempts, r.error, r.finished_at) for r in rows),
        consecutive_failures=health.consecutive_failures,
        circuit_open=health.circuit_open,
        retry_at=health.retry_at,
        last_error=health.last_error,
        last_success_at=health.last_success_at,
    )
