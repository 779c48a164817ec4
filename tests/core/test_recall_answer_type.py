"""Answer-type compatibility (recall/answer_type.py): a quantity question needs a
number of a compatible unit, a date is never a quantity, "多久" needs a duration."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memory_core.recall.answer_type import (
    UNIT_FAMILIES,
    Asked,
    Wants,
    asked,
    can_answer,
    states_quantity,
)
from memory_core.recall.lexicon import lexicon, synonym_files

CN_DIGITS = "一二三四五六七八九十"
units = st.sampled_from(sorted({u for family in UNIT_FAMILIES for u in family if u != "%"}))
months = st.integers(min_value=1, max_value=12)
days = st.integers(min_value=1, max_value=28)


def test_the_unit_a_question_names() -> None:
    assert asked("虎子科目一考了多少分") == Asked(Wants.COUNT, "分")
    assert asked("团子一天吃多少克粮") == Asked(Wants.COUNT, "克")
    assert asked("大黄几岁了") == Asked(Wants.COUNT, "岁")
    assert asked("现在打到第几关了") == Asked(Wants.COUNT, "关")
    assert asked("玩卡坦岛胜率多少") == Asked(Wants.COUNT, "%")
    assert asked("有多少同学报了名") == Asked(Wants.COUNT, "")
    assert asked("多久驱一次虫").kind is Wants.DURATION
    assert asked("住院住了几天").kind is Wants.DURATION
    assert asked("几点开始").kind is Wants.TIME
    assert asked("那本书多少钱").kind is Wants.MONEY


def test_a_number_of_another_kind_does_not_answer() -> None:
    score = asked("考了多少分")
    assert not can_answer(score, "胖虎在复习科目一，准备下个月考驾照")
    assert can_answer(score, "日语N2模拟考考了105分")
    grams = asked("一天吃多少克")
    assert not can_answer(grams, "11月10日提醒小鹿给团子买驱虫药")
    assert can_answer(grams, "煤球每天吃80克猫粮")
    assert can_answer(grams, "出生时七斤二两")  # a weight in another unit
    age = asked("几岁了")
    assert not can_answer(age, "买了三个猫抓板都不用")
    assert can_answer(age, "团子是两岁的英短")


def test_a_date_is_not_a_quantity_nor_a_duration() -> None:
    count = asked("有多少人报名")
    assert not can_answer(count, "12月19日周六聚会")
    assert can_answer(count, "聚会报名目前确认14人")
    assert not states_quantity("首付还差一点")
    how_long = asked("多久驱一次虫")
    assert not can_answer(how_long, "11月10日给团子买了驱虫药")
    assert can_answer(how_long, "每三个月驱一次虫")
    assert can_answer(how_long, "已经坚持一个月")


def test_english_counts_keep_the_plain_number_rule() -> None:
    assert can_answer(asked("how many kids does she have"), "She has two kids")
    assert can_answer(asked("how many times did they meet"), "They met on 7 May 2023")


@given(unit=units, n=st.integers(min_value=1, max_value=999))
def test_a_number_of_the_asked_unit_always_answers(unit: str, n: int) -> None:
    assert can_answer(Asked(Wants.COUNT, unit), f"记得是{n}{unit}左右")


@given(unit=units, month=months, day=days, cn=st.booleans())
def test_a_date_alone_never_answers_a_quantity(unit: str, month: int, day: int, cn: bool) -> None:
    date = f"{CN_DIGITS[month - 1] if cn and month <= 10 else month}月{day}日"
    text = f"{date}提醒小鹿去宠物店"
    assert not can_answer(Asked(Wants.COUNT, unit), text)
    assert not can_answer(Asked(Wants.COUNT), text)
    assert not can_answer(Asked(Wants.DURATION), text)
    assert can_answer(Asked(Wants.DATE), text)


def test_every_synonym_table_of_data_is_loaded() -> None:
    files = synonym_files()
    assert "synonyms.txt" in files
    assert all(name.startswith("synonyms") and name.endswith(".txt") for name in files)
    assert "男友" in lexicon().expansions["男朋友"]


def test_english_durations_accept_any_number_or_date() -> None:
    assert can_answer(asked("how long has she been painting"), "She started painting in 2019")
    assert can_answer(asked("how often does he run"), "He runs three times a week")
    assert not can_answer(asked("how long has she been painting"), "She loves painting")


def test_what_o_clock_needs_a_clock_time_not_a_part_of_the_day() -> None:
    ask = asked("那家店晚上几点关门")
    assert ask == Asked(Wants.TIME, "点")
    assert not can_answer(ask, "那家店每周六下午开门")
    assert not can_answer(ask, "他有一点儿累")
    assert can_answer(ask, "那家店晚上十点关门")
    assert can_answer(ask, "那家店22:30关门")
    assert can_answer(ask, "提醒改到每晚九点半")
    # "什么时间" may be answered by a part of the day
    assert can_answer(asked("什么时间去遛狗"), "每天下午去遛狗")


@given(st.integers(min_value=0, max_value=23), st.integers(min_value=0, max_value=59))
def test_any_written_clock_time_answers_what_o_clock(hour: int, minute: int) -> None:
    ask = asked("几点出门")
    assert can_answer(ask, f"每天{hour}点出门")
    assert can_answer(ask, f"每天{hour:02d}:{minute:02d}出门")
