"""`yuji status [--json]`: which database and vector store run, then per chat how far
consolidation is behind, whether it is muted and when the persona last replied.

Each chat known to the archive or to `chat_state` is listed. Other areas add their
own fields two ways: the labelled `/status` lines they give `core.chat_status` (per
chat, under "lines": last night's steps, last backup, sizes, vector mode), and
`SECTIONS` (one function per area taking the core and returning a JSON-ready
top-level mapping, or None when it has nothing to say).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Any

from memory_core.chat.texts import BATCH_STATES
from memory_core.cli.common import opened_core
from memory_core.service import Yuji

Section = Callable[[Yuji], Awaitable[Mapping[str, Any] | None]]


async def _llm_usage(core: Yuji) -> Mapping[str, Any]:
    return await core.usage.summary()


async def _consolidation(core: Yuji) -> Mapping[str, Any]:
    """Per chat, the backpressure: what waits for consolidation and for how long."""
    now = core.clock.now()
    chats: dict[str, Any] = {}
    for scope in sorted(await core.archive.scopes()):
        backlog = await core.consolidation.repo.backlog(scope)
        chats[scope] = {
            "backlog_messages": backlog.messages,
            "backlog_chars": backlog.chars,
            "lag_s": round(backlog.lag_s(now), 1),
        }
    return chats


async def _backend(core: Yuji) -> Mapping[str, Any]:
    """Which database and which vector store run."""
    backend = await core.backend()
    return {"database": backend.database, "vectors": backend.vectors}


SECTIONS: dict[str, Section] = {
    "backend": _backend,
    "llm_usage": _llm_usage,
    "consolidation": _consolidation,
}
"""Top-level JSON keys beside "scopes", filled by other areas (nightly, backups)."""


def register(subparsers: Any) -> None:
    summary = "用的是哪个数据库和向量存储；每个聊天：待整理的消息、上一批、禁言、人设上次回复"
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "status", help=summary, description=summary
    )
    parser.add_argument("--json", action="store_true", help="打印一个 JSON 对象")
    parser.set_defaults(func=run)


async def run(args: argparse.Namespace) -> int:
    async with opened_core(existing=True) as core:
        data = await collect(core)
    print(json.dumps(data, ensure_ascii=False, indent=2) if args.json else render(data))
    return 0


async def collect(core: Yuji) -> dict[str, Any]:
    now = core.clock.now()
    scopes = set(await core.archive.scopes())
    scopes.update(state.scope for state in await core.chat_state.states())
    rows: list[dict[str, Any]] = []
    for scope in sorted(scopes):
        status = await core.chat_status.scope_status(scope)
        muted = status.muted_until is not None and status.muted_until > now
        rows.append(
            {
                "scope": scope,
                "pending": status.pending,
                "last_batch": None
                if status.last_batch_state is None
                else {"state": status.last_batch_state, "at": _iso(status.last_batch_at)},
                "muted": muted,
                "muted_until": _iso(status.muted_until) if muted else None,
                "last_reply_at": _iso(status.last_reply_at),
                "lines": dict(status.extra or {}),
            }
        )
    data: dict[str, Any] = {"now": _iso(now), "scopes": rows}
    for key, section in SECTIONS.items():
        value = await section(core)
        if value is not None:
            data[key] = dict(value)
    return data


"""A batch's state as the console says it (an unknown state is shown as it is)."""

SECTION_WORDS = {"llm_usage": "模型用量", "consolidation": "整理积压"}
"""The Chinese label of a `SECTIONS` key in the text output (else the key itself)."""


def render(data: Mapping[str, Any]) -> str:
    rows: list[dict[str, Any]] = data["scopes"]
    lines: list[str] = []
    backend = data.get("backend")
    if backend is not None:
        lines.append(f"数据库：{backend['database']}")
        lines.append(f"向量：{backend['vectors']}")
    if not rows:
        return "\n".join([*lines, "还没有任何聊天"])
    for row in rows:
        batch = row["last_batch"]
        state = BATCH_STATES.get(batch["state"], batch["state"]) if batch else ""
        last_batch = f"{state}（{batch['at']}）" if batch else "无"
        muted = f"到 {row['muted_until']}" if row["muted"] else "否"
        lines.append(
            f"{row['scope']}：待整理 {row['pending']} 条，上一批 {last_batch}，"
            f"禁言 {muted}，人设上次回复 {row['last_reply_at'] or '从未'}"
        )
    for key, value in data.items():
        if key not in ("now", "scopes", "backend"):
            lines.append(f"{SECTION_WORDS.get(key, key)}：{json.dumps(value, ensure_ascii=False)}")
    return "\n".join(lines)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()
