"""The archive aggregate's SQL: experiences, attachments and their links.

Append-only by construction: this repository inserts and reads experiences and
links, and never updates or deletes them (SQLite triggers refuse it as well). The
only mutable row here is an attachment's file status (`stored` -> `cleaned`), which
is bookkeeping about a file on disk, not message content.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar, cast

from sqlalchemy import Insert, Row, bindparam, func, insert, select, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.repository import Repository, upsert
from memory_core.storage.schema import attachments, experience_attachments, experiences
from memory_core.types import Experience, NewExperience, Source

from . import message_index
from .archive_dedup import collided, heard_once, held_by
from .heard import Heard, heard_of

_T = TypeVar("_T")

ID_CHUNK = 900
"""Bound parameters per IN list, far under SQLite's limit."""


@dataclass(frozen=True, slots=True)
class Appended:
    id: int
    created: bool
    """False when (scope, fingerprint) was already archived: `id` is the existing row."""


@dataclass(frozen=True, slots=True)
class AttachmentRow:
    id: int
    sha256: str | None
    mime: str | None
    size: int | None
    status: str
    url: str | None
    error: str | None
    first_seen: datetime
    cleaned_at: datetime | None


@dataclass(frozen=True, slots=True)
class LinkedAttachment:
    experience_id: int
    segment_index: int
    attachment: AttachmentRow


@dataclass(frozen=True, slots=True)
class ArchiveCounts:
    experiences: dict[str, dict[str, int]]
    """scope -> source -> count."""
    attachments: dict[str, int]
    """status -> count."""
    attachment_bytes_stored: int


