"""`core.archive`: the experience archive service (docs/design.md#from-the-socket-to-the-archive).

Writes go through the group-commit writer; a duplicate (scope, fingerprint) returns
the id already archived, and each of its transactions fills the person index with the
rows it inserted (memory_core/people/). Reads are scoped: an id of another chat is
`NotFound`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import get_args

from memory_core.clock import Clock
from memory_core.errors import NotFound, ValidationError
from memory_core.people.service import People
from memory_core.settings import Settings
from memory_core.storage import (
    Appended,
    ArchiveCounts,
    ArchiveRepo,
    LinkedAttachment,
)
from memory_core.storage.backend_info import database_bytes
from memory_core.storage.engine import Database
from memory_core.types import Experience, NewExperience, Source

from .attachments import AttachmentIngest
from .drops import ArchiveHealth, health_lines
from .fetcher import AttachmentFetcher, HttpxFetcher
from .store import AttachmentStore
from .writer import DrainReport, GroupCommitWriter

SOURCES = get_args(Source)


class _Unindexed(Exception):
    """The person index refused a batch: its transaction is rolled back."""


@dataclass(frozen=True, slots=True)
class ArchiveStats:
    counts: ArchiveCounts
    database_bytes: int
    attachment_bytes: int


class ArchiveService:
    def __init__(
        self,
        db: Database,
        settings: Settings,
        clock: Clock,
        *,
        fetcher: AttachmentFetcher | None = None,
        people: People | None = None,
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.db = db
        self.repo = ArchiveRepo(db)
        self.people = people or People(db, clock)
        """The person index, filled in each of the writer's transactions."""
        self.store = AttachmentStore(settings.attachments_path)
        self.writer = GroupCommitWriter(
            self._insert,
            max_batch=settings.archive_flush_max,
            capacity=settings.archive_queue_max,
            gather_s=settings.archive_flush_wait_s,
        )
        self.attachments = AttachmentIngest(
            self.repo,
            self.store,
            fetcher
            or HttpxFetcher(
                max_bytes=settings.attachment_max_bytes,
                timeout_s=settings.attachment_timeout_s,
                allow_loopback=settings.attachment_allow_loopback,
                allow_private=settings.attachment_allow_private,
            ),
            clock,
        )

    # --- writes ------------------------------------------------------------------

    async def _insert(
        self, exps: Sequence[NewExperience], received_at: Sequence[datetime]
    ) -> list[Appended]:
        """The writer's transaction: the rows, and the person index of those inserted.
        The index never fails the rows: when it refuses them, the transaction is rolled
        back and the rows written again without it (`yuji people rebuild` fills that)."""
        chats = {e.scope for e in exps}
        with contextlib.suppress(_Unindexed):
            async with self.db.write(chats) as conn:
                appended, heard = await self.repo.insert_heard(exps, received_at, conn=conn)
                if not await self.people.index(heard, conn=conn):
                    raise _Unindexed
            return appended
        return await self.repo.insert_many(exps, received_at)

    async def append(self, exp: NewExperience) -> int:
        _validate(exp)
        appended = await self.writer.submit(exp, self.clock.now())
        if appended.created and exp.attachments:
            self.attachments.schedule(appended.id, exp.attachments)
        return appended.id

    async def enqueue(self, exp: NewExperience) -> None:
        """The live path: queue one message and return once it is queued (waiting only
        while the queue is full), not once it is committed. Attachments are scheduled
        when the row commits; a refused row is logged by the writer."""
        _validate(exp)
        self._on_commit(exp, await self.writer.put(exp, self.clock.now()))

    def offer(self, exp: NewExperience) -> asyncio.Future[Appended] | None:
        """`enqueue` without waiting (for a synchronous hook): the future of its commit,
        or None when the queue is full and nothing was queued."""
        _validate(exp)
        future = self.writer.offer(exp, self.clock.now())
        if future is not None:
            self._on_commit(exp, future)
        return future

    def _on_commit(self, exp: NewExperience, future: asyncio.Future[Appended]) -> None:
        def committed(done: asyncio.Future[Appended]) -> None:
            if done.cancelled() or done.exception() is not None:
                return
            if done.result().created and exp.attachments:
                self.attachments.schedule(done.result().id, exp.attachments)

        future.add_done_callback(committed)

    async def append_many(self, exps: Sequence[NewExperience]) -> list[int]:
        for exp in exps:
            _validate(exp)
        now = self.clock.now()
        # Everything arrives in the writer's queue at once, so it commits together.
        ids: list[int] = []
        for exp, appended in zip(
            exps, await asyncio.gather(*(self.writer.submit(e, now) for e in exps)), strict=True
        ):
            if appended.created and exp.attachments:
                self.attachments.schedule(appended.id, exp.attachments)
            ids.append(appended.id)
        return ids

    async def flush(self) -> None:
        await self.writer.flush()

    def hurry(self) -> None:
        """Someone waits for a queued message (a wake, a command): commit what is
        queued now instead of gathering more (`YUJI_ARCHIVE_FLUSH_WAIT_S`)."""
        self.writer.hurry()

    async def drain(self, timeout_s: float) -> DrainReport:
        """Shutdown: write everything queued within `timeout_s`, then refuse new rows;
        what is left is reported by chat (the next start's backfill fetches it)."""
        return await self.writer.drain(timeout_s)

    def health(self) -> ArchiveHealth:
        """The writer now: queued rows, whether the store refuses them, drops so far."""
        return self.writer.health()

    async def status_lines(self, scope: str = "") -> dict[str, str]:
        """`/status` lines of the archive (the same for every chat); none from a process
        that never archived (`yuji status`: the counts are the bot process's own)."""
        health = self.health()
        if self.writer.batches == 0 and not health.dropped and health.held_s is None:
            return {}
        return health_lines(health)

    def take_gaps(self) -> dict[str, datetime]:
        """Chats where a row was dropped -> since when, for the backfill to fetch again
        once (a row refused again is not fetched again and again)."""
        return self.writer.drops.take_gaps()

    async def wait_attachments(self) -> None:
        """Wait until every scheduled attachment fetch has stored or failed."""
        await self.attachments.wait()

    async def close(self) -> None:
        await self.writer.close()
        await self.attachments.close()

    # --- reads -------------------------------------------------------------------

    async def get(self, scope: str, experience_id: int) -> Experience:
        found = await self.repo.get(scope, experience_id)
        if found is None:
            raise NotFound(f"experience {experience_id} not found")
        return found

    async def get_many(self, scope: str, ids: Sequence[int]) -> list[Experience]:
        return await self.repo.get_many(scope, ids)

    async def after(self, scope: str, after_id: int, limit: int) -> list[Experience]:
        return await self.repo.after(scope, after_id, limit)

    async def recent(
        self, scope: str, limit: int, before_id: int | None = None
    ) -> list[Experience]:
        return await self.repo.recent(scope, limit, before_id)

    async def by_fingerprint(self, scope: str, fingerprint: str) -> Experience | None:
        return await self.repo.by_fingerprint(scope, fingerprint)

    async def newest_received_before(self, scope: str, before: datetime) -> Experience | None:
        return await self.repo.newest_received_before(scope, before)

    async def scopes(self) -> list[str]:
        return await self.repo.scopes()

    async def max_id(self, scope: str) -> int:
        return await self.repo.max_id(scope)

    async def attachments_of(self, scope: str, experience_id: int) -> list[LinkedAttachment]:
        await self.get(scope, experience_id)  # scope check first
        return await self.repo.attachments_of(experience_id)

    async def stored_file(self, sha256: str) -> tuple[Path, str] | None:
        """The stored file of an attachment and its MIME type; None unless the archive
        stored it (a failed or cleaned attachment, or any other hash, has no file)."""
        try:
            path = self.store.path_for(sha256)
        except ValueError:
            return None
        row = await self.repo.attachment_by_sha(sha256)
        if row is None or row.status != "stored" or not path.is_file():
            return None
        return path, row.mime or "application/octet-stream"

    async def stats(self) -> ArchiveStats:
        counts = await self.repo.counts()
        db_bytes = await database_bytes(self.db)
        return ArchiveStats(counts, db_bytes, await asyncio.to_thread(self.store.total_bytes))


def _validate(exp: NewExperience) -> None:
    if not exp.scope or not exp.fingerprint:
        raise ValidationError("an experience needs a scope and a fingerprint")
    if exp.scope.partition(":")[0].rpartition("-")[2] not in ("group", "private"):
        raise ValidationError(f"unknown scope kind: {exp.scope!r}")
    if exp.source not in SOURCES:
        raise ValidationError(f"unknown source: {exp.source!r}")
    if exp.sent_at.tzinfo is None:
        raise ValidationError("sent_at must be timezone-aware")
