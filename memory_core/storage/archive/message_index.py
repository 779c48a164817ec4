"""Writes to the recent-chat recall source's derived tables (`message_fts`,
`message_vectors`; message_search.py reads them), each inside the caller's
transaction: the archive writer indexes what it commits, an acknowledgement and a
redaction take rows out."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import delete, text
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.fulltext import fts
from memory_core.storage.fulltext.ranked import add_rows
from memory_core.storage.schema import experiences, message_vectors

x = experiences.c
v = message_vectors.c
_CHUNK = 500
_BACKLOG = text(
    "SELECT e.id, e.scope, e.sender_name, e.text FROM experiences e "
    "LEFT JOIN consolidation_cursors c ON c.scope = e.scope "
    "WHERE e.id > COALESCE(c.acked_id, 0) AND e.id > :after AND e.is_bot = :bot "
    "AND NOT EXISTS (SELECT 1 FROM redactions r WHERE r.experience_id = e.id) "
    "ORDER BY e.id LIMIT :limit"
)
"""The messages the index holds: each chat's unacknowledged ones, but the bot's own and
redacted ones (migration 0015 indexed the same)."""
_DROP_RANGE = text(
    "DELETE FROM message_fts WHERE rowid IN "
    "(SELECT id FROM experiences WHERE scope = :scope AND id > :after AND id <= :upto)"
)


def index_params(
    rows: Iterable[tuple[int, str, str, str, bool]],
) -> list[dict[str, Any]]:
    """`message_fts` rows of freshly archived (id, scope, sender name, text, is_bot)
    messages; the bot's own are left out."""
    return [
        {"id": i, "bi": fts.document(scope, sender, body)}
        for i, scope, sender, body, is_bot in rows
        if not is_bot
    ]


async def index_messages(conn: AsyncConnection, params: Sequence[dict[str, Any]]) -> None:
    """Add `index_params` rows inside the caller's (the archive writer's) transaction."""
    await add_rows(conn, "message_fts", params)


async def drop_messages(conn: AsyncConnection, ids: Sequence[int]) -> None:
    """These messages leave the index and the vectors (a redaction), in the caller's
    transaction."""
    for start in range(0, len(ids), _CHUNK):
        chunk = list(ids[start : start + _CHUNK])
        marks = ", ".join(str(int(i)) for i in chunk)
        await conn.execute(text(f"DELETE FROM message_fts WHERE rowid IN ({marks})"))
        await conn.execute(delete(message_vectors).where(v.experience_id.in_(chunk)))


async def drop_acknowledged(conn: AsyncConnection, scope: str, after: int, upto: int) -> None:
    """A batch (after, upto] of `scope` was acknowledged: its messages stop being a
    recall source, so their index rows and vectors go (caller's transaction)."""
    await conn.execute(_DROP_RANGE, {"scope": scope, "after": after, "upto": upto})
    await conn.execute(
        delete(message_vectors).where(
            v.scope == scope, v.experience_id > after, v.experience_id <= upto
        )
    )


async def rebuild(conn: AsyncConnection, batch: int = 2000) -> int:
    """Index again every message the index should hold, from the archive and the
    watermarks (a store filled by `yuji copy-store`), in the caller's transaction."""
    await conn.execute(text("DELETE FROM message_fts"))
    count = after = 0
    while True:
        rows = (await conn.execute(_BACKLOG, {"after": after, "bot": False, "limit": batch})).all()
        if not rows:
            return count
        await add_rows(
            conn,
            "message_fts",
            [{"id": r.id, "bi": fts.document(r.scope, r.sender_name, r.text)} for r in rows],
        )
        count += len(rows)
        after = rows[-1].id
