from __future__ import annotations

from memory_core.vectors.text import (
    canonicalise,
    content_terms,
    involves_all,
    memory_text,
    mentioned_subjects,
    particular_things,
    question_shape,
    question_text,
    said_tokens,
    scope_names,
    unheard,
)

NAMES_WITH_XB = scope_names({"阿杰", "小白"}, {"杰哥": "阿杰"})
NAMES = scope_names(
    {"老周", "阿杰", "豆豆妈", "group"}, {"周哥": "老周", "杰哥": "阿杰", "豆妈": "豆豆妈"}
)


def test_aliases_resolve_longest_first() -> None:
    assert canonicalise("周哥和豆妈", NAMES) == "老周和豆豆妈"


def test_special_subjects_are_not_names() -> None:
    assert "group" not in NAMES.all_names
    assert NAMES.all_names.index("豆豆妈") < NAMES.all_names.index("周哥")


def test_mentioned_subjects_through_aliases() -> None:
    assert mentioned_subjects("杰哥跟周哥咋认识的", NAMES) == {"阿杰", "老周"}
    assert mentioned_subjects("今天天气不错", NAMES) == frozenset()


def test_names_are_removed_before_embedding() -> None:
    assert memory_text("老周11月6日晚上儿子出生", NAMES) == "11月6日晚上儿子出生"
    assert question_text("@大肥鱼 周哥家添丁了没", NAMES, ("大肥鱼",)) == "家添丁了没"
    # A text that is only a name is kept rather than emptied.
    assert memory_text("老周", NAMES) == "老周"


def test_content_terms_ignore_names_function_pairs_and_bare_numbers() -> None:
    terms = content_terms("周哥儿子是什么时候出生的 2026 N2", NAMES)
    assert "儿子" in terms
    assert "出生" in terms
    assert "n2" in terms
    assert "什么" not in terms
    assert "2026" not in terms
    assert not any("周" in t for t in terms)


def test_question_shape_intent_and_subject() -> None:
    asks = question_shape("周哥最近还抽不抽", NAMES, private=False)
    assert asks.has_intent
    assert asks.subjects == {"老周"}
    assert question_shape("周哥家添丁了没", NAMES, private=False).has_intent
    assert not question_shape("周哥今天来了", NAMES, private=False).has_intent
    assert question_shape("周哥周末一般干嘛", NAMES, private=False).has_intent
    assert question_shape("周哥家的猫是公是母", NAMES, private=False).has_intent
    assert not question_shape("最近有什么好玩的", NAMES, private=False).has_subject


def test_first_person_is_a_subject_only_in_private_chats() -> None:
    assert question_shape("我哪天出生的你还记得吗", NAMES, private=True).has_subject
    assert not question_shape("我哪天出生的你还记得吗", NAMES, private=False).has_subject


def test_involves_all_reads_subject_and_text_through_aliases() -> None:
    assert involves_all("阿杰", "小白是杰哥公司新来的实习生", {"阿杰", "小白"}, NAMES_WITH_XB)
    assert not involves_all("阿杰", "阿杰生日是9月2日", {"阿杰", "小白"}, NAMES_WITH_XB)


def test_either_or_questions_have_intent() -> None:
    assert question_shape("周哥最后退没退群", NAMES, private=False).has_intent


def test_particular_things_follow_a_possessive_after_a_name() -> None:
    assert particular_things("周哥家大黄还挠沙发吗", NAMES) == {"大黄"}
    assert particular_things("阿杰的车是什么牌子", NAMES) >= {"车"}


def test_a_demonstrative_points_without_naming() -> None:
    assert particular_things("周哥家那只胖家伙瘦了吗", NAMES) == frozenset()
    assert particular_things("周哥最近为啥不来", NAMES) == frozenset()


def test_a_which_one_slot_is_a_particular_thing() -> None:
    assert particular_things("阿杰跳槽去哪家公司了", NAMES) == {"公司"}
    assert particular_things("阿杰上次当的啥角色", NAMES) == {"角色"}


def test_unheard_words_are_those_the_chat_never_used_nor_a_synonym() -> None:
    # 添丁 is never said, but its synonym 出生 is; 大黄 and 角色 never, in any words.
    heard = frozenset({"儿子", "子出", "出生", "猫"})
    assert unheard({"添丁", "大黄", "角色"}, heard) == {"大黄", "角色"}
    # A one-character synonym is heard as that character (主子 -> 猫).
    assert unheard({"主子"}, heard) == frozenset()
    assert {"添丁", "出生", "大黄", "猫"} <= said_tokens({"添丁", "大黄", "主子"})
