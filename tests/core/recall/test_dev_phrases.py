"""The engine quotes nothing of the development set (issue 13, step 4).

No run of five or more CJK characters of the development set (dev.json) may appear in
memory_core/ (code or data) or in the training corpus. The dev set is not part of this
repository: on a machine without it (a user's, CI's clean clone) there is nothing to
compare against and the check is skipped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DEV = next(
    (p / "shared" / "eval" / "dev.json" for p in ROOT.parents if (p / "shared" / "eval").is_dir()),
    ROOT.parent / "shared" / "eval" / "dev.json",
)
RUN = re.compile(r"[\u4e00-\u9fff]{5,}")


def five_char_runs(texts: list[str]) -> set[str]:
    runs: set[str] = set()
    for text in texts:
        for run in RUN.findall(text):
            runs.update(run[i : i + 5] for i in range(len(run) - 4))
    return runs


def test_no_dev_phrase_in_the_engine() -> None:
    if not DEV.is_file():
        pytest.skip(f"{DEV} is not here (it never ships); nothing to compare against")
    data = json.loads(DEV.read_text(encoding="utf-8"))
    texts = [q["text"] for q in data["queries"]]
    texts += [m["content"] for m in data["memories"]] + [m["text"] for m in data["messages"]]
    runs = five_char_runs(texts)
    found: dict[str, int] = {}
    for folder in (ROOT / "memory_core",):
        for path in folder.rglob("*"):
            if path.suffix in {".py", ".txt", ".json", ".md"} and path.is_file():
                text = path.read_text(encoding="utf-8", errors="ignore")
                hits = sum(run in text for run in runs)
                if hits:
                    found[str(path.relative_to(ROOT))] = hits
    assert not found, f"dev.json phrases quoted (count per file): {found}"
