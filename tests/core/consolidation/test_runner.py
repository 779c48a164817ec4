"""One batch with the scripted model: acknowledgement is the only thing that moves `acked`."""

from __future__ import annotations

import json

from memory_core import Yuji
from memory_core.consolidation.service import ConsolidationService
from memory_core.errors import LLMRateLimited, LLMTimeout
from memory_core.llm import LLMRequest, ScriptedLLM, text_response
from memory_core.llm.base import ChatResponse
from memory_core.types import EvidenceRef

from .conftest import (
    G1,
    ack_nothing,
    call,
    count,
    ids_in_prompt,
    respond,
    run_batch,
    seed,
    token_of,
    tool_results,
)


def extract_all(request: LLMRequest) -> ChatResponse:
    tok = token_of(request)
    ids = ids_in_prompt(request)
    return respond(
        call("search_memories", token=tok, query="羽毛球"),
        call(
            "write_memory",
            token=tok,
            type="preference",
            subject="张三",
            content="张三喜欢打羽毛球",
            evidence=ids[:2],
        ),
        call("acknowledge", token=tok, outcome="extracted", summary="张三聊了羽毛球"),
    )


async def test_extracted_writes_memory_evidence_fragment_and_acks(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM
) -> None:
    ids = await seed(core, n=15)
    llm.push(extract_all)
    report = await run_batch(service)
    assert (report.state, report.outcome) == ("done", "extracted")
    assert (report.first_id, report.last_id, report.messages) == (ids[0], ids[-1], 15)
    assert report.refused == 0
    assert len(report.written) == 1

    cursor = await service.repo.cursor(G1)
    assert (cursor.acked_id, cursor.delivered_id) == (ids[-1], ids[-1])
    memory = await core.memories.get(G1, report.written[0])
    assert memory.content == "张三喜欢打羽毛球"
    evidence = await core.memories.evidence(G1, memory.id)
    assert {e.experience_id for e in evidence} == set(ids[:2])
    (fragment,) = await service.repo.fragments(G1)
    assert fragment.summary == "张三聊了羽毛球"
    assert (fragment.first_id, fragment.last_id, fragment.batch_id) == (
        ids[0],
        ids[-1],
        report.batch_id,
    )
    batch = await service.repo.batch(report.batch_id)
    assert (batch.state, batch.outcome, batch.attempts) == ("done", "extracted", 1)
    assert batch.delivered_at is not None
    assert batch.finished_at is not None

    # The request: no chat context, only the consolidation tools, bot can't speak.
    (request,) = llm.requests
    assert [m.role for m in request.messages] == ["system", "user"]
    assert {t.name for t in request.tools} == {
        "search_memories",
        "write_memory",
        "edit_memory",
        "supersede_memory",
        "mark_contradiction",
        "retract_memory",
        "add_alias",
        "acknowledge",
    }
    assert ids_in_prompt(request) == ids


async def test_nothing_is_a_legal_outcome(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM
) -> None:
    ids = await seed(core, n=12)
    llm.push(ack_nothing)
    report = await run_batch(service)
    assert (report.state, report.outcome) == ("done", "nothing")
    assert (await service.repo.cursor(G1)).acked_id == ids[-1]
    assert await service.repo.fragments(G1) == []
    assert await count(core, "memories") == 0


async def test_chatting_without_ack_fails_and_changes_nothing(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM
) -> None:
    await seed(core, n=15)
    llm.push(text_response("好的，我看完了！这些消息很有意思。"))
    report = await run_batch(service)
    assert report.state == "failed"
    assert report.error is not None
    assert "without acknowledging" in report.error
    cursor = await service.repo.cursor(G1)
    assert (cursor.acked_id, cursor.delivered_id, cursor.consecutive_failures) == (0, 0, 1)
    batch = await service.repo.batch(report.batch_id)
    assert batch.state == "failed"
    assert batch.error == report.error
    assert await count(core, "fragments") == 0


async def test_malformed_arguments_are_refused_and_the_model_can_retry(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM
) -> None:
    ids = await seed(core, n=15)

    def broken(request: LLMRequest) -> ChatResponse:
        tok = token_of(request)
        from memory_core.llm import tool_call

        return respond(
            tool_call("write_memory", '{"token": "' + tok + '", "type": "fact", '),
            call("write_memory", token=tok, type="fact", subject="张三", content="x"),
            call(
                "write_memory",
                token=tok,
                type="feeling",
                subject="张三",
                content="x",
                evidence=[ids[0]],
            ),
            call("no_such_tool", token=tok),
            call("acknowledge", token=tok, outcome="extracted"),
        )

    llm.push(broken, ack_nothing)
    report = await run_batch(service)
    assert report.state == "done"
    assert report.turns == 2
    assert report.refused == 5
    assert report.tool_calls == 6
    [kept] = await service.repo.batches(G1)  # what the console's batch table shows
    assert (kept.id, kept.tool_calls, kept.refused) == (report.batch_id, 6, 5)
    results = tool_results(llm.requests[1])
    assert [r["ok"] for r in results] == [False] * 5
    assert "not valid JSON" in results[0]["error"]
    assert "evidence is required" in results[1]["error"]
    assert "type" in results[2]["error"]
    assert "unknown tool" in results[3]["error"]
    assert "summary" in results[4]["error"]
    assert await count(core, "memories") == 0


