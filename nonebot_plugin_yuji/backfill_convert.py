"""History items of `get_group_msg_history` -> experiences, through the archive's own
converter (`message_experience`, which the live ingest uses too), so a backfilled
message is stored exactly as if it had been heard live (same fingerprint = message
id, same text rendering, same attachments)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from memory_core import NewExperience, group_scope

from .archive_convert import message_experience


def history_parser(
    group_id: int, self_id: str, now: Callable[[], datetime]
) -> Callable[[Mapping[str, Any]], NewExperience | None]:
    scope = group_scope(group_id)

    def parse(item: Mapping[str, Any]) -> NewExperience | None:
        raw_group = item.get("group_id")
        if raw_group not in (None, "") and str(raw_group) != str(group_id):
            return None
        # History items may omit the message type and the group: they are this group's.
        exp = message_experience(
            {**item, "message_type": "group", "group_id": group_id},
            self_id=self_id,
            now=now,
            source="backfill",
        )
        return exp if exp is not None and exp.scope == scope else None

    return parse
