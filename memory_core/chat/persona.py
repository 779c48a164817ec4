"""The persona prompt: `YUJI_PERSONA_FILE`, or the short 大肥鱼 persona shipped with yuji."""

from __future__ import annotations

import logging
from importlib import resources
from pathlib import Path

log = logging.getLogger("yuji.chat")

DEFAULT_PERSONA = "persona_default.md"


def default_persona() -> str:
    return resources.files("memory_core.prompts").joinpath(DEFAULT_PERSONA).read_text("utf-8")


def load_persona(path: str) -> str:
    """The operator's file when set and readable; otherwise the default, said loudly."""
    if not path.strip():
        return default_persona()
    try:
        text = Path(path).expanduser().read_text("utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        log.error("yuji: persona file %s unreadable (%s); using the default persona", path, exc)
        return default_persona()
    if not text:
        log.error("yuji: persona file %s is empty; using the default persona", path)
        return default_persona()
    return text
