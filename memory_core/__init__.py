"""yuji's memory library: archive, memories, recall, consolidation.

This module is the curated public API; plugins import only from here (a ruff rule in
nonebot_plugin_yuji/ruff.toml refuses anything else). It never imports nonebot.
"""

from .archive import AttachmentFetcher as AttachmentFetcher
from .archive import FakeFetcher as FakeFetcher
from .archive import FetchedFile as FetchedFile
from .archive import HttpxFetcher as HttpxFetcher
from .chat import BackfillReport as BackfillReport
from .chat import Incoming as Incoming
from .chat import ReplyOutcome as ReplyOutcome
from .chat import recall_turn as recall_turn
from .chat.duration import parse_duration as parse_duration
from .chat.texts import ADMIN_ONLY as ADMIN_ONLY
from .chat.texts import BAND_WORDS as BAND_WORDS
from .chat.texts import GROUP_ONLY as GROUP_ONLY
from .chat.texts import SUPERUSER_ONLY as SUPERUSER_ONLY
from .chat.texts import backfill_text as backfill_text
from .chat.texts import band_of as band_of
from .chat.texts import error_text as error_text
from .clock import Clock as Clock
from .clock import FakeClock as FakeClock
from .clock import SystemClock as SystemClock
from .console import TUNABLES as TUNABLES
from .console import Actor as Actor
from .console import LoginThrottle as LoginThrottle
from .console import MemoryFilter as MemoryFilter
from .console import Origin as Origin
from .console import Session as Session
from .console import Sessions as Sessions
from .console import csrf_matches as csrf_matches
from .console import token_matches as token_matches
from .console.pure import bar_heights as bar_heights
from .consolidation.runner import BatchReport as BatchReport
from .consolidation.selection import lag_text as lag_text
from .consolidation.service import ConsolidationStatus as ConsolidationStatus
from .consolidation.service import ReconcileReport as ReconcileReport
from .errors import ConfigError as ConfigError
from .errors import NotFound as NotFound
from .errors import NotPermitted as NotPermitted
from .errors import ScopeViolation as ScopeViolation
from .errors import UsageError as UsageError
from .errors import ValidationError as ValidationError
from .errors import YujiError as YujiError
from .followups.texts import STATE_WORDS as FOLLOWUP_STATE_WORDS
from .llm import LLMClient as LLMClient
from .llm import OpenAICompatibleClient as OpenAICompatibleClient
from .llm import ScriptedLLM as ScriptedLLM
from .log_throttle import HELD_BACK as HELD_BACK
from .log_throttle import SELF_THROTTLED as SELF_THROTTLED
from .log_throttle import LogThrottle as LogThrottle
from .log_throttle import repeats as repeats
from .memories import Memories as Memories
from .memories import NewMemory as NewMemory
from .memories import SupersedeOutcome as SupersedeOutcome
from .memories import WriteOutcome as WriteOutcome
from .nightly import Card as Card
from .nightly import LastRun as LastRun
from .nightly import NightlyBlocks as NightlyBlocks
from .nightly import StepReport as StepReport
from .nightly.days import parse_cutoff as parse_cutoff
from .ops import AlertSink as AlertSink
from .ops import BackupManifest as BackupManifest
from .ops import OpsStatus as OpsStatus
from .ops import RecordingAlertSink as RecordingAlertSink
from .ops import Redactor as Redactor
from .ops import Sizes as Sizes
from .ops import backup_reply as backup_reply
from .ops import bot_heartbeat_offline_text as bot_heartbeat_offline_text
from .ops import bot_offline_key as bot_offline_key
from .ops import bot_offline_text as bot_offline_text
from .ops import bot_online_text as bot_online_text
from .ops import human_bytes as human_bytes
from .ops.redact import redact_loggers as redact_loggers
from .ops.store_check import check_store as check_store
from .recall import DenseSearch as DenseSearch
from .recall import Recall as Recall
from .service import Yuji as Yuji
from .settings import SECRET_FIELDS as SECRET_FIELDS
from .settings import Settings as Settings
from .settings import settings_from_mapping as settings_from_mapping
from .storage.schema import NIGHTLY_STEPS as NIGHTLY_STEPS
from .types import Asker as Asker
from .types import AttachmentRef as AttachmentRef
from .types import EvidenceRef as EvidenceRef
from .types import Experience as Experience
from .types import Memory as Memory
from .types import MemoryStatus as MemoryStatus
from .types import MemoryType as MemoryType
from .types import NewExperience as NewExperience
from .types import Quoted as Quoted
from .types import Recalled as Recalled
from .types import RecallResult as RecallResult
from .types import chat_label as chat_label
from .types import group_scope as group_scope
from .types import is_group_scope as is_group_scope
from .types import parse_scope as parse_scope
from .types import platform_name as platform_name
from .types import private_scope as private_scope
from .types import scope_platform as scope_platform
from .vectors import Dense as Dense
from .vectors import needs_embedding as needs_embedding
from .vectors import run_embed_process as run_embed_process

__all__ = [
    "ADMIN_ONLY",
    "BAND_WORDS",
    "FOLLOWUP_STATE_WORDS",
    "GROUP_ONLY",
    "HELD_BACK",
    "NIGHTLY_STEPS",
    "SECRET_FIELDS",
    "SELF_THROTTLED",
    "SUPERUSER_ONLY",
    "TUNABLES",
    "Actor",
    "AlertSink",
    "Asker",
    "AttachmentFetcher",
    "AttachmentRef",
    "BackfillReport",
    "BackupManifest",
    "BatchReport",
    "Card",
    "Clock",
    "ConfigError",
    "ConsolidationStatus",
    "Dense",
    "DenseSearch",
    "EvidenceRef",
    "Experience",
    "FakeClock",
    "FakeFetcher",
    "FetchedFile",
    "HttpxFetcher",
    "Incoming",
    "LLMClient",
    "LastRun",
    "LogThrottle",
    "LoginThrottle",
    "Memories",
    "Memory",
    "MemoryFilter",
    "MemoryStatus",
    "MemoryType",
    "NewExperience",
    "NewMemory",
    "NightlyBlocks",
    "NotFound",
    "NotPermitted",
    "OpenAICompatibleClient",
    "OpsStatus",
    "Origin",
    "Quoted",
    "Recall",
    "RecallResult",
    "Recalled",
    "ReconcileReport",
    "RecordingAlertSink",
    "Redactor",
    "ReplyOutcome",
    "ScopeViolation",
    "ScriptedLLM",
    "Session",
    "Sessions",
    "Settings",
    "Sizes",
    "StepReport",
    "SupersedeOutcome",
    "SystemClock",
    "UsageError",
    "ValidationError",
    "WriteOutcome",
    "Yuji",
    "YujiError",
    "backfill_text",
    "backup_reply",
    "band_of",
    "bar_heights",
    "bot_heartbeat_offline_text",
    "bot_offline_key",
    "bot_offline_text",
    "bot_online_text",
    "chat_label",
    "check_store",
    "csrf_matches",
    "error_text",
    "group_scope",
    "human_bytes",
    "is_group_scope",
    "lag_text",
    "needs_embedding",
    "parse_cutoff",
    "parse_duration",
    "parse_scope",
    "platform_name",
    "private_scope",
    "recall_turn",
    "redact_loggers",
    "repeats",
    "run_embed_process",
    "scope_platform",
    "settings_from_mapping",
    "token_matches",
]
