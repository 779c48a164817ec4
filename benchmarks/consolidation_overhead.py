"""Consolidation overhead with a model that answers instantly.

    .venv/bin/python benchmarks/consolidation_overhead.py [--messages 10000] [--groups 20]
                                                          [--fail-rate 0.0] [--seed 1]

A fresh database in a temporary folder gets `--messages` archived group messages
(lengths 2..300 characters, mixed chats, a few bot messages). Then batches run one
after another through `core.consolidation.run_once()` with the scripted model (each
batch: one search, one write with evidence, one acknowledgement; with `--fail-rate`
that share of first answers is small talk without an acknowledgement, so the batch
fails and is delivered again). Reported:

- batches formed (done / failed), messages and characters per batch;
- characters delivered per archived character: the message text of every delivered
  batch, re-deliveries included, over the archived text (target <= 1.1 with no
  failures); and the whole first prompt (system text + formatting) per archived char;
- wall time, time inside the model (~0 here) and the time outside it, per batch, and
  the process CPU time (steadier than wall time on a shared machine).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import re
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memory_core import FakeClock, NewExperience, Settings, Yuji
from memory_core.consolidation.runner import BatchReport
from memory_core.llm import LLMRequest, ScriptedLLM, text_response, tool_call, tool_calls_response
from memory_core.llm.base import ChatResponse

WORDS = [
    "今天",
    "食堂",
    "红烧肉",
    "真香",
    "明天",
    "爬山",
    "打游戏",
    "上分",
    "作业",
    "好难",
    "哈哈哈",
    "周末",
    "电影",
    "猫猫",
    "加班",
    "下雨",
]


def instant_model(rng: random.Random, fail_rate: float) -> ScriptedLLM:
    def answer(request: LLMRequest) -> ChatResponse:
        user = request.messages[1].content or ""
        token = re.search(r"token：(\S+)", user)
        assert token
        ids = [int(i) for i in re.findall(r"^#(\d+) ", user, re.M)]
        if len(request.messages) == 2 and rng.random() < fail_rate:
            return text_response("看完啦～")
        t = token.group(1)
        return tool_calls_response(
            tool_call("search_memories", {"token": t, "query": "红烧肉"}),
            tool_call(
                "write_memory",
                {
                    "token": t,
                    "type": "event",
                    "subject": "group",
                    "content": f"第{ids[0]}到{ids[-1]}条在聊吃的",
                    "evidence": ids[:2],
                },
            ),
            tool_call("acknowledge", {"token": t, "outcome": "extracted", "summary": "聊吃的"}),
        )

    return ScriptedLLM(default=answer)


async def run(messages: int, groups: int, fail_rate: float, seed: int) -> None:
    rng = random.Random(seed)
    start = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
    clock = FakeClock(start)
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp) / "data", consolidation_hourly_cap=10**9)
        core = await Yuji.open(settings, clock=clock, llm=instant_model(rng, fail_rate))
        try:
            archived_chars = 0
            exps: list[NewExperience] = []
            for i in range(messages):
                text = "".join(rng.choice(WORDS) for _ in range(rng.randint(1, 100)))[
                    : rng.randint(2, 300)
                ]
                archived_chars += len(text)
                exps.append(
                    NewExperience(
                        scope=f"group:{100 + rng.randrange(groups)}",
                        fingerprint=str(i),
                        sender_id=str(rng.randint(1, 50)),
                        sender_name="群友",
                        text=text,
                        is_bot=rng.random() < 0.05,
                        sent_at=start - timedelta(seconds=messages - i),
                    )
                )
            await core.archive.append_many(exps)
            await core.archive.flush()
            clock.advance(timedelta(hours=3))  # every chat's oldest message has waited

            reports: list[BatchReport] = []
            began = time.perf_counter()
            cpu_began = time.process_time()
            while (report := await core.consolidation.run_once()) is not None:
                reports.append(report)
            wall = time.perf_counter() - began
            cpu = time.process_time() - cpu_began
        finally:
            await core.close()

    done = [r for r in reports if r.state == "done"]
    failed = [r for r in reports if r.state == "failed"]
    delivered = sum(r.chars for r in reports)
    prompt = sum(r.prompt_chars for r in reports)
    model_s = sum(r.model_s for r in reports)
    outside = wall - model_s
    print(f"archived: {messages} messages in {groups} chats, {archived_chars} characters")
    print(
        f"batches: {len(reports)} ({len(done)} done, {len(failed)} failed, fail rate {fail_rate})"
    )
    print(
        f"per done batch: {sum(r.messages for r in done) / max(1, len(done)):.1f} messages, "
        f"{sum(r.chars for r in done) / max(1, len(done)):.0f} characters"
    )
    print(f"characters delivered per archived character: {delivered / archived_chars:.3f}")
    print(
        f"prompt characters (incl. system text, formatting) per archived: {prompt / archived_chars:.3f}"
    )
    print(
        f"wall {wall:.2f}s, inside the model {model_s:.3f}s, outside {outside:.2f}s "
        f"({outside / max(1, len(reports)) * 1000:.1f} ms per batch, "
        f"{outside / messages * 1000:.2f} ms per message)"
    )
    print(
        f"CPU (all threads of this process) {cpu:.2f}s: "
        f"{cpu / max(1, len(reports)) * 1000:.1f} ms per batch"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="consolidation overhead with an instant model")
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--groups", type=int, default=20)
    parser.add_argument("--fail-rate", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    asyncio.run(run(args.messages, args.groups, args.fail_rate, args.seed))


if __name__ == "__main__":
    main()
