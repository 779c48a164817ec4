"""Tokens per archived character for one simulated day of a busy group, per job.

    .venv/bin/python benchmarks/llm_tokens.py [--messages 2000] [--wake-rate 0.05] [--seed 1]

One group, `--messages` messages spread over 08:00-24:00 (Shanghai), lengths
2..60 characters of everyday chat; `--wake-rate` of them call the bot by name and get
a reply. Consolidation runs on its real schedule (a tick every 10 simulated minutes,
eligibility rules and hourly cap as configured), and the nightly run at 04:00 the
next morning. The model is an instant fake that answers every job validly and reports
`usage` the way a provider would: prompt tokens estimated with yuji's own
`estimate_tokens` over every message and the tool schemas, completion tokens over
the answer, and cached tokens as the prefix shared with the previous call of the same
job, in 64-token blocks (DeepSeek's prefix cache). What is reported comes from the
`llm_usage` rows the run wrote (`core.usage`), so the accounting itself is measured.

The fake's consolidation answers in one turn (search, write, acknowledge at once);
a real model usually takes two or three, re-sending the conversation each time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.consolidation_overhead import WORDS, instant_model
from memory_core import FakeClock, NewExperience, Settings, Yuji
from memory_core.chat.service import Incoming
from memory_core.llm import LLMRequest, ScriptedLLM, text_response
from memory_core.llm.base import ChatResponse
from memory_core.llm.fake import Responder
from memory_core.prompts.budget import estimate_tokens
from tests.core.nightly.seed import quiet_responder, sh

SCOPE = "group:8001"
CACHE_BLOCK = 64


def _consolidating() -> Responder:
    """consolidation_overhead's instant model: search, write, acknowledge in one turn."""
    responder = instant_model(random.Random(0), 0.0).default
    if responder is None or isinstance(responder, ChatResponse | BaseException):
        raise SystemExit("consolidation_overhead.instant_model changed shape")
    return responder


CONSOLIDATE = _consolidating()


class InstantModel:
    def __init__(self) -> None:
        self.last_prompt: dict[str, str] = {}

    def answer(self, request: LLMRequest) -> ChatResponse:
        tools = [t.name for t in request.tools]
        if "acknowledge" in tools:
            job, response = "consolidation", CONSOLIDATE(request)
            assert isinstance(response, ChatResponse)
        elif request.schema is not None:
            job, response = "nightly", quiet_responder(request)
        else:
            job, response = "chat", text_response("哈哈是这样的，我也觉得")
        prompt = "\n".join(m.content or "" for m in request.messages)
        prompt += json.dumps([t.parameters for t in request.tools], ensure_ascii=False)
        previous = self.last_prompt.get(job, "")
        shared = 0
        while shared < min(len(prompt), len(previous)) and prompt[shared] == previous[shared]:
            shared += 1
        self.last_prompt[job] = prompt
        prompt_tokens = estimate_tokens(prompt)
        cached = estimate_tokens(prompt[:shared]) // CACHE_BLOCK * CACHE_BLOCK
        message = response.message
        completion = (message.content or "") + "".join(c.arguments for c in message.tool_calls)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": estimate_tokens(completion),
            "cached_tokens": min(cached, prompt_tokens),
        }
        return ChatResponse(message, response.finish_reason, usage)


async def run(messages: int, wake_rate: float, seed: int) -> None:
    rng = random.Random(seed)
    start = sh(2026, 11, 20, 8, 0)
    clock = FakeClock(start)
    model = InstantModel()
    step = timedelta(hours=16) / messages
    next_tick = start + timedelta(minutes=10)
    archived = 0
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp) / "data", nicknames=("大肥鱼",))
        core = await Yuji.open(settings, clock=clock, llm=ScriptedLLM(default=model.answer))

        async def send(text: str) -> str:
            return f"bot-{rng.random()}"

        try:
            for i in range(messages):
                clock.advance(step)
                text = "".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))[
                    : rng.randint(2, 60)
                ]
                woken = rng.random() < wake_rate
                if woken:
                    text = f"大肥鱼，{text}"
                archived += len(text)
                sender = str(20000 + rng.randrange(40))
                await core.archive.append(
                    NewExperience(
                        scope=SCOPE,
                        fingerprint=str(i),
                        sender_id=sender,
                        sender_name=f"群友{sender[-2:]}",
                        text=text,
                        sent_at=clock.now(),
                    )
                )
                if woken:
                    await core.archive.flush()
                    incoming = Incoming(
                        SCOPE, str(i), sender, "群友", text, clock.now(), "10000", False
                    )
                    await core.chat.respond(incoming, send)
                if clock.now() >= next_tick:
                    next_tick += timedelta(minutes=10)
                    await core.archive.flush()
                    await core.consolidation.run_once()
            clock.set(sh(2026, 11, 21, 3, 0))
            while await core.consolidation.run_once() is not None:
                pass
            clock.set(sh(2026, 11, 21, 4, 0))
            await core.nightly.run()
            rows = await core.usage.repo.rows(limit=10**6)
        finally:
            await core.close()
    print(f"day: {messages} messages, {archived} archived characters, wake rate {wake_rate}")
    print(f"{'job':<14}{'calls':>6}{'prompt':>10}{'cached':>9}{'compl.':>8}{'tok/char':>10}")
    total = 0
    for job in ("chat", "consolidation", "nightly"):
        mine = [r for r in rows if r.job == job]
        prompt = sum(r.prompt_tokens for r in mine)
        cached = sum(r.cached_tokens for r in mine)
        completion = sum(r.completion_tokens for r in mine)
        total += prompt + completion
        share = f"{cached / prompt:.0%}" if prompt else "-"
        print(
            f"{job:<14}{len(mine):>6}{prompt:>10}{share:>9}{completion:>8}"
            f"{(prompt + completion) / archived:>10.2f}"
        )
    print(f"{'all':<14}{len(rows):>6}{'':>27}{total / archived:>10.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--wake-rate", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    asyncio.run(run(args.messages, args.wake_rate, args.seed))


if __name__ == "__main__":
    main()
