from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_core import Settings, Yuji
from memory_core.recall.vector_port import VectorAsk, VectorSidePath
from memory_core.vectors.build import sync_index
from memory_core.vectors.embedder import Calibration, Embedder
from memory_core.vectors.fake import FakeEmbedder
from memory_core.vectors.side_path import VectorSide

from .helpers import add_alias, add_memory, edit_memory

G = "group:1"
NOW = datetime(2026, 11, 20, tzinfo=UTC)
OPEN = Calibration(threshold=0.1, margin=0.0)
# Pinned vectors: the question text after names are removed, and each memory's text.
PINNED = {
    "家添丁了没": [1.0, 0.2, 0.0, 0.0],
    "儿子出生，七斤二两": [0.9, 0.1, 0.1, 0.0],
    "儿子出生，七斤二两，母子平安": [0.8, 0.2, 0.1, 0.0],
    "最爱卡坦岛": [0.0, 0.0, 1.0, 0.0],
    "最近为啥不来": [0.5, 0.5, 0.5, 0.5],
    "儿子出生了，七斤二两": [0.9, 0.1, 0.1, 0.01],
}


def fake() -> FakeEmbedder:
    return FakeEmbedder(dim=4, pinned=PINNED, calibration=OPEN)


async def make_side(core: Yuji, embedder: Embedder, mode: str = "candidate") -> VectorSide:
    await sync_index(core.db, embedder, core.settings.vectors_dir)
    return VectorSide(core.settings.with_changes(vector_mode=mode), core.db, embedder=embedder)


async def test_implements_the_recall_port(core: Yuji) -> None:
    side = await make_side(core, fake())
    assert isinstance(side, VectorSidePath)
    assert side.mode == "candidate"
    side.set_mode("shadow")
    assert side.mode == "shadow"


async def test_guesses_across_an_alias_with_no_shared_words(core: Yuji) -> None:
    birth = await add_memory(core.db, G, "老周", "老周儿子出生，七斤二两")
    await add_memory(core.db, G, "老周", "老周最爱卡坦岛")
    await add_alias(core.db, G, "周哥", "老周")
    side = await make_side(core, fake())
    guess = await side.guess(VectorAsk(G, "周哥家添丁了没", {1, 2}))
    assert guess is not None
    assert guess.memory_id == birth
    assert side.last_decision is not None
    assert side.last_decision.reason == "guess"


async def test_only_memories_about_the_named_person_compete(core: Yuji) -> None:
    other = await add_memory(core.db, G, "大刘", "大刘儿子出生，七斤二两")
    mine = await add_memory(core.db, G, "老周", "老周最爱卡坦岛")
    await add_memory(core.db, G, "老周", "老周最近为啥不来")
    side = await make_side(core, fake())
    found = await side.candidates(
        G, "老周家添丁了没", {other, mine, 3}, subjects=frozenset({"老周"})
    )
    assert other not in {s.memory_id for s in found.scored}
    assert found.subject_filtered


async def test_silent_without_subject_or_question(core: Yuji) -> None:
    await add_memory(core.db, G, "老周", "老周儿子出生，七斤二两")
    side = await make_side(core, fake())
    assert await side.guess(VectorAsk(G, "家添丁了没", {1})) is None  # nobody named
    assert side.last_decision is not None
    assert side.last_decision.reason == "no clear subject"
    assert await side.guess(VectorAsk(G, "老周家添丁了", {1})) is None  # not a question


async def test_silent_about_a_thing_the_chat_never_named(core: Yuji) -> None:
    # The chat knows 老周 but never heard of 大黄 (nor said 添丁, but it did say 出生).
    birth = await add_memory(core.db, G, "老周", "老周儿子出生，七斤二两")
    side = await make_side(core, fake())
    assert await side.guess(VectorAsk(G, "老周家大黄还挠沙发吗", {birth})) is None
    assert side.last_decision is not None
    assert "大黄" in side.last_decision.reason
    assert await side.guess(VectorAsk(G, "老周家添丁了没", {birth})) is not None


