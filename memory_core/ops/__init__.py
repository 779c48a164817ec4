"""Operations: verified backups, retention, capacity, attachment cleanup, and alerts."""

from .alerts import AlertGate as AlertGate
from .alerts import AlertSink as AlertSink
from .alerts import LogAlertSink as LogAlertSink
from .alerts import RecordingAlertSink as RecordingAlertSink
from .capacity import Sizes as Sizes
from .capacity import human_bytes as human_bytes
from .manifest import BackupManifest as BackupManifest
from .manifest import Check as Check
from .redact import Redactor as Redactor
from .service import OpsService as OpsService
from .status import BackupStatus as BackupStatus
from .status import OpsStatus as OpsStatus
from .status import status_lines as status_lines
from .telegram import TelegramAlertSink as TelegramAlertSink
from .texts import backup_reply as backup_reply
from .texts import bot_heartbeat_offline_text as bot_heartbeat_offline_text
from .texts import bot_offline_key as bot_offline_key
from .texts import bot_offline_text as bot_offline_text
from .texts import bot_online_text as bot_online_text

__all__ = [
    "AlertGate",
    "AlertSink",
    "BackupManifest",
    "BackupStatus",
    "Check",
    "LogAlertSink",
    "OpsService",
    "OpsStatus",
    "RecordingAlertSink",
    "Redactor",
    "Sizes",
    "TelegramAlertSink",
    "backup_reply",
    "bot_heartbeat_offline_text",
    "bot_offline_key",
    "bot_offline_text",
    "bot_online_text",
    "human_bytes",
    "status_lines",
]
