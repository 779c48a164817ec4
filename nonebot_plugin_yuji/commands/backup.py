"""`/backup` (superuser): make a verified backup now (SQLite file or pg_dump) and say how
it went."""

from __future__ import annotations

from nonebot import on_command
from nonebot.adapters import Bot, Event

from memory_core import SUPERUSER_ONLY, ConfigError, NotPermitted, backup_reply

from .. import runtime  # noqa: TID252 - the plugin's module name depends on how NoneBot loads it
from ._common import COMMAND, answer, is_superuser

backup = on_command("backup", aliases={"备份"}, **COMMAND)


@backup.handle()
async def _backup(bot: Bot, event: Event) -> None:
    async def action() -> str:
        if not await is_superuser(bot, event):
            raise NotPermitted(SUPERUSER_ONLY)
        core = runtime.core()
        try:
            manifest = await core.ops.backup(reason="command")
        except ConfigError as exc:  # e.g. no pg_dump as new as the server: theirs to fix
            return f"备份做不了：{exc}"
        return backup_reply(manifest, core.ops.zone)

    await answer(backup, action)
