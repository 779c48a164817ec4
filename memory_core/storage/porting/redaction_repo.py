"""The one audited exception to the append-only archive: forgetting a person.

This repository is the only code that changes archived message content. For each
message of the person it first records a `redactions` row (the audit, itself
append-only), then writes the tombstone; the experiences trigger allows exactly that
write for exactly the messages listed in `redactions`, and refuses every other update;
the same transaction drops the names they went by in that chat from the person index
and their person card there. It also reads what a forget request needs, keeps the request's own row (one running
request per person and chat, opened by one upsert), and rewrites the summaries and
cards naming the person, each write guarded by the text it replaces so a run never
writes back what another changed meanwhile.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import String, and_, bindparam, func, insert, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.archive import message_index
from memory_core.storage.failures import translating
from memory_core.storage.followups.followups_repo import FollowupsRepo
from memory_core.storage.nightly.nightly_repo import append_card, newest_version
from memory_core.storage.people.people_repo import PeopleRepo
from memory_core.storage.people.person_cards_repo import PersonCardsRepo
from memory_core.storage.repository import Repository
from memory_core.storage.schema import (
    attachments,
    cards,
    experience_attachments,
    experiences,
    forget_requests,
    fragments,
    injections,
    redactions,
)
from memory_core.storage.types import JSONText, UTCDateTime
from memory_core.types import scope_platform

TOMBSTONE = "[此消息已应本人要求删除]"
"""What a forgotten person's archived message says afterwards (migration 0005's trigger
allows exactly this text)."""
CHUNK = 500


@dataclass(frozen=True, slots=True)
class ForgetRequest:
    id: int
    scope: str
    user_id: str
    names: tuple[str, ...]
    state: str
    report: dict[str, Any] | None
    created_at: datetime
    finished_at: datetime | None


class RedactionRepo(Repository):
    # --- the request ------------------------------------------------------------------

    async def open_request(
        self,
        scope: str,
        user_id: str,
        requested_by: str,
        names: Sequence[str],
        at: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> ForgetRequest:
        """The unfinished request for this person here (an interrupted run), its names
        widened by `names` and by every earlier request's; else a new one.

        One statement: an upsert against the UNIQUE index of running requests (one per
        person and chat, migration 0012) that merges the names in SQL, so two requests
        at once share one row and neither's names are lost."""
        async with self.writing(conn) as conn:
            found = (
                await conn.execute(
                    _OPEN_REQUEST[conn.dialect.name],
                    {
                        "scope": scope,
                        "user_id": user_id,
                        "requested_by": requested_by,
                        "names": sorted(set(names)),
                        "at": at,
                    },
                )
            ).one()
        return _request(found)

    async def finish_request(
        self,
        request_id: int,
        report: dict[str, Any],
        at: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> None:
        async with self.writing(conn) as conn:
            await conn.execute(
                update(forget_requests)
                .where(forget_requests.c.id == request_id)
                .values(state="done", report=report, finished_at=at, cards_done_at=at)
            )

    async def requests(
        self, scope: str | None = None, *, conn: AsyncConnection | None = None
    ) -> list[ForgetRequest]:
        q = forget_requests.c
        query = select(forget_requests).order_by(q.id)
        if scope is not None:
            query = query.where(q.scope == scope)
        async with self.reading(conn) as conn:
            return [_request(r) for r in await conn.execute(query)]

    # --- who they are -----------------------------------------------------------------

    async def names_of(
        self,
        scope: str,
        user_id: str,
        aliases: Mapping[str, str],
        *,
        conn: AsyncConnection | None = None,
    ) -> set[str]:
        """The person's QQ number, every display name they had here, and every alias
        (of the chat's `aliases`, alias -> canonical) that leads to or from one of those."""
        e = experiences.c
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(e.sender_name)
                .where(e.scope == scope, e.sender_id == user_id, e.sender_name != "")
                .distinct()
            )
            names = {user_id, *(str(r[0]) for r in rows)}
        pairs = list(aliases.items())
        for _ in range(4):  # alias chains are short (canonical_subject follows four links)
            grown = (
                names | {x for x, y in pairs if y in names} | {y for x, y in pairs if x in names}
            )
            if grown == names:
                break
            names = grown
        return {n.strip() for n in names if n.strip()}

    async def messages_of(
        self, scope: str, user_id: str, *, conn: AsyncConnection | None = None
    ) -> tuple[int, int]:
        """(their messages, of which already tombstoned)."""
        x = experiences.c
        async with self.reading(conn) as conn:
            total = await conn.scalar(
                select(func.count()).where(x.scope == scope, x.sender_id == user_id)
            )
            done = await conn.scalar(
                select(func.count())
                .select_from(redactions)
                .join(experiences, x.id == redactions.c.experience_id)
                .where(x.scope == scope, x.sender_id == user_id)
            )
        return int(total or 0), int(done or 0)

    # --- the redaction ----------------------------------------------------------------

    async def redact_next(
        self,
        request_id: int,
        scope: str,
        user_id: str,
        at: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> int:
        """Tombstone up to CHUNK of the person's messages not yet redacted, each with its
        audit row, in one transaction; returns how many (0: all done)."""
        x, r = experiences.c, redactions.c
        async with self.writing(conn) as conn:
            # The names they went by here (others' @ of them stay, as those messages do)
            # and their card in this chat (made of what was said about them), and the words
            # the persona sent them about their plans, go with the
            # first chunk, and again with the last call, which finds no message left: so
            # they go too for someone who never spoke here, only others talked about.
            await PeopleRepo(self.db).forget_names(scope, scope_platform(scope), user_id, conn=conn)
            await PersonCardsRepo(self.db).forget(scope, user_id, conn=conn)
            await FollowupsRepo(self.db).forget(scope, user_id, conn=conn)
            ids = [
                int(row[0])
                for row in await conn.execute(
                    select(x.id)
                    .outerjoin(redactions, r.experience_id == x.id)
                    .where(x.scope == scope, x.sender_id == user_id, r.id.is_(None))
                    .order_by(x.id)
                    .limit(CHUNK)
                )
            ]
            if not ids:
                return 0
            await conn.execute(
                insert(redactions),
                [
                    {
                        "request_id": request_id,
                        "scope": scope,
                        "experience_id": i,
                        "redacted_at": at,
                    }
                    for i in ids
                ],
            )
            sqlite = conn.dialect.name == "sqlite"
            if sqlite:  # freed space is zeroed, so the old text does not linger in the file
                await conn.exec_driver_sql("PRAGMA secure_delete = ON")
            await conn.execute(
                update(experiences)
                .where(x.id.in_(ids))
                .values(text=TOMBSTONE, segments=[], sender_name="")
            )
            # Their messages are no recall source any more (message_search.py).
            await message_index.drop_messages(conn, ids)
            # What the bot was asked by them is their text too.
            await conn.execute(
                update(injections)
                .where(injections.c.trigger_experience_id.in_(ids))
                .values(query=TOMBSTONE)
            )
            if sqlite:
                await conn.exec_driver_sql("PRAGMA secure_delete = OFF")
        return len(ids)

    # Whole-file work: neither runs inside a transaction, so neither takes `conn`.

    async def purge_log(self) -> None:
        """Fold the write-ahead log into the file and truncate it (it held the old pages).

        PostgreSQL keeps an updated row's old version until VACUUM removes it: the
        tables a redaction rewrites are vacuumed (their space is then free for reuse,
        not zeroed; the server's WAL ages out on its own schedule)."""
        with translating():
            async with self.db.engine.connect() as conn:
                if self.db.is_sqlite:
                    await conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
                elif self.db.is_postgres:
                    auto = await conn.execution_options(isolation_level="AUTOCOMMIT")
                    await auto.exec_driver_sql(f"VACUUM {', '.join(REWRITTEN)}")

    async def vacuum(self) -> None:
        """Rewrite the whole file (a backup copy): no free page keeps old text. Another
        writer holding the file past the busy timeout is `StorageBusy`."""
        with translating():
            async with self.db.engine.connect() as conn:
                await conn.exec_driver_sql("VACUUM")

    async def attachments_only_theirs(
        self, scope: str, user_id: str, *, conn: AsyncConnection | None = None
    ) -> list[tuple[int, str]]:
        """(id, sha256) of stored files no message of anyone else links to."""
        x, ea, a = experiences.c, experience_attachments.c, attachments.c
        others = (
            select(ea.attachment_id)
            .join(experiences, x.id == ea.experience_id)
            .where(~and_(x.scope == scope, x.sender_id == user_id))
        )
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(a.id, a.sha256)
                .join(experience_attachments, ea.attachment_id == a.id)
                .join(experiences, x.id == ea.experience_id)
                .where(
                    x.scope == scope,
                    x.sender_id == user_id,
                    a.sha256.is_not(None),
                    a.status == "stored",
                    a.id.not_in(others),
                )
                .distinct()
            )
            return [(int(i), str(s)) for i, s in rows]

    async def mark_cleaned(
        self, ids: Sequence[int], at: datetime, *, conn: AsyncConnection | None = None
    ) -> None:
        if ids:
            async with self.writing(conn) as conn:
                await conn.execute(
                    update(attachments)
                    .where(attachments.c.id.in_(list(ids)))
                    .values(status="cleaned", cleaned_at=at)
                )

    # --- derived text naming them ------------------------------------------------------

    async def fragments_naming(
        self, scope: str, names: Sequence[str], *, conn: AsyncConnection | None = None
    ) -> list[tuple[int, str]]:
        f = fragments.c
        async with self.reading(conn) as conn:
            rows = await conn.execute(select(f.id, f.summary).where(f.scope == scope))
            return [(int(i), str(s)) for i, s in rows if any(n in str(s) for n in names)]

    async def rewrite_fragment(
        self, fragment_id: int, old: str, new: str, *, conn: AsyncConnection | None = None
    ) -> bool:
        """The fragment's summary `new`, only while it is still `old` (False: another
        writer changed it since it was read; read it again)."""
        f = fragments.c
        async with self.writing(conn) as conn:
            result = await conn.execute(
                update(fragments).where(f.id == fragment_id, f.summary == old).values(summary=new)
            )
        return result.rowcount == 1

    async def latest_cards(
        self, scope: str, *, conn: AsyncConnection | None = None
    ) -> list[tuple[str, int, str]]:
        """(kind, version, content) of each card's current version."""
        c = cards.c
        newest = (
            select(c.kind, func.max(c.version).label("version"))
            .where(c.scope == scope)
            .group_by(c.kind)
            .subquery()
        )
        async with self.reading(conn) as conn:
            rows = await conn.execute(
                select(c.kind, c.version, c.content).join(
                    newest,
                    and_(c.scope == scope, c.kind == newest.c.kind, c.version == newest.c.version),
                )
            )
            return [(str(k), int(v), str(t)) for k, v, t in rows]

    async def add_card_version(
        self,
        scope: str,
        kind: str,
        after: int,
        content: str,
        at: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> bool:
        """Version `after` + 1 of the card, only while `after` is still its newest
        (False: another writer added a version since it was read; read it again)."""
        async with self.writing(conn) as conn:
            result = await conn.execute(
                append_card(
                    scope, kind, content, None, at, only_if=newest_version(scope, kind) == after
                )
            )
        return result.rowcount == 1


REWRITTEN = ("experiences", "injections", "fragments", "cards", "message_fts", "memory_fts")
"""The tables whose rows a forget request rewrites or removes."""

_NAMES = {
    "sqlite": """(SELECT json_group_array(value) FROM (
            SELECT value FROM json_each(:names)
            UNION
            SELECT n.value FROM forget_requests AS f, json_each(f.names) AS n
             WHERE f.scope = :scope AND f.user_id = :user_id
            ORDER BY 1))""",
    "postgresql": """(SELECT CAST(coalesce(json_agg(u.value ORDER BY u.value), '[]') AS text) FROM (
            SELECT a.value FROM json_array_elements_text(CAST(:names AS json)) AS a(value)
            UNION
            SELECT n.value FROM forget_requests AS f,
                   json_array_elements_text(CAST(f.names AS json)) AS n(value)
             WHERE f.scope = :scope AND f.user_id = :user_id) AS u)""",
}
_OPEN_REQUEST = {
    dialect: text(
        f"""
INSERT INTO forget_requests (scope, user_id, requested_by, names, state, created_at)
SELECT :scope, :user_id, :requested_by,
       {names},
       'running', :at
WHERE true
ON CONFLICT (scope, user_id) WHERE state = 'running' DO UPDATE SET names = excluded.names
RETURNING id, scope, user_id, names, state, report, created_at, finished_at
"""
    )
    .bindparams(
        bindparam("names", type_=JSONText),
        bindparam("at", type_=UTCDateTime),
        bindparam("scope", type_=String),
        bindparam("user_id", type_=String),
        bindparam("requested_by", type_=String),
    )
    .columns(names=JSONText, report=JSONText, created_at=UTCDateTime, finished_at=UTCDateTime)
    for dialect, names in _NAMES.items()
}
"""A person's running request, created or widened: its names are the union of `names`
and every earlier request's of the person (the running one's among them)."""


def _request(row: Any) -> ForgetRequest:
    return ForgetRequest(
        id=int(row.id),
        scope=str(row.scope),
        user_id=str(row.user_id),
        names=tuple(sorted(str(n) for n in row.names)),
        state=str(row.state),
        report=row.report,
        created_at=row.created_at,
        finished_at=row.finished_at,
    )
