"""A zygote for the crash-safety test: imports once, forks one worker per trial.

    python -m tests.core.consolidation.crash_worker DATA_DIR

Prints `zygote-ready`; each stdin line `go SEED` forks a worker that opens the core,
reconciles (as the bot does at start-up), then runs batches with a scripted model
until nothing is left, printing `started PID` first and `finished PID` last. The test
kills workers with SIGKILL at random instants; forking keeps a trial cheap.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import signal
import sys
from pathlib import Path

from memory_core import Settings, Yuji
from memory_core.llm import LLMRequest, ScriptedLLM, text_response, tool_call, tool_calls_response
from memory_core.llm.base import ChatResponse


def settings(data_dir: Path) -> Settings:
    return Settings(data_dir=data_dir, batch_max_messages=4, batch_max_chars=200)


def model(rng: random.Random) -> ScriptedLLM:
    def answer(request: LLMRequest) -> ChatResponse:
        user = request.messages[1].content or ""
        match = re.search(r"token：(\S+)", user)
        assert match
        token = match.group(1)
        ids = [int(i) for i in re.findall(r"^#(\d+) ", user, re.M)]
        turn = sum(1 for m in request.messages if m.role == "assistant")
        roll = rng.random()
        if roll < 0.15:
            return text_response("看完啦")  # no acknowledgement: the batch fails
        write = tool_call(
            "write_memory",
            {
                "token": token,
                "type": "event",
                "subject": "张三",
                "content": f"张三说了第{ids[0]}条",
                "evidence": ids[:2],
            },
        )
        if roll < 0.35 and turn == 0:
            return tool_calls_response(write)  # acknowledge on the next turn
        outcome = "extracted" if roll < 0.8 else "nothing"
        ack = tool_call(
            "acknowledge", {"token": token, "outcome": outcome, "summary": f"第{ids[0]}批"}
        )
        return (
            tool_calls_response(write, ack) if outcome == "extracted" else tool_calls_response(ack)
        )

    return ScriptedLLM(default=answer)


async def work(data_dir: Path, seed: int) -> None:
    core = await Yuji.open(settings(data_dir), llm=model(random.Random(seed)))
    try:
        await core.consolidation.reconcile()
        for _ in range(500):
            if await core.consolidation.run_once(force=True) is None:
                break
    finally:
        await core.close()


def main() -> None:
    data_dir = Path(sys.argv[1])
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # workers are reaped automatically
    print("zygote-ready", flush=True)
    for line in sys.stdin:
        parts = line.split()
        if not parts or parts[0] != "go":
            continue
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            print(f"started {os.getpid()}", flush=True)
            code = 0
            try:
                asyncio.run(work(data_dir, int(parts[1])))
                print(f"finished {os.getpid()}", flush=True)
            except BaseException as exc:
                print(f"crashed {os.getpid()} {exc!r}", flush=True)
                code = 1
            os._exit(code)


if __name__ == "__main__":
    main()
