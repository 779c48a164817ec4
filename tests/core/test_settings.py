"""Settings refuse values the bot cannot run with, naming the variable to fix."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.errors import ConfigError
from memory_core.settings import (
    Settings,
    configured_values,
    misspelled_settings,
    settings_from_mapping,
)


def test_the_defaults_are_valid() -> None:
    assert Settings().recall_limit == 5


@pytest.mark.parametrize(
    ("change", "variable"),
    [
        ({"batch_max_messages": 0}, "YUJI_BATCH_MAX_MESSAGES"),
        ({"consolidation_tick_s": -5}, "YUJI_CONSOLIDATION_TICK_S"),
        ({"llm_timeout_s": 0.0}, "YUJI_LLM_TIMEOUT_S"),
        ({"near_duplicate_threshold": 1.5}, "YUJI_NEAR_DUPLICATE_THRESHOLD"),
        ({"reply_max_chars": 1}, "YUJI_REPLY_MAX_CHARS"),
        ({"nightly_time": "4am"}, "YUJI_NIGHTLY_TIME"),
        ({"timezone": "Mars/Olympus"}, "YUJI_TIMEZONE"),
        ({"nightly_max_failures": 0}, "YUJI_NIGHTLY_MAX_FAILURES"),
    ],
)
def test_an_unusable_value_names_its_variable(change: dict[str, object], variable: str) -> None:
    with pytest.raises(ConfigError, match=variable):
        Settings(**change)  # type: ignore[arg-type]


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(ConfigError) as info:
        Settings(batch_max_chars=0, nightly_time="25:00")
    assert "YUJI_BATCH_MAX_CHARS" in str(info.value)
    assert "YUJI_NIGHTLY_TIME" in str(info.value)


def test_environment_strings_are_coerced_to_the_field_types() -> None:
    s = settings_from_mapping(
        {
            "YUJI_BATCH_MAX_MESSAGES": "30",
            "YUJI_LLM_TIMEOUT_S": "12.5",
            "YUJI_NICKNAMES": "大肥鱼, 鱼鱼",
            "YUJI_OOC_PATTERNS": '["a,b", "c"]',
            "UNRELATED": "x",
        }
    )
    assert (s.batch_max_messages, s.llm_timeout_s) == (30, 12.5)
    assert s.nicknames == ("大肥鱼", "鱼鱼")
    assert s.ooc_patterns == ("a,b", "c")


@given(st.integers(min_value=0, max_value=23), st.integers(min_value=0, max_value=59))
def test_every_clock_time_is_accepted(hour: int, minute: int) -> None:
    assert (
        Settings(nightly_time=f"{hour:02d}:{minute:02d}").nightly_time == f"{hour:02d}:{minute:02d}"
    )


def test_zero_backfill_interval_means_only_on_command() -> None:
    assert Settings(backfill_interval_s=0).backfill_interval_s == 0
    with pytest.raises(ConfigError, match="YUJI_BACKFILL_INTERVAL_S"):
        Settings(backfill_interval_s=-1)


def test_the_bot_calls_itself_by_its_first_nickname() -> None:
    assert Settings(nicknames=("小鱼", "大肥鱼")).bot_name == "小鱼"
    assert Settings(nicknames=()).bot_name == "大肥鱼"


def test_every_setting_has_a_docstring() -> None:
    undocumented = [name for name, f in Settings.model_fields.items() if not f.description]
    assert undocumented == []


def test_a_malformed_variable_is_named_without_its_value() -> None:
    with pytest.raises(ConfigError, match="YUJI_RECALL_LIMIT") as info:
        settings_from_mapping({"YUJI_RECALL_LIMIT": "five-sk-secret"})
    assert "sk-secret" not in str(info.value)


def test_yes_no_values_read_as_before() -> None:
    for raw, expected in [("true", True), ("ON", True), ("1", True), ("off", False), ("no", False)]:
        s = settings_from_mapping({"YUJI_ATTACHMENT_ALLOW_LOOPBACK": raw})
        assert s.attachment_allow_loopback is expected


@pytest.mark.parametrize("raw", ["ture", "yess", "2", "enabled"])
def test_a_yes_no_typo_is_refused_not_read_as_no(raw: str) -> None:
    with pytest.raises(
        ConfigError, match="YUJI_ALLOW_UNAUTHENTICATED_ONEBOT must be true or false"
    ):
        settings_from_mapping({"YUJI_ALLOW_UNAUTHENTICATED_ONEBOT": raw})


@pytest.mark.parametrize(
    ("variable", "raw", "says"),
    [
        ("YUJI_RECALL_LIMIT", "five", "YUJI_RECALL_LIMIT must be a whole number"),
        ("YUJI_LLM_TIMEOUT_S", "soon", "YUJI_LLM_TIMEOUT_S must be a number"),
        ("YUJI_TIMEZONE", "Mars/Olympus", "use an IANA name such as Asia/Shanghai"),
        ("YUJI_VECTOR_MODE", "maybe", "YUJI_VECTOR_MODE must be 'on', 'shadow' or 'off'"),
    ],
)
def test_a_refusal_says_what_the_variable_accepts(variable: str, raw: str, says: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(says)):
        settings_from_mapping({variable: raw})


def test_a_misspelled_setting_is_named_with_the_closest_real_one() -> None:
    warnings = misspelled_settings(
        ["YUJI_RECAL_LIMIT", "yuji_llm_modle", "YUJI_RECALL_LIMIT", "HOME", "YUJI_ZZZ"]
    )
    assert warnings == [
        "YUJI_LLM_MODLE is not a yuji setting and is ignored; did you mean YUJI_LLM_MODEL?",
        "YUJI_RECAL_LIMIT is not a yuji setting and is ignored; did you mean YUJI_RECALL_LIMIT?",
        "YUJI_ZZZ is not a yuji setting and is ignored; see .env.example for the settings",
    ]


def test_configured_values_follow_nonebots_order_and_blank_means_default(
    tmp_path: Path,
) -> None:
    (tmp_path / ".env").write_text(
        "ENVIRONMENT=dev\nYUJI_RECALL_LIMIT=3\nYUJI_LLM_MODEL=from-env-file\nHOME=x\n", "utf-8"
    )
    (tmp_path / ".env.dev").write_text("yuji_recall_limit=4\nYUJI_BATCH_MAX_CHARS=7\n", "utf-8")
    environ = {"YUJI_BATCH_MAX_CHARS": "8", "YUJI_LLM_MODEL": ""}
    assert configured_values(environ, tmp_path) == {
        "YUJI_RECALL_LIMIT": "4",
        "YUJI_BATCH_MAX_CHARS": "8",
    }


def test_with_changes_validates_the_new_settings() -> None:
    assert Settings().with_changes(recall_limit=3).recall_limit == 3
    with pytest.raises(ConfigError, match="YUJI_RECALL_LIMIT must be at least 1"):
        Settings().with_changes(recall_limit=0)
