"""The plugin's NoneBot Config is the settings model, read from `yuji_*` keys only."""

from __future__ import annotations

import pytest

from memory_core import Settings
from memory_core.errors import ConfigError


def test_config_reads_yuji_keys_and_ignores_bare_ones() -> None:
    from nonebot_plugin_yuji.config import Config, to_settings

    config = Config.model_validate(
        {"yuji_recall_limit": 3, "yuji_nicknames": "小鱼,大肥鱼", "data_dir": "/elsewhere"}
    )
    assert (config.recall_limit, config.nicknames) == (3, ("小鱼", "大肥鱼"))
    assert config.data_dir == Settings().data_dir  # a bare DATA_DIR is no yuji setting
    settings = to_settings(config, {"鱼鱼"})
    assert type(settings) is Settings
    assert settings.nicknames == ("鱼鱼",)
    assert Config.model_fields["recall_limit"].description


def test_config_names_the_variable_it_refuses() -> None:
    from nonebot_plugin_yuji.config import Config

    with pytest.raises(ConfigError, match="YUJI_NIGHTLY_TIME"):
        Config.model_validate({"yuji_nightly_time": "25:00"})
