"""The recall judge's prompt and its response model (pure).

One call per wake: the question and the ranked candidates (numbered by memory id);
the model names those that state the thing asked. It only sorts what recall found
into the two bands, so it is asked to be strict: a memory about the same person or
topic that does not say what was asked is not an answer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import BaseModel, Field, ValidationError

from memory_core.llm.base import ChatMessage
from memory_core.llm.wire import strip_think

MAX_CANDIDATE_CHARS = 200

SYSTEM = (
    "你是一个严格的判断员。给你群聊里有人问的一句话，和几条编号的记忆。"
    "找出哪些记忆直接说出了这句话问的那件事：人要对上，问的东西也要说到。"
    "只提到同一个人或同一个话题、却没说出问的东西的，不算。"
    '只回答 JSON：{"answers": [编号, ...]}；一条都不算就回 {"answers": []}。'
)


class JudgeAnswer(BaseModel):
    answers: list[int] = Field(default_factory=list[int])
    """Ids of the memories that state the thing asked."""


def judge_prompt(question: str, candidates: Sequence[tuple[int, str, str]]) -> list[ChatMessage]:
    """`candidates`: (memory id, subject, content), best first."""
    lines = []
    for memory_id, subject, content in candidates:
        about = f"（{subject}）" if subject and subject not in ("group", "bot") else ""
        lines.append(f"#{memory_id}{about}{content[:MAX_CANDIDATE_CHARS]}")
    user = f"问的话：{question.strip()}\n\n记忆：\n" + "\n".join(lines)
    return [ChatMessage(role="system", content=SYSTEM), ChatMessage(role="user", content=user)]


def parse_judge(raw: str | None) -> JudgeAnswer | None:
    """The answer, or None when it is not the JSON asked for."""
    text = strip_think(raw or "").strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        return JudgeAnswer.model_validate(json.loads(text))
    except (ValueError, ValidationError):
        return None