async def test_a_count_must_be_of_the_unit_asked(core: Yuji) -> None:
    # "几只" asks how many animals: "六个月" is a number, but not of 只.
    months = await add_memory(core.db, G, "老周", "老周说等六个月再说")
    side = await make_side(core, fake())
    assert await side.guess(VectorAsk(G, "老周养了几只", {months})) is None
    assert side.last_decision is not None
    assert "answer" in side.last_decision.reason


async def test_silent_without_an_index(core: Yuji) -> None:
    await add_memory(core.db, G, "老周", "老周儿子出生，七斤二两")
    side = VectorSide(core.settings.with_changes(vector_mode="candidate"), core.db, embedder=fake())
    assert side.index() is None
    assert await side.guess(VectorAsk(G, "老周家添丁了没", {1})) is None


async def test_a_stale_vector_is_never_guessed(core: Yuji) -> None:
    birth = await add_memory(core.db, G, "老周", "老周儿子出生，七斤二两")
    side = await make_side(core, fake())
    await edit_memory(core.db, birth, "老周儿子出生，七斤二两，母子平安")
    assert await side.guess(VectorAsk(G, "老周家添丁了没", {birth})) is None
    assert side.last_decision is not None
    assert "stale" in side.last_decision.reason
    # After `yuji embed` the side path picks up the new file without a restart.
    await sync_index(core.db, side.embedder, core.settings.vectors_dir)
    assert await side.guess(VectorAsk(G, "老周家添丁了没", {birth})) is not None


async def test_failures_end_in_silence(core: Yuji) -> None:
    class Broken(FakeEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            raise RuntimeError("model file is corrupt")

    await add_memory(core.db, G, "老周", "老周儿子出生，七斤二两")
    await sync_index(core.db, fake(), core.settings.vectors_dir)
    side = VectorSide(
        core.settings.with_changes(vector_mode="candidate"), core.db, embedder=Broken(dim=4)
    )
    assert await side.guess(VectorAsk(G, "老周家添丁了没", {1})) is None


async def test_settings_override_the_model_calibration(core: Yuji) -> None:
    side = VectorSide(
        core.settings.with_changes(vector_threshold=0.9, vector_margin=-1.0),
        core.db,
        embedder=fake(),
    )
    assert side.calibration == Calibration(threshold=0.9, margin=OPEN.margin)


@pytest.mark.parametrize("mode", ["shadow", "candidate"])
async def test_core_wires_vectors_when_enabled(settings: Settings, mode: str) -> None:
    core = await Yuji.open(settings.with_changes(vector_mode=mode), embedder=fake())
    try:
        assert core.vectors is not None
        assert core.vectors.mode == mode
        assert core.vectors.embedder.model_id == "fake"
        assert not core.vectors.last_decision
    finally:
        await core.close()


async def test_off_means_no_side_path(core: Yuji) -> None:
    assert core.settings.vector_mode == "off"
    assert core.vectors is None


async def test_a_fact_restated_is_not_its_own_rival(core: Yuji) -> None:
    """The same fact written twice scores twice, a hair apart: that is no coin toss
    between two answers, so the margin is taken over what says something else, and
    the first statement is the one guessed (as recall shows it)."""
    first = await add_memory(core.db, G, "老周", "老周儿子出生，七斤二两")
    again = await add_memory(core.db, G, "老周", "老周儿子出生了，七斤二两")
    await add_memory(core.db, G, "老周", "老周最爱卡坦岛")
    strict = FakeEmbedder(dim=4, pinned=PINNED, calibration=Calibration(0.1, margin=0.2))
    side = await make_side(core, strict)
    found = await side.candidates(G, "老周家添丁了没", {first, again})
    assert abs(found.scored[0].score - found.scored[1].score) < 0.2  # plain: a near tie
    guess = await side.guess(VectorAsk(G, "老周家添丁了没", {first, again, 3}))
    assert guess is not None
    assert guess.memory_id == first
