"""What the reply path costs besides the model: wake check, recall, context, prompt,
marker stripping, splitting, the injection row.

    .venv/bin/python benchmarks/chat_overhead.py [--memories 10000] [--replies 200]

A fresh database in a temporary folder holds `--memories` memories and 500 archived
messages in one group; the model is a `ScriptedLLM` answering instantly, so the
timings are yuji's own. Prints p50/p95 of `core.chat.respond` for woken messages
(and of recall alone on the same questions, which dominates), of a not-woken
message, and the prompt's size (characters, estimated tokens). The synthetic
memories are deliberately repetitive (ten topics), a hard case for recall.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from memory_core import Incoming, NewExperience, Settings, Yuji
from memory_core.llm.base import ChatResponse
from memory_core.llm.fake import LLMRequest, ScriptedLLM, text_response
from memory_core.memories.outcomes import NewMemory
from memory_core.prompts.budget import estimate_tokens
from memory_core.types import EvidenceRef

SCOPE = "group:1"
TOPICS = ["撤离率", "火锅", "开黑", "猫", "出差", "生日", "考试", "吉他", "爬山", "咖啡"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main(memories: int, replies: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="yuji-chat-bench-"))
    prompts: list[int] = []

    def answer(request: LLMRequest) -> ChatResponse:
        prompts.append(sum(len(m.content or "") for m in request.messages))
        return text_response("咕噜，记得的[[m:1]]")

    llm = ScriptedLLM(default=answer)
    core = await Yuji.open(Settings(data_dir=folder), llm=llm)
    try:
        now = datetime.now(UTC)
        ids = await core.archive.append_many(
            [
                NewExperience(
                    scope=SCOPE,
                    fingerprint=f"m{i}",
                    sender_id=str(100 + i % 30),
                    sender_name=f"群友{i % 30}",
                    text=f"第{i}条：聊聊{TOPICS[i % len(TOPICS)]}的事情",
                    sent_at=now,
                )
                for i in range(500)
            ]
        )
        batch = [
            NewMemory(
                type="fact",
                subject=f"群友{i % 30}",
                content=f"群友{i % 30}说过第{i}件关于{TOPICS[i % len(TOPICS)]}的事：编号{i}",
                evidence=[EvidenceRef(experience_id=ids[i % len(ids)])],
            )
            for i in range(memories)
        ]
        for start in range(0, len(batch), 1000):
            await core.memories.write_many(SCOPE, batch[start : start + 1000])
        woken: list[float] = []
        recall_only: list[float] = []
        for i in range(replies):
            incoming = Incoming(
                scope=SCOPE,
                fingerprint=f"q{i}",
                sender_id="100",
                sender_name="群友0",
                text=f"大肥鱼，{TOPICS[i % len(TOPICS)]}那件事还记得吗",
                sent_at=datetime.now(UTC),
                self_id="1",
                is_private=False,
            )
            started = time.perf_counter()
            await core.chat.respond(incoming, _sent)
            woken.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            await core.recall.recall(SCOPE, incoming.text, limit=5)
            recall_only.append((time.perf_counter() - started) * 1000)
        silent: list[float] = []
        for i in range(replies):
            incoming = Incoming(
                scope=SCOPE,
                fingerprint=f"s{i}",
                sender_id="100",
                sender_name="群友0",
                text="今天天气不错",
                sent_at=datetime.now(UTC),
                self_id="1",
                is_private=False,
            )
            started = time.perf_counter()
            await core.chat.respond(incoming, _sent)
            silent.append((time.perf_counter() - started) * 1000)
        last = llm.requests[-1].messages
        tokens = sum(estimate_tokens(m.content or "") for m in last)
        print(f"memories in the chat: {memories}, replies: {replies}")
        print(
            f"woken respond(): p50 {statistics.median(woken):.1f} ms, "
            f"p95 {percentile(woken, 0.95):.1f} ms (model time excluded)"
        )
        print(
            f"  of which recall alone: p50 {statistics.median(recall_only):.1f} ms, "
            f"p95 {percentile(recall_only, 0.95):.1f} ms"
        )
        print(
            f"not woken respond(): p50 {statistics.median(silent):.2f} ms, "
            f"p95 {percentile(silent, 0.95):.2f} ms"
        )
        print(f"prompt: {statistics.median(prompts):.0f} characters, ~{tokens} tokens (last)")
    finally:
        await core.close()


async def _sent(text: str) -> str:
    return "bot-msg"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--replies", type=int, default=200)
    args = parser.parse_args()
    asyncio.run(main(args.memories, args.replies))
