"""What counts as a name and the one spelling names are matched by
(memory_core/people/names.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memory_core.people.names import MAX_NAME_CHARS, clean_name, normalised_name


def test_width_case_spaces_and_a_leading_at_are_one_name() -> None:
    assert {normalised_name(n) for n in ("Alice  B", "ａｌｉｃｅ b", " @ALICE B ")} == {"alice b"}
    assert normalised_name("小明") == "小明"


def test_what_is_no_name() -> None:
    assert [clean_name(n) for n in ("", "  ", "@", 7, None, "x" * (MAX_NAME_CHARS + 1))] == [
        None
    ] * 6
    assert clean_name(" @阿花 ") == "阿花"


@given(st.text(max_size=40))
def test_normalising_twice_changes_nothing(name: str) -> None:
    once = normalised_name(name)
    assert normalised_name(once) == once
    assert once == once.strip()


@given(st.text(max_size=40))
def test_a_clean_name_is_a_name(name: str) -> None:
    written = clean_name(name)
    if written is not None:
        assert clean_name(written) == written
        assert normalised_name(written) == normalised_name(name)
        assert 0 < len(written) <= MAX_NAME_CHARS
