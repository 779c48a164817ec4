"""The wake's analysis with its context (recall/wake.py): the turns of another chat are
never read, the bot's own turns never make a memory sure, and every wake has a shape
and a depth."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import FakeClock, Settings, Yuji
from memory_core.recall.question import Names
from memory_core.recall.wake import CONTEXT_TURNS, Turn, read
from memory_core.types import Asker
from memory_core.vectors import FakeEmbedder, sync_index
from tests.core.test_recall import write
from tests.core.vectors.helpers import add_memory

from .test_no_cross_chat import NOW, SCOPES, WORDS, open_model

G1 = "group:1"
NAMES = Names.of(["小明", "阿花"], {"阿明": "小明"})

words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map("".join)
turns = st.lists(
    st.builds(Turn, text=words, is_bot=st.booleans(), scope=st.sampled_from(SCOPES)), max_size=6
)


@given(wake=words, context=turns, asked_in=st.sampled_from(SCOPES))
def test_another_chats_turns_are_never_read(wake: str, context: list[Turn], asked_in: str) -> None:
    mine = [t for t in context if t.scope == asked_in]
    given_all = read(asked_in, wake, NAMES, (), context)
    given_mine = read(asked_in, wake, NAMES, (), mine)
    assert given_all.context == given_mine.context
    assert (given_all.question, given_all.depth) == (given_mine.question, given_mine.depth)
    assert len(given_all.context) <= CONTEXT_TURNS


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    written=st.lists(st.tuples(st.sampled_from(SCOPES), words), min_size=1, max_size=10),
    wake=words,
    context=turns,
    asked_in=st.sampled_from(SCOPES),
)
async def test_recall_with_context_reads_only_the_asked_chat(
    written: list[tuple[str, str]], wake: str, context: list[Turn], asked_in: str
) -> None:
    """Random chats and turns: recall given turns of other chats answers exactly as if
    it had been given only its own, and only with its own chat's memories."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config = Settings(data_dir=root / "data", relevance_weights=str(open_model(root)))
        core = await Yuji.open(config, clock=FakeClock(NOW), embedder=FakeEmbedder())
        try:
            for scope, text in written:
                await add_memory(core.db, scope, "小明", text)
            assert core.vectors is not None
            await sync_index(core.memory_repo, core.vectors.embedder, core.vector_place)
            mine = [t for t in context if t.scope == asked_in]
            given_all = await core.recall.recall(asked_in, wake, now=NOW, context=context)
            given_mine = await core.recall.recall(asked_in, wake, now=NOW, context=mine)
            assert [(i.memory.id, i.band) for i in given_all.items] == [
                (i.memory.id, i.band) for i in given_mine.items
            ]
            assert all(item.memory.scope == asked_in for item in given_all.items)
        finally:
            await core.close()


BOT_SAYS = [
    "小明从九月开始学吉他，每周六去琴行上课",
    "你是说小明每周六去琴行学吉他吗？",
    "小明 吉他 琴行 周六",
]


@pytest.mark.parametrize("said", BOT_SAYS)
async def test_the_bots_own_turns_never_make_a_memory_sure(core: Yuji, said: str) -> None:
    target = await write(core, G1, "小明从九月开始学吉他，每周六去琴行上课")
    await write(core, G1, "小红喜欢吃火锅", subject="小红")
    alone = await core.recall.recall(G1, "对啊就是那个")
    sure_alone = {i.memory.id for i in alone.items if i.band == "sure"}
    bot = [Turn(said, is_bot=True, scope=G1), Turn(said, is_bot=True, scope=G1)]
    with_bot = await core.recall.recall(G1, "对啊就是那个", context=bot)
    assert target in {i.memory.id for i in with_bot.items}  # context did find it
    assert {i.memory.id for i in with_bot.items if i.band == "sure"} <= sure_alone
    assert all(i.band == "related" for i in with_bot.items if i.memory.id == target)


@pytest.mark.parametrize(
    ("text", "shape"),
    [
        ("小明上周去哪玩了？", "question"),
        ("小明还记得那家店吗", "question"),
        ("我今天又去琴行了", "statement"),
        ("阿花的猫好可爱", "statement"),
    ],
)
def test_a_wake_has_a_shape_and_a_statement_trusts_p_less(text: str, shape: str) -> None:
    wake = read(G1, text, NAMES)
    assert wake.shape == shape
    question = read(G1, "小明上周去哪玩了？", NAMES)
    assert 0 < wake.depth <= question.depth <= 1
    with_turns = read(G1, text, NAMES, (), [Turn("阿花说她要搬家", scope=G1)])
    assert with_turns.depth <= wake.depth
    assert with_turns.context
    assert with_turns.context[0].weight < 1


