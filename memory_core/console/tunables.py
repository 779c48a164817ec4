"""Settings the console may change live, how a typed value is read, and secrets.

A tunable is stored as an override in the database and wins over the default, the
`.env` file and the environment; the other settings are shown read-only, with the
secrets masked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from memory_core.errors import ConfigError, ValidationError
from memory_core.settings import SECRET_FIELDS, Settings, settings_from_mapping

Origin = Literal["default", ".env", "environment", "console"]

TUNABLES: dict[str, str] = {
    "recall_limit": "每次回复最多注入的记忆条数",
    "recall_diversity": "多样性权重（0–1）：与已选记忆越相似越扣分，0 = 只按相关度",
    "recall_floor": "注入下限（相关度 0–1）：低于它的候选当作噪声不注入；留空 = 校准值",
    "recall_sure": "确定线：相关度不低于它的记忆标为“确定”，低于它标为“相关”（不能当事实说）；留空 = 校准值",
    "eligible_min_pending": "待整理消息达到这么多条就整理",
    "eligible_max_wait_s": "最早一条待整理消息等了这么多秒就整理",
    "consolidation_tokens_per_hour": "整理每小时最多花的 token 数（0 = 不限）",
    "consolidation_tokens_per_day": "整理每 24 小时最多花的 token 数（0 = 不限）",
    "consolidation_concurrency": "同时整理的聊天数（每个聊天最多一批）",
    "nightly_time": "夜间整理时间（HH:MM）",
    "nicknames": "唤醒昵称（逗号分隔）",
}
SECRETS = SECRET_FIELDS


@dataclass(frozen=True, slots=True)
class SettingView:
    name: str
    value: str
    origin: Origin
    tunable: bool
    help: str = ""


def parse_tunable(name: str, raw: str) -> Any:
    """The typed value of a tunable as typed in the form; refuses what Settings refuses."""
    if name not in TUNABLES:
        raise ValidationError(f"{name} 不能在控制台修改")
    try:
        value = getattr(settings_from_mapping({name: raw.strip()}), name)
    except (ValueError, ConfigError) as exc:
        raise ValidationError(f"{name}: {exc}") from exc
    return list(value) if isinstance(value, tuple) else value


def apply(base: Settings, overrides: dict[str, Any]) -> Settings:
    """`base` with every known override applied (unknown or invalid ones are skipped)."""
    current = base
    for name, value in overrides.items():
        if name not in TUNABLES:
            continue
        try:
            current = current.with_changes(
                **{name: tuple(value) if isinstance(value, list) else value}
            )
        except (ConfigError, TypeError):
            continue
    return current


def shown(name: str, value: Any) -> str:
    if name in SECRETS:
        return "***" if value else "（未设置）"
    if isinstance(value, tuple):
        return ", ".join(str(v) for v in value)
    if value is None:  # the form shows it empty, with a placeholder saying what decides
        return ""
    if isinstance(value, bool):  # as `.env` writes it, not Python's False
        return "true" if value else "false"
    return str(value)


def views(
    effective: Settings, overrides: dict[str, Any], origins: dict[str, Origin]
) -> list[SettingView]:
    """Every setting: tunables first, then the rest read-only, with where each comes from."""
    rows = [
        SettingView(
            name=name,
            value=shown(name, getattr(effective, name)),
            origin="console"
            if name in overrides and name in TUNABLES
            else origins.get(name, "default"),
            tunable=name in TUNABLES,
            help=TUNABLES.get(name, ""),
        )
        for name in Settings.model_fields
    ]
    return sorted(rows, key=lambda r: (not r.tunable, r.name))
