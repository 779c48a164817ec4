"""SQL of the memory aggregate: memories, versions, evidence, relations, aliases and
the derived full-text index. Functions take an open connection so the service can
compose several of them in one transaction (`Database.write()` / `.read()`).

Every lookup by id also filters on scope: an id of another chat reads as missing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    column,
    func,
    insert,
    literal_column,
    or_,
    select,
    table,
    text,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.types import EvidenceRef, Memory, RelationKind

from . import fts
from .schema import aliases, experiences, fragments, memories, memory_evidence, memory_relations
from .schema import memory_versions as versions

m = memories.c

memory_fts = table("memory_fts", column("rowid"), column("bi"), column("uni"))
"""The FTS5 virtual table (created in raw SQL by migration 0001; see storage/fts.py)."""


def to_memory(row: Any) -> Memory:
    return Memory(
        id=row.id,
        scope=row.scope,
        type=row.type,
        subject=row.subject,
        content=row.content,
        importance=row.importance,
        confidence=row.confidence,
        status=row.status,
        valid_from=row.valid_from,
        valid_to=row.valid_to,
        version=row.version,
        origin=row.origin,
        created_at=row.created_at,
        updated_at=row.updated_at,
        last_accessed_at=row.last_accessed_at,
        hit_count=row.hit_count,
        pinned=bool(row.pinned),
        starred=bool(row.starred),
    )


# --- memories -----------------------------------------------------------------------


async def insert_memory(conn: AsyncConnection, values: dict[str, Any]) -> int:
    result = await conn.execute(insert(memories).values(**values).returning(m.id))
    return int(result.scalar_one())


async def insert_memories(conn: AsyncConnection, rows: Sequence[dict[str, Any]]) -> list[int]:
    """Insert many rows; ids come back in the order of `rows`."""
    if not rows:
        return []
    result = await conn.execute(
        insert(memories).returning(m.id, sort_by_parameter_order=True), list(rows)
    )
    return [int(i) for i in result.scalars()]


async def update_memory(conn: AsyncConnection, memory_id: int, values: dict[str, Any]) -> None:
    await conn.execute(update(memories).where(m.id == memory_id).values(**values))


async def get(conn: AsyncConnection, scope: str, memory_id: int) -> Memory | None:
    row = (await conn.execute(select(memories).where(m.id == memory_id, m.scope == scope))).first()
    return None if row is None else to_memory(row)


async def get_many(conn: AsyncConnection, scope: str, ids: Iterable[int]) -> list[Memory]:
    wanted = sorted(set(ids))
    if not wanted:
        return []
    rows = await conn.execute(
        select(memories).where(m.scope == scope, m.id.in_(wanted)).order_by(m.id)
    )
    return [to_memory(row) for row in rows]


async def get_many_ordered(conn: AsyncConnection, scope: str, ids: Sequence[int]) -> list[Memory]:
    """This chat's memories among `ids`, in the order given."""
    by_id = {memory.id: memory for memory in await get_many(conn, scope, ids)}
    return [by_id[i] for i in ids if i in by_id]


async def ids_where(conn: AsyncConnection, *where: ColumnElement[bool]) -> set[int]:
    return set((await conn.execute(select(m.id).where(*where))).scalars())


async def select_where(
    conn: AsyncConnection, *where: ColumnElement[bool], limit: int | None = None
) -> list[Memory]:
    query = select(memories).where(*where).order_by(m.id.desc())
    if limit is not None:
        query = query.limit(limit)
    return [to_memory(row) for row in await conn.execute(query)]


async def recent_texts(
    conn: AsyncConnection, scope: str, type_: str, limit: int
) -> list[tuple[int, str]]:
    """(id, content) of the latest `limit` unretracted memories of one chat and type."""
    rows = await conn.execute(
        select(m.id, m.content)
        .where(m.scope == scope, m.type == type_, m.status != "retracted")
        .order_by(m.id.desc())
        .limit(limit)
    )
    return [(row.id, row.content) for row in rows]


async def count_in_scope(conn: AsyncConnection, scope: str) -> int:
    result = await conn.execute(select(func.count()).select_from(memories).where(m.scope == scope))
    return int(result.scalar_one())


async def subjects(conn: AsyncConnection, scope: str) -> list[str]:
    rows = await conn.execute(select(m.subject).where(m.scope == scope).distinct())
    return [row.subject for row in rows]


