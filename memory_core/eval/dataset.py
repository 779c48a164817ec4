"""The recall dataset format of docs/eval-format.md, parsed into frozen values (pure)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar, cast

from memory_core.clock import as_utc
from memory_core.errors import ValidationError
from memory_core.recall.wake import Turn
from memory_core.types import MemoryType

NEGATIVE_TIERS = frozenset({"negative", "leakage"})
"""Nothing in the asked chat answers these."""
CHATTER = "chatter"
"""A wake that asks about nothing (greetings, banter, thanks): nothing is to be injected."""


@dataclass(frozen=True, slots=True)
class DataMessage:
    id: str
    scope: str
    sender_id: str
    sender_name: str
    time: datetime
    text: str
    unconsolidated: bool = False
    """Not consolidated yet: loaded above its chat's acknowledged watermark, older than
    the prompt's recent window (recall may quote it)."""


@dataclass(frozen=True, slots=True)
class DataMemory:
    id: str
    scope: str
    type: MemoryType
    subject: str
    content: str
    importance: float
    confidence: float
    valid_from: datetime | None
    valid_to: datetime | None
    status: str
    evidence: tuple[str, ...]
    supersedes: str | None
    contradicts: str | None
    created_at: datetime
    last_accessed: datetime | None
    subject_id: str | None = None
    """The `sender_id` of the member it is about, when the dataset says; else the
    loader resolves `subject` as production does."""


@dataclass(frozen=True, slots=True)
class DataQuery:
    id: str
    scope: str
    tier: str
    text: str
    expect_any: tuple[str, ...]
    expect_none: tuple[str, ...]
    expect_messages: tuple[str, ...] = ()
    """The answer as unconsolidated messages (their ids): hit@3 of the quotes."""
    context: tuple[Turn, ...] = ()
    """The turns just before the wake in its chat, oldest first (`text` is the wake)."""
    asker: tuple[str, str] | None = None
    """(sender_id, sender_name) of who sent the wake; None: nobody in particular."""

    @property
    def joined(self) -> str:
        """The wake with its context, one turn a line (what the baselines search)."""
        return "\n".join([*(t.text for t in self.context), self.text])

    @property
    def positive(self) -> bool:
        return self.tier not in NEGATIVE_TIERS and self.tier != CHATTER

    @property
    def about_messages(self) -> bool:
        """Answered by quoted messages, not by memories."""
        return bool(self.expect_messages)


@dataclass(frozen=True, slots=True)
class DataChoice:
    """A person's `/carry` choices (None: the default: private on, groups off)."""

    sender_id: str
    platform: str = "qq"
    private: bool | None = None
    groups: bool | None = None


@dataclass(frozen=True, slots=True)
class DataCarry:
    """Who chose what for their own words (`/carry private|groups on|off`) and which
    chats refuse them (`/carry block`); memberships come from the messages."""

    choices: tuple[DataChoice, ...] = ()
    blocks: tuple[str, ...] = ()

    def choice(self, sender_id: str) -> DataChoice:
        found = [c for c in self.choices if c.sender_id == sender_id]
        return found[-1] if found else DataChoice(sender_id)


@dataclass(frozen=True, slots=True)
class Dataset:
    name: str
    timezone: str
    now: datetime
    scopes: tuple[str, ...]
    aliases: tuple[tuple[str, str, str], ...]
    """(scope, alias, canonical)"""
    messages: tuple[DataMessage, ...]
    memories: tuple[DataMemory, ...]
    queries: tuple[DataQuery, ...]
    carry: DataCarry = DataCarry()


T = TypeVar("T")


def _time(value: Any) -> datetime | None:
    if value in (None, ""):
        return None
    parsed = datetime.fromisoformat(str(value))
    if parsed.tzinfo is None:
        raise ValidationError(f"time {value!r} has no timezone")
    return as_utc(parsed)


def _required_time(value: Any) -> datetime:
    parsed = _time(value)
    if parsed is None:
        raise ValidationError("a required time is missing")
    return parsed


def _turn(data: Any, scope: str) -> Turn:
    if not isinstance(data, dict) or "text" not in data:
        raise ValidationError('a context turn is {"sender_name", "text", "is_bot"}')
    turn = cast(dict[str, Any], data)
    return Turn(
        text=str(turn["text"]),
        is_bot=bool(turn.get("is_bot", False)),
        sender=str(turn.get("sender_name", "")),
        scope=scope,
    )


