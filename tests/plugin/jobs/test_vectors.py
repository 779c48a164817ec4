"""The scheduled vector job starts `yuji embed` as a child process, only on change."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core import Settings, Yuji
from memory_core.vectors.onnx_embedder import OnnxEmbedder
from memory_core.vectors.store import VectorIndex, model_folder
from nonebot_plugin_yuji.jobs.vectors import refresh
from tests.core.vectors.helpers import add_memory, edit_memory
from tests.core.vectors.tiny_onnx import build_tiny_model


@pytest.fixture
def yuji_settings(tmp_path: Path) -> Settings:
    model = tmp_path / "model"
    build_tiny_model(model)
    return Settings(
        data_dir=tmp_path / "yuji-data", vector_mode="shadow", vector_model_path=str(model)
    )


async def test_embeds_in_a_child_process_only_when_memories_changed(yuji_core: Yuji) -> None:
    memory = await add_memory(yuji_core.db, "group:1", "小明", "小明学吉他")
    assert await refresh(yuji_core) is True
    model_id = OnnxEmbedder(yuji_core.settings.vector_model_path).model_id
    folder = model_folder(yuji_core.settings.vectors_dir, model_id)
    index = VectorIndex.load(folder, model_id)
    assert index is not None
    assert [r.memory_id for r in index.rows] == [memory]
    # The bot process itself never loaded the model to embed memories.
    assert yuji_core.vectors is not None
    assert not getattr(yuji_core.vectors.embedder, "loaded", True)

    assert await refresh(yuji_core) is False  # nothing changed: no process
    await edit_memory(yuji_core.db, memory, "小明学尤克里里")
    assert await refresh(yuji_core) is True
    index = VectorIndex.load(folder, model_id)
    assert index is not None
    assert index.rows[0].version == 2
