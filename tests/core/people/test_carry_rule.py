"""The rule of carrying (memory_core/people/carry.py) over random chats, people,
memberships, choices, blocks, evidence and memories (Hypothesis): every proof of #45
that the rule alone decides, and the defaults."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.people.carry import (
    CarryState,
    carried,
    may_reach,
    member_of,
    names_any,
    own_private,
)
from memory_core.people.subjects import Said, word_of
from memory_core.storage import CarryChoice, Membership
from memory_core.types import Memory, is_group_scope

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
PEOPLE = ("7", "8", "9")
BOT = "999"
GROUPS = ("group:1", "group:2", "group:3", "telegram-group:-100")
CHATS = (*GROUPS, *(f"private:{p}" for p in PEOPLE), "telegram-private:7")
NAMES = {"7": "小明", "8": "阿花", "9": "老王"}


def memory(i: int, scope: str, person: str | None, word: str | None, **kw: Any) -> Memory:
    values: dict[str, Any] = {
        "id": i,
        "scope": scope,
        "type": "fact",
        "subject": NAMES.get(person or "", "群"),
        "content": "下个月搬去成都",
        "importance": 0.5,
        "confidence": 0.9,
        "status": "active",
        "valid_from": NOW - timedelta(days=1),
        "valid_to": None,
        "version": 1,
        "origin": "model",
        "created_at": NOW,
        "updated_at": NOW,
        "last_accessed_at": None,
        "hit_count": 0,
        "pinned": False,
        "starred": False,
        "subject_kind": "person" if person else "group",
        "subject_person": person,
        "word": word,
    }
    values.update(kw)
    return Memory(**values)


@st.composite
def worlds(draw: st.DrawFn) -> tuple[list[tuple[Memory, list[Said]]], dict[str, CarryState]]:
    """Memories with the messages they rest on, and each person's state as read."""
    rows: list[tuple[Memory, list[Said]]] = []
    for i in range(draw(st.integers(0, 12))):
        scope = draw(st.sampled_from(CHATS))
        person = draw(st.sampled_from((*PEOPLE, None)))
        senders = draw(st.lists(st.sampled_from((*PEOPLE, BOT)), min_size=1, max_size=3))
        said = [Said(s, s == BOT, False) for s in senders]
        derived = draw(st.booleans())
        word = word_of(person, said, derived)
        names_other = draw(st.booleans())
        content = "和阿花一起搬去成都" if names_other else "下个月搬去成都"
        rows.append(
            (
                memory(
                    i + 1,
                    scope,
                    person,
                    word,
                    type=draw(st.sampled_from(("fact", "event", "relation", "state"))),
                    status=draw(st.sampled_from(("active", "active", "retracted", "cold"))),
                    valid_to=draw(st.sampled_from((None, NOW - timedelta(hours=1)))),
                    content=content,
                ),
                said if not derived else [*said, Said("derived", False, False)],
            )
        )
    states: dict[str, CarryState] = {}
    for person in PEOPLE:
        chats = draw(st.lists(st.sampled_from(CHATS), unique=True))
        memberships = tuple(
            Membership(
                chat,
                NOW - timedelta(days=1),
                draw(st.sampled_from((None, NOW - timedelta(days=2), NOW))),
            )
            for chat in chats
        )
        others = {g: frozenset(n for p, n in NAMES.items() if p != person) for g in GROUPS}
        states[person] = CarryState(
            platform="qq",
            person=person,
            choice=draw(st.builds(CarryChoice, st.booleans(), st.booleans())),
            memberships=memberships,
            blocked=draw(st.booleans()),
            others=others,
        )
    return rows, states


def everything(
    rows: list[tuple[Memory, list[Said]]], states: dict[str, CarryState], about: frozenset[str]
):
    """(target, person, state, memory, its evidence) for everything carried anywhere."""
    evidence = {m.id: said for m, said in rows}
    for target in CHATS:
        for person, state in states.items():
            for m in carried([m for m, _ in rows], target, about, state, NOW):
                yield target, person, state, m, evidence[m.id]


