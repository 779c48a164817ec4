"""Vectors of recent chat, for recall's recent-messages source (`MessageDense`).

Unlike memory vectors (`yuji embed`, a child process), a message must be findable
by meaning within a minute of arrival, so the bot embeds messages itself: the
plugin calls `catch_up()` every few seconds, and each `embed_pending()` embeds a
bounded batch of messages above their chat's acknowledged watermark in a worker thread
(`asyncio.to_thread`), never on the event loop. The vectors are stored in
`message_vectors` (so a restart does not embed the backlog again) and kept in memory
per chat for the questions.

Once a chat's batch is acknowledged its messages are never quoted again (the memory,
or the decision that nothing was worth remembering, answers for them), so their
vectors are dropped: in the acknowledgement's own transaction (and a vector stored
for a message acknowledged while it was being embedded is dropped as it is stored),
and from memory at the next question. A redacted message's
vector goes in the redaction's transaction. The memory a batch produced has its own
vector, blended with these messages' words, from `yuji embed`.
"""

from __future__ import annotations

import asyncio
import logging
import time

import numpy as np
import numpy.typing as npt

from memory_core.recall.dense_port import DenseScores
from memory_core.storage import MessageSearch, Unembedded
from memory_core.storage.engine import Database

from .dense import Dense
from .store import dot_rows

log = logging.getLogger(__name__)

BATCH = 64
"""Messages embedded per call (about two seconds of e5 on a small host)."""
RELOAD_S = 600.0
"""A chat's vectors in memory are read again in full this often (else only new rows)."""


class _Block:
    """One chat's vectors in memory: ids ascending and their rows, contiguous, in
    buffers with room at the end, so a question scores a slice in place and new
    rows are appended without copying the old ones (amortised)."""

    __slots__ = ("_hi", "_ids", "_lo", "_matrix", "loaded_at")

    def __init__(
        self, ids: npt.NDArray[np.int64], matrix: npt.NDArray[np.float32], loaded_at: float
    ) -> None:
        self._ids = np.ascontiguousarray(ids, dtype=np.int64)
        self._matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        self._lo = 0
        self._hi = len(ids)
        self.loaded_at = loaded_at

    @property
    def ids(self) -> npt.NDArray[np.int64]:
        return self._ids[self._lo : self._hi]

    @property
    def newest(self) -> int | None:
        return int(self._ids[self._hi - 1]) if self._hi > self._lo else None

    def drop_through(self, acked_id: int) -> None:
        """Forget the rows at or below the acknowledged watermark."""
        self._lo += int(np.searchsorted(self.ids, acked_id, side="right"))

    def append(self, ids: npt.NDArray[np.int64], matrix: npt.NDArray[np.float32]) -> None:
        """Add rows whose ids are all above the newest held."""
        if not len(ids):
            return
        count = self._hi - self._lo
        fits = self._matrix.shape[1] == matrix.shape[1]
        if not fits:  # nothing held yet (an empty read is 0 x 0): start over
            count = self._lo = self._hi = 0
        if not fits or self._hi + len(ids) > len(self._ids):
            room = max(2 * (count + len(ids)), 64)
            grown_ids = np.empty(room, dtype=np.int64)
            grown = np.empty((room, matrix.shape[1]), dtype=np.float32)
            if count:
                grown_ids[:count] = self._ids[self._lo : self._hi]
                grown[:count] = self._matrix[self._lo : self._hi]
            self._ids, self._matrix, self._lo, self._hi = grown_ids, grown, 0, count
        self._ids[self._hi : self._hi + len(ids)] = ids
        self._matrix[self._hi : self._hi + len(ids)] = matrix
        self._hi += len(ids)

    def between(
        self, after_id: int, before_id: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(ids, rows) strictly between the two ids: views, no copy."""
        ids = self.ids
        lo = int(np.searchsorted(ids, after_id, side="right"))
        hi = int(np.searchsorted(ids, before_id, side="left"))
        return ids[lo:hi], self._matrix[self._lo + lo : self._lo + max(lo, hi)]


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

    async def catch_up(self, batches: int) -> int:
        """Embed up to `batches` batches of pending messages (the rest waits for the
        next call); how many messages."""
        done = 0
        for _ in range(batches):
            embedded = await self.embed_pending()
            done += embedded
            if not embedded:
                break
        return done

    async def message_scores(
        self, scope: str, text: str, after_id: int, before_id: int
    ) -> DenseScores | None:
        try:
            block = await self._block(scope, after_id)
            ids, matrix = block.between(after_id, before_id)
            if not len(ids):
                return None
            query, background = await self.dense.question(text)
            return DenseScores(ids.copy(), dot_rows(matrix, query), background)
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
            held.drop_through(after_id)
            newest = held.newest
            ids, matrix = await self.repo.vectors(
                scope, model, after_id if newest is None else max(newest, after_id)
            )
            held.append(ids, matrix)
        self._blocks[scope] = held
        return held