class ArchiveRepo(Repository):
    # --- writes ----------------------------------------------------------------

    async def insert_many(
        self,
        exps: Sequence[NewExperience],
        received_at: Sequence[datetime],
        *,
        conn: AsyncConnection | None = None,
    ) -> list[Appended]:
        """Insert in one transaction; duplicates (in the database or in `exps`) keep
        the first row and report its id with `created=False`. The transaction writes
        these chats' rows only, so inserts of other chats run beside it (`Database.write`)."""
        async with self.writing(conn, chats={e.scope for e in exps}) as conn:
            return (await _insert_many(conn, exps, received_at))[0]

    async def insert_heard(
        self,
        exps: Sequence[NewExperience],
        received_at: Sequence[datetime],
        *,
        conn: AsyncConnection | None = None,
    ) -> tuple[list[Appended], list[Heard]]:
        """`insert_many`, and the rows it inserted as the person index reads them
        (heard.py), for the caller to index in the same transaction."""
        async with self.writing(conn, chats={e.scope for e in exps}) as conn:
            return await _insert_many(conn, exps, received_at)

    async def record_attachment(
        self,
        *,
        sha256: str,
        mime: str,
        size: int,
        url: str,
        at: datetime,
        conn: AsyncConnection | None = None,
    ) -> int:
        """The row of a stored file, created once per content hash."""
        async with self.writing(conn) as conn:
            # A known hash whose file retention had removed: the fetch just wrote it again.
            result = await conn.execute(
                upsert(conn, attachments)
                .values(
                    sha256=sha256, mime=mime, size=size, status="stored", url=url, first_seen=at
                )
                .on_conflict_do_update(
                    index_elements=[attachments.c.sha256],
                    set_={"status": "stored", "cleaned_at": None},
                )
                .returning(attachments.c.id)
            )
            return int(result.scalar_one())

    async def record_failed_attachment(
        self, *, url: str, error: str, at: datetime, conn: AsyncConnection | None = None
    ) -> int:
        async with self.writing(conn) as conn:
            result = await conn.execute(
                insert(attachments).values(
                    status="failed", url=url, error=error[:500], first_seen=at
                )
            )
            return int(cast(Any, result.inserted_primary_key)[0])

    async def link(
        self,
        experience_id: int,
        attachment_id: int,
        segment_index: int,
        *,
        conn: AsyncConnection | None = None,
    ) -> None:
        ea = experience_attachments.c
        async with self.writing(conn) as conn:
            # Idempotent: the same link again is a no-op (its primary key).
            await conn.execute(
                upsert(conn, experience_attachments)
                .values(
                    experience_id=experience_id,
                    attachment_id=attachment_id,
                    segment_index=segment_index,
                )
                .on_conflict_do_nothing(
                    index_elements=[ea.experience_id, ea.attachment_id, ea.segment_index]
                )
            )

    # --- reads -----------------------------------------------------------------

    async def get(
        self, scope: str, experience_id: int, *, conn: AsyncConnection | None = None
    ) -> Experience | None:
        async with self.reading(conn) as conn:
            row = (
                await conn.execute(
                    select(experiences).where(
                        experiences.c.id == experience_id, experiences.c.scope == scope
                    )
                )
            ).first()
        return None if row is None else _experience(row)

    async def get_many(
        self, scope: str, ids: Sequence[int], *, conn: AsyncConnection | None = None
    ) -> list[Experience]:
        if not ids:
            return []
        found: list[Experience] = []
        async with self.reading(conn) as conn:
            for chunk in _chunks(sorted(set(ids)), ID_CHUNK):
                rows = await conn.execute(
                    select(experiences)
                    .where(experiences.c.scope == scope, experiences.c.id.in_(chunk))
                    .order_by(experiences.c.id)
                )
                found += [_experience(r) for r in rows]
        return found

    async def after(
        self, scope: str, after_id: int, limit: int, *, conn: AsyncConnection | None = None
    ) -> list[Experience]:
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(experiences)
                .where(experiences.c.scope == scope, experiences.c.id > after_id)
                .order_by(experiences.c.id)
                .limit(limit)
            )
            return [_experience(r) for r in rows]

    async def recent(
        self, scope: str, limit: int, before_id: int | None, *, conn: AsyncConnection | None = None
    ) -> list[Experience]:
        query = select(experiences).where(experiences.c.scope == scope)
        if before_id is not None:
            query = query.where(experiences.c.id < before_id)
        async with self.reading(conn) as conn:
            rows = await conn.execute(query.order_by(experiences.c.id.desc()).limit(limit))
            return [_experience(r) for r in reversed(rows.all())]

    async def newest_received_before(
        self, scope: str, before: datetime, *, conn: AsyncConnection | None = None
    ) -> Experience | None:
        """The last message of `scope` the archive had at `before` (by arrival)."""
        query = (
            select(experiences)
            .where(experiences.c.scope == scope, experiences.c.received_at < before)
            .order_by(experiences.c.id.desc())
            .limit(1)
        )
        async with self.reading(conn) as conn:
            row = (await conn.execute(query)).first()
            return None if row is None else _experience(row)

    async def by_fingerprint(
        self, scope: str, fingerprint: str, *, conn: AsyncConnection | None = None
    ) -> Experience | None:
        async with self.reading(conn) as conn:
            row = (
                await conn.execute(
                    select(experiences).where(
                        experiences.c.scope == scope, experiences.c.fingerprint == fingerprint
                    )
                )
            ).first()
        return None if row is None else _experience(row)

    async def scopes(self, *, conn: AsyncConnection | None = None) -> list[str]:
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(experiences.c.scope).distinct().order_by(experiences.c.scope)
            )
            return [str(r[0]) for r in rows]

    async def max_id(self, scope: str, *, conn: AsyncConnection | None = None) -> int:
        async with self.reading(conn) as conn:
            value = await conn.scalar(
                select(func.max(experiences.c.id)).where(experiences.c.scope == scope)
            )
        return int(value or 0)

    async def attachments_of(
        self, experience_id: int, *, conn: AsyncConnection | None = None
    ) -> list[LinkedAttachment]:
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(
                    experience_attachments.c.experience_id,
                    experience_attachments.c.segment_index,
                    attachments,
                )
                .join(attachments, attachments.c.id == experience_attachments.c.attachment_id)
                .where(experience_attachments.c.experience_id == experience_id)
                .order_by(experience_attachments.c.segment_index)
            )
            return [
                LinkedAttachment(
                    experience_id=int(r.experience_id),
                    segment_index=int(r.segment_index),
                    attachment=_attachment(r),
                )
                for r in rows
            ]

    async def attachment_by_sha(
        self, sha256: str, *, conn: AsyncConnection | None = None
    ) -> AttachmentRow | None:
        async with self.reading(conn) as conn:
            row = (
                await conn.execute(select(attachments).where(attachments.c.sha256 == sha256))
            ).first()
        return None if row is None else _attachment(row)

    async def counts(self, *, conn: AsyncConnection | None = None) -> ArchiveCounts:
        async with self.reading(conn) as conn:
            per_scope: dict[str, dict[str, int]] = {}
            rows = await conn.execute(
                select(experiences.c.scope, experiences.c.source, func.count())
                .group_by(experiences.c.scope, experiences.c.source)
                .order_by(experiences.c.scope, experiences.c.source)
            )
            for scope, source, count in rows:
                per_scope.setdefault(str(scope), {})[str(source)] = int(count)
            statuses = {
                str(status): int(count)
                for status, count in await conn.execute(
                    select(attachments.c.status, func.count()).group_by(attachments.c.status)
                )
            }
            stored_bytes = await conn.scalar(
                select(func.coalesce(func.sum(attachments.c.size), 0)).where(
                    attachments.c.status == "stored"
                )
            )
        return ArchiveCounts(per_scope, statuses, int(stored_bytes or 0))


