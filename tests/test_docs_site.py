"""The documentation site builds with warnings as errors (a broken link or anchor, a
page missing from disk), every setting is on its settings page, and its search index
holds Chinese cut into words (jieba), so a search for 备份 finds the backup page."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memory_core import Settings

ROOT = Path(__file__).resolve().parents[1]


def test_the_site_builds_strictly_and_searches_chinese_by_word(tmp_path: Path) -> None:
    site = tmp_path / "site"
    # jieba keeps its dictionary cache in the temporary folder: this test's own
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "TMPDIR": str(tmp_path)}
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    settings = (site / "settings" / "index.html").read_text("utf-8")
    assert [n for n in Settings.model_fields if f"YUJI_{n.upper()}" not in settings] == []
    index = json.loads((site / "search" / "search_index.json").read_text("utf-8"))
    assert index["config"]["lang"] == ["zh", "en"]
    backup = [d for d in index["docs"] if d["location"].startswith("backup/")]
    # jieba's words are joined by zero-width spaces, which the separator splits on
    assert any("\u200b备份\u200b" in d["text"] for d in backup)
    assert "\\u200b" in index["config"]["separator"]
