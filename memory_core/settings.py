"""The frozen settings object the core receives.

The core never reads the environment: the NoneBot plugin (or the CLI) builds one
`Settings` from its configuration and hands it over. Every field has the default of
SPEC.md; `.env.example` documents each one under its `YUJI_` name.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .errors import ConfigError

VectorMode = Literal["on", "shadow", "off"]
LLMJob = Literal["chat", "consolidation", "nightly", "vision"]
LLM_JOBS: tuple[LLMJob, ...] = ("chat", "consolidation", "nightly", "vision")
SECRET_FIELDS = (
    "llm_api_key",
    *(f"{job}_llm_api_key" for job in LLM_JOBS),
    "telegram_bot_token",
    "console_token",
)
"""Settings never shown nor logged (the console masks them, the logs redact them)."""


@dataclass(frozen=True, slots=True)
class ModelEndpoint:
    """Where one job's model lives (`Settings.model_for`)."""

    base_url: str
    api_key: str = field(repr=False)
    model: str


@dataclass(frozen=True, slots=True)
class Settings:
    # storage
    data_dir: Path = Path("data")
    database_url: str = ""
    """Empty means SQLite at `data_dir/yuji.db`."""
    timezone: str = "Asia/Shanghai"
    db_busy_timeout_s: float = 30.0
    """How long a writer waits for another process's write transaction before giving up."""

    # archive
    attachment_max_bytes: int = 10 * 1024 * 1024
    attachment_timeout_s: float = 15.0
    attachment_retention_days: int = 90
    attachment_allow_loopback: bool = False
    """Fetch images from loopback addresses: only when the QQ client serves them on this host."""
    attachment_allow_private: bool = False
    """Fetch images from private and link-local ranges (resolved addresses, redirects too)."""
    archive_flush_max: int = 500
    """Largest group commit the archive writer makes in one transaction."""
    archive_queue_max: int = 10_000
    """Messages received and not yet written; when full, reading from the client pauses."""
    shutdown_drain_s: float = 30.0
    """On SIGINT/SIGTERM, how long the archive may take to write what it received."""

    # consolidation
    batch_max_messages: int = 40
    batch_max_chars: int = 6000
    eligible_min_pending: int = 12
    eligible_max_wait_s: int = 2 * 3600
    consolidation_tick_s: int = 600
    consolidation_hourly_cap: int = 4
    batch_watchdog_s: int = 600
    batch_max_turns: int = 12
    batch_failures_before_alert: int = 3

    # recall
    recall_limit: int = 5
    recall_diversity: float = 0.3
    """How much a memory's likeness to one already chosen for the same reply costs it
    (maximal marginal relevance, 0-1): 0 takes the most relevant in order, higher values
    prefer memories that say something different. Changeable live in the console."""
    near_duplicate_threshold: float = 0.85
    near_duplicate_window: int = 500
    vector_mode: VectorMode = "on"
    """on: dense retrieval is part of recall; shadow: computed and logged only; off:
    words and links only (small hosts; the model is never loaded)."""
    vector_model_path: str = ""
    """Empty uses the bundled multilingual-e5-small; else a folder with model.onnx +
    tokenizer.json (then `relevance_weights` must name weights fitted for it)."""
    relevance_weights: str = ""
    """Empty uses the relevance weights shipped for the embedding model in use; else a
    file written by `yuji eval DATASET --calibrate`."""

    # llm
    llm_base_url: str = ""
    llm_api_key: str = field(default="", repr=False)
    llm_model: str = ""
    llm_timeout_s: float = 60.0
    llm_max_retries: int = 3
    llm_temperature: float = 0.7
    llm_json_mode: str = "auto"
    """How JSON replies are asked for: auto (json_schema, then json_object, then the
    prompt alone, learnt per base URL and model), or one of those three, forced."""

    # a model per job: each field empty = the YUJI_LLM_* value (vision has no default)
    chat_llm_base_url: str = ""
    chat_llm_api_key: str = field(default="", repr=False)
    chat_llm_model: str = ""
    consolidation_llm_base_url: str = ""
    consolidation_llm_api_key: str = field(default="", repr=False)
    consolidation_llm_model: str = ""
    nightly_llm_base_url: str = ""
    nightly_llm_api_key: str = field(default="", repr=False)
    nightly_llm_model: str = ""
    vision_llm_base_url: str = ""
    vision_llm_api_key: str = field(default="", repr=False)
    vision_llm_model: str = ""
    """Images are described only when this is set."""

    # chat
    persona_file: str = ""
    """Empty uses the 大肥鱼 persona shipped in the package."""
    nicknames: tuple[str, ...] = ("大肥鱼",)
    ooc_patterns: tuple[str, ...] = (
        r"作为(一个)?(AI|人工智能|语言模型)",
        r"我是一个?(AI|人工智能|语言模型)",
        r"(抱歉|对不起|很遗憾)[，,]?\s*(我)?(无法|不能)",
        r"我无法(回答|提供|协助|满足)",
        r"(?i)as an ai",
        r"(?i)i('m| am) (sorry|unable)",
    )
    fallback_line: str = "唔……鱼鱼脑子打结了，等下再说~"
    failure_line: str = "鱼鱼这会儿有点卡，过会儿再找我吧~"
    reply_max_chars: int = 300
    recent_messages: int = 20
    chat_memory_tool: str = "off"
    """on: the chat model may call search_memory(query) once per reply (this chat only)."""
    backfill_interval_s: int = 1800
    backfill_max: int = 200
    backfill_catchup_max: int = 1000
    """After a start or reconnect, at most this many messages are paged back per group."""

    # vision
    vision_interval_s: int = 30
    """How often new images are sent to the vision model (when one is configured)."""

    # nightly
    nightly_time: str = "04:00"
    nightly_retry_after_s: int = 2 * 3600
    nightly_max_failures: int = 3
    gc_cold_after_days: int = 120
    nightly_llm_retries: int = 5
    """Extra asks (each cooler) when a nightly model reply is invalid or out of character."""
    nightly_catchup_days: int = 14
    """After downtime, at most this many missed days are caught up (the most recent)."""
    nightly_recent_diaries: int = 3
    """Latest diaries shown to the chat model."""
    gc_exempt_types: tuple[str, ...] = ("rule",)
    """Memory types that never go cold."""
    gc_keep_importance: float = 0.9
    """Memories at least this important never go cold."""

    # exposure
    allow_unauthenticated_onebot: bool = False
    """Listen on a non-loopback HOST with an empty ONEBOT_ACCESS_TOKEN (refused otherwise)."""

    # operations
    backup_interval_s: int = 3 * 3600
    backup_mirror: str = ""
    backup_keep_latest: int = 20
    backup_keep_daily: int = 30
    backup_keep_weekly: int = 12
    backup_orphan_after_s: int = 6 * 3600
    """Files a killed backup left without a manifest are removed once this old."""
    capacity_limit_bytes: int = 5 * 1024**3
    log_retention_days: int = 7
    telegram_bot_token: str = field(default="", repr=False)
    telegram_chat_id: str = ""
    telegram_base_url: str = ""
    alert_dedup_s: int = 3600
    alert_timeout_s: float = 10.0
    """Hard limit on one Telegram send; alerts are sent in the background either way."""

    # console
    console_token: str = field(default="", repr=False)
    """Empty keeps the web console at /yuji/ off; else the token that opens it."""

    def __post_init__(self) -> None:
        problems = validate(self)
        if problems:
            raise ConfigError("invalid settings: " + "; ".join(problems))

    @property
    def bot_name(self) -> str:
        """What the bot calls itself: its first nickname (大肥鱼 when none is set)."""
        return self.nicknames[0] if self.nicknames else "大肥鱼"

    @property
    def database_path(self) -> Path:
        return self.data_dir / "yuji.db"

    @property
    def sqlalchemy_url(self) -> str:
        return self.database_url or f"sqlite+aiosqlite:///{self.database_path}"

    @property
    def attachments_dir(self) -> Path:
        return self.data_dir / "attachments"

    @property
    def backups_dir(self) -> Path:
        return self.data_dir / "backups"

    @property
    def vectors_dir(self) -> Path:
        return self.data_dir / "vectors"

    @property
    def logs_dir(self) -> Path:
        return self.data_dir / "logs"

    @property
    def llm_configured(self) -> bool:
        return bool(self.llm_base_url and self.llm_model)

    def model_for(self, job: LLMJob) -> ModelEndpoint | None:
        """`job`'s model: its own `YUJI_<JOB>_LLM_*` fields, each falling back to
        `YUJI_LLM_*`; None when no base URL and model result (vision: when
        `YUJI_VISION_LLM_MODEL` is unset). The default key is only sent to the
        default base URL: a job pointed elsewhere needs its own key."""
        base_url = getattr(self, f"{job}_llm_base_url") or self.llm_base_url
        model = getattr(self, f"{job}_llm_model") or (self.llm_model if job != "vision" else "")
        key = getattr(self, f"{job}_llm_api_key")
        if not key and base_url.rstrip("/") == self.llm_base_url.rstrip("/"):
            key = self.llm_api_key
        if not base_url or not model:
            return None
        return ModelEndpoint(base_url=base_url, api_key=key, model=model)

    def with_changes(self, **changes: Any) -> Settings:
        return replace(self, **changes)


