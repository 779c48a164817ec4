"""Each family of console tunables steers the running services, not a copy they took
when they were built: recall's limit through the chat commands, consolidation's
eligibility and hourly cap, the nightly time, and the wake nicknames (also the name
the background model is told)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest

from memory_core import FakeClock, Settings, Yuji
from memory_core.chat.service import Incoming
from memory_core.cli.demo_world import load_demo
from memory_core.console import Actor
from memory_core.errors import ValidationError
from memory_core.llm import ScriptedLLM, text_response
from memory_core.storage.ops.usage_repo import UsageRow
from tests.core.consolidation.conftest import ack_nothing, seed
from tests.core.relevance_models import FAKE_MODEL, LEXICAL_MODEL

ADMIN = Actor("192.0.2.7", "session")
G1 = "group:1"


@pytest.fixture
def llm() -> ScriptedLLM:
    return ScriptedLLM(default=ack_nothing)


@pytest.fixture
async def core(settings: Settings, clock: FakeClock, llm: ScriptedLLM) -> AsyncIterator[Yuji]:
    """A core whose background model acknowledges every batch with nothing to keep."""
    opened = await Yuji.open(
        settings, clock=clock, llm=llm, relevance=FAKE_MODEL, lexical_relevance=LEXICAL_MODEL
    )
    try:
        yield opened
    finally:
        await opened.close()


async def test_the_recall_limit_reaches_the_chat_commands(core: Yuji) -> None:
    await load_demo(core)
    question = "煤球绝育了吗"

    def memories_in(text: str) -> int:
        return sum(line.startswith("#") for line in text.splitlines())

    assert memories_in(await core.chat_commands.recall_preview("group:900001", question)) > 1
    await core.console.set_tunable("recall_limit", "1", ADMIN)
    assert memories_in(await core.chat_commands.recall_preview("group:900001", question)) == 1


async def test_eligibility_and_the_budget_move_on_the_running_consolidation(
    core: Yuji, clock: FakeClock
) -> None:
    await seed(core, n=5)
    assert await core.consolidation.run_once() is None  # 12 pending or 2 hours by default
    await core.console.set_tunable("eligible_min_pending", "5", ADMIN)
    report = await core.consolidation.run_once()
    assert report is not None
    assert report.state == "done"

    await core.console.set_tunable("eligible_min_pending", "100", ADMIN)
    await seed(core, n=3, start=5)
    clock.advance(timedelta(minutes=2))
    assert await core.consolidation.run_once() is None
    await core.console.set_tunable("eligible_max_wait_s", "60", ADMIN)
    await core.usage.repo.record(
        UsageRow(clock.now(), "consolidation", "m", G1, 900, 100, 0, 10, "ok")
    )
    await core.console.set_tunable("consolidation_tokens_per_hour", "1000", ADMIN)
    assert await core.consolidation.run_once() is None
    assert "hourly token budget spent (1000 of 1000)" in core.consolidation.last_skip
    await core.console.set_tunable("consolidation_tokens_per_hour", "1001", ADMIN)
    report = await core.consolidation.run_once()
    assert report is not None
    assert report.messages == 3


async def test_the_nightly_time_moves_when_the_running_night_says_a_day_ended(
    core: Yuji, clock: FakeClock
) -> None:
    clock.advance(timedelta(hours=7))  # 03:00 on the 21st in Shanghai
    with pytest.raises(ValidationError, match="has not ended"):
        await core.nightly.run(day="2026-11-20", scope=G1)  # it ends at 04:00
    await core.console.set_tunable("nightly_time", "02:30", ADMIN)
    reports = await core.nightly.run(day="2026-11-20", scope=G1)
    assert reports
    assert {r.day for r in reports} == {"2026-11-20"}


async def test_the_nicknames_wake_the_running_chat_and_name_the_bot_to_its_model(
    core: Yuji, llm: ScriptedLLM
) -> None:
    def called(text: str, fingerprint: str) -> Incoming:
        return Incoming(
            scope=G1,
            fingerprint=fingerprint,
            sender_id="200",
            sender_name="阿明",
            text=text,
            sent_at=core.clock.now(),
            self_id="10000",
            is_private=False,
        )

    async def sent(text: str) -> str | None:
        return "bot-1"

    assert (await core.chat.respond(called("小鱼在吗", "m1"), sent)).kind == "silent"
    await core.console.set_tunable("nicknames", "小鱼", ADMIN)
    llm.push(text_response("在的"))
    woken = await core.chat.respond(called("小鱼在吗", "m2"), sent)
    assert (woken.kind, woken.parts) == ("reply", ("在的",))
    assert core.settings.bot_name == "小鱼"  # what the plugin names the bot's own sends
    assert core.nightly.services.bot_name == "小鱼"  # what the nightly prompts call it

    await seed(core, n=12)
    assert await core.consolidation.run_once() is not None
    system = llm.requests[-1].messages[0].content or ""
    assert "「小鱼」" in system
    assert "大肥鱼" not in system
