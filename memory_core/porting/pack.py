"""The memory pack format (docs/memory-pack.md), built from and read into plain data.

Pure: `build_pack` turns one chat's rows into the versioned JSON document and
`read_pack` checks a document and returns it; neither touches a database. What a
person asked to be forgotten never enters a pack: their retracted memories, quotes
of their redacted messages, and card/diary/timeline lines naming them are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, cast

from memory_core.errors import PackError
from memory_core.memories.service import FORGET_ACTOR
from memory_core.storage import PackRows

FORMAT = "yuji-memory-pack"
VERSION = 1

_MEMORY_FIELDS = (
    "type",
    "subject",
    "content",
    "importance",
    "confidence",
    "status",
    "valid_from",
    "valid_to",
)


def build_pack(
    scope: str, rows: PackRows, *, exported_at: datetime, pack_id: str
) -> dict[str, Any]:
    forgotten = rows.forgotten_memories | {
        int(v["memory_id"]) for v in rows.versions if v["changed_by"] == FORGET_ACTOR
    }
    names = [n for n in sorted(set(rows.forgotten_names), key=len, reverse=True) if len(n) >= 2]
    versions: dict[int, list[dict[str, Any]]] = {}
    for v in rows.versions:
        versions.setdefault(int(v["memory_id"]), []).append(
            {
                "version": int(v["version"]),
                **{k: _json(v[k]) for k in _MEMORY_FIELDS},
                "changed_at": _json(v["changed_at"]),
                "changed_by": v["changed_by"],
                "reason": v["reason"],
            }
        )
    evidence: dict[int, list[dict[str, Any]]] = {}
    for e in rows.evidence:
        item = _evidence(e)
        if item is not None:
            evidence.setdefault(int(e["memory_id"]), []).append(item)
    memories = [
        {
            "id": int(m["id"]),
            **{k: _json(m[k]) for k in _MEMORY_FIELDS},
            "origin": m["origin"],
            "created_at": _json(m["created_at"]),
            "pinned": bool(m["pinned"]),
            "starred": bool(m["starred"]),
            "versions": versions.get(int(m["id"]), []),
            "evidence": [
                e for e in evidence.get(int(m["id"]), []) if e.get("memory") not in forgotten
            ],
        }
        for m in rows.memories
        if int(m["id"]) not in forgotten
    ]
    return {
        "format": FORMAT,
        "version": VERSION,
        "pack_id": pack_id,
        "scope": scope,
        "exported_at": _json(exported_at),
        "memories": memories,
        "relations": [
            {"src": r["src_id"], "dst": r["dst_id"], "kind": r["kind"], "reason": r["reason"]}
            for r in rows.relations
            if r["src_id"] not in forgotten and r["dst_id"] not in forgotten
        ],
        "aliases": [
            {"alias": a["alias"], "canonical": a["canonical"]}
            for a in rows.aliases
            if not _names_any(f"{a['alias']}\n{a['canonical']}", names)
        ],
        "cards": [
            {
                "kind": c["kind"],
                "version": c["version"],
                "content": scrub(c["content"], names),
                "day": c["day"],
                "created_at": _json(c["created_at"]),
            }
            for c in rows.cards
        ],
        "diaries": [{"day": d["day"], "content": scrub(d["content"], names)} for d in rows.diaries],
        "timeline": [
            {"day": t["day"], "content": t["content"]}
            for t in rows.timeline
            if not _names_any(t["content"], names)
        ],
    }


def scrub(text: str, names: Sequence[str]) -> str:
    """The text without every line that names one of `names`."""
    if not names:
        return text
    return "\n".join(line for line in text.split("\n") if not _names_any(line, names))


def _names_any(text: str, names: Iterable[str]) -> bool:
    return any(name and name in text for name in names)


def _evidence(e: Mapping[str, Any]) -> dict[str, Any] | None:
    role = e["role"]
    if e["experience_id"] is not None:
        if e["redaction_id"] is not None:
            return None
        return {
            "role": role,
            "quote": {
                "sender_id": e["sender_id"],
                "sender_name": e["sender_name"],
                "sent_at": _json(e["sent_at"]),
                "text": e["text"],
            },
        }
    if e["source_memory_id"] is not None:
        return {"role": role, "memory": int(e["source_memory_id"])}
    return {
        "role": role,
        "fragment": {"summary": e["summary"], "sent_at": _json(e["first_sent_at"])},
    }


def _json(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


# --- reading ----------------------------------------------------------------------------


def read_pack(data: Any) -> dict[str, Any]:
    """The pack, checked enough that restoring it cannot half-fail on its shape."""
    if not isinstance(data, dict):
        raise PackError("not a memory pack (expected a JSON object)")
    pack = cast(dict[str, Any], data)
    if pack.get("format") != FORMAT:
        raise PackError(f"not a memory pack (format is {pack.get('format')!r})")
    if pack.get("version") != VERSION:
        raise PackError(f"pack version {pack.get('version')!r}; this yuji reads version {VERSION}")
    if not isinstance(pack.get("pack_id"), str) or not pack["pack_id"]:
        raise PackError("the pack has no pack_id")
    for key in ("memories", "relations", "aliases", "cards", "diaries", "timeline"):
        if not isinstance(pack.get(key, []), list):
            raise PackError(f"{key} is not a list")
    for index, memory in enumerate(pack.get("memories", [])):
        if not isinstance(memory, dict):
            raise PackError(f"memories[{index}] is not an object")
        item = cast(dict[str, Any], memory)
        missing = [k for k in ("id", "type", "subject", "content") if k not in item]
        if missing:
            raise PackError(f"memories[{index}] lacks {', '.join(missing)}")
    return pack


def instant(value: Any) -> datetime | None:
    if value in (None, ""):
        return None
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        raise PackError(f"not an ISO 8601 time: {value!r}") from None
    if parsed.tzinfo is None:
        raise PackError(f"a time without UTC offset: {value!r}")
    return parsed
