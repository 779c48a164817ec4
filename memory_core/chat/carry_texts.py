"""What `/carry` answers (pure): a person's choices, where their own words would go,
and what would travel; a block or its lifting. A group's answer never shows the
words themselves (they were said in another group), only how many."""

from __future__ import annotations

from memory_core.people.carrying import CarryView
from memory_core.storage import CarryChoice
from memory_core.types import is_group_scope

from .texts import short

LISTED = 10
"""At most this many of the words that would travel are listed."""


def _on(value: bool) -> str:
    return "开" if value else "关"


def choices_line(choice: CarryChoice) -> str:
    return (
        f"带到你和我的私聊：{_on(choice.into_private)}（默认开）；"
        f"带到你在的别的群：{_on(choice.into_groups)}（默认关）"
    )


def state_text(view: CarryView, *, in_group: bool, blocked: bool | None) -> str:
    """`/carry`: the sender's state; the words listed only outside a group."""
    lines = [
        "带话：你本人在群里讲的自己的事，能跟着你去你别的聊天；旁人转述的、私聊中讲的一律不带。",
        choices_line(view.choice),
    ]
    if blocked is not None:
        lines.append("本群：管理员拒绝了带入" if blocked else "本群：允许带入")
    groups = sum(1 for scope in view.reaches if is_group_scope(scope))
    private = any(not is_group_scope(scope) for scope in view.reaches)
    where = [*(["私聊"] if private else []), *([f"{groups} 个群"] if groups else [])]
    if not view.words or not where:
        lines.append("现在没有会带过去的话。")
        return "\n".join(lines)
    lines.append(f"现在会带到：{'、'.join(where)}；共 {len(view.words)} 条：")
    if in_group:
        lines.append("（内容只在私聊里列出：发 /carry 给我私聊看）")
        return "\n".join(lines)
    lines.extend(f"· {short(memory.content)}" for memory in view.words[:LISTED])
    if len(view.words) > LISTED:
        lines.append(f"……还有 {len(view.words) - LISTED} 条")
    return "\n".join(lines)


def choice_text(which: str, choice: CarryChoice) -> str:
    """After `/carry private|groups on|off`."""
    if which == "private":
        head = (
            "好，私聊里我会记得你在群里说过的自己的事。"
            if choice.into_private
            else "好，私聊里不再带上你在群里说的话了，下一句起生效。"
        )
    else:
        head = (
            "好，你在的别的群里我也会记得你在群里说过的自己的事（管理员拒绝带入的群除外）。"
            if choice.into_groups
            else "好，别的群里不再带上你在群里说的话了，下一句起生效。"
        )
    return f"{head}\n{choices_line(choice)}"


def block_text(blocked: bool) -> str:
    if blocked:
        return "好，本群不再带入任何人在别的群说的话。"
    return "好，本群又允许带入了（只带本人选择带过来的、本人亲口说的话）。"