# Counts, sizes and intervals that must be at least 1 for the feature to work at all.
_AT_LEAST_ONE = (
    "attachment_max_bytes",
    "archive_flush_max",
    "archive_queue_max",
    "batch_max_messages",
    "batch_max_chars",
    "eligible_min_pending",
    "consolidation_tick_s",
    "consolidation_hourly_cap",
    "batch_watchdog_s",
    "batch_max_turns",
    "batch_failures_before_alert",
    "recall_limit",
    "near_duplicate_window",
    "backfill_max",
    "backfill_catchup_max",
    "nightly_retry_after_s",
    "nightly_max_failures",
    "nightly_catchup_days",
    "backup_interval_s",
    "backup_keep_latest",
    "backup_orphan_after_s",
    "capacity_limit_bytes",
    "log_retention_days",
    "attachment_retention_days",
    "vision_interval_s",
)
_POSITIVE_SECONDS = (
    "db_busy_timeout_s",
    "attachment_timeout_s",
    "llm_timeout_s",
    "alert_timeout_s",
)
_FRACTIONS = ("recall_diversity", "near_duplicate_threshold", "gc_keep_importance")
_CLOCK_TIME = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]")


def validate(settings: Settings) -> list[str]:
    """Every reason these settings cannot run, named by their `YUJI_*` variables."""

    def env(name: str) -> str:
        return f"YUJI_{name.upper()}"

    problems = [f"{env(n)} must be at least 1" for n in _AT_LEAST_ONE if getattr(settings, n) < 1]
    problems += [
        f"{env(n)} must be above 0" for n in _POSITIVE_SECONDS if getattr(settings, n) <= 0
    ]
    problems += [
        f"{env(n)} must be between 0 and 1"
        for n in _FRACTIONS
        if not 0 <= getattr(settings, n) <= 1
    ]
    if settings.reply_max_chars < 20:
        problems.append("YUJI_REPLY_MAX_CHARS must be at least 20")
    if settings.vector_mode not in ("on", "shadow", "off"):
        problems.append("YUJI_VECTOR_MODE must be on, shadow or off")
    if settings.chat_memory_tool not in ("on", "off"):
        problems.append("YUJI_CHAT_MEMORY_TOOL must be on or off")
    if settings.llm_json_mode not in ("auto", "json_schema", "json_object", "prompt"):
        problems.append("YUJI_LLM_JSON_MODE must be auto, json_schema, json_object or prompt")
    if not _CLOCK_TIME.fullmatch(settings.nightly_time):
        problems.append("YUJI_NIGHTLY_TIME must be HH:MM (24-hour)")
    try:
        ZoneInfo(settings.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        problems.append(f"YUJI_TIMEZONE: unknown zone {settings.timezone!r}")
    for n in (
        "llm_max_retries",
        "nightly_llm_retries",
        "recent_messages",
        "alert_dedup_s",
        "backfill_interval_s",
        "shutdown_drain_s",
    ):
        if getattr(settings, n) < 0:
            problems.append(f"{env(n)} must not be negative")
    return problems


def settings_from_mapping(values: dict[str, Any]) -> Settings:
    """Build Settings from `yuji_`-prefixed (or bare) keys, ignoring unknown ones.

    Used by the CLI, which reads `YUJI_*` from the environment and `.env` itself.
    """
    known = {f.name: f for f in fields(Settings)}
    kwargs: dict[str, Any] = {}
    for key, raw in values.items():
        name = key.lower().removeprefix("yuji_")
        if name not in known or raw is None:
            continue
        kwargs[name] = _coerce(name, raw)
    return Settings(**kwargs)


def parse_bool(raw: object) -> bool:
    """A yes/no setting as text (or already parsed): 1, true, yes and on are yes."""
    return str(raw).strip().lower() in {"1", "true", "yes", "on"}


def _coerce(name: str, raw: Any) -> Any:
    default = getattr(Settings(), name)
    if not isinstance(raw, str):
        return Path(raw) if isinstance(default, Path) else raw
    if isinstance(default, bool):
        return parse_bool(raw)
    if isinstance(default, int):
        return int(raw)
    if isinstance(default, float):
        return float(raw)
    if isinstance(default, Path):
        return Path(raw)
    if isinstance(default, tuple):
        # A JSON list keeps commas inside items (regex patterns need them).
        if raw.lstrip().startswith("["):
            return tuple(str(item) for item in json.loads(raw))
        return tuple(part.strip() for part in raw.split(",") if part.strip())
    return raw
