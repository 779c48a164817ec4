"""Recent chat as a recall source (memory_core/recall/quotes.py): what may be quoted.

A message is quoted only while it is of the asking chat, above its acknowledged
watermark, older than the prompt's recent window, not the bot's own and not
redacted; and a wake that asks about nothing gets no quotes.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import timedelta

import numpy as np

from memory_core import FakeClock, Yuji
from memory_core.recall.chatter import SIGNALS, ChatterGate
from memory_core.storage.consolidation.consolidation_repo import ConsolidationRepo, Cut
from memory_core.types import NewExperience

SCOPE = "group:5001"
OTHER = "group:5002"
SAID = "下周三我要去杭州面试一家做机器人的公司"
QUESTION = "谁要去杭州面试来着"
_SEQ = itertools.count(1)


async def say(
    core: Yuji,
    clock: FakeClock,
    text: str,
    *,
    scope: str = SCOPE,
    sender: str = "30001",
    name: str = "阿明",
    is_bot: bool = False,
    ago: timedelta = timedelta(hours=2),
) -> int:
    n = await core.archive.append(
        NewExperience(
            scope=scope,
            fingerprint=f"m{next(_SEQ)}",
            sender_id=sender,
            sender_name=name,
            text=text,
            sent_at=clock.now() - ago,
            is_bot=is_bot,
        )
    )
    await core.archive.flush()
    return n


async def filler(core: Yuji, clock: FakeClock, count: int, scope: str = SCOPE) -> None:
    for i in range(count):
        await say(
            core, clock, f"随便聊聊第{i}句今天天气不错", scope=scope, sender="30009", name="路人"
        )


async def acknowledge(core: Yuji, scope: str, last_id: int) -> None:
    """The batch holding `last_id` is acknowledged, through the batch state machine."""
    repo = ConsolidationRepo(core.db)
    first = (await repo.cursor(scope)).acked_id + 1
    now = core.clock.now()
    batch = await repo.create(scope, Cut(first, last_id, last_id - first + 1, 10), "tok", now)
    assert batch is not None
    await repo.delivered(batch.id, now)
    await repo.acknowledge(batch.id, "tok", "nothing", "", now)


async def quoted(core: Yuji, question: str = QUESTION, scope: str = SCOPE) -> list[int]:
    result = await core.recall.recall(scope, question)
    return [q.message.id for q in result.quotes]


async def test_an_unconsolidated_message_older_than_the_window_is_quoted(
    core: Yuji, clock: FakeClock
) -> None:
    target = await say(core, clock, SAID)
    await filler(core, clock, 25)
    result = await core.recall.recall(SCOPE, QUESTION)
    assert [q.message.id for q in result.quotes] == [target]
    quote = result.quotes[0]
    assert quote.message.sender_name == "阿明"
    assert quote.message.text == SAID
    assert quote.band in ("sure", "related")
    assert result.items == ()  # a quote is not a memory


async def test_a_message_inside_the_recent_window_is_not_quoted(
    core: Yuji, clock: FakeClock
) -> None:
    await filler(core, clock, 25)
    await say(core, clock, SAID)  # the prompt's last twenty already show it
    await filler(core, clock, 5)
    assert await quoted(core) == []


async def test_only_the_asking_chat(core: Yuji, clock: FakeClock) -> None:
    await say(core, clock, SAID, scope=OTHER)
    await filler(core, clock, 25, scope=OTHER)
    await filler(core, clock, 25)
    assert await quoted(core) == []
    assert len(await quoted(core, scope=OTHER)) == 1


async def test_an_acknowledged_message_is_no_longer_quoted(core: Yuji, clock: FakeClock) -> None:
    target = await say(core, clock, SAID)
    await filler(core, clock, 25)
    assert await quoted(core) == [target]
    await acknowledge(core, SCOPE, target)
    assert await quoted(core) == []


async def test_a_forgotten_persons_message_is_never_quoted(core: Yuji, clock: FakeClock) -> None:
    target = await say(core, clock, SAID, sender="30001")
    await say(core, clock, "我也想去杭州面试", sender="30002", name="小红")
    await filler(core, clock, 25)
    assert target in await quoted(core)
    await core.porting.forget_person(SCOPE, "30001", requested_by="30001")
    after = await quoted(core)
    assert target not in after
    assert after  # the other member's message still is


async def test_the_bots_own_words_are_never_quoted(core: Yuji, clock: FakeClock) -> None:
    await say(core, clock, SAID, sender="bot", name="大肥鱼", is_bot=True)
    await filler(core, clock, 25)
    assert await quoted(core) == []


async def test_a_wake_the_gate_calls_chatter_gets_no_quotes(core: Yuji, clock: FakeClock) -> None:
    await say(core, clock, SAID)
    await filler(core, clock, 25)
    always = ChatterGate(
        mean=np.zeros(len(SIGNALS)),
        scale=np.ones(len(SIGNALS)),
        weights=np.zeros(len(SIGNALS)),
        bias=-5.0,
        line=0.5,
    )
    recall = core.recall
    # A wake with no more than a phatic wake's few terms left ("杭州!"): quoted without
    # the gate, silenced with it. A longer one says something, gate or not.
    assert len(await quoted(core, "杭州！")) == 1
    recall._lexical_model = replace(recall.lexical_model, chatter=always)  # pyright: ignore[reportPrivateUsage]
    assert await quoted(core, "杭州！") == []
    assert len(await quoted(core)) == 1


async def test_message_vectors_are_made_then_dropped_on_acknowledgement(
    core: Yuji, clock: FakeClock
) -> None:
    vectors = core.message_vectors
    assert vectors is not None
    target = await say(core, clock, SAID)
    await filler(core, clock, 25)
    assert await vectors.embed_pending() == 26
    assert await vectors.embed_pending() == 0
    scores = await vectors.message_scores(SCOPE, QUESTION, 0, target + 1)
    assert scores is not None
    assert scores.ids.tolist() == [target]
    await acknowledge(core, SCOPE, target)
    ids, _ = await vectors.repo.vectors(SCOPE, "fake", 0)
    assert target not in ids.tolist()
    assert await vectors.message_scores(SCOPE, QUESTION, target, target + 1) is None


async def test_a_message_acknowledged_while_it_is_embedded_keeps_no_vector(
    core: Yuji, clock: FakeClock
) -> None:
    vectors = core.message_vectors
    assert vectors is not None
    target = await say(core, clock, SAID)
    await filler(core, clock, 25)
    pending = await vectors.repo.unembedded("fake", 64)  # read before the ack ...
    await acknowledge(core, SCOPE, target)
    matrix = vectors.dense.embedder.embed([r.text for r in pending])
    await vectors.repo.store_vectors("fake", [(r.id, r.scope) for r in pending], matrix)
    ids, _ = await vectors.repo.vectors(SCOPE, "fake", 0)  # ... stored after it
    assert target not in ids.tolist()
    assert ids.tolist() == [r.id for r in pending if r.id > target]
    assert await vectors.catch_up(8) == 0  # nothing left to embed, none brought back
