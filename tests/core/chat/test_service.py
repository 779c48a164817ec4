"""The reply pipeline on a real core, with a scripted model and a stand-in recall."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memory_core import Yuji
from memory_core.chat.fake import FakeRecall
from memory_core.chat.ports import MemoriesPort
from memory_core.chat.service import ChatService, Incoming
from memory_core.chat.sources import ChatContextSource
from memory_core.errors import LLMError, LLMRateLimited, LLMTimeout, StorageUnavailable
from memory_core.llm.base import ChatResponse
from memory_core.llm.fake import LLMRequest, ScriptedLLM, text_response
from memory_core.memories.fake import FakeMemories
from memory_core.settings import LiveSettings
from memory_core.storage.chat.chat_repo import ChatRepo
from memory_core.types import EvidenceRef, Memory, NewExperience, Recalled, RecallResult

G1, G2 = "group:1", "group:2"
BOT = "10000"
T0 = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)


class Sent:
    def __init__(self, fail_after: int | None = None) -> None:
        self.parts: list[str] = []
        self.fail_after = fail_after

    async def __call__(self, text: str) -> str | None:
        if self.fail_after is not None and len(self.parts) >= self.fail_after:
            raise ConnectionError("websocket closed")
        self.parts.append(text)
        return f"bot-{len(self.parts)}"


def make_service(
    core: Yuji,
    llm: Any,
    recall: FakeRecall,
    *,
    memories: MemoriesPort | None = None,
    **settings: Any,
) -> ChatService:
    return ChatService(
        settings=LiveSettings(core.settings.with_changes(**settings)),
        clock=core.clock,
        repo=ChatRepo(core.db),
        archive=core.archive,
        recall=recall,
        memories=memories or core.memories,
        context=ChatContextSource(core.memory_repo, core.consolidation),
        llm=llm,
    )


async def heard(core: Yuji, scope: str, fp: str, text: str, *, is_bot: bool = False) -> int:
    return await core.archive.append(
        NewExperience(
            scope=scope,
            fingerprint=fp,
            sender_id=BOT if is_bot else "200",
            sender_name="大肥鱼" if is_bot else "阿明",
            text=text,
            sent_at=T0,
            is_bot=is_bot,
        )
    )


async def remembered(core: Yuji, scope: str, content: str, fp: str) -> Memory:
    exp = await heard(core, scope, fp, content)
    out = await core.memories.write(
        scope,
        type="fact",
        subject="阿明",
        content=content,
        evidence=[EvidenceRef(experience_id=exp)],
    )
    return out.memory


def incoming(text: str, fp: str = "in-1", *, scope: str = G1, **kw: Any) -> Incoming:
    return Incoming(
        scope=scope,
        fingerprint=fp,
        sender_id="200",
        sender_name="阿明",
        text=text,
        sent_at=T0,
        self_id=BOT,
        is_private=scope.startswith("private:"),
        **kw,
    )


async def test_unaddressed_message_gets_no_reply_and_no_model_call(core: Yuji) -> None:
    llm = ScriptedLLM()
    service = make_service(core, llm, FakeRecall())
    reads: list[str] = []
    read_state = service.repo.state

    async def counted_state(scope: str) -> Any:
        reads.append(scope)
        return await read_state(scope)

    service.repo.state = counted_state  # type: ignore[method-assign]
    out = await service.respond(incoming("今天好冷"), Sent())
    assert out.kind == "silent"
    assert llm.requests == []
    assert reads == []  # the per-message path reads no chat state unless woken


async def test_reply_strips_markers_credits_used_memories_and_records_the_injection(
    core: Yuji,
) -> None:
    m1 = await remembered(core, G1, "撤离率 20%", "e1")
    m2 = await remembered(core, G1, "阿明养了一只猫", "e2")
    recall = FakeRecall()
    recall.items = [
        Recalled(m1, "lexical", 0.9, "字面命中「撤离率」"),
        Recalled(m2, "vector", 0.4, "相关度 0.40：语义相近"),
    ]
    llm = ScriptedLLM([text_response(f"是 20% 呀[[m:{m1.id}]]")])
    await heard(core, G1, "in-1", "大肥鱼，撤离率多少")
    sent = Sent()
    service = make_service(core, llm, recall)
    out = await service.respond(incoming("大肥鱼，撤离率多少"), sent)

    assert out.kind == "reply"
    assert sent.parts == ["是 20% 呀"]
    assert out.cited_ids == (m1.id,)
    assert out.injected_ids == (m1.id, m2.id)
    credited = {m.id: m for m in await core.memories.get_many(G1, [m1.id, m2.id])}
    assert credited[m1.id].hit_count == 1
    assert credited[m1.id].last_accessed_at == core.clock.now()
    assert credited[m2.id].hit_count == 0  # retrieved, not used: no credit

    injection = await service.repo.last_injection(G1)
    assert injection is not None
    assert injection.reply_fingerprint == "bot-1"
    assert injection.trigger_experience_id is not None
    assert [(i.memory_id, i.stage, i.cited) for i in injection.items] == [
        (m1.id, "lexical", True),
        (m2.id, "vector", False),
    ]
    system = llm.requests[0].messages[0].content or ""
    assert f"#{m1.id}〔确定｜字面命中「撤离率」〕" in system
    assert "[[m:12]]" in system
    state = await service.repo.state(G1)
    assert state.last_reply_at == core.clock.now()
    assert state.last_wake_at == core.clock.now()


async def test_the_reply_credits_through_the_memories_port_only_what_it_cited(
    core: Yuji,
) -> None:
    """Chat's MemoriesPort is all the reply path needs of memories: the cited one is
    credited once, at the reply's time; the one only retrieved, and another chat's id
    the model made up, are not."""
    memories = FakeMemories(core.clock)
    evidence = [EvidenceRef(experience_id=1)]
    cat = (
        await memories.write(
            G1, type="fact", subject="阿明", content="阿明养了一只猫叫煤球", evidence=evidence
        )
    ).memory
    job = (
        await memories.write(
            G1, type="fact", subject="阿明", content="阿明在杭州上班", evidence=evidence
        )
    ).memory
    foreign = (
        await memories.write(
            G2, type="fact", subject="小红", content="小红不吃香菜", evidence=evidence
        )
    ).memory
    recall = FakeRecall()
    recall.items = [Recalled(cat, "lexical", 0.9, ""), Recalled(job, "lexical", 0.6, "")]
    llm = ScriptedLLM([text_response(f"煤球呀[[m:{cat.id}]][[m:{foreign.id}]]")])
    service = make_service(core, llm, recall, memories=memories)
    out = await service.respond(incoming("大肥鱼，阿明的猫叫啥"), Sent())

    assert out.kind == "reply"
    assert out.parts == ("煤球呀",)
    assert out.cited_ids == (cat.id,)
    assert memories.credited == [(G1, cat.id, core.clock.now())]
    assert memories.memories[cat.id].hit_count == 1
    assert memories.memories[job.id].hit_count == 0
    assert memories.memories[foreign.id].hit_count == 0


async def test_never_more_than_five_memories_and_never_another_chats(core: Yuji) -> None:
    mine = [await remembered(core, G1, f"记忆{i}", f"e{i}") for i in range(7)]
    foreign = await remembered(core, G2, "别的群的秘密", "x1")
    recall = FakeRecall()
    recall.items = [Recalled(foreign, "lexical", 1.0, "")] + [
        Recalled(m, "lexical", 0.5, "") for m in mine
    ]
    llm = ScriptedLLM([text_response("嗯嗯")])
    service = make_service(core, llm, recall, recall_limit=9)
    out = await service.respond(incoming("大肥鱼"), Sent())
    recall_limit_seen = [limit for _, _, limit in recall.calls]
    assert recall_limit_seen == [5]
    assert len(out.injected_ids) <= 5
    assert foreign.id not in out.injected_ids
    assert "别的群的秘密" not in (llm.requests[0].messages[0].content or "")


async def test_refusal_is_retried_once_then_replaced_by_the_fallback(core: Yuji) -> None:
    llm = ScriptedLLM(
        [text_response("作为一个AI，我无法回答。"), text_response("抱歉，我无法提供")]
    )
    sent = Sent()
    service = make_service(core, llm, FakeRecall())
    out = await service.respond(incoming("大肥鱼你是谁"), sent)
    assert out.kind == "fallback"
    assert len(llm.requests) == 2
    assert sent.parts == [core.settings.fallback_line]
    assert await core.memories.newest(G1) == []


async def test_a_good_retry_is_sent_silently(core: Yuji) -> None:
    llm = ScriptedLLM([text_response("I'm sorry, I can't."), text_response("咕噜，我是鱼")])
    sent = Sent()
    out = await make_service(core, llm, FakeRecall()).respond(incoming("大肥鱼你是谁"), sent)
    assert (out.kind, sent.parts) == ("reply", ["咕噜，我是鱼"])


@pytest.mark.parametrize("error", [LLMTimeout("slow"), LLMRateLimited("429")])
async def test_upstream_failure_sends_the_failure_line(core: Yuji, error: Exception) -> None:
    sent = Sent()
    out = await make_service(core, ScriptedLLM([error]), FakeRecall()).respond(
        incoming("大肥鱼在吗"), sent
    )
    assert out.kind == "failure"
    assert sent.parts == [core.settings.failure_line]


async def test_a_model_that_hangs_is_cut_off(core: Yuji) -> None:
    async def hang(_: LLMRequest) -> ChatResponse:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    sent = Sent()
    service = make_service(core, ScriptedLLM([hang]), FakeRecall(), llm_timeout_s=0.05)
    service.deadline_grace_s = 0.05
    out = await service.respond(incoming("大肥鱼在吗"), sent)
    assert out.kind == "failure"
    assert sent.parts == [core.settings.failure_line]


async def test_the_silent_retry_shares_the_replys_one_deadline(core: Yuji) -> None:
    async def slow_refusal(_: LLMRequest) -> ChatResponse:
        await asyncio.sleep(0.3)
        return text_response("作为一个AI，我无法回答。")

    async def honours_its_timeout(request: LLMRequest) -> ChatResponse:
        await asyncio.sleep(request.timeout_s or 3600)
        raise LLMTimeout("no answer")

    llm = ScriptedLLM([slow_refusal, honours_its_timeout])
    sent = Sent()
    service = make_service(core, llm, FakeRecall(), llm_timeout_s=1.0)
    out = await service.respond(incoming("大肥鱼你是谁"), sent)

    first, retry = llm.requests
    assert first.timeout_s is not None
    assert first.timeout_s <= 1.0
    assert retry.timeout_s is not None
    assert retry.timeout_s <= first.timeout_s - 0.3  # what the first answer left
    # the model did answer (out of character): the retry running out is the fallback
    assert out.kind == "fallback"
    assert sent.parts == [core.settings.fallback_line]


async def test_unexpected_bug_never_escapes(core: Yuji) -> None:
    class Broken(FakeRecall):
        async def recall(self, *args: Any, **kwargs: Any) -> RecallResult:
            raise ZeroDivisionError("bug")

    out = await make_service(core, ScriptedLLM(), Broken()).respond(incoming("大肥鱼"), Sent())
    assert out.kind == "failure"


async def test_muted_chat_is_not_answered_until_the_mute_ends(core: Yuji) -> None:
    llm = ScriptedLLM(default=text_response("在呢"))
    service = make_service(core, llm, FakeRecall())
    await service.repo.set_muted(G1, core.clock.now() + timedelta(hours=1), core.clock.now())
    out = await service.respond(incoming("大肥鱼在吗"), Sent())
    assert out.kind == "muted"
    assert llm.requests == []
    core.clock.advance(timedelta(hours=1))  # type: ignore[attr-defined]
    assert (await service.respond(incoming("大肥鱼在吗", "in-2"), Sent())).kind == "reply"


async def test_reply_to_a_bot_message_wakes_via_the_archive(core: Yuji) -> None:
    await heard(core, G1, "bot-msg", "咕噜", is_bot=True)
    await heard(core, G1, "human-msg", "随便")
    service = make_service(core, ScriptedLLM(default=text_response("嗯")), FakeRecall())
    to_bot = await service.respond(incoming("真的吗", "a", reply_to="bot-msg"), Sent())
    to_human = await service.respond(incoming("真的吗", "b", reply_to="human-msg"), Sent())
    assert (to_bot.kind, to_bot.reason) == ("reply", "reply")
    assert to_human.kind == "silent"


async def test_no_model_configured_means_no_reply(core: Yuji) -> None:
    sent = Sent()
    out = await make_service(core, None, FakeRecall()).respond(incoming("大肥鱼"), sent)
    assert out.kind == "no_model"
    assert sent.parts == []


async def test_long_reply_is_split_and_a_send_failure_stops_cleanly(core: Yuji) -> None:
    long = "。".join(["鱼鱼今天想说很多很多话"] * 40) + "。"
    sent = Sent(fail_after=2)
    service = make_service(core, ScriptedLLM([text_response(long)]), FakeRecall())
    out = await service.respond(incoming("大肥鱼讲个故事"), sent)
    assert len(sent.parts) == 2
    assert all(len(p) <= core.settings.reply_max_chars for p in sent.parts)
    assert out.sent_ids == ("bot-1", "bot-2")


async def test_recent_messages_reach_the_prompt_in_order_without_the_trigger(core: Yuji) -> None:
    for i in range(5):
        await heard(core, G1, f"r{i}", f"前面的话{i}")
    await heard(core, G1, "in-1", "大肥鱼你觉得呢")
    llm = ScriptedLLM([text_response("我觉得行")])
    await make_service(core, llm, FakeRecall()).respond(incoming("大肥鱼你觉得呢"), Sent())
    messages = llm.requests[0].messages
    system = messages[0].content or ""
    positions = [system.index(f"前面的话{i}") for i in range(5)]
    assert positions == sorted(positions)
    assert "大肥鱼你觉得呢" not in system
    assert (messages[-1].content or "").endswith("阿明：大肥鱼你觉得呢")


async def test_contradicting_memories_are_shown_as_a_pair(core: Yuji) -> None:
    a = await remembered(core, G1, "撤离率 20%", "e1")
    b = await remembered(core, G1, "撤离率 30%", "e2")
    c = await remembered(core, G1, "今天吃火锅", "e3")
    await core.memories.contradict(G1, a.id, b.id, reason="数字不同", changed_by="test")
    recall = FakeRecall()
    recall.items = [
        Recalled(a, "lexical", 0.9, ""),
        Recalled(c, "lexical", 0.5, ""),
        Recalled(b, "graph", 0.3, ""),
    ]
    llm = ScriptedLLM([text_response("记不清了")])
    out = await make_service(core, llm, recall).respond(incoming("大肥鱼撤离率"), Sent())
    assert out.injected_ids == (a.id, b.id, c.id)
    assert f"#{a.id} 和 #{b.id} 互相矛盾" in (llm.requests[0].messages[0].content or "")


async def test_a_reply_deadline_that_passes_is_an_llm_error(
    core: Yuji, caplog: pytest.LogCaptureFixture
) -> None:
    async def hang(_: LLMRequest) -> ChatResponse:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    service = make_service(core, ScriptedLLM([hang]), FakeRecall(), llm_timeout_s=0.05)
    service.deadline_grace_s = 0.05
    with caplog.at_level("WARNING", logger="yuji.chat"):
        out = await service.respond(incoming("大肥鱼在吗"), Sent())
    assert out.kind == "failure"
    [record] = [r for r in caplog.records if "model unavailable" in r.getMessage()]
    assert isinstance(record.args, tuple)
    error = record.args[1]
    assert type(error) is LLMError
    assert str(error).startswith("no answer within")


async def test_a_wake_while_the_database_is_away_is_answered_without_memories(
    core: Yuji, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    m1 = await remembered(core, G1, "阿明养了一只猫", "e1")
    recall = FakeRecall()
    recall.items = [Recalled(m1, "lexical", 0.9, "字面命中「猫」")]
    llm = ScriptedLLM([text_response("在的在的")])
    service = make_service(core, llm, recall)

    def unreachable(*_args: object, **_kw: object) -> Any:
        raise StorageUnavailable("[Errno 111] Connection refused")

    monkeypatch.setattr(core.db, "read", unreachable)
    monkeypatch.setattr(core.db, "write", unreachable)
    sent = Sent()
    with caplog.at_level(logging.WARNING, logger="yuji.chat"):
        out = await service.respond(incoming("大肥鱼，我的猫呢"), sent)
    assert out.kind == "reply"
    assert sent.parts == ["在的在的"]
    assert out.injected_ids == ()  # nothing recalled while the store is away
    assert "阿明养了一只猫" not in str(llm.requests[0])
    assert "answering in group:1 without recalled memories" in caplog.text
