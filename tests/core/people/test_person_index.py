"""The person index filled in the archive writer's transaction, on each backend (a
SQLite file, PostgreSQL 18 and 15): memory_core/people/service.py,
memory_core/storage/people/."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event

from memory_core import NewExperience, Yuji
from memory_core.storage import NameSeen, PeopleRepo, PersonName

T0 = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)
G1, G2 = "group:1", "group:2"
_fp = iter(range(1, 1_000_000))


def said(
    scope: str = G1,
    sender_id: str = "7",
    name: str = "小明",
    *,
    at: datetime = T0,
    segments: Sequence[dict[str, Any]] = (),
    **kw: Any,
) -> NewExperience:
    return NewExperience(
        scope=scope,
        fingerprint=str(next(_fp)),
        sender_id=sender_id,
        sender_name=name,
        text="hi",
        segments=[*segments, {"type": "text", "data": {"text": "hi"}}],
        sent_at=at,
        **kw,
    )


def shown(names: Sequence[PersonName]) -> list[tuple[str, str, datetime, datetime]]:
    return [(n.name, n.source, n.first_seen, n.last_seen) for n in names]


async def test_a_message_makes_its_sender_a_person_with_their_name_here(core: Yuji) -> None:
    await core.archive.append(said())
    person = await core.people.person_of("qq", "7")
    assert person is not None
    assert (person.is_bot, person.first_seen, person.last_seen) == (False, T0, T0)
    assert shown(await core.people.names_of(G1, person)) == [("小明", "card", T0, T0)]
    later = T0 + timedelta(hours=2)
    await core.archive.append(said(at=later))
    again = await core.people.person_of("qq", "7")
    assert again is not None
    assert (again.id, again.first_seen, again.last_seen) == (person.id, T0, later)
    assert shown(await core.people.names_of(G1, person)) == [("小明", "card", T0, later)]


async def test_a_rename_adds_a_name_and_the_old_one_keeps_its_last_sighting(
    core: Yuji,
) -> None:
    t1, t2 = T0 + timedelta(days=1), T0 + timedelta(days=2)
    await core.archive.append_many([said(at=T0), said(at=t1)])
    await core.archive.append(said(name="鱼丸", at=t2))
    person = await core.people.person_of("qq", "7")
    assert person is not None
    assert shown(await core.people.names_of(G1, person)) == [
        ("鱼丸", "card", t2, t2),
        ("小明", "card", T0, t1),
    ]


async def test_the_bots_own_lines_mark_its_account_as_the_bot(core: Yuji) -> None:
    await core.archive.append(said(sender_id="999", name="大肥鱼", is_bot=True))
    await core.archive.append(said(sender_id="8", name="阿花", account="998"))
    assert {p.user_id for p in await core.people.bots()} == {"999", "998"}
    [fish] = await core.people.who(G1, "大肥鱼")
    assert (fish.user_id, fish.is_bot) == ("999", True)


async def test_a_mention_records_the_name_it_showed_for_that_id(core: Yuji) -> None:
    mention = {"type": "at", "data": {"qq": "8", "name": "@阿花"}}
    await core.archive.append(said(segments=[mention]))
    person = await core.people.person_of("qq", "8")
    assert person is not None
    assert shown(await core.people.names_of(G1, person)) == [("阿花", "mention", T0, T0)]
    assert [p.user_id for p in await core.people.who(G1, "阿花")] == ["8"]


async def test_names_are_per_chat_and_found_by_any_spelling(core: Yuji) -> None:
    await core.archive.append_many(
        [
            said(G1, "7", "Alice"),
            said(G2, "7", "Bob"),
            said(G2, "8", "ａｌｉｃｅ"),
            said("telegram-group:-100", "7", "Alice"),
        ]
    )
    for spelling in ("alice", "ＡＬＩＣＥ", " @Alice ", "ALICE"):
        assert [(p.platform, p.user_id) for p in await core.people.who(G1, spelling)] == [
            ("qq", "7")
        ]
        assert [p.user_id for p in await core.people.who(G2, spelling)] == ["8"]
    assert await core.people.who(G1, "bob") == []
    assert await core.people.who("group:3", "alice") == []
    tg = await core.people.who("telegram-group:-100", "alice")
    assert [(p.platform, p.user_id) for p in tg] == [("telegram", "7")]
    qq7 = await core.people.person_of("qq", "7")
    assert qq7 is not None
    assert [n.name for n in await core.people.names_of(G1, qq7)] == ["Alice"]
    assert [n.name for n in await core.people.names_of(G2, qq7)] == ["Bob"]
    chat = {
        (c.person.user_id, tuple(n.name for n in c.names)) for c in await core.people.in_chat(G2)
    }
    assert chat == {("7", ("Bob",)), ("8", ("ａｌｉｃｅ",))}


async def test_one_batch_is_two_statements_whatever_its_size(core: Yuji) -> None:
    """The writer's cost is per transaction, not per message: the index adds its
    savepoint and two upserts to the batch (PostgreSQL's persons and names in one
    statement each; SQLite's within SQLITE_ROWS rows too)."""
    statements: list[str] = []
    repo = core.people.repo
    original = repo.record

    async def counting(*args: Any, **kw: Any) -> None:
        conn = kw["conn"]
        sync = conn.sync_connection

        def seen(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
            statements.append(statement)

        event.listen(sync, "before_cursor_execute", seen)
        try:
            await original(*args, **kw)
        finally:
            event.remove(sync, "before_cursor_execute", seen)

    repo.record = counting  # type: ignore[method-assign]
    mention = {"type": "at", "data": {"qq": "8", "name": "阿花"}}
    await core.archive.append_many(
        [said(sender_id=str(10 + i), name=f"友{i}", segments=[mention]) for i in range(200)]
    )
    upserts = [s for s in statements if s.lstrip().upper().startswith("INSERT")]
    assert len(upserts) == 2, statements


async def test_a_failing_index_never_fails_a_message(
    core: Yuji, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def refuse(*_args: Any, **_kw: Any) -> None:
        raise RuntimeError("index refused")

    monkeypatch.setattr(core.people.repo, "record", refuse)
    first = await core.archive.append(said())
    monkeypatch.undo()
    assert (await core.archive.get(G1, first)).sender_name == "小明"
    assert core.people.failures == 1
    assert await core.people.person_of("qq", "7") is None  # the gap the rebuild fills
    await core.archive.append(said(sender_id="8", name="阿花"))
    assert await core.people.person_of("qq", "8") is not None


async def test_a_statement_the_database_refuses_rolls_back_only_the_index(
    core: Yuji, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real refusal (a name the CHECK refuses, which ends the transaction on
    PostgreSQL): the batch is written again without the index, so its messages commit
    and the index keeps nothing of it."""
    original = PeopleRepo.record

    async def bad_source(self: PeopleRepo, persons: Any, names: Any, **kw: Any) -> None:
        names = [NameSeen(**{**_fields(n), "source": "guess"}) for n in names]
        await original(self, persons, names, **kw)

    monkeypatch.setattr(PeopleRepo, "record", bad_source)
    ids = await core.archive.append_many([said(), said(sender_id="8", name="阿花")])
    monkeypatch.undo()
    assert [(await core.archive.get(G1, i)).sender_id for i in ids] == ["7", "8"]
    assert core.people.failures == 1
    assert await core.people.person_of("qq", "7") is None
    assert await core.people.who(G1, "阿花") == []
    assert core.archive.writer.drops.total == 0


def _fields(obj: Any) -> dict[str, Any]:
    return {f: getattr(obj, f) for f in obj.__slots__}


async def test_forgetting_a_person_drops_their_own_names_in_that_chat(core: Yuji) -> None:
    mention = {"type": "at", "data": {"qq": "7", "name": "明明"}}
    await core.archive.append_many(
        [said(), said(G2, "7", "小明"), said(sender_id="8", name="阿花", segments=[mention])]
    )
    await core.porting.forget_person(G1, "7", requested_by="7")
    person = await core.people.person_of("qq", "7")
    assert person is not None
    assert shown(await core.people.names_of(G1, person)) == [("明明", "mention", T0, T0)]
    assert [n.name for n in await core.people.names_of(G2, person)] == ["小明"]
    assert await core.people.who(G1, "小明") == []


async def test_instants_are_stored_as_the_rest_of_the_schema_stores_them(core: Yuji) -> None:
    """The merges compare stored instants (as text on SQLite): the index's must be
    written exactly as SQLAlchemy writes every other (a copied or restored row meets
    the index's own), microseconds and all."""
    await core.archive.append(said(at=T0.replace(microsecond=0)))
    async with core.db.read() as conn:
        archived = await conn.exec_driver_sql("SELECT sent_at FROM experiences")
        indexed = await conn.exec_driver_sql("SELECT first_seen, last_seen FROM persons")
        named = await conn.exec_driver_sql("SELECT first_seen, last_seen FROM person_names")
        stored = archived.scalar_one()
        assert indexed.one() == (stored, stored)
        assert named.one() == (stored, stored)
