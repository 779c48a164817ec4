"""The model misbehaves: it hangs (accepts, never answers), answers 500 or 429, or
answers garbage. Through a real core and a real client against a loopback server:

- a woken chat gets `YUJI_FAILURE_LINE`, within the one reply deadline;
- archiving goes on while the reply waits (messages sent meanwhile are all archived);
- a consolidation batch against the same model fails and no watermark moves.

`probe(mode)` serves the pytest form (tests/faults/test_model_faults.py) and
`benchmarks/faults/run.py`, which prints the figures.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memory_core import Settings, Yuji
from memory_core.chat.service import Incoming
from memory_core.types import NewExperience
from tests.fakes.openai_server import FakeOpenAIServer, Reply

MODES = ("hang", "500", "429", "garbage")
TIMEOUT_S = 2.0
MEANWHILE = 50
SCOPE = "group:7"
T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Probe:
    mode: str
    reply_kind: str
    reply_text: str
    reply_s: float
    archived_meanwhile: int
    batch_state: str
    watermarks_before: tuple[int, int]
    watermarks_after: tuple[int, int]


def answer(mode: str) -> Reply:
    return {
        "hang": Reply.slow(3600),
        "500": Reply.error(500),
        "429": Reply.error(429, **{"Retry-After": "0"}),
        "garbage": Reply.garbage(),
    }[mode]


def message(i: int) -> NewExperience:
    return NewExperience(
        scope=SCOPE,
        fingerprint=f"p{i}",
        sender_id=str(100 + i % 3),
        sender_name="阿明",
        text=f"第{i}条：鱼塘今天换水",
        sent_at=T0 + timedelta(seconds=i),
    )


async def probe(mode: str, data_dir: Path) -> Probe:
    server = FakeOpenAIServer()
    server.default = answer(mode)
    server.start()
    settings = Settings(
        data_dir=data_dir,
        llm_base_url=server.base_url,
        llm_model="fake",
        llm_api_key="test-key",
        llm_timeout_s=TIMEOUT_S,
        llm_max_retries=1,
    )
    core = await Yuji.open(settings)
    try:
        await core.archive.append_many([message(i) for i in range(20)])
        before = await core.consolidation.repo.cursor(SCOPE)
        sent: list[str] = []

        async def send(text: str) -> str:
            sent.append(text)
            return f"bot-{len(sent)}"

        woken = Incoming(
            scope=SCOPE,
            fingerprint="wake",
            sender_id="100",
            sender_name="阿明",
            text="大肥鱼在吗",
            sent_at=T0,
            self_id="10000",
            is_private=False,
        )
        started = time.monotonic()
        reply = asyncio.create_task(core.chat.respond(woken, send))
        meanwhile = [await core.archive.append(message(i)) for i in range(20, 20 + MEANWHILE)]
        outcome = await reply
        reply_s = time.monotonic() - started
        report = await core.consolidation.run_once(scope=SCOPE, force=True)
        after = await core.consolidation.repo.cursor(SCOPE)
        return Probe(
            mode=mode,
            reply_kind=outcome.kind,
            reply_text="".join(outcome.parts),
            reply_s=reply_s,
            archived_meanwhile=len(set(meanwhile)),
            batch_state=report.state if report is not None else "none",
            watermarks_before=(before.acked_id, before.delivered_id),
            watermarks_after=(after.acked_id, after.delivered_id),
        )
    finally:
        await core.close()
        server.stop()


def table(probes: list[Probe]) -> str:
    lines = [
        f"| model | chat gets | reply took (timeout {TIMEOUT_S:g} s) | archived meanwhile "
        "| batch | acked, delivered before -> after |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    lines += [
        f"| {p.mode} | {p.reply_kind} line | {p.reply_s:.2f} s | "
        f"{p.archived_meanwhile}/{MEANWHILE} | {p.batch_state} | "
        f"{p.watermarks_before} -> {p.watermarks_after} |"
        for p in probes
    ]
    return "\n".join(lines)
