"""What the peer drill reports, recounted from its own log (benchmarks/followups_peer/
drill.py), never from the bot's tables but for the one cross-check (`states`)."""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime
from typing import Any

from tests.e2e.harness import query

from .drill import OFF, ON, SH, WEEK, Drill, in_hours


def violations(drill: Drill) -> dict[str, int]:
    """Recounted from the drill's log: what it said when, the mute, the hours, the caps."""
    found: Counter[str] = Counter()
    per_chat_day: Counter[tuple[str, date]] = Counter()
    last_to: dict[int, datetime] = {}
    for at, scope, plan_text in drill.sends:
        found["at_night"] += not in_hours(at)
        found["in_the_muted_group"] += scope == ON and drill.is_muted(at)
        found["in_the_group_without"] += scope == OFF
        per_chat_day[(scope, at.astimezone(SH).date())] += 1
        plan = drill.plans.get(plan_text)
        if plan is None:
            continue
        if plan.person in last_to and at - last_to[plan.person] < WEEK:
            found["twice_a_week_to_one_person"] += 1
        last_to[plan.person] = at
    for plan in drill.plans.values():
        found["asked_twice_for_one_plan"] += max(0, len(plan.asked) - 1)
        for at, _ in plan.asked:
            if plan.ended_at is not None and plan.ended_at <= at:
                found[f"after_the_plan_was_{plan.ended_how}"] += 1
            elif not plan.due_on(at.astimezone(SH).date()):
                found["outside_its_window"] += 1
    found["twice_a_day_in_one_chat"] = sum(n - 1 for n in per_chat_day.values() if n > 1)
    keys = (
        "at_night",
        "in_the_muted_group",
        "in_the_group_without",
        "after_the_plan_was_forgotten",
        "after_the_plan_was_cancelled",
        "after_the_plan_was_moved",
        "asked_twice_for_one_plan",
        "twice_a_day_in_one_chat",
        "twice_a_week_to_one_person",
        "outside_its_window",
        "replied_in_the_muted_group",
        "with_a_reply_target",
        "about_no_plan_told",
        "offered_someone_elses_or_unknown",
        "passed_over",
        "woken_offered_nothing",
    )
    return {k: found[k] + drill.counts[k] for k in keys}


def states(drill: Drill) -> dict[str, Any]:
    """The bot's `followups` rows against the drill's log: a plan the drill saw asked
    whose row is not asked/answered, or the other way round."""
    rows = query(drill.bot.database, "SELECT memory_id, state FROM followups")
    by_memory: dict[Any, Any] = dict(rows)
    disagree = 0
    for plan in drill.plans.values():
        state = by_memory.get(plan.memory_id) if plan.memory_id is not None else None
        disagree += bool(plan.asked) != (state in ("asked", "answered"))
    return {
        "rows": dict(sorted(Counter(str(s) for s in by_memory.values()).items())),
        "disagreeing_with_the_log": disagree,
    }
