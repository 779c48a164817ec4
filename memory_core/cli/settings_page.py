"""The documentation's settings page (docs/settings.md), written from the settings model.

Every field of `memory_core.Settings` is a row: its variable, its default, and what it
does, in Chinese from `settings_zh.json` (beside this module), else the field's own
docstring. A test keeps the shipped page equal to `render()`; after changing a
setting, write it again:

    python -m memory_core.cli.settings_page --write docs/settings.md
"""

from __future__ import annotations

import argparse
import json
from importlib import resources
from pathlib import Path
from typing import Any

from memory_core.console.tunables import TUNABLES
from memory_core.settings import SECRET_FIELDS, Settings

from .env_example import value_text

HEADER: str = """\
# 全部设置

<!-- 本页由 `python -m memory_core.cli.settings_page --write docs/settings.md` 从设置模型
（memory_core/settings.py）生成，不要手改；测试会比较本页和设置模型。 -->

每个设置都可以写进 `.env`（把 `.env.example` 复制过去再改），也可以用同名的环境变量给出，
环境变量优先（systemd、Docker 部署时方便）。本页列出设置模型里的每一个字段和它的默认值，
`.env.example` 里是同样的内容（英文注释）。

- 机器人和 `yuji` 用同一个读取器（python-dotenv）依次读 `.env`、`.env.<ENVIRONMENT>` 和环境变量：
  `KEY=v # 注释`、`export KEY=v` 和带引号的值对两者意思相同。
- 布尔值接受 true/false、yes/no、on/off、1/0，其他写法会被拒绝，不会被当成“否”。
- 机器人或 `yuji` 不能接受的值会让启动停下，只打印一行，指出是哪个 `YUJI_*` 变量、
  它接受什么（退出码 2）；写错名字的 `YUJI_*` 变量会在启动时被点名，并给出最接近的真名。
- 标着 **控制台可改** 的设置可以在网页控制台的“设置”页实时修改，不用重启；
  改过的值存在数据库里，优先于默认值、`.env` 和环境变量。
- 标着 **密钥** 的设置在日志和控制台里一律显示为 `***`。

## NoneBot 与 OneBot 连接

这几项属于 NoneBot 和 OneBot 适配器，不带 `YUJI_` 前缀。

| 变量 | 默认值 | 说明 |
| --- | --- | --- |
| `DRIVER` | `~fastapi` | NoneBot 的驱动，反向 WebSocket 和控制台都由它提供。 |
| `HOST` | `127.0.0.1` | 监听地址；要让别的机器连进来就设 `0.0.0.0`（此时必须设置 `ONEBOT_ACCESS_TOKEN`）。 |
| `PORT` | `8080` | 监听端口：反向 WebSocket 在 `ws://HOST:PORT/onebot/v11/ws`，控制台在 `http://HOST:PORT/yuji/`。 |
| `ONEBOT_ACCESS_TOKEN` | （空） | 和 NapCat / LLOneBot / Lagrange 共用的密钥。空 = 不校验：启动时警告，且不允许监听非本机地址，除非 `YUJI_ALLOW_UNAUTHENTICATED_ONEBOT=true`。 **密钥** |
| `SUPERUSERS` | `[]` | 在任何聊天都能用所有管理命令的 QQ 号，JSON 列表。 |
| `NICKNAME` | `["大肥鱼"]` | 人设在群里应答的名字，JSON 列表。 |
| `COMMAND_START` | `["/"]` | 命令前缀。 |
| `LOG_LEVEL` | `INFO` | 日志级别。 |
"""


def _texts() -> dict[str, Any]:
    raw = resources.files("memory_core.cli").joinpath("settings_zh.json").read_text("utf-8")
    return json.loads(raw)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render() -> str:
    texts = _texts()
    sections: dict[str, str] = texts["sections"]
    said: dict[str, str] = texts["fields"]
    defaults = Settings()
    lines = HEADER.splitlines()
    for name, info in Settings.model_fields.items():
        if name in sections:
            lines += [
                "",
                f"## {sections[name]}",
                "",
                "| 变量 | 默认值 | 说明 |",
                "| --- | --- | --- |",
            ]
        value = value_text(getattr(defaults, name))
        default = f"`{value}`" if value else "（空）"
        words = said.get(name) or info.description or ""
        marks = [
            m for m, on in (("控制台可改", name in TUNABLES), ("密钥", name in SECRET_FIELDS)) if on
        ]
        tail = "".join(f" **{m}**" for m in marks)
        lines.append(f"| `YUJI_{name.upper()}` | {_cell(default)} | {_cell(words)}{tail} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="print (or --write) docs/settings.md")
    parser.add_argument("--write", type=Path, metavar="FILE", help="write it to FILE instead")
    args = parser.parse_args(argv)
    if args.write is None:
        print(render(), end="")
    else:
        args.write.write_text(render(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
