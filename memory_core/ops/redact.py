"""Secrets never reach a log line: a redactor for text, and a logging filter using it.

Libraries log URLs (httpx logs every request at INFO, and a Telegram URL carries
the bot token), so the Telegram sink installs `RedactingFilter` on the loggers that
see its URLs, and the plugin's log setup redacts every line it writes.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from urllib.parse import unquote, unquote_plus

MASK = "***"
MIN_SECRET = 6
"""Shorter values are not treated as secrets (masking "1" would wreck every line)."""

URL_LOGGERS = ("httpx", "telegram.Bot", "telegram.BaseRequest", "telegram.HTTPXRequest")

_URL_ENCODED = re.compile(r"[\w.~!*'()/+%:=-]*%[0-9A-Fa-f]{2}[\w.~!*'()/+%:=-]*")
"""A run of URL characters holding at least one %XX escape (a query value, a path)."""


def secret_parts(value: str) -> list[str]:
    """The strings to mask for one secret: itself and, for a bot token `id:secret`,
    the secret half (the id is public, the rest is the key)."""
    parts = [value] if value else []
    _, sep, tail = value.partition(":")
    if sep and tail:
        parts.append(tail)
    return [p for p in parts if len(p) >= MIN_SECRET]


class Redactor:
    def __init__(self, secrets: Iterable[str]) -> None:
        found = {part for s in secrets for part in secret_parts(s)}
        self.secrets = tuple(sorted(found, key=len, reverse=True))

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        if "%" in text and self.secrets:
            # URL-encoded (a token in a query string, as a client sent it): however it
            # was encoded, a run that decodes to something holding a secret is masked.
            text = _URL_ENCODED.sub(self._encoded, text)
        return text

    def _encoded(self, match: re.Match[str]) -> str:
        run = match.group()
        decoded = (unquote(run), unquote_plus(run))
        if not any(s in d for s in self.secrets for d in decoded):
            return run
        key, sep, _ = run.partition("=")
        return f"{key}={MASK}" if sep and not any(s in key for s in self.secrets) else MASK

    def __bool__(self) -> bool:
        return bool(self.secrets)


class RedactingFilter(logging.Filter):
    """Rewrites a record's message with the secrets masked (it never drops records)."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = self.redactor(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def redact_loggers(secrets: Iterable[str], names: Iterable[str] = URL_LOGGERS) -> None:
    """Mask `secrets` in whatever the named loggers emit (idempotent per secret set)."""
    redactor = Redactor(secrets)
    if not redactor:
        return
    for name in names:
        logger = logging.getLogger(name)
        known = {f.redactor.secrets for f in logger.filters if isinstance(f, RedactingFilter)}
        if redactor.secrets not in known:
            logger.addFilter(RedactingFilter(redactor))
