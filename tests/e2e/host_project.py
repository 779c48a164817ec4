"""Someone else's bot: an nb-cli-shaped NoneBot project with yuji installed into it.

`write_project(folder, dotenv)` lays out what `nb create` makes and an operator adds to:
`pyproject.toml` with `[tool.nonebot]` (the OneBot v11 and Telegram adapters,
`nonebot_plugin_yuji` in `plugins`, `src/plugins` in `plugin_dirs`), the stock
`bot.py` nb-cli writes (`nonebot.init()`, register the adapters, `load_from_toml`),
every setting in the project's `.env`, and two plugins of the host's own:

- `ping`: `/ping` answers `pong` (a command at priority 1 that blocks, as most do),
  and a recorder matcher (priority 1, not blocking) that appends each message event's
  id to `seen.txt` in the project folder: the host's matchers must get every event;
- `memo`: a plugin that uses yuji's memory through its API (`require` then
  `nonebot_plugin_yuji.api`): `/ask <text>` answers with what yuji recalls for this
  chat, `/note <text>` remembers a fact (the /remember permission rule), `/tail`
  says how many messages the chat has archived and the last one's text.

Run it with `BotProcess(tmp, cwd=folder, python=...)` (tests/e2e/harness.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

PYPROJECT = """\
[project]
name = "host-bot"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = ["nonebot2[fastapi,httpx,websockets]", "nonebot-plugin-yuji"]

[tool.nonebot]
adapters = [
    {{ name = "OneBot V11", module_name = "nonebot.adapters.onebot.v11" }},
{telegram}]
plugins = [{plugins}]
plugin_dirs = ["src/plugins"]
builtin_plugins = []
"""
TELEGRAM_ADAPTER = '    { name = "Telegram", module_name = "nonebot.adapters.telegram" },\n'

BOT_PY = """\
import nonebot
from nonebot.adapters.onebot.v11 import Adapter as ONEBOT_V11Adapter

nonebot.init()

driver = nonebot.get_driver()
driver.register_adapter(ONEBOT_V11Adapter)
{telegram}
nonebot.load_from_toml("pyproject.toml")

if __name__ == "__main__":
    nonebot.run()
"""
TELEGRAM_REGISTER = """\
from nonebot.adapters.telegram import Adapter as TELEGRAMAdapter

driver.register_adapter(TELEGRAMAdapter)
"""

PING = """\
from pathlib import Path

from nonebot import on_command, on_message
from nonebot.adapters import Event

SEEN = Path(__file__).resolve().parents[3] / "seen.txt"

ping = on_command("ping", priority=1, block=True)
seen = on_message(priority=1, block=False)


@ping.handle()
async def _ping() -> None:
    await ping.finish("pong")


@seen.handle()
async def _seen(event: Event) -> None:
    message_id = getattr(event, "message_id", None)
    with SEEN.open("a", encoding="utf-8") as out:
        out.write(f"{message_id}\\n")
"""

MEMO = """\
from nonebot import on_command, require
from nonebot.adapters import Bot, Event, Message
from nonebot.params import CommandArg

require("nonebot_plugin_yuji")

from nonebot_plugin_yuji import api  # noqa: E402

ask = on_command("ask", priority=2, block=True)
note = on_command("note", priority=2, block=True)
tail = on_command("tail", priority=2, block=True)


@ask.handle()
async def _ask(bot: Bot, event: Event, arg: Message = CommandArg()) -> None:
    found = await api.recall(bot, event, arg.extract_plain_text())
    lines = [f"{item.band}: {item.content}" for item in found.items]
    await ask.finish("\\n".join(lines) or "nothing")


@note.handle()
async def _note(bot: Bot, event: Event, arg: Message = CommandArg()) -> None:
    try:
        done = await api.remember(bot, event, arg.extract_plain_text())
    except api.YujiError as refused:  # not an admin, empty text, ...
        await note.finish(str(refused))
    await note.finish(f"noted {done.memory_id}")


@tail.handle()
async def _tail(bot: Bot, event: Event) -> None:
    rows = await api.archived(bot, event, limit=5)
    await tail.finish(f"{len(rows)} archived; last: {rows[-1].text if rows else ''}")
"""


def write_project(
    folder: Path,
    dotenv: Mapping[str, str],
    *,
    telegram: bool = True,
    own_plugins: tuple[str, ...] = ("ping", "memo"),
    yuji: bool = True,
) -> Path:
    """The project in `folder` (made), its `.env` holding `dotenv`; returns `folder`
    (`yuji=False`: the same bot without yuji, the benchmark's baseline)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text(
        PYPROJECT.format(
            telegram=TELEGRAM_ADAPTER if telegram else "",
            plugins='"nonebot_plugin_yuji"' if yuji else "",
        ),
        "utf-8",
    )
    (folder / "bot.py").write_text(
        BOT_PY.format(telegram=TELEGRAM_REGISTER if telegram else ""), "utf-8"
    )
    (folder / ".env").write_text(
        "".join(f"{key}={_dotenv_value(value)}\n" for key, value in dotenv.items()), "utf-8"
    )
    for name in own_plugins:
        source = {"ping": PING, "memo": MEMO}[name]
        plugin = folder / "src" / "plugins" / name
        plugin.mkdir(parents=True, exist_ok=True)
        (plugin / "__init__.py").write_text(source, "utf-8")
    return folder


def seen_ids(folder: Path) -> list[str]:
    """The message ids the host's recorder matcher saw, in order."""
    path = folder / "seen.txt"
    return path.read_text("utf-8").split() if path.exists() else []


def _dotenv_value(value: str) -> str:
    # JSON values (lists, objects) go as they are: NoneBot JSON-decodes them.
    return value if value[:1] in "[{" else json.dumps(value, ensure_ascii=False)
