"""Steps 1 and 3.5: time-bound states.

settle: states past their deadline are rewritten into past tense (a new version of
the same memory; its evidence stays). states: what the diary explicitly says changed
(ended early, extended, began) is applied; each change must quote the diary.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from memory_core.errors import NotFound, ValidationError
from memory_core.prompts.nightly import StatesReply, settle_prompt, states_prompt
from memory_core.types import Memory

from .context import CHANGED_BY, DayRun, StepResult
from .days import day_end, parse_day
from .stepkit import (
    active_states,
    apply_each,
    diary_of,
    fragment_evidence,
    keep_refusals,
    state_line,
    summary,
)


async def settle(run: DayRun) -> StepResult:
    """Past-due time-bound states: closed and rewritten into past tense."""
    services = run.services
    settled = await services.repo.settled_ids(run.scope)
    due = [
        m
        for m in await active_states(run)
        if m.valid_to is not None and m.valid_to <= run.end and m.id not in settled
    ]
    if not due:
        return StepResult("no past-due states", {"rewrites": []}, skipped=True)
    by_id = {m.id: m for m in due}

    def check(reply: Any) -> str | None:
        ids = [r.id for r in reply.rewrites]
        if sorted(ids) != sorted(by_id):
            return f"rewrites cover ids {sorted(ids)}, expected {sorted(by_id)}"
        return None

    reply = await run.ask(
        settle_prompt(
            [state_line(run, m) for m in due], day=run.day_text, bot_name=services.bot_name
        ),
        check,
    )

    async def apply(item: Any) -> str | None:
        memory = by_id[item.id]
        try:
            await services.memories.edit(
                run.scope,
                memory.id,
                content=item.past_tense,
                reason=f"nightly {run.day_text}: past due, rewritten in past tense",
                changed_by=CHANGED_BY,
            )
        except (ValidationError, NotFound) as exc:
            problem = f"#{memory.id}: {exc}"
        else:
            problem = None
        await services.repo.mark_settled(run.scope, memory.id, run.day_text, run.now)
        return problem

    count, refused = await apply_each(run, reply.rewrites, apply)
    rewrites = [r.past_tense for r in reply.rewrites]
    return StepResult(
        summary(f"{count} states settled", refused), {"rewrites": rewrites, **keep_refusals(run)}
    )


# --- step 3.5: states the diary changes ---------------------------------------------------


def _squash(text: str) -> str:
    return "".join(text.split())


async def states(run: DayRun) -> StepResult:
    """States the diary says changed (resolved early, extended, new); nothing guessed."""
    services = run.services
    the_diary = await diary_of(run)
    if the_diary is None:
        return StepResult("no diary", skipped=True)
    settled = await services.repo.settled_ids(run.scope)
    active = [
        m
        for m in await active_states(run)
        if m.id not in settled and (m.valid_to is None or m.valid_to > run.end)
    ]
    by_id = {m.id: m for m in active}
    diary_text = _squash(the_diary.content)

    def check(reply: StatesReply) -> str | None:
        for change in reply.changes:
            if _squash(change.quote) not in diary_text:
                return f"quote {change.quote!r} is not in the diary"
            if change.action != "new" and change.id not in by_id:
                return f"{change.action}: unknown state id {change.id}"
            if change.action == "extended" and not change.until:
                return "extended needs until"
            if change.until:
                try:
                    until = parse_day(change.until)
                except ValueError:
                    return f"until {change.until!r} is not YYYY-MM-DD"
                if until < run.day:
                    return f"until {change.until} is before {run.day_text}"
        return None

    reply = await run.ask(
        states_prompt(
            [state_line(run, m) for m in active],
            the_diary.content,
            day=run.day_text,
            bot_name=services.bot_name,
        ),
        check,
    )
    evidence = fragment_evidence(the_diary.fragment_ids)

    async def apply(change: Any) -> str | None:
        reason = f"nightly {run.day_text}: the diary says「{change.quote}」"
        until = day_end(parse_day(change.until), run.tz, run.cutoff) if change.until else None
        try:
            if change.action == "new":
                if not evidence:
                    return "new state: no fragments to cite"
                await services.memories.write(
                    run.scope,
                    type="state",
                    subject=change.subject,
                    content=change.content,
                    evidence=evidence,
                    valid_from=run.start + timedelta(microseconds=1),
                    valid_to=until,
                    origin="nightly",
                    changed_by=CHANGED_BY,
                )
            elif change.action == "extended":
                await services.memories.edit(
                    run.scope,
                    change.id,
                    content=change.content,
                    valid_to=until,
                    reason=reason,
                    changed_by=CHANGED_BY,
                    evidence=evidence,
                )
            else:
                memory = by_id[change.id]
                await services.memories.edit(
                    run.scope,
                    change.id,
                    content=change.content,
                    valid_to=_close_at(memory, run.end),
                    reason=reason,
                    changed_by=CHANGED_BY,
                    evidence=evidence,
                )
                await services.repo.mark_settled(run.scope, change.id, run.day_text, run.now)
        except (ValidationError, NotFound) as exc:
            return f"{change.action} #{change.id}: {exc}"
        return None

    count, refused = await apply_each(run, reply.changes, apply)
    return StepResult(
        summary(f"{count} states adjusted", refused), {"adjusted": count, **keep_refusals(run)}
    )


def _close_at(memory: Memory, end: datetime) -> datetime:
    start = memory.valid_from
    if start is not None and end <= start:
        return start + timedelta(seconds=1)
    return end
