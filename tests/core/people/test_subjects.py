"""Whom a memory is about and whose word it is, read against one chat's persons
(memory_core/people/subjects.py, pure): each awkward case has one outcome, and no
subject ever leads to a person of another chat (a Hypothesis property)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.people.names import normalised_name
from memory_core.people.subjects import Said, Subject, resolve, word_of
from memory_core.storage import ChatPerson, Person, PersonName
from memory_core.types import NameSource

T0 = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)
HERE, THERE = "group:1", "group:2"
BOT_NAMES = ("大肥鱼",)


def member(
    user_id: str,
    *names: str,
    scope: str = HERE,
    is_bot: bool = False,
    source: NameSource = "card",
) -> ChatPerson:
    """A member of `scope` with `names`, the first the one they go by now (each name
    seen a day after the next)."""
    person = Person(int(user_id), "qq", user_id, is_bot, T0, T0 + timedelta(days=len(names)))
    when = [T0 + timedelta(days=len(names) - i) for i in range(len(names))]
    return ChatPerson(
        person,
        tuple(
            PersonName(person.id, scope, n, normalised_name(n), source, at, at)
            for n, at in zip(names, when, strict=True)
        ),
    )


MING = member("7", "小明")
HUA = member("8", "阿花", "花花")
FISH = member("999", "大肥鱼", is_bot=True)
CHAT = [MING, HUA, FISH]


def person(user_id: str) -> Subject:
    return Subject("person", user_id)


# --- someone outside the chat -------------------------------------------------------


def test_an_id_of_no_one_here_is_unresolved_never_that_person() -> None:
    assert resolve("小红", CHAT, subject_id="9") == Subject("unresolved")
    assert resolve("12345678", CHAT) == Subject("unresolved")
    assert resolve("@12345678", CHAT) == Subject("unresolved")
    # the same ids of members of this chat are those members
    assert resolve("小红", CHAT, subject_id="7") == person("7")
    assert resolve("7", CHAT) == person("7")
    assert resolve("@7", CHAT) == person("7")


def test_a_name_only_someone_of_another_chat_goes_by_is_unresolved() -> None:
    assert resolve("小红", CHAT) == Subject("thing")
    assert resolve("小红", CHAT, elsewhere={"小红"}) == Subject("unresolved")
    assert resolve("＠小红 ", CHAT, elsewhere={"小红"}) == Subject("unresolved")
    # a name someone here goes by is theirs, whoever goes by it elsewhere
    assert resolve("小明", CHAT, elsewhere={"小明"}) == person("7")


def test_a_member_of_another_chat_is_no_member_here() -> None:
    there = [member("9", "小红", scope=THERE)]
    assert resolve("小红", there) == person("9")  # in their own chat
    # the persons passed are the chat's: whoever is not among them is never returned
    assert resolve("小红", CHAT, subject_id="9") == Subject("unresolved")


# --- names shared, changed, kept ----------------------------------------------------


def test_a_shared_name_is_whoever_goes_by_it_now_if_only_one_does() -> None:
    renamed = member("7", "鱼丸", "小明")  # went by 小明, goes by 鱼丸 now
    newcomer = member("8", "小明")
    assert resolve("小明", [renamed, newcomer]) == person("8")
    assert resolve("鱼丸", [renamed, newcomer]) == person("7")


def test_a_name_two_members_go_by_now_or_neither_does_is_unresolved() -> None:
    both_now = [member("7", "小明"), member("8", "小明", "阿八")]
    assert resolve("小明", both_now) == Subject("unresolved")
    neither_now = [member("7", "鱼丸", "小明"), member("8", "阿八", "小明")]
    assert resolve("小明", neither_now) == Subject("unresolved")
    # an alias leading to one of them settles it
    assert resolve("明哥", neither_now, canonical="鱼丸") == person("7")


def test_a_renamed_member_still_answers_to_the_old_name() -> None:
    renamed = member("7", "鱼丸", "小明")
    assert resolve("小明", [renamed, HUA]) == person("7")
    assert resolve("花花", [renamed, HUA]) == person("8")  # an older name of 阿花


def test_names_match_in_any_spelling() -> None:
    alice = member("7", "Alice")
    for spelling in ("alice", "ＡＬＩＣＥ", " @Alice ", "@alice"):
        assert resolve(spelling, [alice]) == person("7")


# --- the bot, the chat, things ------------------------------------------------------


def test_the_bot_by_nickname_at_account_or_word() -> None:
    for subject in ("大肥鱼", "@大肥鱼", "机器人", "bot", "你"):
        assert resolve(subject, CHAT, bot_names=BOT_NAMES).kind == "bot", subject
    # its account, seen as the bot in the index, by id or @id
    assert resolve("@999", CHAT) == Subject("bot", "999")
    assert resolve("x", CHAT, subject_id="999") == Subject("bot", "999")
    # a nickname the settings give, though the index never saw the bot speak
    assert resolve("鱼鱼", [MING], bot_names=("鱼鱼",)) == Subject("bot")
    assert resolve("x", CHAT, kind="bot") == Subject("bot")


def test_the_group_by_any_of_its_words() -> None:
    for subject in ("group", "Group", "大家", "群友们", "本群", "所有人", "everyone"):
        assert resolve(subject, CHAT) == Subject("group"), subject
    assert resolve("这周末", CHAT, kind="group") == Subject("group")


def test_a_named_thing_is_a_thing_unless_the_writer_said_member() -> None:
    assert resolve("煤球", CHAT) == Subject("thing")  # 小明's cat
    assert resolve("原神", CHAT) == Subject("thing")
    assert resolve("煤球", CHAT, kind="person") == Subject("unresolved")
    assert resolve("煤球", CHAT, kind="thing") == Subject("thing")


# --- whose word ---------------------------------------------------------------------


def test_word_of_self_self_only_and_hearsay() -> None:
    own, other = Said("7"), Said("8")
    assert word_of("7", [own, own], derived=False) == "self-only"
    assert word_of("7", [own, other], derived=False) == "self"
    assert word_of("7", [other], derived=False) == "hearsay"
    assert word_of("7", [], derived=True) == "hearsay"
    assert word_of(None, [own], derived=False) is None


def test_bot_lines_and_replies_to_the_bot_count_for_no_one() -> None:
    # what the bot said (even under the member's id) and the member's answer to a bot
    # message are not the member's own word
    assert word_of("7", [Said("7", is_bot=True)], derived=False) == "hearsay"
    assert word_of("7", [Said("7", quotes_bot=True)], derived=False) == "hearsay"
    assert word_of("7", [Said("7"), Said("7", quotes_bot=True)], derived=False) == "self"
    assert word_of("7", [Said("7"), Said("999", is_bot=True)], derived=False) == "self"


def test_derived_evidence_is_never_self_only() -> None:
    assert word_of("7", [Said("7")], derived=True) == "self"
    assert word_of("7", [Said("7")], derived=False) == "self-only"


# --- nothing crosses a chat (property) ----------------------------------------------

NAMES = ("小明", "阿花", "鱼丸", "Alice", "alice", "煤球", "大家", "大肥鱼", "路人", "7")
IDS = ("7", "8", "9", "10", "11")
SCOPES = (HERE, THERE, "private:7")

memberships = st.lists(
    st.tuples(
        st.sampled_from(IDS),
        st.sampled_from(SCOPES),
        st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True),
        st.booleans(),
    ),
    max_size=8,
)
subjects = st.one_of(
    st.sampled_from(NAMES),
    st.sampled_from(IDS).map(lambda i: f"@{i}"),
    st.sampled_from(IDS),
    st.text(max_size=6),
)


def chats(rows: Sequence[tuple[str, str, list[str], bool]]) -> dict[str, list[ChatPerson]]:
    """Each chat's persons: a user id once per chat (its names there, latest first)."""
    found: dict[str, dict[str, ChatPerson]] = {s: {} for s in SCOPES}
    for user_id, scope, names, is_bot in rows:
        found[scope].setdefault(user_id, member(user_id, *names, scope=scope, is_bot=is_bot))
    return {scope: list(people.values()) for scope, people in found.items()}


