"""A bot process for the concurrent crash test: the real scheduler, two batches in flight.

    python -m tests.core.consolidation.concurrent_crash_worker DATA_DIR

Opens the core on DATA_DIR, reconciles and starts the scheduler (the defaults: two
chats at a time). The model acknowledges `group:3` at once; in every other chat it
writes a memory on its first turn and then never answers again. Once two such batches
hang at the same time it prints `ready`; the test then SIGKILLs the process.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from memory_core import Settings, Yuji
from memory_core.llm import LLMRequest, ScriptedLLM, tool_call, tool_calls_response
from memory_core.llm.base import ChatResponse

ACKED_AT_ONCE = "group:3"


def settings(data_dir: Path) -> Settings:
    return Settings(data_dir=data_dir)


def token_and_ids(request: LLMRequest) -> tuple[str, list[int]]:
    user = request.messages[1].content or ""
    match = re.search(r"token：(\S+)", user)
    assert match
    return match.group(1), [int(i) for i in re.findall(r"^#(\d+) ", user, re.M)]


async def work(data_dir: Path) -> None:
    hung: set[str] = set()

    async def answer(request: LLMRequest) -> ChatResponse:
        token, ids = token_and_ids(request)
        scope = request.scope or ""
        if scope == ACKED_AT_ONCE:
            return tool_calls_response(
                tool_call("acknowledge", {"token": token, "outcome": "nothing"})
            )
        if not any(m.role == "assistant" for m in request.messages):
            return tool_calls_response(
                tool_call(
                    "write_memory",
                    {
                        "token": token,
                        "type": "event",
                        "subject": "张三",
                        "content": f"张三在{scope}说了第{ids[0]}条",
                        "evidence": ids[:1],
                    },
                )
            )
        hung.add(scope)
        if len(hung) == 2:
            print("ready", flush=True)
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    core = await Yuji.open(settings(data_dir), llm=ScriptedLLM(default=answer))
    await core.consolidation.reconcile()
    loop = core.consolidation.start()
    assert loop is not None
    await loop  # runs until the kill


def main() -> None:
    asyncio.run(work(Path(sys.argv[1])))


if __name__ == "__main__":
    main()
