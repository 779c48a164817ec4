"""`Yuji`: the core opened as one object, the thing plugins and the CLI hold.

It owns the database handle, the settings and the injected side effects, and
exposes each concept's service as an attribute. Opening it applies migrations.
"""

from __future__ import annotations

from dataclasses import dataclass

from .archive.fetcher import AttachmentFetcher
from .archive.service import ArchiveService
from .clock import Clock, SystemClock
from .consolidation.service import ConsolidationService
from .llm.base import LLMClient
from .llm.openai_client import OpenAICompatibleClient
from .memories.service import Memories
from .nightly.service import NightlyService
from .ops.alerts import LogAlertSink
from .settings import Settings
from .storage import migrate
from .storage.engine import Database


@dataclass
class Yuji:
    settings: Settings
    db: Database
    clock: Clock
    llm: LLMClient | None
    """None when no model is configured (YUJI_LLM_BASE_URL / YUJI_LLM_MODEL unset)."""
    archive: ArchiveService
    memories: Memories
    consolidation: ConsolidationService
    """Background batches: run_once / reconcile / watchdog / status / remember."""
    nightly: NightlyService
    """The nightly pipeline: run/retry_due, blocks for the chat prompt, cards, last_run."""

    @classmethod
    async def open(
        cls,
        settings: Settings,
        *,
        clock: Clock | None = None,
        llm: LLMClient | None = None,
        fetcher: AttachmentFetcher | None = None,
    ) -> Yuji:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        db = Database(settings.sqlalchemy_url)
        await migrate.upgrade(db)
        if llm is None and settings.llm_configured:
            llm = OpenAICompatibleClient(settings)
        clock = clock or SystemClock()
        archive = ArchiveService(db, settings, clock, fetcher=fetcher)
        memories = Memories(db, clock, settings)
        consolidation = ConsolidationService(
            db,
            settings,
            clock,
            archive=archive,
            memories=memories,
            llm=lambda: llm,
            alerts=LogAlertSink,
        )
        nightly = NightlyService(
            db, settings, clock, memories=memories, archive=archive, llm=llm, alerts=LogAlertSink()
        )
        return cls(
            settings=settings,
            db=db,
            clock=clock,
            llm=llm,
            archive=archive,
            memories=memories,
            consolidation=consolidation,
            nightly=nightly,
        )

    async def close(self) -> None:
        await self.archive.close()
        if isinstance(self.llm, OpenAICompatibleClient):
            await self.llm.aclose()
        await self.db.dispose()
