"""The frozen settings object the core receives.

The core never reads the environment: bot.py (or the CLI) builds one `Settings` from
its configuration and hands it over. One pydantic model declares, documents (a
docstring per field) and validates every setting; each is read from its `YUJI_*`
variable, and `.env.example` is written from it (`yuji env-example`). Both entry
points gather those variables with `configured_values`, so one `.env` means one thing.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dotenv import dotenv_values
from pydantic import (
    AliasChoices,
    AliasGenerator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from .errors import ConfigError

VectorMode = Literal["on", "shadow", "off"]
OnOff = Literal["on", "off"]
RecallJudge = Literal["off", "llm"]
RerankFormat = Literal["auto", "documents", "tei", "dashscope"]
JsonMode = Literal["auto", "json_schema", "json_object", "prompt"]
AtLeastOne = Annotated[int, Field(ge=1)]
"""A count, size or interval the feature needs at least one of to work at all."""
NonNegative = Annotated[int, Field(ge=0)]
NonNegativeSeconds = Annotated[float, Field(ge=0)]
PositiveSeconds = Annotated[float, Field(gt=0)]
Fraction = Annotated[float, Field(ge=0, le=1)]
OptionalFraction = Annotated[Fraction | None, BeforeValidator(lambda v: None if v == "" else v)]
"""A fraction that may be left empty (`None`: a calibrated value decides)."""
_CLOCK_TIME = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]")
LLMJob = Literal["chat", "consolidation", "nightly", "vision"]
LLM_JOBS: tuple[LLMJob, ...] = ("chat", "consolidation", "nightly", "vision")
SECRET_FIELDS = (
    "llm_api_key",
    *(f"{job}_llm_api_key" for job in LLM_JOBS),
    "telegram_bot_token",
    "console_token",
    "embed_api_key",
    "rerank_api_key",
)
"""Settings never shown nor logged (the console masks them, the logs redact them)."""


def _variable_names(name: str) -> AliasChoices:
    """A setting is read by its own name, NoneBot's `yuji_*` key or its `YUJI_*` variable."""
    return AliasChoices(name, f"yuji_{name}", f"YUJI_{name.upper()}")


@dataclass(frozen=True, slots=True)
class ModelEndpoint:
    """Where one job's model lives (`Settings.model_for`)."""

    base_url: str
    api_key: str = field(repr=False)
    model: str


