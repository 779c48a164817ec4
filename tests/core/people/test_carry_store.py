"""Carrying's storage on each backend (memory_core/storage/people/carry_repo.py): a
person's choices with their defaults, a chat's block, memberships from the person index
(seen speaking, not a mention; a leave seen after), and the candidates read for the
rule (their own words only, current, not relations, not superseded or forgotten)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

from memory_core import EvidenceRef, NewExperience, Yuji
from memory_core.storage import CarryChoice, CarryRepo

T0 = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)
A, B, P = "group:1", "group:2", "private:7"
_fp = itertools.count(1)


async def say(core: Yuji, scope: str, sender: str, name: str, text: str, **kw: Any) -> int:
    return await core.archive.append(
        NewExperience(
            scope=scope,
            fingerprint=f"c{next(_fp)}",
            sender_id=sender,
            sender_name=name,
            text=text,
            segments=[*kw.pop("segments", []), {"type": "text", "data": {"text": text}}],
            sent_at=kw.pop("at", T0),
            **kw,
        )
    )


async def remember(core: Yuji, scope: str, subject: str, content: str, *evidence: int, **kw: Any):
    written = await core.memories.write(
        scope,
        type=kw.pop("type", "fact"),
        subject=subject,
        content=content,
        evidence=[EvidenceRef(experience_id=e) for e in evidence],
        **kw,
    )
    return written.memory


async def test_choices_default_to_private_on_groups_off_and_change_one_at_a_time(
    core: Yuji,
) -> None:
    repo = CarryRepo(core.db)
    assert await repo.choice("qq", "7") == CarryChoice(True, False, None)
    now = core.clock.now()
    await repo.choose("qq", "7", now, into_groups=True)
    assert await repo.choice("qq", "7") == CarryChoice(True, True, now)
    await repo.choose("qq", "7", now, into_private=False)
    assert await repo.choice("qq", "7") == CarryChoice(False, True, now)
    assert await repo.choice("telegram", "7") == CarryChoice()  # per platform
    assert await repo.choice("qq", "8") == CarryChoice()


async def test_a_block_is_per_chat_and_lifted_by_unblock(core: Yuji) -> None:
    await core.carrying.block(B, "99")
    await core.carrying.block(B, "98")  # a second block keeps the first
    found = await core.carrying.repo.blocked(B)
    assert found is not None
    assert found.blocked_by == "99"
    assert not await core.carrying.blocked(A)
    await core.carrying.unblock(B)
    assert not await core.carrying.blocked(B)


async def test_memberships_are_the_chats_spoken_in_until_a_leave(core: Yuji) -> None:
    await say(core, A, "7", "小明", "大家好")
    await say(core, P, "7", "小明", "在吗")
    # In B he is only @-mentioned: not a sign he is in it.
    mention = [{"type": "at", "data": {"qq": "7", "name": "小明"}}]
    await say(core, B, "8", "阿花", "@小明 你好", segments=mention)
    repo = CarryRepo(core.db)
    found = await repo.memberships("qq", "7")
    assert [(m.scope, m.left_at) for m in found] == [(A, None), (P, None)]
    await core.carrying.left(A, "7", T0 + timedelta(hours=1))
    [a, _] = await repo.memberships("qq", "7")
    assert a.left_at == T0 + timedelta(hours=1)
    assert a.last_spoke == T0


async def test_candidates_are_their_own_current_words_only(core: Yuji) -> None:
    own = await say(core, A, "7", "小明", "我下个月搬去成都")
    other = await say(core, A, "8", "阿花", "小明欠我五百块")
    bot = await say(core, A, "999", "大肥鱼", "好的", is_bot=True)
    moving = await remember(core, A, "小明", "小明下个月搬去成都", own)
    await remember(core, A, "小明", "小明欠阿花五百块", other)  # hearsay
    await remember(core, A, "小明", "小明说好的", own, bot)  # self: not self-only
    await remember(core, A, "小明", "小明和阿花是室友", own, type="relation")
    gone = await remember(core, A, "小明", "小明喜欢吃辣", own)
    await core.memories.retract(A, gone.id, reason="test", changed_by="admin")
    old = await remember(core, A, "小明", "小明住在杭州", own)
    new = await remember(core, A, "小明", "小明住在成都", own)
    await core.memories.supersede(A, old.id, new.id, reason="搬家", changed_by="model")
    later = await remember(
        core, A, "小明", "小明明年去读研", own, valid_from=core.clock.now() + timedelta(days=9)
    )
    found = await core.carrying.repo.candidates("7", [A, B], core.clock.now())
    ids = {m.id for m in found}
    assert moving.id in ids
    assert new.id in ids
    assert ids.isdisjoint({gone.id, old.id, later.id})
    assert {m.content for m in found} == {"小明下个月搬去成都", "小明住在成都"}
    assert await core.carrying.repo.candidates("7", [B], core.clock.now()) == []


async def test_another_member_named_inside_his_own_name_does_not_stop_it(core: Yuji) -> None:
    own = await say(core, A, "7", "小明明", "我下个月搬家去成都")
    await say(core, A, "8", "小明", "我也想去成都")
    await say(core, P, "7", "小明明", "在吗")
    moving = await remember(core, A, "小明明", "小明明下个月搬家去成都", own)
    both = await remember(core, A, "小明明", "小明明和小明合租", own)
    others, mine = await core.carrying.repo.names_in(A, "qq", "7")
    assert (others, mine) == (frozenset({"小明"}), frozenset({"小明明"}))
    found = await core.carrying.carried(P, {"7"})
    assert [m.id for m in found] == [moving.id]  # the one naming 小明 stays in A
    assert both.id not in {m.id for m in found}
