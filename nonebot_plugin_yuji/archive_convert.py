"""OneBot v11 segments -> what the archive stores. Pure functions, no bot, no I/O.

`convert(segments)` renders the plain text the model and the admin views read, keeps
the segments themselves as JSON, finds the message replied to, and lists the image
and sticker URLs to fetch. Voice, video and files stay in the segments only (a stated
boundary). A segment of an unknown type or a malformed shape never raises: it is
kept as it came (made JSON-safe) and rendered as a bracketed placeholder.

JSON-safe also means storable: a lone UTF-16 surrogate (a client cutting an emoji in
half) is replaced by U+FFFD, and the segment keeps its original data as ASCII JSON
under `original` (the exact code units the client sent); data nested deeper than
`MAX_SEGMENT_DEPTH` is cut there, and segments past `MAX_SEGMENTS` are counted, not
kept, so the message is kept and the row stays small.

`message_experience` reads a OneBot message object (a live event or a history item,
as plain JSON) straight into an experience: the live ingest and the backfill share it.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from nonebot.adapters.onebot.v11 import Message, MessageSegment

from memory_core import AttachmentRef, NewExperience, group_scope, private_scope

MAX_SEGMENT_DEPTH = 32
"""Levels of nesting kept inside a segment's data; deeper values become a marker."""
MAX_SEGMENTS = 1000
"""Segments kept per message; the rest are counted in one `truncated` segment (a real
message has a few dozen at most, and each costs conversion time on the event loop)."""
MAX_INLINE_DATA = 1024
"""Longer `base64://` payloads (our own sends) are replaced by a short marker."""

_PLACEHOLDER = {
    "face": "[表情]",
    "record": "[语音]",
    "video": "[视频]",
    "rps": "[猜拳]",
    "dice": "[骰子]",
    "shake": "[戳一戳]",
    "poke": "[戳一戳]",
    "share": "[分享]",
    "contact": "[推荐]",
    "location": "[位置]",
    "music": "[音乐]",
    "forward": "[聊天记录]",
    "node": "[聊天记录]",
    "xml": "[卡片]",
    "json": "[卡片]",
    "markdown": "[消息]",
}


@dataclass(frozen=True, slots=True)
class Converted:
    text: str
    segments: list[dict[str, Any]]
    reply_to: str | None = None
    attachments: tuple[AttachmentRef, ...] = field(default=())


def convert(raw_segments: Iterable[Any]) -> Converted:
    iterator = iter(raw_segments)
    segments: list[dict[str, Any]] = []
    parts: list[str] = []
    reply_to: str | None = None
    refs: list[AttachmentRef] = []
    for index, raw in enumerate(iterator):
        if index >= MAX_SEGMENTS:
            left = 1 + sum(1 for _ in iterator)
            segments.append({"type": "truncated", "data": {"segments_not_archived": left}})
            parts.append(f"[后面还有{left}段未存档]")
            break
        segment = normalise_segment(raw)
        segments.append(segment)
        kind, data = segment["type"], segment["data"]
        if kind == "reply":
            if reply_to is None and _scalar(data.get("id")):
                reply_to = str(data["id"])
            continue
        parts.append(render_segment(kind, data))
        ref = attachment_ref(index, kind, data)
        if ref is not None:
            refs.append(ref)
    return Converted("".join(parts), segments, reply_to, tuple(refs))


def normalise_segment(raw: Any) -> dict[str, Any]:
    """`{"type": str, "data": dict}` whatever came in; values made JSON-safe."""
    if isinstance(raw, Mapping):
        kind = raw.get("type")  # type: ignore[union-attr]
        data = raw.get("data")  # type: ignore[union-attr]
    else:
        kind, data = getattr(raw, "type", None), getattr(raw, "data", None)
    if not isinstance(kind, str) or not kind:
        kind = "unknown"
    if not isinstance(data, Mapping):
        data = {} if data is None else {"value": data}
    cleaned: dict[str, Any] = _json_safe(data, 0)
    segment: dict[str, Any] = {"type": clean_text(kind), "data": cleaned}
    if _has_surrogate(data, 0):
        with contextlib.suppress(ValueError, TypeError, RecursionError):
            segment["original"] = json.dumps(data, ensure_ascii=True, default=str)
    return segment


def render_segment(kind: str, data: Mapping[str, Any]) -> str:
    if kind == "text":
        value = data.get("text")
        return value if isinstance(value, str) else ""
    if kind == "at":
        target = data.get("qq")
        if target == "all":
            return "@全体成员"
        name = data.get("name")
        return f"@{name}" if isinstance(name, str) and name else f"@{target}"
    if kind == "image":
        return _summary(data) or ("[动画表情]" if _is_sticker(kind, data) else "[图片]")
    if kind == "mface":
        return _summary(data) or "[表情包]"
    if kind == "file":
        name = data.get("name") or data.get("file")
        return f"[文件:{name}]" if isinstance(name, str) and name else "[文件]"
    return _PLACEHOLDER.get(kind, f"[{kind}]")


