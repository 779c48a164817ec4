"""Archived messages -> persons and names (memory_core/people/observe.py): what a
message shows, and that the merge is order-free, so the index the writer fills batch
by batch is the one a rebuild makes in other batches."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from memory_core.people.names import normalised_name
from memory_core.people.observe import Seen, merge_name, merge_person, observe
from memory_core.storage import Heard, NameSeen, PersonSeen

T0 = datetime(2026, 11, 20, 12, tzinfo=UTC)


def heard(
    scope: str = "group:1",
    sender_id: str = "7",
    sender_name: str = "小明",
    *,
    id_: int = 1,
    is_bot: bool = False,
    segments: Sequence[dict[str, Any]] = (),
    at: datetime = T0,
    account: str | None = None,
) -> Heard:
    return Heard(id_, scope, sender_id, sender_name, is_bot, list(segments), at, account)


def at(qq: object, name: object = None) -> dict[str, Any]:
    data: dict[str, Any] = {"qq": qq}
    if name is not None:
        data["name"] = name
    return {"type": "at", "data": data}


def names(seen: Seen) -> set[tuple[str, str, str, str]]:
    return {(n.user_id, n.scope, n.name, n.source) for n in seen.names}


def test_a_qq_group_shows_the_senders_card_and_a_private_chat_their_nickname() -> None:
    seen = observe(
        [
            heard("group:1", "7", "小明"),
            heard("private:7", "7", "明明"),
            heard("telegram-group:-100", "5", "Alice B"),
        ]
    )
    assert names(seen) == {
        ("7", "group:1", "小明", "card"),
        ("7", "private:7", "明明", "nickname"),
        ("5", "telegram-group:-100", "Alice B", "nickname"),
    }
    assert {(p.platform, p.user_id) for p in seen.persons} == {
        ("qq", "7"),
        ("telegram", "5"),
    }


def test_a_mention_records_the_id_and_the_name_it_showed() -> None:
    seen = observe(
        [heard(segments=[at("8", "@阿花"), at(9), at("all", "全体成员"), at("10", "10")])]
    )
    assert {p.user_id for p in seen.persons} == {"7", "8", "9", "10"}
    assert names(seen) == {("7", "group:1", "小明", "card"), ("8", "group:1", "阿花", "mention")}


def test_the_bot_is_its_own_messages_sender_and_every_account_that_heard() -> None:
    seen = observe(
        [
            heard(sender_id="999", sender_name="大肥鱼", is_bot=True, account="999"),
            heard(id_=2, account="998", segments=[at("998", "鱼")]),
        ]
    )
    bots = {p.user_id for p in seen.persons if p.is_bot}
    assert bots == {"999", "998"}
    assert ("998", "group:1", "鱼", "mention") in names(seen)


def test_no_name_from_blanks_ids_or_importers() -> None:
    seen = observe(
        [
            heard(sender_name="   "),
            heard(sender_id="import:facts", sender_name="导入"),
            heard(sender_id="someone@example.com", sender_name="老王"),
            heard(sender_name="x" * 200),
        ]
    )
    assert names(seen) == {("someone@example.com", "group:1", "老王", "card")}


def test_a_rename_is_a_second_name_and_spellings_of_one_name_are_one() -> None:
    seen = observe(
        [
            heard(sender_name="Alice", at=T0),
            heard(sender_name="ＡＬＩＣＥ", at=T0 + timedelta(hours=1)),
            heard(sender_name="鱼丸", at=T0 + timedelta(hours=2)),
        ]
    )
    by_name = {n.normalised: n for n in seen.names}
    assert set(by_name) == {"alice", "鱼丸"}
    assert by_name["alice"].name == "ＡＬＩＣＥ"  # the spelling seen last
    assert (by_name["alice"].first_seen, by_name["alice"].last_seen) == (
        T0,
        T0 + timedelta(hours=1),
    )


# --- properties ----------------------------------------------------------------------

SCOPES = ("group:1", "group:2", "private:7", "telegram-group:-100")
IDS = ("7", "8", "9", "-5", "a@qq.com", "import:facts", "")
NAMES = ("Alice", "alice", "ＡＬＩＣＥ", " alice ", "@Alice", "小明", "鱼丸", "", "7")
INSTANTS = tuple(T0 + timedelta(minutes=m) for m in (0, 0, 1, 5))

segments = st.lists(
    st.builds(
        at,
        st.sampled_from(("7", "8", "all", 9, True, "x y")),
        st.one_of(st.none(), st.sampled_from(NAMES), st.integers()),
    )
    | st.just({"type": "text", "data": {"text": "hi"}})
    | st.just({"type": "at", "data": "broken"}),
    max_size=3,
)
messages = st.lists(
    st.builds(
        heard,
        st.sampled_from(SCOPES),
        st.sampled_from(IDS),
        st.sampled_from(NAMES),
        is_bot=st.booleans(),
        segments=segments,
        at=st.sampled_from(INSTANTS),
        account=st.sampled_from((None, "999", "7")),
    ),
    max_size=12,
)


def stored(batches: Iterable[Seen]) -> tuple[set[PersonSeen], set[NameSeen]]:
    """What the index holds after these batches (the merge the upserts do in SQL)."""
    people: dict[tuple[str, str], PersonSeen] = {}
    named: dict[tuple[str, ...], NameSeen] = {}
    for seen in batches:
        for p in seen.persons:
            key = (p.platform, p.user_id)
            people[key] = merge_person(people[key], p) if key in people else p
        for n in seen.names:
            nkey = (n.platform, n.user_id, n.scope, n.normalised, n.source)
            named[nkey] = merge_name(named[nkey], n) if nkey in named else n
    return set(people.values()), set(named.values())


@given(messages, st.randoms(use_true_random=False), st.integers(1, 5))
def test_any_order_and_any_batching_give_the_same_index(
    heard_: list[Heard], rng: Any, size: int
) -> None:
    shuffled = list(heard_)
    rng.shuffle(shuffled)
    batches = [observe(shuffled[i : i + size]) for i in range(0, len(shuffled), size)]
    assert stored(batches) == stored([observe(heard_)])


@given(messages)
def test_each_key_once_and_every_sighting_is_of_a_message(heard_: list[Heard]) -> None:
    seen = observe(heard_)
    person_keys = [(p.platform, p.user_id) for p in seen.persons]
    assert len(person_keys) == len(set(person_keys))
    name_keys = [(n.platform, n.user_id, n.scope, n.normalised, n.source) for n in seen.names]
    assert len(name_keys) == len(set(name_keys))
    instants = {h.sent_at for h in heard_}
    scopes = {h.scope for h in heard_}
    for p in seen.persons:
        assert p.first_seen <= p.last_seen
        assert {p.first_seen, p.last_seen} <= instants
    for n in seen.names:
        assert (n.platform, n.user_id) in person_keys  # a name always has its person
        assert n.scope in scopes
        assert n.normalised == normalised_name(n.name) != ""
        assert n.first_seen <= n.last_seen


@given(messages)
def test_nothing_crosses_chats(heard_: list[Heard]) -> None:
    """A chat's names come from that chat's messages alone."""
    whole = observe(heard_)
    for scope in SCOPES:
        alone = observe([h for h in heard_ if h.scope == scope])
        assert {n for n in whole.names if n.scope == scope} == set(alone.names)


@given(messages)
def test_the_bot_is_marked_exactly_where_the_archive_says(heard_: list[Heard]) -> None:
    seen = observe(heard_)
    expected = {h.account for h in heard_ if h.account} | {
        h.sender_id for h in heard_ if h.is_bot and h.sender_id not in ("", "import:facts")
    }
    assert {p.user_id for p in seen.persons if p.is_bot} == expected
