"""Selection is pure: eligibility, order (awake chats first), budget, the optional hourly
ceiling and the batch cut."""

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
    lag_text,
    next_due,
    queue_key,
    serial_order,
    under_hourly_cap,
    within_budget,
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
    last_wake_at=st.one_of(st.none(), waits.map(lambda w: NOW - w * 40)),
).map(lambda p: p if p.count else Pending(p.scope, p.acked_id, 0, None, p.failures, p.last_wake_at))


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
def test_order_is_awake_chats_first_then_oldest_waiting_and_only_eligible(
    items: list[Pending], force: bool
) -> None:
    order = serial_order(items, NOW, LIMITS, force=force)
    expected = {p.scope for p in items if (p.count > 0 if force else is_eligible(p, NOW, LIMITS))}
    assert {p.scope for p in order} == expected
    keys = [queue_key(p, LIMITS, NOW) for p in order]
    assert keys == sorted(keys)
    week = timedelta(days=7)
    awake = [p.last_wake_at is not None and NOW - p.last_wake_at <= week for p in order]
    assert awake == sorted(awake, reverse=True)  # every awake chat before every silent one
    for group in (True, False):
        healthy = [p for p, a in zip(order, awake, strict=True) if a is group and not p.failures]
        assert healthy == sorted(healthy, key=lambda p: (p.oldest_at, p.scope))  # oldest first


def test_a_chat_that_woke_the_bot_this_week_goes_before_an_older_silent_backlog() -> None:
    dead = Pending("group:dead", 0, 500, NOW - timedelta(days=3))  # never woke the bot
    stale = Pending(
        "group:stale", 0, 40, NOW - timedelta(days=2), last_wake_at=NOW - timedelta(days=8)
    )
    live_new = Pending("group:live", 0, 12, NOW - timedelta(minutes=3), last_wake_at=NOW)
    live_old = Pending(
        "group:live2", 0, 12, NOW - timedelta(hours=1), last_wake_at=NOW - timedelta(days=6)
    )
    order = serial_order([dead, stale, live_new, live_old], NOW, LIMITS)
    assert [p.scope for p in order] == ["group:live2", "group:live", "group:dead", "group:stale"]


def test_budget_counts_both_windows_and_zero_is_no_limit() -> None:
    limits = Limits(tokens_per_hour=1000, tokens_per_day=5000)
    assert within_budget(999, 4999, limits) is None
    assert within_budget(1000, 1000, limits) == "hourly token budget spent (1000 of 1000)"
    assert within_budget(10, 5000, limits) == "daily token budget spent (5000 of 5000)"
    assert within_budget(10**9, 10**9, Limits()) is None


def test_next_due_is_when_the_first_small_backlog_has_waited_long_enough() -> None:
    young = Pending("a", 0, 3, NOW - timedelta(minutes=30))
    older = Pending("b", 0, 3, NOW - timedelta(minutes=90))
    due_now = Pending("c", 0, 12, NOW - timedelta(minutes=1))  # already eligible
    assert next_due([young, older, due_now], NOW, LIMITS) == NOW + timedelta(minutes=30)
    assert next_due([due_now, Pending("d", 0, 0, None)], NOW, LIMITS) is None


def test_lag_reads_in_seconds_minutes_hours() -> None:
    assert [lag_text(s) for s in (5, 720, 12600)] == ["5 秒", "12 分钟", "3.5 小时"]


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


def test_hourly_cap_four_per_hour_and_zero_is_off() -> None:
    started = [NOW - timedelta(minutes=m) for m in (5, 15, 30, 50)]
    assert not under_hourly_cap(started, NOW, 4)
    assert under_hourly_cap(started, NOW + timedelta(minutes=11), 4)
    assert under_hourly_cap(started * 100, NOW, 0)
    assert Limits().hourly_cap == 0


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