@settings(max_examples=400, deadline=None)
@given(
    rows=memberships,
    subject=subjects,
    subject_id=st.one_of(st.none(), st.sampled_from(IDS)),
    kind=st.sampled_from((None, "person", "thing", "group", "bot")),
    elsewhere=st.sets(st.sampled_from(NAMES).map(normalised_name)),
)
def test_resolve_never_names_anyone_outside_the_chat(
    rows: list[tuple[str, str, list[str], bool]],
    subject: str,
    subject_id: str | None,
    kind: str | None,
    elsewhere: set[str],
) -> None:
    for scope, people in chats(rows).items():
        found = resolve(
            subject,
            people,
            subject_id=subject_id,
            kind=kind,
            bot_names=BOT_NAMES,
            elsewhere=elsewhere,
        )
        if found.person is None:
            continue
        [who] = [p for p in people if p.person.user_id == found.person]
        assert all(n.scope == scope for n in who.names)
        # and it is someone the subject names: by the id given, or written, or a name
        # they went by here
        named = {normalised_name(subject), subject.strip().lstrip("@").strip()}
        assert found.person == subject_id or (
            subject_id is None
            and (found.person in named or named & {n.normalised for n in who.names})
        )
        assert found.kind == ("bot" if who.person.is_bot else "person")
