"""The nightly `followups` step's prompt (pure) and its reply: which of the day's new
dated plans are not worth asking about afterwards ("明天吃火锅"), each with why. It can
only drop; what it keeps stays a follow-up as the rules made it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from memory_core.llm.base import ChatMessage

from .nightly import Prompt

REVIEW_MARK = "事后值不值得问一句"
"""A phrase only this prompt has (tests tell the nightly prompts apart by it)."""


class DropItem(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, str_strip_whitespace=True)

    id: int
    why: str = Field(min_length=1, max_length=200)


class ReviewReply(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, str_strip_whitespace=True)

    drop: list[DropItem] = Field(default_factory=list[DropItem])


@dataclass(frozen=True, slots=True)
class PlanLine:
    id: int
    name: str
    day: str
    content: str


def review_prompt(plans: Sequence[PlanLine], *, day: str, bot_name: str) -> Prompt[ReviewReply]:
    system = (
        f"你是群聊机器人「{bot_name}」的记忆整理员，在深夜替它整理当天的记忆。"
        "你不和任何人聊天，也不扮演角色。\n"
        f"下面是群友自己说过的、有日期的安排。日子过了以后，{bot_name}可能会问一句"
        f"“怎么样了”。请判断每件{REVIEW_MARK}：\n"
        "- 值得问的留下：考试、面试、比赛、出行、搬家、看病、手术、重要的约会或截止日期。\n"
        "- 不值得问的去掉，并写明为什么：吃饭、吃火锅、看电视、打游戏、睡觉这类日常小事，"
        "或者问了会让人尴尬的事。\n"
        "- 拿不准就留下。只能从列表里挑。\n"
        "只输出一个 JSON 对象，不要代码块，不要任何解释。"
    )
    lines = "\n".join(f"[跟进 {p.id}]（{p.name}｜{p.day}）{p.content}" for p in plans)
    user = (
        f"日期：{day}\n\n安排：\n{lines}\n\n"
        '输出格式：{"drop": [{"id": 编号, "why": "为什么不值得问"}]}；一件都不去掉就输出 {"drop": []}'
    )
    return Prompt(
        (ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)),
        ReviewReply,
    )
