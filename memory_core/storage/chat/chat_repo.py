"""The chat aggregate's SQL: per-chat state (mute, last wake/reply) and injections.

`injections` records what each reply was given: the memory ids with their stage
tags, scores and reasons, and which of them the model cited. `/why` reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Row, insert, select, update
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.repository import Repository, upsert
from memory_core.storage.schema import chat_state, injections


@dataclass(frozen=True, slots=True)
class ChatState:
    scope: str
    muted_until: datetime | None = None
    last_wake_at: datetime | None = None
    last_reply_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class InjectedItem:
    memory_id: int
    stage: str
    score: float
    reason: str = ""
    cited: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "memory_id": self.memory_id,
            "stage": self.stage,
            "score": round(self.score, 4),
            "reason": self.reason,
            "cited": self.cited,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> InjectedItem:
        return cls(
            memory_id=int(raw["memory_id"]),
            stage=str(raw.get("stage", "")),
            score=float(raw.get("score", 0.0)),
            reason=str(raw.get("reason", "")),
            cited=bool(raw.get("cited", False)),
        )


@dataclass(frozen=True, slots=True)
class InjectedQuote:
    """A recent message quoted to a reply (recall's recent-chat source): stored among
    the injection's items, told apart by its `message_id` key."""

    message_id: int
    score: float
    band: str = "related"

    def to_json(self) -> dict[str, Any]:
        return {"message_id": self.message_id, "score": round(self.score, 4), "band": self.band}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> InjectedQuote:
        return cls(
            message_id=int(raw["message_id"]),
            score=float(raw.get("score", 0.0)),
            band=str(raw.get("band", "related")),
        )


@dataclass(frozen=True, slots=True)
class InjectedBlock:
    """One block of a reply's prompt as it was sent: its name, tokens and text."""

    name: str
    tokens: int
    text: str


@dataclass(frozen=True, slots=True)
class Injection:
    id: int
    scope: str
    trigger_experience_id: int | None
    reply_fingerprint: str | None
    query: str
    items: tuple[InjectedItem, ...]
    created_at: datetime
    blocks: tuple[InjectedBlock, ...] = ()
    """Empty for replies recorded before the console existed."""
    quotes: tuple[InjectedQuote, ...] = ()
    """The recent messages quoted to it (their archived ids)."""


class ChatRepo(Repository):
    # --- chat_state ------------------------------------------------------------

    async def state(self, scope: str, *, conn: AsyncConnection | None = None) -> ChatState:
        async with self.reading(conn) as conn:
            row = (
                await conn.execute(select(chat_state).where(chat_state.c.scope == scope))
            ).first()
        return _state(row) if row is not None else ChatState(scope=scope)

    async def states(self, *, conn: AsyncConnection | None = None) -> list[ChatState]:
        async with self.reading(conn) as conn:
            rows = (await conn.execute(select(chat_state).order_by(chat_state.c.scope))).all()
        return [_state(row) for row in rows]

    async def set_muted(
        self,
        scope: str,
        until: datetime | None,
        now: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> None:
        await self._upsert(scope, now, conn=conn, muted_until=until)

    async def touch(
        self,
        scope: str,
        now: datetime,
        *,
        wake_at: datetime | None = None,
        reply_at: datetime | None = None,
        conn: AsyncConnection | None = None,
    ) -> None:
        values: dict[str, Any] = {}
        if wake_at is not None:
            values["last_wake_at"] = wake_at
        if reply_at is not None:
            values["last_reply_at"] = reply_at
        if values:
            await self._upsert(scope, now, conn=conn, **values)

    async def _upsert(
        self, scope: str, now: datetime, *, conn: AsyncConnection | None, **values: Any
    ) -> None:
        async with self.writing(conn) as conn:
            await conn.execute(
                upsert(conn, chat_state)
                .values(scope=scope, updated_at=now, **values)
                .on_conflict_do_update(
                    index_elements=[chat_state.c.scope], set_={"updated_at": now, **values}
                )
            )

    # --- injections --------------------------------------------------------------

    async def add_injection(
        self,
        scope: str,
        *,
        trigger_experience_id: int | None,
        reply_fingerprint: str | None,
        query: str,
        items: Sequence[InjectedItem],
        now: datetime,
        blocks: Sequence[InjectedBlock] = (),
        quotes: Sequence[InjectedQuote] = (),
        conn: AsyncConnection | None = None,
    ) -> int:
        async with self.writing(conn) as conn:
            result = await conn.execute(
                insert(injections).values(
                    scope=scope,
                    trigger_experience_id=trigger_experience_id,
                    reply_fingerprint=reply_fingerprint,
                    query=query,
                    items=[item.to_json() for item in (*items, *quotes)],
                    created_at=now,
                    blocks=[[b.name, b.tokens, b.text] for b in blocks],
                )
            )
            return _inserted_id(result.inserted_primary_key)

    async def set_reply_fingerprint(
        self, injection_id: int, reply_fingerprint: str, *, conn: AsyncConnection | None = None
    ) -> None:
        """The message id of the reply, known only once it was sent."""
        async with self.writing(conn) as conn:
            await conn.execute(
                update(injections)
                .where(injections.c.id == injection_id)
                .values(reply_fingerprint=reply_fingerprint)
            )

    async def last_injection(
        self, scope: str, *, conn: AsyncConnection | None = None
    ) -> Injection | None:
        query = (
            select(injections)
            .where(injections.c.scope == scope)
            .order_by(injections.c.id.desc())
            .limit(1)
        )
        return await self._one(query, conn=conn)

    async def injection_for_reply(
        self, scope: str, reply_fingerprint: str, *, conn: AsyncConnection | None = None
    ) -> Injection | None:
        query = (
            select(injections)
            .where(injections.c.scope == scope, injections.c.reply_fingerprint == reply_fingerprint)
            .order_by(injections.c.id.desc())
            .limit(1)
        )
        return await self._one(query, conn=conn)

    async def _one(self, query: Any, *, conn: AsyncConnection | None = None) -> Injection | None:
        async with self.reading(conn) as conn:
            row = (await conn.execute(query)).first()
        return injection_of(row) if row is not None else None


def _inserted_id(key: Any) -> int:
    return int(key[0])


def _state(row: Row[Any]) -> ChatState:
    return ChatState(
        scope=row.scope,
        muted_until=row.muted_until,
        last_wake_at=row.last_wake_at,
        last_reply_at=row.last_reply_at,
    )


def injection_of(row: Row[Any]) -> Injection:
    raw_items: list[dict[str, Any]] = row.items or []
    raw_blocks: list[list[Any]] = row.blocks or []
    return Injection(
        id=row.id,
        scope=row.scope,
        trigger_experience_id=row.trigger_experience_id,
        reply_fingerprint=row.reply_fingerprint,
        query=row.query,
        items=tuple(InjectedItem.from_json(i) for i in raw_items if "message_id" not in i),
        created_at=row.created_at,
        blocks=tuple(InjectedBlock(str(n), int(t), str(x)) for n, t, x in raw_blocks),
        quotes=tuple(InjectedQuote.from_json(i) for i in raw_items if "message_id" in i),
    )
