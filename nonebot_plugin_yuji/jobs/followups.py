"""Scheduled job: ask due follow-ups unprompted (`core.unprompted.run_once`, whose
rules are in memory_core/followups/unprompted.py), every `YUJI_FOLLOWUP_CHECK_S`
seconds, by the leader only (a fleet sends once), through the platform's plain send:
no reply target, since nothing was said to reply to (`send_group_msg` /
`send_private_msg` on QQ, `send_message` on Telegram). The send is archived as the
bot's own message by archive_hooks, like every reply."""

from __future__ import annotations

from nonebot import get_bots, logger, require
from nonebot.adapters import Bot as BaseBot
from nonebot.adapters.onebot.v11 import Bot as QQBot
from nonebot.adapters.telegram import Bot as TelegramBot

require("nonebot_plugin_apscheduler")

from nonebot_plugin_apscheduler import scheduler  # noqa: E402

from memory_core import Settings  # noqa: E402

from .. import runtime  # noqa: E402, TID252 (plugin modules load under two names)

JOB_ID = "yuji_followups"


def target(scope: str) -> tuple[str, str, int] | None:
    """(platform, `group` or `private`, chat id) of a chat id; None when unreadable. Pure."""
    kind_part, _, number = scope.partition(":")
    platform, _, kind = kind_part.rpartition("-")
    try:
        chat_id = int(number)
    except ValueError:
        return None
    if kind not in ("group", "private"):
        return None
    return platform or "qq", kind, chat_id


async def send(scope: str, text: str) -> bool:
    """Send `text` to the chat with a bot of its platform; False when none took it."""
    where = target(scope)
    if where is None:
        return False
    platform, kind, chat_id = where
    bots: list[BaseBot] = list(get_bots().values())
    for bot in bots:
        try:
            if platform == "qq" and isinstance(bot, QQBot):
                if kind == "group":
                    await bot.send_group_msg(group_id=chat_id, message=text)
                else:
                    await bot.send_private_msg(user_id=chat_id, message=text)
                return True
            if platform == "telegram" and isinstance(bot, TelegramBot):
                await bot.send_message(chat_id=chat_id, text=text)
                return True
        except Exception as exc:  # the platform is down: it stays due
            logger.warning(f"yuji followups: could not send to {scope}: {exc}")
            return False
    return False


async def tick() -> None:
    core = runtime.leading()
    if core is None:
        return
    try:
        asked = await core.unprompted.run_once(send)
    except Exception:  # a job must never take the scheduler down
        logger.exception("yuji followups: the unprompted look failed")
        return
    for a in asked:
        logger.info(f"yuji followups: asked #{a.memory_id} of {a.person} in {a.scope}")


def schedule(settings: Settings) -> None:
    scheduler.add_job(
        tick,
        "interval",
        seconds=settings.followup_check_s,
        id=JOB_ID,
        replace_existing=True,
        max_instances=1,
        coalesce=True,
    )
