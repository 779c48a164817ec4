"""`yuji env-example`: `.env.example`, written from the settings model.

Every `YUJI_*` line is a field of `memory_core.Settings`: its docstring as the comment,
its default as the value. The NoneBot part on top and the section headings are here;
a test keeps the shipped `.env.example` equal to `render()`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from memory_core.settings import Settings

HEADER = """\
# yuji configuration. Copy to `.env`; any of these can also be set as an environment
# variable of the same name, which wins over this file. Values shown are the defaults.
# Written by `yuji env-example` from memory_core/settings.py (edit the docstrings there).

# --- NoneBot and the OneBot connection ------------------------------------------
# Web server for the reverse WebSocket (ws://HOST:PORT/onebot/v11/ws).
DRIVER=~fastapi
HOST=127.0.0.1
PORT=8080
# Shared secret with NapCat / LLOneBot / Lagrange. Empty = no check: a warning at start,
# and a HOST other than loopback is refused unless YUJI_ALLOW_UNAUTHENTICATED_ONEBOT=true.
ONEBOT_ACCESS_TOKEN=
# QQ ids allowed to run every admin command anywhere, as a JSON list.
SUPERUSERS=[]
# Names the persona answers to in group chat, as a JSON list.
NICKNAME=["大肥鱼"]
COMMAND_START=["/"]
LOG_LEVEL=INFO
"""

SECTIONS: dict[str, tuple[str, str]] = {
    "data_dir": ("storage", ""),
    "attachment_max_bytes": ("archive", ""),
    "batch_max_messages": ("consolidation (background LLM)", ""),
    "recall_limit": ("recall", ""),
    "llm_base_url": ("LLM (any OpenAI-compatible chat completions API)", ""),
    "chat_llm_base_url": (
        "a model per job",
        """\
Each job may use its own model; every empty value falls back to the YUJI_LLM_* one.
The usual split: a cheap, fast model for the background jobs (consolidation reads
every message once, nightly writes a diary per chat per night) and a better one for
chat (what the group actually sees), e.g. with DeepSeek:
  YUJI_LLM_BASE_URL=https://api.deepseek.com/v1  YUJI_LLM_MODEL=deepseek-chat
  YUJI_CONSOLIDATION_LLM_BASE_URL=https://api.siliconflow.cn/v1
  YUJI_CONSOLIDATION_LLM_API_KEY=sk-...  YUJI_CONSOLIDATION_LLM_MODEL=Qwen/Qwen2.5-7B-Instruct
The default key is only sent to the default base URL: a job pointed at another
provider needs its own key. Consolidation needs a model with tool calling.""",
    ),
    "persona_file": ("chat", ""),
    "vision_interval_s": ("vision", ""),
    "nightly_time": ("nightly", ""),
    "followup_window_days": ("follow-ups", ""),
    "allow_unauthenticated_onebot": ("exposure", ""),
    "backup_interval_s": ("operations", ""),
    "console_token": ("web console", ""),
}
"""The field that opens each section: its heading and an introduction."""


def value_text(value: Any) -> str:
    """A default as `.env` holds it (what `settings_from_mapping` reads back)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple):
        items = [str(item) for item in value]  # pyright: ignore[reportUnknownVariableType]
        if any(c in item for item in items for c in ',"[]'):
            return json.dumps(items, ensure_ascii=False)
        return ",".join(items)
    return str(value)


def _comment(text: str) -> list[str]:
    return [f"# {line}".rstrip() for line in text.splitlines()]


def render() -> str:
    lines = HEADER.splitlines()
    defaults = Settings()
    for name, info in Settings.model_fields.items():
        if name in SECTIONS:
            title, intro = SECTIONS[name]
            lines += ["", f"# --- {title} " + "-" * max(3, 84 - len(title))]
            lines += _comment(intro)
        lines += _comment(info.description or "")
        lines.append(f"YUJI_{name.upper()}={value_text(getattr(defaults, name))}")
    return "\n".join(lines) + "\n"


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "env-example",
        help="打印 .env.example（每个设置、它的默认值和说明）",
        description="打印从设置模型写出的 .env.example（注释是英文的），或用 --write 写进文件",
    )
    parser.add_argument("--write", type=Path, metavar="FILE", help="写进 FILE，不打印")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    text = render()
    if args.write is None:
        print(text, end="")
    else:
        Path(args.write).write_text(text, encoding="utf-8")
    return 0
