"""Whom a chat's memories are about, on a real store (each backend): `yuji people
rebuild` resolves a store written before the person index and says what it found,
`/status` counts what it could not resolve, forgetting a person takes the memories
about them whatever name they were written by, and the awkward cases of
memory_core/people/subjects.py hold through the index (a rename, a member who left,
a Telegram name, a name of another chat's member). Nothing crosses a chat (Hypothesis)."""

from __future__ import annotations

import argparse
import asyncio
import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import update

from memory_core import EvidenceRef, NewExperience, Settings, Yuji
from memory_core.cli import people as people_cli
from memory_core.memories.outcomes import NewMemory
from memory_core.storage import ArchiveRepo
from memory_core.storage.schema import memories

T0 = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)
G1, G2, G3 = "group:1", "group:2", "group:3"
TG = "telegram-group:-100"
_fp = itertools.count(1)


def message(
    scope: str,
    sender: str,
    name: str,
    text: str = "hi",
    *,
    at: datetime = T0,
    mention: tuple[str, str] | None = None,
    **kw: Any,
) -> NewExperience:
    segments = [{"type": "at", "data": {"qq": mention[0], "name": mention[1]}}] if mention else []
    return NewExperience(
        scope=scope,
        fingerprint=f"f{next(_fp)}",
        sender_id=sender,
        sender_name=name,
        text=text,
        segments=[*segments, {"type": "text", "data": {"text": text}}],
        sent_at=at,
        **kw,
    )


async def say(core: Yuji, *args: Any, **kw: Any) -> int:
    return await core.archive.append(message(*args, **kw))


async def write(
    core: Yuji, scope: str, subject: str, *evidence: int, **kw: Any
) -> tuple[int, str | None, str | None, str | None]:
    """Write a memory; (its id, subject_kind, subject_person, word)."""
    written = await core.memories.write(
        scope,
        type="fact",
        subject=subject,
        content=f"关于{subject}的事",
        evidence=[EvidenceRef(experience_id=e) for e in evidence],
        **kw,
    )
    m = written.memory
    return m.id, m.subject_kind, m.subject_person, m.word


async def columns(core: Yuji, scope: str) -> dict[str, tuple[str | None, ...]]:
    """subject -> (subject_kind, subject_person, word) of the chat's unretracted memories."""
    return {
        m.subject: (m.subject_kind, m.subject_person, m.word)
        for m in await core.memories.newest(scope, status=None, limit=1000)
        if m.status != "retracted"
    }


async def unresolve(core: Yuji) -> None:
    """What a store written before the person index holds: no subject resolved."""
    async with core.db.write() as conn:
        await conn.execute(
            update(memories).values(subject_kind=None, subject_person=None, word=None)
        )


# --- an old store, through the command ----------------------------------------------


async def old_store(core: Yuji) -> None:
    """G1: 小明 (7), 阿花 (8, who @'s 小明 as 明明哥), the bot (999); 小红 (9) only in G2;
    G3 archived around the index (阿杰, 10), its memory written before anyone was
    indexed. Every memory's subject then unresolved (NULL)."""
    m1 = await say(core, G1, "7", "小明", "我养了一只猫叫煤球")
    m2 = await say(core, G1, "8", "阿花", "周末爬山吗", mention=("7", "明明哥"))
    m3 = await say(core, G1, "999", "大肥鱼", "好呀", is_bot=True)
    t1 = await say(core, G2, "9", "小红", "我是小红")
    for subject, evidence in [
        ("小明", m1),
        ("明明哥", m2),
        ("阿花", m2),
        ("大家", m2),
        ("大肥鱼", m3),
        ("煤球", m1),
        ("小红", m2),
        ("@55555555", m2),
    ]:
        await write(core, G1, subject, evidence)
    gone, *_ = await write(core, G1, "小明", m1)
    await core.memories.retract(G1, gone, reason="test", changed_by="admin")
    await write(core, G2, "小红", t1)
    await unresolve(core)
    [old] = await ArchiveRepo(core.db).insert_many([message(G3, "10", "阿杰", "我是阿杰")], [T0])
    assert (await write(core, G3, "阿杰", old.id))[1:] == ("thing", None, None)


RESOLVED_G1 = {
    "小明": ("person", "7", "self-only"),
    "明明哥": ("person", "7", "hearsay"),  # a name others @ him by, in 阿花's message
    "阿花": ("person", "8", "self-only"),
    "大家": ("group", None, None),
    "大肥鱼": ("bot", None, None),
    "煤球": ("thing", None, None),
    "小红": ("unresolved", None, None),  # she is 小红 of group 2, no one here
    "@55555555": ("unresolved", None, None),
}


def run(argv: list[str]) -> int:
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


