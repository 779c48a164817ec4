"""Selection is pure: eligibility, serial order, hourly cap and the batch cut."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.consolidation.selection import (
    Item,
    Limits,
    Pending,
    cut,
    is_eligible,
    queue_key,
    serial_order,
    under_hourly_cap,
)

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
LIMITS = Limits()

waits = st.integers(min_value=0, max_value=6 * 3600).map(lambda s: timedelta(seconds=s))
pendings = st.builds(
    Pending,
    scope=st.sampled_from([f"group:{i}" for i in range(8)]),
    acked_id=st.integers(min_value=0, max_value=10**6),
    count=st.integers(min_value=0, max_value=100),
    oldest_at=waits.map(lambda w: NOW - w),
    failures=st.integers(min_value=0, max_value=9),
).map(lambda p: p if p.count else Pending(p.scope, p.acked_id, 0, None, p.failures))


@settings(deadline=None)  # timing belongs to benchmarks, not to this property
@given(pendings)
def test_eligible_exactly_by_count_or_wait(p: Pending) -> None:
    expected = p.count > 0 and (
        p.count >= 12 or (p.oldest_at is not None and NOW - p.oldest_at >= timedelta(hours=2))
    )
    assert is_eligible(p, NOW, LIMITS) is expected


def test_eligibility_edges() -> None:
    assert is_eligible(Pending("g", 0, 12, NOW), NOW, LIMITS)
    assert not is_eligible(Pending("g", 0, 11, NOW - timedelta(hours=2, seconds=-1)), NOW, LIMITS)
    assert is_eligible(Pending("g", 0, 1, NOW - timedelta(hours=2)), NOW, LIMITS)
    assert not is_eligible(Pending("g", 0, 0, None), NOW, LIMITS)


@settings(deadline=None)  # timing belongs to benchmarks, not to this property
@given(st.lists(pendings, max_size=12, unique_by=lambda p: p.scope), st.booleans())
def test_serial_order_is_oldest_waiting_first_and_only_eligible(
    items: list[Pending], force: bool
) -> None:
    order = serial_order(items, NOW, LIMITS, force=force)
    expected = {p.scope for p in items if (p.count > 0 if force else is_eligible(p, NOW, LIMITS))}
    assert {p.scope for p in order} == expected
    keys = [queue_key(p, LIMITS) for p in order]
    assert keys == sorted(keys)
    healthy = [p for p in order if p.failures == 0]
    assert healthy == sorted(healthy, key=lambda p: (p.oldest_at, p.scope))  # oldest first


def test_a_failing_chat_steps_back_but_is_not_starved() -> None:
    failing = Pending("group:bad", 0, 50, NOW - timedelta(hours=3), failures=3)
    fresh = Pending("group:ok", 0, 12, NOW - timedelta(minutes=30))
    older = Pending("group:old", 0, 12, NOW - timedelta(hours=4))
    assert [p.scope for p in serial_order([failing, fresh, older], NOW, LIMITS)] == [
        "group:old",
        "group:ok",
        "group:bad",
    ]
    # the penalty is capped: a long-failing chat still comes before newer arrivals
    stuck = Pending("group:bad", 0, 50, NOW - timedelta(hours=10), failures=99)
    assert serial_order([stuck, fresh], NOW, LIMITS)[0].scope == "group:bad"


@settings(deadline=None)  # timing belongs to benchmarks, not to this property
@given(
    st.lists(st.integers(min_value=-7200, max_value=600), max_size=12),
    st.integers(min_value=1, max_value=6),
)
def test_hourly_cap_counts_only_the_last_hour(offsets: list[int], cap: int) -> None:
    started = [NOW + timedelta(seconds=s) for s in offsets]
    in_window = sum(1 for s in offsets if -3600 < s <= 0)
    assert under_hourly_cap(started, NOW, cap) is (in_window < cap)


def test_hourly_cap_four_per_hour() -> None:
    started = [NOW - timedelta(minutes=m) for m in (5, 15, 30, 50)]
    assert not under_hourly_cap(started, NOW, 4)
    assert under_hourly_cap(started, NOW + timedelta(minutes=11), 4)


sizes = st.lists(st.integers(min_value=0, max_value=9000), min_size=0, max_size=120)
limits = st.builds(
    Limits,
    max_messages=st.integers(min_value=1, max_value=60),
    max_chars=st.integers(min_value=1, max_value=8000),
)


@settings(deadline=None)  # timing belongs to benchmarks, not to this property
@given(sizes, limits)
def test_cut_respects_caps_never_splits_and_is_a_maximal_prefix(
    chars: list[int], lim: Limits
) -> None:
    items = [Item(id=10 + 3 * i, chars=c) for i, c in enumerate(chars)]
    result = cut(items, lim)
    if not items:
        assert result is None
        return
    assert result is not None
    taken = items[: result.count]
    assert result.count >= 1
    assert result.first_id == items[0].id
    assert result.last_id == taken[-1].id
    assert result.chars == sum(i.chars for i in taken)
    assert result.count <= lim.max_messages
    if result.count > 1:  # only a lone message may exceed the character cap
        assert result.chars <= lim.max_chars
    # maximal: the next message would break a cap
    if result.count < len(items):
        nxt = items[result.count]
        assert (
            result.count == lim.max_messages
            or result.chars + nxt.chars > lim.max_chars
            or (result.chars >= lim.max_chars)
        )


@settings(deadline=None)  # timing belongs to benchmarks, not to this property
@given(sizes)
def test_cutting_repeatedly_covers_every_message_once(chars: list[int]) -> None:
    items = [Item(id=i + 1, chars=c) for i, c in enumerate(chars)]
    covered: list[int] = []
    rest = items
    while rest:
        result = cut(rest, LIMITS)
        assert result is not None
        covered += [i.id for i in rest[: result.count]]
        rest = rest[result.count :]
    assert covered == [i.id for i in items]


def test_long_single_message_forms_its_own_batch() -> None:
    items = [Item(1, 100), Item(2, 7000), Item(3, 10)]
    first = cut(items, LIMITS)
    assert first is not None
    assert (first.first_id, first.last_id) == (1, 1)
    second = cut(items[1:], LIMITS)
    assert second is not None
    assert (second.count, second.chars) == (1, 7000)


def test_forty_messages_at_most() -> None:
    result = cut([Item(i, 1) for i in range(1, 100)], LIMITS)
    assert result is not None
    assert (result.count, result.last_id) == (40, 40)
