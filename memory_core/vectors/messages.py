"""Vectors of recent chat, for recall's recent-messages source (`MessageDense`).

Unlike memory vectors (`yuji embed`, a child process), a message must be findable
by meaning within a minute of arrival, so the bot embeds messages itself: the
plugin calls `embed_pending()` every few seconds, and each call embeds a bounded
batch of messages above their chat's acknowledged watermark in a worker thread
(`asyncio.to_thread`), never on the event loop. The vectors are stored in
`message_vectors` (so a restart does not embed the backlog again) and kept in memory
per chat for the questions.

Once a chat's batch is acknowledged its messages are never quoted again (the memory,
or the decision that nothing was worth remembering, answers for them), so their
vectors are dropped: in the acknowledgement's own transaction, by `prune()` for
anything left over, and from memory at the next question. A redacted message's
vector goes in the redaction's transaction. The memory a batch produced has its own
vector, blended with these messages' words, from `yuji embed`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from memory_core.recall.dense_port import DenseScores
from memory_core.storage.engine import Database
from memory_core.storage.message_search import MessageSearch, Unembedded

from .dense import Dense

log = logging.getLogger(__name__)

BATCH = 64
"""Messages embedded per call (about two seconds of e5 on a small host)."""
RELOAD_S = 600.0
"""A chat's vectors in memory are read again in full this often (else only new rows)."""


@dataclass(frozen=True, slots=True)
class _Block:
    ids: npt.NDArray[np.int64]
    matrix: npt.NDArray[np.float32]
    loaded_at: float


def passage(row: Unembedded) -> str:
    """What a message is embedded as: its sender and its words, like a memory's
    subject and content."""
    return f"{row.sender_name}：{row.text}" if row.sender_name else row.text


class MessageVectors:
    def __init__(self, db: Database, dense: Dense) -> None:
        self.repo = MessageSearch(db)
        self.dense = dense
        self._blocks: dict[str, _Block] = {}
        self._failed = False

    async def embed_pending(self, limit: int = BATCH) -> int:
        """Embed up to `limit` messages that have no vector yet; how many."""
        if self.dense.mode == "off":
            return 0
        model = self.dense.embedder_id
        rows = await self.repo.unembedded(model, limit)
        if not rows:
            return 0
        texts = [passage(r) for r in rows]
        matrix = await asyncio.to_thread(self.dense.embedder.embed, texts)
        await self.repo.store_vectors(model, [(r.id, r.scope) for r in rows], matrix)
        return len(rows)

    async def prune(self) -> int:
        """Drop the stored vectors of messages acknowledged or redacted since."""
        return await self.repo.prune_vectors()

    async def message_scores(
        self, scope: str, text: str, after_id: int, before_id: int
    ) -> DenseScores | None:
        try:
            block = await self._block(scope, after_id)
            keep = (block.ids > after_id) & (block.ids < before_id)
            if not keep.any():
                return None
            query, background = await self.dense.question(text)
            return DenseScores(block.ids[keep], block.matrix[keep] @ query, background)
        except Exception:
            if not self._failed:
                log.exception("recent-message vectors failed; recall goes on with words")
                self._failed = True
            return None

    async def _block(self, scope: str, after_id: int) -> _Block:
        """The chat's vectors above `after_id` (its acknowledged watermark): what was
        held, less what was acknowledged since, plus what was stored since."""
        model = self.dense.embedder_id
        held = self._blocks.get(scope)
        now = time.monotonic()
        if held is None or now - held.loaded_at > RELOAD_S:
            ids, matrix = await self.repo.vectors(scope, model, after_id)
            held = _Block(ids, matrix, now)
        else:
            keep = held.ids > after_id
            newest = int(held.ids[-1]) if len(held.ids) else after_id
            ids, matrix = await self.repo.vectors(scope, model, max(newest, after_id))
            if len(ids):
                old = held.matrix[keep]
                if old.size == 0:
                    old = np.zeros((0, matrix.shape[1]), dtype=np.float32)
                held = _Block(
                    np.concatenate([held.ids[keep], ids]),
                    np.concatenate([old, matrix]),
                    held.loaded_at,
                )
            elif not keep.all():
                held = _Block(held.ids[keep], held.matrix[keep], held.loaded_at)
        self._blocks[scope] = held
        return held