def test_the_rebuild_resolves_an_old_stores_subjects_once(
    store_env: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    async def in_core(work: Any) -> Any:
        core = await Yuji.open(store_env)
        try:
            return await work(core)
        finally:
            await core.close()

    async def before(core: Yuji) -> str:
        await old_store(core)
        assert set((await columns(core, G1)).values()) == {(None, None, None)}
        return await core.chat_commands.status(G1)

    assert "认不出对象的记忆：0 条；另有 8 条还没认过（yuji people rebuild）" in asyncio.run(
        in_core(before)
    )
    capsys.readouterr()
    assert run(["people", "rebuild"]) == 0
    out = capsys.readouterr().out
    assert (
        "记忆的对象（3 个聊天）：人 5 条、整个群 1 条、机器人 1 条、物 1 条、认不出 2 条；"
        "这次改了 10 条"
    ) in out

    async def after(core: Yuji) -> tuple[Any, ...]:
        return (
            await columns(core, G1),
            await columns(core, G2),
            await columns(core, G3),
            await core.chat_commands.status(G1),
            [v.reason for v in await core.memories.history(G1, 1)],
        )

    g1, g2, g3, status, history = asyncio.run(in_core(after))
    assert g1 == RESOLVED_G1
    assert g2 == {"小红": ("person", "9", "self-only")}
    assert g3 == {"阿杰": ("person", "10", "self-only")}
    assert "认不出对象的记忆：2 条" in status
    assert "还没认过" not in status
    assert history == ["written", "subject resolved"]  # a new version, the old one kept

    assert run(["people", "rebuild"]) == 0
    again = capsys.readouterr().out
    assert "人物索引已是最新" in again
    assert "人 5 条、整个群 1 条、机器人 1 条、物 1 条、认不出 2 条；这次改了 0 条" in again
    assert asyncio.run(in_core(after))[:3] == (g1, g2, g3)


# --- /status --------------------------------------------------------------------------


async def test_status_counts_unresolved_and_not_yet_resolved_subjects(core: Yuji) -> None:
    m1 = await say(core, G1, "7", "小明")
    t1 = await say(core, G2, "9", "小红")
    lines = (await core.chat_status.scope_status(G1)).extra or {}
    assert lines["认不出对象的记忆"] == "0 条"
    await write(core, G1, "小红", m1)  # of group 2
    await write(core, G1, "阿大", m1, subject_kind="person")
    await write(core, G1, "小明", m1)
    await write(core, G2, "路人甲", t1, subject_kind="person")  # another chat's
    gone, *_ = await write(core, G1, "@12345678", m1)
    await core.memories.retract(G1, gone, reason="test", changed_by="admin")
    assert "认不出对象的记忆：2 条" in await core.chat_commands.status(G1)
    async with core.db.write() as conn:
        await conn.execute(
            update(memories).where(memories.c.subject == "小明").values(subject_kind=None)
        )
    assert "认不出对象的记忆：2 条；另有 1 条还没认过" in await core.chat_commands.status(G1)
    counts = await core.memories.resolve_subjects(G1)
    assert (counts["person"], counts["unresolved"], counts["changed"]) == (1, 2, 1)
    assert "认不出对象的记忆：2 条\n" in await core.chat_commands.status(G1) + "\n"


# --- forgetting -----------------------------------------------------------------------


async def test_forgetting_a_person_retracts_what_is_about_them_by_any_name(core: Yuji) -> None:
    m1 = await say(core, G1, "7", "小明", "我养猫")
    m2 = await say(core, G1, "8", "阿花", "他人不错", mention=("7", "明明哥"))
    by_mention, *_ = await write(core, G1, "明明哥", m2)  # a name only others @ him by
    by_id, *_ = await write(core, G1, "爬山的那位", m2, subject_id="7")
    own, *_ = await write(core, G1, "小明", m1)
    hers, *_ = await write(core, G1, "阿花", m2)
    there = await say(core, G2, "7", "小明")
    elsewhere, *_ = await write(core, G2, "小明", there)
    assert (await columns(core, G1))["明明哥"] == ("person", "7", "hearsay")

    report = await core.porting.forget_person(G1, "7", requested_by="7")

    assert set(report.memory_ids) == {by_mention, by_id, own}
    assert report.memories_retracted == 3
    assert {m.id for m in await core.memories.newest(G1)} == {hers}
    assert {m.id for m in await core.memories.newest(G2)} == {elsewhere}
    # his own names here are gone from the index; others' @ of him stay, as theirs
    left = await core.people.in_chat(G1)
    assert {n.name for p in left if p.person.user_id == "7" for n in p.names} == {"明明哥"}


# --- the awkward cases through the index -----------------------------------------------


async def test_a_renamed_member_and_a_newcomer_with_the_old_name(core: Yuji) -> None:
    a = await say(core, G1, "7", "小明", at=T0)
    await say(core, G1, "7", "鱼丸", at=T0 + timedelta(days=1))
    b = await say(core, G1, "8", "小明", at=T0 + timedelta(days=2))
    assert (await write(core, G1, "小明", b))[1:3] == ("person", "8")
    assert (await write(core, G1, "鱼丸", a))[1:3] == ("person", "7")
    await say(core, G1, "8", "阿八", at=T0 + timedelta(days=3))  # neither goes by it now
    assert (await write(core, G1, "小明", b))[1:3] == ("unresolved", None)
    # a memory resolved before stays with its person when the chat re-reads it
    counts = await core.memories.resolve_subjects(G1)
    assert counts["changed"] == 0
    assert [m.subject_person for m in await core.memories.newest(G1)] == [None, "7", "8"]


async def test_a_member_who_left_long_ago_still_answers_to_their_names(core: Yuji) -> None:
    old = await say(core, G1, "7", "老王", at=T0 - timedelta(days=400))
    for day in range(3):
        await say(core, G1, "8", "阿花", at=T0 + timedelta(days=day))
    assert (await write(core, G1, "老王", old))[1:] == ("person", "7", "self-only")
    assert (await write(core, G1, "7", old))[1:3] == ("person", "7")


async def test_a_telegram_user_without_a_username(core: Yuji) -> None:
    """The plugin names them by first and last name (telegram_convert.user_name)."""
    said = await say(core, TG, "123456789", "Ann Lee", "hello")
    assert (await write(core, TG, "Ann Lee", said))[1:] == ("person", "123456789", "self-only")
    assert (await write(core, TG, "ann  lee", said))[1:3] == ("person", "123456789")
    assert (await write(core, TG, "她", said, subject_id="123456789"))[1:3] == (
        "person",
        "123456789",
    )
    assert (await write(core, TG, "Ann", said))[1] == "thing"  # a part of a name is none
    assert (await write(core, TG, "123456789", said))[1:3] == ("person", "123456789")


async def test_the_bot_by_at_account_and_nickname(core: Yuji) -> None:
    said = await say(core, G1, "8", "阿花", "@大肥鱼 你好", mention=("999", "大肥鱼"))
    await say(core, G1, "999", "大肥鱼", "你好", is_bot=True)
    assert (await write(core, G1, "@999", said))[1:] == ("bot", None, None)
    assert (await write(core, G1, "大肥鱼", said))[1:] == ("bot", None, None)
    assert (await write(core, G1, "机器人", said))[1] == "bot"
    # its own lines and a reply quoting it are no member's word
    line = await say(core, G1, "8", "阿花", "我喜欢猫")
    assert (await write(core, G1, "阿花", said, line))[3] == "self-only"
    answer = await say(core, G1, "999", "大肥鱼", "阿花喜欢猫", is_bot=True)
    assert (await write(core, G1, "阿花", line, answer))[3] == "self"


async def test_a_memory_resting_on_a_memory_is_never_self_only(core: Yuji) -> None:
    own = await say(core, G1, "7", "小明", "我养猫")
    first, *_ = await write(core, G1, "小明", own)
    [derived] = await core.memories.write_many(
        G1,
        [
            NewMemory(
                type="fact",
                subject="小明",
                content="小明是猫奴",
                evidence=[EvidenceRef(experience_id=own), EvidenceRef(memory_id=first)],
            )
        ],
    )
    assert (derived.memory.subject_person, derived.memory.word) == ("7", "self")


# --- nothing crosses a chat (property) -----------------------------------------------

NAMES = ("小明", "阿花", "鱼丸", "Alice", "煤球", "路人")
SENDERS = ("7", "8", "9")
SCOPES = (G1, G2, "private:7")
PROPS = settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@PROPS
@given(
    said=st.lists(
        st.tuples(st.sampled_from(SCOPES), st.sampled_from(SENDERS), st.sampled_from(NAMES)),
        min_size=1,
        max_size=6,
    ),
    subjects=st.lists(
        st.tuples(
            st.sampled_from(SCOPES),
            st.one_of(st.sampled_from(NAMES), st.sampled_from(SENDERS)),
            st.one_of(st.none(), st.sampled_from(SENDERS)),
        ),
        min_size=1,
        max_size=6,
    ),
)
async def test_no_memory_is_about_someone_of_another_chat(
    core: Yuji,
    said: list[tuple[str, str, str]],
    subjects: list[tuple[str, str, str | None]],
) -> None:
    # members with random (shared, changing) names in random chats; each chat one
    # message at least, as evidence
    for scope, sender, name in said:
        await say(core, scope, sender, name, at=T0 + timedelta(minutes=next(_fp)))
    evidence = {scope: await say(core, scope, "1", "旁人") for scope in SCOPES}
    for scope, subject, subject_id in subjects:
        kind, person, _word = (
            await write(core, scope, subject, evidence[scope], subject_id=subject_id)
        )[1:]
        members = {p.person.user_id for p in await core.people.in_chat(scope)}
        assert person is None or person in members
        if subject_id is not None:
            assert person in (subject_id, None)
            assert (kind == "person") == (subject_id in members)
