"""Someone else's bot: a NoneBot project with yuji installed into it, built from the
page that tells an operator how (docs/plugin.md), so the page cannot drift from what runs.

`write_project(folder, dotenv)` writes the page's `pyproject.toml` and `bot.py` as they
are, taken from its fenced blocks titled so (```toml title="pyproject.toml"```,
```python title="bot.py"```; each must be there exactly once): the current format,
`[tool.nonebot.adapters]` and `[tool.nonebot.plugins]` keyed by package, which
NoneBot loads without its legacy-format warning, and the bot.py nb-cli writes
(`nonebot.init()`, register the adapters, `load_from_toml`, `nonebot.run()`). Lines the
page marks `# 接 Telegram 时` are dropped for a bot without Telegram, as the page says
to. Every setting goes in the project's `.env`, and two plugins of the host's own in
`src/plugins` (the page's `plugin_dirs`):

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
import re
from collections.abc import Mapping
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "plugin.md"
TELEGRAM_MARK = "# 接 Telegram 时"
"""The page's mark on each line a bot without Telegram leaves out."""
YUJI_PLUGIN = "nonebot_plugin_yuji"


def page_block(title: str, page: Path = PAGE) -> str:
    """The text of the one fenced block of `page` titled `title`."""
    pattern = rf'^```\w+ title="{re.escape(title)}"\n(.*?)^```$'
    blocks = re.findall(pattern, page.read_text("utf-8"), re.M | re.S)
    if len(blocks) != 1:
        raise LookupError(f'{page.name}: {len(blocks)} blocks titled "{title}", not one')
    return blocks[0]


def _without(text: str, mark: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if mark not in line)


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
    pyproject, bot = page_block("pyproject.toml"), page_block("bot.py")
    if not telegram:
        pyproject, bot = _without(pyproject, TELEGRAM_MARK), _without(bot, TELEGRAM_MARK)
    if not yuji:
        pyproject = _without(pyproject, YUJI_PLUGIN)
    (folder / "pyproject.toml").write_text(pyproject, "utf-8")
    (folder / "bot.py").write_text(bot, "utf-8")
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
