"""Backfill against fake history endpoints shaped like NapCat, LLOneBot, Lagrange, go-cqhttp."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from memory_core import FakeClock, Yuji
from memory_core.chat.backfill import backfill_group, fetch_history
from memory_core.chat.fake import FakeArchive
from memory_core.settings import LiveSettings
from memory_core.types import NewExperience, group_scope

GROUP = 555
SCOPE = group_scope(GROUP)


def history(n: int, first_id: int = 1) -> list[dict[str, Any]]:
    return [
        {
            "message_id": i,
            "message_seq": i,
            "time": 1_795_000_000 + i,
            "sender": {"user_id": 200 + i % 3, "nickname": f"u{i % 3}", "card": ""},
            "message": [{"type": "text", "data": {"text": f"消息{i}"}}],
        }
        for i in range(first_id, first_id + n)
    ]


def parse(item: Mapping[str, Any]) -> NewExperience | None:
    if "message_id" not in item:
        return None
    return NewExperience(
        scope=SCOPE,
        fingerprint=str(item["message_id"]),
        sender_id=str(item["sender"]["user_id"]),
        sender_name=item["sender"]["nickname"],
        text=item["message"][0]["data"]["text"],
        segments=item["message"],
        sent_at=datetime.fromtimestamp(item["time"], UTC),
    )


class NapCat:
    """`message_seq` = a message id (inclusive, newest when absent), `count`."""

    def __init__(self, messages: list[dict[str, Any]], page_cap: int = 20) -> None:
        self.messages = messages
        self.page_cap = page_cap
        self.calls: list[dict[str, Any]] = []

    async def __call__(self, action: str, **params: Any) -> Any:
        self.calls.append(params)
        assert action == "get_group_msg_history"
        count = min(int(params.get("count", 20)), self.page_cap)
        anchor = params.get("message_seq")
        older = [m for m in self.messages if anchor is None or m["message_id"] <= int(anchor)]
        return {"messages": older[-count:]}


class Lagrange(NapCat):
    """Refuses `message_seq`; pages by `message_id`."""

    async def __call__(self, action: str, **params: Any) -> Any:
        self.calls.append(params)
        if "message_seq" in params:
            raise RuntimeError("ActionFailed retcode=200: unknown parameter")
        count = min(int(params.get("count", 20)), self.page_cap)
        anchor = params.get("message_id")
        older = [m for m in self.messages if anchor is None or m["message_id"] <= int(anchor)]
        return {"messages": older[-count:]}


async def test_napcat_pages_back_to_the_limit_and_stores_only_new(core: Yuji) -> None:
    msgs = history(120)
    for item in msgs[-30:]:  # the newest 30 were heard live already
        exp = parse(item)
        assert exp is not None
        await core.archive.append(exp)
    peer = NapCat(msgs)
    report = await backfill_group(
        GROUP, scope=SCOPE, call_api=peer, parse=parse, archive=core.archive, limit=100
    )
    assert (report.fetched, report.new, report.duplicates) == (100, 70, 30)
    assert report.error is None
    assert peer.calls[0] == {"group_id": GROUP, "count": 50, "reverse_order": False}
    assert all(c.get("message_seq") is not None for c in peer.calls[1:])
    stored = await core.archive.recent(SCOPE, 500)
    assert len(stored) == 100
    assert {e.fingerprint for e in stored} == {str(i) for i in range(21, 121)}
    assert sum(1 for e in stored if e.source == "backfill") == 70

    again = await backfill_group(
        GROUP, scope=SCOPE, call_api=NapCat(msgs), parse=parse, archive=core.archive, limit=100
    )
    assert (again.new, again.duplicates) == (0, 100)


async def test_lagrange_style_is_used_when_message_seq_is_refused(core: Yuji) -> None:
    peer = Lagrange(history(45))
    report = await backfill_group(
        GROUP, scope=SCOPE, call_api=peer, parse=parse, archive=core.archive, limit=200
    )
    assert (report.fetched, report.new) == (45, 45)
    assert any("message_id" in c for c in peer.calls)


async def test_the_limit_is_capped_at_200() -> None:
    items, _, _ = await fetch_history(GROUP, call_api=NapCat(history(500), 50), limit=10_000)
    assert len(items) == 200


async def test_an_implementation_without_the_api_gives_an_error_not_an_exception(
    core: Yuji,
) -> None:
    async def failing(action: str, **params: Any) -> Any:
        raise RuntimeError("ActionFailed retcode=1404: unsupported action")

    report = await backfill_group(
        GROUP, scope=SCOPE, call_api=failing, parse=parse, archive=core.archive, limit=50
    )
    assert (report.fetched, report.new) == (0, 0)
    assert report.error is not None
    assert "unavailable" in report.error


@pytest.mark.parametrize("answer", [None, {}, {"messages": []}, [], "ok"])
async def test_empty_or_odd_answers_store_nothing(core: Yuji, answer: Any) -> None:
    async def odd(action: str, **params: Any) -> Any:
        return answer

    report = await backfill_group(
        GROUP, scope=SCOPE, call_api=odd, parse=parse, archive=core.archive, limit=50
    )
    assert (report.fetched, report.new, report.duplicates) == (0, 0, 0)
    assert await core.archive.max_id(SCOPE) == 0


async def test_an_anchor_that_is_ignored_stops_instead_of_looping(core: Yuji) -> None:
    calls = 0

    async def always_newest(action: str, **params: Any) -> Any:
        nonlocal calls
        calls += 1
        return {"messages": history(20, first_id=81)}

    report = await backfill_group(
        GROUP, scope=SCOPE, call_api=always_newest, parse=parse, archive=core.archive, limit=200
    )
    assert report.fetched == 20
    assert calls == 2


async def test_a_failure_mid_way_keeps_what_was_fetched(core: Yuji) -> None:
    peer = NapCat(history(100), page_cap=20)
    original = peer.__call__

    async def flaky(action: str, **params: Any) -> Any:
        anchored = params.get("message_seq") or params.get("message_id")
        if anchored is not None and len(peer.calls) >= 2:
            raise RuntimeError("timeout")
        return await original(action, **params)

    report = await backfill_group(
        GROUP, scope=SCOPE, call_api=flaky, parse=parse, archive=core.archive, limit=200
    )
    assert report.new == 39  # two pages of 20 overlapping by the anchor message
    assert report.error is not None


async def test_malformed_items_and_other_groups_are_skipped(core: Yuji) -> None:
    items = [*history(3), {"garbage": True}, {"message_id": "x", "time": "?"}]

    def strict(item: Mapping[str, Any]) -> NewExperience | None:
        if item.get("message_id") == "x":
            raise KeyError("sender")
        return parse(item)

    async def api(action: str, **params: Any) -> Any:
        return {"messages": items} if params.get("message_seq") is None else {"messages": []}

    report = await backfill_group(
        GROUP, scope=SCOPE, call_api=api, parse=strict, archive=core.archive, limit=200
    )
    assert (report.fetched, report.new, report.skipped) == (3, 3, 2)


async def heard_live(core: Yuji, items: list[dict[str, Any]]) -> None:
    for item in items:
        exp = parse(item)
        assert exp is not None
        await core.archive.append(exp)


async def test_catch_up_pages_back_to_the_last_message_heard_before_the_gap(core: Yuji) -> None:
    # Defect 7: a kill lost 225 of 353 messages; the newest-200 backfill left 25 behind.
    msgs = history(353)
    await heard_live(core, msgs[:128])
    peer = NapCat(msgs, page_cap=50)
    report = await core.chat.catch_up(
        GROUP, call_api=peer, parse=parse, heard_before=core.clock.now() + timedelta(seconds=1)
    )
    stored = {e.fingerprint for e in await core.archive.recent(SCOPE, 1000)}
    assert stored == {str(i) for i in range(1, 354)}
    assert report.new == 225
    assert report.caught_up
    # It stopped at the page holding message 128 instead of paging the whole history.
    assert len(peer.calls) <= 6


async def test_catch_up_ignores_what_was_heard_after_the_reconnect(core: Yuji) -> None:
    msgs = history(300)
    await heard_live(core, msgs[:100])
    reconnected = core.clock.now() + timedelta(seconds=1)
    core.clock.advance(timedelta(seconds=5))  # type: ignore[attr-defined]
    await heard_live(core, msgs[-3:])  # live again before the catch-up ran
    report = await core.chat.catch_up(
        GROUP, call_api=NapCat(msgs, page_cap=50), parse=parse, heard_before=reconnected
    )
    assert report.new == 197
    assert len(await core.archive.recent(SCOPE, 1000)) == 300


async def test_catch_up_stops_at_its_bound_and_says_so(core: Yuji) -> None:
    msgs = history(600)
    await heard_live(core, msgs[:10])
    small = core.settings.with_changes(backfill_catchup_max=100)
    core.chat.live = LiveSettings(small)
    report = await core.chat.catch_up(
        GROUP,
        call_api=NapCat(msgs, page_cap=50),
        parse=parse,
        heard_before=core.clock.now() + timedelta(seconds=1),
    )
    assert report.new == 100
    assert not report.caught_up
    assert report.error is not None


async def test_catch_up_of_a_chat_never_heard_fetches_one_bounded_page_run(core: Yuji) -> None:
    report = await core.chat.catch_up(
        GROUP,
        call_api=NapCat(history(500), page_cap=50),
        parse=parse,
        heard_before=core.clock.now(),
    )
    assert report.new == core.settings.backfill_max


async def test_backfill_needs_only_its_archive_port() -> None:
    archive = FakeArchive(FakeClock(datetime(2026, 11, 20, tzinfo=UTC)))
    msgs = history(30)
    report = await backfill_group(
        GROUP, scope=SCOPE, call_api=NapCat(msgs), parse=parse, archive=archive, limit=100
    )
    assert (report.fetched, report.new, report.duplicates) == (30, 30, 0)
    again = await backfill_group(
        GROUP, scope=SCOPE, call_api=NapCat(msgs), parse=parse, archive=archive, limit=100
    )
    assert (again.new, again.duplicates) == (0, 30)
    assert len(archive.rows) == 30