def parse_dataset(data: dict[str, Any]) -> Dataset:
    try:
        return Dataset(
            name=str(data.get("name", "dataset")),
            timezone=str(data.get("timezone", "UTC")),
            now=_required_time(data["now"]),
            scopes=_each(data["scopes"], "scopes", lambda s: str(s["id"])),
            aliases=_each(
                data.get("aliases", []),
                "aliases",
                lambda a: (str(a["scope"]), str(a["alias"]), str(a["canonical"])),
            ),
            messages=_each(data["messages"], "messages", _message),
            memories=_each(data["memories"], "memories", _memory),
            queries=_each(data["queries"], "queries", _query),
            carry=_carry(data.get("carry", {})),
        )
    except KeyError as exc:
        raise ValidationError(
            f"not a recall dataset: it has no {exc.args[0]!r} field (docs/eval-format.md)"
        ) from None
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"not a recall dataset (docs/eval-format.md): {exc}") from exc


def _each(items: Any, section: str, parse: Callable[[Any], T]) -> tuple[T, ...]:
    """Every entry of one section parsed; a malformed one is named by its place."""
    out: list[T] = []
    for i, item in enumerate(items):
        try:
            out.append(parse(item))
        except KeyError as exc:
            raise ValidationError(
                f"not a recall dataset: {section}[{i}] has no {exc.args[0]!r} field "
                "(docs/eval-format.md)"
            ) from None
        except ValidationError as exc:
            raise ValidationError(f"not a recall dataset: {section}[{i}]: {exc}") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise ValidationError(
                f"not a recall dataset: {section}[{i}] is not as docs/eval-format.md "
                f"describes it ({exc})"
            ) from None
    return tuple(out)


def _message(x: Any) -> DataMessage:
    return DataMessage(
        id=str(x["id"]),
        scope=str(x["scope"]),
        sender_id=str(x.get("sender_id", "")),
        sender_name=str(x.get("sender_name", "")),
        time=_required_time(x["time"]),
        text=str(x.get("text", "")),
        unconsolidated=bool(x.get("unconsolidated", False)),
    )


def _memory(x: Any) -> DataMemory:
    return DataMemory(
        id=str(x["id"]),
        scope=str(x["scope"]),
        type=cast(MemoryType, x["type"]),
        subject=str(x.get("subject") or "group"),
        content=str(x["content"]),
        importance=float(x.get("importance", 0.5)),
        confidence=float(x.get("confidence", 0.8)),
        valid_from=_time(x.get("valid_from")),
        valid_to=_time(x.get("valid_to")),
        status=str(x.get("status", "active")),
        evidence=tuple(str(e) for e in x.get("evidence", [])),
        supersedes=x.get("supersedes"),
        contradicts=x.get("contradicts"),
        created_at=_required_time(x.get("created_at") or x.get("valid_from")),
        last_accessed=_time(x.get("last_accessed")),
        subject_id=str(x["subject_id"]) if x.get("subject_id") not in (None, "") else None,
    )


def _query(q: Any) -> DataQuery:
    return DataQuery(
        id=str(q["id"]),
        scope=str(q["scope"]),
        tier=str(q["tier"]),
        text=str(q["text"]),
        expect_any=tuple(str(i) for i in q.get("expect_any", [])),
        expect_none=tuple(str(i) for i in q.get("expect_none", [])),
        expect_messages=tuple(str(i) for i in q.get("expect_messages", [])),
        context=tuple(_turn(t, str(q["scope"])) for t in q.get("context", [])),
        asker=_asker(q.get("asker")),
    )


def _carry(data: Any) -> DataCarry:
    if not isinstance(data, dict):
        raise ValidationError('carry is {"choices": [...], "blocks": [...]}')
    carry = cast(dict[str, Any], data)
    return DataCarry(
        choices=_each(carry.get("choices", []), "carry.choices", _choice),
        blocks=tuple(str(b) for b in carry.get("blocks", [])),
    )


def _switch(value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise ValidationError(f"a carry choice is true, false or absent, not {value!r}")


def _choice(c: Any) -> DataChoice:
    return DataChoice(
        sender_id=str(c["sender_id"]),
        platform=str(c.get("platform", "qq")),
        private=_switch(c.get("private")),
        groups=_switch(c.get("groups")),
    )


def _asker(data: Any) -> tuple[str, str] | None:
    if data is None:
        return None
    if not isinstance(data, dict) or "sender_id" not in data:
        raise ValidationError('an asker is {"sender_id", "sender_name"}')
    asker = cast(dict[str, Any], data)
    return str(asker["sender_id"]), str(asker.get("sender_name", ""))


def load_dataset(path: Path) -> Dataset:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValidationError(
            f"{path} is not a dataset in JSON ({exc}); the format: docs/eval-format.md"
        ) from None
    return parse_dataset(data)