async def test_foreign_token_is_refused_and_writes_nothing(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM
) -> None:
    ids = await seed(core, n=15)

    def forged(request: LLMRequest) -> ChatResponse:
        return respond(
            call(
                "write_memory",
                token="forged-token",
                type="fact",
                subject="张三",
                content="张三是管理员",
                evidence=[ids[0]],
            ),
            call("acknowledge", token="forged-token", outcome="nothing"),
        )

    llm.push(forged, text_response("done"))
    report = await run_batch(service)
    assert report.state == "failed"
    assert [r["ok"] for r in tool_results(llm.requests[1])] == [False, False]
    assert "token" in tool_results(llm.requests[1])[0]["error"]
    assert await count(core, "memories") == 0
    assert (await service.repo.cursor(G1)).acked_id == 0


async def test_other_scopes_ids_and_outside_experiences_are_refused(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM
) -> None:
    other_ids = await seed(core, "group:2", n=3)
    foreign = await core.memories.write(
        "group:2",
        type="fact",
        subject="李四",
        content="李四住在杭州",
        evidence=[EvidenceRef(experience_id=other_ids[0])],
    )
    ids = await seed(core, n=45, start=100)  # 40 in the batch, 5 left outside
    before_memories = await count(core, "memories")
    before_evidence = await count(core, "memory_evidence")
    before_versions = await count(core, "memory_versions")

    def trespass(request: LLMRequest) -> ChatResponse:
        tok = token_of(request)
        write = {"token": tok, "type": "fact", "subject": "张三", "content": "张三住在杭州"}
        return respond(
            call("write_memory", **write, evidence=[other_ids[0]]),
            call("write_memory", **write, evidence=[ids[0], ids[44]]),
            call("write_memory", **write, evidence=[ids[0]], evidence_memories=[foreign.memory.id]),
            call("edit_memory", token=tok, memory_id=foreign.memory.id, content="改", reason="r"),
            call("retract_memory", token=tok, memory_id=foreign.memory.id, reason="r"),
            call(
                "supersede_memory",
                token=tok,
                old_id=foreign.memory.id,
                new_id=foreign.memory.id,
                reason="r",
            ),
            call(
                "mark_contradiction",
                token=tok,
                a_id=foreign.memory.id,
                b_id=foreign.memory.id,
                reason="r",
            ),
            call("acknowledge", token=tok, outcome="nothing"),
        )

    llm.push(trespass)
    report = await run_batch(service)
    assert report.state == "done"
    assert report.messages == 40
    results = [json.loads(r) for r in report.tool_results]
    assert [r["ok"] for r in results] == [False] * 7 + [True]
    assert "not part of this batch" in results[0]["error"]
    assert str(ids[44]) in results[1]["error"]
    assert all("does not exist in this chat" in r["error"] for r in results[2:7])
    assert await count(core, "memories") == before_memories
    assert await count(core, "memory_evidence") == before_evidence
    assert await count(core, "memory_versions") == before_versions
    assert (await core.memories.get("group:2", foreign.memory.id)).status == "active"
    assert (await service.repo.cursor(G1)).acked_id == ids[39]


async def test_bot_words_cannot_alone_be_evidence_about_a_person(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM
) -> None:
    texts = [
        "我记得张三最喜欢吃榴莲了",
        *[f"普通消息{i}" for i in range(1, 11)],
        "我记得张三最喜欢吃榴莲了！",
    ]
    ids = await seed(core, n=12, bot_at=(0,), texts=texts)

    def lean_on_bot(request: LLMRequest) -> ChatResponse:
        tok = token_of(request)
        w = {"token": tok, "type": "preference", "content": "张三最喜欢吃榴莲"}
        return respond(
            call("write_memory", **w, subject="张三", evidence=[ids[0]]),
            call("write_memory", **w, subject="张三", evidence=[ids[0], ids[11]]),
            call("write_memory", **w, subject="bot", evidence=[ids[0]]),
            call("write_memory", **w, subject="张三", evidence=[ids[0], ids[3]]),
        )

    llm.push(lean_on_bot, ack_nothing)
    report = await run_batch(service)
    assert report.state == "done"
    results = tool_results(llm.requests[1])
    assert [r["ok"] for r in results] == [False, False, True, True]
    assert "bot's own words" in results[0]["error"]
    prompt = llm.requests[0].messages[1].content or ""
    assert f"#{ids[0]} " in prompt
    assert "【机器人】大肥鱼" in prompt
    assert "【含机器人原话】" in prompt
    assert len(report.written) == 2


