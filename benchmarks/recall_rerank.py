"""What a reranker (`YUJI_RERANK_*`, docs/providers.md) adds to a wake.

    .venv/bin/python benchmarks/recall_rerank.py [--size 2000] [--queries 100]
        [--server-ms 0,50,200] [--candidates 20]

One chat of generated everyday memories (words only, so the run takes seconds: the
reranker's cost does not depend on the dense path), the same questions recalled with
the reranker stage off and on, alternately. The reranker is the loopback rerank API of
the test suite (tests/fakes/provider_server.py) in a process of its own (as a provider
is: its work never shares the bot's interpreter), answering after `--server-ms` (0: what
yuji's own side costs, the request, the HTTP round trip and the parsing; 50 and 200:
a hosted model nearby and far). The weights are the shipped words-only ones with the
reranker's column added (its calibration does not change the time). Reported: recall
p50/p95 off and on, the added p50/p95 (per question, on minus off), the candidates
sent per wake and the tokens the usage table recorded per wake (the fake counts one
token per character it reads: the question once per candidate plus the candidates,
an upper bound for Chinese on the common tokenizers).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import random
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.recall_latency import fill, questions
from memory_core import FakeClock, Settings, Yuji
from memory_core.eval.metrics import percentile
from memory_core.recall import relevance
from memory_core.recall.relevance import LEXICAL

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
SCOPE = "group:1"


def bench_weights(folder: Path, reranker: str) -> None:
    """The shipped words-only weights with the reranker's column (weight 1)."""
    base = relevance.load(LEXICAL)
    model = dataclasses.replace(
        base,
        features=(*base.features, relevance.RERANK),
        mean=np.append(base.mean, 0.0),
        scale=np.append(base.scale, 1.0),
        weights=np.append(base.weights, 1.0),
        reranker=reranker,
    )
    folder.mkdir(parents=True, exist_ok=True)
    (folder / model.file_name).write_text(model.to_json(), encoding="utf-8")


@contextmanager
def rerank_server(delay_ms: float) -> Iterator[str]:
    """The loopback rerank API in a child process; its base URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = Path(__file__).resolve().parent / "rerank_oracle.py"
    argv = [sys.executable, str(script), "--port", str(port), "--delay-ms", str(delay_ms)]
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        child.stdout.readline()  # "rerank oracle on ...": listening
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        child.terminate()
        child.wait()


async def measure(size: int, count: int, server_ms: float, candidates: int) -> dict[str, float]:
    with rerank_server(server_ms) as url, tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            data_dir=Path(tmp) / "data",
            vector_mode="off",
            rerank_base_url=url,
            rerank_model="bench",
            rerank_candidates=candidates,
            consolidation_tick_s=86400,
        )
        bench_weights(settings.calibration_path, "api-bench")
        core = await Yuji.open(settings, clock=FakeClock(NOW))
        try:
            core.recall.check()
            stage = core.recall.rerank
            contents = await fill(core, size)
            asked = questions(contents, count, random.Random(size))
            off: list[float] = []
            on: list[float] = []
            sent: list[int] = []
            for text in asked[:5]:  # warm the caches and the connection
                await core.recall.recall(SCOPE, text, now=NOW)
            for text in asked:
                for arm, out in ((None, off), (stage, on)):
                    core.recall.rerank = arm
                    started = time.perf_counter()
                    got = await core.recall.recall(SCOPE, text, now=NOW)
                    out.append((time.perf_counter() - started) * 1000)
                    sent += [
                        int(t.split(": ")[1].split()[0])
                        for t in got.trace
                        if t.startswith("reranker api")
                    ]
            await core.provider_usage.drain()
            rows = [r for r in await core.usage.repo.rows() if r.job == "rerank"][:count]
        finally:
            await core.close()
    added = [b - a for a, b in zip(off, on, strict=True)]
    return {
        "off_p50": percentile(off, 50),
        "off_p95": percentile(off, 95),
        "on_p50": percentile(on, 50),
        "on_p95": percentile(on, 95),
        "added_p50": percentile(added, 50),
        "added_p95": percentile(added, 95),
        "reranked": len(sent),
        "documents": sum(sent) / max(1, len(sent)),
        "tokens": sum(r.prompt_tokens for r in rows) / max(1, len(rows)),
        "failed": sum(r.outcome != "ok" for r in rows),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--server-ms", default="0,50,200")
    parser.add_argument("--candidates", type=int, default=20)
    args = parser.parse_args()
    print(
        "server ms | off p50/p95 | on p50/p95 | added p50/p95 | reranked wakes | "
        "candidates / tokens per wake | failed"
    )
    for ms in (float(x) for x in args.server_ms.split(",")):
        r = await measure(args.size, args.queries, ms, args.candidates)
        print(
            f"{ms:>9.0f} | {r['off_p50']:.1f}/{r['off_p95']:.1f} | "
            f"{r['on_p50']:.1f}/{r['on_p95']:.1f} | {r['added_p50']:.1f}/{r['added_p95']:.1f} | "
            f"{r['reranked']:>4.0f}/{args.queries} | {r['documents']:.1f} / {r['tokens']:.0f} | "
            f"{r['failed']:.0f}"
        )


if __name__ == "__main__":
    asyncio.run(main())
