"""The unprompted follow-up's prompt (pure): the persona, the plan it asks about and
the chat's last few messages; the expected response is the one short message to send,
plain text (no citation markers: nothing is injected but the plan itself)."""

from __future__ import annotations

from collections.abc import Sequence

from memory_core.llm.base import ChatMessage

from .chat import PromptLine, render_line


def followup_prompt(
    *,
    persona: str,
    bot_name: str,
    person: str,
    plan: str,
    day: str,
    now: str,
    is_private: bool,
    recent: Sequence[PromptLine],
) -> list[ChatMessage]:
    """`plan` is the memory's text, `day` its local date, `now` the local time."""
    where = "私聊" if is_private else "群里"
    rules = (
        f"你是「{bot_name}」，按下面的人设说话。\n\n{persona.strip()}\n\n"
        f"现在是 {now}。你要在{where}主动找{person}说一句话：{person}之前自己说过"
        f"「{plan}」（{day} 的事），日子已经过了，你想问问怎么样了。\n"
        "要求：只写要发出去的这一句（最多两句），口语、自然、像朋友随口一问；"
        f"{'群里要点名' + person + '，' if not is_private else ''}"
        "不要提你“记得”“记录”“数据”，不要编造计划以外的细节，不要道歉，不要加引号或解释。"
    )
    chat = "\n".join(render_line(line) for line in recent) or "（最近没人说话）"
    user = f"最近的聊天记录：\n{chat}\n\n现在写你要发的那句话。"
    return [ChatMessage(role="system", content=rules), ChatMessage(role="user", content=user)]
