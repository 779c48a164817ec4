"""The unprompted follow-up job under nonebug: scheduled every YUJI_FOLLOWUP_CHECK_S;
on the leader it sends a due follow-up through the platform's plain send (no reply
target), archived as the bot's own message and counted under the `followup` job; a
platform that refuses leaves it due."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from nonebot.adapters.onebot.v11 import ActionFailed, Bot
from nonebot_plugin_apscheduler import scheduler
from nonebug import App
from sqlalchemy import select

from memory_core import EvidenceRef, FakeClock, NewExperience, Yuji
from memory_core.llm import ScriptedLLM
from memory_core.llm.fake import text_response
from memory_core.storage.schema import llm_usage
from nonebot_plugin_yuji.jobs import followups as jobs_followups
from tests.plugin.factories import BOT_ID

SCRIPTED = ScriptedLLM()
SCOPE = "private:200"
ASK = "阿哲，四级考得咋样？"


@pytest.fixture
def yuji_open_kwargs(yuji_clock: FakeClock, yuji_fetcher: Any) -> dict[str, Any]:
    return {"clock": yuji_clock, "fetcher": yuji_fetcher, "llm": SCRIPTED}


async def plan(core: Yuji) -> int:
    """阿哲 said on 11-15 he sits an exam on the 18th; it is 11-20 20:00 in Shanghai."""
    said = await core.archive.append(
        NewExperience(
            SCOPE,
            "exam",
            "200",
            "我11月18号考四级",
            sender_name="阿哲",
            sent_at=core.clock.now() - timedelta(days=5),
        )
    )
    written = await core.memories.write(
        SCOPE,
        type="event",
        subject="阿哲",
        content="阿哲11月18日考四级",
        evidence=[EvidenceRef(experience_id=said)],
        valid_from=datetime(2026, 11, 17, 16, 0, tzinfo=UTC),
        subject_id="200",
    )
    return written.memory.id


def test_chat_ids_read_as_platform_kind_and_number() -> None:
    assert jobs_followups.target("group:100") == ("qq", "group", 100)
    assert jobs_followups.target("private:7") == ("qq", "private", 7)
    assert jobs_followups.target("telegram-group:-1001") == ("telegram", "group", -1001)
    assert jobs_followups.target("group:abc") is None
    assert jobs_followups.target("channel:1") is None


async def test_the_job_is_scheduled_single_instance_every_check(yuji_core: Yuji) -> None:
    job = scheduler.get_job(jobs_followups.JOB_ID)
    assert job is not None
    assert job.trigger.interval == timedelta(seconds=yuji_core.settings.followup_check_s)
    assert (job.max_instances, job.coalesce) == (1, True)


async def test_the_leader_sends_it_plainly_and_it_is_archived_and_counted(
    app: App, yuji_core: Yuji
) -> None:
    exam = await plan(yuji_core)
    SCRIPTED.default = text_response(ASK)
    try:
        async with app.test_api() as ctx:
            ctx.create_bot(base=Bot, self_id=BOT_ID)
            ctx.should_call_api(
                "send_private_msg",
                {"user_id": 200, "message": ASK},
                exception=ActionFailed(retcode=100),
            )
            await jobs_followups.tick()  # the platform refused: still due
            assert [f.state for f in await yuji_core.followups.listing(SCOPE)] == ["due"]
            ctx.should_call_api(
                "send_private_msg", {"user_id": 200, "message": ASK}, result={"message_id": 77}
            )
            await jobs_followups.tick()
            await jobs_followups.tick()  # asked: nothing more to send
    finally:
        SCRIPTED.default = None
    [found] = await yuji_core.followups.listing(SCOPE)
    assert (found.memory.id, found.state) == (exam, "asked")
    await yuji_core.archive.flush()
    own = await yuji_core.archive.by_fingerprint(SCOPE, "77")
    assert own is not None
    assert (own.text, own.is_bot) == (ASK, True)
    async with yuji_core.db.read() as conn:
        jobs = (await conn.execute(select(llm_usage.c.job, llm_usage.c.scope))).all()
    assert [tuple(row) for row in jobs].count(("followup", SCOPE)) == 2
