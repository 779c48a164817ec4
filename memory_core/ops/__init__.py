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
from .service import BackupStatus as BackupStatus
from .service import OpsService as OpsService
from .service import OpsStatus as OpsStatus
from .telegram import TelegramAlertSink as TelegramAlertSink

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
    "human_bytes",
]
