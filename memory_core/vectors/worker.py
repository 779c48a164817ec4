"""Starting `yuji embed` from the bot: a separate process, only when something changed.

The bot process never embeds memories (that would hold the event loop and the
memory of a batch); it compares the database's fingerprint with the one the index
was built from and, when they differ, runs `python -m memory_core.cli embed` with the
same data location and model, waiting for it without blocking.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from memory_core.settings import Settings
from memory_core.storage import MemoryRepo

from .embedder import Embedder
from .place import IndexPlace

log = logging.getLogger(__name__)

EMBED_TIMEOUT_S = 3600.0


@dataclass(frozen=True, slots=True)
class EmbedRun:
    returncode: int
    report: dict[str, object] | None
    """The JSON report of `yuji embed --json`, when it finished."""
    stderr_tail: str


async def needs_embedding(repo: MemoryRepo, place: IndexPlace, embedder: Embedder) -> bool:
    """True when the memories or aliases changed since the index was last written."""
    built_from = await place.source(embedder.model_id)
    return built_from is None or built_from != await repo.source_fingerprint()


def embed_command(
    settings: Settings, base_env: Mapping[str, str]
) -> tuple[list[str], dict[str, str]]:
    """argv and environment that make the child see the same data and model as the bot."""
    env = {k: v for k, v in base_env.items() if not k.startswith("YUJI_")}
    env.update(
        {
            "YUJI_DATA_DIR": str(settings.data_dir.resolve()),
            "YUJI_DATABASE_URL": settings.database_url,
            "YUJI_VECTOR_MODEL_PATH": settings.vector_model_path,
            "YUJI_EMBED_BASE_URL": settings.embed_base_url,
            "YUJI_EMBED_MODEL": settings.embed_model,
            "YUJI_EMBED_API_KEY": settings.embed_api_key,
            "YUJI_EMBED_BATCH": str(settings.embed_batch),
            "YUJI_TIMEZONE": settings.timezone,
        }
    )
    return [sys.executable, "-m", "memory_core.cli", "embed", "--json"], env


async def run_embed_process(
    settings: Settings, *, timeout_s: float = EMBED_TIMEOUT_S, argv: list[str] | None = None
) -> EmbedRun:
    command, env = embed_command(settings, os.environ)
    proc = await asyncio.create_subprocess_exec(
        *(argv or command),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout_s)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return EmbedRun(-1, None, f"yuji embed timed out after {timeout_s:.0f}s")
    report: dict[str, object] | None = None
    lines = out.decode("utf-8", "replace").strip().splitlines()
    if proc.returncode == 0 and lines:
        try:
            report = json.loads(lines[-1])
        except ValueError:
            report = None
    tail = err.decode("utf-8", "replace")[-2000:]
    return EmbedRun(proc.returncode if proc.returncode is not None else -1, report, tail)