async def credit(conn: AsyncConnection, scope: str, ids: Sequence[int], at: datetime) -> None:
    if not ids:
        return
    await conn.execute(
        update(memories)
        .where(m.scope == scope, m.id.in_(sorted(set(ids))))
        .values(hit_count=m.hit_count + 1, last_accessed_at=at)
    )


async def touch(conn: AsyncConnection, scope: str, ids: Sequence[int], at: datetime) -> None:
    if ids:
        await conn.execute(
            update(memories)
            .where(m.scope == scope, m.id.in_(sorted(set(ids))))
            .values(last_accessed_at=at)
        )


# --- versions -----------------------------------------------------------------------


async def insert_version(
    conn: AsyncConnection, memory: Memory, *, changed_by: str, reason: str, at: datetime
) -> None:
    await conn.execute(insert(versions).values(**_version_row(memory, changed_by, reason, at)))


async def insert_versions(
    conn: AsyncConnection, written: Sequence[Memory], *, changed_by: str, reason: str, at: datetime
) -> None:
    if written:
        await conn.execute(
            insert(versions), [_version_row(mem, changed_by, reason, at) for mem in written]
        )


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


async def history(conn: AsyncConnection, memory_id: int) -> list[dict[str, Any]]:
    rows = await conn.execute(
        select(versions).where(versions.c.memory_id == memory_id).order_by(versions.c.version)
    )
    return [dict(row) for row in rows.mappings()]


# --- evidence -----------------------------------------------------------------------


async def existing_in_scope(
    conn: AsyncConnection, scope: str, refs: Sequence[EvidenceRef]
) -> tuple[set[int], set[int], set[int]]:
    """Which experience / memory / fragment ids of `refs` exist in this chat."""
    exp_ids = {r.experience_id for r in refs if r.experience_id is not None}
    mem_ids = {r.memory_id for r in refs if r.memory_id is not None}
    frag_ids = {r.fragment_id for r in refs if r.fragment_id is not None}
    found: list[set[int]] = []
    for source, ids in ((experiences, exp_ids), (memories, mem_ids), (fragments, frag_ids)):
        if not ids:
            found.append(set())
            continue
        rows = await conn.execute(
            select(source.c.id).where(source.c.scope == scope, source.c.id.in_(sorted(ids)))
        )
        found.append({row.id for row in rows})
    return found[0], found[1], found[2]


async def insert_evidence(
    conn: AsyncConnection, memory_id: int, refs: Sequence[EvidenceRef], at: datetime
) -> None:
    await insert_evidence_many(conn, [(memory_id, refs)], at)


async def insert_evidence_many(
    conn: AsyncConnection, items: Sequence[tuple[int, Sequence[EvidenceRef]]], at: datetime
) -> None:
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
    if rows:
        await conn.execute(insert(memory_evidence), rows)


