"""`yuji people rebuild` on a store archived without the index gives exactly the index
the writer fills, resumes after an interruption, and folds the aliases in; `yuji people
show` lists a chat's persons (memory_core/people/service.py, memory_core/cli/people.py).
On each backend."""

from __future__ import annotations

import argparse
import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from memory_core import NewExperience, Settings, Yuji
from memory_core.cli import people as people_cli
from memory_core.people.observe import observe
from memory_core.storage import ArchiveRepo, NameSeen
from memory_core.storage.schema import person_names, persons

T0 = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)
G1, G2 = "group:1", "group:2"


def said(
    n: int, scope: str, sender: str, name: str, minutes: int, *mentions: tuple[str, str], **kw: Any
) -> NewExperience:
    segments = [{"type": "at", "data": {"qq": qq, "name": shown}} for qq, shown in mentions]
    return NewExperience(
        scope=scope,
        fingerprint=f"m{n}",
        sender_id=sender,
        sender_name=name,
        text=f"第{n}条",
        segments=[*segments, {"type": "text", "data": {"text": f"第{n}条"}}],
        sent_at=T0 + timedelta(minutes=minutes),
        **kw,
    )


CHATTER = [
    [said(1, G1, "7", "小明", 0), said(2, G1, "8", "阿花", 0, ("7", "@明明"))],
    [said(3, G1, "7", "Alice", 5), said(4, G2, "7", "小明", 5)],
    # one instant, two spellings of one name: the tie goes the same way in any batching
    [said(5, G1, "7", "alice", 5)],
    [said(6, G1, "999", "大肥鱼", 6, ("8", "阿花"), is_bot=True, account="999")],
    [said(7, "private:8", "8", "花花", 7, account="999"), said(8, G1, "8", "阿花花", 9)],
    [said(9, "telegram-group:-100", "7", "Seven", 9), said(10, G2, "9", "路人", 1)],
]
MESSAGES = sum(len(b) for b in CHATTER)


async def archive(core: Yuji) -> None:
    for batch in CHATTER:  # one writer transaction each
        await core.archive.append_many(batch)


async def index(core: Yuji) -> tuple[set[tuple[Any, ...]], set[tuple[Any, ...]]]:
    """The whole index, by platform and user id (row ids differ between fillings)."""
    p, n = persons.c, person_names.c
    async with core.db.read() as conn:
        people = {
            tuple(r)
            for r in await conn.execute(
                select(p.platform, p.user_id, p.is_bot, p.first_seen, p.last_seen)
            )
        }
        names = {
            tuple(r)
            for r in await conn.execute(
                select(
                    p.platform,
                    p.user_id,
                    n.scope,
                    n.name,
                    n.normalised,
                    n.source,
                    n.first_seen,
                    n.last_seen,
                ).join(persons, p.id == n.person_id)
            )
        }
    return people, names


async def test_the_rebuild_gives_exactly_the_index_the_writer_filled(core: Yuji) -> None:
    await archive(core)
    filled = await index(core)
    assert (len(filled[0]), len(filled[1])) == (5, 11)
    await core.people.repo.clear()
    assert await index(core) == (set(), set())
    report = await core.people.rebuild(batch=3)
    assert (report.messages, report.batches, report.complete) == (MESSAGES, 4, True)
    assert await index(core) == filled
    again = await core.people.rebuild(batch=3)  # nothing new: nothing changes
    assert (again.messages, again.batches) == (0, 0)
    assert await index(core) == filled
    # and over the index the writer filled, a rebuild from the start changes nothing
    await core.people.rebuild(batch=2, from_start=True)
    assert await index(core) == filled


