"""Pure parts of recall: visibility rule, query analysis, answer types, scoring, ranking."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from memory_core.recall import scoring
from memory_core.recall.answer_type import Wants, can_answer, wants
from memory_core.recall.query import analyse
from memory_core.recall.ranking import Candidate, final_score, recency, select
from memory_core.recall.tokenize import bigram_tokens
from memory_core.recall.visibility import is_retrospective, is_visible
from memory_core.types import Memory, MemoryStatus

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def mem(
    mid: int = 1,
    *,
    scope: str = "group:1",
    content: str = "小明在学吉他",
    status: MemoryStatus = "active",
    valid_from: datetime | None = None,
    valid_to: datetime | None = None,
    importance: float = 0.5,
    last_accessed_at: datetime | None = None,
    hit_count: int = 0,
    starred: bool = False,
) -> Memory:
    return Memory(
        id=mid,
        scope=scope,
        type="fact",
        subject="小明",
        content=content,
        importance=importance,
        confidence=0.8,
        status=status,
        valid_from=valid_from,
        valid_to=valid_to,
        version=1,
        origin="model",
        created_at=NOW - timedelta(days=10),
        updated_at=NOW - timedelta(days=10),
        last_accessed_at=last_accessed_at,
        hit_count=hit_count,
        pinned=False,
        starred=starred,
    )


# --- visibility -------------------------------------------------------------------------


def test_visibility_rule() -> None:
    past = NOW - timedelta(days=1)
    assert is_visible(mem(), "group:1", NOW)
    assert not is_visible(mem(), "group:2", NOW)
    assert not is_visible(mem(status="retracted"), "group:1", NOW, retrospective=True)
    assert not is_visible(mem(status="cold"), "group:1", NOW)
    assert is_visible(mem(status="cold"), "group:1", NOW, retrospective=True)
    assert not is_visible(mem(valid_to=past), "group:1", NOW)
    assert is_visible(mem(valid_to=past), "group:1", NOW, retrospective=True)
    assert not is_visible(
        mem(valid_from=NOW + timedelta(days=1)), "group:1", NOW, retrospective=True
    )


@given(
    scope=st.sampled_from(["group:1", "group:2", "private:3"]),
    status=st.sampled_from(["active", "retracted", "cold"]),
    retro=st.booleans(),
    ended=st.booleans(),
)
def test_visibility_is_fail_closed(
    scope: str, status: MemoryStatus, retro: bool, ended: bool
) -> None:
    m = mem(scope=scope, status=status, valid_to=NOW - timedelta(hours=1) if ended else None)
    seen = is_visible(m, "group:1", NOW, retrospective=retro)
    if seen:
        assert m.scope == "group:1"
        assert m.status != "retracted"
        assert retro or (m.status == "active" and not ended)


def test_retrospective_cues() -> None:
    assert is_retrospective("小明以前住哪")
    assert is_retrospective("原来的地址是什么")
    assert is_retrospective("What did she used to do?")
    assert not is_retrospective("小明现在住哪")


# --- query and answer types -------------------------------------------------------------


def test_query_drops_question_frame_and_finds_members() -> None:
    q = analyse(
        "阿明最近在学什么乐器来着", names=["小明", "阿明"], groups=[frozenset({"小明", "阿明"})]
    )
    assert "什么" not in q.terms
    assert "来着" not in q.terms
    assert "乐器" in q.terms
    assert q.persons == (frozenset({"小明", "阿明"}),)
    assert "阿明" in q.names
    assert q.mentions_person("小明", "x")
    assert not q.mentions_person("小红", "小红在学钢琴")
    assert "乐器" in q.lexicon_words


def test_answer_types() -> None:
    assert wants("那本书多少钱") is Wants.MONEY
    assert wants("几点开始") is Wants.TIME
    assert wants("生日是哪天") is Wants.DATE
    assert wants("他的猫叫什么") is Wants.NAME
    assert wants("养了几只猫") is Wants.COUNT
    assert wants("他喜欢什么") is Wants.ANY
    assert can_answer(Wants.MONEY, "门票80块")
    assert not can_answer(Wants.MONEY, "门票要提前买")
    assert can_answer(Wants.DATE, "12月19日聚会")
    assert not can_answer(Wants.TIME, "包间有投影")
    assert can_answer(Wants.ANY, "随便什么")


# --- scoring ------------------------------------------------------------------------------


def weights(text: str, df: dict[str, int], n: int = 50) -> scoring.Weights:
    return scoring.Weights(analyse(text, names=["小明"]), df, n, scoring.Params())


def test_a_rare_shared_word_speaks_and_a_name_alone_does_not() -> None:
    w = weights("小明的吉他", {"小明": 30, "吉他": 1})
    hit = scoring.match(w, 1, frozenset({"小明", "吉他", "学吉"}))
    assert hit is not None
    assert scoring.speaks(hit, w.params)
    assert hit.exact == ("吉他",)
    assert scoring.match(w, 2, frozenset({"小明", "明天"})) is None


def test_unknown_real_words_count_against_a_match() -> None:
    base = weights("吉他", {"吉他": 1})
    more = weights("吉他 日本", {"吉他": 1})
    a = scoring.match(base, 1, frozenset({"吉他"}))
    b = scoring.match(more, 1, frozenset({"吉他"}))
    assert a is not None
    assert b is not None
    assert b.cover < a.cover


def test_synonyms_match_at_a_discount() -> None:
    from memory_core.recall.lexicon import lexicon

    w = weights("小明有对象吗", {"小明": 10})
    hit = scoring.match(w, 1, frozenset({"女朋", "朋友"}), lex=lexicon(), doc_text="小明的女朋友")
    assert hit is not None
    assert ("对象", "女朋友") in hit.synonyms
    assert 0 < hit.cover <= 1


@given(st.integers(0, 1000), st.integers(1, 1000))
def test_idf_decreases_with_document_frequency(df: int, n: int) -> None:
    assert scoring.idf(df, n) >= scoring.idf(df + 1, n)


# --- ranking ------------------------------------------------------------------------------


def test_recency_decays_monotonically() -> None:
    values = [recency(mem(last_accessed_at=NOW - timedelta(days=d)), NOW) for d in (0, 10, 40, 400)]
    assert values == sorted(values, reverse=True)
    assert recency(mem(), NOW) == 0.0


def test_importance_stars_and_hits_lift_the_score() -> None:
    plain = Candidate(mem(), "lexical", 0.5, "")
    lifted = Candidate(mem(importance=0.9, hit_count=5, starred=True), "lexical", 0.5, "")
    assert final_score(lifted, NOW, retrospective=False) > final_score(
        plain, NOW, retrospective=False
    )


def test_stage_order_then_score() -> None:
    a = Candidate(mem(1, content="甲乙丙丁"), "near", 0.99, "")
    b = Candidate(mem(2, content="戊己庚辛"), "lexical", 0.3, "")
    assert [c.memory.id for c in select([a, b], 5, NOW)] == [2, 1]


def test_near_identical_memories_do_not_fill_the_slots() -> None:
    same = [
        Candidate(mem(i, content="小明每周六去琴行上吉他课"), "lexical", 0.9, "")
        for i in range(1, 4)
    ]
    other = Candidate(mem(9, content="小红喜欢吃火锅"), "lexical", 0.4, "")
    chosen = select([*same, other], 5, NOW)
    assert [c.memory.id for c in chosen] == [1, 9]


def test_contradicting_memories_are_shown_together() -> None:
    cands = [
        Candidate(mem(i, content=f"内容{i}号"), "lexical", 1.0 - i / 10, "") for i in range(1, 7)
    ]
    chosen = select(cands, 5, NOW, contradicts={1: frozenset({6}), 6: frozenset({1})})
    ids = [c.memory.id for c in chosen]
    assert ids[:2] == [1, 6]
    assert len(ids) == 5


@given(
    st.lists(
        st.tuples(
            st.integers(1, 30), st.sampled_from(["lexical", "near", "graph"]), st.floats(0, 2)
        ),
        max_size=25,
    ),
    st.integers(0, 6),
)
def test_selection_is_bounded_and_unique(items: list[tuple[int, str, float]], limit: int) -> None:
    cands = [
        Candidate(mem(i, content=f"第{i}条记忆的内容"), stage, score, "")  # type: ignore[arg-type]
        for i, stage, score in items
    ]
    chosen = select(cands, limit, NOW)
    ids = [c.memory.id for c in chosen]
    assert len(ids) <= limit
    assert len(ids) == len(set(ids))
    assert set(ids) <= {i for i, _, _ in items}


def test_pairs_straddling_a_name_are_not_terms() -> None:
    from memory_core.recall.query import name_straddling

    assert name_straddling("老王家大黄还挠沙发吗", ["老王"]) == {"王家"}
    assert "王家" not in analyse("老王家大黄还挠沙发吗", names=["老王"]).terms
    assert "大黄" in analyse("老王家大黄还挠沙发吗", names=["老王"]).terms


def test_a_fact_written_again_and_again_counts_once_in_idf() -> None:
    base = "小明每周六下午去琴行上吉他课"
    docs = [(base, frozenset(bigram_tokens(base)))]
    docs += [(base + tail, frozenset(bigram_tokens(base + tail))) for tail in ("吧", "呢", "啊")]
    docs.append(("小红喜欢吃火锅", frozenset(bigram_tokens("小红喜欢吃火锅"))))
    counts = scoring.restatement_counts(docs, 0.7)
    assert counts["吉他"] == 3
    assert counts["火锅"] == 0
    w = weights("吉他", {"吉他": 4}).without_restatements(counts)
    assert w.df["吉他"] == 1


def test_restatements_are_represented_by_the_first_one() -> None:
    first = mem(1, content="小明每周六下午去琴行上吉他课")
    later = dataclasses.replace(mem(2, content="小明每周六下午去琴行上吉他课吧"), created_at=NOW)
    chosen = select(
        [Candidate(later, "lexical", 0.9, "b"), Candidate(first, "lexical", 0.8, "a")], 5, NOW
    )
    assert [c.memory.id for c in chosen] == [1]
    assert "另有1条" in chosen[0].reason


def test_time_said_relative_to_now_is_question_frame() -> None:
    """Memories carry dates, not "上次" or "这周": such words name nothing the
    question is about, so they neither match nor count against a memory."""
    for word in ("上次", "这周", "后来", "最后", "以后", "那天", "今年"):
        q = analyse(f"小明{word}弹吉他了吗")
        assert word not in q.terms
    w = weights("小明上次弹吉他弹得咋样", {"吉他": 1})
    assert "上次" not in w.unknown_words
    hit = scoring.match(w, 1, frozenset({"吉他", "弹吉"}))
    assert hit is not None
    assert scoring.speaks(hit, w.params)


def test_a_weekday_is_matched_as_content() -> None:
    w = weights("这周六桌游在哪开", {"桌游": 8, "周六": 2})
    assert "周六" in w.known
    hit = scoring.match(w, 1, frozenset({"桌游", "周六", "每周"}))
    assert hit is not None
    assert "周六" in hit.exact


# --- anchors: two things asked about must meet in one memory ---------------------------


def test_a_question_naming_two_known_things_has_two_anchors() -> None:
    w = weights("煤球绝育了没", {"煤球": 5, "绝育": 4})
    assert w.anchors == (frozenset({"煤球"}), frozenset({"绝育"}))
    assert len(weights("十周年聚会在哪", {"周年": 3, "年聚": 2, "聚会": 9}).anchors) == 1


def test_a_memory_covering_one_of_two_anchors_does_not_speak() -> None:
    w = weights("煤球绝育了没", {"煤球": 2, "绝育": 2})
    other_cat = scoring.match(w, 1, frozenset({"奶糖", "绝育"}))
    same_cat_else = scoring.match(w, 2, frozenset({"煤球", "猫粮"}))
    both = scoring.match(w, 3, frozenset({"煤球", "绝育", "医院"}))
    assert other_cat is not None
    assert same_cat_else is not None
    assert both is not None
    assert (other_cat.anchors, same_cat_else.anchors, both.anchors) == (1, 1, 2)
    assert not scoring.speaks(other_cat, w.params)
    assert not scoring.speaks(same_cat_else, w.params)
    assert scoring.speaks(both, w.params)


def test_qualifiers_and_common_topics_are_not_anchors() -> None:
    # a point in the calendar, a quantity, a negation: they qualify what is asked
    assert (
        len(weights("大伟年底回国结婚吗", {"年底": 1, "回国": 2, "国结": 2, "结婚": 2}).anchors)
        == 1
    )
    assert len(weights("在老周家玩一个人多少钱", {"家玩": 1, "个人": 1}).anchors) == 1
    assert len(weights("豆豆肾不好吃处方粮吗", {"不好": 1, "处方": 6}).anchors) == 1
    # a word most memories of the chat use names the chat's topic, not one thing
    common = weights("桌游胜率多少", {"桌游": 40, "胜率": 2}, n=60)
    assert common.anchors == (frozenset({"胜率"}),)


@given(covered=st.sets(st.sampled_from(["煤球", "绝育", "奶糖", "猫粮", "医院"]), min_size=1))
def test_speaking_needs_every_anchor_pair_to_meet(covered: set[str]) -> None:
    w = weights("煤球绝育了没", {"煤球": 2, "绝育": 2, "奶糖": 2, "猫粮": 2, "医院": 2})
    hit = scoring.match(w, 1, frozenset(covered))
    if hit is not None and scoring.speaks(hit, w.params):
        assert {"煤球", "绝育"} <= covered


def test_which_one_slots_count_neither_for_nor_against() -> None:
    q = analyse("大伟在新加坡哪家公司上班", names=["大伟"])
    assert q.picks == frozenset({"公司"})
    w = scoring.Weights(q, {"新加": 2, "加坡": 2, "公司": 1, "上班": 3}, 50, scoring.Params())
    assert "公司" not in w.content
    # "where" and "what kind of" are not "which one"
    assert analyse("莉莉原来在哪上班").picks == frozenset()
    assert analyse("我之前在什么样的公司上班").picks == frozenset()
    assert analyse("可乐吃什么牌子的猫粮").picks == frozenset({"牌子"})


def test_identity_questions_are_only_a_name_and_who_is_that() -> None:
    from memory_core.recall.query import identity_question

    names = ["喵姐", "猫姐", "大肥鱼"]
    assert identity_question("猫姐是干啥的", names)
    assert identity_question("@大肥鱼 喵姐是谁啊？", names)
    assert not identity_question("猫姐自己养了几只猫", names)
    assert not identity_question("是谁", [])
    assert not identity_question("猫姐是不是群主", names)


def test_a_character_standing_alone_between_grammar_is_a_word() -> None:
    from memory_core.recall.query import one_char_words

    assert one_char_words("刘哥现在住哪边") >= {"住"}
    assert "抽" in one_char_words("他现在还抽不抽")
    # inside a word, or next to a content character, a character is no word alone
    assert one_char_words("煤球绝育了没") == frozenset()
    assert one_char_words("现在在哪上班来着") == frozenset()
    assert "住" not in one_char_words("大刘还住在下沙吗")


def test_one_character_words_alone_do_not_speak_when_the_question_says_more() -> None:
    w = scoring.Weights(
        analyse("莉莉换工作了没 现在在哪高就", names=["莉莉"]),
        {"工作": 2, "换工": 1, "高": 3},
        50,
        scoring.Params(),
    )
    assert "高" in w.singles
    lego = scoring.match(w, 1, frozenset({"乐高", "莉莉"}), doc_text="莉莉在家拼乐高")
    assert lego is not None
    assert lego.weak
    assert not scoring.speaks(lego, w.params)


def test_a_dictionary_word_cut_across_a_word_the_chat_uses_is_not_unknown() -> None:
    # 玩一次要交: the chat says 一次, so 次要 is a cut across two words, not a word
    w = weights("现在去玩一次要交多少钱", {"一次": 3})
    assert "次要" not in w.unknown_words
    alone = weights("次要的事", {})
    assert "次要" in alone.unknown_words


def test_a_memory_about_someone_else_fills_but_never_breaks_the_silence() -> None:
    q = analyse(
        "猫姐自己养了几只猫", names=["喵姐", "猫姐", "老王"], groups=[frozenset({"喵姐", "猫姐"})]
    )
    w = scoring.Weights(q, {"只猫": 2, "猫": 5}, 50, scoring.Params())
    other = scoring.match(
        w, 1, frozenset({"只猫", "老王"}), doc_text="老王养了三只猫", stranger=True
    )
    own = scoring.match(w, 2, frozenset({"只猫", "喵姐"}), doc_text="喵姐养了两只猫")
    assert other is not None
    assert own is not None
    assert not scoring.speaks(other, w.params)
    assert scoring.speaks(own, w.params)
