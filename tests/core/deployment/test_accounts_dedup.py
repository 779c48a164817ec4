"""Two accounts of one deployment in one group: a message both hear is archived once,
a sender that is one of our accounts is the bot, and a nickname wake is answered by
one process."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from sqlalchemy import select

from memory_core import FakeClock, Incoming, NewExperience, Settings, Yuji
from memory_core.storage.schema import experiences

SCOPE = "group:77"
A, B = "10001", "10002"


async def _ours(core: Yuji) -> None:
    await core.deployment.accounts.connected(A)
    await core.deployment.accounts.connected(B)


def _heard(
    clock: FakeClock,
    account: str,
    fingerprint: str,
    text: str = "今晚吃火锅",
    *,
    sender: str = "555",
    shift: float = 0,
    is_bot: bool = False,
) -> NewExperience:
    return NewExperience(
        scope=SCOPE,
        fingerprint=fingerprint,
        sender_id=sender,
        text=text,
        sent_at=clock.now().replace(microsecond=0) + timedelta(seconds=shift),
        account=account,
        is_bot=is_bot,
    )


async def _rows(core: Yuji) -> list[tuple[str, str, str, bool]]:
    e = experiences.c
    async with core.db.read() as conn:
        result = await conn.execute(
            select(e.fingerprint, e.account, e.text, e.is_bot)
            .where(e.scope == SCOPE)
            .order_by(e.id)
        )
        return [(str(r[0]), str(r[1]), str(r[2]), bool(r[3])) for r in result]


async def test_a_message_two_accounts_hear_is_archived_once(core: Yuji, clock: FakeClock) -> None:
    await _ours(core)
    first = await core.archive.append(_heard(clock, A, "812"))
    again = await core.archive.append(_heard(clock, B, "90417"))
    assert again == first
    assert await _rows(core) == [("812", A, "今晚吃火锅", False)]
    # The other account's backfill of it later: still the one row.
    await core.archive.append(_heard(clock, B, "90417"))
    assert len(await _rows(core)) == 1


async def test_one_account_hearing_it_twice_keeps_both(core: Yuji, clock: FakeClock) -> None:
    await _ours(core)
    await core.archive.append(_heard(clock, A, "1"))
    await core.archive.append(_heard(clock, A, "2"))
    # B heard both too: each is a repeat of one already archived from A.
    await core.archive.append(_heard(clock, B, "71"))
    await core.archive.append(_heard(clock, B, "72"))
    assert [r[0] for r in await _rows(core)] == ["1", "2"]


async def test_different_text_or_instant_is_another_message(core: Yuji, clock: FakeClock) -> None:
    await _ours(core)
    await core.archive.append(_heard(clock, A, "1"))
    await core.archive.append(_heard(clock, B, "71", "今晚吃烧烤"))
    await core.archive.append(_heard(clock, B, "72", shift=1))
    assert [r[0] for r in await _rows(core)] == ["1", "71", "72"]


async def test_one_batch_with_both_copies_keeps_one(core: Yuji, clock: FakeClock) -> None:
    await _ours(core)
    results = await core.archive.repo.insert_many(
        [_heard(clock, A, "1"), _heard(clock, B, "71"), _heard(clock, B, "72", "别的")],
        [clock.now()] * 3,
    )
    assert [r.created for r in results] == [True, False, True]
    assert results[0].id == results[1].id
    assert [r[0] for r in await _rows(core)] == ["1", "72"]


async def test_an_id_another_account_used_is_kept_apart(core: Yuji, clock: FakeClock) -> None:
    await _ours(core)
    await core.archive.append(_heard(clock, A, "5"))
    await core.archive.append(_heard(clock, B, "5", "完全不同的一句"))
    assert [r[0] for r in await _rows(core)] == ["5", f"5@{B}"]
    await core.archive.append(_heard(clock, B, "5", "完全不同的一句"))  # a replay
    assert len(await _rows(core)) == 2


async def test_our_other_account_is_the_bot_and_its_send_is_one_row(
    core: Yuji, clock: FakeClock
) -> None:
    await _ours(core)
    # A's own send (its clock, sub-second) and B hearing it (the server's second).
    sent = _heard(clock, A, "900001", "我在呢", sender=A, is_bot=True)
    sent = replace(sent, sent_at=clock.now().replace(microsecond=400_000))
    await core.archive.append(sent)
    await core.archive.append(_heard(clock, B, "333", "我在呢", sender=A, shift=1))
    # B hearing something A said that A's process never archived: still the bot's.
    await core.archive.append(_heard(clock, B, "334", "另一句", sender=A))
    assert await _rows(core) == [("900001", A, "我在呢", True), ("334", B, "另一句", True)]


async def test_a_copy_is_found_before_either_account_is_recorded(
    core: Yuji, clock: FakeClock
) -> None:
    """Registration loses the race: the first frames of both accounts arrive before
    either process recorded its account (`bot_accounts` is empty throughout)."""
    await core.archive.append(_heard(clock, A, "812"))
    await core.archive.append(_heard(clock, B, "90417"))
    # A's own send (its clock) and B hearing it (the server's second), neither recorded.
    sent = _heard(clock, A, "900001", "我在呢", sender=A, is_bot=True)
    await core.archive.append(replace(sent, sent_at=clock.now().replace(microsecond=400_000)))
    await core.archive.append(_heard(clock, B, "333", "我在呢", sender=A, shift=1))
    assert await _rows(core) == [("812", A, "今晚吃火锅", False), ("900001", A, "我在呢", True)]
    assert not await core.deployment.accounts.is_ours(B)  # still nobody recorded
    # The accounts are recorded late: nothing changes for what was already decided.
    await _ours(core)
    await core.archive.append(_heard(clock, B, "90417"))
    assert len(await _rows(core)) == 2


async def test_a_single_account_pays_no_dedup(core: Yuji, clock: FakeClock) -> None:
    await core.deployment.accounts.connected(A)
    await core.archive.append(_heard(clock, A, "1"))
    await core.archive.append(_heard(clock, A, "2"))
    assert len(await _rows(core)) == 2


def _wake(
    clock: FakeClock, self_id: str, text: str = "大肥鱼在吗", sender: str = "555"
) -> Incoming:
    return Incoming(
        scope=SCOPE,
        fingerprint="1",
        sender_id=sender,
        sender_name="群友",
        text=text,
        sent_at=clock.now().replace(microsecond=0),
        self_id=self_id,
        is_private=False,
        reply_to_bot=False,
    )


async def _no_send(_text: str) -> str | None:
    return None


async def test_a_nickname_wake_is_answered_once(core: Yuji, clock: FakeClock) -> None:
    await _ours(core)
    first = await core.chat.respond(_wake(clock, A), _no_send)
    second = await core.chat.respond(_wake(clock, B), _no_send)
    assert first.kind == "no_model"  # the winner goes on to answer (no model here)
    assert second.kind == "answered_elsewhere"
    # Another message: a new claim.
    assert (await core.chat.respond(_wake(clock, B, "大肥鱼吃了吗"), _no_send)).kind == "no_model"


async def test_our_accounts_never_wake_each_other(core: Yuji, clock: FakeClock) -> None:
    await _ours(core)
    outcome = await core.chat.respond(_wake(clock, B, "大肥鱼在这", sender=A), _no_send)
    assert outcome.kind == "silent"


async def test_claims_and_accounts_are_shared_between_cores(
    core: Yuji, clock: FakeClock, tmp_path: Path
) -> None:
    other_settings = core.settings
    if core.settings.database_url:
        other_settings = Settings(
            data_dir=tmp_path / "other", database_url=core.settings.database_url
        )
    other = await Yuji.open(other_settings, clock=clock)
    try:
        at = clock.now()
        assert await core.deployment.claim(SCOPE, "555", at, "大肥鱼", A)
        assert not await other.deployment.claim(SCOPE, "555", at, "大肥鱼", B)
        await other.deployment.accounts.connected(B)
        await core.deployment.accounts.refresh()
        assert await core.deployment.is_ours(B)
        assert not await core.deployment.is_ours("555")
    finally:
        await other.close()