@settings(max_examples=300, deadline=None)
@given(worlds(), st.sets(st.sampled_from(PEOPLE)))
def test_nothing_travels_that_the_rule_forbids(world: Any, about: set[str]) -> None:
    rows, states = world
    for target, person, state, m, said in everything(rows, states, frozenset(about)):
        # Never from a private chat; never into the chat it was said in.
        assert is_group_scope(m.scope)
        assert m.scope != target
        # Only the person's own words, every piece of evidence theirs (no bot line, no
        # other person's message, nothing derived), never hearsay or a relation.
        assert m.subject_person == person
        assert all(s.sender_id == person and not s.is_bot for s in said)
        assert m.word == "self-only"
        assert m.type != "relation"
        assert "阿花" not in m.content or person == "8"
        # Current only.
        assert m.status == "active"
        assert m.valid_to is None
        # Only for a wake about them, into a chat they are in (not left since).
        assert person in about
        assert member_of(state.memberships or (), target)
        assert state.choice is not None
        if is_group_scope(target):
            assert state.choice.into_groups
            assert not state.blocked
        else:
            assert own_private(target, person, "qq")
            assert state.choice.into_private
        # The same platform only.
        assert not target.startswith("telegram")


@settings(max_examples=200, deadline=None)
@given(worlds())
def test_turning_it_off_or_blocking_carries_nothing_at_the_next_read(world: Any) -> None:
    rows, states = world
    everyone = frozenset(PEOPLE)
    memories = [m for m, _ in rows]
    for person, state in states.items():
        off = replace(state, choice=CarryChoice(False, False))
        blocked = replace(state, blocked=True)
        for target in CHATS:
            assert carried(memories, target, everyone, off, NOW) == ()
            assert carried(memories, target, everyone, blocked, NOW) == ()
        private = replace(state, choice=CarryChoice(False, True))
        for target in CHATS:
            if not is_group_scope(target):
                assert carried(memories, target, everyone, private, NOW) == ()
        assert person in everyone


@settings(max_examples=200, deadline=None)
@given(worlds(), st.sampled_from(("choice", "memberships", "blocked", "others")))
def test_any_unknown_state_carries_nothing(world: Any, unknown: str) -> None:
    rows, states = world
    memories = [m for m, _ in rows]
    for state in states.values():
        blind = replace(state, **{unknown: None})
        for target in CHATS:
            assert carried(memories, target, frozenset(PEOPLE), blind, NOW) == ()


def test_a_member_s_own_words_reach_their_private_chat_by_default_and_groups_when_asked() -> None:
    said = memory(1, "group:1", "7", "self-only")
    member = (
        Membership("group:1", NOW),
        Membership("group:2", NOW),
        Membership("private:7", NOW),
        Membership("group:3", NOW - timedelta(days=2), NOW - timedelta(days=1)),  # left
    )
    state = CarryState("qq", "7", CarryChoice(), member, False, {"group:1": frozenset({"阿花"})})
    me = frozenset({"7"})
    assert carried([said], "private:7", me, state, NOW) == (said,)
    assert carried([said], "group:2", me, state, NOW) == ()  # groups off by default
    groups_on = replace(state, choice=CarryChoice(True, True))
    assert carried([said], "group:2", me, groups_on, NOW) == (said,)
    assert carried([said], "group:3", me, groups_on, NOW) == ()  # seen leaving
    assert carried([said], "group:1", me, groups_on, NOW) == ()  # where it was said
    assert carried([said], "group:2", frozenset({"8"}), groups_on, NOW) == ()  # not about them
    assert not may_reach("private:8", groups_on, me)  # someone else's private chat
    hearsay = memory(2, "group:1", "7", "hearsay")
    private = memory(3, "private:7", "7", "self-only")
    assert carried([hearsay, private], "group:2", me, groups_on, NOW) == ()


def test_a_name_inside_the_subject_s_own_is_not_another_member() -> None:
    assert not names_any("小明明下个月搬去成都", {"小明"}, {"小明明"})
    assert names_any("小明明和小明下个月搬去成都", {"小明"}, {"小明明"})
    assert names_any("小明明下个月搬去成都", {"小明"})  # own names unknown: fail closed
    assert not names_any("阿花的猫叫煤球", {"花"})  # one character is no name to look for
