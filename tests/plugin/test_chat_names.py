"""Chat names from the QQ client: the group list the backfill asks for, a rename notice
(NapCat's `notify`/`group_name`, parsed by the real adapter), the account joining a
group (asked with get_group_info), and a client without the list."""

from __future__ import annotations

from typing import Any

from nonebot.adapters.onebot.v11 import ActionFailed, Adapter, Bot, Event
from nonebug import App

from memory_core import Yuji
from nonebot_plugin_yuji import chat_names
from nonebot_plugin_yuji.frames import needs_handlers
from nonebot_plugin_yuji.jobs import backfill as jobs_backfill

from .factories import BOT_ID, TIME


def notice(**fields: Any) -> dict[str, Any]:
    return {"time": TIME, "self_id": int(BOT_ID), "post_type": "notice", **fields}


def parsed(data: dict[str, Any]) -> Event:
    event = Adapter.json_to_event(data)
    assert event is not None
    return event


async def test_the_group_list_the_backfill_asks_for_names_the_groups(
    app: App, yuji_core: Yuji
) -> None:
    """At every connect and backfill run: no call of its own to the client."""
    async with app.test_api() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID, auto_connect=False)
        ctx.should_call_api(
            "get_group_list",
            {},
            result=[
                {"group_id": 100, "group_name": "周末猫友会"},
                {"group_id": 200, "group_name": ""},
                {"group_id": "x", "group_name": "坏的"},
            ],
        )
        assert await jobs_backfill.group_ids(bot) == [100, 200]
    names = await yuji_core.console.names.names(["group:100", "group:200"])
    assert names == {"group:100": "周末猫友会"}


async def test_a_client_without_the_list_leaves_names_alone(app: App, yuji_core: Yuji) -> None:
    await yuji_core.console.name_chats({"group:100": "旧名字"})
    async with app.test_api() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID, auto_connect=False)
        ctx.should_call_api("get_group_list", {}, exception=ActionFailed(retcode=1404))
        await jobs_backfill.group_ids(bot)
    assert await yuji_core.console.chat_name("group:100") == "旧名字"


async def test_a_rename_notice_renames_the_group(app: App, yuji_core: Yuji) -> None:
    await yuji_core.console.name_chats({"group:100": "旧名字"})
    raw = notice(
        notice_type="notify", sub_type="group_name", group_id=100, user_id=7, name_new="新名字"
    )
    assert needs_handlers(raw)  # the ingest adapter passes it on to the handlers
    async with app.test_matcher(chat_names.renamed) as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID, auto_connect=False)
        ctx.receive_event(bot, parsed(raw))
    assert await yuji_core.console.chat_name("group:100") == "新名字"


async def test_joining_a_group_asks_its_name(app: App, yuji_core: Yuji) -> None:
    raw = notice(
        notice_type="group_increase",
        sub_type="invite",
        group_id=300,
        user_id=int(BOT_ID),
        operator_id=7,
    )
    assert needs_handlers(raw)
    someone_else = {**raw, "user_id": 7}
    assert not chat_names.names_a_chat(someone_else)
    async with app.test_matcher(chat_names.renamed) as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID, auto_connect=False)
        ctx.receive_event(bot, parsed(raw))
        ctx.should_call_api(
            "get_group_info",
            {"group_id": 300, "no_cache": True},
            result={"group_id": 300, "group_name": "新来的群"},
        )
    assert await yuji_core.console.chat_name("group:300") == "新来的群"
