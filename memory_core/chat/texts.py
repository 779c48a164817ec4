"""Every Chinese line the chat commands answer with: pure functions, no I/O.

Errors become one line each in `error_text`, the one place that maps the error tree
to words. An id of another chat is reported exactly like an unknown id.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from memory_core.errors import (
    EvidenceRequired,
    LLMError,
    NotFound,
    NotPermitted,
    StorageError,
    UsageError,
    ValidationError,
)
from memory_core.prompts.chat import STAGE_TAGS, card_lines
from memory_core.recall.dense_port import RELATED_LABEL
from memory_core.recall.why import why_words
from memory_core.storage import TOMBSTONE
from memory_core.types import Band, Experience, Memory, Recalled

from .duration import format_duration
from .wake import MUTE_FOREVER

PREVIEW_CHARS = 60


ADMIN_ONLY = "只有群主、管理员能用这个命令。"
SUPERUSER_ONLY = "只有机器人的主人能用这个命令。"
GROUP_ONLY = "这个命令只能在群里用。"
OWN_CARD_ONLY = "只能看自己的人物卡片；看别人的要群主或管理员才行。"


def error_text(exc: BaseException) -> str:
    if isinstance(exc, UsageError | NotPermitted):
        return str(exc)
    if isinstance(exc, NotFound):  # ScopeViolation too: another chat's id reads as unknown
        return "找不到这条记忆（只能查这个聊天里的）。"
    if isinstance(exc, EvidenceRequired):
        return "这条没有出处，不能记。"
    if isinstance(exc, ValidationError):
        return "这样不行，参数不对。"
    if isinstance(exc, LLMError):
        return "模型这会儿连不上，稍后再试。"
    if isinstance(exc, StorageError):
        return "数据库忙不过来，稍后再试。"
    return "出了点问题，没办成，稍后再试。"


def short(text: str, limit: int = PREVIEW_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def local_time(instant: datetime, zone: ZoneInfo, now: datetime | None = None) -> str:
    local = instant.astimezone(zone)
    if now is not None and local.year != now.astimezone(zone).year:
        return f"{local:%Y-%m-%d %H:%M}"
    return f"{local:%m-%d %H:%M}"


def parse_memory_id(raw: str) -> int:
    text = raw.strip().lstrip("#＃")
    if not text.isdecimal() or not 0 < int(text) < 2**62:
        raise UsageError("用法：/forget <记忆编号>，比如 /forget 12")
    return int(text)


# --- mute ---------------------------------------------------------------------------


def mute_text(until: datetime | None, now: datetime, zone: ZoneInfo) -> str:
    if until is None:
        return "好，我先不说话了，等 /unmute 再回来。消息照常记着。"
    return (
        f"好，我安静 {format_duration(until - now)}（到 {local_time(until, zone, now)}）。"
        "消息照常记着。"
    )


def unmute_text(was_muted: bool) -> str:
    return "我回来啦。" if was_muted else "我本来就在呀。"


# --- memories -----------------------------------------------------------------------


def remember_text(memory: Memory, near_duplicate: Memory | None, similarity: float) -> str:
    line = f"记住了（#{memory.id}）：{short(memory.content)}"
    if near_duplicate is None:
        return line
    return (
        f"{line}\n和 #{near_duplicate.id} 很像（相似度 {similarity:.2f}）：{short(near_duplicate.content)}"
        f"\n要是重复了，用 /forget {memory.id} 去掉新的这条。"
    )


def forget_text(memory: Memory) -> str:
    return f"好，#{memory.id} 以后不会再想起了（记录还留着）：{short(memory.content)}"


def recalled_line(item: Recalled) -> str:
    """`#3〔字面命中 P=0.91，确定〕…` then what moved P."""
    head = (
        f"#{item.memory.id}〔{tag(item.stage, item.score, band=item.band)}〕"
        f"{short(item.memory.content)}"
    )
    why = why_words(item.why)
    return head + (f"\n　因为：{why}" if why else "")


BAND_WORDS = {"sure": "确定", "related": "相关"}
"""How /recall, /why and the console name the two bands."""


def tag(stage: str, score: float, *, band: str, cited: bool = False) -> str:
    """`语义相近 P=0.62，相关，用上了`: how recall found it, its P, its band, what became
    of it."""
    parts = [f"{STAGE_TAGS.get(stage, stage)} P={score:.2f}", BAND_WORDS.get(band, band)]
    if cited:
        parts.append("用上了")
    return "，".join(parts)


def recall_text(items: Sequence[Recalled]) -> str:
    if not items:
        return "这句话我想不起任何记忆。"
    lines = ["这句话我会想起：", *(recalled_line(item) for item in items)]
    if all(item.band == "related" for item in items):
        lines.append("（没有一条是确定的：我会说记不清，或者反问）")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class WhyItem:
    memory_id: int
    stage: str
    score: float
    reason: str
    cited: bool
    content: str | None
    """None when the memory can no longer be read (should not happen: nothing is deleted)."""


@dataclass(frozen=True, slots=True)
class WhyQuote:
    message_id: int
    score: float
    band: str
    message: Experience | None
    """As archived now: a redacted message reads as its tombstone."""


def quote_line(quote: WhyQuote, zone: ZoneInfo, now: datetime) -> str:
    """`消息#812〔原话 P=0.71〕[11-20 18:02] 阿明：…`, or that it is gone."""
    head = f"消息#{quote.message_id}〔原话 P={quote.score:.2f}〕"
    m = quote.message
    if m is None or m.text == TOMBSTONE:
        return head + "（已应本人要求删除）"
    return f"{head}[{local_time(m.sent_at, zone, now)}] {m.sender_name or m.sender_id}：{short(m.text)}"


def why_text(
    items: Sequence[WhyItem] | None,
    at: datetime | None,
    zone: ZoneInfo,
    now: datetime,
    quotes: Sequence[WhyQuote] = (),
) -> str:
    if items is None or at is None:
        return "我在这里还没回过话。"
    when = local_time(at, zone, now)
    quoted = [quote_line(q, zone, now) for q in quotes]
    if quoted:
        quoted = ["还引用了这些较早的聊天原话（尚未整理成记忆）：", *quoted]
    if not items:
        return "\n".join([f"上次回话（{when}）没有用到任何记忆。", *quoted])
    lines = [f"上次回话（{when}）想起了这些："]
    for item in items:
        content = short(item.content) if item.content is not None else "（读不到了）"
        band, reason = band_of(item.reason)
        lines.append(
            f"#{item.memory_id}〔{tag(item.stage, item.score, band=band, cited=item.cited)}〕"
            f"{content}"
        )
        if reason:
            lines.append(f"　因为：{reason}")
    return "\n".join([*lines, *quoted])


_RELATED = re.compile(re.escape(RELATED_LABEL) + r"（(.*?)）")


def band_of(reason: str) -> tuple[Band, str]:
    """(its band, the reason without the band's label): a recorded injection keeps
    recall's reason, where a related memory's is `RELATED_LABEL（相关度 …）`."""
    found = _RELATED.match(reason.strip())
    if found is None:
        return "sure", reason.strip()
    return "related", (found.group(1) + reason.strip()[found.end() :]).strip()


def cards_text(cards: Sequence[tuple[str, str]]) -> str:
    return "\n".join(card_lines(cards)) or "还没有记忆卡片，每晚整理过后才会有。"


def person_card_text(
    name: str, content: str | None, version: int = 0, day: str | None = None
) -> str:
    """`/cards @某人`: one member's card in this group."""
    if content is None or not content.strip():
        return f"还没有{name}的人物卡片，每晚整理过后、有了关于{name}的记忆才会有。"
    when = f"，{day}" if day else ""
    return f"{name}的人物卡片（第 {version} 版{when}）：\n{content.strip()}"


# --- status and backfill ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScopeStatus:
    scope: str
    pending: int
    """Archived messages consolidation has not acknowledged yet."""
    last_batch_state: str | None = None
    last_batch_at: datetime | None = None
    muted_until: datetime | None = None
    last_reply_at: datetime | None = None
    extra: Mapping[str, str] | None = None
    """Further labelled lines from other areas (nightly, backups, sizes, vector mode)."""


BATCH_STATES = {
    "queued": "排队中",
    "delivered": "已发出",
    "processing": "整理中",
    "done": "完成",
    "failed": "失败",
}


def status_text(status: ScopeStatus, zone: ZoneInfo, now: datetime) -> str:
    lines = [f"待整理消息：{status.pending} 条"]
    if status.last_batch_state is None:
        lines.append("上一批整理：还没有")
    else:
        state = BATCH_STATES.get(status.last_batch_state, status.last_batch_state)
        at = f"（{local_time(status.last_batch_at, zone, now)}）" if status.last_batch_at else ""
        lines.append(f"上一批整理：{state}{at}")
    if status.muted_until is not None and status.muted_until > now:
        forever = status.muted_until >= MUTE_FOREVER
        until = "直到 /unmute" if forever else f"到 {local_time(status.muted_until, zone, now)}"
        lines.append(f"静音：是，{until}")
    else:
        lines.append("静音：否")
    last = local_time(status.last_reply_at, zone, now) if status.last_reply_at else "还没有"
    lines.append(f"上次回话：{last}")
    lines += [f"{label}：{value}" for label, value in (status.extra or {}).items()]
    return "\n".join(lines)


def backfill_text(fetched: int, new: int, duplicates: int, error: str | None) -> str:
    if fetched == 0 and error:
        return "拉取历史消息失败了，客户端可能不支持。"
    line = f"补拉了 {fetched} 条历史消息：新存 {new} 条，已有 {duplicates} 条。"
    return line + ("（中途出错，只拉到这些）" if error else "")
