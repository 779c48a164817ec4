"""`yuji demo` as a process: SIGINT or SIGTERM to it stops it and the bot it started,
promptly, and the port is free again (also when it was started in the background)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from .harness import ROOT, START_TIMEOUT_S, free_port, wait_until

pytestmark = pytest.mark.e2e

PROMPTLY_S = 15.0


async def listening(port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return False
    writer.close()
    return True


def children(pid: int) -> list[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text(encoding="utf-8")
    return [int(p) for p in text.split()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
async def test_a_signal_to_the_demo_stops_it_and_its_bot(
    tmp_path: Path, sig: signal.Signals
) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("YUJI_", "ONEBOT_"))}
    with (tmp_path / "demo.log").open("wb") as log:
        # Started as a shell's `&` starts it: with SIGINT ignored.
        demo = await asyncio.create_subprocess_exec(
            "sh",
            "-c",
            'trap "" INT; exec "$@"',
            "sh",
            sys.executable,
            "-m",
            "memory_core.cli",
            "demo",
            "--dir",
            str(tmp_path / "demo"),
            "--port",
            str(port),
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=log,
        )
    bot = 0
    try:
        await wait_until(lambda: listening(port), timeout_s=START_TIMEOUT_S + 60)
        (bot,) = children(demo.pid)
        demo.send_signal(sig)
        started = time.monotonic()
        code = await asyncio.wait_for(demo.wait(), PROMPTLY_S)
        await wait_until(lambda: not alive(bot), timeout_s=5)
    finally:
        if demo.returncode is None:
            demo.kill()
            await demo.wait()
        if bot and alive(bot):
            os.kill(bot, signal.SIGKILL)  # never leave a bot serving after a failure
    assert time.monotonic() - started < PROMPTLY_S
    assert code == 0, (tmp_path / "demo.log").read_text("utf-8", errors="replace")
    assert not await listening(port)
