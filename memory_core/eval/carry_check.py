"""What `yuji eval` counts as carried rather than leaked (pure): the rule of carrying
(docs/chat-commands.md#带话) read again from the dataset itself (who said what in which
chat, the choices and blocks), apart from the engine's own carrying code, so an item
the rule forbids counts as a leak whatever the engine called it.

An item of another chat is carried when it is a dataset memory about a member, said in
a group, every evidence message theirs, not a relation, current; the query is about
them (they ask it, or it names them) in a chat they spoke in: their own private chat
unless they turned it off, or a group they turned groups on for and that does not
refuse it.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from memory_core.types import is_group_scope

from .dataset import DataMemory, DataQuery, Dataset


class CarryCheck:
    def __init__(self, ds: Dataset) -> None:
        self.ds = ds
        self.memories = {m.id: m for m in ds.memories}
        self.senders = {m.id: m.sender_id for m in ds.messages}
        self.spoke: dict[str, set[str]] = defaultdict(set)
        """sender id -> the chats they said something in"""
        names: dict[tuple[str, str], set[str]] = defaultdict(set)
        for m in ds.messages:
            self.spoke[m.sender_id].add(m.scope)
            names[(m.scope, m.sender_name)].add(m.sender_id)
        self._names = names

    def subject_of(self, mem: DataMemory) -> str | None:
        """The member a memory is about: its `subject_id`, else the one sender who went
        by its subject in its chat."""
        if mem.subject_id:
            return mem.subject_id
        found = self._names.get((mem.scope, mem.subject), set())
        return next(iter(found)) if len(found) == 1 else None

    def allowed(self, q: DataQuery, memory_id: str | None, now: datetime) -> bool:
        mem = self.memories.get(memory_id or "")
        if mem is None or mem.scope == q.scope or not is_group_scope(mem.scope):
            return False
        person = self.subject_of(mem)
        if person is None or mem.type == "relation" or mem.status != "active":
            return False
        if mem.valid_to is not None and mem.valid_to <= now:
            return False
        if not mem.evidence or any(self.senders.get(e) != person for e in mem.evidence):
            return False
        asked_by = q.asker[0] if q.asker is not None else None
        if asked_by != person and mem.subject not in q.text:
            return False
        if q.scope not in self.spoke[person]:
            return False
        choice = self.ds.carry.choice(person)
        if is_group_scope(q.scope):
            return choice.groups is True and q.scope not in self.ds.carry.blocks
        return q.scope.partition(":")[2] == person and choice.private is not False
