"""`yuji demo [--dir DIR] [--port N] [--no-serve]`: the console on a sample world.

Loads the shipped, labelled sample chat world (memory_core/console/data/demo_world.json)
into a separate data directory (default `data-demo/`, never `data/`), then starts the
bot on it, bound to 127.0.0.1 with no model, no Telegram and a fresh one-time console
token printed here, so a newcomer sees cards, memories and recall without a QQ account
or a model key. Runs from a checkout of the repository (it starts its bot.py).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

import memory_core
from memory_core.cli.demo_world import load_demo
from memory_core.errors import ValidationError
from memory_core.service import Yuji
from memory_core.settings import Settings
from memory_core.vectors.build import sync_index

ROOT = Path(memory_core.__file__).resolve().parents[1]
STOP_S = 15.0
"""How long the bot may take to stop after a signal before it is killed."""
QUIET = ("YUJI_LLM_BASE_URL", "YUJI_LLM_MODEL", "YUJI_LLM_API_KEY", "YUJI_TELEGRAM_BOT_TOKEN")


def register(subparsers: Any) -> None:
    summary = "把样例聊天世界装进单独的目录，在它上面打开网页控制台"
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "demo",
        help=summary,
        description=summary + "（用自己的 --dir，不看 --data-dir 和 YUJI_DATA_DIR）",
    )
    parser.add_argument(
        "--dir", type=Path, default=Path("data-demo"), help="样例数据目录（默认 data-demo/）"
    )
    parser.add_argument("--port", type=int, default=8099, help="127.0.0.1 上的端口（默认 8099）")
    parser.add_argument("--no-serve", action="store_true", help="只装样例数据，什么也不启动")
    parser.set_defaults(func=run)


async def prepare(folder: Path) -> str:
    """Load the sample world into `folder` (once); returns its label. Refuses a folder
    holding real data."""
    core = await Yuji.open(Settings(data_dir=folder))
    try:
        if core.console.sample_label:
            return core.console.sample_label
        if await core.archive.scopes():
            raise ValidationError(f"{folder} 里已有不是样例的数据（样例只进空目录）")
        label = (await load_demo(core)).label
        if core.vectors is not None:
            # The sample's few memories are embedded here (a second or two), so recall
            # finds by meaning from the first question, with or without the bot.
            await sync_index(core.memory_repo, core.vectors.embedder, core.vector_place)
        return label
    finally:
        await core.close()


def run(args: argparse.Namespace) -> int:
    folder: Path = args.dir.resolve()
    label = asyncio.run(prepare(folder))
    print(f"{label}\n样例数据目录：{folder}")
    print(f"用命令行看它：yuji --data-dir {shlex.quote(str(folder))} status")
    if args.no_serve:
        return 0
    bot = ROOT / "bot.py"
    if not bot.is_file():
        raise ValidationError("yuji demo 要启动机器人：请在仓库的检出目录里运行它")
    token = secrets.token_urlsafe(24)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("YUJI_", "ONEBOT_"))}
    env.update(dict.fromkeys(QUIET, ""))
    env.update(
        YUJI_DATA_DIR=str(folder),
        YUJI_CONSOLE_TOKEN=token,
        ONEBOT_ACCESS_TOKEN=secrets.token_urlsafe(24),
        HOST="127.0.0.1",
        PORT=str(args.port),
    )
    print(
        f"控制台：http://127.0.0.1:{args.port}/yuji/\n一次性令牌（本次运行有效）：{token}\n按 Ctrl+C 结束。"
    )
    # Its own session: a terminal's Ctrl+C reaches only this process, which passes it
    # on once (a second SIGINT would make uvicorn skip the graceful stop).
    child = subprocess.Popen([sys.executable, str(bot)], cwd=ROOT, env=env, start_new_session=True)
    return supervise(child)


def supervise(child: subprocess.Popen[bytes]) -> int:
    """Wait for the bot; SIGINT or SIGTERM to this process stop the bot too, killing
    it after STOP_S. The handlers are set explicitly: a demo started in the background
    inherits SIGINT ignored, and SIGTERM's default would end this process alone and
    leave the bot serving on the port."""
    deadline: list[float] = []

    def forward(signum: int, _frame: FrameType | None) -> None:
        if child.poll() is None:
            child.send_signal(signum)
        deadline[:] = [time.monotonic() + STOP_S]

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, forward)
    while True:
        try:
            return child.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            if deadline and time.monotonic() > deadline[0]:
                child.kill()
