"""`yuji eval`'s dense parts on a tiny dataset with the bundled model (e5, real)."""

from __future__ import annotations

from typing import Any

from memory_core.eval import EvalOptions, run_eval
from memory_core.eval.dataset import parse_dataset

T = "2026-11-01T20:00:00+08:00"


def dataset() -> dict[str, Any]:
    def msg(i: str, scope: str, text: str) -> dict[str, Any]:
        return {"id": i, "scope": scope, "sender_id": "1", "time": T, "text": text}

    def mem(i: str, scope: str, subject: str, content: str, ev: str) -> dict[str, Any]:
        return {
            "id": i,
            "scope": scope,
            "type": "fact",
            "subject": subject,
            "content": content,
            "status": "active",
            "evidence": [ev],
            "created_at": T,
        }

    a, b = "group:1", "group:2"
    return {
        "name": "tiny",
        "now": "2026-11-20T21:30:00+08:00",
        "scopes": [{"id": a}, {"id": b}],
        "aliases": [{"scope": a, "alias": "周哥", "canonical": "老周"}],
        "messages": [
            msg("e1", a, "报喜！昨晚儿子出生了 七斤二两"),
            msg("e2", a, "卡坦岛我玩了十年"),
            msg("e3", b, "我儿子今年三岁了"),
        ],
        "memories": [
            mem("m1", a, "老周", "老周11月6日儿子出生，七斤二两", "e1"),
            mem("m2", a, "老周", "老周最爱卡坦岛", "e2"),
            mem("m3", b, "老周", "老周的儿子今年三岁", "e3"),
        ],
        "queries": [
            {
                "id": "q1",
                "scope": a,
                "tier": "no_overlap",
                "text": "周哥家添丁了没",
                "expect_any": ["m1"],
            },
            {
                "id": "q2",
                "scope": a,
                "tier": "negative",
                "text": "周哥的车是什么牌子的",
                "expect_any": [],
            },
            {
                "id": "q3",
                "scope": b,
                "tier": "leakage",
                "text": "老周最爱玩什么桌游",
                "expect_any": [],
            },
        ],
    }


async def test_dense_run_and_its_baselines_stay_in_their_chats() -> None:
    ds = parse_dataset(dataset())
    result = await run_eval(ds, EvalOptions(vector="on", baselines=True))
    assert {"bm25", "vector", "rrf_hybrid"} <= set(result["baselines"])
    assert result["leakage"] == 0
    assert all(report["leakage"] == 0 for report in result["baselines"].values())
    assert result["load"]["memories"] == 3
    assert set(result["tiers"]) == {"no_overlap", "negative", "leakage"}


async def test_shadow_run_reports_the_same_as_off() -> None:
    ds = parse_dataset(dataset())
    off = await run_eval(ds, EvalOptions(vector="off"))
    shadow = await run_eval(ds, EvalOptions(vector="shadow"))
    assert shadow["tiers"] == off["tiers"]
    assert shadow["stale"] == off["stale"]
