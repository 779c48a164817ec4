"""Resident memory of a bot process with the vector model loaded (budget: 350 MB).

    .venv/bin/python benchmarks/vector_rss.py --dataset FILE.json

A fresh child process does what `bot.py` does before serving (nonebot.init, the
OneBot v11 adapter, every plugin loaded), opens the core with dense retrieval on (the
default) on a temporary copy of the dataset's memories, builds the index, then asks
every dataset question through recall (which loads e5 on the first one). FILE is any
dataset in docs/eval-format.md format (e.g. one of training/corpus/).
It reports VmRSS before the model, after, and the peak (VmHWM).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import asyncio, json, sys, tempfile
from pathlib import Path

import nonebot
from nonebot.adapters.onebot.v11 import Adapter

def rss(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) / 1024
    return -1.0

tmp = tempfile.mkdtemp()
nonebot.init(yuji_data_dir=tmp)
nonebot.get_driver().register_adapter(Adapter)
nonebot.load_plugin("nonebot_plugin_yuji")

from memory_core import Settings, Yuji
from memory_core.vectors import E5Embedder, sync_index
sys.path.insert(0, "benchmarks")
from vector_latency import load

async def main():
    data = json.loads(Path(sys.argv[1]).read_text("utf-8"))
    out = {"rss_plugins_loaded_mb": rss("VmRSS")}
    # The index is written by `yuji embed` in another process: do it with a separate
    # embedder whose weights are dropped before the bot-side model is loaded.
    settings = Settings(data_dir=Path(tmp), vector_mode="on")
    core = await Yuji.open(settings)
    await load(core, data)
    builder = E5Embedder()
    await sync_index(core.memory_repo, builder, core.vector_place)
    del builder
    import gc; gc.collect()
    out["rss_core_open_mb"] = rss("VmRSS")
    for q in data["queries"]:
        await core.recall.recall(q["scope"], q["text"])
    out["rss_model_loaded_mb"] = rss("VmRSS")
    out["peak_mb"] = rss("VmHWM")
    await core.close()
    print(json.dumps(out))

asyncio.run(main())
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", required=True)
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("YUJI_")}
    with tempfile.TemporaryDirectory() as cwd:
        env["PYTHONPATH"] = str(ROOT)
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(Path(args.dataset).resolve())],
            cwd=ROOT,
            env={**env, "HOME": cwd},
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode != 0:
        print(done.stderr[-3000:])
        raise SystemExit(done.returncode)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    for key, value in result.items():
        print(f"{key}: {value:.0f} MB")


if __name__ == "__main__":
    main()
