"""The recall trace in Chinese, for `yuji recall`'s text output (pure).

Recall keeps its trace (`RecallResult.trace`) in English: tests and `yuji recall
--json` read those lines as they are. For people the command says each line in the
manual's words here, by the shape recall writes it in (recall/engine.py, rerank.py,
dated.py, vectors/dense.py). A line of a shape not known here is shown as it is; a
test runs real recalls and fails on any line left in English.
"""

from __future__ import annotations

import re

ASKS = {
    "time": "时间",
    "number": "数字",
    "place": "地点",
    "name": "名字",
    "person": "人",
    "which": "哪个",
}
"""`language.AnswerKind`: what kind of answer the question wants."""

SHAPES = {"question": "问句", "statement": "陈述句"}
BANDS = {"sure": "确定", "related": "相关"}

WAKE: tuple[tuple[str, str], ...] = (
    (r"^terms: (.*)$", r"词：\1"),
    (r"^members: (.*)$", r"点名：\1"),
    (r"^about the past$", "问的是从前"),
    (r"^context: (\d+) turns$", r"带上下文 \1 句"),
    (r"^refers to (.*)$", r"指的是 \1"),
    (r"^leans on the turns before$", "话太少，靠前面几句找"),
)
"""The parts of the trace's first line (the wake as read), split at "; "."""

LINES: tuple[tuple[str, str], ...] = (
    (
        r"^candidates: words (\d+), context words (\d+), dense (\d+)$",
        r"候选：字词 \1，上下文字词 \2，意思 \3",
    ),
    (
        r"^names a day: (.*) -> (\d+) dated, (\d+) candidates on it$",
        r"说到一天：\1 → 记在那天的 \2 条，候选里在那天的 \3 条",
    ),
    (
        r"^dense: no vectors of (.*) yet \(being built\): words only$",
        r"\1 的向量还没建好，只用字词",
    ),
    (
        r"^dense: the question's embedding took over (.*): words only$",
        r"问题的向量超过 \1 还没算出，只用字词",
    ),
    (r"^dense: the embeddings API failed \((.*)\): words only$", r"嵌入 API 失败（\1），只用字词"),
    (r"^dense: (.*): words only$", r"意思（向量）不可用：\1，只用字词"),
    (r"^reranker failed \((.*)\): bands without it$", r"重排模型失败（\1）：档位不经重排"),
    (r"^reranker (.*): (\d+) candidates in (\d+) ms$", r"重排模型 \1：\2 条候选，用时 \3 ms"),
    (r"^the wake asks about nothing: chatter, nothing injected$", "这句什么也没问：寒暄，不注入"),
    (r"^recent messages quoted: (.*)$", r"引用的最近消息：\1"),
    (r"^carried: the wake is about no one$", "别的群带来的：这句不是问某个人，不带"),
    (r"^carried: no place \(every one is sure\)$", "别的群带来的：五条都确定，没有位置"),
    (r"^carried: unread, nothing carried$", "别的群带来的：没读到，不带"),
    (r"^carried: \[\]$", "别的群带来的：没有"),
    (r"^carried: \[(.*)\]$", r"别的群带来的：#\1"),
    (
        r"^the turns it leans on are near nothing remembered$",
        "前面几句和记得的事都不沾边：闲聊，不注入",
    ),
    (r"^judge: bands (.*) -> (.*)$", r"模型判档：\1 → \2"),
    (r"^dense \(shadow\) would inject: (.*)$", r"意思（影子模式）本会注入：\1"),
    (r"^(\d+) chosen in (.*) ms$", r"选中 \1 条，用时 \2 ms"),
)
"""Every other line of the trace: its English shape and its Chinese."""


def trace_words(line: str) -> str:
    """One trace line in Chinese (the line itself when its shape is not known)."""
    if line.startswith("terms: "):
        return "；".join(_wake_part(part) for part in line.split("; "))
    for pattern, replacement in LINES:
        said, found = re.subn(pattern, replacement, line)
        if found:
            return _bands(said) if line.startswith("judge: ") else said
    return line


def _wake_part(part: str) -> str:
    if part.startswith("asks: "):
        kind = part.removeprefix("asks: ")
        return f"问的是：{ASKS.get(kind, kind)}"
    shape = re.fullmatch(r"(\w+), depth ([\d.]+)", part)
    if shape is not None:
        return f"{SHAPES.get(shape[1], shape[1])}，深度 {shape[2]}"
    for pattern, replacement in WAKE:
        said, found = re.subn(pattern, replacement, part)
        if found:
            return said
    return part


def _bands(text: str) -> str:
    return re.sub(r"'(sure|related)'", lambda m: BANDS[m[1]], text)
