"""yuji inside someone else's bot, installed from its wheel, serving QQ and Telegram.

The project is the one docs/plugin.md tells an operator to write (tests/e2e/host_project.py
takes its `pyproject.toml` and `bot.py` from the page's code blocks; every setting in
`.env`, a `/ping` plugin and a plugin using yuji's API); it starts with yuji loaded,
without NoneBot's legacy-format warning, and says each start-up thing once. It
runs as its own process from a virtual environment made with `--system-site-packages`
over this test environment (its site-packages named in a `.pth`), with the wheel built
from this checkout installed into it (`pip wheel` offline, `pip install --no-deps
--no-index`): the plugin it loads is the wheel's, not this checkout's. One process
serves a real OneBot v11 connection (the NapCat-like peer) and Telegram (the adapter
polling a fake Bot API on 127.0.0.1); the model is the fake OpenAI server.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import sysconfig
import time
import tomllib
from itertools import chain
from pathlib import Path
from typing import Any

import nonebot
import pytest

from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server
from tests.fakes.telegram_server import FakeTelegramServer, telegram_server

from .harness import (
    DEFAULT_TOKEN,
    ROOT,
    ApiCall,
    BotProcess,
    OnebotPeer,
    count_rows,
    free_port,
    query,
    wait_until,
)
from .host_project import page_block, seen_ids, write_project

__all__ = ["openai_server", "telegram_server"]

pytestmark = pytest.mark.e2e

QQ_GROUP = 100123456
TG_GROUP = -100123456
"""A Telegram supergroup with the QQ group's digits: two chats that must never meet."""
QQ_FACT = "下周五我要去成都参加一场马拉松比赛"
TG_FACT = "下周六我要去厦门看一场海边音乐节"
TG_BOT = "yuji_bot"
TG_ADMIN, TG_MEMBER = 7001, 7002
LEGACY_WARNING = "Legacy project format found!"
"""What NoneBot's `load_from_toml` logs for a `plugins` list (the old format)."""
YUJI_LOADED = 'Succeeded to load plugin "nonebot_plugin_yuji"'


def test_the_page_s_project_is_the_format_nonebot_loads_without_a_warning() -> None:
    # The warning is NoneBot's own text, so its absence from a log below means something.
    assert LEGACY_WARNING in inspect.getsource(nonebot.load_from_toml)
    table = tomllib.loads(page_block("pyproject.toml"))["tool"]["nonebot"]
    # Both tables keyed by package: what load_from_toml and nb-cli take as current.
    assert isinstance(table["plugins"], dict)
    assert isinstance(table["adapters"], dict)
    assert "nonebot_plugin_yuji" in chain.from_iterable(table["plugins"].values())
    modules = [a["module_name"] for a in chain.from_iterable(table["adapters"].values())]
    assert modules == ["nonebot.adapters.onebot.v11", "nonebot.adapters.telegram"]


