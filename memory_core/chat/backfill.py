"""Backfill, fetching what the archive missed (docs/design.md#from-the-socket-to-the-archive).

`get_group_msg_history` goes through an injected `call_api(action, **params)`, so
the core never touches a bot. Implementations disagree on its parameters:

- NapCat: `message_seq` (a message id; absent = newest), `count`, `reverse_order`;
- LLOneBot: `message_seq` (a message id), `count`;
- Lagrange.OneBot: `message_id`, `count`;
- go-cqhttp lineage: `message_seq` (a real sequence number), fixed page size.

Each parameter style is tried in that order until one answers with a message list;
the one that worked pages backwards (the oldest message of a page anchors the next)
until `limit` messages, an empty page, or a page with nothing unseen. A catch-up
run (`until`, the last message archived before a reconnect) pages on until a page
reaches that message, within `MAX_CATCHUP`; the report says whether it got there. Errors and
empty answers end the run with what was fetched so far, never with an exception.
Every message is deduplicated by fingerprint through the archive and stored with
source `backfill`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol, cast

from memory_core.types import Experience, NewExperience

log = logging.getLogger("yuji.backfill")

CallApi = Callable[..., Awaitable[Any]]
ParseMessage = Callable[[Mapping[str, Any]], NewExperience | None]
"""History item (a OneBot message object) -> experience of this group, or None to skip."""

MAX_BACKFILL = 200
PAGE_SIZE = 50
MAX_PAGES = 40
MAX_CATCHUP = PAGE_SIZE * MAX_PAGES
HISTORY_API = "get_group_msg_history"


class BackfillArchive(Protocol):
    async def append_many(self, exps: Sequence[NewExperience]) -> list[int]: ...

    async def by_fingerprint(self, scope: str, fingerprint: str) -> Experience | None: ...


@dataclass(frozen=True, slots=True)
class BackfillReport:
    scope: str
    fetched: int
    new: int
    duplicates: int
    skipped: int = 0
    """Items that could not be read as messages."""
    pages: int = 0
    error: str | None = None
    """Why fetching stopped early (the counts are still what was stored)."""
    caught_up: bool = True
    """A catch-up run reached the last known message (False: the bound stopped it)."""


@dataclass(frozen=True, slots=True)
class _Style:
    name: str
    anchor_param: str
    anchor_fields: tuple[str, ...]
    extra: tuple[tuple[str, Any], ...] = ()
    sends_count: bool = True

    def params(self, group_id: int, count: int, anchor: Any | None) -> dict[str, Any]:
        params: dict[str, Any] = {"group_id": group_id, **dict(self.extra)}
        if self.sends_count:
            params["count"] = count
        if anchor is not None:
            params[self.anchor_param] = anchor
        return params

    def anchor_of(self, item: Mapping[str, Any]) -> Any | None:
        for name in self.anchor_fields:
            value = item.get(name)
            if value not in (None, "", 0):
                return value
        return None


STYLES: tuple[_Style, ...] = (
    _Style("napcat", "message_seq", ("message_id", "message_seq"), (("reverse_order", False),)),
    _Style("lagrange", "message_id", ("message_id",)),
    _Style("gocq", "message_seq", ("message_seq", "message_id"), sends_count=False),
)


async def backfill_group(
    group_id: int,
    *,
    scope: str,
    call_api: CallApi,
    parse: ParseMessage,
    archive: BackfillArchive,
    limit: int,
    until: Experience | None = None,
) -> BackfillReport:
    limit = _bound(limit, until)
    items, pages, error = await fetch_history(group_id, call_api=call_api, limit=limit, until=until)
    caught_up = until is None or any(_reaches(item, until) for item in items)
    if not caught_up and error is None:
        error = f"stopped at {limit} messages before reaching the last one archived"
    exps: list[NewExperience] = []
    skipped = 0
    for item in items:
        try:
            exp = parse(item)
        except Exception as exc:  # a malformed item never loses the rest
            log.warning("backfill %s: unreadable history item skipped: %s", scope, exc)
            exp = None
        if exp is None or exp.scope != scope:
            skipped += 1
            continue
        exps.append(replace(exp, source="backfill"))
    unique = _unique(exps)[-limit:] if limit else []
    new = [exp for exp in unique if await archive.by_fingerprint(scope, exp.fingerprint) is None]
    if new:
        await archive.append_many(new)
    report = BackfillReport(
        scope=scope,
        fetched=len(unique),
        new=len(new),
        duplicates=len(unique) - len(new),
        skipped=skipped,
        pages=pages,
        error=error,
        caught_up=caught_up,
    )
    log.info(
        "backfill %s: fetched %d, new %d, duplicates %d, skipped %d, pages %d%s",
        scope,
        report.fetched,
        report.new,
        report.duplicates,
        report.skipped,
        report.pages,
        f" ({error})" if error else "",
    )
    return report


async def fetch_history(
    group_id: int, *, call_api: CallApi, limit: int, until: Experience | None = None
) -> tuple[list[Mapping[str, Any]], int, str | None]:
    """Pages of history, newest page first; (items, pages fetched, error or None)."""
    limit = _bound(limit, until)
    if limit <= 0:
        return [], 0, None
    items, pages, error = await _pages(group_id, call_api, limit, until)
    return sorted(items, key=_order)[-limit:], pages, error


def _bound(limit: int, until: Experience | None) -> int:
    return max(0, min(limit, MAX_BACKFILL if until is None else MAX_CATCHUP))


def _reaches(item: Mapping[str, Any], known: Experience) -> bool:
    """The item is the known message, or older than it."""
    return _key(item) == known.fingerprint or _number(item.get("time")) < known.sent_at.timestamp()


async def _pages(
    group_id: int, call_api: CallApi, limit: int, until: Experience | None
) -> tuple[list[Mapping[str, Any]], int, str | None]:
    styles = list(STYLES)
    seen: set[str] = set()
    collected: list[Mapping[str, Any]] = []
    anchor: Any | None = None
    pages = 0
    while True:
        page, error = await _page(group_id, call_api, styles, min(PAGE_SIZE, limit), anchor)
        if page is None:
            return collected, pages, error
        pages += 1
        fresh = [item for item in page if _key(item) not in seen]
        if not fresh:
            return collected, pages, None
        seen.update(_key(item) for item in fresh)
        collected.extend(fresh)
        anchor = styles[0].anchor_of(min(page, key=_order))
        if len(collected) >= limit or anchor is None or pages >= MAX_PAGES:
            return collected, pages, None
        if until is not None and any(_reaches(item, until) for item in fresh):
            return collected, pages, None


async def _page(
    group_id: int, call_api: CallApi, styles: list[_Style], count: int, anchor: Any | None
) -> tuple[list[Mapping[str, Any]] | None, str | None]:
    """One page in the first style that answers; that style moves to the front."""
    errors: list[str] = []
    for style in list(styles):
        try:
            page = _messages(await call_api(HISTORY_API, **style.params(group_id, count, anchor)))
        except Exception as exc:
            errors.append(f"{style.name}: {exc}")
            continue
        if page is None:
            errors.append(f"{style.name}: no message list")
            continue
        styles.remove(style)
        styles.insert(0, style)
        return page, None
    return None, f"{HISTORY_API} unavailable ({'; '.join(errors)})"


def _messages(result: Any) -> list[Mapping[str, Any]] | None:
    """The message list of an answer, whatever the wrapping; None when there is none."""
    if isinstance(result, Mapping):
        mapping = cast(Mapping[str, Any], result)
        for key in ("messages", "data"):
            if key in mapping:
                return _messages(mapping[key])
        return None
    if isinstance(result, list):
        items = cast(list[Any], result)
        return [cast(Mapping[str, Any], i) for i in items if isinstance(i, Mapping)]
    return None


def _key(item: Mapping[str, Any]) -> str:
    return str(item.get("message_id", item.get("message_seq", id(item))))


def _order(item: Mapping[str, Any]) -> tuple[float, float]:
    return (_number(item.get("time")), _number(item.get("message_seq", item.get("message_id"))))


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _unique(exps: Sequence[NewExperience]) -> list[NewExperience]:
    by_fingerprint: dict[str, NewExperience] = {}
    for exp in exps:
        by_fingerprint.setdefault(exp.fingerprint, exp)
    return sorted(by_fingerprint.values(), key=lambda e: (e.sent_at, _number(e.fingerprint)))