async def _insert_many(
    conn: AsyncConnection, exps: Sequence[NewExperience], received_at: Sequence[datetime]
) -> tuple[list[Appended], list[Heard]]:
    keys = [(e.scope, e.fingerprint) for e in exps]
    rows: list[dict[str, Any]] = []
    unique: set[tuple[str, str]] = set()
    for exp, at in zip(exps, received_at, strict=True):
        key = (exp.scope, exp.fingerprint)
        if key not in unique:
            unique.add(key)
            rows.append(_row(exp, at))
    # A message two of the deployment's accounts heard is one row (archive_dedup.py).
    rows, known, alias = await heard_once(conn, rows)
    inserted = list(await _insert(conn, rows))
    ids = {(str(r.scope), str(r.fingerprint)): int(r.id) for r in inserted}
    refused = [r for r in rows if (r["scope"], r["fingerprint"]) not in ids]
    same: dict[tuple[str, str], int] = {}
    renamed: list[dict[str, Any]] = []
    if refused:  # their keys are taken: a replay, a backfill, or another account's id
        same, renamed, renames = await collided(conn, refused)
        alias.update(renames)
        if renamed:
            again = list(await _insert(conn, renamed))
            inserted += again
            ids.update({(str(r.scope), str(r.fingerprint)): int(r.id) for r in again})
            replayed = [k for k in renames.values() if k not in ids]  # stored so before
            same.update({k: id_ for k, (id_, _) in (await held_by(conn, replayed)).items()})
    created = set(ids)
    values = {(r["scope"], r["fingerprint"]): r for r in (*rows, *renamed)}
    heard = heard_of((int(r.id), values[(str(r.scope), str(r.fingerprint))]) for r in inserted)
    # Recent chat is searchable at once (message_search.py), in the same transaction.
    await message_index.index_messages(
        conn,
        message_index.index_params(
            (int(r.id), str(r.scope), str(r.sender_name), str(r.text), bool(r.is_bot))
            for r in inserted
        ),
    )
    ids.update(same)
    results: list[Appended] = []
    for key in keys:
        if key in known:
            results.append(Appended(known[key], False))
            continue
        stored = key
        while stored in alias:  # a copy in this batch of a row that was then renamed
            stored = alias[stored]
        results.append(Appended(ids[stored], stored in created))
        created.discard(stored)  # a repeat inside the batch is not "created" again
    return results, heard


