"""yuji: long-term memory for the persona, as one NoneBot plugin (thin glue only)."""

from __future__ import annotations

import gc
import os

from fastapi import FastAPI
from nonebot import get_driver, get_plugin_config, logger, require
from nonebot.plugin import PluginMetadata

require("nonebot_plugin_apscheduler")

from memory_core import Yuji  # noqa: E402

from . import api as api  # noqa: E402
from . import archive_hooks as archive_hooks  # noqa: E402
from . import chat as chat  # noqa: E402
from . import chat_names as chat_names  # noqa: E402
from . import commands as commands  # noqa: E402
from . import console as console  # noqa: E402
from . import departures as departures  # noqa: E402
from . import deployment as deployment  # noqa: E402
from . import ingest as ingest  # noqa: E402
from . import jobs as jobs  # noqa: E402
from . import ops_logs as ops_logs  # noqa: E402
from . import ops_notices as ops_notices  # noqa: E402
from . import runtime as runtime  # noqa: E402
from . import shutdown as shutdown  # noqa: E402
from .config import STANDALONE, Config, one_line, origins, to_settings  # noqa: E402

HOMEPAGE = "https://github.com/yuji-memory/nonebot-plugin-yuji"
FULL_COLLECTION_EVERY = 100
"""Middle-generation collections between two full ones (CPython's default is 10)."""

__plugin_meta__ = PluginMetadata(
    name="鱼记",
    description="群聊长期记忆：每条消息存档，后台整理成有证据的记忆，被叫到时回忆并回答",
    usage=(
        "群里 @机器人、回复它或叫它的昵称（私聊直接说）即可对话；管理命令："
        "/mute /unmute /remember /forget /cards /recall /why /backfill /status /backup "
        "/forget-me /followups。设置见 .env 的 YUJI_* 项，详见 docs/plugin.md"
    ),
    type="application",
    homepage=HOMEPAGE,
    config=Config,
    supported_adapters={"~onebot.v11", "~telegram"},
)

driver = get_driver()
_app = getattr(driver, "server_app", None)
if isinstance(_app, FastAPI):
    console.mount(_app)


@driver.on_startup
async def _start() -> None:
    """The one start-up. In someone else's bot a setting or store yuji cannot start with
    is one error line, and the plugin stays inactive (its matchers never match, nothing
    is archived); the host bot runs on. `python bot.py` checked the settings before
    NoneBot started, and there such a failure stops the bot (`YUJI_STANDALONE`)."""
    try:
        await _open()
    except Exception as exc:
        if getattr(driver.config, STANDALONE, False):
            raise
        logger.error(f"yuji: not started, the plugin stays inactive: {one_line(exc)}")


async def _open() -> None:
    """Settings read once, logs, the core, then the scheduled jobs."""
    settings = to_settings(get_plugin_config(Config), set(driver.config.nickname))
    ops_logs.start(settings)
    core = await Yuji.open(settings, origins=origins(settings, os.environ))
    try:
        core.recall.check()  # relevance weights of another embedding model stop the start
    except Exception:
        await core.close()
        raise
    runtime.set_core(core)
    shutdown.install(settings.shutdown_drain_s)
    ingest.bound_handlers(settings.handler_slots)
    if settings.archive_on_receive and ingest.hook_stock_adapters():
        logger.info("yuji: the stock OneBot v11 adapter archives each message as it is read")
    for family in jobs.ALL:
        family.schedule(core.settings)  # with the console's stored overrides
    await deployment.start(core)  # the leader runs the once-only jobs above
    settle_heap()
    logger.info(
        console.start_line(
            token_set=bool(settings.console_token),
            served=isinstance(_app, FastAPI),
            host=str(driver.config.host),
            port=driver.config.port,
        )
    )
    logger.info(
        f"yuji started: database {settings.database_path if not settings.database_url else '(external)'}"
    )
    if not settings.llm_configured:
        logger.warning(
            "yuji: no LLM configured (YUJI_LLM_BASE_URL / YUJI_LLM_MODEL): messages are archived "
            "and commands work; replies and consolidation wait for a model"
        )


def settle_heap() -> None:
    """What start-up left alive (the libraries, the models, yuji's own) is never garbage:
    frozen, the collector stops walking it on every full collection, which under a flood
    of messages came round every few seconds (docs/plugin.md). Frozen objects no longer
    count towards CPython's "a full collection once a quarter of the old generation is
    new" either, so a full collection would follow every tenth middle one, each walking
    every event in flight: under a backlog that was most of the process's time, and the
    backlog grew. One after every hundredth instead."""
    gc.collect()
    gc.freeze()
    young, middle, old = gc.get_threshold()
    gc.set_threshold(young, middle, max(old, FULL_COLLECTION_EVERY))


@driver.on_shutdown
async def _stop() -> None:
    """Drain: the server stopped accepting and read what the clients had sent; write it
    all within YUJI_SHUTDOWN_DRAIN_S, report what is left by chat, close the core."""
    core = runtime.started()
    if core is None:
        return
    report = await core.archive.drain(shutdown.remaining(core.settings.shutdown_drain_s))
    if report.left:
        chats = ", ".join(f"{scope}: {n}" for scope, n in sorted(report.left.items()))
        logger.error(
            f"yuji: shutdown drained {report.drained} messages; {report.lost} could not be "
            f"archived within {core.settings.shutdown_drain_s:g} s ({chats}); "
            "the next start's backfill fetches them"
        )
    else:
        logger.info(f"yuji: shutdown drained {report.drained} messages; nothing left")
    await core.close()
    runtime.set_core(None)