async def test_calls_after_the_acknowledgement_are_refused(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM
) -> None:
    ids = await seed(core, n=12)
    stale_token: list[str] = []

    def ack_then_write(request: LLMRequest) -> ChatResponse:
        tok = token_of(request)
        stale_token.append(tok)
        return respond(
            call("acknowledge", token=tok, outcome="nothing"),
            call(
                "write_memory",
                token=tok,
                type="fact",
                subject="张三",
                content="晚了",
                evidence=[ids[0]],
            ),
        )

    llm.push(ack_then_write)
    report = await run_batch(service)
    assert report.state == "done"
    assert report.refused == 1
    assert await count(core, "memories") == 0

    # An old batch's token in a new batch is a foreign token.
    more = await seed(core, n=12, start=50)

    def replay(request: LLMRequest) -> ChatResponse:
        return respond(
            call(
                "write_memory",
                token=stale_token[0],
                type="fact",
                subject="张三",
                content="x",
                evidence=[more[0]],
            ),
            call("acknowledge", token=stale_token[0], outcome="nothing"),
        )

    llm.push(replay, text_response("bye"))
    second = await run_batch(service)
    assert second.state == "failed"
    assert second.refused == 2
    assert await count(core, "memories") == 0
    assert (await service.repo.cursor(G1)).acked_id == ids[-1]


async def test_model_errors_fail_then_redelivery_succeeds(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM
) -> None:
    ids = await seed(core, n=15)
    llm.push(LLMTimeout("slow"), LLMRateLimited("429"), extract_all)
    first = await run_batch(service)
    second = await run_batch(service)
    third = await run_batch(service)
    assert [r.state for r in (first, second, third)] == ["failed", "failed", "done"]
    assert "LLMTimeout" in (first.error or "")
    assert "LLMRateLimited" in (second.error or "")
    assert [r.attempts for r in (first, second, third)] == [1, 2, 3]
    assert {(r.first_id, r.last_id) for r in (first, second, third)} == {(ids[0], ids[-1])}
    cursor = await service.repo.cursor(G1)
    assert (cursor.acked_id, cursor.consecutive_failures) == (ids[-1], 0)


async def test_duplicate_delivery_after_failure_is_idempotent(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM
) -> None:
    ids = await seed(core, n=15)

    def write_no_ack(request: LLMRequest) -> ChatResponse:
        tok = token_of(request)
        return respond(
            call(
                "write_memory",
                token=tok,
                type="preference",
                subject="张三",
                content="张三喜欢打羽毛球",
                evidence=[ids[0]],
            )
        )

    llm.push(write_no_ack, text_response("写好了"), extract_all)
    failed = await run_batch(service)
    assert failed.state == "failed"
    assert len(failed.written) == 1
    assert (await service.repo.cursor(G1)).acked_id == 0
    done = await run_batch(service)
    assert done.state == "done"
    assert (done.first_id, done.last_id) == (failed.first_id, failed.last_id)
    assert done.near_duplicates == 1  # the second pass is told about the first pass's memory
    assert (await service.repo.cursor(G1)).acked_id == ids[-1]
    assert await service.run_once() is None  # nothing left: the watermark ended where one pass ends
    assert "nothing eligible" in service.last_skip


async def test_the_batch_shows_its_people_and_a_memory_names_its_member_by_id(
    core: Yuji, service: ConsolidationService, llm: ScriptedLLM
) -> None:
    # 张三 (10001) says where 李四 (10002) is moving; the model calls 李四 by a
    # nickname no one uses in the chat, but gives his id from the batch's people.
    ids = await seed(core, n=6)
    await seed(core, n=6, start=6, sender="10002", texts=["我下个月搬去深圳"] * 6)

    def write_by_id(request: LLMRequest) -> ChatResponse:
        tok = token_of(request)
        batch = ids_in_prompt(request)
        return respond(
            call(
                "write_memory",
                token=tok,
                type="event",
                subject="四哥",
                subject_id="10002",
                content="李四下个月搬去深圳",
                evidence=batch[6:7],
            ),
            call(
                "write_memory",
                token=tok,
                type="event",
                subject="李四",
                subject_id="10002",
                content="张三说李四要搬走",
                evidence=batch[:1],
            ),
            call("acknowledge", token=tok, outcome="extracted", summary="李四要搬家"),
        )

    llm.push(write_by_id)
    report = await run_batch(service, force=True)
    assert (report.state, report.refused) == ("done", 0)
    (request,) = llm.requests
    prompt = request.messages[1].content or ""
    assert "本批出现的人" in prompt
    assert "- 10001：张三" in prompt
    own, told = [await core.memories.get(G1, i) for i in report.written]
    assert (own.subject_kind, own.subject_person, own.word) == ("person", "10002", "self-only")
    # The same person, on another member's word only: hearsay.
    assert (told.subject_kind, told.subject_person, told.word) == ("person", "10002", "hearsay")
    assert ids[0] in {e.experience_id for e in await core.memories.evidence(G1, told.id)}
