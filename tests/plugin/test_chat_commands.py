"""Every slash command under nonebug: who may run it, what it answers, and that an id
of another chat is just "not found"."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from nonebot.adapters.onebot.v11 import ActionFailed, Bot, MessageSegment
from nonebug import App
from sqlalchemy import insert

from memory_core import FakeClock, NewExperience, Settings, Yuji
from memory_core.chat.texts import ADMIN_ONLY, OWN_CARD_ONLY, SUPERUSER_ONLY
from memory_core.memories.near_duplicate import similarity
from memory_core.storage import PersonCardsRepo
from memory_core.storage.schema import cards

from .conftest import SUPERUSER
from .factories import BOT_ID, group_message, memory_in, private_message

G = 100
SCOPE = f"group:{G}"


def text(line: str) -> MessageSegment:
    return MessageSegment.text(line)


async def run(
    app: App, event: Any, answer: str, *, api: Sequence[tuple[str, Any, Any]] = ()
) -> None:
    """Send `event`; expect these API calls, then exactly `answer` as plain text."""
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, event)
        for name, data, result in api:
            ctx.should_call_api(name, data, result=result)
        ctx.should_call_send(event, text(answer), result={"message_id": 1})
        ctx.should_finished()


# --- /mute and /unmute --------------------------------------------------------------


async def test_admin_mutes_for_a_duration(app: App, yuji_core: Yuji) -> None:
    await run(
        app,
        group_message("/mute 2h", role="admin"),
        "好，我安静 2小时（到 11-20 22:00）。消息照常记着。",
    )
    state = await yuji_core.chat_state.state(SCOPE)
    assert state.muted_until == yuji_core.clock.now() + timedelta(hours=2)


async def test_mute_without_duration_lasts_until_unmute(app: App, yuji_core: Yuji) -> None:
    await run(
        app,
        group_message("/mute", role="owner"),
        "好，我先不说话了，等 /unmute 再回来。消息照常记着。",
    )
    assert await yuji_core.chat_commands.is_muted(SCOPE)
    await run(app, group_message("/unmute", role="owner"), "我回来啦。")
    assert not await yuji_core.chat_commands.is_muted(SCOPE)
    await run(app, group_message("/unmute", role="owner"), "我本来就在呀。")


async def test_member_cannot_mute_or_unmute(app: App, yuji_core: Yuji) -> None:
    await run(app, group_message("/mute", role="member"), ADMIN_ONLY)
    await run(app, group_message("/unmute", role="member"), ADMIN_ONLY)
    assert not await yuji_core.chat_commands.is_muted(SCOPE)


async def test_superuser_counts_as_admin_anywhere(app: App, yuji_core: Yuji) -> None:
    event = group_message("/mute 30m", role="member", user_id=int(SUPERUSER))
    await run(app, event, "好，我安静 30分钟（到 11-20 20:30）。消息照常记着。")


async def test_missing_role_is_asked_of_the_client(app: App, yuji_core: Yuji) -> None:
    event = group_message("/mute", role="member", user_id=321)
    event.sender.role = None
    query = {"group_id": G, "user_id": 321, "no_cache": True}
    await run(
        app,
        event,
        "好，我先不说话了，等 /unmute 再回来。消息照常记着。",
        api=[("get_group_member_info", query, {"role": "admin", "user_id": 321})],
    )


async def test_bad_duration_is_one_clear_line(app: App, yuji_core: Yuji) -> None:
    await run(
        app,
        group_message("/mute 三年", role="admin"),
        "时长看不懂，比如 /mute 30m、/mute 2h、/mute 1天",
    )
    assert not await yuji_core.chat_commands.is_muted(SCOPE)


async def test_mute_survives_a_restart(
    app: App, yuji_core: Yuji, yuji_settings: Settings, yuji_clock: FakeClock
) -> None:
    await run(
        app,
        group_message("/mute", role="admin"),
        "好，我先不说话了，等 /unmute 再回来。消息照常记着。",
    )
    reopened = await Yuji.open(yuji_settings, clock=yuji_clock)
    try:
        assert await reopened.chat_commands.is_muted(SCOPE)
    finally:
        await reopened.close()


# --- /remember and /forget ------------------------------------------------------------


async def test_remember_uses_the_command_message_as_evidence(app: App, yuji_core: Yuji) -> None:
    event = group_message("/remember 阿明下周三生日", role="admin", message_id=4242)
    await run(app, event, "记住了（#1）：阿明下周三生日")
    memory = await yuji_core.memories.get(SCOPE, 1)
    assert (memory.content, memory.origin) == ("阿明下周三生日", "admin")
    evidence = await yuji_core.memories.evidence(SCOPE, 1)
    command = await yuji_core.archive.by_fingerprint(SCOPE, "4242")
    assert command is not None
    assert [e.experience_id for e in evidence] == [command.id]


async def test_remember_hints_a_near_duplicate(app: App, yuji_core: Yuji) -> None:
    first = await memory_in(yuji_core, SCOPE, "阿明下周三过生日")
    event = group_message("/remember 阿明下周三过生日啦", role="admin")
    score = similarity("阿明下周三过生日啦", "阿明下周三过生日")
    assert score >= yuji_core.settings.near_duplicate_threshold
    await run(
        app,
        event,
        f"记住了（#{first + 1}）：阿明下周三过生日啦\n"
        f"和 #{first} 很像（相似度 {score:.2f}）：阿明下周三过生日\n"
        f"要是重复了，用 /forget {first + 1} 去掉新的这条。",
    )


async def test_remember_needs_text_and_an_admin(app: App, yuji_core: Yuji) -> None:
    await run(app, group_message("/remember", role="admin"), "用法：/remember <要记住的话>")
    await run(app, group_message("/remember 我是群主", role="member"), ADMIN_ONLY)
    assert await yuji_core.memories.newest(SCOPE) == []


async def test_forget_retracts_a_memory_of_this_group(app: App, yuji_core: Yuji) -> None:
    memory_id = await memory_in(yuji_core, SCOPE, "阿明爱吃辣")
    await run(
        app,
        group_message(f"/forget {memory_id}", role="admin"),
        f"好，#{memory_id} 以后不会再想起了（记录还留着）：阿明爱吃辣",
    )
    assert (await yuji_core.memories.get(SCOPE, memory_id)).status == "retracted"
    await run(
        app, group_message(f"/forget {memory_id}", role="admin"), f"#{memory_id} 早就忘掉了。"
    )


async def test_forget_an_id_of_another_group_is_not_found(app: App, yuji_core: Yuji) -> None:
    foreign = await memory_in(yuji_core, "group:999", "别的群的秘密")
    await run(
        app,
        group_message(f"/forget {foreign}", role="admin"),
        "找不到这条记忆（只能查这个聊天里的）。",
    )
    assert (await yuji_core.memories.get("group:999", foreign)).status == "active"
    await run(
        app, group_message("/forget 424242", role="admin"), "找不到这条记忆（只能查这个聊天里的）。"
    )


async def test_forget_bad_id_and_non_admin(app: App, yuji_core: Yuji) -> None:
    await run(
        app, group_message("/forget abc", role="admin"), "用法：/forget <记忆编号>，比如 /forget 12"
    )
    memory_id = await memory_in(yuji_core, SCOPE, "阿明爱吃辣")
    await run(app, group_message(f"/forget {memory_id}", role="member"), ADMIN_ONLY)
    assert (await yuji_core.memories.get(SCOPE, memory_id)).status == "active"


# --- /cards, /recall, /why --------------------------------------------------------------


async def test_cards_before_and_after_the_nightly_job(app: App, yuji_core: Yuji) -> None:
    await run(app, group_message("/cards"), "还没有记忆卡片，每晚整理过后才会有。")
    async with yuji_core.db.write() as conn:
        await conn.execute(
            insert(cards).values(
                scope=SCOPE,
                kind="preferences",
                version=1,
                content="阿明爱吃辣",
                day="2026-11-19",
                created_at=yuji_core.clock.now(),
            )
        )
    await run(app, group_message("/cards"), "【偏好】阿明爱吃辣")
    await run(app, group_message("/cards", group_id=999), "还没有记忆卡片，每晚整理过后才会有。")


async def test_recall_shows_what_would_be_injected_with_stage_tags(
    app: App, yuji_core: Yuji
) -> None:
    memory_id = await memory_in(yuji_core, SCOPE, "阿明的撤离率是 20%")
    await memory_in(yuji_core, SCOPE, "小红喜欢吃火锅")
    await memory_in(yuji_core, SCOPE, "群里周五晚上开黑")
    await memory_in(yuji_core, "group:999", "另一个群的撤离率是 90%")
    answer = await yuji_core.chat_commands.recall_preview(SCOPE, "撤离率是多少")
    assert answer.startswith(f"这句话我会想起：\n#{memory_id}〔字面命中")
    assert "90%" not in answer
    await run(app, group_message("/recall 撤离率是多少"), answer)
    await run(app, group_message("/recall"), "用法：/recall <问题>，看看这句话会让我想起什么")
    await run(app, group_message("/recall 完全无关的话题xyz"), "这句话我想不起任何记忆。")


async def test_why_before_any_reply(app: App, yuji_core: Yuji) -> None:
    await run(app, group_message("/why"), "我在这里还没回过话。")


# --- /backfill ------------------------------------------------------------------------------


def history_item(message_id: int, content: str, user_id: int = 200) -> dict[str, Any]:
    return {
        "message_id": message_id,
        "message_seq": message_id,
        "time": 1_795_000_000 + message_id,
        "group_id": G,
        "sender": {"user_id": user_id, "nickname": "群友", "card": ""},
        "message": [{"type": "text", "data": {"text": content}}],
    }


async def test_backfill_stores_only_new_messages(app: App, yuji_core: Yuji) -> None:
    await yuji_core.archive.append(
        NewExperience(
            scope=SCOPE, fingerprint="2", sender_id="200", text="二", sent_at=yuji_core.clock.now()
        )
    )
    page = {"messages": [history_item(1, "一"), history_item(2, "二"), history_item(3, "三")]}
    event = group_message("/backfill 50", role="admin", message_id=9000)
    first = {"group_id": G, "count": 50, "reverse_order": False}
    second = {**first, "message_seq": 1}
    await run(
        app,
        event,
        "补拉了 3 条历史消息：新存 2 条，已有 1 条。",
        api=[
            ("get_group_msg_history", first, page),
            ("get_group_msg_history", second, {"messages": [history_item(1, "一")]}),
        ],
    )
    stored = {e.fingerprint: e for e in await yuji_core.archive.recent(SCOPE, 50)}
    assert stored["1"].source == "backfill"
    assert stored["2"].source == "realtime"
    assert stored["3"].text == "三"


async def test_backfill_when_the_client_lacks_the_api(app: App, yuji_core: Yuji) -> None:
    event = group_message("/backfill", role="admin")
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, event)
        for data in (
            {"group_id": G, "count": 50, "reverse_order": False},
            {"group_id": G, "count": 50},
            {"group_id": G},
        ):
            ctx.should_call_api("get_group_msg_history", data, exception=ActionFailed(retcode=1404))
        ctx.should_call_send(
            event, text("拉取历史消息失败了，客户端可能不支持。"), result={"message_id": 1}
        )


async def test_backfill_is_for_group_admins(app: App, yuji_core: Yuji) -> None:
    await run(app, group_message("/backfill", role="member"), ADMIN_ONLY)
    await run(app, private_message("/backfill", user_id=321), SUPERUSER_ONLY)
    await run(
        app, group_message("/backfill 9999", role="admin"), "用法：/backfill [条数]，条数 1 到 200"
    )


# --- /status --------------------------------------------------------------------------------


async def test_status_for_admins(app: App, yuji_core: Yuji) -> None:
    await yuji_core.archive.append(
        NewExperience(
            scope=SCOPE, fingerprint="s1", sender_id="200", text="hi", sent_at=yuji_core.clock.now()
        )
    )
    answer = await yuji_core.chat_commands.status(SCOPE)
    lines = answer.splitlines()
    assert lines[0] == "待整理消息：1 条"
    assert "静音：否" in lines
    assert "上次回话：还没有" in lines
    assert "夜间整理：还没有跑过" in lines
    assert any(line.startswith("上次备份：") for line in lines)
    assert "向量模式：on" in lines
    # Sizes move while the test runs: pin the rest of the answer without them.
    yuji_core.chat_status.extras = []
    plain = await yuji_core.chat_commands.status(SCOPE)
    # The /status message itself is archived first, so it is pending too.
    await run(app, group_message("/status", role="admin"), plain.replace("1 条", "2 条", 1))


async def test_status_refused_to_members_and_private_chats(app: App, yuji_core: Yuji) -> None:
    await run(app, group_message("/status", role="member"), ADMIN_ONLY)
    await run(app, private_message("/status", user_id=321), SUPERUSER_ONLY)


async def test_private_chat_owner_is_admin_of_their_own_chat(app: App, yuji_core: Yuji) -> None:
    await run(
        app,
        private_message("/mute", user_id=321),
        "好，我先不说话了，等 /unmute 再回来。消息照常记着。",
    )
    await run(app, private_message("/remember 我怕冷", user_id=321), "记住了（#1）：我怕冷")
    await run(
        app,
        private_message("/forget 1", user_id=321),
        "好，#1 以后不会再想起了（记录还留着）：我怕冷",
    )
    assert (await yuji_core.memories.get("private:321", 1)).status == "retracted"
    await run(
        app, private_message("/forget 1", user_id=654), "找不到这条记忆（只能查这个聊天里的）。"
    )


# --- /cards @某人 ----------------------------------------------------------------------


async def _member_card(yuji_core: Yuji, user_id: str, name: str, content: str) -> None:
    """A member of group 100 known by `name`, with a card there."""
    await yuji_core.archive.append(
        NewExperience(
            scope=SCOPE,
            fingerprint=f"said-{user_id}",
            sender_id=user_id,
            sender_name=name,
            text="大家好",
            sent_at=yuji_core.clock.now() - timedelta(hours=1),
        )
    )
    await yuji_core.archive.flush()
    await PersonCardsRepo(yuji_core.db).append(
        SCOPE, user_id, content, "2026-11-19", yuji_core.clock.now()
    )


def cards_at(user_id: str, *, role: str = "member", sender: int = 200) -> Any:
    return group_message(
        [
            {"type": "text", "data": {"text": "/cards "}},
            {"type": "at", "data": {"qq": user_id}},
        ],
        role=role,
        user_id=sender,
    )


async def test_cards_of_a_member_for_themselves_and_for_an_admin_only(
    app: App, yuji_core: Yuji
) -> None:
    await _member_card(yuji_core, "300", "小周", "下个月搬去深圳")
    await _member_card(yuji_core, "200", "阿明", "爱吃辣")
    mine = "阿明的人物卡片（第 1 版，2026-11-19）：\n爱吃辣"
    theirs = "小周的人物卡片（第 1 版，2026-11-19）：\n下个月搬去深圳"

    await run(app, cards_at("300"), OWN_CARD_ONLY)  # a member, about someone else
    await run(app, group_message("/cards 小周"), OWN_CARD_ONLY)  # by name: the same
    await run(app, cards_at("200"), mine)  # their own
    await run(app, group_message("/cards 我"), mine)
    await run(app, cards_at("300", role="admin"), theirs)
    await run(app, group_message("/cards 小周", role="owner"), theirs)
    await run(app, cards_at("300", sender=int(SUPERUSER)), theirs)
    await run(
        app, group_message("/cards 路人甲", role="admin"), "这个群里没有找到叫「路人甲」的人。"
    )
    # another group: the member goes by the name they show there, and has no card yet
    await run(
        app,
        group_message("/cards 我", group_id=999),
        "还没有群友的人物卡片，每晚整理过后、有了关于群友的记忆才会有。",
    )
