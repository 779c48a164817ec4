"""Steps 2, 3 and 4: the diary, the seven cards (+ timeline), long-term events."""

from __future__ import annotations

from typing import Any

from memory_core.errors import NotFound, ValidationError
from memory_core.prompts.nightly import CardText, cards_prompt, diary_prompt, events_prompt
from memory_core.storage.schema import CARD_KINDS
from memory_core.types import chat_label

from . import cardmerge
from .context import CHANGED_BY, DayRun, StepResult
from .days import day_start, parse_day
from .stepkit import (
    apply_each,
    diary_of,
    fragment_evidence,
    fragment_lines,
    keep_refusals,
    summary,
)

KNOWN_EVENTS = 30


async def diary(run: DayRun) -> StepResult:
    """The day's unarchived fragments (and step 1's rewrites) -> one diary."""
    services = run.services
    existing = await diary_of(run)
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
            scope_label=chat_label(run.scope, await services.repo.chat_name(run.scope)),
            bot_name=services.bot_name,
        )
    )
    ids = [f.id for f in frags]
    detail = {"fragments": ids, **keep_refusals(run)}
    await services.repo.write_diary(run.scope, run.day_text, reply.diary, ids, run.now, detail)
    return StepResult(f"diary of {len(ids)} fragments", detail, committed=True)


# --- step 3: cards ----------------------------------------------------------------------


async def cards(run: DayRun) -> StepResult:
    """The seven cards, updated incrementally from the diary; a notable day -> timeline."""
    services = run.services
    the_diary = await diary_of(run)
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

    kept, refused = await apply_each(run, merged.displaced, keep_displaced)
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
        **keep_refusals(run),
    }
    await services.repo.write_cards(run.scope, run.day_text, contents, timeline, run.now, detail)
    text = f"{len(contents)} cards changed, {kept} old states kept"
    if timeline:
        text += ", timeline +1"
    return StepResult(summary(text, refused), detail, committed=True)


# --- step 4: events -----------------------------------------------------------------------


async def events(run: DayRun) -> StepResult:
    """Long-term events from the day's fragments (not from the diary), with evidence."""
    services = run.services
    the_diary = await diary_of(run)
    if the_diary is None or not the_diary.fragment_ids:
        return StepResult("no fragments", skipped=True)
    frags = await services.repo.fragments_by_ids(run.scope, the_diary.fragment_ids)
    by_id = {f.id: f for f in frags}
    known = [
        m.content
        for m in await services.memories.newest(run.scope, types=["event"], limit=KNOWN_EVENTS)
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

    count, refused = await apply_each(run, reply.events, apply)
    return StepResult(summary(f"{count} events", refused), {"events": count, **keep_refusals(run)})
