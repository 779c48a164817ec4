"""Retention selection: the latest N, one per day, one per week (property tests)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.ops.retention import RetentionPolicy, select_kept, week_start

ZONE = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 11, 20, 4, 30, tzinfo=UTC)

instants = st.datetimes(
    min_value=datetime(2026, 1, 1),  # noqa: DTZ001 - hypothesis bounds are naive
    max_value=datetime(2026, 11, 20, 4, 30),  # noqa: DTZ001
    timezones=st.just(UTC),
)
backup_sets = st.dictionaries(st.text("abcdef0123", min_size=1, max_size=8), instants, max_size=80)
policies = st.builds(
    RetentionPolicy,
    latest=st.integers(0, 25),
    daily=st.integers(0, 35),
    weekly=st.integers(0, 14),
)


def local_day(instant: datetime) -> date:
    return instant.astimezone(ZONE).date()


@given(backups=backup_sets, policy=policies)
def test_selection_is_a_bounded_subset(
    backups: dict[str, datetime], policy: RetentionPolicy
) -> None:
    kept = select_kept(backups, now=NOW, policy=policy, zone=ZONE)
    assert kept <= backups.keys()
    assert len(kept) <= policy.bound


@given(backups=backup_sets, policy=policies)
def test_the_latest_n_are_always_kept(
    backups: dict[str, datetime], policy: RetentionPolicy
) -> None:
    kept = select_kept(backups, now=NOW, policy=policy, zone=ZONE)
    newest = sorted(backups, key=lambda n: (backups[n], n), reverse=True)[: policy.latest]
    assert set(newest) <= kept


@given(backups=backup_sets, policy=policies)
def test_every_recent_day_and_week_keeps_its_newest(
    backups: dict[str, datetime], policy: RetentionPolicy
) -> None:
    kept = select_kept(backups, now=NOW, policy=policy, zone=ZONE)
    today = local_day(NOW)
    for name, instant in backups.items():
        day = local_day(instant)
        newest_of_day = all(
            (backups[o], o) <= (instant, name) for o in backups if local_day(backups[o]) == day
        )
        newest_of_week = all(
            (backups[o], o) <= (instant, name)
            for o in backups
            if week_start(local_day(backups[o])) == week_start(day)
        )
        if newest_of_day and (today - day).days < policy.daily:
            assert name in kept
        weeks_back = (week_start(today) - week_start(day)).days // 7
        if newest_of_week and weeks_back < policy.weekly:
            assert name in kept


@given(backups=backup_sets, policy=policies)
def test_nothing_else_is_kept(backups: dict[str, datetime], policy: RetentionPolicy) -> None:
    """Every kept backup is in the latest N, or the newest of a recent day or week."""
    kept = select_kept(backups, now=NOW, policy=policy, zone=ZONE)
    newest = set(sorted(backups, key=lambda n: (backups[n], n), reverse=True)[: policy.latest])
    today = local_day(NOW)
    for name in kept - newest:
        day = local_day(backups[name])
        later = [o for o in backups if (backups[o], o) > (backups[name], name)]
        by_day = (today - day).days < policy.daily and all(
            local_day(backups[o]) != day for o in later
        )
        by_week = (week_start(today) - week_start(day)).days // 7 < policy.weekly and all(
            week_start(local_day(backups[o])) != week_start(day) for o in later
        )
        assert by_day or by_week


@given(backups=backup_sets, policy=policies)
def test_pruning_twice_deletes_nothing_more(
    backups: dict[str, datetime], policy: RetentionPolicy
) -> None:
    kept = select_kept(backups, now=NOW, policy=policy, zone=ZONE)
    again = select_kept({n: backups[n] for n in kept}, now=NOW, policy=policy, zone=ZONE)
    assert again == kept


@settings(max_examples=60, deadline=None)
@given(
    gaps=st.lists(st.integers(10, 60 * 60 * 30), min_size=1, max_size=150),
    policy=policies,
)
def test_pruning_after_every_backup_keeps_what_one_final_pruning_keeps(
    gaps: list[int], policy: RetentionPolicy
) -> None:
    """What the service does (prune after each backup) loses nothing the policy wants."""
    now = datetime(2026, 3, 1, tzinfo=UTC)
    every: dict[str, datetime] = {}
    on_disk: dict[str, datetime] = {}
    for i, gap in enumerate(gaps):
        now += timedelta(seconds=gap)
        every[f"b{i:04d}"] = on_disk[f"b{i:04d}"] = now
        keep = select_kept(on_disk, now=now, policy=policy, zone=ZONE)
        on_disk = {n: on_disk[n] for n in keep}
    assert set(on_disk) == select_kept(every, now=now, policy=policy, zone=ZONE)


def test_the_default_policy_over_four_months_of_three_hourly_backups() -> None:
    policy = RetentionPolicy()
    start = datetime(2026, 7, 1, tzinfo=UTC)
    backups = {f"b{i:04d}": start + timedelta(hours=3 * i) for i in range(8 * 120)}
    now = max(backups.values())
    kept = select_kept(backups, now=now, policy=policy, zone=ZONE)
    days = {local_day(backups[n]) for n in kept}
    weeks = {week_start(local_day(backups[n])) for n in kept}
    assert len(kept) <= policy.bound
    assert {local_day(now) - timedelta(days=d) for d in range(30)} <= days
    assert {week_start(local_day(now)) - timedelta(weeks=w) for w in range(12)} <= weeks
    assert max(kept) == max(backups)
