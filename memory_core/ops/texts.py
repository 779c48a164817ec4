"""What ops says to people: the `/backup` reply and the QQ-offline alerts.

Pure functions (no I/O, no clock): the plugin passes in what it has.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo

from .capacity import human_bytes
from .manifest import BackupManifest
from .status import CHECK_NAMES, local


def bot_offline_key(self_id: str) -> str:
    return f"bot_offline:{self_id}"


def bot_offline_text(self_id: str, tag: str | None = None, message: str | None = None) -> str:
    why = "：".join(part for part in (tag, message) if part)
    return (
        f"QQ 账号 {self_id} 掉线了{f'（{why}）' if why else ''}。"
        "连接可能还在，但收不到也发不出消息；请到 NapCat 重新登录。"
    )


def bot_heartbeat_offline_text(self_id: str) -> str:
    return f"QQ 客户端的心跳说账号 {self_id} 不在线：收不到也发不出消息，请检查登录。"


def bot_online_text(self_id: str) -> str:
    return f"QQ 账号 {self_id} 重新在线。"


def backup_reply(manifest: BackupManifest, zone: ZoneInfo) -> str:
    """The answer to `/backup`."""
    rows = sum(manifest.backup_counts.values())
    if manifest.ok:
        mirrored = "，已复制到镜像目录" if manifest.mirrored_to else ""
        return (
            f"备份好了：{manifest.file}\n"
            f"{human_bytes(manifest.size_bytes)}，{rows} 行关键数据，"
            f"完整性、行数、恢复演练都通过{mirrored}。"
        )
    failed = "、".join(CHECK_NAMES.get(c.name, c.name) for c in manifest.failed_checks)
    return f"备份失败（{local(manifest.created_at, zone)}）：{failed}没通过。已发告警，详情见日志。"
