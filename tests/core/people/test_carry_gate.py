"""Carrying's first look (`CarryRepo.may_carry`, one statement) and what it keeps
(`Nothing`): over random chats, people, words, choices and blocks (Hypothesis) the
gated scope function gives exactly what the rule gives each person unguarded, so the
look only ever spares reads; a "nothing" is kept, never what travels, and a choice
turned on here, a block lifted or a memory written shows at the next wake."""

from __future__ import annotations

import itertools
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import EvidenceRef, NewExperience, Yuji
from memory_core.people import carry
from memory_core.people.carrying import NOTHING_TTL_S
from memory_core.storage import CarryRepo

NAMES = ("小明", "阿花", "老王")
_example = itertools.count(1)
_fp = itertools.count(1)

PROPS = settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
who = st.integers(0, 2)
chat = st.integers(0, 4)  # three groups, then the private chats of persons 0 and 1


async def say(core: Yuji, scope: str, user_id: str, name: str, text: str) -> int:
    return await core.archive.append(
        NewExperience(
            scope,
            f"g{next(_fp)}",
            user_id,
            text,
            sent_at=core.clock.now() - timedelta(minutes=5),
            sender_name=name,
        )
    )


async def unguarded(core: Yuji, target: str, person: str) -> set[int]:
    """What the rule carries of `person` into `target`, every state read (no first look)."""
    carrying = core.carrying
    now = core.clock.now()
    async with core.db.read() as conn:
        if await carrying.repo.blocked(target, conn=conn) is not None:
            return set()
        state, found = await carrying._read(target, person, now, conn)  # pyright: ignore[reportPrivateUsage]
    return {m.id for m in carry.carried(found, target, frozenset({person}), state, now)}


@PROPS
@given(
    spoke=st.lists(st.tuples(chat, who), max_size=8),
    words=st.lists(st.tuples(chat, who, who), min_size=1, max_size=6),
    choices=st.lists(st.tuples(who, st.booleans(), st.booleans()), max_size=3),
    blocks=st.sets(st.integers(0, 2)),
)
async def test_the_first_look_never_hides_what_the_rule_carries(
    core: Yuji,
    spoke: list[tuple[int, int]],
    words: list[tuple[int, int, int]],
    choices: list[tuple[int, bool, bool]],
    blocks: set[int],
) -> None:
    base = next(_example) * 10
    people = [str(800_000 + base + i) for i in range(3)]
    chats = [*(f"group:{base + i}" for i in range(3)), *(f"private:{p}" for p in people[:2])]

    def allowed(c: int, p: int) -> bool:
        return c < 3 or chats[c] == f"private:{people[p]}"

    for c, p in spoke:
        if allowed(c, p):
            await say(core, chats[c], people[p], NAMES[p], "大家好")
    for c, subject, sender in words:
        if not allowed(c, sender):
            continue
        said = await say(core, chats[c], people[sender], NAMES[sender], "下个月搬家去成都")
        await core.memories.write(
            chats[c],
            type="event",
            subject=NAMES[subject],
            subject_id=people[subject],
            content=f"{NAMES[subject]}下个月搬家去成都",
            evidence=[EvidenceRef(experience_id=said)],
        )
    for p, private, groups in choices:
        await core.carrying.choose("qq", people[p], into_private=private, into_groups=groups)
    for g in blocks:
        await core.carrying.block(chats[g], "admin")
    for target in chats:
        for person in people:
            gated = {m.id for m in await core.carrying.carried(target, (person,))}
            assert gated == await unguarded(core, target, person), (target, person)
            # Asked again (a "nothing" may now be kept): the same.
            again = {m.id for m in await core.carrying.carried(target, (person,))}
            assert again == gated


async def test_a_kept_nothing_ends_when_this_process_changes_what_could_travel(
    core: Yuji,
) -> None:
    a, b = "group:1", "group:2"
    await say(core, b, "7", "小明", "大家好")
    said = await say(core, a, "7", "小明", "我下个月搬家去成都")

    async def into_b() -> list[int]:
        return [m.id for m in await core.carrying.carried(b, ("7",), names=("小明",))]

    assert await into_b() == []  # no words of his yet: nothing, kept
    moving = await core.memories.write(
        a,
        type="event",
        subject="小明",
        content="小明下个月搬家去成都",
        evidence=[EvidenceRef(experience_id=said)],
    )
    assert await into_b() == []  # written, but he has not opted in: nothing, kept
    await core.carrying.choose("qq", "7", into_groups=True)
    assert await into_b() == [moving.memory.id]  # turned on here: at the next wake
    await core.carrying.block(b, "8")
    assert await into_b() == []  # a block is never waited for: nothing is kept of it
    await core.carrying.unblock(b)
    assert await into_b() == [moving.memory.id]
    await core.carrying.choose("qq", "7", into_groups=False)
    assert await into_b() == []  # turned off: at the next wake


async def test_a_choice_made_elsewhere_shows_once_the_kept_nothing_expires(core: Yuji) -> None:
    """Another process (here the repository written directly) cannot clear this
    one's "nothing": what it turned on shows once the TTL has passed."""
    a, b = "group:1", "group:2"
    await say(core, b, "7", "小明", "大家好")
    said = await say(core, a, "7", "小明", "我下个月搬家去成都")
    moving = await core.memories.write(
        a,
        type="event",
        subject="小明",
        content="小明下个月搬家去成都",
        evidence=[EvidenceRef(experience_id=said)],
    )
    assert await core.carrying.carried(b, ("7",)) == ()
    await CarryRepo(core.db).choose("qq", "7", core.clock.now(), into_groups=True)
    assert await core.carrying.carried(b, ("7",)) == ()  # kept
    kept = core.carrying._nothing  # pyright: ignore[reportPrivateUsage]
    started = kept.clock()
    kept.clock = lambda: started + NOTHING_TTL_S + 1
    assert [m.id for m in await core.carrying.carried(b, ("7",))] == [moving.memory.id]
