"""`Porting`: bring history in, take memory out (the `yuji import` / `yuji export` core)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from memory_core.archive.service import ArchiveService
from memory_core.clock import Clock
from memory_core.memories.service import Memories
from memory_core.settings import Settings
from memory_core.storage import ChatrecorderReader, MemoryRepo, PackRepo, PortingRepo
from memory_core.storage.engine import Database

from .backup_redact import RedactedBackup, redact_backups
from .chatrecorder import ChatrecorderSource
from .counts import ImportCounts
from .fact_import import FactImporter
from .forget import ForgetReport, Forgetting
from .forget_me import ASK_AGAIN, ConfirmWindow, done_text
from .message_import import import_messages
from .pack import build_pack
from .pack_import import PackImporter
from .progress import Progress
from .qq_import import QQTextSource


class Porting:
    def __init__(
        self,
        db: Database,
        settings: Settings,
        clock: Clock,
        *,
        archive: ArchiveService,
        memories: Memories,
        memory_repo: MemoryRepo,
        on_change: Callable[[str], None] | None = None,
    ) -> None:
        self.db = db
        self.settings = settings
        self.clock = clock
        self.archive = archive
        self.memories = memories
        self.memory_repo = memory_repo
        self.repo = PortingRepo(db)
        self.packs = PackRepo(db, memory_repo)
        self.forgetting = Forgetting(
            db, settings, clock, memories, memory_repo=memory_repo, on_change=on_change
        )
        self.confirmations = ConfirmWindow()

    async def import_qq_txt(
        self,
        path: Path,
        scope: str,
        *,
        encoding: str = "utf-8",
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> tuple[ImportCounts, int]:
        """A QQ desktop export into one chat's archive; (counts, resumed-from byte)."""
        source = QQTextSource(path, scope, ZoneInfo(self.settings.timezone), encoding=encoding)
        return await import_messages(
            source, self.archive, self.repo, self.clock, dry_run=dry_run, progress=progress
        )

    async def import_chatrecorder(
        self,
        url: str,
        *,
        scope: str | None = None,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> tuple[ImportCounts, int]:
        """nonebot-plugin-chatrecorder's OneBot v11 records (every chat, or one) into
        the archive; (counts, resumed-after record id)."""
        reader = ChatrecorderReader(url)
        try:
            count, highest = await reader.extent(scope)
            del count
            source = ChatrecorderSource(reader, scope, highest)
            return await import_messages(
                source, self.archive, self.repo, self.clock, dry_run=dry_run, progress=progress
            )
        finally:
            await reader.close()

    async def import_facts(
        self,
        path: Path,
        *,
        scope: str | None = None,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> ImportCounts:
        importer = FactImporter(
            self.archive, self.memories, self.repo, self.memory_repo, self.clock
        )
        return await importer.run(path, scope=scope, dry_run=dry_run, progress=progress)

    async def export(self, scope: str) -> dict[str, Any]:
        """One chat's memory pack (docs/memory-pack.md), ready for `json.dump`."""
        rows = await self.packs.export_rows(scope)
        return build_pack(scope, rows, exported_at=self.clock.now(), pack_id=uuid.uuid4().hex)

    async def import_pack(
        self,
        data: Any,
        scope: str,
        *,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> ImportCounts:
        """Restore a pack into `scope` (ids remapped, evidence as quotes); idempotent."""
        importer = PackImporter(self.packs, self.archive, self.memories, self.repo, self.clock)
        return await importer.run(data, scope, dry_run=dry_run, progress=progress)

    async def forget_person(self, scope: str, user_id: str, *, requested_by: str) -> ForgetReport:
        """Forget one person in one chat (see forget.py); rerun to complete an
        interrupted request."""
        return await self.forgetting.forget_person(scope, user_id, requested_by=requested_by)

    async def forget_me(self, scope: str, user_id: str) -> str:
        """`/forget-me`: the first ask explains and waits; a second within a minute
        forgets the sender in this chat. Returns the Chinese answer."""
        if not self.confirmations.confirmed(scope, user_id, self.clock.now()):
            return ASK_AGAIN
        await self.archive.flush()  # the asking messages are theirs too
        report = await self.forget_person(scope, user_id, requested_by=user_id)
        return done_text(report)

    async def redact_backups(self) -> list[RedactedBackup]:
        """`yuji backup --redact`: every finished forget request applied to every backup."""
        requests = await self.forgetting.repo.requests()
        return await redact_backups(self.settings, self.clock, requests)
