"""Load a dataset into an opened core through the public write path only.

Messages are archived with source `migrated` (core.archive), memories are written
with their evidence (core.memories.write, the clock set to each one's created_at),
and supersede / contradict / retract go through the same calls the model's tools
use. Nothing is inserted behind the API's back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from memory_core.clock import FakeClock
from memory_core.memories.outcomes import NewMemory
from memory_core.service import Yuji
from memory_core.storage import Cut
from memory_core.types import EvidenceRef, NewExperience

from . import generate
from .dataset import Dataset

ACTOR = "migration"
"""`changed_by` of everything the loader writes (an explicit, named actor)."""


@dataclass
class Loaded:
    ids: dict[str, int] = field(default_factory=dict[str, int])
    """dataset memory id -> database id"""
    names: dict[int, str] = field(default_factory=dict[int, str])
    """database id -> dataset memory id (generated memories are absent)"""
    messages: dict[int, str] = field(default_factory=dict[int, str])
    """database experience id -> dataset message id (fillers are absent)"""
    degraded: list[str] = field(default_factory=list[str])
    """supersedes of the dataset that the gates refused (recorded as contradicts)"""
    generated: int = 0


async def load(core: Yuji, clock: FakeClock, ds: Dataset) -> Loaded:
    loaded = Loaded()
    exp_ids = await _archive(core, clock, ds)
    loaded.messages = {i: key[1] for key, i in exp_ids.items()}
    for scope, alias, canonical in ds.aliases:
        await core.memories.add_alias(scope, alias, canonical)
    superseded = {m.supersedes for m in ds.memories if m.supersedes}
    for mem in sorted(ds.memories, key=lambda x: x.created_at):
        clock.set(mem.created_at)
        out = await core.memories.write(
            mem.scope,
            type=mem.type,
            subject=mem.subject,
            content=mem.content,
            evidence=[EvidenceRef(experience_id=exp_ids[(mem.scope, e)]) for e in mem.evidence],
            importance=mem.importance,
            confidence=mem.confidence,
            valid_from=mem.valid_from,
            # The supersede below closes it, exactly as the model's tool call would.
            valid_to=None if mem.id in superseded else mem.valid_to,
            origin=ACTOR,
            changed_by=ACTOR,
            subject_id=mem.subject_id,
        )
        loaded.ids[mem.id] = out.memory.id
        loaded.names[out.memory.id] = mem.id
    clock.set(ds.now)
    for mem in sorted(ds.memories, key=lambda x: (x.valid_from or x.created_at, x.created_at)):
        if mem.supersedes and mem.supersedes in loaded.ids:
            outcome = await core.memories.supersede(
                mem.scope,
                loaded.ids[mem.supersedes],
                loaded.ids[mem.id],
                reason="dataset: supersedes",
                changed_by=ACTOR,
            )
            if not outcome.applied:
                loaded.degraded.append(f"{mem.id} -> {mem.supersedes}: {outcome.detail}")
        if mem.contradicts and mem.contradicts in loaded.ids:
            await core.memories.contradict(
                mem.scope,
                loaded.ids[mem.id],
                loaded.ids[mem.contradicts],
                reason="dataset: contradicts",
                changed_by=ACTOR,
            )
    for mem in ds.memories:
        if mem.status == "retracted":
            await core.memories.retract(
                mem.scope, loaded.ids[mem.id], reason="dataset: retracted", changed_by=ACTOR
            )
        if mem.last_accessed is not None:
            await core.memories.touch(mem.scope, [loaded.ids[mem.id]], mem.last_accessed)
    for choice in ds.carry.choices:  # as `/carry private|groups on|off` would
        await core.carrying.choose(
            choice.platform,
            choice.sender_id,
            into_private=choice.private,
            into_groups=choice.groups,
        )
    for scope in ds.carry.blocks:  # as a group admin's `/carry block` would
        await core.carrying.block(scope, ACTOR)
    return loaded


async def _archive(core: Yuji, clock: FakeClock, ds: Dataset) -> dict[tuple[str, str], int]:
    """Every message archived, the consolidated ones first; each chat's acknowledged
    watermark then sits after its last consolidated message (through the batch state
    machine), so exactly the `unconsolidated` ones are above it. Behind those, a chat
    gets filler messages until the prompt's recent window holds none of them."""
    clock.set(ds.now)
    ordered = sorted(ds.messages, key=lambda m: m.unconsolidated)  # stable: file order kept
    exps = [
        _experience(msg.scope, msg.id, msg.sender_id, msg.sender_name, msg.text, msg.time)
        for msg in ordered
    ]
    ids = await core.archive.append_many(exps)
    await core.archive.flush()
    out = {(e.scope, e.fingerprint): i for e, i in zip(exps, ids, strict=True)}
    for scope in ds.scopes:
        done = [out[(m.scope, m.id)] for m in ordered if m.scope == scope and not m.unconsolidated]
        if done:
            await acknowledge_through(core, scope, max(done))
        later = [m for m in ordered if m.scope == scope and m.unconsolidated]
        if later:
            await _fill_window(core, scope, ds, max(m.time for m in later))
    return out


