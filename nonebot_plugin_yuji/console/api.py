"""The JSON API under /yuji/api/ for scripts (same auth: Bearer, or the session with
its CSRF token). A memory id of another chat is answered like an unknown one (404)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.encoders import jsonable_encoder

from memory_core import Actor, MemoryFilter

from .. import runtime  # noqa: TID252 (plugin modules load under two names)
from .gate import PREFIX, authorize
from .web import ConsoleRoute, scope_param

router = APIRouter(
    prefix=f"{PREFIX}/api", route_class=ConsoleRoute, dependencies=[Depends(authorize)]
)
Authorized = Annotated[Actor, Depends(authorize)]


def _json(value: Any) -> Any:
    return jsonable_encoder(value)


async def _scope_for(memory_id: int, scope: str | None) -> str:
    """The chat of a memory: the given one (another chat's id is then NotFound), or
    the memory's own when the caller names none."""
    if scope:
        return scope_param(scope)
    return await runtime.core().console.scope_of(memory_id)


@router.get("/chats")
async def chats() -> Any:
    rows = await runtime.core().console.chats()
    return _json(
        [
            {
                "scope": r.scope,
                "name": r.name,
                "messages": r.messages,
                "memories": r.memories,
                "pending": r.pending,
                "backlog_chars": r.backlog_chars,
                "lag_s": round(r.lag_s, 1),
                "muted_until": r.muted_until,
                "last_batch": asdict(r.last_batch) if r.last_batch else None,
                "night": asdict(r.night),
            }
            for r in rows
        ]
    )


@router.get("/chats/{scope}/memories")
async def memories(scope: str, q: str = "", limit: int = 100) -> Any:
    """With `q`: what recall brings (stage, score, reason); without: the newest."""
    scope = scope_param(scope)
    console = runtime.core().console
    if q.strip():
        result = await console.search(scope, q)
        return _json(
            {
                "query": q,
                "items": [
                    {
                        "memory": asdict(r.memory),
                        "stage": r.stage,
                        "score": r.score,
                        "reason": r.reason,
                    }
                    for r in result.items
                ],
            }
        )
    page = await console.memory_page(scope, MemoryFilter(limit=max(1, min(limit, 500))))
    return _json({"total": page.total, "items": [asdict(m) for m in page.items]})


@router.get("/memories/{memory_id}")
async def memory(memory_id: int, scope: str | None = None) -> Any:
    console = runtime.core().console
    detail = await console.memory(await _scope_for(memory_id, scope), memory_id)
    return _json(asdict(detail))


@router.post("/memories/{memory_id}/retract")
async def retract(
    memory_id: int, actor: Authorized, scope: str | None = None, reason: str = ""
) -> Any:
    console = runtime.core().console
    where = await _scope_for(memory_id, scope)
    done = await console.act(where, memory_id, "retract", actor, reason=reason)
    return _json(asdict(done))


@router.get("/chats/{scope}/turns")
async def turns(scope: str, n: int = 10) -> Any:
    scope = scope_param(scope)
    found = await runtime.core().console.turns(scope, max(1, min(n, 100)))
    return _json(
        [
            {
                "id": t.injection.id,
                "at": t.injection.created_at,
                "query": t.injection.query,
                "trigger": asdict(t.trigger) if t.trigger else None,
                "items": [asdict(i) for i in t.injection.items],
                "quotes": [asdict(q) for q in t.injection.quotes],
                "blocks": [asdict(b) for b in t.injection.blocks],
            }
            for t in found
        ]
    )