async def evidence(conn: AsyncConnection, memory_id: int) -> list[EvidenceRef]:
    e = memory_evidence.c
    rows = await conn.execute(
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


async def evidence_count(conn: AsyncConnection, memory_id: int) -> int:
    e = memory_evidence.c
    result = await conn.execute(
        select(func.count()).select_from(memory_evidence).where(e.memory_id == memory_id)
    )
    return int(result.scalar_one())


# --- relations ----------------------------------------------------------------------


async def add_relation(
    conn: AsyncConnection,
    scope: str,
    src_id: int,
    dst_id: int,
    kind: RelationKind,
    *,
    reason: str,
    at: datetime,
) -> None:
    """Insert once; the same (src, dst, kind) again is a no-op."""
    r = memory_relations.c
    exists = await conn.execute(
        select(r.id).where(r.src_id == src_id, r.dst_id == dst_id, r.kind == kind)
    )
    if exists.first() is None:
        await conn.execute(
            insert(memory_relations).values(
                scope=scope, src_id=src_id, dst_id=dst_id, kind=kind, reason=reason, created_at=at
            )
        )


async def relations(
    conn: AsyncConnection, scope: str, ids: Iterable[int], kinds: Sequence[RelationKind]
) -> list[tuple[int, int, RelationKind]]:
    """(src, dst, kind) edges of this chat touching any of `ids`."""
    wanted = sorted(set(ids))
    if not wanted or not kinds:
        return []
    r = memory_relations.c
    rows = await conn.execute(
        select(r.src_id, r.dst_id, r.kind).where(
            r.scope == scope,
            r.kind.in_(list(kinds)),
            or_(r.src_id.in_(wanted), r.dst_id.in_(wanted)),
        )
    )
    return [(row.src_id, row.dst_id, row.kind) for row in rows]


async def has_relation(
    conn: AsyncConnection, memory_id: int, kinds: Sequence[RelationKind]
) -> bool:
    r = memory_relations.c
    rows = await conn.execute(
        select(r.id)
        .where(or_(r.src_id == memory_id, r.dst_id == memory_id), r.kind.in_(list(kinds)))
        .limit(1)
    )
    return rows.first() is not None


# --- aliases ------------------------------------------------------------------------


async def upsert_alias(
    conn: AsyncConnection, scope: str, alias: str, canonical: str, at: datetime
) -> None:
    a = aliases.c
    found = (await conn.execute(select(a.id).where(a.scope == scope, a.alias == alias))).first()
    if found is None:
        await conn.execute(
            insert(aliases).values(scope=scope, alias=alias, canonical=canonical, created_at=at)
        )
    else:
        await conn.execute(update(aliases).where(a.id == found.id).values(canonical=canonical))


async def alias_map(conn: AsyncConnection, scope: str) -> dict[str, str]:
    a = aliases.c
    rows = await conn.execute(select(a.alias, a.canonical).where(a.scope == scope))
    return {row.alias: row.canonical for row in rows}


# --- full-text index (derived) ---------------------------------------------------------


async def fts_put(conn: AsyncConnection, memory: Memory) -> None:
    """(Re)index one memory under its id."""
    bi, uni = fts.document(memory.scope, memory.subject, memory.content)
    await conn.execute(text("DELETE FROM memory_fts WHERE rowid = :id"), {"id": memory.id})
    await conn.execute(
        text("INSERT INTO memory_fts(rowid, bi, uni) VALUES (:id, :bi, :uni)"),
        {"id": memory.id, "bi": bi, "uni": uni},
    )


async def fts_put_many(conn: AsyncConnection, written: Sequence[Memory]) -> None:
    """Index freshly inserted memories (their ids are new, so nothing to delete)."""
    params: list[dict[str, Any]] = []
    for memory in written:
        bi, uni = fts.document(memory.scope, memory.subject, memory.content)
        params.append({"id": memory.id, "bi": bi, "uni": uni})
    if params:
        await conn.execute(
            text("INSERT INTO memory_fts(rowid, bi, uni) VALUES (:id, :bi, :uni)"), params
        )


async def fts_rebuild(conn: AsyncConnection, batch: int = 2000) -> int:
    """Drop every index row and index every memory again from the truth tables."""
    await conn.execute(text("DELETE FROM memory_fts"))
    count = 0
    last_id = 0
    while True:
        rows = (
            await conn.execute(
                select(m.id, m.scope, m.subject, m.content)
                .where(m.id > last_id)
                .order_by(m.id)
                .limit(batch)
            )
        ).all()
        if not rows:
            break
        params: list[dict[str, Any]] = []
        for row in rows:
            bi, uni = fts.document(row.scope, row.subject, row.content)
            params.append({"id": row.id, "bi": bi, "uni": uni})
        await conn.execute(
            text("INSERT INTO memory_fts(rowid, bi, uni) VALUES (:id, :bi, :uni)"), params
        )
        count += len(rows)
        last_id = rows[-1].id
    await conn.execute(text("INSERT INTO memory_fts(memory_fts) VALUES ('optimize')"))
    return count


async def fts_document_frequencies(
    conn: AsyncConnection, scope: str, tokens: Iterable[str]
) -> dict[str, int]:
    """Per-chat document frequency of each token (absent tokens are left out)."""
    keyed = sorted(set(fts.keyed(scope, tokens)))
    if not keyed:
        return {}
    placeholders = ", ".join(f":t{i}" for i in range(len(keyed)))
    rows = await conn.execute(
        text(f"SELECT term, doc FROM memory_fts_vocab WHERE term IN ({placeholders})"),
        {f"t{i}": token for i, token in enumerate(keyed)},
    )
    return {fts.unkey(row.term): int(row.doc) for row in rows}


async def scope_names(conn: AsyncConnection, scope: str) -> tuple[int, list[str], dict[str, str]]:
    """In one round trip: the chat's memory count, distinct subjects and aliases."""
    rows = await conn.execute(
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


async def has_replaced(conn: AsyncConnection, scope: str) -> bool:
    """Whether any memory of this chat was replaced by a newer version."""
    r = memory_relations.c
    found = await conn.execute(
        select(literal_column("1")).where(r.scope == scope, r.kind == "supersedes").limit(1)
    )
    return found.first() is not None


async def fts_candidates(
    conn: AsyncConnection, match: str, visible: ColumnElement[bool], *, limit: int
) -> list[tuple[Memory, str, str]]:
    """The `limit` best (bm25) visible memories whose index row matches `match`, with
    their (bi, uni) columns.

    The full-text index must drive: a plain join lets SQLite walk the chat's memories
    and run the MATCH once per memory. So the best matches are ranked first in a
    subquery (with room for some that visibility then removes) and joined after.
    The index columns are read by rowid for the kept rows only: selecting them in the
    ranking subquery would read them for every ranked row (3x slower at 10k)."""
    doc = memory_fts.alias("doc")
    query = _candidates_query(match, visible, limit, doc.c.bi, doc.c.uni, doc=doc)
    rows = await conn.execute(query, {"match": match})
    return [(to_memory(row), row.bi, row.uni) for row in rows]


async def fts_recall_candidates(
    conn: AsyncConnection,
    match: str,
    visible: ColumnElement[bool],
    params: Mapping[str, object],
    *,
    limit: int,
) -> list[tuple[Memory, str, bool]]:
    """Like `fts_candidates`, with the `bi` column and whether the memory has any
    relation at all (recall's graph stage skips its query when no source has one).
    `visible` is a long-lived predicate over bound parameters (given in `params`):
    the statement is built once for it and reused question after question."""
    key = (id(visible), limit)
    cached = _RECALL_STATEMENTS.get(key)
    if cached is not None and cached[0] is visible:
        query = cached[1]
    else:
        doc = memory_fts.alias("doc")
        r = memory_relations.c
        linked = or_(
            select(literal_column("1")).where(r.src_id == m.id).exists(),
            select(literal_column("1")).where(r.dst_id == m.id).exists(),
        ).label("linked")
        query = _candidates_query(match, visible, limit, doc.c.bi, linked, doc=doc)
        _RECALL_STATEMENTS[key] = (visible, query)
    rows = await conn.execute(query, {"match": match, **params})
    return [(to_memory(row), row.bi, bool(row.linked)) for row in rows]


_RECALL_STATEMENTS: dict[tuple[int, int], tuple[ColumnElement[bool], Any]] = {}
"""Recall's candidate statements by (predicate, limit); the predicate is kept so its
id cannot be reused by another object."""


def _candidates_query(
    match: str, visible: ColumnElement[bool], limit: int, *extra: Any, doc: Any
) -> Any:
    ranked = _ranked(match, limit * 4)
    return (
        select(memories, *extra)
        .join_from(ranked, memories, m.id == ranked.c.rid)
        .join(doc, doc.c.rowid == ranked.c.rid)
        .where(visible)
        .order_by(ranked.c.rank)
        .limit(limit)
    )


async def fts_bm25(
    conn: AsyncConnection, match: str, visible: ColumnElement[bool], *, limit: int
) -> list[tuple[int, float]]:
    """Plain FTS5 bm25 ranking (the evaluation baseline): (memory id, rank)."""
    ranked = _ranked(match, limit * 4)
    query = (
        select(m.id, ranked.c.rank)
        .join_from(ranked, memories, m.id == ranked.c.rid)
        .where(visible)
        .order_by(ranked.c.rank)
        .limit(limit)
    )
    rows = await conn.execute(query, {"match": match})
    return [(row.id, float(row.rank)) for row in rows]


def _ranked(match: str, limit: int) -> Any:
    del match  # bound by the caller as :match
    rank = func.bm25(literal_column("memory_fts"))
    return (
        select(memory_fts.c.rowid.label("rid"), rank.label("rank"))
        .where(text("memory_fts MATCH :match"))
        .order_by(rank)
        .limit(limit)
        .subquery()
    )
