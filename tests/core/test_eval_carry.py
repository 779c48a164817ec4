"""`yuji eval` and carrying (#45): the format's `carry` section (choices, blocks), the
dataset-side check of what may be carried (memory_core/eval/carry_check.py), and the
report: carried items counted as `carried`, `leakage` only what the rule forbids."""

from __future__ import annotations

from typing import Any

import pytest

from memory_core.cli.eval import render
from memory_core.errors import ValidationError
from memory_core.eval import EvalOptions, run_eval
from memory_core.eval.carry_check import CarryCheck
from memory_core.eval.dataset import parse_dataset
from memory_core.eval.metrics import Answer, report

A, B, C, P = "group:1", "group:2", "group:3", "private:7"


def _msg(i: str, scope: str, who: str, name: str, text: str, hour: int = 20) -> dict[str, Any]:
    return {
        "id": i,
        "scope": scope,
        "sender_id": who,
        "sender_name": name,
        "time": f"2026-11-10T{hour:02d}:00:00+08:00",
        "text": text,
    }


def _mem(i: str, scope: str, subject: str, content: str, evidence: str, **kw: Any):
    return {
        "id": i,
        "scope": scope,
        "type": kw.pop("type", "event"),
        "subject": subject,
        "content": content,
        "evidence": [evidence],
        "valid_from": "2026-11-10T20:00:00+08:00",
        "created_at": "2026-11-10T22:00:00+08:00",
        **kw,
    }


def dataset(**carry: Any) -> dict[str, Any]:
    """小明 (7) says in A that he moves to Chengdu; he is in B, C and his private chat;
    阿花 (8) says in A that he owes her money (hearsay about him)."""
    return {
        "name": "carry",
        "timezone": "Asia/Shanghai",
        "now": "2026-11-20T21:30:00+08:00",
        "scopes": [{"id": s} for s in (A, B, C, P)],
        "messages": [
            _msg("e1", A, "7", "小明", "我下个月搬家去成都"),
            _msg("e2", A, "8", "阿花", "小明还欠我五百块", 21),
            _msg("e3", B, "7", "明哥", "大家好"),
            _msg("e4", C, "7", "小明", "晚上好"),
            _msg("e5", P, "7", "小明", "在吗"),
            _msg("e6", B, "9", "老王", "我下周搬家去杭州"),
        ],
        "memories": [
            _mem("m1", A, "小明", "小明下个月搬家去成都", "e1", subject_id="7"),
            _mem("m2", A, "小明", "小明欠阿花五百块", "e2", subject_id="7", type="fact"),
            _mem("m3", B, "老王", "老王下周搬家去杭州", "e6", subject_id="9"),
        ],
        "queries": [
            {
                "id": "q1",
                "scope": P,
                "tier": "carry",
                "text": "我搬家去哪来着",
                "expect_any": ["m1"],
                "expect_none": ["m2"],
                "asker": {"sender_id": "7", "sender_name": "小明"},
            },
            {
                "id": "q2",
                "scope": B,
                "tier": "carry",
                "text": "我搬家去哪来着",
                "expect_any": ["m1"],
                "expect_none": ["m2", "m3"],
                "asker": {"sender_id": "7", "sender_name": "明哥"},
            },
            {
                "id": "q3",
                "scope": C,
                "tier": "leakage",
                "text": "我搬家去哪来着",
                "expect_any": [],
                "expect_none": ["m1", "m2"],
                "asker": {"sender_id": "7", "sender_name": "小明"},
            },
        ],
        "carry": carry,
    }


def test_the_carry_section_is_parsed_and_checked() -> None:
    ds = parse_dataset(dataset(choices=[{"sender_id": "7", "groups": True}], blocks=[C]))
    assert ds.carry.choice("7").groups is True
    assert ds.carry.choice("7").private is None  # the default: on
    assert ds.carry.choice("8").groups is None
    assert ds.carry.blocks == (C,)
    with pytest.raises(ValidationError):
        parse_dataset(dataset(choices=[{"sender_id": "7", "groups": "yes"}]))
    with pytest.raises(ValidationError):
        parse_dataset(dataset(choices=[{"groups": True}]))
    assert parse_dataset({**dataset(), "carry": {}}).carry.choices == ()


def test_the_dataset_side_rule() -> None:
    ds = parse_dataset(dataset(choices=[{"sender_id": "7", "groups": True}], blocks=[C]))
    check = CarryCheck(ds)
    q1, q2, q3 = ds.queries
    assert check.allowed(q1, "m1", ds.now)  # his private chat
    assert check.allowed(q2, "m1", ds.now)  # a group he opted into
    assert not check.allowed(q3, "m1", ds.now)  # a group that refuses it
    assert not check.allowed(q1, "m2", ds.now)  # hearsay
    assert not check.allowed(q2, "m3", ds.now)  # of the asked chat itself
    assert not check.allowed(q1, None, ds.now)  # a generated memory
    off = parse_dataset(dataset(choices=[{"sender_id": "7", "private": False}]))
    assert not CarryCheck(off).allowed(off.queries[0], "m1", off.now)
    assert not CarryCheck(off).allowed(off.queries[1], "m1", off.now)  # groups off by default


def test_leakage_counts_only_what_is_not_carried_as_allowed() -> None:
    ds = parse_dataset(dataset())
    q = ds.queries[1]
    answer = Answer(
        query=q,
        ids=("m3", "m1", "m2"),
        scopes=(B, A, A),
        ms=1.0,
        bands=("related",) * 3,
        p=(0.1, 0.2, 0.3),
        carried=(False, True, False),
    )
    result = report([answer])
    assert result["leakage"] == 1  # m2 (hearsay) leaked; m1 was carried
    assert result["carried"] == 1
    assert result["tiers"]["carry"]["carried"] == 1
    assert result["queries"][0]["injected"][1] == {
        "id": "m1",
        "band": "related",
        "p": 0.2,
        "carried": True,
    }


async def test_run_eval_carries_what_was_chosen_and_nothing_else() -> None:
    ds = parse_dataset(dataset(choices=[{"sender_id": "7", "groups": True}], blocks=[C]))
    result = await run_eval(ds, EvalOptions(vector="off"))
    assert result["leakage"] == 0
    assert result["tiers"]["carry"]["rate"] == 1.0
    assert result["tiers"]["carry"]["sure_rate"] == 0.0
    assert result["carried"] >= 2
    q3 = next(q for q in result["queries"] if q["id"] == "q3")
    assert all(i["id"] not in ("m1", "m2") for i in q3["injected"])
    # Nobody chose anything: his private chat still gets it, the group does not.
    default = await run_eval(parse_dataset(dataset()), EvalOptions(vector="off"))
    by_id = {q["id"]: {i["id"] for i in q["injected"]} for q in default["queries"]}
    assert "m1" in by_id["q1"]
    assert "m1" not in by_id["q2"]
    assert default["leakage"] == 0


def test_the_table_reports_what_was_carried() -> None:
    ds = parse_dataset(dataset())
    answer = Answer(ds.queries[1], ("m1",), (A,), 1.0, ("related",), (0.2,), carried=(True,))
    table = render("carry", report([answer]))
    assert "带过来（在别的群说过）" in table
    assert "泄漏" in table
    assert "带过来" not in render("none", report([Answer(ds.queries[1], (), (), 1.0)]))
