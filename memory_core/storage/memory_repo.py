"""The memory aggregate's one repository: memories, versions, evidence, relations,
aliases and the derived full-text index, with the reads other aggregates make of
them (the nightly gc and prompts, the vector index builder, forget requests, fact
imports, memory packs): no other repository names a memory table.

Every method takes an optional open connection (`conn=`, see repository.py) so the
memory service composes several of them in one transaction. Every lookup by id
also filters on scope: an id of another chat reads as missing. Longer statements
(visibility, the full-text candidates) are built in memory_sql.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Select,
    case,
    delete,
    exists,
    func,
    insert,
    literal_column,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.types import EvidenceRef, Memory, MemoryType, MemoryVersion, RelationKind

from . import fts
from . import memory_sql as sql
from .engine import Database
from .memory_sql import m, to_memory
from .repository import Repository, upsert
from .schema import (
    aliases,
    experiences,
    fragments,
    memories,
    memory_evidence,
    memory_relations,
    redactions,
)
from .schema import memory_versions as versions

_CHUNK = 500
_INDEX_ROW = text("INSERT INTO memory_fts(rowid, bi, uni) VALUES (:id, :bi, :uni)")


@dataclass(frozen=True, slots=True)
class GcCandidate:
    """What the nightly cold rule reads of one memory."""

    id: int
    type: str
    importance: float
    created_at: datetime
    last_accessed_at: datetime | None
    hit_count: int
    pinned: bool
    starred: bool
    in_chain: bool


@dataclass(frozen=True, slots=True)
class MemoryRows:
    """One chat's memory rows as a memory pack carries them (pack_repo.PackRows)."""

    memories: list[dict[str, Any]]
    versions: list[dict[str, Any]]
    evidence: list[dict[str, Any]]
    """memory_id, role, and the quoted message, fragment or memory it rests on."""
    relations: list[dict[str, Any]]
    aliases: list[dict[str, Any]]


@dataclass(frozen=True, slots=True)
class MemoryText:
    """What the vector index embeds of one memory."""

    id: int
    version: int
    scope: str
    subject: str
    content: str
    status: str