def _experience(
    scope: str, fingerprint: str, sender_id: str, sender_name: str, text: str, sent: datetime
) -> NewExperience:
    return NewExperience(
        scope=scope,
        fingerprint=fingerprint,
        sender_id=sender_id or "0",
        sender_name=sender_name,
        text=text,
        sent_at=sent,
        segments=[{"type": "text", "data": {"text": text}}],
        source="migrated",
    )


async def _fill_window(core: Yuji, scope: str, ds: Dataset, after: datetime) -> None:
    """The recent window's worth of filler after a chat's unconsolidated messages (they
    are the newest in the dataset's archive, and the prompt already shows the newest)."""
    count = core.settings.recent_messages
    step = (ds.now - after) / (count + 1)
    await core.archive.append_many(
        [
            _experience(scope, f"eval-filler-{scope}-{i}", "0", "", FILLER, after + step * (i + 1))
            for i in range(count)
        ]
    )
    await core.archive.flush()


FILLER = "嗯嗯"
"""What a filler message says (no question asks about it)."""


async def acknowledge_through(core: Yuji, scope: str, last_id: int) -> None:
    """What consolidation does when the model acknowledges a batch ending at `last_id`
    (nothing new to remember: the dataset's memories are loaded on their own)."""
    repo = core.consolidation.repo
    now = core.clock.now()
    first = (await repo.cursor(scope)).acked_id + 1
    cut = Cut(first, last_id, last_id - first + 1, 0)
    batch = await repo.create(scope, cut, "eval", now)
    if batch is None:
        raise RuntimeError(f"a batch is open in {scope}")
    await repo.delivered(batch.id, now)
    await repo.acknowledge(batch.id, "eval", "nothing", "", now)


async def add_distractors(
    core: Yuji, clock: FakeClock, ds: Dataset, loaded: Loaded, per_scope: int, *, seed: int = 7
) -> None:
    """`per_scope` generated unrelated memories in every scope of the dataset."""
    chinese = generate.is_chinese([m.content for m in ds.memories])
    for n, scope in enumerate(ds.scopes):
        members = sorted(
            {m.subject for m in ds.memories if m.scope == scope} - {"group", "bot", ""}
        )
        evidence = await _generated_evidence(core, clock, ds, scope, "distractors")
        items = [
            g.to_write(evidence, valid_from=ds.now - timedelta(days=400))
            for g in generate.distractors(
                per_scope, members=members, chinese=chinese, seed=seed * 1000 + n
            )
        ]
        clock.set(ds.now - timedelta(days=30))
        for start in range(0, len(items), 5000):
            await core.memories.write_many(scope, items[start : start + 5000], changed_by=ACTOR)
        loaded.generated += len(items)
    clock.set(ds.now)


async def add_clones(
    core: Yuji, clock: FakeClock, ds: Dataset, loaded: Loaded, count: int, *, seed: int = 11
) -> None:
    """`count` near-copies of the memories that positive queries expect."""
    wanted = sorted({i for q in ds.queries if q.positive for i in q.expect_any})
    by_id = {m.id: m for m in ds.memories}
    targets = [(i, by_id[i].content) for i in wanted if i in by_id and i in loaded.ids]
    made = generate.clones(targets, count, seed=seed)
    per_scope: dict[str, list[NewMemory]] = {}
    for target_id, text in made:
        original = by_id[target_id]
        db_original = await core.memories.get(original.scope, loaded.ids[target_id])
        per_scope.setdefault(original.scope, []).append(
            NewMemory(
                type=original.type,
                subject=original.subject,
                content=text,
                evidence=await core.memories.evidence(original.scope, db_original.id),
                importance=original.importance,
                confidence=original.confidence,
                valid_from=db_original.valid_from,
                valid_to=db_original.valid_to,
                origin="generated",
            )
        )
    clock.set(ds.now - timedelta(days=1))
    for scope, items in per_scope.items():
        await core.memories.write_many(scope, items, changed_by=ACTOR)
        loaded.generated += len(items)
    clock.set(ds.now)


async def _generated_evidence(
    core: Yuji, clock: FakeClock, ds: Dataset, scope: str, kind: str
) -> tuple[EvidenceRef, ...]:
    clock.set(ds.now)
    exp_id = await core.archive.append(
        NewExperience(
            scope=scope,
            fingerprint=f"eval-{kind}-{scope}",
            sender_id="0",
            text=f"(generated {kind} for evaluation)",
            sent_at=ds.now - timedelta(days=400),
            source="migrated",
        )
    )
    await core.archive.flush()
    return (EvidenceRef(experience_id=exp_id),)
