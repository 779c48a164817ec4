"""Archived messages as the person index reads them (memory_core/people/): who said
it, in which chat, when, under which name, whom it @-mentions (its segments), and
which of our accounts heard it.

The archive writer hands over the rows each transaction inserted (`heard_of`), and
`yuji people rebuild` reads the archive in id order (`heard_after`): both give the
same `Heard` for the same row, so the index filled live and the one rebuilt agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.schema import experiences


@dataclass(frozen=True, slots=True)
class Heard:
    id: int
    scope: str
    sender_id: str
    sender_name: str
    is_bot: bool
    segments: list[dict[str, Any]]
    sent_at: datetime
    account: str | None
    """The deployment's account that heard (or sent) it; None for imports."""


_e = experiences.c
_COLUMNS = (
    _e.id,
    _e.scope,
    _e.sender_id,
    _e.sender_name,
    _e.is_bot,
    _e.segments,
    _e.sent_at,
    _e.account,
)


def heard_of(rows: Iterable[tuple[int, Mapping[Any, Any]]]) -> list[Heard]:
    """(id, the row's values as the writer inserted them) -> Heard, in their order."""
    return [
        Heard(
            id=id_,
            scope=str(row["scope"]),
            sender_id=str(row["sender_id"]),
            sender_name=str(row["sender_name"]),
            is_bot=bool(row["is_bot"]),
            segments=list(row["segments"]),
            sent_at=row["sent_at"],
            account=None if row.get("account") is None else str(row["account"]),
        )
        for id_, row in rows
    ]


async def heard_after(conn: AsyncConnection, after_id: int, limit: int) -> list[Heard]:
    """Up to `limit` archived messages with ids above `after_id`, ids ascending (a
    primary-key range: the same cost wherever the walk is)."""
    result = await conn.execute(
        select(*_COLUMNS).where(_e.id > after_id).order_by(_e.id).limit(limit)
    )
    return heard_of((int(r.id), r._mapping) for r in result)  # pyright: ignore[reportPrivateUsage]


async def last_id(conn: AsyncConnection) -> int:
    """The archive's highest id (0: empty)."""
    return int(await conn.scalar(select(func.max(_e.id))) or 0)