class Settings(BaseModel):
    """Every setting of yuji, each read from its `YUJI_*` variable (or `yuji_*` key).

    Validated on construction; a value the bot cannot run with is a `ConfigError`
    naming every offending variable. Frozen: `with_changes` builds a new, validated one."""

    model_config = ConfigDict(
        frozen=True,
        extra="ignore",
        use_attribute_docstrings=True,
        validate_by_name=True,
        validate_by_alias=True,
        alias_generator=AliasGenerator(validation_alias=_variable_names),
    )

    data_dir: Path = Path("data")
    """Folder for yuji.db, attachments/ (unless YUJI_ATTACHMENTS_DIR), backups/, vectors/
    and logs/."""
    attachments_dir: str = ""
    """Empty = $YUJI_DATA_DIR/attachments; or one folder for images and stickers that
    the bot processes sharing one store (each with its own data folder) all use. Share
    it only with processes on the same store: its rows decide which files retention and
    forgetting delete. On several hosts it must be shared storage (e.g. NFS)."""
    database_url: str = ""
    """Empty = SQLite at $YUJI_DATA_DIR/yuji.db; or an SQLAlchemy async URL."""
    timezone: str = "Asia/Shanghai"
    """Zone for day buckets (diaries, nightly run, admin views). Instants are stored in UTC."""
    db_busy_timeout_s: PositiveSeconds = 30.0
    """Seconds a writer (the CLI, /remember, the bot) waits for another process's write
    transaction before giving up with one "database busy" line (nothing half-written)."""

    # archive
    attachment_max_bytes: AtLeastOne = 10 * 1024 * 1024
    """Largest image/sticker download, in bytes (bigger ones are recorded as failed)."""
    attachment_timeout_s: PositiveSeconds = 15.0
    """Seconds before an attachment download is given up."""
    attachment_retention_days: AtLeastOne = 90
    """Attachment files older than this many days are deleted (rows kept as `cleaned`)."""
    attachment_allow_loopback: bool = False
    """Fetch images from 127.0.0.1 / ::1: only when the QQ client serves them on this host."""
    attachment_allow_private: bool = False
    """Fetch images from private and link-local ranges (10/8, 192.168/16, 169.254/16, ...)."""
    archive_flush_max: AtLeastOne = 500
    """Most messages the archive writer commits in one transaction."""
    archive_flush_wait_s: NonNegativeSeconds = 0.2
    """Seconds the archive writer waits for more received messages before a transaction
    of fewer than `archive_flush_max`: one transaction for many messages (each costs the
    process about 6 ms of CPU), each stored up to that much later; a write something waits
    for (a wake, a command, the bot's own message) is not held. 0: commit at once."""
    archive_queue_max: AtLeastOne = 10_000
    """Messages received and not yet written. When full, the bot stops reading from the
    client until the writer catches up (memory stays flat; a line a minute says so)."""
    shutdown_drain_s: NonNegativeSeconds = 30.0
    """On SIGINT/SIGTERM, seconds the archive may take to write everything received before
    the bot exits; what is left is logged by chat and fetched by the next start's backfill."""

    # consolidation
    batch_max_messages: AtLeastOne = 40
    """A batch holds at most this many messages..."""
    batch_max_chars: AtLeastOne = 6000
    """...and at most this many characters of message text."""
    eligible_min_pending: AtLeastOne = 12
    """A chat is eligible with this many unread messages..."""
    eligible_max_wait_s: int = 2 * 3600
    """...or when its oldest unread message has waited this many seconds."""
    consolidation_tick_s: AtLeastOne = 600
    """Seconds between the consolidation scheduler's safety polls (it also wakes at once
    when new messages are archived, when a batch ends and when a chat comes due)."""
    consolidation_tokens_per_hour: NonNegative = 2_000_000
    """Model tokens (prompt + completion, from the `llm_usage` rows of the consolidation
    job) consolidation may spend in any rolling hour; 0 = no limit. Sized so ten groups of
    3,000 messages a day keep up: a batch is one conversation of two or three turns, each
    re-sending the system text and tool schemas (~1,700 tokens) plus the batch (~20 tokens
    a message), ~5,000-7,000 tokens for the 12-20 messages a kept-up batch holds, ~470
    tokens a message. The busiest hour of ten such groups (~2,500 messages at the evening
    peak) is ~1.1M tokens (measured 1.14M); 2M leaves ~75% headroom for a burst or a
    model that takes more turns."""
    consolidation_tokens_per_day: NonNegative = 20_000_000
    """The same over any rolling 24 hours; 0 = no limit. Ten groups x 3,000 messages =
    30,000 messages a day x ~470 tokens = ~14M tokens (measured 14.0M); 20M leaves ~40%
    headroom. Measured: docs/benchmarks.md (`benchmarks/consolidation_keepup.py`)."""
    consolidation_concurrency: AtLeastOne = 2
    """Batches open at once, each in a different chat (a chat never has two open)."""
    consolidation_lag_alert_h: Annotated[float, Field(gt=0)] = 6.0
    """Hours the oldest unconsolidated message of a chat may wait before one alert says
    consolidation is not keeping up there (once per chat, until it catches up again)."""
    consolidation_hourly_cap: NonNegative = 0
    """Optional ceiling: most batches started per rolling hour over all chats; 0 = off
    (the token budget above is the limit)."""
    batch_watchdog_s: AtLeastOne = 600
    """A batch that makes no progress for this many seconds is failed."""
    batch_max_turns: AtLeastOne = 12
    """Most model turns (tool-call rounds) in one batch conversation."""
    batch_failures_before_alert: AtLeastOne = 3
    """Consecutive failed batches in one chat before an alert."""

    # recall
    recall_limit: AtLeastOne = 5
    """Most memories injected into one reply."""
    recall_diversity: Fraction = 0.3
    """Diversity weight (0-1) when choosing among relevant memories: how much looking like a
    memory already chosen for the reply costs (0 = most relevant first, regardless).
    Also changeable live on the console's settings page."""
    recall_floor: OptionalFraction = None
    """Least relevance (P, 0-1) a memory needs to be injected at all: below it a candidate
    is noise; empty = the floor calibrated with the relevance weights. Never above the
    sure line. Also changeable live on the console's settings page."""
    recall_sure: OptionalFraction = None
    """P at or above which an injected memory is `sure` (the persona may state it); below
    it `related` (shown as possibly about someone or something else); empty = the
    calibrated line. Higher: fewer sure memories, fewer wrong ones stated as fact. Also
    changeable live on the console."""
    recall_judge: RecallJudge = "off"
    """`llm`: once per wake, the consolidation model is asked which of the recalled memories
    state the thing asked, and its answer moves them between the sure and related bands
    (never adds or drops one); counted under the `judge` job in the model usage. On a
    timeout or a bad answer the bands stand. Off by default: it adds a model call to
    every reply."""
    recall_judge_timeout_s: PositiveSeconds = 3.0
    """How long a reply waits for the judge (part of the reply's deadline)."""
    near_duplicate_threshold: Fraction = 0.85
    """Character-bigram Dice similarity at which a new memory is flagged as a near-duplicate."""
    near_duplicate_window: AtLeastOne = 500
    """How many recent memories of the same chat and type the near-duplicate check looks at."""
    vector_mode: VectorMode = "on"
    """Dense retrieval (a bundled embedding model, offline): on | shadow (computed and logged,
    not used) | off (small hosts: words and links only, the model is never loaded)."""
    vector_model_path: str = ""
    """Empty = the bundled multilingual-e5-small (4-bit); or a folder with model.onnx + tokenizer.json
    (then fit relevance weights for it: `yuji eval DATASET --calibrate --out FILE`)."""
    relevance_weights: str = ""
    """Empty = the relevance weights shipped for the model in use; or a file from --calibrate."""

    # recall models from providers (docs/providers.md)
    embed_base_url: str = ""
    """An OpenAI-compatible embeddings API (its `/embeddings` under this URL), e.g.
    https://api.siliconflow.cn/v1 ; empty = the bundled model (or YUJI_VECTOR_MODEL_PATH).
    Needs a calibration first: `yuji eval --calibrate`."""
    embed_model: str = ""
    """The embedding model asked for, e.g. BAAI/bge-m3. Changing it re-embeds every memory
    in the background; recall answers by words alone until the new vectors are complete."""
    embed_api_key: str = Field(default="", repr=False)
    """The key sent to YUJI_EMBED_BASE_URL (Bearer)."""
    embed_timeout_s: PositiveSeconds = 2.0
    """Seconds a wake waits for its question's embedding; past it recall goes on by
    words alone (and its trace says so)."""
    embed_batch: Annotated[int, Field(ge=1, le=256)] = 32
    """Memory texts sent in one embeddings request."""
    rerank_base_url: str = ""
    """A rerank API: `/rerank` under this URL, e.g. https://api.siliconflow.cn/v1
    (Jina, Cohere, SiliconFlow, Xinference, vLLM) or a TEI server's root; empty = none."""
    rerank_model: str = ""
    """The rerank model asked for, e.g. BAAI/bge-reranker-v2-m3."""
    rerank_api_key: str = Field(default="", repr=False)
    """The key sent to YUJI_RERANK_BASE_URL (Bearer)."""
    rerank_format: RerankFormat = "auto"
    """The request's shape: documents (query, documents, top_n: Jina, Cohere, SiliconFlow,
    Xinference, vLLM), tei (query, texts: Text Embeddings Inference) or dashscope (its
    text-rerank service); auto = dashscope for a dashscope URL, else documents (switching
    to tei once when the server asks for `texts`)."""
    rerank_model_path: str = ""
    """Or a local cross-encoder: a folder with model.onnx + tokenizer.json, run on one
    CPU thread (e.g. bge-reranker-base exported to ONNX). Ignored when
    YUJI_RERANK_BASE_URL is set."""
    rerank_timeout_s: PositiveSeconds = 2.0
    """Seconds a wake waits for the reranker; past it (or on an error or an answer that
    does not parse) the bands stand as they were without it."""
    rerank_candidates: Annotated[int, Field(ge=1, le=100)] = 20
    """The best candidates by P (without the reranker) that the reranker reads again."""
    calibration_dir: str = ""
    """Where `yuji eval --calibrate` writes the weights of each pair of embedding model
    and reranker, and recall reads them; empty = $YUJI_DATA_DIR/calibration."""

    # llm
    llm_base_url: str = ""
    """e.g. https://api.deepseek.com/v1 ; empty = no replies and no consolidation yet."""
    llm_api_key: str = Field(default="", repr=False)
    """The key sent with every request to YUJI_LLM_BASE_URL."""
    llm_model: str = ""
    """e.g. deepseek-chat"""
    llm_timeout_s: PositiveSeconds = 60.0
    """Hard limit per model call, in seconds; a chat reply, its silent retry included, gets
    one such deadline in all."""
    llm_max_retries: NonNegative = 3
    """Retries on 429 / 5xx / connection errors, with backoff."""
    llm_temperature: float = 0.7
    """Sampling temperature of the model's answers (nightly retries ask cooler from here)."""
    llm_json_mode: JsonMode = "auto"
    """How JSON answers (the nightly steps) are asked for. auto: strict json_schema first,
    then json_object, then the prompt alone, moving down once per base URL + model when
    the provider answers HTTP 400 to a mode (DeepSeek: json_object; a local Ollama or
    OpenAI: json_schema). Or force one: json_schema | json_object | prompt. Replies are
    validated and retried locally in every mode."""

    # a model per job: each field empty = the YUJI_LLM_* value (vision has no default)
    chat_llm_base_url: str = ""
    """The chat job's base URL; empty = YUJI_LLM_BASE_URL."""
    chat_llm_api_key: str = Field(default="", repr=False)
    """The chat job's key; empty = YUJI_LLM_API_KEY when the base URL is the default one."""
    chat_llm_model: str = ""
    """The chat job's model; empty = YUJI_LLM_MODEL."""
    consolidation_llm_base_url: str = ""
    """The consolidation job's base URL; empty = YUJI_LLM_BASE_URL."""
    consolidation_llm_api_key: str = Field(default="", repr=False)
    """The consolidation job's key; empty = YUJI_LLM_API_KEY when the base URL is the default one."""
    consolidation_llm_model: str = ""
    """The consolidation job's model (it needs tool calling); empty = YUJI_LLM_MODEL."""
    nightly_llm_base_url: str = ""
    """The nightly job's base URL; empty = YUJI_LLM_BASE_URL."""
    nightly_llm_api_key: str = Field(default="", repr=False)
    """The nightly job's key; empty = YUJI_LLM_API_KEY when the base URL is the default one."""
    nightly_llm_model: str = ""
    """The nightly job's model; empty = YUJI_LLM_MODEL."""
    vision_llm_base_url: str = ""
    """The vision job's base URL; empty = YUJI_LLM_BASE_URL."""
    vision_llm_api_key: str = Field(default="", repr=False)
    """The vision job's key; empty = YUJI_LLM_API_KEY when the base URL is the default one."""
    vision_llm_model: str = ""
    """Vision describes images for the memory; it has no default model: images are only
    described when this is set (e.g. qwen-vl-plus, gpt-4o-mini, a local llava)."""

    # chat
    persona_file: str = ""
    """Persona prompt file; empty = the short 大肥鱼 persona shipped with yuji."""
    nicknames: tuple[str, ...] = ("大肥鱼",)
    """Names that wake the persona (NoneBot's NICKNAME is used when set)."""
    ooc_patterns: tuple[str, ...] = (
        r"作为(一个)?(AI|人工智能|语言模型)",
        r"我是一个?(AI|人工智能|语言模型)",
        r"(抱歉|对不起|很遗憾)[，,]?\s*(我)?(无法|不能)",
        r"我无法(回答|提供|协助|满足)",
        r"(?i)as an ai",
        r"(?i)i('m| am) (sorry|unable)",
    )
    """Regular expressions that mark an out-of-character reply (JSON list)."""
    fallback_line: str = "唔……鱼鱼脑子打结了，等下再说~"
    """Sent when the reply is still out of character after one silent retry."""
    failure_line: str = "鱼鱼这会儿有点卡，过会儿再找我吧~"
    """Sent when the model cannot be reached."""
    reply_max_chars: Annotated[int, Field(ge=20)] = 300
    """Replies longer than this are split into several messages."""
    recent_messages: NonNegative = 20
    """Recent raw messages shown to the model with each reply."""
    chat_memory_tool: OnOff = "off"
    """on: the chat model may call search_memory(query) once per reply to look up this
    chat's memories itself (same recall path as the injected ones, shown in /why).
    Needs a chat model with tool calling; every reply still ends within
    YUJI_LLM_TIMEOUT_S (+5 s) in the reply, the fallback line or the failure line."""
    backfill_interval_s: NonNegative = 1800
    """Seconds between automatic backfills of every group; each start and reconnect of a
    bot backfills too (0 = none of these, only /backfill)."""
    backfill_max: AtLeastOne = 200
    """Most messages one backfill fetches."""
    backfill_catchup_max: AtLeastOne = 1000
    """At every start and reconnect each group's history is paged back until the last
    message archived before it (a gap of any size), at most this many messages (<= 2000)."""

    # vision
    vision_interval_s: AtLeastOne = 30
    """Seconds between runs describing new images (only with YUJI_VISION_LLM_MODEL set)."""

    # nightly
    nightly_time: str = "04:00"
    """Local time (in YUJI_TIMEZONE) of the nightly run; the day ends at this cutoff."""
    nightly_retry_after_s: AtLeastOne = 2 * 3600
    """A failed night is retried after this many seconds..."""
    nightly_max_failures: AtLeastOne = 3
    """...until this many consecutive failures open the circuit and alert."""
    gc_cold_after_days: int = 120
    """Memories never accessed nor credited for this many days go cold (exemptions apply)."""
    nightly_llm_retries: NonNegative = 5
    """Extra asks, each at a lower temperature, when a nightly model reply is invalid or out of character."""
    nightly_catchup_days: AtLeastOne = 14
    """After downtime, catch up at most this many missed days (the most recent ones), in order."""
    nightly_recent_diaries: int = 3
    """Latest diaries shown to the chat model with each reply."""
    person_cards_per_night: NonNegative = 20
    """Most member cards the nightly run writes per group and night (members whose memories
    changed that day, the most changed first; 0 = none)."""
    prompt_people_tokens: NonNegative = 300
    """Token budget of the reply prompt's people block (the asker's card and those of the
    members the message names; 0 = no block)."""
    gc_exempt_types: tuple[str, ...] = ("rule",)
    """Memory types that never go cold (comma-separated). Pinned, starred, credited memories and
    those in a supersede/contradict chain never go cold either."""
    gc_keep_importance: Fraction = 0.9
    """Memories at least this important (0..1) never go cold."""

    # follow-ups
    followup_window_days: AtLeastOne = 3
    """A member's own dated plan (an exam, a trip, an appointment) is due for a follow-up
    from the day after its date for this many days (in YUJI_TIMEZONE), then expires for good."""
    followup_private: bool = True
    """Ask unprompted in private chats (a group asks only once its admin sends `/followups on`;
    anyone's `/followups on|off` in a private chat overrides this for that chat)."""
    followup_hours: str = "10:00-21:30"
    """Local hours (in YUJI_TIMEZONE, HH:MM-HH:MM, the end not included; 00:00-24:00 is the
    whole day) in which an unprompted follow-up may be sent."""
    followup_check_s: AtLeastOne = 600
    """Seconds between two looks for follow-ups to send unprompted (the leader's job)."""
    followup_quiet_s: NonNegative = 600
    """No unprompted follow-up within this many seconds of the chat's last message from others."""
    prompt_followups_tokens: NonNegative = 120
    """Token budget of the reply prompt's follow-up block: at most one due plan of the asker's,
    to ask about in passing (0 = no block; asked when the reply cites it, offered on at most
    three days)."""

    # exposure
    allow_unauthenticated_onebot: bool = False
    """Listen on a non-loopback HOST with an empty ONEBOT_ACCESS_TOKEN (refused otherwise)."""

    # the NoneBot plugin among other plugins (docs/plugin.md)
    onebot_adapter: Literal["ingest", "stock"] = "ingest"
    """Which OneBot v11 adapter this repository's `python bot.py` registers: `ingest`
    (yuji's receive loop: archives each frame before NoneBot parses it, with
    backpressure) or `stock` (NoneBot's own). A bot of your own registers its adapters
    itself and never reads this."""
    archive_on_receive: bool = True
    """With the stock OneBot v11 adapter, queue each message for the archive when the
    adapter reads its frame, and let every plugin's matchers have the event without
    waiting for the commit; off: archive in an event preprocessor, which holds the
    event until its commit (docs/plugin.md has the figures)."""
    handler_slots: NonNegative = 0
    """Events in NoneBot's matchers (every plugin's) at once; the next waits its turn
    before its matchers run, nothing is skipped; 0 = no bound. A bound of 128 archived a
    burst a fifth faster but held the other plugins' handling back three to five times
    (docs/plugin.md), so there is none unless you set one."""
    command_priority: int = 10
    """NoneBot priority of yuji's slash commands (lower runs first)."""
    command_block: bool = True
    """Whether a yuji command, once matched, stops lower-priority matchers from seeing it."""
    chat_priority: int = 50
    """NoneBot priority of the persona's wake handler (mention, reply, nickname, private)."""
    chat_block: bool = False
    """Whether a message the persona answered is hidden from lower-priority matchers."""

    # operations
    backup_interval_s: AtLeastOne = 3 * 3600
    """Seconds between verified backups."""
    backup_mirror: str = ""
    """Optional folder (another disk) that receives a copy of every verified backup."""
    backup_keep_latest: AtLeastOne = 20
    """Backups kept: the latest this many..."""
    backup_keep_daily: int = 30
    """...one per day for this many days..."""
    backup_keep_weekly: int = 12
    """...and one per week for this many weeks."""
    pg_dump: str = ""
    """On PostgreSQL: the pg_dump backups run (pg_restore beside it); empty = the one on
    PATH. It must be of the server's major version or newer."""
    backup_orphan_after_s: AtLeastOne = 6 * 3600
    """Files a killed backup left behind (no manifest) are removed after each backup once
    older than this many seconds (longer than any backup runs)."""
    capacity_limit_bytes: AtLeastOne = 5 * 1024**3
    """Alert when database + attachments + backups exceed this many bytes (nothing is deleted)."""
    log_retention_days: AtLeastOne = 7
    """Days of logs kept under data/logs/."""
    telegram_bot_token: str = Field(default="", repr=False)
    """Telegram alerts (with YUJI_TELEGRAM_CHAT_ID); empty = alerts go to the log."""
    telegram_chat_id: str = ""
    """The Telegram chat that receives the alerts."""
    telegram_base_url: str = ""
    """Self-hosted Bot API server, e.g. http://127.0.0.1:8081/bot ; empty = Telegram's own."""
    alert_dedup_s: NonNegative = 3600
    """The same alert is sent at most once per this many seconds."""
    alert_timeout_s: PositiveSeconds = 10.0
    """Seconds before one Telegram send is given up (retried twice, never blocking the bot)."""

    # console
    console_token: str = Field(default="", repr=False)
    """Token that opens the web console at http://HOST:PORT/yuji/ (login form or
    `Authorization: Bearer <token>`); empty = the console is off. Use a long random
    string, e.g. `python -c "import secrets; print(secrets.token_urlsafe(32))"`."""

    @field_validator("nicknames", "ooc_patterns", "gc_exempt_types", mode="before")
    @classmethod
    def _split_list(cls, value: Any) -> Any:
        """A variable holds a JSON list (commas inside items kept) or comma-separated items."""
        if not isinstance(value, str):
            return value
        if value.lstrip().startswith("["):
            return tuple(str(item) for item in json.loads(value))
        return tuple(part.strip() for part in value.split(",") if part.strip())

    @field_validator("nightly_time")
    @classmethod
    def _clock_time(cls, value: str) -> str:
        if not _CLOCK_TIME.fullmatch(value):
            raise ValueError("must be HH:MM (24-hour)")
        return value

    @field_validator("followup_hours")
    @classmethod
    def _hours(cls, value: str) -> str:
        start, dash, end = value.partition("-")
        end_ok = _CLOCK_TIME.fullmatch(end) is not None or end == "24:00"
        if not dash or not _CLOCK_TIME.fullmatch(start) or not end_ok:
            raise ValueError("must be HH:MM-HH:MM (24-hour, local; the end may be 24:00)")
        if start >= end:
            raise ValueError("the hours must start before they end, within one day")
        return value

    @field_validator("database_url")
    @classmethod
    def _driver_we_run(cls, value: str) -> str:
        problem = database_url_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"unknown zone {value!r}: use an IANA name such as Asia/Shanghai or UTC"
            ) from None
        return value

    @model_validator(mode="after")
    def _whole_endpoints(self) -> Settings:
        """A provider's URL without its model (or the reverse) is a typo, not a choice."""
        for kind in ("embed", "rerank"):
            url, model = getattr(self, f"{kind}_base_url"), getattr(self, f"{kind}_model")
            if bool(url) != bool(model):
                missing = "MODEL" if url else "BASE_URL"
                raise ValueError(
                    f"YUJI_{kind.upper()}_{missing} is needed with YUJI_{kind.upper()}_"
                    f"{'BASE_URL' if url else 'MODEL'}"
                )
        return self

    @model_validator(mode="wrap")
    @classmethod
    def _named_by_variable(cls, values: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """Every problem at once, each named by its `YUJI_*` variable (values not shown:
        some are secrets)."""
        try:
            return handler(values)
        except ValidationError as exc:
            problems = "; ".join(_problem(error) for error in exc.errors())
            raise ConfigError(f"invalid settings: {problems}") from None

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
    def attachments_path(self) -> Path:
        """Where attachment files live: `YUJI_ATTACHMENTS_DIR`, else under the data folder."""
        return Path(self.attachments_dir) if self.attachments_dir else self.data_dir / "attachments"

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
    def calibration_path(self) -> Path:
        """Relevance weights fitted by `yuji eval --calibrate`, one file per pair of
        embedding model and reranker."""
        return Path(self.calibration_dir) if self.calibration_dir else self.data_dir / "calibration"

    def recall_models(self) -> dict[str, Any]:
        """The settings that choose recall's models and their weights (`yuji eval` runs
        its temporary store with the operator's models)."""
        names = [n for n in type(self).model_fields if n.startswith(("embed_", "rerank_"))]
        return {
            **{n: getattr(self, n) for n in names},
            "vector_model_path": self.vector_model_path,
            "relevance_weights": self.relevance_weights,
            "calibration_dir": str(self.calibration_path.resolve()),
        }

    @property
    def embed_api(self) -> ModelEndpoint | None:
        """The embeddings API, when both its URL and model are set."""
        if not self.embed_base_url or not self.embed_model:
            return None
        return ModelEndpoint(self.embed_base_url, self.embed_api_key, self.embed_model)

    @property
    def rerank_api(self) -> ModelEndpoint | None:
        """The rerank API, when both its URL and model are set."""
        if not self.rerank_base_url or not self.rerank_model:
            return None
        return ModelEndpoint(self.rerank_base_url, self.rerank_api_key, self.rerank_model)

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
        """A new, validated Settings with `changes` applied."""
        return type(self)(**{**dict(self), **changes})


def database_url_problem(url: str) -> str | None:
    """Pure: why yuji cannot open `url` by its scheme (it runs SQLite through aiosqlite
    and PostgreSQL through asyncpg, each named in the URL), or None."""
    if not url:
        return None
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    if scheme in {"sqlite+aiosqlite", "postgresql+asyncpg"}:
        return None
    if scheme.split("+", 1)[0] in {"postgres", "postgresql", "pgsql"}:
        rest = url.split("://", 1)[1].rsplit("@", 1)[-1]  # never echo a password
        return (
            f"{scheme}:// is not a driver yuji runs: write "
            f"postgresql+asyncpg://USER:PASSWORD@{rest} (yuji reaches PostgreSQL through asyncpg)"
        )
    if scheme.split("+", 1)[0] == "sqlite":
        return (
            f"{scheme}:// is not a driver yuji runs: write sqlite+aiosqlite:///path/to/yuji.db, "
            "or leave it empty for $YUJI_DATA_DIR/yuji.db"
        )
    return "must be empty (SQLite in YUJI_DATA_DIR) or postgresql+asyncpg://user:password@host/database"


_ACCEPTS = {
    "int_parsing": "a whole number",
    "int_from_float": "a whole number",
    "float_parsing": "a number",
    "bool_parsing": "true or false (also yes/no, on/off, 1/0)",
}
"""What a variable of a plain type accepts, in the words of a `.env` file."""


def _problem(error: ErrorDetails) -> str:
    if not error["loc"]:  # a rule over several settings names them itself
        return error["msg"].removeprefix("Value error, ")
    name = str(error["loc"][0]) if error["loc"] else "settings"
    variable = "YUJI_" + name.upper().removeprefix("YUJI_")
    ctx = error.get("ctx", {})
    kind = error["type"]
    if kind == "greater_than_equal":
        if ctx["ge"] == 0:
            return f"{variable} must not be negative"
        return f"{variable} must be at least {ctx['ge']}"
    if kind == "greater_than":
        return f"{variable} must be above {ctx['gt']}"
    if kind == "less_than_equal":
        return f"{variable} must be at most {ctx['le']}"
    if kind == "literal_error":
        return f"{variable} must be {ctx['expected']}"
    if kind in _ACCEPTS:
        return f"{variable} must be {_ACCEPTS[kind]}"
    return f"{variable}: {error['msg'].removeprefix('Value error, ')}"


def settings_from_mapping(values: Mapping[str, Any]) -> Settings:
    """Build Settings from `YUJI_*` / `yuji_*` (or bare) keys, ignoring unknown ones.

    Both entry points hand it `configured_values`; the model parses the strings
    (numbers, yes/no strictly, lists) and names what it refuses.
    """
    known = Settings.model_fields
    picked = {
        name: raw
        for key, raw in values.items()
        if (name := key.lower().removeprefix("yuji_")) in known and raw is not None
    }
    return Settings(**picked)


NOT_SETTINGS = frozenset({"YUJI_CHROMIUM", "YUJI_UPDATE_SNAPSHOTS"})
"""`YUJI_*` variables that are no setting: the test suite's own switches."""


def configured_values(environ: Mapping[str, str], cwd: Path) -> dict[str, str]:
    """Every `YUJI_*` variable as both entry points read it: `.env`, then
    `.env.<ENVIRONMENT>`, then the environment, each later one winning (NoneBot's
    order), all files through python-dotenv (`KEY=v # note`, `export KEY=v`, quotes).
    Names are upper-cased (NoneBot's keys are case-insensitive); an empty value means
    the default, also when it blanks out a file's value from the environment."""
    merged: dict[str, str] = {}
    for source in configuration_sources(environ, cwd):
        merged.update(
            {
                k.upper(): v
                for k, v in source.items()
                if k.upper().startswith("YUJI_") and v is not None
            }
        )
    return {k: v for k, v in merged.items() if v.strip() != ""}


def configuration_sources(environ: Mapping[str, str], cwd: Path) -> list[Mapping[str, str | None]]:
    """`.env`, `.env.<ENVIRONMENT>` (ENVIRONMENT from the environment, else `.env`,
    else prod) and the environment, lowest priority first."""
    dotenv = dotenv_values(cwd / ".env")
    environment = environ.get("ENVIRONMENT") or dotenv.get("ENVIRONMENT") or "prod"
    return [dotenv, dotenv_values(cwd / f".env.{environment}"), environ]


def misspelled_settings(names: Iterable[str]) -> list[str]:
    """One warning per `YUJI_*` name that is no setting, naming the closest one: a typo
    would otherwise leave the default in force without a word."""
    known = [f"YUJI_{name.upper()}" for name in Settings.model_fields]
    warnings: list[str] = []
    for name in sorted({n.upper() for n in names}):
        if not name.startswith("YUJI_") or name in known or name in NOT_SETTINGS:
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
        hint = f"did you mean {close[0]}?" if close else "see .env.example for the settings"
        warnings.append(f"{name} is not a yuji setting and is ignored; {hint}")
    return warnings


def nearest_name(name: str, known: Iterable[str]) -> str | None:
    """Pure: the known name `name` is a slip of (one edit away, two for a name of 8
    letters or more; a swap of neighbours is one edit), or None. An exact name is no
    slip."""
    if name in known:
        return None
    allowed = 2 if len(name) >= 8 else 1
    best: tuple[int, str] | None = None
    for candidate in sorted(known):
        distance = _edits(name, candidate, allowed)
        if distance <= allowed and (best is None or distance < best[0]):
            best = (distance, candidate)
    return None if best is None else best[1]


def _edits(a: str, b: str, bound: int) -> int:
    """Optimal string alignment distance of `a` and `b` (anything above `bound` is
    reported as `bound + 1`)."""
    if abs(len(a) - len(b)) > bound:
        return bound + 1
    previous: list[int] = []
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        before, previous, row = previous, row, [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            row[j] = min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], before[j - 2] + 1)
    return min(row[-1], bound + 1)


class LiveSettings:
    """The settings in effect now: what the operator configured, with the console's
    overrides applied.

    `Yuji.open` makes one and hands it to every service that reads a console tunable
    (`console.tunables.TUNABLES`); those read `current` each time they use a value, so
    a change made in the console reaches the running services without a restart. The
    console alone sets `current` (`ConsoleService.load_overrides`)."""

    __slots__ = ("configured", "current")

    def __init__(self, configured: Settings) -> None:
        self.configured = configured
        """From `.env` and the environment, before any console override."""
        self.current = configured
        """`configured` with the console's overrides applied."""
