"""The six steps of a night, in order: settle, diary, cards, states (3.5), events, gc.

Each takes the `DayRun` of one (scope, day) and returns a `StepResult`; the runner
writes the checkpoint (diary and cards write theirs in the same transaction as their
rows). Every memory change goes through the memory service, with `nightly` as author.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from memory_core.errors import NotFound, ValidationError
from memory_core.prompts.nightly import (
    CardText,
    FragmentLine,
    StateLine,
    StatesReply,
    cards_prompt,
    diary_prompt,
    events_prompt,
    settle_prompt,
    states_prompt,
)
from memory_core.storage.nightly_repo import Diary, Fragment
from memory_core.storage.schema import CARD_KINDS
from memory_core.types import EvidenceRef, Memory

from . import cardmerge, gc
from .context import CHANGED_BY, DayRun, StepResult
from .days import day_end, day_start, parse_day

STATE_LIST_LIMIT = 500
KNOWN_EVENTS = 30


# --- shared helpers ----------------------------------------------------------------


def fragment_lines(run: DayRun, frags: Sequence[Fragment]) -> list[FragmentLine]:
    lines: list[FragmentLine] = []
    for f in frags:
        first, last = run.local(f.first_sent_at), run.local(f.last_sent_at)
        end = f"{last:%H:%M}" if first.date() == last.date() else f"{last:%m-%d %H:%M}"
        lines.append(FragmentLine(f.id, f"{first:%m-%d %H:%M}–{end}", f.summary))
    return lines


def state_line(run: DayRun, memory: Memory) -> StateLine:
    until = "" if memory.valid_to is None else run.local(memory.valid_to).date().isoformat()
    return StateLine(memory.id, memory.subject, memory.content, until)


def fragment_evidence(ids: Sequence[int]) -> list[EvidenceRef]:
    return [EvidenceRef(fragment_id=i, role="fragment") for i in ids]


async def _diary_of(run: DayRun) -> Diary | None:
    return await run.services.repo.diary(run.scope, run.day_text)


async def _states(run: DayRun) -> list[Memory]:
    return await run.services.memories.list(
        run.scope, types=["state"], status="active", limit=STATE_LIST_LIMIT
    )


async def _apply_each(
    run: DayRun, items: Sequence[Any], apply: Callable[[Any], Awaitable[str | None]]
) -> tuple[int, list[str]]:
    """Apply items not applied before a crash; returns (applied now, refusals)."""
    done = run.applied()
    count, refused = 0, list[str]()
    for index, item in enumerate(items):
        if index in done:
            continue
        problem = await apply(item)
        if problem:
            refused.append(problem)
        else:
            count += 1
        await run.mark_applied(index)
    return count, refused


def _summary(count: int, noun: str, refused: Sequence[str]) -> str:
    text = f"{count} {noun}"
    return f"{text}; {len(refused)} refused: {'; '.join(refused)[:300]}" if refused else text


# --- step 1: settle ------------------------------------------------------------------


async def settle(run: DayRun) -> StepResult:
    """Past-due time-bound states: closed and rewritten into past tense."""
    services = run.services
    settled = await services.repo.settled_ids(run.scope)
    due = [
        m
        for m in await _states(run)
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

    count, refused = await _apply_each(run, reply.rewrites, apply)
    rewrites = [r.past_tense for r in reply.rewrites]
    return StepResult(
        _summary(count, "states settled", refused), {"rewrites": rewrites, **_keep(run)}
    )


def _keep(run: DayRun) -> dict[str, Any]:
    return {k: v for k, v in run.progress.items() if k in ("refused",)}


# --- step 2: diary ---------------------------------------------------------------------


async def diary(run: DayRun) -> StepResult:
    """The day's unarchived fragments (and step 1's rewrites) -> one diary."""
    services = run.services
    existing = await _diary_of(run)
    if existing is not None:  # written by an earlier run whose checkpoint got lost
        return StepResult("diary already written", {"fragments": list(existing.fragment_ids)})
    frags = await services.repo.unarchived_fragments(run.scope, run.end)
    if not frags:
        return StepResult("no fragments", {"fragments": []}, skipped=True)
    settled = list(run.done_details.get("settle", {}).get("rewrites", []))
    reply = await run.ask(
        diary_prompt(
            fragment_lines(run, frags),
            settled,
            day=run.day_text,
            scope_label=run.scope,
            bot_name=services.bot_name,
        )
    )
    ids = [f.id for f in frags]
    detail = {"fragments": ids, **_keep(run)}
    await services.repo.write_diary(run.scope, run.day_text, reply.diary, ids, run.now, detail)
    return StepResult(f"diary of {len(ids)} fragments", detail, committed=True)


# --- step 3: cards ----------------------------------------------------------------------


async def cards(run: DayRun) -> StepResult:
    """The seven cards, updated incrementally from the diary; a notable day -> timeline."""
    services = run.services
    the_diary = await _diary_of(run)
    if the_diary is None:
        return StepResult("no diary", skipped=True)
    current = await services.repo.current_cards(run.scope)
    lines = {kind: cardmerge.lines_of(current[kind].content) for kind in current}
    prompt = cards_prompt(
        [CardText(kind, current[kind].content if kind in current else "") for kind in CARD_KINDS],
        the_diary.content,
        day=run.day_text,
        bot_name=services.bot_name,
    )
    reply = await run.ask(prompt, lambda r: cardmerge.check_cards_reply(r, lines))
    merged = cardmerge.merge(lines, reply.changes)
    evidence = fragment_evidence(the_diary.fragment_ids)

    async def keep_displaced(item: cardmerge.Displaced) -> str | None:
        if not evidence:
            return f"{item.kind}: no fragments to cite"
        card = current.get(item.kind)
        since = parse_day(card.day) if card is not None and card.day else run.day
        outcome = await services.memories.write(
            run.scope,
            type="state",
            subject="group",
            content=item.past_tense,
            evidence=evidence,
            valid_from=day_start(since, run.tz, run.cutoff),
            valid_to=run.end,
            origin="nightly",
            changed_by=CHANGED_BY,
        )
        await services.repo.mark_settled(run.scope, outcome.memory.id, run.day_text, run.now)
        return None

    kept, refused = await _apply_each(run, merged.displaced, keep_displaced)
    contents = {
        kind: cardmerge.content_of(merged.cards[kind])
        for kind in CARD_KINDS
        if kind in merged.changed
    }
    timeline = (reply.timeline or "").strip() or None
    detail = {
        "changed": sorted(contents),
        "displaced": kept,
        "timeline": timeline,
        "ignored": list(merged.ignored),
        **_keep(run),
    }
    await services.repo.write_cards(run.scope, run.day_text, contents, timeline, run.now, detail)
    summary = f"{len(contents)} cards changed, {kept} old states kept"
    if timeline:
        summary += ", timeline +1"
    return StepResult(_summary_with(summary, refused), detail, committed=True)


def _summary_with(text: str, refused: Sequence[str]) -> str:
    return f"{text}; refused: {'; '.join(refused)[:300]}" if refused else text


# --- step 3.5: states the diary changes ---------------------------------------------------


def _squash(text: str) -> str:
    return "".join(text.split())


async def states(run: DayRun) -> StepResult:
    """States the diary says changed (resolved early, extended, new); nothing guessed."""
    services = run.services
    the_diary = await _diary_of(run)
    if the_diary is None:
        return StepResult("no diary", skipped=True)
    settled = await services.repo.settled_ids(run.scope)
    active = [
        m
        for m in await _states(run)
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

    count, refused = await _apply_each(run, reply.changes, apply)
    return StepResult(
        _summary(count, "states adjusted", refused), {"adjusted": count, **_keep(run)}
    )


def _close_at(memory: Memory, end: datetime) -> datetime:
    start = memory.valid_from
    if start is not None and end <= start:
        return start + timedelta(seconds=1)
    return end


# --- step 4: events -----------------------------------------------------------------------


async def events(run: DayRun) -> StepResult:
    """Long-term events from the day's fragments (not from the diary), with evidence."""
    services = run.services
    the_diary = await _diary_of(run)
    if the_diary is None or not the_diary.fragment_ids:
        return StepResult("no fragments", skipped=True)
    frags = await services.repo.fragments_by_ids(run.scope, the_diary.fragment_ids)
    by_id = {f.id: f for f in frags}
    known = [
        m.content
        for m in await services.memories.list(run.scope, types=["event"], limit=KNOWN_EVENTS)
    ]

    def check(reply: Any) -> str | None:
        for event in reply.events:
            unknown = sorted(set(event.fragment_ids) - set(by_id))
            if unknown:
                return f"event cites unknown fragments {unknown}"
        return None

    reply = await run.ask(
        events_prompt(
            fragment_lines(run, frags), known, day=run.day_text, bot_name=services.bot_name
        ),
        check,
    )

    async def apply(event: Any) -> str | None:
        cited = sorted(set(event.fragment_ids))
        try:
            await services.memories.write(
                run.scope,
                type="event",
                subject=event.subject,
                content=event.content,
                evidence=fragment_evidence(cited),
                importance=event.importance,
                valid_from=min(by_id[i].first_sent_at for i in cited),
                origin="nightly",
                changed_by=CHANGED_BY,
            )
        except (ValidationError, NotFound) as exc:
            return f"event {event.content[:20]!r}: {exc}"
        return None

    count, refused = await _apply_each(run, reply.events, apply)
    return StepResult(_summary(count, "events", refused), {"events": count, **_keep(run)})


