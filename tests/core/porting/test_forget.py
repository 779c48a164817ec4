"""Forgetting a person: nothing of them is recallable or shown, others stay, audited."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, text

from memory_core import EvidenceRef, FakeClock, NewExperience, Yuji
from memory_core.cli import main
from memory_core.errors import AppendOnlyViolation
from memory_core.ops.backup import verify_backup
from memory_core.ops.pg_backup import tools_for, verify_pg_backup
from memory_core.porting.forget import Forgetting
from memory_core.storage.chat.chat_repo import InjectedItem
from memory_core.storage.consolidation.consolidation_repo import ConsolidationRepo, Cut
from memory_core.storage.nightly.nightly_repo import NightlyRepo
from memory_core.storage.porting import redaction_repo
from memory_core.storage.porting.redaction_repo import TOMBSTONE
from memory_core.storage.postgres import pg_dump, pg_server
from memory_core.storage.schema import experiences, forget_requests, redactions

T0 = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)
HERE, THERE = "group:1", "group:2"
PNG_MINE, PNG_SHARED = b"\x89PNG mine", b"\x89PNG shared"


async def _say(core: Yuji, scope: str, fp: str, sender: str, name: str, said: str) -> int:
    return await core.archive.append(
        NewExperience(scope, fp, sender, said, sent_at=T0, sender_name=name, segments=[])
    )


async def _image(core: Yuji, experience_id: int, data: bytes) -> Path:
    sha = core.archive.store.put(data)
    attachment = await core.archive.repo.record_attachment(
        sha256=sha, mime="image/png", size=len(data), url="http://127.0.0.1/x.png", at=T0
    )
    await core.archive.repo.link(experience_id, attachment, 0)
    return core.archive.store.path_for(sha)


def _exists(path: object) -> bool:
    return Path(str(path)).exists()


async def _write(core: Yuji, scope: str, subject: str, content: str, *evidence: int) -> int:
    outcome = await core.memories.write(
        scope,
        type="fact",
        subject=subject,
        content=content,
        evidence=[EvidenceRef(experience_id=e) for e in evidence],
    )
    return outcome.memory.id


async def _chat(core: Yuji) -> dict[str, object]:
    """Two members in group 1 (小明 = 42, also 明明; 阿花 = 43) and 小明 in group 2."""
    m1 = await _say(core, HERE, "a1", "42", "小明", "我养了一只猫叫煤球")
    m2 = await _say(core, HERE, "a2", "42", "小明同学", "周末去爬山")
    h1 = await _say(core, HERE, "a3", "43", "阿花", "我住在杭州")
    h2 = await _say(core, HERE, "a4", "43", "阿花", "小明说的那座山很美")
    t1 = await _say(core, THERE, "b1", "42", "小明", "我在二群也养猫")
    mine = await _image(core, m1, PNG_MINE)
    shared = await _image(core, m2, PNG_SHARED)
    await _image(core, h1, PNG_SHARED)
    await core.memories.add_alias(HERE, "明明", "小明")
    about = await _write(core, HERE, "小明", "小明养了一只猫叫煤球", m1)
    by_alias = await _write(core, HERE, "明明", "明明爱吃鱼", h1)
    only_theirs = await _write(core, HERE, "group", "群里周末要去爬山", m2)
    hers = await _write(core, HERE, "阿花", "阿花住在杭州", h1)
    mixed = await _write(core, HERE, "group", "那座山很美", m2, h2)
    there = await _write(core, THERE, "小明", "小明在二群也养猫", t1)
    await core.porting.packs.restore_cards(
        HERE, "preferences", [("小明喜欢猫\n阿花喜欢杭州", "2026-11-19")], T0
    )
    await core.chat_state.add_injection(
        HERE,
        trigger_experience_id=m1,
        reply_fingerprint="r1",
        query="我养了一只猫叫煤球",
        items=[InjectedItem(about, "lexical", 0.9, "小明 named", cited=False)],
        now=T0,
    )
    return {
        "about": about,
        "by_alias": by_alias,
        "only_theirs": only_theirs,
        "hers": hers,
        "mixed": mixed,
        "there": there,
        "mine": mine,
        "shared": shared,
    }


async def test_nothing_of_them_remains_visible_and_others_stay(
    core: Yuji, clock: FakeClock
) -> None:
    made = await _chat(core)
    report = await core.porting.forget_person(HERE, "42", requested_by="42")

    assert set(report.memory_ids) == {made["about"], made["by_alias"], made["only_theirs"]}
    assert report.memories_retracted == 3
    assert (report.messages_redacted, report.messages_total, report.files_deleted) == (2, 2, 1)
    assert {"42", "小明", "小明同学", "明明"} <= set(report.names)

    active = {m.id for m in await core.memories.newest(HERE)}
    assert active == {made["hers"], made["mixed"]}
    for question in ("小明养猫吗", "明明爱吃什么", "周末去哪爬山"):
        recalled = await core.recall.recall(HERE, question, now=clock.now())
        assert all(r.memory.id in active for r in recalled.items), question
    mine = [e for e in await core.archive.after(HERE, 0, 100) if e.sender_id == "42"]
    assert [(e.text, e.segments, e.sender_name) for e in mine] == [(TOMBSTONE, [], "")] * 2
    assert [e.text for e in await core.archive.after(HERE, 0, 100) if e.sender_id == "43"] == [
        "我住在杭州",
        "小明说的那座山很美",
    ]
    assert not _exists(made["mine"])
    assert _exists(made["shared"])  # 阿花 posted the same picture

    cards = await core.chat_commands.cards(HERE)
    assert "小明" not in cards
    assert "阿花喜欢杭州" in cards
    why = await core.chat_commands.why(HERE)
    assert "煤球" not in why
    assert "小明" not in why
    pack = json.dumps(await core.porting.export(HERE), ensure_ascii=False)
    for trace in ("煤球", "周末去爬山", "明明爱吃鱼", "小明同学", '"sender_id": "42"', "明明"):
        assert trace not in pack, trace
    assert "阿花住在杭州" in pack
    # What others said stays theirs, even when it names the person.
    assert "小明说的那座山很美" in pack

    # Another chat is untouched.
    there = await core.memories.get(THERE, int(str(made["there"])))
    assert there.status == "active"
    assert [e.text for e in await core.archive.after(THERE, 0, 10)] == ["我在二群也养猫"]

    # The audit: one request, one redaction row per message, and nothing else may write.
    async with core.db.read() as conn:
        rows = (await conn.execute(select(forget_requests))).mappings().all()
        audited = await conn.scalar(select(func.count()).select_from(redactions))
    assert [(r["scope"], r["user_id"], r["state"]) for r in rows] == [(HERE, "42", "done")]
    assert audited == 2


@pytest.mark.parametrize(
    "statement",
    [
        # a redacted message cannot be rewritten into anything but the tombstone
        "UPDATE experiences SET text = 'rewritten' WHERE sender_id = '42' AND scope = 'group:1'",
        "UPDATE experiences SET scope = 'group:9' WHERE sender_id = '42' AND scope = 'group:1'",
        # the tombstone write of a message without an audit row is refused
        f"UPDATE experiences SET text = '{TOMBSTONE}', segments = '[]', sender_name = '' "
        "WHERE sender_id = '43'",
        "DELETE FROM redactions",
        "UPDATE redactions SET experience_id = 1",
    ],
)
async def test_only_the_audited_tombstone_write_is_allowed(core: Yuji, statement: str) -> None:
    await _chat(core)
    await core.porting.forget_person(HERE, "42", requested_by="cli")
    with pytest.raises(AppendOnlyViolation, match="append-only"):
        async with core.db.write() as conn:
            await conn.execute(text(statement))


async def test_an_interrupted_run_completes_on_rerun(
    core: Yuji, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = await _chat(core)
    for n in range(5):
        await _say(core, HERE, f"x{n}", "42", "小明", f"第{n}句")
    monkeypatch.setattr(redaction_repo, "CHUNK", 2)

    async def crash(self: Forgetting, scope: str, user_id: str) -> int:
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(Forgetting, "_delete_files", crash)
        with pytest.raises(KeyboardInterrupt):
            await core.porting.forget_person(HERE, "42", requested_by="cli")
    async with core.db.read() as conn:
        state = await conn.scalar(select(forget_requests.c.state))
    assert state == "running"
    report = await core.porting.forget_person(HERE, "42", requested_by="cli")
    assert report.messages_total == 7
    assert report.files_deleted == 1
    assert not _exists(made["mine"])
    async with core.db.read() as conn:
        requests = (await conn.execute(select(forget_requests.c.id, forget_requests.c.state))).all()
        audited = await conn.scalar(select(func.count()).select_from(redactions))
    assert [s for _, s in requests] == ["done"]
    assert audited == 7


async def test_forget_me_needs_two_asks_within_a_minute(core: Yuji, clock: FakeClock) -> None:
    made = await _chat(core)
    first = await core.porting.forget_me(HERE, "42")
    assert "再发一次" in first
    clock.advance(timedelta(seconds=61))
    assert "再发一次" in await core.porting.forget_me(HERE, "42")  # too late: asks again
    assert (await core.memories.get(HERE, int(str(made["about"])))).status == "active"
    clock.advance(timedelta(seconds=30))
    done = await core.porting.forget_me(HERE, "42")
    assert "忘掉你了" in done
    assert (await core.memories.get(HERE, int(str(made["about"])))).status == "retracted"


def test_cli_forget_person(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("YUJI_DATA_DIR", str(tmp_path / "data"))
    assert main(["forget-person", "--scope", HERE, "--user", "42"]) == 0
    assert "已在 group:1 忘掉 42" in capsys.readouterr().out
    assert main(["forget-person", "--scope", HERE, "--user", "abc"]) == 2


async def test_the_nightly_card_step_takes_them_out_again(core: Yuji) -> None:
    await _chat(core)
    await core.porting.forget_person(HERE, "42", requested_by="42")
    # The nightly model writes a card from older material that still names them.
    await core.porting.packs.restore_cards(
        HERE, "relationships", [("明明和阿花是好朋友\n阿花常来", "2026-11-21")], T0
    )
    assert core.nightly.after_cards is not None
    assert await core.nightly.after_cards(HERE) == 1
    cards = await core.chat_commands.cards(HERE)
    assert "明明" not in cards
    assert "阿花常来" in cards


def _holds(path: Path, said: str) -> bool:
    return any(
        Path(f"{path}{suffix}").is_file() and said.encode() in Path(f"{path}{suffix}").read_bytes()
        for suffix in ("", "-wal")
    )


async def _backup_holds(core: Yuji, backup: Path, said: str) -> bool:
    """SQLite's backup holds the words in its bytes; a dump (compressed) is restored
    into a scratch database and searched."""
    if not backup.name.endswith(".dump"):
        return _holds(backup, said)
    url = core.db.url
    tools = await tools_for(url, core.settings.pg_dump)
    async with pg_server.scratch_database(url, "test") as scratch:
        await asyncio.to_thread(pg_dump.restore, tools, backup, scratch)
        async with pg_server.connected(scratch) as conn:
            found = await conn.execute(
                select(func.count()).where(experiences.c.text.contains(said))
            )
            return bool(found.scalar_one())


async def test_old_backups_are_named_and_redact_rewrites_them(core: Yuji) -> None:
    await _chat(core)
    said = "我养了一只猫叫煤球"  # 小明's own words (no memory quotes them verbatim)
    made = await core.ops.backup(reason="test")
    assert made.ok
    backup = core.settings.backups_dir / made.file
    assert await _backup_holds(core, backup, said)

    report = await core.porting.forget_person(HERE, "42", requested_by="42")
    assert report.backups == (str(backup),)
    if core.db.is_sqlite:
        assert not _holds(core.settings.database_path, said)  # live file and its log

    results = await core.porting.redact_backups()
    assert [(r.path, r.ok) for r in results] == [(backup, True)]
    assert not await _backup_holds(core, backup, said)
    if backup.name.endswith(".dump"):
        checks, manifest = await verify_pg_backup(
            backup, core.db.url, await tools_for(core.db.url, core.settings.pg_dump)
        )
    else:
        checks, manifest = verify_backup(backup)
    assert all(c.ok for c in checks), checks
    assert manifest is not None
    assert "redacted" in [c.name for c in manifest.checks]


@pytest.mark.sqlite_only("a dump beside a SQLite store: no server to rewrite it on")
async def test_a_dump_without_a_server_to_rewrite_it_on_is_named_unchanged(core: Yuji) -> None:
    await _chat(core)
    await core.porting.forget_person(HERE, "42", requested_by="42")
    folder = core.settings.backups_dir
    folder.mkdir(parents=True, exist_ok=True)
    dump = folder / "yuji-20261120T120000Z.dump"
    dump.write_bytes(b"PGDMP old")
    (folder / "yuji-20261120T120000Z.json").write_text(
        json.dumps(
            {
                "file": dump.name,
                "created_at": T0.isoformat(),
                "finished_at": T0.isoformat(),
                "ok": True,
                "checks": [],
            }
        )
    )
    results = await core.porting.redact_backups()
    assert [(r.path, r.ok) for r in results] == [(dump, False)]
    assert "left unchanged, still holds them" in results[0].detail
    assert dump.read_bytes() == b"PGDMP old"


async def test_the_console_shows_nothing_of_them_and_cannot_bring_them_back(core: Yuji) -> None:
    from memory_core.console.views import Actor
    from memory_core.errors import NotFound, ValidationError
    from memory_core.storage.console.console_repo import MemoryFilter

    made = await _chat(core)
    # Retracted by an admin before the request: forgotten all the same.
    await core.memories.retract(HERE, int(str(made["about"])), reason="错的", changed_by="admin")
    await core.porting.forget_person(HERE, "42", requested_by="42")
    page = await core.console.memory_page(HERE, MemoryFilter(status=None))
    assert {m.id for m in page.items} == {made["hers"], made["mixed"]}
    for key in ("about", "by_alias", "only_theirs"):
        with pytest.raises(NotFound):
            await core.console.memory(HERE, int(str(made[key])))
        with pytest.raises(ValidationError):
            await core.console.act(
                HERE, int(str(made[key])), "restore", Actor("127.0.0.1", "session")
            )
    exported = await core.porting.export(HERE)
    assert {m["id"] for m in exported["memories"]} == {made["hers"], made["mixed"]}


@pytest.mark.parametrize("read", ["fragments_naming", "latest_cards"])
async def test_two_forget_runs_at_once_keep_each_others_removals(
    core: Yuji, monkeypatch: pytest.MonkeyPatch, read: str
) -> None:
    """Run A (小明) reads the summaries or the cards, then run B (阿花) forgets in full,
    then A writes: A must scrub what B left, never write back its stale read (which
    would bring 阿花's sentence back, or take B's card version number)."""
    await _chat(core)
    consolidation = ConsolidationRepo(core.db)
    batch = await consolidation.create(HERE, Cut(1, 4, 4, 40), "t", T0)
    assert batch is not None
    await consolidation.delivered(batch.id, T0)
    summary = "小明养了一只猫。阿花住在杭州。大家周末去爬山。"
    await consolidation.acknowledge(batch.id, "t", "extracted", summary, T0)

    repo = core.porting.forgetting.repo
    real = getattr(repo, read)
    interleaved: list[bool] = []

    async def read_then_let_b_run(*args: Any, **kwargs: Any) -> Any:
        got = await real(*args, **kwargs)
        if not interleaved:
            interleaved.append(True)
            await core.porting.forget_person(HERE, "43", requested_by="43")
        return got

    monkeypatch.setattr(repo, read, read_then_let_b_run)
    report = await core.porting.forget_person(HERE, "42", requested_by="42")

    assert interleaved
    assert (report.summaries_rewritten, report.cards_rewritten) == (1, 1)
    fragments = await consolidation.fragments(HERE)
    assert [f.summary for f in fragments] == ["大家周末去爬山。"]
    newest = await NightlyRepo(core.db, core.memory_repo).current_cards(HERE)
    assert "小明" not in newest["preferences"].content
    assert "阿花" not in newest["preferences"].content
    history = await NightlyRepo(core.db, core.memory_repo).card_history(HERE, "preferences")
    assert [c.version for c in history] == list(range(1, len(history) + 1))