@pytest.fixture(scope="module")
def host_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A venv over this environment with the wheel built from this checkout in it."""
    folder = tmp_path_factory.mktemp("venv")
    wheels = folder / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "-q", "-w", str(wheels), str(ROOT)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (wheel,) = wheels.glob("nonebot_plugin_yuji-*.whl")
    venv = folder / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
        check=True, timeout=120,
    )  # fmt: skip
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    # The test environment's packages, after the venv's own (the editable checkout's
    # .pth files there are not processed, so only the wheel provides the plugin).
    (Path(site) / "host-test-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
         "--no-deps", "--no-index", str(wheel)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    where = subprocess.run(
        [str(python), "-c", "from importlib.util import find_spec as f; "
         "print(f('nonebot_plugin_yuji').origin); print(f('memory_core').origin)"],
        check=True, capture_output=True, text=True, cwd=folder,
    ).stdout.split()  # fmt: skip
    assert all(path.startswith(str(venv)) for path in where), where
    return str(python)


def dotenv(
    port: int, data: Path, telegram: FakeTelegramServer, llm: dict[str, str]
) -> dict[str, str]:
    api_server = telegram.base_url.removesuffix("bot")
    return {
        "DRIVER": "~fastapi+~httpx",
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "LOG_LEVEL": "INFO",
        "ONEBOT_ACCESS_TOKEN": DEFAULT_TOKEN,
        "COMMAND_START": '["/"]',
        "NICKNAME": '["大肥鱼"]',
        "TELEGRAM_BOTS": json.dumps([{"token": telegram.token, "api_server": api_server}]),
        "YUJI_DATA_DIR": str(data),
        "YUJI_VECTOR_MODE": "off",
        "YUJI_BACKFILL_INTERVAL_S": "0",
        "YUJI_CONSOLIDATION_TICK_S": "86400",
        "YUJI_ELIGIBLE_MIN_PENDING": "1000000",
        "YUJI_ELIGIBLE_MAX_WAIT_S": "86400",
        **llm,
    }


def host_bot(tmp_path: Path, python: str, settings: dict[str, str], port: int) -> BotProcess:
    project = write_project(tmp_path / "project", settings)
    # Nothing of this checkout on the path, and no YUJI_* in the environment: the
    # project's .env is all the configuration there is.
    return BotProcess(tmp_path, cwd=project, python=python, port=port, env={"PYTHONPATH": ""})


class QQ:
    def __init__(self, peer: OnebotPeer) -> None:
        self.peer = peer
        self.next_id = 500_000
        self.said = 0

    async def say(self, text: str, *, user_id: int = 20001, **kw: Any) -> None:
        self.next_id += 1
        self.said += 1
        await self.peer.send_event(
            self.peer.group_message(
                text, group_id=QQ_GROUP, message_id=self.next_id, user_id=user_id, **kw
            )
        )

    async def ask(self, text: str, **kw: Any) -> str:
        start = len(self.peer.calls)
        await self.say(text, **kw)
        call = await self.peer.wait_for_call("send_msg", start=start)
        return _text(call)


def _text(call: ApiCall) -> str:
    message = call.params.get("message")
    if isinstance(message, str):
        return message
    return "".join(
        str(s.get("data", {}).get("text", "")) for s in message or [] if s.get("type") == "text"
    )


class Telegram:
    def __init__(self, server: FakeTelegramServer) -> None:
        self.server = server
        self.next_id = 0
        self.said = 0

    def say(self, text: str = "", *, user_id: int = TG_MEMBER, **fields: Any) -> dict[str, Any]:
        self.next_id += 1
        self.said += 1
        message: dict[str, Any] = {
            "message_id": self.next_id,
            "date": int(time.time()),
            "chat": {"id": TG_GROUP, "type": "supergroup", "title": "同数字的群"},
            "from": {"id": user_id, "is_bot": False, "first_name": f"tg{user_id}"},
            **({"text": text} if text else {}),
            **fields,
        }
        self.server.push_update(message)
        return message

    async def ask(self, text: str, **kw: Any) -> dict[str, str]:
        before = len(self.server.sent(TG_GROUP))
        self.say(text, **kw)
        await wait_until(lambda: len(self.server.sent(TG_GROUP)) > before)
        return self.server.sent(TG_GROUP)[before]

    async def mention(self, question: str) -> dict[str, str]:
        text = f"@{TG_BOT} {question}"
        entity = [{"type": "mention", "offset": 0, "length": len(TG_BOT) + 1}]
        return await self.ask(text, entities=entity)


def prompt_after(llm: FakeOpenAIServer, before: int) -> str:
    return "\n".join(r.prompt_text for r in llm.requests[before:])


async def test_yuji_in_a_host_bot_serves_qq_and_telegram_apart(
    tmp_path: Path,
    host_python: str,
    openai_server: FakeOpenAIServer,
    telegram_server: FakeTelegramServer,
) -> None:
    openai_server.handler = lambda _body: Reply.text("咕噜，记得")
    telegram_server.admins.add((TG_GROUP, TG_ADMIN))
    port = free_port()
    data = tmp_path / "data"
    bot = host_bot(
        tmp_path, host_python, dotenv(port, data, telegram_server, openai_server.env()), port
    )
    await bot.start()
    try:
        async with bot.peer() as peer:
            qq, tg = QQ(peer), Telegram(telegram_server)
            # The host's own command answers beside yuji's.
            assert await qq.ask("/ping") == "pong"

            # A fact 30 messages before a wake, in each platform's chat of the same digits.
            await qq.say(QQ_FACT, user_id=20002, nickname="阿明")
            tg.say(TG_FACT, user_id=TG_MEMBER)
            photo = tg.say(
                photo=[{"file_id": "AgADphoto", "file_unique_id": "p1", "width": 90, "height": 90}],
                caption="看我拍的海",
            )
            tg.say("拍得真好", reply_to_message=photo)
            for i in range(30):
                await qq.say(f"路人闲聊第{i}句今天吃什么", user_id=20009)
                tg.say(f"群友闲聊第{i}句晚上吃什么")
            await wait_until(
                lambda: count_rows(data, "experiences", f"scope = 'group:{QQ_GROUP}'") >= qq.said
            )
            await wait_until(
                lambda: (
                    count_rows(data, "experiences", f"scope = 'telegram-group:{TG_GROUP}'")
                    >= tg.said
                )
            )

            before = len(openai_server.requests)
            assert await qq.ask("大肥鱼，谁要去成都参加马拉松来着", at_bot=True) == "咕噜，记得"
            prompt = prompt_after(openai_server, before)
            assert QQ_FACT in prompt
            assert TG_FACT not in prompt

            before = len(openai_server.requests)
            sent = await tg.mention("谁要去厦门看音乐节来着")
            assert sent["text"] == "咕噜，记得"
            assert json.loads(sent["reply_parameters"])["message_id"] == tg.next_id
            prompt = prompt_after(openai_server, before)
            assert TG_FACT in prompt
            assert QQ_FACT not in prompt

            # Nor the other way round, when each asks about the other's fact.
            before = len(openai_server.requests)
            await tg.mention("谁要去成都参加马拉松来着")
            assert QQ_FACT not in prompt_after(openai_server, before)
            before = len(openai_server.requests)
            await qq.ask("大肥鱼，谁要去厦门看音乐节来着", at_bot=True)
            assert TG_FACT not in prompt_after(openai_server, before)

            # Photos and replies are archived as such.
            (segments, reply_to) = query(
                bot.database,
                "SELECT segments, reply_to FROM experiences WHERE scope = ? AND text LIKE ?",
                (f"telegram-group:{TG_GROUP}", "%拍得真好%"),
            )[0]
            assert reply_to == str(photo["message_id"])
            (image,) = query(
                bot.database,
                "SELECT text FROM experiences WHERE scope = ? AND fingerprint = ?",
                (f"telegram-group:{TG_GROUP}", str(photo["message_id"])),
            )[0]
            assert "[图片]" in image
            assert "看我拍的海" in image
            assert "reply" in segments

            # Telegram's admin rights steer the bot; a member may not.
            assert (await tg.ask("/mute 1h", user_id=TG_ADMIN))["text"].startswith("好，我安静")
            refused = await tg.ask("/unmute", user_id=TG_MEMBER)
            assert refused["text"] == "只有群主、管理员能用这个命令。"
            await tg.ask("/unmute", user_id=TG_ADMIN)

            # /forget-me on Telegram forgets that member's words there, and only there.
            await tg.ask("/forget-me", user_id=TG_MEMBER)
            await tg.ask("/forget-me", user_id=TG_MEMBER)
            assert query(
                bot.database, "SELECT count(*) FROM experiences WHERE text = ?", (TG_FACT,)
            ) == [(0,)]
            assert query(
                bot.database, "SELECT count(*) FROM experiences WHERE text = ?", (QQ_FACT,)
            ) == [(1,)]

            # Another plugin uses yuji's memory through its API.
            assert (await qq.ask("/note 群规：周五晚上不发广告", role="admin")).startswith("noted ")
            assert await qq.ask("/note 我也想记", role="member") == "只有群主、管理员能用这个命令。"
            tail = await qq.ask("/tail")
            assert tail.startswith("5 archived; last: ")
            asked = await qq.ask("/ask 群规是什么")
            assert "群规：周五晚上不发广告" in asked

            # Every message of both chats archived; the host's matcher saw every one.
            qq_rows = count_rows(data, "experiences", f"scope = 'group:{QQ_GROUP}' AND is_bot = 0")
            tg_rows = count_rows(
                data, "experiences", f"scope = 'telegram-group:{TG_GROUP}' AND is_bot = 0"
            )
            assert (qq_rows, tg_rows) == (qq.said, tg.said)
            await wait_until(lambda: len(seen_ids(bot.cwd)) >= qq.said + tg.said)
    finally:
        await bot.stop()
    log = bot.log_text()
    assert "Traceback" not in log
    # (NoneBot says it once more when a plugin that requires yuji happens to load first:
    # its line per load_plugin call, the module imported once.)
    assert YUJI_LOADED in log
    assert LEGACY_WARNING not in log
    # Once each, though the bot ran long past the start: one line per event.
    assert log.count("yuji consolidation: scheduler running") == 1
    assert log.count("yuji started: database") == 1
    assert log.count("Scheduler Started") == 1
    console = (
        f"yuji console: off; set YUJI_CONSOLE_TOKEN to open it at http://127.0.0.1:{port}/yuji/"
    )
    assert log.count(console) == 1


async def test_a_setting_yuji_cannot_start_with_leaves_the_host_running(
    tmp_path: Path, host_python: str, telegram_server: FakeTelegramServer
) -> None:
    port = free_port()
    data = tmp_path / "data"
    settings = {**dotenv(port, data, telegram_server, {}), "YUJI_RECALL_LIMIT": "lots"}
    bot = host_bot(tmp_path, host_python, settings, port)
    await bot.start()
    try:
        async with bot.peer() as peer:
            qq = QQ(peer)
            assert await qq.ask("/ping") == "pong"
            await qq.say("大肥鱼你好", at_bot=True)
            assert await qq.ask("/ping") == "pong"
    finally:
        await bot.stop()
    lines = [line for line in bot.log_text().splitlines() if "yuji" in line and "ERROR" in line]
    assert len(lines) == 1, lines
    assert "not started" in lines[0]
    assert "YUJI_RECALL_LIMIT" in lines[0]
    assert not (data / "yuji.db").exists()
