"""`/forget-me`: a member asks to be forgotten in this chat, confirmed by asking twice
within a minute. The window and the answers are here (pure but for the clock);
the plugin command only passes the chat and the sender."""

from __future__ import annotations

from datetime import datetime, timedelta

from .forget import ForgetReport

CONFIRM_WINDOW = timedelta(minutes=1)

ASK_AGAIN = (
    "确定要让我忘掉你吗？这会撤回这个群里关于你的所有记忆，把你说过的话替换成“已删除”，"
    "删除你发的图片，而且不能撤销。确定的话，请在一分钟内再发一次 /forget-me 。"
)


class ConfirmWindow:
    """Who asked once, and when; a second ask inside the window confirms."""

    def __init__(self, window: timedelta = CONFIRM_WINDOW) -> None:
        self.window = window
        self._asked: dict[tuple[str, str], datetime] = {}

    def confirmed(self, scope: str, user_id: str, now: datetime) -> bool:
        self._asked = {k: t for k, t in self._asked.items() if now - t <= self.window}
        key = (scope, user_id)
        if key in self._asked:
            del self._asked[key]
            return True
        self._asked[key] = now
        return False


def done_text(report: ForgetReport) -> str:
    lines = [
        "好，我已经忘掉你了：",
        f"· 撤回了 {report.memories_retracted} 条关于你的记忆",
        f"· 你的 {report.messages_total} 条消息已替换为“已删除”",
        f"· 删除了 {report.files_deleted} 个只属于你的图片文件",
    ]
    if report.backups:
        lines.append(f"· 还有 {len(report.backups)} 份旧备份含有原内容，会按保留期限自动删除；")
        lines.append("  需要立即清除的话，请管理员运行 yuji backup --redact")
    lines.append("只影响这个聊天，其他群不受影响。")
    return "\n".join(lines)
