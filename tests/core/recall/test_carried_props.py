"""Carrying through the real store and recall, over random chats, people, who spoke
where, whose evidence, relations, retractions, choices and blocks (Hypothesis): every
memory recall gives a wake from another chat is carried as the rule allows, checked
against what the example wrote (never the engine's own reading): said in a group, in
the words of the person asking about themselves alone, into a chat they spoke in, their
own private chat unless off, a group only when on and not refusing; never `sure`."""

from __future__ import annotations

import itertools
from datetime import timedelta

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from memory_core import EvidenceRef, NewExperience, Yuji
from memory_core.types import Asker, is_group_scope

NAMES = ("小明", "阿花", "老王")
ASKED = "我搬家是哪天来着"
_example = itertools.count(1)
_fp = itertools.count(1)

PROPS = settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
who = st.integers(0, 2)
chat = st.integers(0, 4)  # three groups, then the private chats of persons 0 and 1


OWN = (0, 0, [0], "event", False)
"""Person 0's own words in the first group."""


@PROPS
# The cases the rule is about, each tried every run besides the random ones: his own
# words into his private chat (on by default), into a group he opted into, one that
# refuses; hearsay, mixed evidence, a relation, his private chat's words asked in a group.
@example(spoke=[(3, 0)], memories=[OWN], choices=[], blocks=set())
@example(spoke=[(1, 0)], memories=[OWN], choices=[(0, True, True)], blocks=set())
@example(spoke=[(1, 0)], memories=[OWN], choices=[(0, True, True)], blocks={1})
@example(spoke=[(3, 0)], memories=[OWN], choices=[(0, False, True)], blocks=set())
@example(spoke=[(3, 0), (0, 0)], memories=[(0, 0, [1], "event", False)], choices=[], blocks=set())
@example(spoke=[(3, 0)], memories=[(0, 0, [0, 1], "event", False)], choices=[], blocks=set())
@example(spoke=[(3, 0)], memories=[(0, 0, [0], "relation", False)], choices=[], blocks=set())
@example(spoke=[(3, 0)], memories=[(0, 0, [0], "event", True)], choices=[], blocks=set())
@example(
    spoke=[(0, 0)], memories=[(3, 0, [0], "event", False)], choices=[(0, True, True)], blocks=set()
)
@given(
    spoke=st.lists(st.tuples(chat, who), max_size=8),
    memories=st.lists(
        st.tuples(
            chat,
            who,
            st.lists(who, min_size=1, max_size=2),
            st.sampled_from(("event", "relation")),
            st.booleans(),
        ),
        min_size=1,
        max_size=6,
    ),
    choices=st.lists(st.tuples(who, st.booleans(), st.booleans()), max_size=3),
    blocks=st.sets(st.integers(0, 2)),
)
async def test_whatever_comes_from_another_chat_is_carried_as_the_rule_allows(
    core: Yuji,
    spoke: list[tuple[int, int]],
    memories: list[tuple[int, int, list[int], str, bool]],
    choices: list[tuple[int, bool, bool]],
    blocks: set[int],
) -> None:
    base = next(_example) * 10
    people = [str(900_000 + base + i) for i in range(3)]
    chats = [*(f"group:{base + i}" for i in range(3)), *(f"private:{p}" for p in people[:2])]

    def allowed_in(c: int, p: int) -> bool:
        return c < 3 or chats[c] == f"private:{people[p]}"  # a private chat: its owner

    heard: set[tuple[str, str]] = set()

    async def say(c: int, p: int, text: str) -> int:
        heard.add((chats[c], people[p]))
        return await core.archive.append(
            NewExperience(
                chats[c],
                f"p{next(_fp)}",
                people[p],
                text,
                sent_at=core.clock.now() - timedelta(minutes=5),
                sender_name=NAMES[p],
            )
        )

    for c, p in spoke:
        if allowed_in(c, p):
            await say(c, p, "大家好")
    evidence_of: dict[int, set[str]] = {}
    for c, subject, senders, type_, retracted in memories:
        senders = [s for s in senders if allowed_in(c, s)]
        if not senders:
            continue
        said = [await say(c, s, f"{NAMES[subject]}下个月搬家去成都") for s in senders]
        written = await core.memories.write(
            chats[c],
            type=type_,  # pyright: ignore[reportArgumentType]
            subject=NAMES[subject],
            subject_id=people[subject],
            content=f"{NAMES[subject]}下个月搬家去成都",
            evidence=[EvidenceRef(experience_id=e) for e in said],
        )
        evidence_of[written.memory.id] = {people[s] for s in senders}
        if retracted:
            await core.memories.retract(chats[c], written.memory.id, reason="t", changed_by="t")
    chosen: dict[str, tuple[bool, bool]] = {}
    for p, private, groups in choices:
        await core.carrying.choose("qq", people[p], into_private=private, into_groups=groups)
        chosen[people[p]] = (private, groups)
    for g in blocks:
        await core.carrying.block(chats[g], "admin")

    for target, asker in sorted(heard):
        result = await core.recall.recall(
            target, ASKED, asker=Asker(asker, (NAMES[people.index(asker)],))
        )
        for item in result.items:
            m = item.memory
            if m.scope == target:
                assert item.stage != "carried"
                continue
            assert item.stage == "carried"
            assert item.band == "related"  # never sure
            assert is_group_scope(m.scope)  # never from a private chat
            assert m.subject_person == asker  # only the asker's own...
            assert evidence_of[m.id] == {asker}  # ...words alone
            assert m.type != "relation"
            assert m.status == "active"
            private, groups = chosen.get(asker, (True, False))
            if is_group_scope(target):
                assert groups
                assert target not in {chats[g] for g in blocks}
            else:
                assert target == f"private:{asker}"
                assert private
