from __future__ import annotations

from memory_core.vectors.text import (
    canonicalise,
    content_terms,
    involves_all,
    memory_text,
    mentioned_subjects,
    question_shape,
    question_text,
    scope_names,
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
