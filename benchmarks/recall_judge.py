"""What the optional recall judge (`YUJI_RECALL_JUDGE=llm`) adds to a wake.

    .venv/bin/python benchmarks/recall_judge.py [--size 2000] [--queries 100]
        [--model-ms 0,400]

One chat of generated everyday memories (words only, so the run takes seconds), the
same questions recalled with the judge off and on. The judge's model is the loopback
OpenAI-compatible fake of the test suite, answering after `--model-ms` (0: what yuji's
own side costs, the prompt, the HTTP round trip and the parsing; a few hundred ms: a
small hosted model). Reported: recall p50/p95 with the judge off and on, the added
p50/p95, and per judged wake the prompt's characters and the tokens the usage table
recorded (the fake counts one token per character of the prompt, an upper bound for
Chinese on the common tokenizers).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.recall_latency import fill, questions
from memory_core import FakeClock, Settings, Yuji
from memory_core.eval.metrics import percentile
from tests.fakes.openai_server import FakeOpenAIServer, Reply

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
SCOPE = "group:1"


def judge_reply(delay_s: float) -> Any:
    """Names the first candidate of the prompt as the answer; usage = prompt chars."""

    def answer(body: dict[str, Any]) -> Reply:
        prompt = "\n".join(str(m.get("content") or "") for m in body.get("messages", []))
        first = prompt.split("#", 1)[1].split("（", 1)[0] if "#" in prompt else ""
        ids = [int(first)] if first.isdigit() else []
        usage = {"prompt_tokens": len(prompt), "completion_tokens": 12, "total_tokens": 0}
        return Reply(content=json.dumps({"answers": ids}), usage=usage, delay_s=delay_s)

    return answer


async def timed(core: Yuji, asked: list[str]) -> list[float]:
    out: list[float] = []
    for text in asked:
        started = time.perf_counter()
        await core.recall.recall(SCOPE, text, now=NOW)
        out.append((time.perf_counter() - started) * 1000)
    return out


async def measure(size: int, count: int, model_ms: float) -> dict[str, float]:
    with FakeOpenAIServer() as server, tempfile.TemporaryDirectory() as tmp:
        server.handler = judge_reply(model_ms / 1000)
        settings = Settings(
            data_dir=Path(tmp) / "data",
            vector_mode="off",
            llm_base_url=server.base_url,
            llm_model="fake-judge",
            consolidation_tick_s=86400,
        )
        core = await Yuji.open(settings, clock=FakeClock(NOW))
        try:
            contents = await fill(core, size)
            asked = questions(contents, count, random.Random(size))
            await timed(core, asked[:5])  # warm the caches
            core.live.current = settings.with_changes(recall_judge="off")
            off = await timed(core, asked)
            core.live.current = settings.with_changes(recall_judge="llm")
            on = await timed(core, asked)
            rows = [r for r in await core.usage.repo.rows() if r.job == "judge"]
        finally:
            await core.close()
    judged = max(1, len(rows))
    return {
        "off_p50": percentile(off, 50),
        "off_p95": percentile(off, 95),
        "on_p50": percentile(on, 50),
        "on_p95": percentile(on, 95),
        "added_p50": percentile([b - a for a, b in zip(off, on, strict=True)], 50),
        "added_p95": percentile([b - a for a, b in zip(off, on, strict=True)], 95),
        "judged": len(rows),
        "prompt_tokens": sum(r.prompt_tokens for r in rows) / judged,
        "completion_tokens": sum(r.completion_tokens for r in rows) / judged,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--model-ms", default="0,400")
    args = parser.parse_args()
    print(
        "model ms | off p50/p95 | on p50/p95 | added p50/p95 | judged wakes | "
        "prompt / completion tokens per judged wake"
    )
    for ms in (float(x) for x in args.model_ms.split(",")):
        r = await measure(args.size, args.queries, ms)
        print(
            f"{ms:>8.0f} | {r['off_p50']:.1f}/{r['off_p95']:.1f} | "
            f"{r['on_p50']:.1f}/{r['on_p95']:.1f} | {r['added_p50']:.1f}/{r['added_p95']:.1f} | "
            f"{r['judged']:>4.0f}/{args.queries} | "
            f"{r['prompt_tokens']:.0f} / {r['completion_tokens']:.0f}"
        )


if __name__ == "__main__":
    asyncio.run(main())
