"""nonebot-plugin-chatrecorder's database as a message source for the import loop.

Each OneBot v11 group or private record becomes an experience of `group:<id>` /
`private:<id>` with the OneBot message id as its fingerprint, the same key live
archiving uses, so messages yuji already archived are duplicates. Records of the
bot's own sends (`message_sent`) are archived with `is_bot`. The stored segments are
kept; the text is rendered from them (placeholders for images and stickers), else
the record's plain text.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any, cast

from memory_core.storage import GROUP, ChatrecorderReader, RecordRow
from memory_core.types import NewExperience

from .message_import import Step

_PLACEHOLDER = {
    "image": "[图片]",
    "face": "[表情]",
    "mface": "[表情包]",
    "record": "[语音]",
    "video": "[视频]",
}


class ChatrecorderSource:
    kind = "chatrecorder"

    def __init__(self, reader: ChatrecorderReader, scope: str | None, total: int) -> None:
        self.reader = reader
        self.scope = scope
        self.scope_label = scope or "*"
        self.source_key = reader.label
        self.total = total
        """The highest record id: positions are record ids."""

    async def steps(self, start: int, line: int) -> AsyncIterator[Step]:
        del line
        async for row in self.reader.rows(start, self.scope):
            yield _step(row)


def _step(row: RecordRow) -> Step:
    scope = f"{'group' if row.scene_type == GROUP else 'private'}:{row.scene_id}"
    if not row.scene_id.isdigit():
        return Step(refused="not a QQ chat id", resume_at=row.id - 1, done=row.id)
    segments, text, reply_to = render(row.message, row.plain_text)
    if not text.strip() and not segments:
        return Step(refused="empty message", resume_at=row.id - 1, done=row.id)
    exp = NewExperience(
        scope=scope,
        fingerprint=row.message_id,
        sender_id=row.user_id,
        text=text,
        sent_at=row.time,
        segments=segments,
        sender_name=display_name(row.member_data, row.user_data),
        is_bot=row.sent_by_bot,
        reply_to=reply_to,
        source="migrated",
    )
    return Step(exp=exp, resume_at=row.id - 1, done=row.id)


def render(message: Any, plain_text: str) -> tuple[list[dict[str, Any]], str, str | None]:
    """(segments, text, replied message id) of a stored OneBot v11 message."""
    if not isinstance(message, list):
        return [{"type": "text", "data": {"text": plain_text}}], plain_text, None
    segments: list[dict[str, Any]] = []
    parts: list[str] = []
    reply_to: str | None = None
    for raw in cast(list[Any], message):
        if not isinstance(raw, Mapping):
            continue
        seg = cast(Mapping[str, Any], raw)
        kind = str(seg.get("type") or "unknown")
        data_raw = seg.get("data")
        data: dict[str, Any] = (
            {str(k): v for k, v in cast(Mapping[Any, Any], data_raw).items()}
            if isinstance(data_raw, Mapping)
            else {}
        )
        segments.append({"type": kind, "data": data})
        if kind == "reply":
            reply_to = reply_to or (str(data["id"]) if data.get("id") not in (None, "") else None)
        elif kind == "text":
            parts.append(str(data.get("text") or ""))
        elif kind == "at":
            target = data.get("qq")
            parts.append("@全体成员" if target == "all" else f"@{data.get('name') or target}")
        else:
            summary = data.get("summary")
            parts.append(
                summary
                if isinstance(summary, str) and summary
                else _PLACEHOLDER.get(kind, f"[{kind}]")
            )
    return segments, "".join(parts) or plain_text, reply_to


def display_name(member_data: Any, user_data: Any) -> str:
    """The group card (uninfo's member nick), else the user's name or nick."""
    for source, keys in ((member_data, ("nick",)), (user_data, ("name", "nick"))):
        if isinstance(source, Mapping):
            for key in keys:
                value = cast(Mapping[str, Any], source).get(key)
                if isinstance(value, str) and value.strip():
                    return value.strip()
    return ""
