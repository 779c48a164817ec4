"""The nightly aggregate's SQL: diaries, cards, timeline, run checkpoints, settled states.

Cards are versioned rows: a change inserts the next version and never touches an
older one (a trigger refuses UPDATE/DELETE on `cards` and `diaries`); the version
number is taken in SQL by the insert itself (`append_card`, also used by packs and
forget requests), never read first. A step's checkpoint is begun by one upsert that
counts the attempt. The fragments
written by consolidation are read here and marked `archived` once a diary has
absorbed them. `prompt_material` also asks the `MemoryRepo` it holds when recalled
memories' evidence was said, in the same snapshot. Per-chat retry/circuit state:
`nightly_health_repo`; every read of the memory tables: `memory_repo`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Insert,
    Row,
    ScalarSelect,
    Select,
    String,
    Text,
    and_,
    func,
    insert,
    literal,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.chat.names_repo import ChatNames
from memory_core.storage.consolidation.consolidation_repo import Fragment, fragment_of
from memory_core.storage.dialect import json_with_key
from memory_core.storage.engine import Database
from memory_core.storage.memories.memory_repo import MemoryRepo
from memory_core.storage.repository import Repository, upsert
from memory_core.storage.schema import (
    cards,
    diaries,
    fragments,
    nightly_runs,
    nightly_settled,
    timeline,
)
from memory_core.storage.types import UTCDateTime


@dataclass(frozen=True, slots=True)
class Diary:
    scope: str
    day: str
    content: str
    fragment_ids: tuple[int, ...]
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Card:
    scope: str
    kind: str
    version: int
    content: str
    day: str | None
    """The night that wrote this version."""
    created_at: datetime


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    scope: str
    day: str
    content: str


@dataclass(frozen=True, slots=True)
class PromptMaterial:
    cards: dict[str, Card]
    timeline: list[TimelineEntry]
    diaries: list[Diary]
    """Oldest first."""
    evidence_at: dict[int, datetime]
    """Recalled memory id -> its earliest evidence instant (absent: no evidence here)."""


@dataclass(frozen=True, slots=True)
class StepRow:
    scope: str
    day: str
    step: str
    state: str
    attempts: int
    error: str | None
    started_at: datetime | None
    finished_at: datetime | None
    detail: dict[str, Any]


class NightlyRepo(Repository):
    def __init__(self, db: Database, memory_repo: MemoryRepo) -> None:
        super().__init__(db)
        self.memory_repo = memory_repo
        """Where `prompt_material` reads when recalled memories' evidence was said."""
        self.names = ChatNames(db)
        """What the chats are called (the diary prompt names its chat)."""

    async def chat_name(self, scope: str, *, conn: AsyncConnection | None = None) -> str:
        return (await self.names.names([scope], conn=conn)).get(scope, "")

    # --- checkpoints -------------------------------------------------------------

    async def steps(
        self, scope: str, day: str, *, conn: AsyncConnection | None = None
    ) -> dict[str, StepRow]:
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(nightly_runs).where(nightly_runs.c.scope == scope, nightly_runs.c.day == day)
            )
            return {str(r.step): _step(r) for r in rows}

    async def begin_step(
        self,
        scope: str,
        day: str,
        step: str,
        at: datetime,
        owner: str,
        *,
        conn: AsyncConnection | None = None,
    ) -> int:
        """Mark the step running for `owner` and count the attempt; returns the attempt
        number. The detail of an interrupted attempt (a stored reply) is kept.

        One statement (an upsert counting in SQL and setting `owner` inside the stored
        detail), so no writer's change to the row can fall between a read and a write."""
        n = nightly_runs.c
        async with self.writing(conn) as conn:
            result = await conn.execute(
                upsert(conn, nightly_runs)
                .values(
                    scope=scope,
                    day=day,
                    step=step,
                    state="running",
                    attempts=1,
                    started_at=at,
                    detail={"owner": owner},
                )
                .on_conflict_do_update(
                    index_elements=[n.scope, n.day, n.step],
                    set_={
                        "state": "running",
                        "attempts": n.attempts + 1,
                        "started_at": at,
                        "error": None,
                        "detail": json_with_key(conn.dialect.name, n.detail, "owner", owner),
                    },
                )
                .returning(n.attempts)
            )
            return int(result.scalar_one())

    async def save_detail(
        self,
        scope: str,
        day: str,
        step: str,
        detail: Mapping[str, Any],
        *,
        conn: AsyncConnection | None = None,
    ) -> None:
        """Progress inside a running step, so a crash resumes instead of repeating."""
        async with self.writing(conn) as conn:
            await _set_step(conn, scope, day, step, detail=dict(detail))

    async def finish_step(
        self,
        scope: str,
        day: str,
        step: str,
        at: datetime,
        detail: Mapping[str, Any],
        *,
        conn: AsyncConnection | None = None,
    ) -> None:
        async with self.writing(conn) as conn:
            await _finish(conn, scope, day, step, at, detail)

    async def fail_step(
        self,
        scope: str,
        day: str,
        step: str,
        at: datetime,
        error: str,
        *,
        conn: AsyncConnection | None = None,
    ) -> None:
        async with self.writing(conn) as conn:
            await _set_step(
                conn, scope, day, step, state="failed", error=error[:2000], finished_at=at
            )

    async def pause_step(
        self, scope: str, day: str, step: str, note: str, *, conn: AsyncConnection | None = None
    ) -> None:
        """Back to `pending` (not a failure): the step waits for something, e.g. a model."""
        async with self.writing(conn) as conn:
            await _set_step(conn, scope, day, step, state="pending", error=note[:2000])

    async def last_finished_day(
        self, scope: str, *, conn: AsyncConnection | None = None
    ) -> str | None:
        """The latest day whose last step (gc) is done."""
        async with self.reading(conn) as conn:
            value = await conn.scalar(
                select(func.max(nightly_runs.c.day)).where(
                    nightly_runs.c.scope == scope,
                    nightly_runs.c.step == "gc",
                    nightly_runs.c.state == "done",
                )
            )
        return None if value is None else str(value)

    async def latest_day_steps(
        self, scope: str, *, conn: AsyncConnection | None = None
    ) -> list[StepRow]:
        async with self.reading(conn) as conn:
            day = await conn.scalar(
                select(func.max(nightly_runs.c.day)).where(nightly_runs.c.scope == scope)
            )
            if day is None:
                return []
            rows = await conn.execute(
                select(nightly_runs)
                .where(nightly_runs.c.scope == scope, nightly_runs.c.day == day)
                .order_by(nightly_runs.c.id)
            )
            return [_step(r) for r in rows]

    async def run_scopes(self, *, conn: AsyncConnection | None = None) -> list[str]:
        async with self.reading(conn) as conn:
            rows = await conn.execute(select(nightly_runs.c.scope).distinct())
            return sorted(str(r[0]) for r in rows)

    # --- fragments -----------------------------------------------------------------

    async def fragment_scopes(self, *, conn: AsyncConnection | None = None) -> list[str]:
        async with self.reading(conn) as conn:
            rows = await conn.execute(select(fragments.c.scope).distinct())
            return sorted(str(r[0]) for r in rows)

    async def unarchived_fragments(
        self, scope: str, until: datetime, *, conn: AsyncConnection | None = None
    ) -> list[Fragment]:
        """Every fragment not yet in a diary whose last message is at or before `until`."""
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(fragments)
                .where(
                    fragments.c.scope == scope,
                    fragments.c.archived.is_(False),
                    fragments.c.last_sent_at <= until,
                )
                .order_by(fragments.c.first_sent_at, fragments.c.id)
            )
            return [fragment_of(r) for r in rows]

    async def oldest_unarchived_at(
        self, scope: str, *, conn: AsyncConnection | None = None
    ) -> datetime | None:
        async with self.reading(conn) as conn:
            return await conn.scalar(
                select(func.min(fragments.c.last_sent_at)).where(
                    fragments.c.scope == scope, fragments.c.archived.is_(False)
                )
            )

    async def fragments_by_ids(
        self, scope: str, ids: Sequence[int], *, conn: AsyncConnection | None = None
    ) -> list[Fragment]:
        if not ids:
            return []
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(fragments)
                .where(fragments.c.scope == scope, fragments.c.id.in_(sorted(set(ids))))
                .order_by(fragments.c.first_sent_at, fragments.c.id)
            )
            return [fragment_of(r) for r in rows]

    # --- diaries -------------------------------------------------------------------

    async def write_diary(
        self,
        scope: str,
        day: str,
        content: str,
        fragment_ids: Sequence[int],
        at: datetime,
        detail: Mapping[str, Any],
        *,
        conn: AsyncConnection | None = None,
    ) -> None:
        """Diary, archived fragments and the step's checkpoint in one transaction."""
        async with self.writing(conn) as conn:
            await conn.execute(
                insert(diaries).values(
                    scope=scope,
                    day=day,
                    content=content,
                    fragment_ids=list(fragment_ids),
                    created_at=at,
                )
            )
            if fragment_ids:
                await conn.execute(
                    update(fragments)
                    .where(fragments.c.scope == scope, fragments.c.id.in_(list(fragment_ids)))
                    .values(archived=True)
                )
            await _finish(conn, scope, day, "diary", at, detail)

    async def diary(
        self, scope: str, day: str, *, conn: AsyncConnection | None = None
    ) -> Diary | None:
        async with self.reading(conn) as conn:
            row = (
                await conn.execute(
                    select(diaries).where(diaries.c.scope == scope, diaries.c.day == day)
                )
            ).first()
        return None if row is None else _diary(row)

    # --- cards and timeline ----------------------------------------------------------

    async def current_cards(
        self, scope: str, *, conn: AsyncConnection | None = None
    ) -> dict[str, Card]:
        async with self.reading(conn) as conn:
            return {str(r.kind): _card(r) for r in await conn.execute(_cards_query(scope))}

    async def card_history(
        self, scope: str, kind: str, *, conn: AsyncConnection | None = None
    ) -> list[Card]:
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(cards)
                .where(cards.c.scope == scope, cards.c.kind == kind)
                .order_by(cards.c.version)
            )
            return [_card(r) for r in rows]

    async def write_cards(
        self,
        scope: str,
        day: str,
        contents: Mapping[str, str],
        timeline_entry: str | None,
        at: datetime,
        detail: Mapping[str, Any],
        *,
        conn: AsyncConnection | None = None,
    ) -> None:
        """The next version of each changed card, the timeline line and the checkpoint,
        in one transaction: a crash leaves either all of it or none."""
        async with self.writing(conn) as conn:
            for kind, content in contents.items():
                await conn.execute(append_card(scope, kind, content, day, at))
            if timeline_entry:
                t = timeline.c
                await conn.execute(
                    upsert(conn, timeline)
                    .values(scope=scope, day=day, content=timeline_entry, created_at=at)
                    .on_conflict_do_nothing(index_elements=[t.scope, t.day, t.content])
                )
            await _finish(conn, scope, day, "cards", at, detail)

    async def prompt_material(
        self,
        scope: str,
        *,
        diaries: int,
        timeline: int,
        memory_ids: Sequence[int],
        conn: AsyncConnection | None = None,
    ) -> PromptMaterial:
        """Everything the chat prompt's nightly blocks read, in one read transaction
        (this runs on every reply): current cards, the latest timeline entries and
        diaries, and the earliest evidence instant of each recalled memory."""
        async with self.reading(conn) as conn:
            current = {str(r.kind): _card(r) for r in await conn.execute(_cards_query(scope))}
            rows = await conn.execute(_timeline_query(scope, timeline))
            entries = [
                TimelineEntry(str(r.scope), str(r.day), str(r.content))
                for r in reversed(rows.all())
            ]
            recent: list[Diary] = []
            if diaries > 0:
                rows = await conn.execute(_diaries_query(scope, diaries))
                recent = [_diary(r) for r in reversed(rows.all())]
            instants = (
                await self.memory_repo.evidence_instants(scope, memory_ids, conn=conn)
                if memory_ids
                else {}
            )
        return PromptMaterial(current, entries, recent, instants)

    # --- settled states ----------------------------------------------------------------

    async def settled_ids(self, scope: str, *, conn: AsyncConnection | None = None) -> set[int]:
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(nightly_settled.c.memory_id).where(nightly_settled.c.scope == scope)
            )
            return {int(r[0]) for r in rows}

    async def mark_settled(
        self,
        scope: str,
        memory_id: int,
        day: str,
        at: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> None:
        n = nightly_settled.c
        async with self.writing(conn) as conn:
            await conn.execute(
                upsert(conn, nightly_settled)
                .values(memory_id=memory_id, scope=scope, day=day, settled_at=at)
                .on_conflict_do_nothing(index_elements=[n.memory_id])
            )


def newest_version(scope: str, kind: str) -> ScalarSelect[int]:
    """The number of a card's newest version (0: no card yet), as a subquery."""
    c = cards.c
    return (
        select(func.coalesce(func.max(c.version), 0))
        .where(c.scope == scope, c.kind == kind)
        .scalar_subquery()
    )


def append_card(
    scope: str,
    kind: str,
    content: str,
    day: str | None,
    at: datetime,
    *,
    only_if: ColumnElement[bool] | None = None,
) -> Insert:
    """INSERT of a card's next version, numbered in SQL (the newest version + 1), so
    two writers cannot both take one number; with `only_if`, only when that holds at
    the moment of the insert (rowcount 0 otherwise)."""
    row = select(
        literal(scope, String),
        literal(kind, String),
        newest_version(scope, kind) + 1,
        literal(content, Text),
        literal(day, String),
        literal(at, UTCDateTime),
    )
    if only_if is not None:
        row = row.where(only_if)
    return insert(cards).from_select(list(CARD_COLUMNS), row)


CARD_COLUMNS = ("scope", "kind", "version", "content", "day", "created_at")


def _cards_query(scope: str) -> Select[Any]:
    latest = (
        select(cards.c.kind, func.max(cards.c.version).label("version"))
        .where(cards.c.scope == scope)
        .group_by(cards.c.kind)
        .subquery()
    )
    return select(cards).join(
        latest,
        and_(
            cards.c.kind == latest.c.kind,
            cards.c.version == latest.c.version,
            cards.c.scope == scope,
        ),
    )


def _timeline_query(scope: str, limit: int) -> Select[Any]:
    return (
        select(timeline)
        .where(timeline.c.scope == scope)
        .order_by(timeline.c.day.desc(), timeline.c.id.desc())
        .limit(limit)
    )


def _diaries_query(scope: str, limit: int) -> Select[Any]:
    """The latest `limit` diaries, newest first (a helper: `prompt_material`'s
    arguments shadow the table names)."""
    return (
        select(diaries).where(diaries.c.scope == scope).order_by(diaries.c.day.desc()).limit(limit)
    )


async def _set_step(conn: AsyncConnection, scope: str, day: str, step: str, **values: Any) -> None:
    await conn.execute(
        update(nightly_runs)
        .where(
            nightly_runs.c.scope == scope, nightly_runs.c.day == day, nightly_runs.c.step == step
        )
        .values(**values)
    )


async def _finish(
    conn: AsyncConnection,
    scope: str,
    day: str,
    step: str,
    at: datetime,
    detail: Mapping[str, Any],
) -> None:
    await _set_step(
        conn, scope, day, step, state="done", finished_at=at, error=None, detail=dict(detail)
    )


def _step(row: Row[Any]) -> StepRow:
    return StepRow(
        scope=str(row.scope),
        day=str(row.day),
        step=str(row.step),
        state=str(row.state),
        attempts=int(row.attempts),
        error=row.error,
        started_at=row.started_at,
        finished_at=row.finished_at,
        detail=dict(row.detail or {}),
    )


def _diary(row: Row[Any]) -> Diary:
    return Diary(
        scope=str(row.scope),
        day=str(row.day),
        content=str(row.content),
        fragment_ids=tuple(int(i) for i in row.fragment_ids),
        created_at=row.created_at,
    )


def _card(row: Row[Any]) -> Card:
    return Card(
        scope=str(row.scope),
        kind=str(row.kind),
        version=int(row.version),
        content=str(row.content),
        day=row.day,
        created_at=row.created_at,
    )


step_of = _step
"""A row of `nightly_runs` as a StepRow (for the console's days x steps grid)."""
