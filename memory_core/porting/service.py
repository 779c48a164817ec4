"""`Porting`: bring history in, take memory out (the `yuji import` / `yuji export` core)."""

from __future__ import annotations

from pathlib import Path
from zoneinfo import ZoneInfo

from memory_core.archive.service import ArchiveService
from memory_core.clock import Clock
from memory_core.memories.service import Memories
from memory_core.settings import Settings
from memory_core.storage.engine import Database
from memory_core.storage.porting_repo import PortingRepo

from .counts import ImportCounts
from .fact_import import FactImporter
from .message_import import import_messages
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
    ) -> None:
        self.db = db
        self.settings = settings
        self.clock = clock
        self.archive = archive
        self.memories = memories
        self.repo = PortingRepo(db)

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

    async def import_facts(
        self,
        path: Path,
        *,
        scope: str | None = None,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> ImportCounts:
        importer = FactImporter(self.archive, self.memories, self.repo, self.clock)
        return await importer.run(path, scope=scope, dry_run=dry_run, progress=progress)