def attachment_ref(index: int, kind: str, data: Mapping[str, Any]) -> AttachmentRef | None:
    """Images and stickers with an http(s) URL; everything else is not fetched."""
    if kind not in ("image", "mface"):
        return None
    for key in ("url", "file"):
        value = data.get(key)
        if isinstance(value, str) and value.lower().startswith(("http://", "https://")):
            return AttachmentRef(
                segment_index=index,
                url=value,
                kind="sticker" if _is_sticker(kind, data) else "image",
            )
    return None


def display_name(card: Any, nickname: Any) -> str:
    """The name shown in the group at that moment: the group card, else the nickname."""
    return _name(card) or _name(nickname)


def clean_text(value: str) -> str:
    """`value` storable as UTF-8: each lone surrogate replaced by U+FFFD."""
    return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value


def message_experience(
    item: Mapping[str, Any],
    *,
    self_id: str,
    now: Callable[[], datetime],
    source: Literal["realtime", "backfill"] = "realtime",
) -> NewExperience | None:
    """A OneBot message object (event or history item) -> experience; None when it
    names no chat, no message id or no sender (nothing to key or dedup it by)."""
    message_id = item.get("message_id")
    sender: Any = item.get("sender")
    sender = sender if isinstance(sender, Mapping) else {}
    user_id = item.get("user_id")
    if not _scalar(user_id):
        user_id = sender.get("user_id")
    if not _scalar(message_id) or not _scalar(user_id):
        return None
    kind, group_id = item.get("message_type"), item.get("group_id")
    if kind == "group" or (kind is None and group_id is not None):
        if not _chat_id(group_id):
            return None
        scope = group_scope(int(str(group_id)))
    elif kind == "private" and _chat_id(user_id):
        scope = private_scope(int(str(user_id)))
    else:
        return None
    converted = convert(raw_segments(item.get("message")))
    return NewExperience(
        scope=scope,
        fingerprint=clean_text(str(message_id)),
        sender_id=clean_text(str(user_id)),
        sender_name=display_name(sender.get("card"), sender.get("nickname")),
        is_bot=str(user_id) == self_id,
        text=converted.text,
        segments=converted.segments,
        reply_to=converted.reply_to,
        sent_at=event_instant(item.get("time")) or now(),
        source=source,
        attachments=converted.attachments,
        account=self_id or None,
    )


def raw_segments(message: Any, *, escaped: bool = False) -> list[Any]:
    """The shapes a `message` field comes in: str (CQ codes unless `escaped`), a
    Message, one segment, or a list of segments / dicts."""
    if message is None:
        return []
    if isinstance(message, str):
        return [MessageSegment.text(message)] if escaped else list(Message(message))
    if isinstance(message, MessageSegment | Mapping):
        return [message]
    if isinstance(message, list | tuple | Message):
        return list(message)  # type: ignore[arg-type]
    return [MessageSegment.text(str(message))]


def event_instant(timestamp: Any) -> datetime | None:
    """A OneBot `time` (Unix seconds) as an aware UTC instant; None when unusable."""
    try:
        return datetime.fromtimestamp(int(timestamp), UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def _is_sticker(kind: str, data: Mapping[str, Any]) -> bool:
    return kind == "mface" or str(data.get("sub_type", "0")) == "1"


def _summary(data: Mapping[str, Any]) -> str:
    value = data.get("summary")
    return value.strip() if isinstance(value, str) else ""


_SURROGATE = re.compile("[\ud800-\udfff]")
MAX_ID_CHARS = 64
"""Longer message, user or chat ids are not ids a client sends: the message is skipped."""


def _scalar(value: Any) -> bool:
    return (
        isinstance(value, str | int)
        and not isinstance(value, bool)
        and 0 < len(str(value)) <= MAX_ID_CHARS
    )


def _chat_id(value: Any) -> bool:
    return _scalar(value) and str(value).isdecimal() and str(value).isascii()


def _name(value: Any) -> str:
    return clean_text(value).strip() if isinstance(value, str) else ""


def _json_safe(value: Any, depth: int = 0) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        if value.startswith("base64://") and len(value) > MAX_INLINE_DATA:
            return f"base64://[{len(value) - 9} characters not archived]"
        return clean_text(value)
    if isinstance(value, Mapping | list | tuple) and depth >= MAX_SEGMENT_DEPTH:
        return f"[nested deeper than {MAX_SEGMENT_DEPTH} levels, not archived]"
    if isinstance(value, Mapping):
        return {clean_text(str(k)): _json_safe(v, depth + 1) for k, v in value.items()}  # type: ignore[union-attr]
    if isinstance(value, list | tuple):
        return [_json_safe(v, depth + 1) for v in value]  # type: ignore[union-attr]
    if isinstance(value, bytes | bytearray):
        return f"[{len(value)} bytes not archived]"
    return clean_text(str(value))


def _has_surrogate(value: Any, depth: int) -> bool:
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if depth >= MAX_SEGMENT_DEPTH:
        return False
    if isinstance(value, Mapping):
        return any(
            _has_surrogate(str(k), depth) or _has_surrogate(v, depth + 1)
            for k, v in value.items()  # type: ignore[union-attr]
        )
    if isinstance(value, list | tuple):
        return any(_has_surrogate(v, depth + 1) for v in value)  # type: ignore[union-attr]
    return False
