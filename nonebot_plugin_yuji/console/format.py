"""Pure formatting for the console's templates (Chinese labels, local times)."""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo

from memory_core import band_of

STAGE_LABELS = {
    "lexical": "原词",
    "near": "近义",
    "graph": "关联",
    "vector": "向量猜测",
    "carried": "在别的群说过",
}
TYPE_LABELS = {
    "fact": "事实",
    "preference": "偏好",
    "event": "事件",
    "relation": "关系",
    "state": "状态",
    "rule": "规则",
}
STATUS_LABELS = {"active": "有效", "retracted": "已撤回", "cold": "冷藏"}
WORD_LABELS = {"self": "本人说", "self-only": "仅本人", "hearsay": "他人转述"}
"""Whose word a memory about a member rests on (memory_core.types.Word)."""
WORD_TITLES = {
    "self": "证据里有本人的话",
    "self-only": "证据只有本人的话",
    "hearsay": "证据里没有本人的话：别人说的",
}
NAME_SOURCE_LABELS = {"card": "群名片", "nickname": "昵称", "alias": "别名", "mention": "被@"}
"""Where the person index read a name (memory_core.types.NameSource)."""


def local_time(instant: datetime | None, zone: ZoneInfo) -> str:
    """`YYYY-MM-DD HH:MM` in the configured zone; a dash for no instant."""
    if instant is None:
        return "—"
    return f"{instant.astimezone(zone):%Y-%m-%d %H:%M}"


def zone_label(zone: ZoneInfo, at: datetime) -> str:
    """`Asia/Shanghai (UTC+08:00)`: the zone every time on the page is shown in, with
    its offset at `at`, so a reader elsewhere need not guess whose clock it is."""
    offset = f"{at.astimezone(zone):%z}"
    return f"{zone.key} (UTC{offset[:3]}:{offset[3:]})"


def percent(part: int, whole: int) -> str:
    if whole <= 0:
        return "—"
    return f"{part * 100 / whole:.1f}%"


_P_PREFIX = re.compile(r"^相关度 \d+(?:\.\d+)?[：:]?")


def reason_words(reason: str) -> str:
    """What a recall reason says beyond its band and its P (both have their own
    columns): `仅供参考…（相关度 0.41：问到的词它都说到了）` -> `问到的词它都说到了`."""
    _, rest = band_of(reason)
    return _P_PREFIX.sub("", rest).strip()


_VECTOR_PLACES = (
    (re.compile(r"^file index under (.+)$"), "文件索引：{0}"),
    (
        re.compile(r"^in the database \(memory_vectors, bytea; scored in process\)$"),
        "数据库里（memory_vectors 表，bytea，在进程内打分）",
    ),
    (
        re.compile(
            r"^in the database \(memory_vectors, pgvector HNSW for a chat over (\d+)"
            r" vectors; exact in process below\)$"
        ),
        "数据库里（memory_vectors 表；超过 {0} 条向量的聊天查 pgvector HNSW 索引，其余在进程内精确打分）",
    ),
    (re.compile(r"^off \(YUJI_VECTOR_MODE=off\)$"), "关闭（YUJI_VECTOR_MODE=off）"),
)


def vectors_label(where: str) -> str:
    """Where the vectors live, in Chinese for the overview (`yuji status` keeps the
    English line, which scripts read)."""
    for pattern, words in _VECTOR_PLACES:
        found = pattern.match(where)
        if found:
            return words.format(*found.groups())
    return where


STATE_LABELS = {
    "queued": "排队中",
    "delivered": "已发出",
    "processing": "整理中",
    "done": "完成",
    "failed": "失败",
    "running": "进行中",
    "pending": "等待中",
    "waiting": "等模型",
    "blocked": "受阻",
}
"""States of a batch and of a nightly step."""
OUTCOME_LABELS = {"extracted": "有记忆", "nothing": "没什么可记"}
STEP_LABELS = {
    "settle": "结算",
    "diary": "小传",
    "cards": "卡片",
    "people": "人物",
    "states": "状态",
    "events": "事件",
    "followups": "跟进",
    "gc": "回收",
}
ORIGIN_LABELS = {"default": "默认", ".env": ".env", "environment": "环境变量", "console": "控制台"}
ROLE_LABELS = {
    "primary": "直接证据",
    "derived": "推导",
    "fragment": "小结",
    "imported": "导入",
}
REASON_LABELS = {"written": "写入"}
"""The codes the core stores, as the console's Chinese pages say them (an unknown code
is shown as it is)."""
