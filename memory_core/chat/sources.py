"""Adapters from the other areas' services to what chat reads (ports.ContextPort,
commands.StatusPort). Reads only; nothing here writes another area's tables."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from zoneinfo import ZoneInfo

from memory_core.clock import Clock
from memory_core.consolidation.service import ConsolidationService
from memory_core.nightly.service import NightlyService
from memory_core.nightly.types import LastRun
from memory_core.ops.service import OpsService, OpsStatus
from memory_core.settings import Settings
from memory_core.storage import memory_repo
from memory_core.storage.chat_repo import ChatRepo
from memory_core.storage.engine import Database

from .texts import ScopeStatus, local_time

ExtraStatus = Callable[[str], Awaitable[Mapping[str, str]]]
"""scope -> labelled lines another area adds to `/status` (nightly, backups, sizes)."""


class ChatContextSource:
    def __init__(self, db: Database, consolidation: ConsolidationService) -> None:
        self.db = db
        self.consolidation = consolidation

    async def acked_id(self, scope: str) -> int:
        return (await self.consolidation.repo.cursor(scope)).acked_id

    async def open_fragments(self, scope: str, limit: int) -> list[str]:
        fragments = await self.consolidation.repo.fragments(scope, archived=False, limit=500)
        return [f.summary for f in fragments[-limit:]] if limit > 0 else []

    async def contradicting_pairs(self, scope: str, ids: Sequence[int]) -> list[tuple[int, int]]:
        wanted = set(ids)
        if len(wanted) < 2:
            return []
        async with self.db.read() as conn:
            edges = await memory_repo.relations(conn, scope, wanted, ("contradicts",))
        return [(src, dst) for src, dst, _ in edges if src in wanted and dst in wanted]


class ChatStatusSource:
    def __init__(
        self,
        consolidation: ConsolidationService,
        repo: ChatRepo,
        extras: Sequence[ExtraStatus] = (),
    ) -> None:
        self.consolidation = consolidation
        self.repo = repo
        self.extras = list(extras)

    def add_extra(self, extra: ExtraStatus) -> None:
        self.extras.append(extra)

    async def scope_status(self, scope: str) -> ScopeStatus:
        consolidation = await self.consolidation.status(scope)
        state = await self.repo.state(scope)
        batch = consolidation.last_batch
        extra: dict[str, str] = {}
        for source in self.extras:
            extra.update(await source(scope))
        return ScopeStatus(
            scope=scope,
            pending=consolidation.pending,
            last_batch_state=batch.state if batch is not None else None,
            last_batch_at=(batch.finished_at or batch.created_at) if batch is not None else None,
            muted_until=state.muted_until,
            last_reply_at=state.last_reply_at,
            extra=extra,
        )


# --- what the nightly and operations areas add to `/status` ---------------------------


def nightly_lines(nightly: NightlyService) -> ExtraStatus:
    async def lines(scope: str) -> Mapping[str, str]:
        return {"昨晚整理": night_line(await nightly.last_run(scope))}

    return lines


def ops_lines(ops: OpsService, settings: Settings, clock: Clock) -> ExtraStatus:
    zone = ZoneInfo(settings.timezone)

    async def lines(scope: str) -> Mapping[str, str]:
        return ops_status_lines(await ops.status(), settings.vector_mode, zone, clock.now())

    return lines


def night_line(run: LastRun) -> str:
    if run.circuit_open:
        return (
            f"连续失败 {run.consecutive_failures} 次，已停止重试（{run.last_error or '原因未知'}）"
        )
    if run.day is None or not run.steps:
        return "还没跑过"
    done = sum(1 for step in run.steps if step.state == "done")
    failed = [step.step for step in run.steps if step.state == "failed"]
    line = f"{run.day}，{done}/{len(run.steps)} 步完成"
    return line + (f"，失败：{'、'.join(failed)}" if failed else "")


def ops_status_lines(
    status: OpsStatus, vector_mode: str, zone: ZoneInfo, now: datetime
) -> dict[str, str]:
    backup = status.last_backup
    if backup is None:
        last_backup = "还没有"
    else:
        verdict = "通过检查" if backup.ok else f"失败（{'、'.join(backup.failed_checks)}）"
        last_backup = f"{local_time(backup.created_at, zone, now)}，{verdict}"
    sizes = status.sizes
    return {
        "上次备份": last_backup,
        "占用": f"数据库 {_size(sizes.database)}，附件 {_size(sizes.attachments)}，备份 {_size(sizes.backups)}",
        "向量模式": vector_mode,
    }


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{n} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"
