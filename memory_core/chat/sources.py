"""Adapters from the other areas' services to what chat reads (ports.ContextPort,
commands.StatusPort). Reads only; nothing here writes another area's tables."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

from memory_core.consolidation.runner import lacks_tools
from memory_core.consolidation.service import ConsolidationService
from memory_core.settings import Settings
from memory_core.storage import ChatRepo, MemoryRepo

from .texts import ScopeStatus

ExtraStatus = Callable[[str], Awaitable[Mapping[str, str]]]
"""scope -> labelled lines another area adds to `/status` (nightly, backups, sizes)."""


class ChatContextSource:
    def __init__(self, memories: MemoryRepo, consolidation: ConsolidationService) -> None:
        self.memories = memories
        self.consolidation = consolidation

    async def acked_id(self, scope: str) -> int:
        return (await self.consolidation.repo.cursor(scope)).acked_id

    async def open_fragments(self, scope: str, limit: int) -> list[str]:
        if limit <= 0:
            return []
        repo = self.consolidation.repo
        return [
            f.summary for f in await repo.fragments(scope, archived=False, limit=limit, newest=True)
        ]

    async def contradicting_pairs(self, scope: str, ids: Sequence[int]) -> list[tuple[int, int]]:
        wanted = set(ids)
        if len(wanted) < 2:
            return []
        edges = await self.memories.relations(scope, wanted, ("contradicts",))
        return [(src, dst) for src, dst, _ in edges if src in wanted and dst in wanted]


class ChatStatusSource:
    def __init__(
        self,
        consolidation: ConsolidationService,
        repo: ChatRepo,
        extras: Sequence[ExtraStatus] = (),
    ) -> None:
        self.consolidation = consolidation
        self.repo = repo
        self.extras = tuple(extras)

    async def scope_status(self, scope: str) -> ScopeStatus:
        consolidation = await self.consolidation.status(scope)
        state = await self.repo.state(scope)
        batch = consolidation.last_batch
        extra: dict[str, str] = {}
        if batch is not None and batch.state == "failed" and lacks_tools(batch.error):
            extra["整理"] = "已停止：模型不支持工具调用（聊天照常）"
        for source in self.extras:
            extra.update(await source(scope))
        return ScopeStatus(
            scope=scope,
            pending=consolidation.pending,
            last_batch_state=batch.state if batch is not None else None,
            last_batch_at=(batch.finished_at or batch.created_at) if batch is not None else None,
            muted_until=state.muted_until,
            last_reply_at=state.last_reply_at,
            extra=extra,
        )


def vector_mode_line(
    settings: Settings, backend: Callable[[], Awaitable[Mapping[str, str]]]
) -> ExtraStatus:
    """The `/status` lines no other area reports: dense retrieval's mode (on | shadow |
    off), and which database and vector store run (`backend`)."""

    async def lines(scope: str) -> Mapping[str, str]:
        return {"向量模式": settings.vector_mode, **await backend()}

    return lines
