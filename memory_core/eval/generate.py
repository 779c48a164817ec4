"""Scale stress for `yuji eval` (pure, seeded): distractor memories and clone floods.

- Distractors: memories about unrelated everyday things, half of them about the
  chat's own members (so names alone never identify an answer), written from
  templates in the dataset's language.
- Clones: near-copies of the memories the queries expect, the way a consolidation
  that re-extracts the same fact again and again would write them: one or two small
  edits each (a character changed, a hedge word inserted, a few characters dropped,
  a tail added). They are different memories that merely look alike, so they compete
  with the target for the five slots.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from memory_core.memories.outcomes import NewMemory
from memory_core.tokenize import is_cjk
from memory_core.types import EvidenceRef, MemoryType

TYPES: tuple[MemoryType, ...] = ("fact", "preference", "event", "relation", "state", "rule")

_ZH_NAMES = [
    "阿强",
    "小芳",
    "老王",
    "小李",
    "大刘",
    "阿华",
    "小静",
    "老陈",
    "阿伟",
    "小雪",
    "胖虎",
    "小林",
    "阿珍",
    "老赵",
    "小吴",
    "阿飞",
]
_ZH_PLACES = [
    "图书馆",
    "菜市场",
    "体育馆",
    "海洋馆",
    "电影院",
    "博物馆",
    "游乐园",
    "植物园",
    "火车站",
    "夜市",
    "书店",
    "理发店",
    "花鸟市场",
    "洗车店",
    "银行",
    "邮局",
    "五金店",
    "菜园",
    "水库",
    "公交总站",
]
_ZH_THINGS = [
    "电饭煲",
    "拖把",
    "台灯",
    "雨伞",
    "保温杯",
    "书包",
    "围巾",
    "拖鞋",
    "晾衣架",
    "插线板",
    "电风扇",
    "收音机",
    "花盆",
    "鞋柜",
    "闹钟",
    "枕头",
    "菜刀",
    "窗帘",
    "扫地机",
    "加湿器",
]
_ZH_FOODS = [
    "豆浆",
    "油条",
    "包子",
    "饺子",
    "馄饨",
    "煎饼",
    "凉皮",
    "肉夹馍",
    "炒饭",
    "烧饼",
    "酸奶",
    "粽子",
    "汤圆",
    "卤蛋",
    "玉米",
    "红薯",
    "豆腐脑",
    "蛋挞",
    "馒头",
    "米糊",
]
_ZH_ACTS = [
    "整理阳台",
    "修自行车",
    "擦窗户",
    "缝扣子",
    "贴春联",
    "换灯泡",
    "浇花",
    "晒被子",
    "腌咸菜",
    "包饺子",
    "剪指甲",
    "拼乐高",
    "折纸",
    "练毛笔字",
    "织毛衣",
    "洗车",
    "打扫厨房",
    "遛弯",
    "晨练",
    "排队挂号",
]
_ZH_TIMES = [
    "周一晚上",
    "周二中午",
    "周三早上",
    "上个月",
    "前天",
    "大前天",
    "月初",
    "月底",
    "年前",
    "清明前后",
    "端午前",
    "上周五",
]
_ZH_TEMPLATES = (
    "{name}{time}去{place}办事，顺路买了{food}",
    "{name}说家里的{thing}坏了，打算{time}换一个",
    "{name}每天早上吃{food}，说比{food2}顶饱",
    "{name}{time}在家{act}，忙了一下午",
    "{name}觉得{place}一带车位紧张",
    "{name}借了{name2}的{thing}，说{time}还",
    "{name}在{place}排了很久的队",
    "{name}最近迷上了{act}，还拉{name2}一起",
    "{name}把旧{thing}送给了{name2}",
    "{name}{time}和{name2}去{place}转了转",
    "{name}不太喜欢{food}，嫌太腻",
    "{name}的{thing}是在{place}旁边的小店买的",
)

_EN_NAMES = [
    "Avery",
    "Blake",
    "Casey",
    "Devon",
    "Emery",
    "Finley",
    "Harper",
    "Jordan",
    "Kendall",
    "Logan",
    "Morgan",
    "Parker",
    "Quinn",
    "Reese",
    "Rowan",
    "Skyler",
]
_EN_PLACES = [
    "the post office",
    "the hardware store",
    "the car wash",
    "the farmers market",
    "the dentist",
    "the laundromat",
    "the city library",
    "the bus depot",
    "the bakery",
    "the bank",
    "the garden center",
    "the ice rink",
]
_EN_THINGS = [
    "toaster",
    "umbrella",
    "desk lamp",
    "vacuum cleaner",
    "bike helmet",
    "rice cooker",
    "alarm clock",
    "doormat",
    "blender",
    "space heater",
    "coat rack",
    "extension cord",
]
_EN_ACTS = [
    "repainting the fence",
    "fixing a leaky faucet",
    "sorting old receipts",
    "cleaning the gutters",
    "assembling a bookshelf",
    "reorganizing the garage",
    "knitting a scarf",
    "washing the car",
    "trimming the hedges",
    "defrosting the freezer",
]
_EN_TIMES = [
    "last Tuesday",
    "on Monday morning",
    "two weeks ago",
    "at the start of the month",
    "last weekend",
    "on Friday evening",
    "a few days ago",
    "in early spring",
]
_EN_TEMPLATES = (
    "{name} went to {place} {time} and waited in line for an hour",
    "{name} said the {thing} broke {time} and needs replacing",
    "{name} spent {time} {act}",
    "{name} borrowed a {thing} from {name2} {time}",
    "{name} thinks parking near {place} is terrible",
    "{name} bought a new {thing} at {place}",
    "{name} and {name2} were {act} together {time}",
    "{name} gave an old {thing} to {name2}",
)

_ZH_HEDGES = ("好像", "据说", "听说", "大概", "貌似")
_ZH_TAILS = ("。", "吧", "的样子", "，大家都知道", "，群里说过")
_ZH_COMMON = "的一是了在有人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严"


@dataclass(frozen=True, slots=True)
class Generated:
    """A generated memory (written with one generated message as evidence)."""

    type: MemoryType
    subject: str
    content: str
    importance: float
    confidence: float

    def to_write(
        self, evidence: Sequence[EvidenceRef], *, valid_from: datetime | None = None
    ) -> NewMemory:
        """The memory as written through `core.memories.write_many`."""
        return NewMemory(
            type=self.type,
            subject=self.subject,
            content=self.content,
            evidence=evidence,
            importance=self.importance,
            confidence=self.confidence,
            valid_from=valid_from,
            origin="generated",
        )


def is_chinese(texts: Sequence[str]) -> bool:
    sample = "".join(texts[:200])
    cjk = sum(1 for c in sample if is_cjk(c))
    return cjk * 3 >= len(sample.replace(" ", "")) if sample else True


def distractors(count: int, *, members: Sequence[str], chinese: bool, seed: int) -> list[Generated]:
    """`count` unrelated memories; half are about `members` (the chat's own names)."""
    rng = random.Random(seed)
    out: list[Generated] = []
    for i in range(count):
        own = bool(members) and i % 2 == 0
        if chinese:
            name = rng.choice(list(members)) if own else rng.choice(_ZH_NAMES)
            text = rng.choice(_ZH_TEMPLATES).format(
                name=name,
                name2=rng.choice(_ZH_NAMES),
                place=rng.choice(_ZH_PLACES),
                thing=rng.choice(_ZH_THINGS),
                food=rng.choice(_ZH_FOODS),
                food2=rng.choice(_ZH_FOODS),
                act=rng.choice(_ZH_ACTS),
                time=rng.choice(_ZH_TIMES),
            )
        else:
            name = rng.choice(list(members)) if own else rng.choice(_EN_NAMES)
            text = rng.choice(_EN_TEMPLATES).format(
                name=name,
                name2=rng.choice(_EN_NAMES),
                place=rng.choice(_EN_PLACES),
                thing=rng.choice(_EN_THINGS),
                act=rng.choice(_EN_ACTS),
                time=rng.choice(_EN_TIMES),
            )
        out.append(
            Generated(
                type=rng.choice(TYPES),
                subject=name,
                content=text,
                importance=round(rng.uniform(0.2, 0.8), 2),
                confidence=round(rng.uniform(0.5, 0.95), 2),
            )
        )
    return out


def perturb(text: str, rng: random.Random) -> str:
    """One or two small edits that keep the text recognisably the same memory."""
    chinese = is_chinese([text])
    for _ in range(rng.choice((1, 1, 2))):
        op = rng.randrange(4)
        text = _perturb_zh(text, op, rng) if chinese else _perturb_en(text, op, rng)
    return text


def _perturb_zh(text: str, op: int, rng: random.Random) -> str:
    positions = [i for i, c in enumerate(text) if is_cjk(c)]
    if op == 0 and positions:
        i = rng.choice(positions)
        return text[:i] + rng.choice(_ZH_COMMON) + text[i + 1 :]
    if op == 1:
        i = rng.randrange(len(text) + 1)
        return text[:i] + rng.choice(_ZH_HEDGES) + text[i:]
    if op == 2 and len(text) > 8:
        i = rng.randrange(len(text) - 3)
        return text[:i] + text[i + rng.randint(1, 3) :]
    return text + rng.choice(_ZH_TAILS)


def _perturb_en(text: str, op: int, rng: random.Random) -> str:
    words = text.split()
    if op == 0 and words:
        i = rng.randrange(len(words))
        words[i] = rng.choice(("really", "apparently", "maybe", "honestly", "also"))
    elif op == 1:
        words.insert(
            rng.randrange(len(words) + 1), rng.choice(("reportedly", "I think", "supposedly"))
        )
    elif op == 2 and len(words) > 4:
        del words[rng.randrange(len(words))]
    else:
        words.append(rng.choice(("as far as I know", "or so they said", "if I recall")))
    return " ".join(words)


def clones(targets: Sequence[tuple[str, str]], count: int, *, seed: int) -> list[tuple[str, str]]:
    """(target id, clone text) for `count` clones spread evenly over `targets`
    ((id, content) pairs)."""
    rng = random.Random(seed)
    if not targets:
        return []
    return [
        (targets[i % len(targets)][0], perturb(targets[i % len(targets)][1], rng))
        for i in range(count)
    ]
