from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import text

from memory_core import FakeClock, Yuji
from memory_core.consolidation.runner import BatchReport
from memory_core.consolidation.service import ConsolidationService
from memory_core.llm import LLMRequest, ScriptedLLM, tool_call, tool_calls_response
from memory_core.llm.base import ChatResponse, ToolCall
from memory_core.ops.alerts import RecordingAlertSink
from memory_core.types import NewExperience

G1, G2 = "group:1", "group:2"


@pytest.fixture
def llm() -> ScriptedLLM:
    return ScriptedLLM()


@pytest.fixture
def sink() -> RecordingAlertSink:
    return RecordingAlertSink()


@pytest.fixture
def service(core: Yuji, llm: ScriptedLLM, sink: RecordingAlertSink) -> ConsolidationService:
    return ConsolidationService(
        core.db,
        core.live,
        core.clock,
        archive=core.archive,
        memories=core.memories,
        llm=llm,
        alerts=sink,
    )


async def seed(
    core: Yuji,
    scope: str = G1,
    n: int = 15,
    *,
    start: int = 0,
    bot_at: Sequence[int] = (),
    texts: Sequence[str] | None = None,
    sender: str = "10001",
) -> list[int]:
    clock = core.clock
    assert isinstance(clock, FakeClock)
    exps = [
        NewExperience(
            scope=scope,
            fingerprint=f"{scope}-{start + i}",
            sender_id="999" if i in bot_at else sender,
            sender_name="大肥鱼" if i in bot_at else "张三",
            is_bot=i in bot_at,
            text=texts[i] if texts else f"第{start + i}条消息：今天打了羽毛球",
            sent_at=clock.now() - timedelta(minutes=n - i),
        )
        for i in range(n)
    ]
    ids = await core.archive.append_many(exps)
    await core.archive.flush()
    return ids


def token_of(request: LLMRequest) -> str:
    user = request.messages[1].content or ""
    match = re.search(r"token：(\S+)", user)
    assert match, user
    return match.group(1)


def ids_in_prompt(request: LLMRequest) -> list[int]:
    return [int(m) for m in re.findall(r"^#(\d+) ", request.messages[1].content or "", re.M)]


def call(name: str, **args: Any) -> ToolCall:
    return tool_call(name, args)


def respond(*calls: ToolCall) -> ChatResponse:
    return tool_calls_response(*calls)


def ack_nothing(request: LLMRequest) -> ChatResponse:
    return respond(call("acknowledge", token=token_of(request), outcome="nothing"))


def tool_results(request: LLMRequest) -> list[dict[str, Any]]:
    return [json.loads(m.content or "{}") for m in request.messages if m.role == "tool"]


async def count(core: Yuji, table: str) -> int:
    async with core.db.read() as conn:
        return int((await conn.execute(text(f"SELECT COUNT(*) FROM {table}"))).scalar_one())


async def run_batch(
    service: ConsolidationService, *, scope: str | None = None, force: bool = False
) -> BatchReport:
    """`run_once` that must have run a batch (the skip reason says why when it did not)."""
    report = await service.run_once(scope=scope, force=force)
    assert report is not None, service.last_skip
    return report
