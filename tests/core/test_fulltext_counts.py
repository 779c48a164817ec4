"""PostgreSQL keeps bm25's numbers beside each full-text index by triggers (migration
0016): per-token document frequencies, postings and the index's totals. Whatever the
writes, they must equal what the index rows themselves say, or bm25 and every recall
feature reading a document frequency would drift from SQLite's."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from memory_core import Yuji
from memory_core.storage.fulltext import fts

from .vectors.helpers import add_memory

G1, G2 = "group:1", "group:2"

RECOUNT = {
    "vocab": (
        "SELECT term, doc FROM {i}_vocab ORDER BY term",
        "SELECT u.lexeme, count(*) FROM {i} AS f, unnest(f.terms) AS u "
        "GROUP BY u.lexeme ORDER BY u.lexeme",
    ),
    "postings": (
        "SELECT term, rowid, tf, length FROM {i}_postings ORDER BY term, rowid",
        "SELECT u.lexeme, f.rowid, cardinality(u.positions), f.length "
        "FROM {i} AS f, unnest(f.terms) AS u ORDER BY u.lexeme, f.rowid",
    ),
    "totals": (
        "SELECT sum(docs), sum(tokens) FROM fts_totals WHERE name = '{i}'",
        "SELECT count(*), coalesce(sum(length), 0) FROM {i}",
    ),
}


async def recounted(core: Yuji, index: str) -> None:
    async with core.db.read() as conn:
        for name, (kept, counted) in RECOUNT.items():
            held = (await conn.execute(text(kept.format(i=index)))).all()
            truth = (await conn.execute(text(counted.format(i=index)))).all()
            assert held == truth, name


@pytest.mark.pg_only("FTS5 keeps these numbers itself on SQLite")
async def test_the_counts_follow_every_write(core: Yuji) -> None:
    ids = [
        await add_memory(core.db, G1, "小明", "小明从九月开始学吉他，吉他老师姓王"),
        await add_memory(core.db, G1, "老周", "老周儿子出生了，老周请大家吃饭"),
        await add_memory(core.db, G2, "小明", "小明在深圳加班"),
    ]
    await recounted(core, "memory_fts")
    async with core.db.read() as conn:
        docs = await conn.scalar(
            text("SELECT doc FROM memory_fts_vocab WHERE term = :t"),
            {"t": fts.keyed(G1, ["吉他"])[0]},
        )
    assert docs == 1  # two mentions in one memory: one document
    await core.memory_repo.drop_index_rows(ids[:2])
    await recounted(core, "memory_fts")
    assert await core.memory_repo.rebuild_index() == 3
    await recounted(core, "memory_fts")
    async with core.db.read() as conn:
        other = await conn.scalar(
            text("SELECT count(*) FROM memory_fts_vocab WHERE term = :t"),
            {"t": fts.keyed(G2, ["吉他"])[0]},
        )
    assert other == 0  # another chat's key: its memories never counted here
