"""Memory packs: a round trip keeps every memory's text, validity and relations."""

from __future__ import annotations

import asyncio
import json
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import EvidenceRef, FakeClock, NewExperience, Settings, Yuji
from memory_core.cli import main
from memory_core.porting.pack import PackError, read_pack
from memory_core.types import MemoryStatus, RelationKind

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
SOURCE, TARGET = "group:1", "group:2"


def canonical(pack: dict[str, Any]) -> dict[str, Any]:
    """What must survive a round trip, with ids replaced by positions."""
    order = {m["id"]: i for i, m in enumerate(pack["memories"])}
    relations: set[tuple[int, int, str]] = set()
    for r in pack["relations"]:
        a, b = order[r["src"]], order[r["dst"]]
        if r["kind"] == "contradicts":
            a, b = min(a, b), max(a, b)
        relations.add((a, b, r["kind"]))
    return {
        "memories": [
            (
                m["type"],
                m["subject"],
                m["content"],
                m["status"],
                m["valid_from"],
                m["valid_to"],
                [v["content"] for v in m["versions"] if v["content"]],
                sorted(e["quote"]["text"] for e in m["evidence"] if "quote" in e),
            )
            for m in pack["memories"]
        ],
        "relations": sorted(relations),
        "aliases": sorted((a["alias"], a["canonical"]) for a in pack["aliases"]),
        "cards": sorted((c["kind"], c["content"]) for c in pack["cards"]),
        "diaries": [(d["day"], d["content"]) for d in pack["diaries"]],
        "timeline": [(t["day"], t["content"]) for t in pack["timeline"]],
    }


def _versions_collapsed(memories: list[Any]) -> list[Any]:
    """Replayed history drops consecutive repeats of the same text (an edit that
    changed only metadata is not a text version)."""
    out = []
    for m in memories:
        texts: list[str] = []
        for text in m[6]:
            if not texts or texts[-1] != text:
                texts.append(text)
        out.append((*m[:6], texts, m[7]))
    return out


async def _roundtrip(source: Yuji, target: Yuji) -> tuple[dict[str, Any], dict[str, Any]]:
    first = await source.porting.export(SOURCE)
    data = json.loads(json.dumps(first, ensure_ascii=False))
    counts = await target.porting.import_pack(data, TARGET)
    assert counts.new == len(first["memories"])
    assert counts.refused == {}
    again = await target.porting.import_pack(data, TARGET)
    assert (again.new, again.duplicate) == (0, len(first["memories"]))
    second = await target.porting.export(TARGET)
    return first, second


def _assert_same(first: dict[str, Any], second: dict[str, Any]) -> None:
    a, b = canonical(first), canonical(second)
    a["memories"], b["memories"] = (
        _versions_collapsed(a["memories"]),
        _versions_collapsed(b["memories"]),
    )
    assert a == b
    assert {m["origin"] for m in second["memories"]} <= {"imported"}


async def _said(core: Yuji, text: str, n: int, sender: str = "42") -> int:
    return await core.archive.append(
        NewExperience(
            SOURCE, f"m{n}", sender, text, sent_at=T0 + timedelta(minutes=n), sender_name="小明"
        )
    )


async def test_end_to_end_round_trip_into_another_database(tmp_path: Path) -> None:
    clock = FakeClock(T0)
    source = await Yuji.open(Settings(data_dir=tmp_path / "a"), clock=clock)
    target = await Yuji.open(Settings(data_dir=tmp_path / "b"), clock=clock)
    try:
        e1 = await _said(source, "我养了一只猫叫煤球", 1)
        e2 = await _said(source, "煤球昨天绝育了", 2)
        e3 = await _said(source, "我搬去杭州了", 3)
        ref = [EvidenceRef(experience_id=e1)]
        cat = await source.memories.write(
            SOURCE, type="fact", subject="小明", content="小明养猫煤球", evidence=ref
        )
        await source.memories.edit(
            SOURCE,
            cat.memory.id,
            content="小明养了一只猫，叫煤球",
            reason="更准确",
            changed_by="model",
        )
        op = await source.memories.write(
            SOURCE,
            type="event",
            subject="煤球",
            content="煤球做了绝育",
            evidence=[EvidenceRef(experience_id=e2), EvidenceRef(memory_id=cat.memory.id)],
        )
        await source.memories.relate(
            SOURCE, op.memory.id, cat.memory.id, reason="同一只猫", changed_by="model"
        )
        old = await source.memories.write(
            SOURCE,
            type="state",
            subject="小明",
            content="小明住在上海",
            evidence=ref,
            valid_from=T0 - timedelta(days=30),
        )
        clock.advance(timedelta(hours=1))
        new = await source.memories.write(
            SOURCE,
            type="state",
            subject="小明",
            content="小明住在杭州",
            evidence=[EvidenceRef(experience_id=e3)],
        )
        applied = await source.memories.supersede(
            SOURCE, old.memory.id, new.memory.id, reason="搬家", changed_by="model"
        )
        assert applied.applied
        wrong = await source.memories.write(
            SOURCE, type="fact", subject="小明", content="小明讨厌猫", evidence=ref
        )
        await source.memories.retract(SOURCE, wrong.memory.id, reason="说错了", changed_by="admin")
        await source.memories.add_alias(SOURCE, "明明", "小明")
        await source.porting.packs.restore_cards(
            SOURCE,
            "preferences",
            [("小明喜欢猫", "2026-11-19"), ("小明喜欢猫和狗", "2026-11-20")],
            T0,
        )
        await source.porting.packs.restore_diary(SOURCE, "2026-11-19", "今天聊了煤球", T0)
        await source.porting.packs.restore_timeline(SOURCE, "2026-11-19", "小明搬去杭州", T0)

        first, second = await _roundtrip(source, target)
        _assert_same(first, second)
        assert first["format"] == "yuji-memory-pack"
        assert first["version"] == 1
        assert len(first["memories"][0]["versions"]) == 2
        closed = next(m for m in second["memories"] if m["content"] == "小明住在上海")
        assert closed["valid_to"] is not None
        quote = next(m for m in second["memories"] if m["content"] == "煤球做了绝育")["evidence"]
        assert {"sender_id": "42", "sender_name": "小明"}.items() <= quote[0]["quote"].items()
        assert [c["version"] for c in second["cards"]] == [1, 2]
        recalled = await target.recall.recall(TARGET, "煤球绝育了吗")
        assert any("绝育" in r.memory.content for r in recalled.items)
    finally:
        await source.close()
        await target.close()


