"""Run a dataset end to end: a fresh temporary database, the public write path to
load it, the public recall path (and optionally the bm25 baseline) to ask it.

The database is a temporary SQLite file, or (`EvalOptions.database`) a fresh
database `yuji_eval_<random>` made on a PostgreSQL server and dropped afterwards,
also when the run fails, so recall can be compared per backend."""

from __future__ import annotations

import tempfile
import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_core.clock import FakeClock
from memory_core.errors import ConfigError
from memory_core.service import Yuji
from memory_core.settings import Settings, VectorMode
from memory_core.storage import pg_server
from memory_core.storage.backend_info import database_line
from memory_core.types import Asker

from . import loader, vector_eval
from .carry_check import CarryCheck
from .dataset import DataQuery, Dataset
from .metrics import Answer, report


@dataclass(frozen=True, slots=True)
class EvalOptions:
    distractors: int = 0
    """Generated unrelated memories added to every scope."""
    clones: int = 0
    """Generated near-copies of the expected memories, in total."""
    baselines: bool = False
    limit: int = 5
    vector: VectorMode = "on"
    """Mode of dense retrieval for the run (the index is built after loading)."""
    database: str = ""
    """Empty: a temporary SQLite file; or a PostgreSQL URL naming the server to run on
    (its database part, if any, is replaced by a fresh one)."""
    models: dict[str, Any] = field(default_factory=dict[str, Any])
    """Settings choosing recall's models (`Settings.recall_models`); empty: the defaults."""


async def run_eval(ds: Dataset, options: EvalOptions = EvalOptions()) -> dict[str, Any]:
    """The report of `yuji eval --json` (see metrics.report), plus `baselines` and
    `load` (how the dataset went in)."""
    with tempfile.TemporaryDirectory(prefix="yuji-eval-") as tmp:
        async with _fresh_store(options.database) as url:
            settings = Settings(
                data_dir=Path(tmp),
                database_url=url,
                vector_mode=options.vector,
                recall_limit=options.limit,
                timezone=ds.timezone,
                **options.models,
            )
            return await _run(ds, options, settings)


@asynccontextmanager
async def _fresh_store(server: str) -> AsyncGenerator[str]:
    """ "" (SQLite in the temporary folder), or a new database on `server`."""
    if not server:
        yield ""
        return
    if not server.startswith("postgresql"):
        raise ConfigError(
            f"--database takes a PostgreSQL URL (postgresql+asyncpg://...), not {server.split(':', 1)[0]}; "
            "without it the run uses a temporary SQLite file"
        )
    # The URL names the server; its database may not exist: make ours from `postgres`.
    admin = pg_server.with_database(server, "postgres")
    async with pg_server.scratch_database(admin, "eval") as url:
        yield url


async def _run(ds: Dataset, options: EvalOptions, settings: Settings) -> dict[str, Any]:
    clock = FakeClock(ds.now)
    core = await Yuji.open(settings, clock=clock)
    try:
        loaded = await loader.load(core, clock, ds)
        if options.distractors:
            await loader.add_distractors(core, clock, ds, loaded, options.distractors)
        if options.clones:
            await loader.add_clones(core, clock, ds, loaded, options.clones)
        clock.set(ds.now)
        if core.vectors is not None:
            await vector_eval.prepare(core)
        if core.message_vectors is not None:  # what the bot does in the background
            while await core.message_vectors.embed_pending():
                pass
        for q in ds.queries[:5]:  # warm caches before timing
            await core.recall.recall(
                q.scope, q.text, now=ds.now, context=q.context, asker=asker_of(q, ds)
            )
        check = CarryCheck(ds)
        answers = [await _ask(core, loaded, q, ds, check) for q in ds.queries]
        result = report(answers)
        result["baselines"] = {}
        if options.baselines:
            bm25 = [await _ask_bm25(core, loaded, q, ds, options.limit) for q in ds.queries]
            result["baselines"]["bm25"] = report(bm25)
            result["baselines"].update(await vector_eval.baselines(core, loaded, ds, options.limit))
            for baseline in result["baselines"].values():
                baseline.pop("queries", None)  # one list of queries: yuji's
        result["load"] = {
            "database": await database_line(core.db),
            "memories": len(loaded.ids),
            "generated": loaded.generated,
            "supersede_degraded": loaded.degraded,
        }
        return result
    finally:
        await core.close()


def asker_of(q: DataQuery, ds: Dataset) -> Asker | None:
    """Who sent `q`: their id, the name the query gives, then every other name their
    messages in that chat were sent under (as the chat path knows a sender)."""
    if q.asker is None:
        return None
    user_id, name = q.asker
    seen = [m.sender_name for m in ds.messages if m.scope == q.scope and m.sender_id == user_id]
    return Asker(user_id, tuple(dict.fromkeys(n for n in (name, *seen) if n)))


async def _ask(
    core: Yuji, loaded: loader.Loaded, q: DataQuery, ds: Dataset, check: CarryCheck
) -> Answer:
    started = time.perf_counter()
    result = await core.recall.recall(
        q.scope, q.text, now=ds.now, context=q.context, asker=asker_of(q, ds)
    )
    ms = (time.perf_counter() - started) * 1000
    return Answer(
        query=q,
        ids=tuple(loaded.names.get(r.memory.id) for r in result.items),
        scopes=tuple(r.memory.scope for r in result.items),
        ms=ms,
        bands=tuple(r.band for r in result.items),
        p=tuple(r.score for r in result.items),
        quotes=tuple(loaded.messages.get(x.message.id) for x in result.quotes),
        quote_scopes=tuple(x.message.scope for x in result.quotes),
        quote_bands=tuple(x.band for x in result.quotes),
        carried=tuple(
            r.stage == "carried" and check.allowed(q, loaded.names.get(r.memory.id), ds.now)
            for r in result.items
        ),
    )


async def _ask_bm25(
    core: Yuji, loaded: loader.Loaded, q: DataQuery, ds: Dataset, limit: int
) -> Answer:
    started = time.perf_counter()
    found = await core.recall.baseline_bm25(q.scope, q.joined, limit=limit)
    ms = (time.perf_counter() - started) * 1000
    return Answer(
        query=q,
        ids=tuple(loaded.names.get(m.id) for m in found),
        scopes=tuple(m.scope for m in found),
        ms=ms,
    )
