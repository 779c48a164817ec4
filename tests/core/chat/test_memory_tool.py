"""`search_memory(query)` at reply time: off by default; this chat only; once per reply;
its finds labelled like injected memories, recorded for /why and credited when cited."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from datetime import datetime

from memory_core import Settings, Yuji
from memory_core.chat.fake import FakeRecall
from memory_core.llm import OpenAICompatibleClient
from memory_core.llm.fake import ScriptedLLM, text_response, tool_call, tool_calls_response
from memory_core.prompts.memory_tool import ONLY_ONCE, ONLY_THIS_CHAT
from memory_core.recall.wake import Turn
from memory_core.types import Asker, Recalled, RecallResult
from tests.fakes.openai_server import FakeOpenAIServer, openai_server

from .test_service import G1, Sent, heard, incoming, make_service, remembered

__all__ = ["openai_server"]


def tool_messages(llm: ScriptedLLM, index: int) -> list[str]:
    return [m.content or "" for m in llm.requests[index].messages if m.role == "tool"]


async def test_off_by_default_no_tool_is_offered(core: Yuji) -> None:
    llm = ScriptedLLM([text_response("在呢")])
    await heard(core, G1, "in-1", "大肥鱼在吗")
    out = await make_service(core, llm, FakeRecall({})).respond(incoming("大肥鱼在吗"), Sent())
    assert out.kind == "reply"
    assert llm.requests[0].tools == ()


async def test_a_search_is_labelled_recorded_for_why_and_credited(core: Yuji) -> None:
    trip = await remembered(core, G1, "阿明下周去杭州出差", "e1")
    recall = FakeRecall({"阿明 出差": [Recalled(trip, "lexical", 0.8, "字面命中「出差」")]})
    llm = ScriptedLLM(
        [
            tool_calls_response(tool_call("search_memory", {"query": "阿明 出差"})),
            text_response(f"你不是下周去杭州嘛[[m:{trip.id}]]"),
        ]
    )
    await heard(core, G1, "in-1", "大肥鱼，我最近要干嘛来着")
    sent = Sent()
    service = make_service(core, llm, recall, chat_memory_tool="on")
    out = await service.respond(incoming("大肥鱼，我最近要干嘛来着"), sent)

    assert out.kind == "reply"
    assert sent.parts == ["你不是下周去杭州嘛"]
    assert [t.name for t in llm.requests[0].tools] == ["search_memory"]
    (result,) = tool_messages(llm, 1)
    assert f"#{trip.id}〔确定｜字面命中「出差」〕" in result
    assert (G1, "阿明 出差") in [(scope, text) for scope, text, _ in recall.calls]
    assert out.cited_ids == (trip.id,)
    injection = await service.repo.last_injection(G1)
    assert injection is not None
    assert [(i.memory_id, i.stage, i.cited) for i in injection.items] == [
        (trip.id, "lexical", True)
    ]
    (credited,) = await core.memories.get_many(G1, [trip.id])
    assert credited.hit_count == 1


async def test_another_chat_is_refused(core: Yuji) -> None:
    recall = FakeRecall({})
    llm = ScriptedLLM(
        [
            tool_calls_response(tool_call("search_memory", {"query": "秘密", "scope": "group:2"})),
            text_response("不知道呢"),
        ]
    )
    await heard(core, G1, "in-1", "大肥鱼，二群在聊什么")
    out = await make_service(core, llm, recall, chat_memory_tool="on").respond(
        incoming("大肥鱼，二群在聊什么"), Sent()
    )
    assert out.kind == "reply"
    assert tool_messages(llm, 1) == [ONLY_THIS_CHAT]
    assert all(scope == G1 for scope, _, _ in recall.calls)
    assert "秘密" not in [text for _, text, _ in recall.calls]


async def test_a_second_call_is_refused_and_the_last_ask_offers_no_tools(core: Yuji) -> None:
    recall = FakeRecall({})
    llm = ScriptedLLM(
        [
            tool_calls_response(tool_call("search_memory", {"query": "猫"})),
            tool_calls_response(tool_call("search_memory", {"query": "狗"})),
            text_response("想不起来了"),
        ]
    )
    await heard(core, G1, "in-1", "大肥鱼，我养的啥")
    out = await make_service(core, llm, recall, chat_memory_tool="on").respond(
        incoming("大肥鱼，我养的啥"), Sent()
    )
    assert out.kind == "reply"
    assert out.parts == ("想不起来了",)
    assert tool_messages(llm, 2)[-1] == ONLY_ONCE
    assert [text for _, text, _ in recall.calls].count("狗") == 0
    assert [text for _, text, _ in recall.calls].count("猫") == 1
    assert llm.requests[2].tools == ()


async def test_bad_arguments_are_answered_not_raised(core: Yuji) -> None:
    llm = ScriptedLLM(
        [
            tool_calls_response(tool_call("search_memory", json.dumps({"q": 1}))),
            text_response("嗯嗯"),
        ]
    )
    await heard(core, G1, "in-1", "大肥鱼")
    out = await make_service(core, llm, FakeRecall({}), chat_memory_tool="on").respond(
        incoming("大肥鱼"), Sent()
    )
    assert out.kind == "reply"
    assert "query" in tool_messages(llm, 1)[0]


class HangingRecall(FakeRecall):
    async def recall(
        self,
        scope: str,
        text: str,
        *,
        now: datetime | None = None,
        limit: int = 5,
        before_id: int | None = None,
        context: Sequence[Turn] = (),
        asker: Asker | None = None,
        mentioned: Sequence[str] = (),
    ) -> RecallResult:
        result = await super().recall(scope, text, now=now, limit=limit)
        if len(self.calls) > 1:  # the reply's own recall answers; the tool's search hangs
            await asyncio.sleep(30)
        return result


async def test_a_search_cannot_outlast_the_reply_deadline(core: Yuji) -> None:
    recall = HangingRecall({})
    llm = ScriptedLLM([tool_calls_response(tool_call("search_memory", {"query": "猫"}))])
    await heard(core, G1, "in-1", "大肥鱼，我养的啥")
    service = make_service(core, llm, recall, chat_memory_tool="on", llm_timeout_s=0.05)
    service.deadline_grace_s = 0.05
    sent = Sent()
    out = await service.respond(incoming("大肥鱼，我养的啥"), sent)
    assert out.kind == "failure"
    assert sent.parts == [core.settings.failure_line]
    assert [text for _, text, _ in recall.calls] == ["大肥鱼，我养的啥", "猫"]


async def test_a_model_without_tool_calling_still_replies(
    core: Yuji, openai_server: FakeOpenAIServer
) -> None:
    openai_server.tools_supported = False
    openai_server.push("在呢", "又在呢")
    llm = OpenAICompatibleClient(
        Settings(llm_base_url=openai_server.base_url, llm_model=openai_server.model)
    )
    await heard(core, G1, "in-1", "大肥鱼在吗")
    service = make_service(core, llm, FakeRecall({}), chat_memory_tool="on")
    try:
        first = await service.respond(incoming("大肥鱼在吗"), Sent())
        second = await service.respond(incoming("大肥鱼还在吗", "in-2"), Sent())
    finally:
        await llm.aclose()
    assert (first.kind, first.parts) == ("reply", ("在呢",))
    assert (second.kind, second.parts) == ("reply", ("又在呢",))
    # Refused once, then asked without tools, and never offered again.
    assert [bool(r.body.get("tools")) for r in openai_server.requests] == [True, False, False]
    assert service.tools_refused