class MemoryRepo(Repository):
    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self._word_statements: dict[tuple[bool, int], Select[Any]] = {}
        """Recall's words statement by (with_past, limit): built once, reused."""

    # --- memories -------------------------------------------------------------------

    async def insert_memories(
        self, rows: Sequence[dict[str, Any]], *, conn: AsyncConnection | None = None
    ) -> list[int]:
        """Insert many rows; ids come back in the order of `rows`."""
        if not rows:
            return []
        async with self.writing(conn) as c:
            result = await c.execute(
                insert(memories).returning(m.id, sort_by_parameter_order=True), list(rows)
            )
            return [int(i) for i in result.scalars()]

    async def update_memory(
        self, memory_id: int, values: dict[str, Any], *, conn: AsyncConnection | None = None
    ) -> None:
        async with self.writing(conn) as c:
            await c.execute(update(memories).where(m.id == memory_id).values(**values))

    async def get(
        self, scope: str, memory_id: int, *, conn: AsyncConnection | None = None
    ) -> Memory | None:
        async with self.reading(conn) as c:
            query = select(memories).where(m.id == memory_id, m.scope == scope)
            row = (await c.execute(query)).first()
        return None if row is None else to_memory(row)

    async def get_many(
        self, scope: str, ids: Iterable[int], *, conn: AsyncConnection | None = None
    ) -> list[Memory]:
        """This chat's memories among `ids`, by id."""
        wanted = sorted(set(ids))
        if not wanted:
            return []
        async with self.reading(conn) as c:
            rows = await c.execute(
                select(memories).where(m.scope == scope, m.id.in_(wanted)).order_by(m.id)
            )
            return [to_memory(row) for row in rows]

    async def get_many_ordered(
        self, scope: str, ids: Sequence[int], *, conn: AsyncConnection | None = None
    ) -> list[Memory]:
        """This chat's memories among `ids`, in the order given."""
        by_id = {memory.id: memory for memory in await self.get_many(scope, ids, conn=conn)}
        return [by_id[i] for i in ids if i in by_id]

    async def newest(
        self,
        scope: str,
        *,
        types: Sequence[MemoryType] | None = None,
        status: str | None = "active",
        limit: int | None = None,
        conn: AsyncConnection | None = None,
    ) -> list[Memory]:
        """This chat's memories, newest first, of these types (all when None) and this
        status (any when None)."""
        query = select(memories).where(m.scope == scope).order_by(m.id.desc())
        if types:
            query = query.where(m.type.in_(list(types)))
        if status is not None:
            query = query.where(m.status == status)
        if limit is not None:
            query = query.limit(limit)
        async with self.reading(conn) as c:
            return [to_memory(row) for row in await c.execute(query)]

    async def visible_ids(
        self,
        scope: str,
        now: datetime,
        *,
        retrospective: bool = False,
        conn: AsyncConnection | None = None,
    ) -> set[int]:
        """The ids of every memory a question asked in `scope` at `now` may see (the
        visibility rule, memory_sql.py)."""
        query = select(m.id).where(sql.visible(scope, now, retrospective=retrospective))
        async with self.reading(conn) as c:
            return set((await c.execute(query)).scalars())

    async def recent_texts(
        self, scope: str, type_: str, limit: int, *, conn: AsyncConnection | None = None
    ) -> list[tuple[int, str]]:
        """(id, content) of the latest `limit` unretracted memories of one chat and type."""
        async with self.reading(conn) as c:
            rows = await c.execute(
                select(m.id, m.content)
                .where(m.scope == scope, m.type == type_, m.status != "retracted")
                .order_by(m.id.desc())
                .limit(limit)
            )
            return [(row.id, row.content) for row in rows]

    async def credit(
        self, scope: str, ids: Sequence[int], at: datetime, *, conn: AsyncConnection | None = None
    ) -> None:
        """hit_count + 1 and last_accessed_at = at."""
        if not ids:
            return
        async with self.writing(conn) as c:
            await c.execute(
                update(memories)
                .where(m.scope == scope, m.id.in_(sorted(set(ids))))
                .values(hit_count=m.hit_count + 1, last_accessed_at=at)
            )

    async def touch(
        self, scope: str, ids: Sequence[int], at: datetime, *, conn: AsyncConnection | None = None
    ) -> None:
        """last_accessed_at = at."""
        if not ids:
            return
        async with self.writing(conn) as c:
            await c.execute(
                update(memories)
                .where(m.scope == scope, m.id.in_(sorted(set(ids))))
                .values(last_accessed_at=at)
            )

    # --- versions -------------------------------------------------------------------

    async def insert_versions(
        self,
        written: Sequence[Memory],
        *,
        changed_by: str,
        reason: str,
        at: datetime,
        conn: AsyncConnection | None = None,
    ) -> None:
        """One version row per memory, as it reads now."""
        if not written:
            return
        async with self.writing(conn) as c:
            await c.execute(
                insert(versions), [_version_row(mem, changed_by, reason, at) for mem in written]
            )

    async def history(
        self, memory_id: int, *, conn: AsyncConnection | None = None
    ) -> list[MemoryVersion]:
        """Every version of the memory, oldest first."""
        v = versions.c
        columns = [v[f.name] for f in fields(MemoryVersion)]
        async with self.reading(conn) as c:
            rows = await c.execute(
                select(*columns).where(v.memory_id == memory_id).order_by(v.version)
            )
            return [MemoryVersion(**row) for row in rows.mappings()]

    async def changed_by(
        self, memory_id: int, actor: str, *, conn: AsyncConnection | None = None
    ) -> bool:
        """Whether any version of the memory was written by `actor`."""
        v = versions.c
        async with self.reading(conn) as c:
            found = await c.execute(
                select(literal_column("1"))
                .where(v.memory_id == memory_id, v.changed_by == actor)
                .limit(1)
            )
            return found.first() is not None

    # --- evidence -------------------------------------------------------------------

    async def existing_in_scope(
        self, scope: str, refs: Sequence[EvidenceRef], *, conn: AsyncConnection | None = None
    ) -> tuple[set[int], set[int], set[int]]:
        """Which experience / memory / fragment ids of `refs` exist in this chat."""
        exp_ids = {r.experience_id for r in refs if r.experience_id is not None}
        mem_ids = {r.memory_id for r in refs if r.memory_id is not None}
        frag_ids = {r.fragment_id for r in refs if r.fragment_id is not None}
        found: list[set[int]] = []
        async with self.reading(conn) as c:
            for source, ids in ((experiences, exp_ids), (memories, mem_ids), (fragments, frag_ids)):
                if not ids:
                    found.append(set())
                    continue
                rows = await c.execute(
                    select(source.c.id).where(source.c.scope == scope, source.c.id.in_(sorted(ids)))
                )
                found.append({row.id for row in rows})
        return found[0], found[1], found[2]

    async def insert_evidence(
        self,
        items: Sequence[tuple[int, Sequence[EvidenceRef]]],
        at: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> None:
        """The evidence of each (memory id, refs) item."""
        rows = [
            {
                "memory_id": memory_id,
                "experience_id": r.experience_id,
                "source_memory_id": r.memory_id,
                "fragment_id": r.fragment_id,
                "role": r.role,
                "created_at": at,
            }
            for memory_id, refs in items
            for r in refs
        ]
        if not rows:
            return
        async with self.writing(conn) as c:
            await c.execute(insert(memory_evidence), rows)

    async def evidence(
        self, memory_id: int, *, conn: AsyncConnection | None = None
    ) -> list[EvidenceRef]:
        e = memory_evidence.c
        async with self.reading(conn) as c:
            rows = await c.execute(
                select(memory_evidence).where(e.memory_id == memory_id).order_by(e.id)
            )
            return [
                EvidenceRef(
                    experience_id=row.experience_id,
                    memory_id=row.source_memory_id,
                    fragment_id=row.fragment_id,
                    role=row.role,
                )
                for row in rows
            ]

    async def evidence_count(self, memory_id: int, *, conn: AsyncConnection | None = None) -> int:
        e = memory_evidence.c
        async with self.reading(conn) as c:
            result = await c.execute(
                select(func.count()).select_from(memory_evidence).where(e.memory_id == memory_id)
            )
            return int(result.scalar_one())

    async def evidence_texts(
        self, per_memory: int, *, conn: AsyncConnection | None = None
    ) -> dict[int, list[str]]:
        """memory id -> the texts of its first `per_memory` evidence messages (by id)."""
        query = (
            select(memory_evidence.c.memory_id, experiences.c.text)
            .join(experiences, experiences.c.id == memory_evidence.c.experience_id)
            .order_by(memory_evidence.c.memory_id, experiences.c.id)
        )
        async with self.reading(conn) as c:
            rows = (await c.execute(query)).all()
        out: dict[int, list[str]] = {}
        for memory_id, said in rows:
            texts = out.setdefault(int(memory_id), [])
            if len(texts) < per_memory and str(said).strip():
                texts.append(str(said))
        return out

    # --- relations ------------------------------------------------------------------

    async def add_relation(
        self,
        scope: str,
        src_id: int,
        dst_id: int,
        kind: RelationKind,
        *,
        reason: str,
        at: datetime,
        conn: AsyncConnection | None = None,
    ) -> None:
        """Insert once; the same (src, dst, kind) again is a no-op."""
        r = memory_relations.c
        async with self.writing(conn) as c:
            await c.execute(
                upsert(c, memory_relations)
                .values(
                    scope=scope,
                    src_id=src_id,
                    dst_id=dst_id,
                    kind=kind,
                    reason=reason,
                    created_at=at,
                )
                .on_conflict_do_nothing(index_elements=[r.src_id, r.dst_id, r.kind])
            )

    async def relations(
        self,
        scope: str,
        ids: Iterable[int],
        kinds: Sequence[RelationKind],
        *,
        conn: AsyncConnection | None = None,
    ) -> list[tuple[int, int, RelationKind]]:
        """(src, dst, kind) edges of this chat touching any of `ids`."""
        wanted = sorted(set(ids))
        if not wanted or not kinds:
            return []
        r = memory_relations.c
        async with self.reading(conn) as c:
            rows = await c.execute(
                select(r.src_id, r.dst_id, r.kind).where(
                    r.scope == scope,
                    r.kind.in_(list(kinds)),
                    or_(r.src_id.in_(wanted), r.dst_id.in_(wanted)),
                )
            )
            return [(row.src_id, row.dst_id, row.kind) for row in rows]

    async def has_replaced(self, scope: str, *, conn: AsyncConnection | None = None) -> bool:
        """Whether any memory of this chat was replaced by a newer version."""
        r = memory_relations.c
        async with self.reading(conn) as c:
            found = await c.execute(
                select(literal_column("1")).where(r.scope == scope, r.kind == "supersedes").limit(1)
            )
            return found.first() is not None

    # --- aliases --------------------------------------------------------------------

    async def upsert_alias(
        self,
        scope: str,
        alias: str,
        canonical: str,
        at: datetime,
        *,
        conn: AsyncConnection | None = None,
    ) -> None:
        """Map `alias` to `canonical` in this chat (a new mapping, or a changed one)."""
        a = aliases.c
        async with self.writing(conn) as c:
            await c.execute(
                upsert(c, aliases)
                .values(scope=scope, alias=alias, canonical=canonical, created_at=at)
                .on_conflict_do_update(
                    index_elements=[a.scope, a.alias], set_={"canonical": canonical}
                )
            )

    async def alias_map(self, scope: str, *, conn: AsyncConnection | None = None) -> dict[str, str]:
        a = aliases.c
        async with self.reading(conn) as c:
            rows = await c.execute(select(a.alias, a.canonical).where(a.scope == scope))
            return {row.alias: row.canonical for row in rows}

    async def scope_names(
        self, scope: str, *, conn: AsyncConnection | None = None
    ) -> tuple[int, list[str], dict[str, str]]:
        """In one round trip: the chat's memory count, distinct subjects and aliases."""
        async with self.reading(conn) as c:
            rows = await c.execute(
                text(
                    "SELECT 0 AS k, count(*) AS a, NULL AS b FROM memories WHERE scope = :scope"
                    " UNION ALL SELECT 1, subject, NULL FROM"
                    " (SELECT DISTINCT subject FROM memories WHERE scope = :scope)"
                    " UNION ALL SELECT 2, alias, canonical FROM aliases WHERE scope = :scope"
                ),
                {"scope": scope},
            )
            n, subjects_, aliases_ = 0, [], {}
            for kind, a, b in rows:
                if kind == 0:
                    n = int(a)
                elif kind == 1:
                    subjects_.append(str(a))
                else:
                    aliases_[str(a)] = str(b)
        return n, subjects_, aliases_

    # --- full-text index (derived) ----------------------------------------------------

    async def index(
        self, written: Sequence[Memory], *, conn: AsyncConnection | None = None
    ) -> None:
        """Index freshly inserted memories (their ids are new, so nothing to delete)."""
        params = [
            _index_params(memory.id, memory.scope, memory.subject, memory.content)
            for memory in written
        ]
        if not params:
            return
        async with self.writing(conn) as c:
            await c.execute(_INDEX_ROW, params)

    async def reindex(self, memory: Memory, *, conn: AsyncConnection | None = None) -> None:
        """(Re)index one memory under its id."""
        async with self.writing(conn) as c:
            await c.execute(text("DELETE FROM memory_fts WHERE rowid = :id"), {"id": memory.id})
            await c.execute(
                _INDEX_ROW, _index_params(memory.id, memory.scope, memory.subject, memory.content)
            )

    async def rebuild_index(self, batch: int = 2000, *, conn: AsyncConnection | None = None) -> int:
        """Drop every index row and index every memory again from the truth tables."""
        count = 0
        last_id = 0
        async with self.writing(conn) as c:
            await c.execute(text("DELETE FROM memory_fts"))
            while True:
                rows = (
                    await c.execute(
                        select(m.id, m.scope, m.subject, m.content)
                        .where(m.id > last_id)
                        .order_by(m.id)
                        .limit(batch)
                    )
                ).all()
                if not rows:
                    break
                await c.execute(
                    _INDEX_ROW, [_index_params(r.id, r.scope, r.subject, r.content) for r in rows]
                )
                count += len(rows)
                last_id = rows[-1].id
            await c.execute(text("INSERT INTO memory_fts(memory_fts) VALUES ('optimize')"))
        return count

    async def document_frequencies(
        self, scope: str, tokens: Iterable[str], *, conn: AsyncConnection | None = None
    ) -> dict[str, int]:
        """Per-chat document frequency of each token (absent tokens are left out)."""
        keyed = sorted(set(fts.keyed(scope, tokens)))
        if not keyed:
            return {}
        placeholders = ", ".join(f":t{i}" for i in range(len(keyed)))
        async with self.reading(conn) as c:
            rows = await c.execute(
                text(f"SELECT term, doc FROM memory_fts_vocab WHERE term IN ({placeholders})"),
                {f"t{i}": token for i, token in enumerate(keyed)},
            )
            return {fts.unkey(row.term): int(row.doc) for row in rows}

    async def word_matches(
        self,
        scope: str,
        tokens: Iterable[str],
        now: datetime,
        *,
        limit: int,
        conn: AsyncConnection | None = None,
    ) -> list[tuple[Memory, frozenset[str]]]:
        """The `limit` best (bm25) memories visible now holding any of these bigram
        tokens, each with the bigram tokens it holds."""
        match = fts.match_any(scope, bi=tokens)
        if match is None:
            return []
        query = sql.candidates_with_columns(sql.visible(scope, now), limit)
        async with self.reading(conn) as c:
            rows = await c.execute(query, {"match": match})
            return [(to_memory(row), fts.column_tokens(row.bi)) for row in rows]

    async def word_candidates(
        self,
        scope: str,
        tokens: Iterable[str],
        now: datetime,
        *,
        with_past: bool,
        limit: int,
        conn: AsyncConnection | None = None,
    ) -> list[Memory]:
        """Recall's words stage: the `limit` best (bm25) visible memories holding any
        of these bigram tokens (`with_past`: also the ones whose validity ended). Its
        statement is built once per (with_past, limit) and reused question after
        question."""
        match = fts.match_any(scope, bi=tokens)
        if match is None:
            return []
        key = (with_past, limit)
        query = self._word_statements.get(key)
        if query is None:
            query = sql.candidates_with_links(sql.visible_bound(with_past), limit)
            self._word_statements[key] = query
        async with self.reading(conn) as c:
            rows = await c.execute(query, {"match": match, **sql.visible_params(scope, now)})
            return [to_memory(row) for row in rows]

    async def bm25(
        self, scope: str, tokens: Iterable[str], *, limit: int, conn: AsyncConnection | None = None
    ) -> list[Memory]:
        """Plain FTS5 bm25 top-`limit` of this chat's active memories holding any of
        these bigram tokens (the evaluation baseline: no validity, no stages)."""
        match = fts.match_any(scope, bi=tokens)
        if match is None:
            return []
        query = sql.bm25((m.scope == scope) & (m.status == "active"), limit)
        async with self.reading(conn) as c:
            ranked = [row.id for row in await c.execute(query, {"match": match})]
            return await self.get_many_ordered(scope, ranked, conn=c)

    async def fts_tables(self) -> list[str]:
        """The derived full-text tables present (named memory_fts*), for optimisation."""
        if not self.db.is_sqlite:
            return []
        async with self.db.read() as conn:
            rows = await conn.exec_driver_sql(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'memory_fts%' "
                "AND sql LIKE '%USING fts5(%'"
            )
            return [str(r[0]) for r in rows]

    async def optimize_derived(self) -> list[str]:
        """Merge the FTS5 segments of the derived indexes and refresh planner stats."""
        done: list[str] = []
        tables = await self.fts_tables()
        async with self.db.write() as conn:
            for name in tables:
                await conn.exec_driver_sql(f"INSERT INTO {name}({name}) VALUES ('optimize')")
                done.append(name)
            if self.db.is_sqlite:
                await conn.exec_driver_sql("PRAGMA optimize")
        return done

    # --- what the nightly gc and the vector index read --------------------------------

    async def gc_rows(
        self, scope: str, idle_before: datetime, limit: int, *, conn: AsyncConnection | None = None
    ) -> list[GcCandidate]:
        """Active memories of the scope idle since before `idle_before`, longest idle first."""
        idle = func.coalesce(m.last_accessed_at, m.created_at)
        r = memory_relations.c
        chain = exists().where(
            r.kind.in_(("supersedes", "contradicts")), or_(r.src_id == m.id, r.dst_id == m.id)
        )
        query = (
            select(
                m.id,
                m.type,
                m.importance,
                m.created_at,
                m.last_accessed_at,
                m.hit_count,
                m.pinned,
                m.starred,
                chain.label("in_chain"),
            )
            .where(m.scope == scope, m.status == "active", idle < idle_before)
            .order_by(idle, m.id)
            .limit(limit)
        )
        async with self.reading(conn) as c:
            return [
                GcCandidate(
                    id=int(row.id),
                    type=str(row.type),
                    importance=float(row.importance),
                    created_at=row.created_at,
                    last_accessed_at=row.last_accessed_at,
                    hit_count=int(row.hit_count),
                    pinned=bool(row.pinned),
                    starred=bool(row.starred),
                    in_chain=bool(row.in_chain),
                )
                for row in await c.execute(query)
            ]

    async def embeddable(self, *, conn: AsyncConnection | None = None) -> list[MemoryText]:
        """Every memory recall could ever show (active or cold; retracted ones never
        are), current version, in id order."""
        query = (
            select(m.id, m.version, m.scope, m.subject, m.content, m.status)
            .where(m.status != "retracted")
            .order_by(m.id)
        )
        async with self.reading(conn) as c:
            rows = (await c.execute(query)).all()
        return [
            MemoryText(int(r[0]), int(r[1]), str(r[2]), str(r[3]), str(r[4]), str(r[5]))
            for r in rows
        ]

    async def source_fingerprint(self, *, conn: AsyncConnection | None = None) -> str:
        """Changes whenever anything the vector index is derived from changes (memories,
        aliases, evidence); cheap to compute: the scheduler asks it before starting
        `yuji embed`."""
        memory_stats = select(
            func.count(m.id),
            func.max(m.id),
            func.coalesce(func.sum(m.version), 0),
            func.max(m.updated_at),
        )
        alias_stats = select(func.count(aliases.c.id), func.max(aliases.c.id))
        evidence_stats = select(func.count(memory_evidence.c.id), func.max(memory_evidence.c.id))
        async with self.reading(conn) as c:
            mem = (await c.execute(memory_stats)).one()
            ali = (await c.execute(alias_stats)).one()
            evi = (await c.execute(evidence_stats)).one()
        return "|".join(str(v) for v in (*mem, *ali, *evi))

    # --- what other aggregates read of memories -----------------------------------------

    async def about_person(
        self, scope: str, user_id: str, names: Iterable[str], *, conn: AsyncConnection | None = None
    ) -> list[int]:
        """Every memory of this chat (any status) whose subject is one of `names`, or
        resting only on messages of `user_id` (a forget request's memories)."""
        ev, x = memory_evidence.c, experiences.c
        async with self.reading(conn) as c:
            about = {
                int(r[0])
                for r in await c.execute(
                    select(m.id).where(m.scope == scope, m.subject.in_(sorted(set(names))))
                )
            }
            theirs = (
                select(ev.memory_id)
                .join(memories, m.id == ev.memory_id)
                .outerjoin(experiences, x.id == ev.experience_id)
                .where(m.scope == scope)
                .group_by(ev.memory_id)
                .having(func.count() == func.sum(case((x.sender_id == user_id, 1), else_=0)))
            )
            only = {int(r[0]) for r in await c.execute(theirs)}
        return sorted(about | only)

    async def drop_index_rows(
        self, memory_ids: Sequence[int], *, conn: AsyncConnection | None = None
    ) -> None:
        """These memories leave the derived full-text index (a forget request)."""
        async with self.writing(conn) as c:
            for start in range(0, len(memory_ids), _CHUNK):
                chunk = list(memory_ids[start : start + _CHUNK])
                await c.execute(delete(sql.memory_fts).where(sql.memory_fts.c.rowid.in_(chunk)))

    async def citing(
        self, scope: str, experience_id: int, origin: str, *, conn: AsyncConnection | None = None
    ) -> int | None:
        """The newest memory of this chat and origin resting on the experience."""
        e = memory_evidence.c
        async with self.reading(conn) as c:
            value = await c.scalar(
                select(m.id)
                .join(memory_evidence, e.memory_id == m.id)
                .where(m.scope == scope, m.origin == origin, e.experience_id == experience_id)
                .order_by(m.id.desc())
                .limit(1)
            )
        return None if value is None else int(value)

    async def evidence_instants(
        self, scope: str, memory_ids: Sequence[int], *, conn: AsyncConnection | None = None
    ) -> dict[int, datetime]:
        """memory id -> when its earliest evidence (message or fragment) was said."""
        ids = sorted(set(memory_ids))
        e = memory_evidence.c
        found: dict[int, datetime] = {}
        async with self.reading(conn) as c:
            for query in (
                select(e.memory_id, func.min(experiences.c.sent_at))
                .join(experiences, experiences.c.id == e.experience_id)
                .where(e.memory_id.in_(ids), experiences.c.scope == scope)
                .group_by(e.memory_id),
                select(e.memory_id, func.min(fragments.c.first_sent_at))
                .join(fragments, fragments.c.id == e.fragment_id)
                .where(e.memory_id.in_(ids), fragments.c.scope == scope)
                .group_by(e.memory_id),
            ):
                for memory_id, instant in await c.execute(query):
                    if instant is None:
                        continue
                    key = int(memory_id)
                    found[key] = min(found[key], instant) if key in found else instant
        return found

    async def pack_rows(self, scope: str, *, conn: AsyncConnection | None = None) -> MemoryRows:
        """Everything of one chat's memories a memory pack carries, as plain rows."""
        ids = select(m.id).where(m.scope == scope).scalar_subquery()
        v, e, x, f = versions.c, memory_evidence.c, experiences.c, fragments.c
        r, a = memory_relations.c, aliases.c
        evidence = (
            select(
                e.memory_id,
                e.role,
                e.source_memory_id,
                e.fragment_id,
                e.experience_id,
                x.sender_id,
                x.sender_name,
                x.sent_at,
                x.text,
                f.summary,
                f.first_sent_at,
                redactions.c.id.label("redaction_id"),
            )
            .select_from(memory_evidence)
            .outerjoin(experiences, x.id == e.experience_id)
            .outerjoin(fragments, f.id == e.fragment_id)
            .outerjoin(redactions, redactions.c.experience_id == e.experience_id)
            .where(e.memory_id.in_(ids))
            .order_by(e.memory_id, e.id)
        )
        async with self.reading(conn) as c:

            async def all_of(query: Any) -> list[dict[str, Any]]:
                return [dict(row) for row in (await c.execute(query)).mappings()]

            return MemoryRows(
                memories=await all_of(select(memories).where(m.scope == scope).order_by(m.id)),
                versions=await all_of(
                    select(versions).where(v.memory_id.in_(ids)).order_by(v.memory_id, v.version)
                ),
                evidence=await all_of(evidence),
                relations=await all_of(
                    select(memory_relations).where(r.scope == scope).order_by(r.id)
                ),
                aliases=await all_of(select(aliases).where(a.scope == scope).order_by(a.id)),
            )


def _index_params(memory_id: int, scope: str, subject: str, content: str) -> dict[str, Any]:
    bi, uni = fts.document(scope, subject, content)
    return {"id": memory_id, "bi": bi, "uni": uni}


def _version_row(memory: Memory, changed_by: str, reason: str, at: datetime) -> dict[str, Any]:
    return {
        "memory_id": memory.id,
        "version": memory.version,
        "type": memory.type,
        "subject": memory.subject,
        "content": memory.content,
        "importance": memory.importance,
        "confidence": memory.confidence,
        "status": memory.status,
        "valid_from": memory.valid_from,
        "valid_to": memory.valid_to,
        "changed_at": at,
        "changed_by": changed_by,
        "reason": reason,
    }
