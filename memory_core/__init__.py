"""yuji's memory library: archive, memories, recall, consolidation.

This module is the curated public API; plugins import only from here. It never
imports nonebot.
"""

from .archive import AttachmentFetcher as AttachmentFetcher
from .archive import FakeFetcher as FakeFetcher
from .archive import FetchedFile as FetchedFile
from .archive import HttpxFetcher as HttpxFetcher
from .chat import BackfillReport as BackfillReport
from .chat import Incoming as Incoming
from .chat import ReplyOutcome as ReplyOutcome
from .clock import Clock as Clock
from .clock import FakeClock as FakeClock
from .clock import SystemClock as SystemClock
from .consolidation.runner import BatchReport as BatchReport
from .consolidation.service import ConsolidationStatus as ConsolidationStatus
from .consolidation.service import ReconcileReport as ReconcileReport
from .errors import YujiError as YujiError
from .llm import LLMClient as LLMClient
from .llm import OpenAICompatibleClient as OpenAICompatibleClient
from .llm import ScriptedLLM as ScriptedLLM
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
from .ops import Sizes as Sizes
from .ops import human_bytes as human_bytes
from .recall import DenseSearch as DenseSearch
from .recall import Recall as Recall
from .service import Yuji as Yuji
from .settings import SECRET_FIELDS as SECRET_FIELDS
from .settings import Settings as Settings
from .types import AttachmentRef as AttachmentRef
from .types import EvidenceRef as EvidenceRef
from .types import Experience as Experience
from .types import Memory as Memory
from .types import NewExperience as NewExperience
from .types import Recalled as Recalled
from .types import RecallResult as RecallResult
from .types import group_scope as group_scope
from .types import private_scope as private_scope
from .vectors import Dense as Dense
from .vectors import needs_embedding as needs_embedding
from .vectors import run_embed_process as run_embed_process

__all__ = [
    "SECRET_FIELDS",
    "AlertSink",
    "AttachmentFetcher",
    "AttachmentRef",
    "BackfillReport",
    "BackupManifest",
    "BatchReport",
    "Card",
    "Clock",
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
    "Memories",
    "Memory",
    "NewExperience",
    "NewMemory",
    "NightlyBlocks",
    "OpenAICompatibleClient",
    "OpsStatus",
    "Recall",
    "RecallResult",
    "Recalled",
    "ReconcileReport",
    "RecordingAlertSink",
    "ReplyOutcome",
    "ScriptedLLM",
    "Settings",
    "Sizes",
    "StepReport",
    "SupersedeOutcome",
    "SystemClock",
    "WriteOutcome",
    "Yuji",
    "YujiError",
    "group_scope",
    "human_bytes",
    "needs_embedding",
    "parse_cutoff",
    "private_scope",
    "repeats",
    "run_embed_process",
]
