"""The aliases table folded onto a chat's persons (memory_core/people/aliases.py)."""

from __future__ import annotations

from datetime import UTC, datetime

from memory_core.people.aliases import fold_aliases
from memory_core.storage import AliasRow, ChatPerson, Person, PersonName
from memory_core.types import NameSource

T0 = datetime(2026, 11, 20, tzinfo=UTC)


def person(id_: int, user_id: str, *named: tuple[str, NameSource]) -> ChatPerson:
    return ChatPerson(
        Person(id_, "qq", user_id, False, T0, T0),
        tuple(PersonName(id_, "group:1", n, n.lower(), s, T0, T0) for n, s in named),
    )


CHAT = {
    "group:1": [
        person(1, "7", ("小明", "card")),
        person(2, "8", ("阿花", "card"), ("花花", "mention")),
        person(3, "9", ("阿花", "mention")),
    ]
}


def folded(*rows: tuple[str, str, str]) -> set[tuple[str, str, str]]:
    seen = fold_aliases([AliasRow(s, a, c, T0) for s, a, c in rows], CHAT)
    assert all(n.source == "alias" and n.first_seen == T0 for n in seen.names)
    return {(n.user_id, n.scope, n.name) for n in seen.names}


def test_an_alias_of_one_persons_name_or_id_is_theirs() -> None:
    assert folded(("group:1", "明仔", "小明"), ("group:1", "七号", "7")) == {
        ("7", "group:1", "明仔"),
        ("7", "group:1", "七号"),
    }


def test_a_chain_is_followed_to_its_canonical_name() -> None:
    assert folded(("group:1", "仔仔", "明仔"), ("group:1", "明仔", "小明")) == {
        ("7", "group:1", "仔仔"),
        ("7", "group:1", "明仔"),
    }


def test_a_name_two_answer_to_or_none_or_another_chat_folds_nowhere() -> None:
    assert folded(
        ("group:1", "花", "阿花"), ("group:1", "谁", "没人"), ("group:2", "明", "小明")
    ) == (set())
