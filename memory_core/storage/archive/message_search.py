"""Recent chat as a recall source: the SQL of the message full-text index
`message_fts` and of `message_vectors` (both derived; migration 0015).

A message is *quotable* to a question asked in `scope` when it is a message of that
chat, above the chat's acknowledged watermark and older than the prompt's recent
window (`Window`), not the bot's own (an intercepted reply is never archived, and
the bot's words are no one's testimony) and not redacted by a forget request. Every
read here applies that rule in SQL (`_quotable`); recall checks the range again on
what comes back. The index rows and vectors are dropped when their message is
acknowledged or redacted, so they never outlive the rule, but the rule never relies
on that.

Layout: `message_fts` is `memory_fts`'s (storage/fulltext/fts.py): rowid = experience id, one
column `bi` of chat-keyed bigram tokens of "sender text".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlalchemy import ColumnElement, and_, delete, exists, func, insert, select, text
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.fulltext import fts
from memory_core.storage.fulltext.ranked import match_params, pg_ranked_sql
from memory_core.storage.repository import Repository
from memory_core.storage.schema import (
    consolidation_cursors,
    experiences,
    message_vectors,
    redactions,
)
from memory_core.types import Experience

from .archive_repo import experience_of

x = experiences.c
v = message_vectors.c
_CHUNK = 500
_MATCH = {
    "sqlite": text(
        "SELECT rowid AS rid, bi FROM message_fts WHERE message_fts MATCH :match "
        "AND rowid > :lo AND rowid < :hi ORDER BY bm25(message_fts) LIMIT :limit"
    ),
    "postgresql": text(
        "SELECT r.rid, f.bi FROM ("
        + pg_ranked_sql("message_fts", ":limit", " AND p.rowid > :lo AND p.rowid < :hi")
        + ") AS r JOIN message_fts AS f ON f.rowid = r.rid ORDER BY r.rank, r.rid"
    ),
}


@dataclass(frozen=True, slots=True)
class Window:
    """The ids of one chat that may be quoted: strictly between `acked_id` (the
    acknowledged watermark) and `start` (the oldest message the prompt already shows)."""

    acked_id: int
    start: int

    @property
    def empty(self) -> bool:
        return self.start <= self.acked_id + 1


@dataclass(frozen=True, slots=True)
class Unembedded:
    id: int
    scope: str
    sender_name: str
    text: str


def _quotable(scope: str, lo: int, hi: int) -> ColumnElement[bool]:
    return and_(
        x.scope == scope,
        x.id > lo,
        x.id < hi,
        x.is_bot.is_(False),
        ~exists().where(redactions.c.experience_id == x.id),
    )


class MessageSearch(Repository):
    async def window(
        self,
        scope: str,
        recent: int,
        before_id: int | None,
        *,
        conn: AsyncConnection | None = None,
    ) -> Window:
        """The quotable range of `scope` for a question: above the acknowledged
        watermark, below the `recent` newest messages before `before_id` (the asking
        message; None: the newest archived)."""
        acked = select(consolidation_cursors.c.acked_id).where(
            consolidation_cursors.c.scope == scope
        )
        query = select(x.id).where(x.scope == scope)
        if before_id is not None:
            query = query.where(x.id < before_id)
        # The oldest of the `recent` newest; with none shown, past the newest.
        newest = query.order_by(x.id.desc())
        edge = newest.offset(recent - 1).limit(1) if recent > 0 else newest.limit(1)
        async with self.reading(conn) as c:  # one round trip
            row = (
                await c.execute(
                    select(
                        acked.scalar_subquery().label("acked"),
                        edge.scalar_subquery().label("edge"),
                    )
                )
            ).one()
        acked_id, start = row.acked, row.edge
        if recent <= 0:
            start = (start or 0) + 1
        return Window(int(acked_id or 0), int(start or 0))

    async def word_candidates(
        self,
        scope: str,
        tokens: Iterable[str],
        window: Window,
        *,
        limit: int,
        conn: AsyncConnection | None = None,
    ) -> list[tuple[Experience, frozenset[str]]]:
        """The `limit` best (bm25) quotable messages holding any of these tokens, each
        with the tokens it holds."""
        if window.empty:
            return []
        async with self.reading(conn) as c:
            match = match_params(c.dialect.name, scope, tokens)
            if match is None:
                return []
            columns = {
                int(r.rid): str(r.bi)
                for r in await c.execute(
                    _MATCH[c.dialect.name],
                    {**match, "lo": window.acked_id, "hi": window.start, "limit": limit},
                )
            }
            ranked = list(columns)  # best first
            found = {e.id: e for e in await self.quotable(scope, ranked, window, conn=c)}
        return [(found[i], fts.column_tokens(columns.get(i, ""))) for i in ranked if i in found]

    async def quotable(
        self,
        scope: str,
        ids: Sequence[int],
        window: Window,
        *,
        conn: AsyncConnection | None = None,
    ) -> list[Experience]:
        """Those of `ids` that may be quoted in `scope` now (the rule, in SQL)."""
        if not ids or window.empty:
            return []
        out: list[Experience] = []
        async with self.reading(conn) as c:
            for start in range(0, len(ids), _CHUNK):
                chunk = sorted(set(ids[start : start + _CHUNK]))
                rows = await c.execute(
                    select(experiences).where(
                        _quotable(scope, window.acked_id, window.start), x.id.in_(chunk)
                    )
                )
                out += [experience_of(r) for r in rows]
        return out

    # --- vectors ---------------------------------------------------------------------

    async def unembedded(
        self, model: str, limit: int, *, conn: AsyncConnection | None = None
    ) -> list[Unembedded]:
        """Up to `limit` messages, oldest first, above their chat's acknowledged
        watermark, with no vector of `model` yet (never the bot's own or redacted)."""
        cur = consolidation_cursors.c
        acked = select(cur.acked_id).where(cur.scope == x.scope).scalar_subquery()
        query = (
            select(x.id, x.scope, x.sender_name, x.text)
            .where(
                x.id > func_coalesce(acked),
                x.is_bot.is_(False),
                ~exists().where(redactions.c.experience_id == x.id),
                ~exists().where(v.experience_id == x.id, v.model == model),
            )
            .order_by(x.id)
            .limit(limit)
        )
        async with self.reading(conn) as c:
            return [
                Unembedded(int(r.id), str(r.scope), str(r.sender_name), str(r.text))
                for r in await c.execute(query)
            ]

    async def store_vectors(
        self,
        model: str,
        rows: Sequence[tuple[int, str]],
        matrix: npt.NDArray[np.float32],
        *,
        conn: AsyncConnection | None = None,
    ) -> None:
        """The vectors of (experience id, scope) rows, one matrix row each; a row its
        chat acknowledged or redacted while it was being embedded is not kept (the
        acknowledgement and the redaction drop vectors in their own transactions, and
        this one must not bring one back)."""
        if not rows:
            return
        params = [
            {
                "experience_id": i,
                "scope": scope,
                "model": model,
                "vector": np.asarray(vec, dtype=np.float32).tobytes(),
            }
            for (i, scope), vec in zip(rows, matrix, strict=True)
        ]
        async with self.writing(conn) as c:
            await c.execute(
                delete(message_vectors).where(v.experience_id.in_([i for i, _ in rows]))
            )
            await c.execute(insert(message_vectors), params)
            cur = consolidation_cursors.c
            acked = select(cur.acked_id).where(cur.scope == v.scope).scalar_subquery()
            await c.execute(
                delete(message_vectors).where(
                    v.experience_id.in_([i for i, _ in rows]),
                    (v.experience_id <= func_coalesce(acked))
                    | exists().where(redactions.c.experience_id == v.experience_id),
                )
            )

    async def vectors(
        self,
        scope: str,
        model: str,
        after_id: int,
        *,
        conn: AsyncConnection | None = None,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(ids, matrix) of `scope`'s stored vectors of `model` above `after_id`, by id."""
        async with self.reading(conn) as c:
            rows = (
                await c.execute(
                    select(v.experience_id, v.vector)
                    .where(v.scope == scope, v.model == model, v.experience_id > after_id)
                    .order_by(v.experience_id)
                )
            ).all()
        ids = np.fromiter((int(r[0]) for r in rows), dtype=np.int64, count=len(rows))
        if not rows:
            return ids, np.zeros((0, 0), dtype=np.float32)
        matrix = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
        return ids, matrix


def func_coalesce(value: Any) -> Any:
    """`COALESCE(value, 0)`: a chat without a cursor has acknowledged nothing."""
    return func.coalesce(value, 0)
