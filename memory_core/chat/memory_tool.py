"""`search_memory(query)` at reply time (`YUJI_CHAT_MEMORY_TOOL=on`).

Bound to one reply: it searches only the reply's chat, through the same recall
path as the injected memories (`recall_for_reply`, the public recall API), answers
at most one call (a second is refused), and refuses any argument naming a chat.
What it found is kept in `found` so the reply records it for `/why` and credits
cited memories like injected ones.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from pydantic import ValidationError

from memory_core.llm.base import ToolCall
from memory_core.prompts.chat import PromptMemory
from memory_core.prompts.memory_tool import (
    BAD_ARGS,
    ONLY_ONCE,
    ONLY_THIS_CHAT,
    SCOPE_KEYS,
    SEARCH_MEMORY,
    UNKNOWN_TOOL,
    SearchMemoryArgs,
    search_results,
)
from memory_core.recall.carried import shown_in
from memory_core.types import Recalled

log = logging.getLogger("yuji.chat")


class MemoryTool:
    spec = SEARCH_MEMORY

    def __init__(
        self,
        search: Callable[[str], Awaitable[tuple[Recalled, ...]]],
        scope: str,
        render: Callable[[Recalled], PromptMemory],
    ) -> None:
        self._search = search
        self.scope = scope
        self._render = render
        self.calls = 0
        self.found: tuple[Recalled, ...] = ()
        self.query: str | None = None

    async def handle(self, call: ToolCall) -> str:
        if call.name != SEARCH_MEMORY.name:
            return UNKNOWN_TOOL
        self.calls += 1
        if self.calls > 1:
            log.info("yuji: memory tool refused a second call in %s", self.scope)
            return ONLY_ONCE
        try:
            args = SearchMemoryArgs.model_validate_json(call.arguments or "{}")
        except ValidationError:
            return BAD_ARGS
        extra = args.model_extra or {}
        named = [str(extra[k]) for k in SCOPE_KEYS if k in extra]
        if any(value != self.scope for value in named):
            log.warning("yuji: memory tool refused a search of %s from %s", named, self.scope)
            return ONLY_THIS_CHAT
        self.query = args.query
        found = await self._search(args.query)
        self.found = tuple(item for item in found if shown_in(item, self.scope))
        return search_results([self._render(item) for item in self.found])
