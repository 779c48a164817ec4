"""`/backup` under nonebug: a superuser gets a verified backup, nobody else does."""

from __future__ import annotations

from typing import Any

from nonebot.adapters.onebot.v11 import Bot, MessageEvent
from nonebug import App

import nonebot_plugin_yuji.commands.backup as backup_command
from memory_core import Yuji
from memory_core.chat.texts import SUPERUSER_ONLY
from memory_core.ops import backup_reply
from memory_core.ops.manifest import list_manifests

from .conftest import SUPERUSER
from .factories import BOT_ID, group_message, private_message

assert backup_command.backup is not None  # the command is registered


class Capture:
    """Equal to anything; remembers what it was compared with (the sent message)."""

    def __init__(self) -> None:
        self.value: Any = None

    def __eq__(self, other: object) -> bool:
        self.value = other
        return True

    __hash__ = None  # type: ignore[assignment]


async def answer_to(app: App, event: MessageEvent) -> str:
    """Send `event`; the command finishes with one message, returned as text."""
    sent = Capture()
    async with app.test_matcher() as ctx:
        bot = ctx.create_bot(base=Bot, self_id=BOT_ID)
        ctx.receive_event(bot, event)
        ctx.should_call_send(event, sent, result={"message_id": 1})
        ctx.should_finished()
    return str(sent.value)


async def test_backup_command_makes_a_verified_backup(app: App, yuji_core: Yuji) -> None:
    answer = await answer_to(app, private_message("/backup", user_id=int(SUPERUSER)))
    [manifest] = list_manifests(yuji_core.settings.backups_dir)
    assert manifest.ok
    assert manifest.reason == "command"
    assert answer == backup_reply(manifest, yuji_core.ops.zone)
    assert answer.startswith("备份好了：yuji-20261120T120000Z.db")


async def test_backup_command_is_for_superusers_only(app: App, yuji_core: Yuji) -> None:
    answer = await answer_to(app, group_message("/backup", user_id=200, role="owner"))
    assert answer == SUPERUSER_ONLY
    assert list_manifests(yuji_core.settings.backups_dir) == []
