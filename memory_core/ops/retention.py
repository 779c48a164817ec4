"""Which backups to keep: a pure function of their instants, the clock and the policy.

Kept = the union of
- the `latest` newest backups,
- for each of the last `daily` local days (today included), the newest backup of that day,
- for each of the last `weekly` local weeks (Monday-based, this week included), the
  newest backup of that week.

Days and weeks are bucketed in the configured zone. The newest backup of a bucket
stays the newest of that bucket forever, so pruning after every backup keeps exactly
what one pruning at the end would keep (a property test checks this).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    latest: int = 20
    daily: int = 30
    weekly: int = 12

    @property
    def bound(self) -> int:
        """No selection is ever larger than this."""
        return self.latest + self.daily + self.weekly


def select_kept(
    backups: Mapping[str, datetime],
    *,
    now: datetime,
    policy: RetentionPolicy,
    zone: ZoneInfo,
) -> frozenset[str]:
    """The names among `backups` (name -> instant) that the policy keeps."""
    newest_first = sorted(backups, key=lambda name: (backups[name], name), reverse=True)
    kept: set[str] = set(newest_first[: max(policy.latest, 0)])

    today = now.astimezone(zone).date()
    first_day = today - timedelta(days=policy.daily - 1)
    this_week = week_start(today)
    first_week = this_week - timedelta(weeks=policy.weekly - 1)

    newest_of_day: dict[date, str] = {}
    newest_of_week: dict[date, str] = {}
    for name in newest_first:  # the first one seen in a bucket is its newest
        day = backups[name].astimezone(zone).date()
        newest_of_day.setdefault(day, name)
        newest_of_week.setdefault(week_start(day), name)

    if policy.daily > 0:
        kept.update(n for d, n in newest_of_day.items() if first_day <= d <= today)
    if policy.weekly > 0:
        kept.update(n for w, n in newest_of_week.items() if first_week <= w <= this_week)
    return frozenset(kept)


def week_start(day: date) -> date:
    """The Monday of `day`'s week."""
    return day - timedelta(days=day.weekday())
