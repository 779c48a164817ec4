"""History items of `get_group_msg_history` -> experiences, through the archive's own
converter, so a backfilled message is stored exactly as if it had been heard live
(same fingerprint = message id, same text rendering, same attachments)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from memory_core import NewExperience, group_scope

from .archive_convert import convert, display_name, event_instant, raw_segments


def history_parser(
    group_id: int, self_id: str, now: Callable[[], datetime]
) -> Callable[[Mapping[str, Any]], NewExperience | None]:
    scope = group_scope(group_id)

    def parse(item: Mapping[str, Any]) -> NewExperience | None:
        message_id = item.get("message_id")
        if message_id in (None, ""):
            return None
        raw_group = item.get("group_id")
        if raw_group not in (None, "") and str(raw_group) != str(group_id):
            return None
        sender: Mapping[str, Any] = item.get("sender") or {}
        user_id = sender.get("user_id", item.get("user_id"))
        if user_id in (None, ""):
            return None
        converted = convert(raw_segments(item.get("message")))
        return NewExperience(
            scope=scope,
            fingerprint=str(message_id),
            sender_id=str(user_id),
            sender_name=display_name(sender.get("card"), sender.get("nickname")),
            is_bot=str(user_id) == self_id,
            text=converted.text,
            segments=converted.segments,
            reply_to=converted.reply_to,
            sent_at=event_instant(item.get("time")) or now(),
            source="backfill",
            attachments=converted.attachments,
        )

    return parse
