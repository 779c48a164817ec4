"""Typed facts: idempotent by (scope, subject, key); a changed value supersedes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory_core import Yuji
from memory_core.porting.facts import FactError, parse_fact, same_value

SCOPE = "group:777"
FACTS: list[dict[str, Any]] = [
    {"scope": SCOPE, "type": "fact", "subject": "小明", "key": "工作", "value": "在字节做后端"},
    {
        "scope": SCOPE,
        "category": "preference",
        "subject": "小明",
        "key": "咖啡",
        "value": "喜欢冰美式",
    },
    {
        "subject": "阿花",
        "key": "城市",
        "value": "住在杭州",
        "valid_from": "2025-01-01T00:00:00+08:00",
        "confidence": 0.9,
    },
]


def _write(path: Path, facts: list[dict[str, Any]], extra: str = "") -> Path:
    path.write_text(
        "\n".join(json.dumps(f, ensure_ascii=False) for f in facts) + "\n" + extra, "utf-8"
    )
    return path


async def test_import_twice_then_once_with_a_changed_value(core: Yuji, tmp_path: Path) -> None:
    path = _write(tmp_path / "facts.jsonl", FACTS, extra='{"subject": "x"}\nnot json\n')
    first = await core.porting.import_facts(path, scope=SCOPE)
    assert (first.read, first.new, first.duplicate, first.changed) == (5, 3, 0, 0)
    assert first.refused == {"subject, key and value are required": 1, "not JSON": 1}
    memories = await core.memories.newest(SCOPE)
    assert {m.content for m in memories} == {
        "工作：在字节做后端",
        "咖啡：喜欢冰美式",
        "城市：住在杭州",
    }
    assert {m.origin for m in memories} == {"migrated"}
    for memory in memories:
        evidence = await core.memories.evidence(SCOPE, memory.id)
        quoted = await core.archive.get(SCOPE, evidence[0].experience_id or 0)
        assert quoted.source == "migrated"
        assert memory.subject in quoted.text

    second = await core.porting.import_facts(path, scope=SCOPE)
    assert (second.new, second.duplicate, second.changed) == (0, 3, 0)
    assert len(await core.memories.newest(SCOPE, status=None)) == 3

    changed = [dict(FACTS[0], value="在腾讯做前端。"), *FACTS[1:]]
    third = await core.porting.import_facts(_write(tmp_path / "f2.jsonl", changed), scope=SCOPE)
    assert (third.new, third.duplicate, third.changed) == (0, 2, 1)
    every = await core.memories.newest(SCOPE, status=None)
    assert len(every) == 4
    old = next(m for m in every if m.content == "工作：在字节做后端")
    new = next(m for m in every if m.content == "工作：在腾讯做前端。")
    assert old.valid_to is not None  # closed by the supersede
    assert new.valid_to is None

    fourth = await core.porting.import_facts(_write(tmp_path / "f3.jsonl", changed), scope=SCOPE)
    assert (fourth.new, fourth.changed, fourth.duplicate) == (0, 0, 3)


async def test_dry_run_writes_nothing(core: Yuji, tmp_path: Path) -> None:
    counts = await core.porting.import_facts(
        _write(tmp_path / "facts.jsonl", FACTS), scope=SCOPE, dry_run=True
    )
    assert counts.new == 3
    assert await core.memories.newest(SCOPE) == []


async def test_a_run_cut_off_before_keeping_the_key_is_not_written_twice(
    core: Yuji, tmp_path: Path
) -> None:
    path = _write(tmp_path / "facts.jsonl", FACTS[:1])
    await core.porting.import_facts(path, scope=SCOPE)
    async with core.db.write() as conn:  # as if the run died right after the memory
        from sqlalchemy import delete

        from memory_core.storage.schema import import_keys

        await conn.execute(delete(import_keys))
    again = await core.porting.import_facts(path, scope=SCOPE)
    assert (again.new, again.duplicate) == (0, 1)
    assert len(await core.memories.newest(SCOPE, status=None)) == 1


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"subject": "a", "key": "k", "value": "v", "status": "archived"}', "status"),
        ('{"subject": "a", "key": "k", "value": "v", "type": "mood"}', "unknown type"),
        ('{"subject": "a", "key": "k", "value": "v", "confidence": 2}', "outside 0..1"),
        ('{"subject": "a", "key": "k", "value": "v", "valid_from": "2025-01-01"}', "UTC offset"),
        ('{"subject": "a", "key": "k", "value": "v", "scope": "group:x"}', "scope"),
        ("[1, 2]", "not a JSON object"),
    ],
)
def test_bad_lines_are_refused_with_a_reason(line: str, reason: str) -> None:
    with pytest.raises(FactError, match=reason):
        parse_fact(line, SCOPE)


def test_warm_isle_rows_map_to_yuji_types_and_private_chats() -> None:
    fact = parse_fact('{"qq_id": 12345, "category": "profile", "key": "工作", "value": "x"}', None)
    assert (fact.scope, fact.type, fact.subject) == ("private:12345", "fact", "12345")


def test_same_value_ignores_spaces_and_punctuation() -> None:
    assert same_value("在杭州。", "在 杭州")
    assert not same_value("撤离率 20%", "撤离率 30%")


async def test_a_corrected_fact_survives_a_pack_round_trip(core: Yuji, tmp_path: Path) -> None:
    """A changed value with the same start closes the old memory where it began; the
    pack of that chat must restore it, empty interval and all."""
    fact = dict(FACTS[2], scope=SCOPE)
    await core.porting.import_facts(_write(tmp_path / "a.jsonl", [fact]), scope=SCOPE)
    changed = dict(fact, value="住在苏州")
    await core.porting.import_facts(_write(tmp_path / "b.jsonl", [changed]), scope=SCOPE)
    old = next(m for m in await core.memories.newest(SCOPE, status=None) if "杭州" in m.content)
    assert old.valid_to == old.valid_from

    pack = json.loads(json.dumps(await core.porting.export(SCOPE)))
    counts = await core.porting.import_pack(pack, scope="group:778")
    assert counts.refused == {}
    restored = {m.content: m for m in await core.memories.newest("group:778", status=None)}
    assert restored["城市：住在杭州"].valid_to == old.valid_from
    assert restored["城市：住在杭州"].valid_from == old.valid_from
    assert restored["城市：住在苏州"].valid_to is None
