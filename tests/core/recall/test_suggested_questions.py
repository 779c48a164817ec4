"""The questions the demo and the manual suggest come back with their memory `sure`,
and questions about a name that stands as a memory's subject ("煤球是小林养的猫")
find it: a set of our own (tests/fixtures/name_as_subject.json) the training never
sees."""

from __future__ import annotations

from pathlib import Path

from memory_core.cli.demo_world import load_demo
from memory_core.eval.dataset import load_dataset
from memory_core.eval.runner import run_eval
from memory_core.eval.vector_eval import prepare
from memory_core.service import Yuji
from memory_core.settings import Settings

ROOT = Path(__file__).resolve().parents[3]
DEMO_GROUP = "group:900001"
SUGGESTED = {
    "煤球绝育了吗": {
        "小林家的猫煤球在安安宠物诊所绝育了，花了680元",
        "煤球绝育后已经拆线，恢复得很好",
    },
    "阿珍不吃什么": {"阿珍不吃香菜，点外卖要备注"},
    "阿珍在准备什么考试": {"阿珍在准备十二月的日语N2考试"},
}
"""Each question the manual (docs/quickstart.md) and the console suggest for the
demo, with the memories that answer it."""
FIRST_NOT_SURE = {"猫叫什么名字": "煤球是小林养的猫"}
"""Asked too, and what the manual says of it: its answer comes first, `related`. The
features cannot yet tell this cosine (.88, e5 finds the orange cat another member
plans to get as close) from a near miss's."""


def test_the_manual_and_the_console_suggest_exactly_these() -> None:
    manual = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
    for question in SUGGESTED:
        assert f"“{question}”" in manual
    page = (ROOT / "nonebot_plugin_yuji" / "console" / "templates" / "chat.html").read_text(
        encoding="utf-8"
    )
    assert any(f"比如：{question}" in page for question in SUGGESTED)
    for question in FIRST_NOT_SURE:
        assert f"“{question}”也找得到煤球，排第一，但只到“相关”" in manual


async def test_every_suggested_demo_question_comes_back_sure(tmp_path: Path) -> None:
    core = await Yuji.open(Settings(data_dir=tmp_path, vector_mode="on"))
    try:
        await load_demo(core)
        await prepare(core)
        missed: dict[str, list[tuple[str, str, float]]] = {}
        for question, answers in SUGGESTED.items():
            result = await core.recall.recall(DEMO_GROUP, question)
            sure = {r.memory.content for r in result.items if r.band == "sure"}
            if not sure & answers:
                missed[question] = [(r.memory.content, r.band, r.score) for r in result.items]
        assert missed == {}
        for question, answer in FIRST_NOT_SURE.items():
            # Before, its terms were "名字 猫叫" and the answer was not among the five.
            result = await core.recall.recall(DEMO_GROUP, question)
            assert result.items[0].memory.content == answer
    finally:
        await core.close()


async def test_a_name_standing_as_the_subject_answers_what_it_is_called() -> None:
    report = await run_eval(load_dataset(ROOT / "tests" / "fixtures" / "name_as_subject.json"))
    by_id = {q["id"]: q for q in report["queries"]}
    assert report["leakage"] == 0
    # The near misses (a car and a van nobody named) get nothing sure.
    assert report["tiers"]["negative"]["sure_rate"] == 0.0
    data = load_dataset(ROOT / "tests" / "fixtures" / "name_as_subject.json")
    expected = {q.id: set(q.expect_any) for q in data.queries if q.expect_any}
    first = {q: by_id[q]["injected"][0] for q in expected}
    assert all(item["id"] in expected[q] for q, item in first.items()), first
    # What 老王 said of the new member 小周 is hearsay: related whatever its P (Priya,
    # who never spoke there, is nobody the chat knows). Measured on the other five: four
    # sure (the paraphrase 狗 -> 柯基 is not).
    hearsay = {"q2"}
    assert all(first[q]["band"] == "related" for q in hearsay), first
    assert max(first[q]["p"] for q in hearsay) >= 0.7, first  # P itself is not lowered
    assert sum(item["band"] == "sure" for q, item in first.items() if q not in hearsay) >= 4
