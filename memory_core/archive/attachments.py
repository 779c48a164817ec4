"""Background attachment ingest: fetch, hash, store once, link to the message.

The message is archived first; fetching happens afterwards in tasks of its own, so a
slow or hostile server never delays the archive. Any failure records a `failed`
attachment row linked to the message, which stays archived as it was.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from memory_core.clock import Clock
from memory_core.errors import AttachmentError
from memory_core.storage import ArchiveRepo
from memory_core.types import AttachmentRef

from .fetcher import AttachmentFetcher
from .store import AttachmentStore

log = logging.getLogger("yuji.archive")


class AttachmentIngest:
    def __init__(
        self,
        repo: ArchiveRepo,
        store: AttachmentStore,
        fetcher: AttachmentFetcher,
        clock: Clock,
        *,
        concurrency: int = 4,
    ) -> None:
        self.repo = repo
        self.store = store
        self.fetcher = fetcher
        self.clock = clock
        self._slots = asyncio.Semaphore(concurrency)
        self._tasks: set[asyncio.Task[None]] = set()

    def schedule(self, experience_id: int, refs: Sequence[AttachmentRef]) -> None:
        for ref in refs:
            task = asyncio.get_running_loop().create_task(
                self._ingest(experience_id, ref), name="yuji-attachment"
            )
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    @property
    def pending(self) -> int:
        return len(self._tasks)

    async def wait(self) -> None:
        """Wait for every fetch scheduled so far (tests, shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
        await self.fetcher.aclose()

    async def _ingest(self, experience_id: int, ref: AttachmentRef) -> None:
        try:
            async with self._slots:
                attachment_id = await self._fetch_and_store(ref)
        except AttachmentError as exc:
            log.info("attachment of experience %d not stored: %s", experience_id, exc)
            attachment_id = await self.repo.record_failed_attachment(
                url=ref.url, error=str(exc), at=self.clock.now()
            )
        except Exception as exc:
            log.exception("attachment of experience %d failed", experience_id)
            attachment_id = await self.repo.record_failed_attachment(
                url=ref.url, error=f"{type(exc).__name__}: {exc}", at=self.clock.now()
            )
        await self.repo.link(experience_id, attachment_id, ref.segment_index)

    async def _fetch_and_store(self, ref: AttachmentRef) -> int:
        fetched = await self.fetcher.fetch(ref.url)
        digest = await asyncio.to_thread(self.store.put, fetched.data)
        return await self.repo.record_attachment(
            sha256=digest,
            mime=fetched.mime,
            size=len(fetched.data),
            url=ref.url,
            at=self.clock.now(),
        )