async def _insert(
    conn: AsyncConnection, rows: list[dict[str, Any]]
) -> Sequence[Row[*tuple[Any, ...]]]:
    """Insert `rows` (duplicates of archived ones are left out) and return the rows
    inserted: (scope, fingerprint, id, sender_name, text, is_bot)."""
    e = experiences.c
    inserted = (e.scope, e.fingerprint, e.id, e.sender_name, e.text, e.is_bot)
    if conn.dialect.name == "postgresql":
        # Inserts of other chats commit beside this one, so ids above ours may be
        # theirs: the statement says which rows it inserted.
        if not rows:
            return []
        columns = {c: [r[c] for r in rows] for c in _PG_COLUMNS}
        return (await conn.execute(_PG_INSERT, columns)).all()
    # SQLite's one writer holds the whole file (BEGIN IMMEDIATE), so every row above
    # `before` is one this statement inserted: a range scan, not an IN list.
    before = int(await conn.scalar(select(func.max(e.id))) or 0)
    if rows:
        await conn.execute(_insert_ignoring_duplicates(conn.dialect.name), rows)
    return (await conn.execute(select(*inserted).where(e.id > before))).all()


_PG_COLUMNS = (
    "scope",
    "fingerprint",
    "sender_id",
    "sender_name",
    "is_bot",
    "text",
    "segments",
    "reply_to",
    "sent_at",
    "received_at",
    "source",
    "account",
)
_PG_INSERT = (
    # One array a column: one statement text whatever the batch's size, so the server
    # parses and plans it once per connection (a VALUES list of each size was prepared
    # anew, thousands of parameters at a time).
    text(
        f"INSERT INTO experiences ({', '.join(_PG_COLUMNS)}) SELECT * FROM unnest("
        + ", ".join(
            f"CAST(:{c} AS {experiences.c[c].type.compile(dialect=postgresql.dialect())}[])"
            for c in _PG_COLUMNS
        )
        + ") ON CONFLICT (scope, fingerprint) DO NOTHING "
        "RETURNING scope, fingerprint, id, sender_name, text, is_bot"
    ).bindparams(
        *(
            bindparam(c, type_=postgresql.ARRAY(experiences.c[c].type, dimensions=1))
            for c in _PG_COLUMNS
        )
    )
)


def _insert_ignoring_duplicates(dialect: str) -> Insert:
    """INSERT ... ON CONFLICT (scope, fingerprint) DO NOTHING: only the dedup key is
    ignored; every other constraint still fails loudly."""
    module = postgresql if dialect == "postgresql" else sqlite
    return module.insert(experiences).on_conflict_do_nothing(
        index_elements=[experiences.c.scope, experiences.c.fingerprint]
    )


def _row(exp: NewExperience, received_at: datetime) -> dict[str, Any]:
    return {
        "scope": exp.scope,
        "fingerprint": exp.fingerprint,
        "sender_id": exp.sender_id,
        "sender_name": exp.sender_name,
        "is_bot": exp.is_bot,
        "text": exp.text,
        "segments": exp.segments,
        "reply_to": exp.reply_to,
        "sent_at": exp.sent_at,
        "received_at": received_at,
        "source": exp.source,
        "account": exp.account,
    }


def _experience(row: Row[Any]) -> Experience:
    return Experience(
        id=int(row.id),
        scope=str(row.scope),
        fingerprint=str(row.fingerprint),
        sender_id=str(row.sender_id),
        sender_name=str(row.sender_name),
        is_bot=bool(row.is_bot),
        text=str(row.text),
        segments=list(row.segments),
        reply_to=None if row.reply_to is None else str(row.reply_to),
        sent_at=row.sent_at,
        received_at=row.received_at,
        source=cast(Source, row.source),
    )


def _attachment(row: Row[Any]) -> AttachmentRow:
    return AttachmentRow(
        id=int(row.id),
        sha256=row.sha256,
        mime=row.mime,
        size=row.size,
        status=str(row.status),
        url=row.url,
        error=row.error,
        first_seen=row.first_seen,
        cleaned_at=row.cleaned_at,
    )


def _chunks(items: Sequence[_T], size: int) -> Iterable[Sequence[_T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


experience_of = _experience
"""A row of `experiences` as an Experience (for the other repositories that read it)."""
