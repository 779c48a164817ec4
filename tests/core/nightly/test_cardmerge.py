from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from memory_core.nightly.cardmerge import check_cards_reply, content_of, lines_of, merge
from memory_core.prompts.nightly import CardChange, CardsReply


def change(**fields: Any) -> CardChange:
    return CardChange.model_validate(fields)


CURRENT = {
    "preferences": ("喜欢清淡口味", "周末爱睡懒觉"),
    "goals": ("年底前跑一次半马",),
}


def test_add_appends_and_leaves_other_lines() -> None:
    merged = merge(CURRENT, [change(kind="goals", action="add", text="学会做饭")])
    assert merged.cards["goals"] == ("年底前跑一次半马", "学会做饭")
    assert merged.cards["preferences"] == CURRENT["preferences"]
    assert merged.changed == {"goals"}
    assert merged.displaced == ()


def test_conflict_on_preferences_displaces_the_old_line_in_past_tense() -> None:
    merged = merge(
        CURRENT,
        [
            change(
                kind="preferences",
                action="conflict",
                text="最近改吃辣了",
                replaces="喜欢清淡口味",
                old_past_tense="以前喜欢清淡口味",
            )
        ],
    )
    assert merged.cards["preferences"] == ("最近改吃辣了", "周末爱睡懒觉")
    assert [(d.kind, d.old_line, d.past_tense) for d in merged.displaced] == [
        ("preferences", "喜欢清淡口味", "以前喜欢清淡口味")
    ]


def test_change_of_another_card_replaces_without_displacing() -> None:
    merged = merge(
        CURRENT,
        [
            change(
                kind="goals", action="change", text="年底前跑一次全马", replaces="年底前跑一次半马"
            )
        ],
    )
    assert merged.cards["goals"] == ("年底前跑一次全马",)
    assert merged.displaced == ()


def test_unknown_replaces_degrades_to_an_add() -> None:
    merged = merge(
        CURRENT,
        [change(kind="goals", action="change", text="考驾照", replaces="一行不存在的")],
    )
    assert merged.cards["goals"] == ("年底前跑一次半马", "考驾照")


def test_repeats_are_ignored() -> None:
    merged = merge(CURRENT, [change(kind="preferences", action="add", text="喜欢清淡口味。")])
    assert merged.changed == frozenset()
    assert merged.ignored == ("preferences: 喜欢清淡口味。",)


def test_check_requires_past_tense_when_replacing_status_or_preferences() -> None:
    bad = CardsReply(
        changes=[change(kind="preferences", action="change", text="吃辣", replaces="喜欢清淡口味")]
    )
    assert check_cards_reply(bad, CURRENT) is not None
    fine = CardsReply(
        changes=[change(kind="goals", action="change", text="全马", replaces="年底前跑一次半马")]
    )
    assert check_cards_reply(fine, CURRENT) is None


def test_lines_round_trip_and_bullets_are_tolerated() -> None:
    assert lines_of("- 喜欢猫\n\n  - 讨厌香菜 \n") == ("喜欢猫", "讨厌香菜")
    assert lines_of(content_of(("a", "b"))) == ("a", "b")


KINDS = st.sampled_from(["preferences", "recent_status", "goals"])
LINE = st.text(alphabet="甲乙丙丁戊己", min_size=1, max_size=4)


@st.composite
def changes(draw: st.DrawFn) -> tuple[dict[str, tuple[str, ...]], list[CardChange]]:
    current = {
        kind: tuple(dict.fromkeys(draw(st.lists(LINE, max_size=5))))
        for kind in draw(st.sets(KINDS))
    }
    items: list[CardChange] = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(KINDS)
        existing = current.get(kind, ())
        replaces = draw(st.sampled_from(existing)) if existing and draw(st.booleans()) else None
        items.append(
            change(
                kind=kind,
                action=draw(st.sampled_from(["add", "change", "conflict"])),
                text=draw(LINE),
                replaces=replaces,
                old_past_tense="以前" + replaces if replaces else None,
            )
        )
    return current, items


@given(case=changes())
def test_merge_only_loses_lines_it_displaced_or_replaced(
    case: tuple[dict[str, tuple[str, ...]], list[CardChange]],
) -> None:
    current, items = case
    merged = merge(current, items)
    for kind, lines in current.items():
        replaced = {c.replaces for c in items if c.kind == kind and c.action != "add"}
        for line in lines:
            assert line in merged.cards[kind] or line in replaced
    for lines in merged.cards.values():
        assert len(set(lines)) == len(lines)
    for d in merged.displaced:
        assert d.kind in ("preferences", "recent_status")
        assert d.old_line in current[d.kind]
    for kind in merged.changed:
        assert merged.cards[kind] != current.get(kind, ())
