"""What the steps share: prompt lines from rows, evidence, resumable item-by-item apply."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from memory_core.prompts.nightly import FragmentLine, StateLine
from memory_core.storage import Diary, Fragment
from memory_core.types import EvidenceRef, Memory

from .context import DayRun

STATE_LIST_LIMIT = 500


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


async def diary_of(run: DayRun) -> Diary | None:
    return await run.services.repo.diary(run.scope, run.day_text)


async def active_states(run: DayRun) -> list[Memory]:
    return await run.services.memories.newest(
        run.scope, types=["state"], status="active", limit=STATE_LIST_LIMIT
    )


async def apply_each(
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


def summary(text: str, refused: Sequence[str]) -> str:
    """The step's one-line summary, with the items it refused to apply."""
    return f"{text}; {len(refused)} refused: {'; '.join(refused)[:300]}" if refused else text


def keep_refusals(run: DayRun) -> dict[str, Any]:
    """The model replies refused before one was accepted, for the step's detail."""
    return {"refused": run.progress["refused"]} if "refused" in run.progress else {}
