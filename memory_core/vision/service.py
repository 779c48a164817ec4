"""`core.vision`: describe new images once per content hash, and show descriptions.

- `run_once()`: release images left in the queue longer than `QUEUE_LIMIT`, claimed
  or not yet reached (failed, so they never hold anything up), claim a few new ones, and ask the vision model for
  each (an OpenAI-style `image_url` part with a `data:` URL read from the attachment
  store). A sticker sent a hundred times is one file, one hash, one description.
- `texts(experiences)`: each message's text with `[图片：描述]` in place of `[图片]`,
  for consolidation batches and the reply prompt's recent messages. Images without
  a description (none yet, failed, no vision model) keep `[图片]`: nothing waits.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from memory_core.archive.store import AttachmentStore
from memory_core.clock import Clock
from memory_core.errors import LLMError
from memory_core.llm.base import LLMClient
from memory_core.prompts.vision import clean_description, describe_prompt, with_descriptions
from memory_core.storage import QueuedImage, VisionRepo
from memory_core.storage.engine import Database
from memory_core.types import Experience

log = logging.getLogger("yuji.vision")

QUEUE_LIMIT = timedelta(minutes=5)
CLAIM = 4
"""Images described per run."""
TEMPERATURE = 0.2


@dataclass(frozen=True, slots=True)
class VisionReport:
    described: int = 0
    failed: int = 0
    released: int = 0


class VisionService:
    def __init__(
        self,
        db: Database,
        clock: Clock,
        *,
        llm: LLMClient | None,
        model: str,
        store: AttachmentStore,
        timeout_s: float,
    ) -> None:
        self.repo = VisionRepo(db)
        self.clock = clock
        self.llm = llm
        self.model = model
        self.store = store
        self.timeout_s = timeout_s

    async def run_once(self, limit: int = CLAIM) -> VisionReport:
        now = self.clock.now()
        released = await self.repo.release_stale(now - QUEUE_LIMIT, now)
        if self.llm is not None:
            released += await self.repo.skip_unclaimed(now - QUEUE_LIMIT, now)
        if released:
            log.warning("vision: %d image(s) left in the queue over 5 minutes; failed", released)
        if self.llm is None:
            return VisionReport(released=released)
        described = failed = 0
        for image in await self.repo.claim(now, limit):
            if await self._describe(self.llm, image):
                described += 1
            else:
                failed += 1
        return VisionReport(described, failed, released)

    async def _describe(self, llm: LLMClient, image: QueuedImage) -> bool:
        try:
            data = await asyncio.to_thread(self.store.path_for(image.sha256).read_bytes)
        except OSError as exc:
            await self.repo.fail(image.sha256, f"file unreadable: {exc}", self.clock.now())
            return False
        url = f"data:{image.mime};base64,{base64.b64encode(data).decode()}"
        try:
            reply = await llm.chat(
                describe_prompt(url), temperature=TEMPERATURE, timeout_s=self.timeout_s
            )
        except LLMError as exc:
            log.warning("vision: %s…: %s", image.sha256[:12], exc)
            await self.repo.fail(image.sha256, f"{type(exc).__name__}: {exc}", self.clock.now())
            return False
        description = clean_description(reply.message.content)
        if description is None:
            await self.repo.fail(image.sha256, "empty description", self.clock.now())
            return False
        await self.repo.finish(image.sha256, description, self.model, self.clock.now())
        return True

    async def texts(self, experiences: Sequence[Experience]) -> dict[int, str]:
        """experience id -> its text with image descriptions, for those with any."""
        found = await self.repo.descriptions([e.id for e in experiences])
        return {
            e.id: with_descriptions(e.text, found[e.id])
            for e in experiences
            if any(d is not None for d in found.get(e.id, ()))
        }
