"""OneBot v11 segments -> what the archive stores. Pure functions, no bot, no I/O.

`convert(segments)` renders the plain text the model and the admin views read, keeps
the segments themselves as JSON, finds the message replied to, and lists the image
and sticker URLs to fetch. Voice, video and files stay in the segments only (a stated
boundary). A segment of an unknown type or a malformed shape never raises: it is
kept as it came (made JSON-safe) and rendered as a bracketed placeholder.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from nonebot.adapters.onebot.v11 import Message, MessageSegment

from memory_core import AttachmentRef

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
    segments: list[dict[str, Any]] = []
    parts: list[str] = []
    reply_to: str | None = None
    refs: list[AttachmentRef] = []
    for index, raw in enumerate(raw_segments):
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
    return {"type": kind, "data": {str(k): _json_safe(v) for k, v in data.items()}}  # type: ignore[union-attr]


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


def display_name(card: str | None, nickname: str | None) -> str:
    """The name shown in the group at that moment: the group card, else the nickname."""
    return (card or "").strip() or (nickname or "").strip()


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


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool) and str(value) != ""


def _json_safe(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        if value.startswith("base64://") and len(value) > MAX_INLINE_DATA:
            return f"base64://[{len(value) - 9} characters not archived]"
        return value
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}  # type: ignore[union-attr]
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]  # type: ignore[union-attr]
    if isinstance(value, bytes | bytearray):
        return f"[{len(value)} bytes not archived]"
    return str(value)