# --- step 5: gc ------------------------------------------------------------------------------

GC_SCAN_LIMIT = 5000
GC_MAX_PER_RUN = 1000


def gc_rules(run: DayRun) -> gc.GcRules:
    s = run.services.settings
    return gc.GcRules(
        cold_after_days=s.gc_cold_after_days,
        exempt_types=s.gc_exempt_types,
        keep_importance=s.gc_keep_importance,
    )


async def collect(run: DayRun) -> StepResult:
    """Cold memories -> status `cold` (history kept, nothing deleted)."""
    services = run.services
    rules = gc_rules(run)
    if rules.cold_after_days <= 0:
        return StepResult("gc disabled", skipped=True)
    horizon = run.now - timedelta(days=rules.cold_after_days)
    rows = await services.repo.gc_rows(run.scope, horizon, GC_SCAN_LIMIT)
    candidates = [gc.GcCandidate(**_fields(r)) for r in rows]
    chosen = gc.select_cold(candidates, run.now, rules, GC_MAX_PER_RUN)
    if not chosen:
        return StepResult("nothing cold", {"cold": []}, skipped=True)
    moved: list[int] = []
    for memory_id in chosen:
        try:
            await services.memories.set_status(
                run.scope,
                memory_id,
                "cold",
                reason=f"nightly gc: idle over {rules.cold_after_days} days, never credited",
                changed_by=CHANGED_BY,
            )
        except (ValidationError, NotFound):
            continue
        moved.append(memory_id)
    return StepResult(f"{len(moved)} memories cold", {"cold": moved})


def _fields(row: Any) -> dict[str, Any]:
    return {name: getattr(row, name) for name in gc.GcCandidate.__dataclass_fields__}


STEPS: tuple[tuple[str, Callable[[DayRun], Awaitable[StepResult]]], ...] = (
    ("settle", settle),
    ("diary", diary),
    ("cards", cards),
    ("states", states),
    ("events", events),
    ("gc", collect),
)
