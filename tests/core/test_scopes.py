"""Chats of different platforms are different scopes and never meet (docs/design.md#scopes).

Properties of the grammar over any ids (a Telegram chat with a QQ group's digits, signed
or not, is another scope; every form parses back to itself), and, on a real store,
recall and the archive of a QQ group and of the Telegram supergroup with its digits
each see their own chat only.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core import (
    Yuji,
    chat_label,
    group_scope,
    is_group_scope,
    parse_scope,
    platform_name,
    private_scope,
)
from memory_core import scope_platform as platform_of

from .test_recall import write

IDS = st.integers(min_value=1, max_value=10**19 - 1)
PLATFORMS = st.from_regex(r"[a-z][a-z0-9]{0,15}", fullmatch=True)


@given(IDS, PLATFORMS)
def test_a_platform_chat_with_the_same_digits_is_another_scope(n: int, platform: str) -> None:
    qq = {group_scope(n), private_scope(n)}
    other = {
        group_scope(n, platform),
        group_scope(-n, platform),
        private_scope(n, platform),
        private_scope(-n, platform),
    }
    assert len(qq) == 2
    assert len(other) == 4
    assert not qq & other
    for scope in qq | other:
        assert parse_scope(scope) == scope
    assert {platform_of(s) for s in qq} == {"qq"}
    assert {platform_of(s) for s in other} == {platform}
    assert is_group_scope(group_scope(n))
    assert is_group_scope(group_scope(-n, platform))
    assert not is_group_scope(private_scope(n))
    assert not is_group_scope(private_scope(n, platform))


@given(st.integers(min_value=-(10**19) + 1, max_value=0))
def test_qq_chats_keep_positive_ids(n: int) -> None:
    with pytest.raises(ValueError, match="not a chat id"):
        parse_scope(group_scope(n))


@given(IDS, st.text(max_size=20))
def test_a_chat_label_says_the_platform_before_anything_else(n: int, name: str) -> None:
    """The diary prompt and the console call a chat by its label: the same digits on two
    platforms never read alike, whatever the chats are named."""
    qq, telegram = group_scope(n), group_scope(-n, "telegram")
    assert chat_label(qq, name).startswith("QQ 群")
    assert chat_label(telegram, name).startswith("Telegram 群")
    assert chat_label(private_scope(n, "telegram")).startswith("Telegram 私聊")
    assert chat_label(qq, name) != chat_label(telegram, name)
    assert chat_label(telegram, name).endswith(f"({telegram})")
    assert (f"「{name}」" in chat_label(qq, name)) == bool(name)
    assert platform_name(group_scope(n, "discord")) == "discord"


async def test_recall_and_the_archive_keep_a_qq_group_and_a_telegram_group_apart(
    core: Yuji,
) -> None:
    qq, telegram = group_scope(100123456), group_scope(-100123456, "telegram")
    ours = await write(core, qq, "小明下周五要去成都参加马拉松比赛")
    theirs = await write(core, telegram, "小明下周六要去厦门看海边音乐节")
    assert [
        r.memory.id for r in (await core.recall.recall(qq, "小明要去成都参加马拉松吗")).items
    ] == [ours]
    assert [
        r.memory.id for r in (await core.recall.recall(telegram, "小明要去厦门看音乐节吗")).items
    ] == [theirs]
    # Asked in the other chat, each question finds at most its own chat's memory (as a
    # weak, related one since recall v4 keeps the hybrid's top), never the other's.
    across = (await core.recall.recall(qq, "小明要去厦门看音乐节吗")).items
    assert [(r.memory.id, r.band) for r in across] in ([], [(ours, "related")])
    across = (await core.recall.recall(telegram, "小明要去成都参加马拉松吗")).items
    assert [(r.memory.id, r.band) for r in across] in ([], [(theirs, "related")])
    assert [e.text for e in await core.archive.recent(qq, 10)] == [
        "小明下周五要去成都参加马拉松比赛"
    ]
    assert [e.text for e in await core.archive.recent(telegram, 10)] == [
        "小明下周六要去厦门看海边音乐节"
    ]
