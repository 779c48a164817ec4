"""Laying down a day for nightly tests: archived chat, fragments, scripted replies.

Fragments are consolidation's output; these helpers seed them (and the batch they
hang from) straight into the tables, the way acknowledgement leaves them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import insert

from memory_core import Yuji
from memory_core.llm.base import ChatResponse
from memory_core.llm.fake import LLMRequest, text_response
from memory_core.storage.schema import consolidation_batches, fragments
from memory_core.types import NewExperience

SCOPE = "group:100"
SHANGHAI = ZoneInfo("Asia/Shanghai")


def sh(*args: int) -> datetime:
    """A Shanghai wall-clock instant, as aware UTC."""
    return datetime(*args, tzinfo=SHANGHAI).astimezone(UTC)  # type: ignore[misc]


def reply(payload: dict[str, Any]) -> ChatResponse:
    return text_response(json.dumps(payload, ensure_ascii=False))


async def archive(core: Yuji, scope: str, at: datetime, texts: Sequence[str]) -> list[int]:
    """Archive `texts` one minute apart from `at`; returns their ids."""
    stamp = int(at.timestamp())
    exps = [
        NewExperience(
            scope=scope,
            fingerprint=f"{stamp}-{i}",
            sender_id=str(1000 + i % 2),
            sender_name="南杉" if i % 2 == 0 else "小白",
            text=text,
            sent_at=at + timedelta(minutes=i),
        )
        for i, text in enumerate(texts)
    ]
    ids = await core.archive.append_many(exps)
    await core.archive.flush()
    return ids


async def fragment(
    core: Yuji, scope: str, at: datetime, summary: str, texts: Sequence[str] = ("聊天",)
) -> int:
    """Archive a few messages at `at` and an acknowledged batch + fragment over them."""
    ids = await archive(core, scope, at, texts)
    first, last = at, at + timedelta(minutes=len(texts) - 1)
    async with core.db.write() as conn:
        batch = await conn.execute(
            insert(consolidation_batches).values(
                scope=scope,
                first_id=ids[0],
                last_id=ids[-1],
                message_count=len(ids),
                chars=sum(len(t) for t in texts),
                state="done",
                outcome="extracted",
                token=f"t{ids[0]}",
                attempts=1,
                created_at=last,
                finished_at=last,
            )
        )
        batch_id = batch.inserted_primary_key[0]  # type: ignore[index]
        result = await conn.execute(
            insert(fragments).values(
                batch_id=batch_id,
                scope=scope,
                summary=summary,
                first_id=ids[0],
                last_id=ids[-1],
                first_sent_at=first,
                last_sent_at=last,
                created_at=last,
            )
        )
        return int(result.inserted_primary_key[0])  # type: ignore[index]


def day_script(
    *,
    diary: str = "南杉和小白约好周六去爬山。",
    changes: Sequence[dict[str, Any]] = (),
    timeline: str | None = None,
    states: Sequence[dict[str, Any]] = (),
    events: Sequence[dict[str, Any]] = (),
) -> list[ChatResponse]:
    """The four replies of a day with fragments and no past-due states."""
    return [
        reply({"diary": diary}),
        reply({"changes": list(changes), "timeline": timeline}),
        reply({"changes": list(states)}),
        reply({"events": list(events)}),
    ]


KIND_MARKS = {
    "settle": "已经过了截止日期",
    "diary": "《今日小传》",
    "cards": "七张记忆卡片",
    "people": "人物卡片",
    "states": "根据今日小传调整",
    "events": "提取值得长期记住的独立事件",
    "followups": "事后值不值得问一句",
}


def prompt_kind(system: str) -> str:
    for kind, mark in KIND_MARKS.items():
        if mark in system:
            return kind
    raise AssertionError(f"unknown nightly prompt: {system[:40]}")


def quiet_day(kind: str) -> dict[str, Any]:
    """A valid reply to each prompt kind that changes nothing (diary: a fixed text)."""
    return {
        "settle": {"rewrites": []},
        "diary": {"diary": "平常的一天。"},
        "cards": {"changes": [], "timeline": None},
        "people": {"card": "平常的一天。"},
        "states": {"changes": []},
        "events": {"events": []},
        "followups": {"drop": []},
    }[kind]


def quiet_responder(request: LLMRequest) -> ChatResponse:
    """Answers any nightly prompt validly, changing nothing."""
    return reply(quiet_day(prompt_kind(request.messages[0].content or "")))
