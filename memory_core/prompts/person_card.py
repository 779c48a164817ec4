"""The nightly `people` step's prompt: one member's card from the memories about them
(pure), beside the reply it expects. Pinned by a snapshot test: change on purpose.

Each memory is shown with whose word it is: the member's own (本人说) or someone
else's (X 说, hearsay), so the card can keep hearsay marked as such.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from memory_core.llm.base import ChatMessage

from .nightly import Prompt

PERSON_CARD_MAX_CHARS = 400
"""A card's length: a few short lines."""


class PersonCardReply(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, str_strip_whitespace=True)

    card: str = Field(min_length=1, max_length=PERSON_CARD_MAX_CHARS)


@dataclass(frozen=True, slots=True)
class MemberFact:
    id: int
    type: str
    content: str
    said_by: str
    """Whose word it is, already worded: `本人说`, `小周说`, `听说`."""


def person_card_prompt(
    name: str,
    facts: Sequence[MemberFact],
    current: str,
    *,
    day: str,
    bot_name: str,
) -> Prompt[PersonCardReply]:
    system = (
        f"你是群聊机器人「{bot_name}」的记忆整理员，在深夜替它整理当天的记忆。"
        "你不和任何人聊天，也不扮演角色；只做整理，不编造材料里没有的内容。\n"
        f"为群友「{name}」写一张简短的人物卡片：他自己说过的自己的事、偏好、计划、"
        "和别人的关系。每行一条，最多八行，每行一句话。\n"
        "- 本人说的可以直接写。\n"
        "- 别人转述的（标着“某某说”或“听说”）必须在那一行写明是谁说的，"
        "例如“（小周说）下个月搬去深圳”，不能写成确定的事实。\n"
        "- 已经过时或被新记忆推翻的内容删掉；没有依据的不要写。\n"
        "只输出一个 JSON 对象，不要代码块，不要任何解释。"
    )
    lines = "\n".join(f"[记忆 {f.id}]（{f.type}｜{f.said_by}）{f.content}" for f in facts)
    user = (
        f"日期：{day}\n群友：{name}\n\n现在的卡片：\n{current.strip() or '（空）'}\n\n"
        f"关于{name}的记忆：\n{lines or '（无）'}\n\n"
        '输出格式：{"card": "卡片正文，每行一条"}'
    )
    return Prompt(
        (ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)),
        PersonCardReply,
    )


def said_by(word: str | None, subject: str, speakers: Sequence[str]) -> str:
    """Whose word a memory about `subject` is: `本人说`, `小周、阿明说` or `听说` (pure;
    `speakers`: the current names of its evidence's senders, the subject's own left
    out by the caller or here)."""
    if word in ("self", "self-only"):
        return "本人说"
    others = [s for s in dict.fromkeys(speakers) if s and s != subject]
    if word == "hearsay" and others:
        return "、".join(others[:3]) + "说"
    if word == "hearsay":
        return "听说"
    return ""