async def test_rows_archived_around_the_index_are_indexed_by_the_rebuild(core: Yuji) -> None:
    """Rows written by the archive's repository alone (a store older than the index):
    the rebuild gives what observe.py says the archive shows."""
    rows = [m for batch in CHATTER for m in batch]
    await ArchiveRepo(core.db).insert_many(rows, [T0] * len(rows))
    assert await index(core) == (set(), set())
    await core.people.rebuild()
    seen = observe(await core.people.repo.heard_after(0, 1000))
    assert await index(core) == (
        {(p.platform, p.user_id, p.is_bot, p.first_seen, p.last_seen) for p in seen.persons},
        {
            (n.platform, n.user_id, n.scope, n.name, n.normalised, n.source, *_times(n))
            for n in seen.names
        },
    )


def _times(n: NameSeen) -> tuple[datetime, datetime]:
    return n.first_seen, n.last_seen


async def test_an_interrupted_rebuild_continues_where_it_stopped(core: Yuji) -> None:
    await archive(core)
    filled = await index(core)
    await core.people.repo.clear()
    first = await core.people.rebuild(batch=4, max_batches=1)
    assert (first.messages, first.complete, first.aliases) == (4, False, 0)
    assert (await core.people.progress())[0] == first.last_id
    partial = await index(core)
    assert partial != filled
    second = await core.people.rebuild(batch=4)
    assert (second.started_after, second.messages, second.complete) == (
        first.last_id,
        MESSAGES - 4,
        True,
    )
    assert await index(core) == filled


async def test_the_rebuild_folds_the_aliases_in(core: Yuji) -> None:
    await archive(core)
    await core.memories.add_alias(G1, "明哥", "小明")
    await core.memories.add_alias(G1, "花", "阿花")
    await core.memories.add_alias(G2, "小明同学", "小明")
    report = await core.people.rebuild()
    assert report.aliases == 3
    seven = await core.people.person_of("qq", "7")
    assert seven is not None
    assert "明哥" in {n.name for n in await core.people.names_of(G1, seven) if n.source == "alias"}
    assert [p.user_id for p in await core.people.who(G1, "花")] == ["8"]
    assert [p.user_id for p in await core.people.who(G2, "小明同学")] == ["7"]
    assert await core.people.who(G2, "明哥") == []


# --- the command ---------------------------------------------------------------------


def run(argv: list[str]) -> int:
    """`yuji people ...` through its own parser (memory_core/cli/people.py)."""
    parser = argparse.ArgumentParser(prog="yuji")
    people_cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return asyncio.run(args.func(args))


@pytest.fixture
def store_env(settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.chdir(tmp_path)  # no stray .env
    monkeypatch.setenv("YUJI_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("YUJI_VECTOR_MODE", "off")
    if settings.database_url:
        monkeypatch.setenv("YUJI_DATABASE_URL", settings.database_url)
    else:
        monkeypatch.delenv("YUJI_DATABASE_URL", raising=False)
    return settings


def test_the_command_rebuilds_resumes_and_shows(
    store_env: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    async def fill() -> None:
        core = await Yuji.open(store_env)
        try:
            await archive(core)
            await core.people.repo.clear()
            await core.people.rebuild(batch=5, max_batches=1)  # a run that was stopped
        finally:
            await core.close()

    asyncio.run(fill())
    capsys.readouterr()
    assert run(["people", "rebuild", "--batch", "2"]) == 0
    out = capsys.readouterr().out
    assert "接着上次：存档到第 5 条消息为止已经建好" in out
    assert f"读了 {MESSAGES - 5} 条消息（3 批），建到存档第 {MESSAGES} 条" in out
    assert "索引里现有 5 人、11 个名字" in out
    assert run(["people", "rebuild"]) == 0
    assert "人物索引已是最新" in capsys.readouterr().out
    assert run(["people", "show", G1]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[0] == "group:1 里的人（3 个，最近出现的在前）："
    assert "qq 999（机器人）" in shown
    assert "  明明〔被@时〕2026-11-20 19:00 至 2026-11-20 19:00" in shown
    assert run(["people", "show", "group:404"]) == 0
    assert "group:404 里还没有索引到人" in capsys.readouterr().out
