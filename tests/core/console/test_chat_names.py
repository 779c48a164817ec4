"""What the console calls each chat: names the client gave (stored in `chat_names`),
renames, blank names ignored, a private chat's nickname from the archive, and the
demo world's names on the overview."""

from __future__ import annotations

from datetime import timedelta

from memory_core import FakeClock, Yuji
from memory_core.cli.demo_world import load_demo
from memory_core.types import NewExperience


async def test_names_are_stored_renamed_and_never_blanked(core: Yuji, clock: FakeClock) -> None:
    names = core.console.names
    assert await core.console.name_chats({"group:1": "猫咪互助", "group:2": "  "}) == 1
    assert await names.names(["group:1", "group:2", "group:3"]) == {"group:1": "猫咪互助"}
    clock.advance(timedelta(minutes=1))
    assert await core.console.name_chats({"group:1": "猫咪互助"}) == 0  # nothing new
    assert await core.console.name_chats({"group:1": "猫咪互助会 2.0", "group:2": ""}) == 1
    assert await core.console.chat_name("group:1") == "猫咪互助会 2.0"
    assert await core.console.chat_name("group:2") == ""


async def test_a_private_chat_is_called_by_its_persons_latest_nickname(core: Yuji) -> None:
    def said(i: int, sender: str, *, is_bot: bool = False) -> NewExperience:
        return NewExperience(
            scope="private:42",
            fingerprint=f"m{i}",
            sender_id="1" if is_bot else "42",
            sender_name=sender,
            text="在吗",
            sent_at=core.clock.now(),
            is_bot=is_bot,
        )

    await core.archive.append_many(
        [said(1, "老名字"), said(2, "新名字"), said(3, "鱼", is_bot=True)]
    )
    await core.archive.flush()
    assert await core.console.chat_name("private:42") == "新名字"
    await core.console.name_chats({"private:42": "备注名"})  # the friend list's remark wins
    assert await core.console.chat_name("private:42") == "备注名"


async def test_the_demo_world_names_its_chats_on_the_overview(core: Yuji) -> None:
    await load_demo(core)
    rows = {c.scope: c.name for c in (await core.console.overview()).chats}
    assert rows == {"group:900001": "周末猫友会", "private:20002": "阿珍"}


async def test_the_overview_says_why_a_backlog_stays_without_a_model(core: Yuji) -> None:
    await load_demo(core)
    overview = await core.console.overview()
    assert any(c.pending for c in overview.chats)
    assert overview.halted is not None
    assert "没有配置整理用的模型" in overview.halted
