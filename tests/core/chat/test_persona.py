from __future__ import annotations

import logging
from pathlib import Path

import pytest

from memory_core.chat.persona import default_persona, load_persona


def test_default_persona_is_shipped_in_the_package() -> None:
    persona = default_persona()
    assert "大肥鱼" in persona
    assert load_persona("") == persona


def test_operator_persona_file_wins(tmp_path: Path) -> None:
    path = tmp_path / "persona.md"
    path.write_text("你是小鲸，一头话很少的鲸鱼。\n", "utf-8")
    assert load_persona(str(path)) == "你是小鲸，一头话很少的鲸鱼。"


@pytest.mark.parametrize("content", [None, "", "   \n"])
def test_missing_or_empty_file_falls_back_loudly(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, content: str | None
) -> None:
    path = tmp_path / "persona.md"
    if content is not None:
        path.write_text(content, "utf-8")
    with caplog.at_level(logging.ERROR, logger="yuji.chat"):
        assert load_persona(str(path)) == default_persona()
    assert "using the default persona" in caplog.text
