"""`/followups` under nonebug: anyone lists what is due in the chat and may ask not to
be asked; only an admin turns unprompted asking on or off or drops one in a group; in
a private chat its person decides."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from nonebot.adapters.onebot.v11 import Bot, MessageSegment
from nonebug import App

from memory_core import EvidenceRef, NewExperience, Yuji
from memory_core.followups import texts

from .factories import BOT_ID, group_message, private_message

G = "group:100"
EXAM = datetime(2026, 11, 17, 16, 0, tzinfo=UTC)  # 11-18 00:00 in Shanghai


async def run(app: App, event: Any, answer: str) -> None:
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, MessageSegment.text(answer), result={"message_id": 1})
        ctx.should_finished()


async def plan(core: Yuji, scope: str) -> int:
    """阿哲 (200) said on 11-15 he sits an exam on the 18th: due on 11-19..21."""
    said = await core.archive.append(
        NewExperience(
            scope,
            f"exam-{scope}",
            "200",
            "我11月18号考四级",
            sender_name="阿哲",
            sent_at=core.clock.now() - timedelta(days=5),
        )
    )
    written = await core.memories.write(
        scope,
        type="event",
        subject="阿哲",
        content="阿哲11月18日考四级",
        evidence=[EvidenceRef(experience_id=said)],
        valid_from=EXAM,
        subject_id="200",
    )
    return written.memory.id


async def test_anyone_lists_what_is_due_and_may_ask_not_to_be_asked(
    app: App, yuji_core: Yuji
) -> None:
    exam = await plan(yuji_core, G)
    listed = (
        "主动问：关（被叫到时顺口问）\n"
        f"#{exam} 阿哲：阿哲11月18日考四级（11-18 的事，11-19～11-21 可以问，该问了）"
    )
    await run(app, group_message("/followups", role="member", user_id=300), listed)
    await run(app, group_message("/followups mute-me", role="member"), texts.MUTED)
    assert await yuji_core.followups.repo.muted(G) == {"200"}
    assert await yuji_core.followups.offer(G, "200", yuji_core.clock.now()) is None
    await run(app, group_message("/followups unmute-me", role="member"), texts.UNMUTED)
    assert await yuji_core.followups.repo.muted(G) == set()


async def test_only_an_admin_turns_it_on_or_drops_one_in_a_group(app: App, yuji_core: Yuji) -> None:
    exam = await plan(yuji_core, G)
    await run(app, group_message("/followups on", role="member"), texts.ADMIN_ONLY)
    await run(app, group_message(f"/followups drop {exam}", role="member"), texts.ADMIN_ONLY)
    assert not await yuji_core.followups.asks_unprompted(G)
    await run(app, group_message("/followups on", role="admin"), texts.TURNED_ON)
    assert await yuji_core.followups.asks_unprompted(G)
    await run(app, group_message("/followups drop 12x", role="admin"), texts.USAGE)
    await run(
        app,
        group_message(f"/followups drop #{exam}", role="admin"),
        f"好，不再问 #{exam}（阿哲：阿哲11月18日考四级）。",
    )
    assert await yuji_core.followups.due(G) == []
    await run(app, group_message("/followups", role="member"), "主动问：开\n现在没有要问的事。")
    await run(app, group_message("/followups off", role="owner"), texts.TURNED_OFF)
    assert not await yuji_core.followups.asks_unprompted(G)
    await run(app, group_message("/followups what", role="admin"), texts.USAGE)


async def test_a_private_chat_is_on_by_default_and_its_person_decides(
    app: App, yuji_core: Yuji
) -> None:
    scope = "private:200"
    assert await yuji_core.followups.asks_unprompted(scope)
    await run(app, private_message("/followups off"), texts.TURNED_OFF)
    assert not await yuji_core.followups.asks_unprompted(scope)
    exam = await plan(yuji_core, scope)
    await run(
        app,
        private_message(f"/followups drop {exam}"),
        f"好，不再问 #{exam}（阿哲：阿哲11月18日考四级）。",
    )
