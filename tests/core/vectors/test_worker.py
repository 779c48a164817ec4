from __future__ import annotations

import sys
from pathlib import Path

from memory_core import Yuji
from memory_core.vectors.build import sync_index
from memory_core.vectors.fake import FakeEmbedder
from memory_core.vectors.worker import embed_command, needs_embedding, run_embed_process

from .helpers import add_alias, add_memory


async def test_needs_embedding_follows_the_truth_tables(core: Yuji) -> None:
    embedder = FakeEmbedder()
    assert await needs_embedding(core.memory_repo, core.vector_place, embedder)  # no index yet
    await add_memory(core.db, "group:1", "小明", "小明学吉他")
    await sync_index(core.memory_repo, embedder, core.vector_place)
    assert not await needs_embedding(core.memory_repo, core.vector_place, embedder)
    await add_alias(core.db, "group:1", "阿明", "小明")
    assert await needs_embedding(core.memory_repo, core.vector_place, embedder)


def test_the_child_sees_the_same_data_and_model(tmp_path: Path) -> None:
    from memory_core import Settings

    settings = Settings(data_dir=tmp_path / "d", vector_model_path="/models/bge")
    argv, env = embed_command(settings, {"PATH": "/bin", "YUJI_DATA_DIR": "/elsewhere"})
    assert argv[1:] == ["-m", "memory_core.cli", "embed", "--json"]
    assert env["YUJI_DATA_DIR"] == str((tmp_path / "d").resolve())
    assert env["YUJI_VECTOR_MODEL_PATH"] == "/models/bge"
    assert env["PATH"] == "/bin"
    api = settings.with_changes(embed_base_url="http://h/v1", embed_model="m", embed_api_key="k")
    _, env = embed_command(api, {})
    assert (env["YUJI_EMBED_BASE_URL"], env["YUJI_EMBED_MODEL"], env["YUJI_EMBED_API_KEY"]) == (
        "http://h/v1",
        "m",
        "k",
    )


async def test_a_failing_or_hanging_child_is_reported(core: Yuji) -> None:
    failed = await run_embed_process(
        core.settings, argv=[sys.executable, "-c", "import sys; print('x'); sys.exit(3)"]
    )
    assert failed.returncode == 3
    assert failed.report is None
    hung = await run_embed_process(
        core.settings, argv=[sys.executable, "-c", "import time; time.sleep(30)"], timeout_s=0.5
    )
    assert hung.returncode == -1
    assert "timed out" in hung.stderr_tail
    ok = await run_embed_process(
        core.settings, argv=[sys.executable, "-c", "print('{\"total\": 0}')"]
    )
    assert ok.returncode == 0
    assert ok.report == {"total": 0}
