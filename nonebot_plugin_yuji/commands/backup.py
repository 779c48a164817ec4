"""`/backup` (superuser): make a verified backup now (SQLite file or pg_dump) and say how
it went."""

from __future__ import annotations

from nonebot.adapters import Bot, Event

from memory_core import SUPERUSER_ONLY, ConfigError, NotPermitted, backup_reply

from ._common import is_superuser, runtime, slash


@slash("backup", "备份")
async def backup(bot: Bot, event: Event, _text: str) -> str:
    if not await is_superuser(bot, event):
        raise NotPermitted(SUPERUSER_ONLY)
    core = runtime.core()
    try:
        manifest = await core.ops.backup(reason="command")
    except ConfigError as exc:  # e.g. no pg_dump as new as the server: theirs to fix
        return f"备份做不了：{exc}"
    return backup_reply(manifest, core.ops.zone)
