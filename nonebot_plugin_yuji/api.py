"""yuji's memory for other plugins (docs/plugin.md).

    from nonebot import require
    require("nonebot_plugin_yuji")
    from nonebot_plugin_yuji import api

    found = await api.recall(bot, event, "他上次说想去哪")      # this chat's memories
    done = await api.remember(bot, event, "群规：周五不发广告")  # as /remember, admins only
    rows = await api.archived(bot, event, limit=20)             # the chat's messages

Every call reads the chat of `event` (QQ through OneBot v11, or Telegram; any other
adapter raises `UsageError`) and goes through the same core calls as yuji's own
handlers: recall gives the banded items a reply is given (at most five, this chat's
only), remember applies the `/remember` permission rule (group admins and
superusers; anyone in a private chat) and rests the memory on the asking message,
archived reads the append-only archive. `recall_scope` / `archived_scope` take a scope
instead (`group:<id>`, `telegram-group:<id>`, ...) for jobs with no event. Before yuji
has started, or in a plugin left inactive by a failed start, every call raises
`NotStarted`. Every refusal is a `YujiError` (`NotPermitted`, `UsageError`, ...) whose
text is a Chinese line fit to send back.
"""

from __future__ import annotations

from dataclasses import dataclass

from nonebot.adapters import Bot, Event

from memory_core import (
    Experience,
    NotPermitted,
    Quoted,
    Recalled,
    UsageError,
    Yuji,
    YujiError,
    recall_turn,
)

from . import runtime
from .commands._common import require_admin
from .ingest import committed
from .platforms import chat_scope, experience_of, scope_of

__all__ = [
    "Item",
    "NotPermitted",
    "NotStarted",
    "Recollection",
    "Remembered",
    "UsageError",
    "YujiError",
    "archived",
    "archived_scope",
    "recall",
    "recall_scope",
    "remember",
    "scope",
]


class NotStarted(YujiError):
    """yuji has not started (or stays inactive after a failed start)."""


@dataclass(frozen=True, slots=True)
class Item:
    """One memory as a reply would be given it."""

    memory_id: int
    content: str
    band: str
    """`sure` (the persona may state it) or `related` (possibly about someone else)."""
    p: float
    """P(relevant) from the relevance model."""
    subject: str
    reason: str


@dataclass(frozen=True, slots=True)
class Recollection:
    items: tuple[Item, ...]
    turns: tuple[Experience, ...] = ()
    """With `turns=True`: the chat's recent messages not consolidated yet that answer
    the text, as the chat path quotes them (senders' words, never facts)."""


@dataclass(frozen=True, slots=True)
class Remembered:
    memory_id: int
    text: str
    """yuji's own confirmation line (names a near duplicate when there is one)."""


def scope(event: Event) -> str | None:
    """The scope yuji files this event's chat under, or None for a chat it does not know."""
    return chat_scope(event)


async def recall(
    bot: Bot, event: Event, text: str, *, turns: bool = False, limit: int | None = None
) -> Recollection:
    """What yuji recalls for `text` in this event's chat (the items a reply gets)."""
    del bot  # for symmetry with remember/archived; the chat is the event's
    await committed(event)
    return await recall_scope(scope_of(event), text, turns=turns, limit=limit)


async def recall_scope(
    scope: str, text: str, *, turns: bool = False, limit: int | None = None
) -> Recollection:
    core = _core()
    items, quotes = await recall_turn(
        core.recall,
        scope,
        text,
        now=core.clock.now(),
        limit=core.settings.recall_limit if limit is None else limit,
    )
    return Recollection(
        items=tuple(_item(i) for i in items),
        turns=tuple(_turn(q) for q in quotes) if turns else (),
    )


async def remember(bot: Bot, event: Event, text: str) -> Remembered:
    """A fact for this chat, resting on `event`'s message, with `/remember`'s rule:
    `NotPermitted` unless the sender is a group admin or a superuser (anyone in a
    private chat); `UsageError` for empty or over-long text."""
    await require_admin(bot, event)
    await committed(event)
    core = _core()
    command = experience_of(bot, event, now=core.clock.now())
    if command is None:
        raise UsageError("这里用不了这个命令。")
    done = await core.chat_commands.remember(
        scope_of(event), text, command=command, by=event.get_user_id()
    )
    return Remembered(memory_id=done.memory_id, text=done.text)


async def archived(
    bot: Bot, event: Event, *, limit: int = 20, before_id: int | None = None
) -> list[Experience]:
    """The chat's archived messages, newest last (at most `limit`, before archive id
    `before_id` when given)."""
    del bot
    await committed(event)
    return await archived_scope(scope_of(event), limit=limit, before_id=before_id)


async def archived_scope(
    scope: str, *, limit: int = 20, before_id: int | None = None
) -> list[Experience]:
    rows = await _core().archive.recent(scope, max(1, limit), before_id)
    return sorted(rows, key=lambda e: e.id)


def _core() -> Yuji:
    core = runtime.started()
    if core is None:
        raise NotStarted("yuji is not started")
    return core


def _item(item: Recalled) -> Item:
    memory = item.memory
    return Item(
        memory_id=memory.id,
        content=memory.content,
        band=item.band,
        p=item.score,
        subject=memory.subject,
        reason=item.reason,
    )


def _turn(quote: Quoted) -> Experience:
    return quote.message
