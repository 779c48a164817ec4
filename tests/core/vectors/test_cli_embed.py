"""`yuji embed` computes the vectors in a process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memory_core import Settings, Yuji
from memory_core.vectors.onnx_embedder import OnnxEmbedder
from memory_core.vectors.store import VectorIndex, model_folder

from .helpers import add_memory
from .tiny_onnx import build_tiny_model

ROOT = Path(__file__).resolve().parents[3]


def run_embed(tmp_path: Path, data_dir: Path, model_dir: Path, *args: str) -> dict[str, object]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("YUJI_")},
        "YUJI_DATA_DIR": str(data_dir),
        "YUJI_VECTOR_MODEL_PATH": str(model_dir),
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-m", "memory_core.cli", "embed", "--json", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


async def test_embed_subcommand_writes_the_index(tmp_path: Path) -> None:
    model_dir = tmp_path / "model"
    build_tiny_model(model_dir)
    data_dir = tmp_path / "data"
    core = await Yuji.open(Settings(data_dir=data_dir))
    try:
        await add_memory(core.db, "group:1", "小明", "小明学吉他")
        await add_memory(core.db, "group:1", "老周", "老周儿子出生")
    finally:
        await core.close()

    first = run_embed(tmp_path, data_dir, model_dir)
    assert (first["total"], first["embedded"]) == (2, 2)
    again = run_embed(tmp_path, data_dir, model_dir)
    assert (again["embedded"], again["reused"]) == (0, 2)
    rebuilt = run_embed(tmp_path, data_dir, model_dir, "--rebuild")
    assert rebuilt["embedded"] == 2

    model_id = OnnxEmbedder(model_dir).model_id
    index = VectorIndex.load(model_folder(data_dir / "vectors", model_id), model_id)
    assert index is not None
    assert [r.subject for r in index.rows] == ["小明", "老周"]
