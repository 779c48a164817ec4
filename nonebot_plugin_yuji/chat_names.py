"""What the QQ client calls each chat, for the console (`core.console.name_chats`).

Group names come with the group list the backfill asks for anyway (`get_group_list`,
at every connect and every backfill run: jobs.backfill.group_ids hands it here), so
naming costs the client no call of its own. Afterwards a group's rename arrives as a
notice (NapCat's `notify`/`group_name` carries the new name) and a group the account
joins as a `group_increase` of the account itself; both are answered by asking the
client (`get_group_info`) unless the notice says the name. A private chat is called by
its person's latest nickname in the archive (the core does that).

Telegram: every update of a group carries the chat with its current title, so
`name_telegram_chat` records it from the event (no call to the Bot API); the titles
recorded by this process are kept, so only a new chat or a new title costs a write.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nonebot import logger, on_notice
from nonebot.adapters import Bot as BaseBot
from nonebot.adapters import Event as BaseEvent
from nonebot.adapters.onebot.v11 import Bot, NoticeEvent
from nonebot.adapters.telegram.model import Chat
from nonebot.typing import T_State

from memory_core import group_scope

from . import runtime
from .direct import DirectRule
from .telegram_convert import PLATFORM

TELEGRAM_GROUPS = frozenset({"group", "supergroup"})
_titles: dict[str, str] = {}
"""Telegram scope -> the title this process recorded last."""


def group_names(groups: Any) -> dict[str, str]:
    """`get_group_list`'s answer as scope -> name (entries of another shape skipped)."""
    if not isinstance(groups, list):
        return {}
    found: dict[str, str] = {}
    for g in groups:  # pyright: ignore[reportUnknownVariableType]
        if isinstance(g, dict) and str(g.get("group_id", "")).isdecimal():  # pyright: ignore[reportUnknownMemberType]
            found[f"group:{g['group_id']}"] = str(g.get("group_name") or "")  # pyright: ignore[reportUnknownMemberType]
    return found


def names_a_chat(data: Mapping[str, Any]) -> bool:
    """A notice after which a group's name may be new: decided on the raw JSON, so the
    ingest adapter passes it on to the handlers (frames.needs_handlers)."""
    kind = data.get("notice_type")
    if kind == "notify":
        return data.get("sub_type") == "group_name"
    if kind == "group_increase":
        return str(data.get("user_id", "")) == str(data.get("self_id", "-"))
    return False


async def _ask(bot: Bot, api: str, **params: Any) -> Any:
    try:
        return await bot.call_api(api, **params)
    except Exception as exc:  # an older client without the call: names stay as they were
        logger.warning(f"yuji chat names: {api} failed ({exc!r})")
        return None


async def name_groups(groups: Any) -> None:
    """Record the names in a `get_group_list` answer (never raises: naming is a nicety
    the backfill that asked must not lose a group to)."""
    core = runtime.started()
    if core is None:
        return
    try:
        changed = await core.console.name_chats(group_names(groups))
    except Exception as exc:
        logger.warning(f"yuji chat names: not recorded ({exc!r})")
        return
    if changed:
        logger.info(f"yuji chat names: {changed} groups named or renamed")


async def _is_name_notice(_bot: BaseBot, event: BaseEvent, _state: T_State) -> bool:
    """A base-typed, async rule (why: ops_notices._is_offline_notice)."""
    return isinstance(event, NoticeEvent) and names_a_chat(event.model_dump())


renamed = on_notice(rule=DirectRule(_is_name_notice), priority=1, block=False)


@renamed.handle()
async def _renamed(bot: Bot, event: NoticeEvent) -> None:
    data = event.model_dump()
    group_id = data.get("group_id")
    name = data.get("name_new")
    if not isinstance(name, str) or not name.strip():
        info = await _ask(bot, "get_group_info", group_id=group_id, no_cache=True)
        name = info.get("group_name") if isinstance(info, dict) else None  # pyright: ignore[reportUnknownMemberType]
    if isinstance(name, str) and group_id is not None:
        await runtime.core().console.name_chats({f"group:{group_id}": name})


def telegram_title(event: BaseEvent) -> tuple[str, str] | None:
    """(scope, title) of the Telegram group an event comes from, if it says."""
    chat = getattr(event, "chat", None)
    if not isinstance(chat, Chat) or chat.type not in TELEGRAM_GROUPS or not chat.title:
        return None
    return group_scope(chat.id, PLATFORM), chat.title


async def name_telegram_chat(event: BaseEvent) -> None:
    """Record a Telegram group's title when this process has not recorded it yet
    (never raises: naming is a nicety)."""
    found = telegram_title(event)
    core = runtime.started()
    if found is None or core is None or _titles.get(found[0]) == found[1]:
        return
    scope, title = found
    try:
        await core.console.name_chats({scope: title})
    except Exception as exc:
        logger.warning(f"yuji chat names: {scope} not named ({exc!r})")
        return
    _titles[scope] = title
