"""The Chinese lines of `/followups` (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from .due import FollowUp

USAGE = (
    "用法：/followups 看这个聊天里该问问的事；/followups mute-me 以后别问我（unmute-me 恢复）；"
    "管理员：/followups on|off 开关主动问，/followups drop 编号 不再问某一件"
)
ADMIN_ONLY = "只有群主、管理员能开关主动问或者删掉一件。"
MUTED = "好，以后不主动问你的安排了（/followups unmute-me 恢复）。"
UNMUTED = "好，又可以问你的安排了。"
TURNED_ON = "好，这个聊天里到了日子我会主动问问大家的安排（白天、一天最多一次）。"
TURNED_OFF = "好，这个聊天里不再主动问了；被叫到时还可能顺口问一句。"
STATE_WORDS = {
    "upcoming": "还没到",
    "due": "该问了",
    "asked": "问过了",
    "answered": "已回答",
    "expired": "过期了",
    "dropped": "不问了",
    "refused": "日期对不上",
}
"""Each follow-up state in words (`/followups`, `yuji followups`, the console)."""


def listing(found: Sequence[FollowUp], *, on: bool) -> str:
    head = "主动问：开" if on else "主动问：关（被叫到时顺口问）"
    if not found:
        return f"{head}\n现在没有要问的事。"
    lines = [
        f"#{f.memory.id} {f.memory.subject}：{f.memory.content}"
        f"（{f.window.day:%m-%d} 的事，{f.window.first:%m-%d}～{f.window.last:%m-%d} 可以问，"
        f"{STATE_WORDS.get(f.state, f.state)}）"
        for f in found
    ]
    return "\n".join([head, *lines])


def dropped(f: FollowUp) -> str:
    return f"好，不再问 #{f.memory.id}（{f.memory.subject}：{f.memory.content}）。"