memory_spec = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["fact", "preference", "event", "state", "rule"]),
        "subject": st.sampled_from(["小明", "阿花", "group", "bot"]),
        "texts": st.lists(
            st.text(
                alphabet=st.sampled_from("猫狗鱼山海你我他喜欢住在北京杭州abc 12%"),
                min_size=1,
                max_size=20,
            ).map(lambda t: t.strip() or "空"),
            min_size=1,
            max_size=3,
        ),
        "start_days": st.integers(min_value=-400, max_value=0),
        # 0: closed where it began, as supersede closes a corrected memory.
        "length_days": st.one_of(st.none(), st.integers(min_value=0, max_value=400)),
        "status": st.sampled_from(["active", "active", "retracted", "cold"]),
    }
)
relation_spec = st.tuples(
    st.integers(min_value=0, max_value=5),
    st.integers(min_value=0, max_value=5),
    st.sampled_from(["supports", "related", "contradicts", "supersedes", "merged"]),
)


async def _build(core: Yuji, specs: list[dict[str, Any]], relations: list[Any]) -> None:
    ids: list[int] = []
    for n, spec in enumerate(specs):
        exp = await _said(core, f"原话{n}：{spec['texts'][0]}", n, sender=str(100 + n))
        start = T0 + timedelta(days=spec["start_days"])
        length = spec["length_days"]
        end = None if not length else start + timedelta(days=length)
        written = await core.memories.write(
            SOURCE,
            type=spec["type"],
            subject=spec["subject"],
            content=spec["texts"][0],
            evidence=[EvidenceRef(experience_id=exp)],
            valid_from=start,
            valid_to=end,
        )
        memory = written.memory
        if length == 0:
            memory = await core.memories.end_validity(
                SOURCE, memory.id, start, reason="更正", changed_by="model"
            )
        for text in spec["texts"][1:]:
            if text != memory.content:
                memory = await core.memories.edit(
                    SOURCE, memory.id, content=text, reason="改写", changed_by="model"
                )
        status: MemoryStatus = spec["status"]
        if status != "active":
            await core.memories.set_status(
                SOURCE, memory.id, status, reason="测试", changed_by="model"
            )
        ids.append(memory.id)
    for a, b, kind in relations:
        if a < len(ids) and b < len(ids) and a != b:
            rel: RelationKind = kind
            await core.memories.restore_relation(
                SOURCE, ids[a], ids[b], rel, reason="测试", changed_by="model"
            )


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(memory_spec, min_size=1, max_size=6), st.lists(relation_spec, max_size=6))
def test_round_trip_keeps_text_validity_and_relations(
    specs: list[dict[str, Any]], relations: list[Any]
) -> None:
    async def scenario(folder: Path) -> None:
        clock = FakeClock(T0)
        source = await Yuji.open(Settings(data_dir=folder / "a"), clock=clock)
        target = await Yuji.open(Settings(data_dir=folder / "b"), clock=clock)
        try:
            await _build(source, specs, relations)
            first, second = await _roundtrip(source, target)
            _assert_same(first, second)
        finally:
            await source.close()
            await target.close()

    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(scenario(Path(folder)))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "expected a JSON object"),
        ({"format": "other"}, "format"),
        ({"format": "yuji-memory-pack", "version": 99, "pack_id": "x"}, "version 99"),
        (
            {"format": "yuji-memory-pack", "version": 1, "pack_id": "x", "memories": [{"id": 1}]},
            "lacks",
        ),
    ],
)
def test_a_file_that_is_not_a_pack_is_refused_before_anything_is_written(
    data: Any, message: str
) -> None:
    with pytest.raises(PackError, match=message):
        read_pack(data)


def test_cli_export_and_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("YUJI_DATA_DIR", str(tmp_path / "data"))
    out = tmp_path / "pack.json"
    # Reading a store that is not there makes none (issue 33): one line, exit 2.
    assert main(["export", "--scope", SOURCE, "--out", str(out)]) == 2
    assert "no yuji store at" in capsys.readouterr().err
    assert not (tmp_path / "data").exists()
    asyncio.run(_make_store(Settings(data_dir=tmp_path / "data")))
    assert main(["export", "--scope", SOURCE, "--out", str(out)]) == 0
    assert json.loads(out.read_text("utf-8"))["memories"] == []
    assert main(["import", "pack", str(out), "--scope", TARGET]) == 0
    assert "读到 0，新增 0" in capsys.readouterr().out
    out.write_text('{"format": "nope"}', "utf-8")
    assert main(["import", "pack", str(out), "--scope", TARGET]) == 2


async def _make_store(settings: Settings) -> None:
    core = await Yuji.open(settings)
    await core.close()
