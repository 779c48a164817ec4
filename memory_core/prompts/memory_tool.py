"""The reply-time memory tool: `search_memory(query)`, its arguments and what it
answers (pure). The results are rendered exactly like the memories injected into
the reply prompt (`chat.render_memory`: id, stage tag, subject, validity)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from memory_core.llm.base import ToolSpec

from .chat import PromptMemory, render_memory

SCOPE_KEYS = ("scope", "chat", "chat_id", "group", "group_id")
"""Arguments a model might use to aim the search at another chat: always refused."""


class SearchMemoryArgs(BaseModel):
    model_config = ConfigDict(extra="allow", str_strip_whitespace=True)
    query: str = Field(min_length=1, max_length=200)


SEARCH_MEMORY = ToolSpec(
    name="search_memory",
    description=(
        "在这个聊天的长期记忆里查一件事（人、约定、喜好、发生过的事）。"
        "只在上面给的记忆不够用时调用，每次回复最多一次；query 用简短的中文关键词。"
    ),
    parameters={
        "type": "object",
        "properties": {"query": {"type": "string", "description": "要查的内容，简短关键词"}},
        "required": ["query"],
    },
)

ONLY_ONCE = "每次回复只能查一次记忆，这次已经查过了。请直接回复。"
ONLY_THIS_CHAT = "只能查这个聊天里的记忆。请直接回复。"
BAD_ARGS = "参数不对：需要 query（要查的内容）。请直接回复。"
UNKNOWN_TOOL = "没有这个工具。请直接回复。"


def search_results(memories: Sequence[PromptMemory]) -> str:
    if not memories:
        return "没有查到相关的记忆。"
    lines = "\n".join(render_memory(m) for m in memories)
    return f"查到的记忆（用到就照规则在末尾写标记）：\n{lines}"
