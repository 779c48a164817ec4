"""Properties of recall and the write path on a real database (Hypothesis):
no question ever gets another chat's memory or a retracted one; supersede never
closes a memory of another chat; the near-duplicate hint never merges."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import Yuji
from memory_core.errors import NotFound
from memory_core.types import EvidenceRef, NewExperience

SCOPES = ("group:1", "group:2", "private:3")
WORDS = (
    "吉他",
    "火锅",
    "桌游",
    "猫咪",
    "考研",
    "搬家",
    "小明",
    "阿杰",
    "周六",
    "20%",
    "30%",
    "以前",
)
PROPS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map("".join)


async def evidence(core: Yuji, scope: str) -> list[EvidenceRef]:
    exp = await core.archive.append(
        NewExperience(
            scope=scope,
            fingerprint=f"seed-{scope}",
            sender_id="1",
            text="种子",
            sent_at=core.clock.now(),
        )
    )
    return [EvidenceRef(experience_id=exp)]


@PROPS
@given(
    memories=st.lists(
        st.tuples(st.sampled_from(SCOPES), texts, st.booleans()), min_size=1, max_size=8
    ),
    question=texts,
    asked_in=st.sampled_from(SCOPES),
)
async def test_no_question_returns_another_chats_or_a_retracted_memory(
    core: Yuji, memories: list[tuple[str, str, bool]], question: str, asked_in: str
) -> None:
    for scope, content, retract in memories:
        out = await core.memories.write(
            scope,
            type="fact",
            subject="小明",
            content=content,
            evidence=await evidence(core, scope),
        )
        if retract:
            await core.memories.retract(scope, out.memory.id, reason="r", changed_by="admin")
    for text in (question, question + "以前"):
        result = await core.recall.recall(asked_in, text)
        for item in result.items:
            assert item.memory.scope == asked_in
            assert item.memory.status != "retracted"
        assert len(result.items) <= 5
    for memory in await core.memories.search(asked_in, question):
        assert memory.scope == asked_in
        assert memory.status == "active"


@PROPS
@given(
    old_scope=st.sampled_from(SCOPES),
    new_scope=st.sampled_from(SCOPES),
    call_in=st.sampled_from(SCOPES),
)
async def test_supersede_never_closes_a_memory_of_another_chat(
    core: Yuji, old_scope: str, new_scope: str, call_in: str
) -> None:
    old = (
        await core.memories.write(
            old_scope,
            type="state",
            subject="a",
            content="旧的",
            evidence=await evidence(core, old_scope),
        )
    ).memory
    new = (
        await core.memories.write(
            new_scope,
            type="state",
            subject="a",
            content="新的",
            evidence=await evidence(core, new_scope),
        )
    ).memory
    try:
        outcome = await core.memories.supersede(
            call_in, old.id, new.id, reason="r", changed_by="model"
        )
    except NotFound:
        outcome = None
    closed = (await core.memories.get(old_scope, old.id)).valid_to is not None
    if closed:
        assert old_scope == new_scope == call_in
        assert outcome is not None
        assert outcome.applied
    if len({old_scope, new_scope, call_in}) > 1:
        assert outcome is None
        assert not closed


@PROPS
@given(contents=st.lists(texts, min_size=1, max_size=6))
async def test_near_duplicate_hint_never_merges(core: Yuji, contents: list[str]) -> None:
    scope = "group:1"
    refs = await evidence(core, scope)
    before = len(await core.memories.newest(scope, limit=10_000))
    for i, content in enumerate(contents):
        out = await core.memories.write(
            scope, type="fact", subject="x", content=content, evidence=refs
        )
        assert out.memory.content == content
        if out.near_duplicate is not None:
            assert out.near_duplicate.id != out.memory.id
            assert out.similarity >= 0.85
            assert out.near_duplicate.scope == scope
        assert len(await core.memories.newest(scope, limit=10_000)) == before + i + 1
