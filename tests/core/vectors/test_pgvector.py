"""pgvector where the server has it (pg18), the bytea rows where it has not (pg15):
which one runs, the column and HNSW index a build leaves, and a chat above
`exact_max` answered by the database as the exact in-process path answers it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import text

from memory_core import FakeClock, Settings, Yuji
from memory_core.storage import migrate
from memory_core.storage.engine import Database
from memory_core.storage.vectors import pgvector
from memory_core.storage.vectors.pgvector import PgvectorRepo, has_embedding, literal, nearest_sql
from memory_core.vectors.build import sync_index
from memory_core.vectors.fake import FakeEmbedder
from memory_core.vectors.pgvector_place import PgvectorPlace
from memory_core.vectors.place import TablePlace
from memory_core.vectors.places import place_for
from tests import backends
from tests.conftest import Servers
from tests.core.cores import open_core

from .helpers import add_memory

G1, G2 = "group:1", "group:2"
FOODS = ("火锅", "烧烤", "寿司", "拉面", "饺子", "披萨", "咖喱", "烤鸭")
PLACES = ("深圳", "上海", "成都", "杭州", "北京", "西安", "大理", "厦门")
PEOPLE = ("小明", "老周", "莉莉", "阿杰", "大刘")
QUESTIONS = ("小明喜欢吃什么", "老周去过成都吗", "莉莉在杭州做什么", "谁爱吃烤鸭")


async def columns(core: Yuji) -> set[str]:
    async with core.db.read() as conn:
        result = await conn.exec_driver_sql(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'memory_vectors'"
        )
        return {str(r[0]) for r in result}


@pytest.mark.pg_only("pgvector or bytea is a PostgreSQL question")
async def test_a_build_fills_the_column_and_its_hnsw_index(
    core: Yuji, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pgvector, "ANALYZE_AFTER", 1)  # the statistics refresh runs too
    await add_memory(core.db, G1, "小明", "小明从九月开始学吉他")
    await add_memory(core.db, G1, "老周", "老周儿子出生了")
    embedder = FakeEmbedder()
    await sync_index(core.memory_repo, embedder, core.vector_place)
    assert core.vectors is not None
    if backend == "pg15":  # no pgvector: the bytea rows, scored in process, as before
        assert not isinstance(core.vector_place, PgvectorPlace)
        assert core.vectors.vector_store == (
            "in the database (memory_vectors, bytea; scored in process)"
        )
        assert "embedding" not in await columns(core)
        found = await core.vectors.scores(G1, "吉他", {1, 2})
        assert found is not None
        assert len(found.ids) == 2
        return
    assert isinstance(core.vector_place, PgvectorPlace)
    assert "pgvector HNSW" in core.vectors.vector_store
    assert "embedding" in await columns(core)
    assert await PgvectorRepo(core.db).indexes() == ["ix_memory_vectors_hnsw_32"]
    # The search's SQL proves the partial predicate: the planner can use the index.
    async with core.db.read() as conn:
        await conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
        query = literal(np.full(32, 0.1, dtype=np.float32))
        plan = await conn.execute(
            text("EXPLAIN " + nearest_sql(32).text),
            {"q": query, "model": "fake", "scope": G1, "k": 5},
        )
        assert "ix_memory_vectors_hnsw_32" in "\n".join(str(r[0]) for r in plan)
    async with core.db.read() as conn:
        same = await conn.exec_driver_sql(
            "SELECT count(*) FROM memory_vectors"
            " WHERE embedding IS NOT NULL AND vector_dims(embedding) = 32"
        )
        assert same.scalar() == 2
    # Rows without their pgvector copy (a copied store) get it on the next build.
    async with core.db.write() as conn:
        await conn.exec_driver_sql("UPDATE memory_vectors SET embedding = NULL")
    # Until then that chat is never left to the database, however large.
    assert await PgvectorRepo(core.db).large_scopes("fake", 0) == frozenset()
    await sync_index(core.memory_repo, embedder, core.vector_place)
    assert await PgvectorRepo(core.db).large_scopes("fake", 0) == {G1}
    async with core.db.read() as conn:
        missing = await conn.exec_driver_sql(
            "SELECT count(*) FROM memory_vectors WHERE embedding IS NULL"
        )
        assert missing.scalar() == 0
    # A second model of another dimension gets its own partial index beside the first.
    await sync_index(core.memory_repo, FakeEmbedder(model_id="small", dim=16), core.vector_place)
    assert await PgvectorRepo(core.db).indexes() == [
        "ix_memory_vectors_hnsw_16",
        "ix_memory_vectors_hnsw_32",
    ]
    # Down past 0020 and up again: the column and its indexes go, then the column is
    # back, empty, and the next build fills it.
    await migrate.downgrade(core.db, "0019")
    assert "embedding" not in await columns(core)
    assert await PgvectorRepo(core.db).indexes() == []
    await migrate.upgrade(core.db)
    assert "embedding" in await columns(core)
    assert await PgvectorRepo(core.db).large_scopes("fake", 0) == frozenset()


@pytest.mark.only_on("pg18", reason="only pg18 has pgvector to refuse")
async def test_a_role_that_may_not_create_the_extension_gets_the_bytea_rows(
    backend: str, servers: Servers, clock: FakeClock, tmp_path: Path
) -> None:
    """pgvector is installed but not trusted: an ordinary role migrates to head all the
    same (the savepoint), without the column, and runs the bytea path."""
    server = await servers.server(backend)
    name = backends.database_name()
    role = f"r_{name}"
    await backends.admin(server, f"CREATE ROLE {role} LOGIN")
    await backends.admin(server, f"CREATE DATABASE {name} OWNER {role}")
    db = Database(f"postgresql+asyncpg://{role}@/{name}?host={server.socket_dir}")
    try:
        await migrate.upgrade(db)
        assert await migrate.current_revision(db) == migrate.head_revision()
        place = await place_for(db, tmp_path, clock)
        assert type(place) is TablePlace
        async with db.read() as conn:
            assert not await has_embedding(conn)
    finally:
        await db.dispose()
        await backends.admin(server, f"DROP DATABASE {name} WITH (FORCE)")
        await backends.admin(server, f"DROP ROLE {role}")


async def small_and_large_chats(core: Yuji) -> tuple[list[int], list[int]]:
    ones: list[int] = []
    for i in range(64):
        who = PEOPLE[i % len(PEOPLE)]
        text = f"{who}在{PLACES[i % len(PLACES)]}吃了{FOODS[(i * 3) % len(FOODS)]}，第{i}回"
        ones.append(await add_memory(core.db, G1, who, text))
    twos = [
        await add_memory(core.db, G2, who, f"{who}喜欢吃{food}")
        for who in PEOPLE
        for food in FOODS[:3]
    ]
    return ones, twos


@pytest.mark.only_on("pg18", reason="the HNSW path needs pgvector")
async def test_a_large_chat_is_searched_in_the_database_with_the_same_answers(
    core: Yuji, settings: Settings, clock: FakeClock, backend: str
) -> None:
    ones, twos = await small_and_large_chats(core)
    await sync_index(core.memory_repo, FakeEmbedder(), core.vector_place)
    # A second process of the deployment, whose limit makes group:1 (64 vectors) large.
    other = await open_core(settings, clock)
    try:
        place = other.vector_place
        assert isinstance(place, PgvectorPlace)
        place.exact_max, place.nearest_k = 20, 10
        exact, searched = core.vectors, other.vectors
        assert exact is not None
        assert searched is not None
        allowed = frozenset(ones) | frozenset(twos)
        answered = 0
        for question in QUESTIONS:
            want = await exact.scores(G1, question, allowed)
            got = await searched.scores(G1, question, allowed)
            assert want is not None
            assert got is not None
            assert want.complete
            assert not got.complete
            assert place.is_large("fake", G1)
            assert not place.is_large("fake", G2)
            # Never another chat's memory, and the nearest ten are the exact top ten.
            assert set(got.ids.tolist()) <= set(ones)
            top = np.lexsort((want.ids, -want.scores))[:10]
            expected = dict(zip(want.ids[top].tolist(), want.scores[top].tolist(), strict=True))
            found = dict(zip(got.ids.tolist(), got.scores.tolist(), strict=True))
            full = dict(zip(want.ids.tolist(), want.scores.tolist(), strict=True))
            # The same ten up to ties at the tenth cosine (texts that differ in a digit).
            assert len(found) == 10
            assert sorted(found.values()) == pytest.approx(sorted(expected.values()), abs=1e-5)
            for mid, cos in found.items():
                assert cos == pytest.approx(full[mid], abs=1e-5)
            # Any other memory's cosine, exactly, from the database.
            rest = [m for m in ones if m not in found][:20]
            more = await searched.cosines(G1, question, [*rest, *twos])
            assert set(more) == set(rest)
            for mid, cos in more.items():
                assert cos == pytest.approx(full[mid], abs=1e-5)
            # A small chat is still scored in process, complete.
            small = await searched.scores(G2, question, allowed)
            assert small is not None
            assert small.complete
            assert set(small.ids.tolist()) == set(twos)
            # Recall leads with the same memory and is as sure of the same ones, all of
            # the asking chat (the guesses below may differ: the hybrid's dense order
            # past the nearest ten is the exact search's alone).
            a = await core.recall.recall(G1, question, limit=3)
            b = await other.recall.recall(G1, question, limit=3)
            assert [r.memory.id for r in b.items][:1] == [r.memory.id for r in a.items][:1]
            sure = [r.memory.id for r in a.items if r.band == "sure"]
            assert [r.memory.id for r in b.items if r.band == "sure"] == sure
            assert all(r.memory.scope == G1 for r in b.items)
            answered += bool(b.items)
        assert answered >= 2
        assert await searched.scores(G1, "小明喜欢吃什么", frozenset(twos)) is None
    finally:
        await other.close()