@pytest.mark.parametrize(
    ("wake", "turns", "meant"),
    [
        ("那她演过什么", ["你知道阿花吗", "我知道一点"], {"阿花"}),
        ("他最近怎么样", ["阿明上周搬家了"], {"小明"}),
        ("what does she do for fun?", ["阿花 moved to Leeds"], {"阿花"}),
    ],
)
def test_a_pronoun_is_searched_as_whom_the_newest_turn_named(
    wake: str, turns: list[str], meant: set[str]
) -> None:
    read_wake = read(G1, wake, NAMES, (), [Turn(t, scope=G1) for t in turns])
    assert read_wake.lookup.named == meant
    assert read_wake.question.named == frozenset()  # the features read the wake alone
    alone = read(G1, wake, NAMES)
    assert alone.lookup == alone.question


@pytest.mark.parametrize("wake", ["小明他最近怎么样", "对了，我上次在网上买的那个机械键盘到了没有"])
def test_a_wake_that_names_someone_or_says_enough_is_searched_as_said(wake: str) -> None:
    read_wake = read(G1, wake, NAMES, (), [Turn("阿花上周搬家了", scope=G1)])
    assert read_wake.lookup == read_wake.question
    assert not read_wake.leans


@pytest.mark.parametrize(
    "wake",
    ["其他人呢", "后来呢", "是啊，真的好累", "wow, really?", "哈哈哈哈", "多少钱来着", "lol"],
)
def test_a_reaction_or_short_follow_up_leans_on_the_turns_before(wake: str) -> None:
    turns = [Turn("阿花上周搬家了", scope=G1), Turn("新家离公司很近", scope=G1)]
    read_wake = read(G1, wake, NAMES, (), turns)
    assert read_wake.leans
    assert read_wake.lookup.text.startswith("阿花上周搬家了 新家离公司很近")  # oldest first
    assert "阿花" in read_wake.lookup.named
    # The features and the sure band read the wake alone: no pronoun, nobody asked about.
    assert read_wake.question == read(G1, wake, NAMES).question
    assert read_wake.about == frozenset()
    assert read_wake.depth < read(G1, wake, NAMES).depth
    alone = read(G1, wake, NAMES)
    assert not alone.leans
    assert alone.lookup == alone.question


@pytest.mark.parametrize("wake", ["早上好呀", "晚安啦", "在吗在吗", "good morning!", "bye"])
def test_a_greeting_or_goodbye_never_leans_on_the_turns_before(wake: str) -> None:
    """It opens or closes a talk: whatever was said before it, it asks about nothing."""
    turns = [Turn("阿花上周搬家了", scope=G1), Turn("新家离公司很近", scope=G1)]
    read_wake = read(G1, wake, NAMES, (), turns)
    assert not read_wake.leans
    assert read_wake.lookup == read_wake.question


def test_a_leaning_question_keeps_its_own_vector_and_a_reaction_reads_the_turns() -> None:
    """Both are searched by the turns' words; only a reaction embeds the turns joined
    (a question's own vector says what it asks, and a second embedding per short
    question after a conversation doubled recall's p95)."""
    turns = [Turn("阿花上周搬家了", scope=G1), Turn("新家离公司很近", scope=G1)]
    question = read(G1, "多少钱来着", NAMES, (), turns)
    reaction = read(G1, "是啊，真的好累", NAMES, (), turns)
    assert question.leans
    assert reaction.leans
    assert "阿花" in question.lookup.named
    assert "阿花" in reaction.lookup.named
    assert question.lookup.embed_text == question.question.embed_text
    assert "搬家" in reaction.lookup.embed_text
    assert question.depth > reaction.depth


@pytest.mark.parametrize("wake", ["我也想去", "我真的会谢", "I'm shattered", "my legs hate me"])
def test_a_reaction_in_the_first_person_leans_and_a_question_about_the_sender_does_not(
    wake: str,
) -> None:
    """A first person names the sender, and a reaction that names no one else reacts to
    the turns; a short question about the sender ("我的猫叫啥") asks on its own."""
    turns = [Turn("阿花上周搬家了", scope=G1), Turn("新家离公司很近", scope=G1)]
    asker = Asker("20001", ("小明",))
    reaction = read(G1, wake, NAMES, (), turns, asker)
    assert "小明" in reaction.question.named  # who it is about stays the sender
    assert reaction.leans
    assert "阿花" in reaction.lookup.named
    question = read(G1, "我的猫叫啥", NAMES, (), turns, asker)
    assert "小明" in question.question.named
    assert not question.leans


@pytest.mark.parametrize(
    ("wake", "asks"), [("有人去过吗", True), ("能带狗吗", True), ("真的吗", False), ("是吗", False)]
)
def test_a_short_yes_no_question_keeps_its_own_vector_and_a_bare_particle_reacts(
    wake: str, asks: bool
) -> None:
    """ "能带狗吗" asks something its words say, as "多少钱来着" does; "真的吗" only
    reacts to the turns (its vector is the turns joined)."""
    turns = [Turn("阿花上周搬家了", scope=G1), Turn("新家离公司很近", scope=G1)]
    read_wake = read(G1, wake, NAMES, (), turns)
    assert read_wake.leans
    assert (read_wake.lookup.embed_text == read_wake.question.embed_text) is asks
    assert (read_wake.depth > 0) is asks
