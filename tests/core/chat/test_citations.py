from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memory_core.chat.citations import MARKER_EXAMPLE, marker, strip_citations


def test_marker_syntax_is_the_one_the_prompt_teaches() -> None:
    assert marker(12) == MARKER_EXAMPLE == "[[m:12]]"


def test_markers_are_removed_and_injected_ids_credited_once_in_order() -> None:
    cited = strip_citations("记得呀，你上次说过 [[m:7]][[m:3]][[m:7]]", [3, 7, 9])
    assert cited.text == "记得呀，你上次说过"
    assert cited.used_ids == (7, 3)


def test_ids_not_injected_this_turn_are_stripped_but_not_credited() -> None:
    cited = strip_citations("对的[[m:4]][[m:999]]", [4])
    assert cited.text == "对的"
    assert cited.used_ids == (4,)


def test_drifted_marker_forms_are_stripped_too() -> None:
    text = "好嘞【记忆#5】 还有 [mem: 6] 和 ［m：8］ 以及 [[m:9, 10]] ⟦m:11⟧"
    cited = strip_citations(text, [5, 6, 8, 9, 10, 11])
    assert cited.text == "好嘞 还有 和 以及"
    assert cited.used_ids == (5, 6, 8, 9, 10, 11)


def test_ordinary_brackets_survive() -> None:
    cited = strip_citations("看第[1]条，还有[Mario 3]和【重要】", [1, 3])
    assert cited.text == "看第[1]条，还有[Mario 3]和【重要】"
    assert cited.used_ids == ()


@given(st.text(), st.lists(st.integers(min_value=1, max_value=10_000), max_size=5))
def test_no_canonical_marker_ever_survives(text: str, ids: list[int]) -> None:
    with_markers = text + "".join(marker(i) for i in ids)
    cleaned = strip_citations(with_markers, ids)
    for memory_id in ids:
        assert marker(memory_id) not in cleaned.text
    assert set(cleaned.used_ids) == set(ids)


def test_markers_that_borrow_the_prompt_hash_or_drop_the_tag_are_stripped() -> None:
    # The prompt lists memories as "#12〔…〕", so models write "[[m:#12]]" or "[[#12, #7]]";
    # some drop the tag altogether inside the double brackets.
    text = "记得[[m:#12]] 还有[[m: #7]]、[[m:3,#4]]、[[#5, #6]] 和 [[8]]【【9，10】】"
    cited = strip_citations(text, [3, 4, 5, 6, 7, 8, 9, 10, 12])
    assert cited.text == "记得 还有、、 和"
    assert cited.used_ids == (12, 7, 3, 4, 5, 6, 8, 9, 10)
    for leftover in ("m:", "#", "[[", "【【"):
        assert leftover not in cited.text


def test_single_bracketed_numbers_stay_text() -> None:
    cited = strip_citations("第[3]名，编号#12，比分[1, 2]", [3, 12, 1, 2])
    assert cited.text == "第[3]名，编号#12，比分[1, 2]"
    assert cited.used_ids == ()
