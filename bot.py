"""Start the bot: `python bot.py` (after `pip install -e .`).

NoneBot reads `.env`, but lets an environment variable override only the keys that
file names. Operators deploy with plain environment variables (systemd, Docker), so
every `YUJI_*` and `ONEBOT_*` variable is handed to `nonebot.init` explicitly, where
it wins over any file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import nonebot
from nonebot.adapters.onebot.v11 import Adapter as OneBotV11Adapter

ENV_PREFIXES = ("YUJI_", "ONEBOT_")


def env_overrides(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    return {
        key.lower(): value for key, value in environ.items() if key.upper().startswith(ENV_PREFIXES)
    }


def main() -> None:
    # NoneBot's own defaults (driver ~fastapi, 127.0.0.1:8080) apply unless set.
    nonebot.init(**env_overrides())
    nonebot.get_driver().register_adapter(OneBotV11Adapter)
    nonebot.load_plugins("plugins")
    nonebot.run()


if __name__ == "__main__":
    main()
