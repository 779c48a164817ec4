"""Pure formatting for the console's templates (Chinese labels, local times)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

STAGE_LABELS = {
    "lexical": "原词",
    "near": "近义",
    "graph": "关联",
    "vector": "向量猜测",
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
