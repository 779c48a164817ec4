"""Step 6, `followups` (after `events`): the day's new follow-ups (a member's own plans
written or changed that day, not yet asked, answered or dropped) are shown to the model,
which may drop those not worth asking about ("明天吃火锅"), each with why
(memory_core/prompts/followup_review.py). It only drops: without a model, or without
the nightly run, every follow-up the rules make stays (memory_core/followups/)."""

from __future__ import annotations

from typing import Any

from memory_core.followups.due import followup_of
from memory_core.followups.service import candidate
from memory_core.prompts.followup_review import PlanLine, ReviewReply, review_prompt
from memory_core.storage import FollowupsRepo

from .context import DayRun, StepResult

REVIEWED = ("upcoming", "due")


async def review(run: DayRun) -> StepResult:
    services = run.services
    if services.llm is None:
        return StepResult("no model: every follow-up kept", skipped=True)
    repo = FollowupsRepo(services.repo.db)
    window = services.settings.followup_window_days
    fresh: dict[int, tuple[str, PlanLine]] = {}
    for row in await repo.plans(run.scope):
        if row.record is not None and row.record.state is not None:
            continue
        if not run.start < row.memory.created_at <= run.end:
            continue
        found = followup_of(candidate(row), None, run.now, run.tz, window, run.cutoff)
        if found is None or found.state not in REVIEWED:
            continue
        line = PlanLine(
            found.memory.id, found.memory.subject, f"{found.window.day}", found.memory.content
        )
        fresh[found.memory.id] = (found.person, line)
    if not fresh:
        return StepResult("no new follow-ups", {"dropped": []}, skipped=True)

    def check(reply: Any) -> str | None:
        unknown = sorted({d.id for d in reply.drop} - set(fresh))
        return f"ids {unknown} are not in the list" if unknown else None

    reply: ReviewReply = await run.ask(
        review_prompt(
            [line for _, line in fresh.values()], day=run.day_text, bot_name=services.bot_name
        ),
        check,
    )
    for item in reply.drop:
        person, _ = fresh[item.id]
        reason = f"nightly {run.day_text}: {item.why}"
        await repo.record(run.scope, item.id, person, "dropped", at=run.now, reason=reason)
    dropped = [{"id": d.id, "why": d.why} for d in reply.drop]
    return StepResult(
        f"{len(dropped)} of {len(fresh)} new follow-ups dropped",
        {"dropped": dropped, "reviewed": sorted(fresh)},
    )
