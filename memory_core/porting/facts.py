"""Typed facts (JSON lines) -> memories with origin `migrated` (docs/import-formats.md).

Idempotent by (scope, subject, key): a fact already imported with the same value
changes nothing; with a changed value the new memory supersedes the old one. Each
fact rests on one archived quote of itself (source `migrated`), since no memory is
written without evidence.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast, get_args

from memory_core.tokenize import normalise
from memory_core.types import MemoryType, parse_scope

CATEGORY_TYPES: dict[str, MemoryType] = {
    # Warm Isle's v1 `facts.category` and v2 `memories.type` (seed 003).
    "profile": "fact",
    "world": "fact",
    "relationship": "relation",
    "commitment": "rule",
}
_PUNCT = re.compile(r"[\s，。！？、；：,.!?;:\"'“”‘’（）()]+")


@dataclass(frozen=True, slots=True)
class Fact:
    scope: str
    type: MemoryType
    subject: str
    key: str
    value: str
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    confidence: float = 0.8
    importance: float = 0.5

    @property
    def import_key(self) -> str:
        """(subject, normalised key): what makes two facts the same fact."""
        return f"{self.subject}\x1f{normalise(self.key).strip()}"

    @property
    def content(self) -> str:
        return self.value if self.key in self.value else f"{self.key}：{self.value}"

    @property
    def fingerprint(self) -> str:
        text = f"{self.import_key}\x1f{self.value}"
        return "fact:" + hashlib.blake2b(text.encode(), digest_size=16).hexdigest()

    @property
    def quote(self) -> str:
        return f"[导入的事实] {self.subject} · {self.key}：{self.value}"


class FactError(ValueError):
    """Why one line is refused (the reason is counted in the report)."""


def parse_fact(line: str, default_scope: str | None) -> Fact:
    try:
        data = json.loads(line)
    except json.JSONDecodeError:
        raise FactError("not JSON") from None
    if not isinstance(data, dict):
        raise FactError("not a JSON object")
    item = cast(dict[str, Any], data)
    status = str(item.get("status") or "active")
    if status != "active":
        raise FactError(f"status {status!r} (only active facts are imported)")
    subject = _text(item.get("subject") or item.get("qq_id"))
    key, value = _text(item.get("key")), _text(item.get("value"))
    if not subject or not key or not value:
        raise FactError("subject, key and value are required")
    scope = _text(item.get("scope")) or default_scope
    if not scope and item.get("qq_id") is not None:
        scope = f"private:{_text(item.get('qq_id'))}"
    if not scope:
        raise FactError("no scope (give `scope` in the line or --scope)")
    try:
        scope = parse_scope(scope)
    except ValueError:
        raise FactError("scope is not group:<id> or private:<id>") from None
    return Fact(
        scope=scope,
        type=_type(item),
        subject=subject,
        key=key,
        value=value,
        valid_from=_instant(item.get("valid_from") or item.get("first_seen")),
        valid_to=_instant(item.get("valid_to") or item.get("expires_at")),
        confidence=_unit(item.get("confidence"), 0.8, "confidence"),
        importance=_unit(item.get("importance"), 0.5, "importance"),
    )


def same_value(a: str, b: str) -> bool:
    """Equal once spaces and punctuation are gone ('在杭州。' is '在杭州')."""
    return _PUNCT.sub("", normalise(a)) == _PUNCT.sub("", normalise(b))


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _type(item: dict[str, Any]) -> MemoryType:
    raw = _text(item.get("type") or item.get("category") or "fact").lower()
    if raw in get_args(MemoryType):
        return cast(MemoryType, raw)
    if raw in CATEGORY_TYPES:
        return CATEGORY_TYPES[raw]
    raise FactError(f"unknown type {raw!r}")


def _instant(value: Any) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        instant = datetime.fromisoformat(str(value))
    except ValueError:
        raise FactError("a validity time is not ISO 8601") from None
    if instant.tzinfo is None:
        raise FactError("a validity time has no UTC offset")
    return instant


def _unit(value: Any, default: float, name: str) -> float:
    if value is None:
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise FactError(f"{name} is not a number") from None
    if not 0.0 <= number <= 1.0:
        raise FactError(f"{name} is outside 0..1")
    return number
