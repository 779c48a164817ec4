"""The engine and the training corpus quote nothing of the development sets.

No run of CJK characters of a development set may appear in memory_core/ (code or
data: 5 characters of dev.json, 6 of kdconv-dev.json, whose everyday dialogue shares
short phrases with any chat) or in training/corpus/ (7 of either: the corpus is
written in the same language, so only longer runs say it was copied). The dev sets are
not part of this repository: on a machine without them (a user's, CI's clean clone)
there is nothing to compare against, and the checks for an absent set are not
generated.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
EVAL = next(
    (p / "shared" / "eval" for p in ROOT.parents if (p / "shared" / "eval").is_dir()),
    ROOT.parent / "shared" / "eval",
)
CHECKS = [
    ("dev.json", "memory_core", 5),
    ("kdconv-dev.json", "memory_core", 6),
    ("dev.json", "training/corpus", 7),
    ("kdconv-dev.json", "training/corpus", 7),
]
PRESENT = [c for c in CHECKS if (EVAL / c[0]).is_file()]


def runs(texts: list[str], n: int) -> set[str]:
    out: set[str] = set()
    for text in texts:
        for run in re.findall(rf"[\u4e00-\u9fff]{{{n},}}", text):
            out.update(run[i : i + n] for i in range(len(run) - n + 1))
    return out


def test_runs_are_every_window_of_the_length() -> None:
    assert runs(["今天天气好，abc 我们去"], 3) == {"今天天", "天天气", "天气好", "我们去"}
    assert runs(["今天，好"], 3) == set()


if PRESENT:  # an empty parametrisation would be reported as a skip

    @pytest.mark.parametrize(("dev", "folder", "n"), PRESENT)
    def test_no_dev_phrase_in_the_engine_or_the_corpus(dev: str, folder: str, n: int) -> None:
        data = json.loads((EVAL / dev).read_text(encoding="utf-8"))
        texts = [q["text"] for q in data["queries"]]
        texts += [m["content"] for m in data["memories"]]
        texts += [t["text"] for q in data["queries"] for t in q.get("context", [])]
        theirs = runs(texts, n)
        found: dict[str, int] = {}
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in {".py", ".txt", ".json", ".jsonl", ".md"} and path.is_file():
                mine = runs([path.read_text(encoding="utf-8", errors="ignore")], n)
                if mine & theirs:
                    found[str(path.relative_to(ROOT))] = len(mine & theirs)
        assert not found, f"{dev} phrases of {n} characters quoted (count per file): {found}"
