"""Garbage collections of the bot process `benchmarks/ingest_stock_adapter.py --gc` starts.

Python imports `sitecustomize` at start-up from PYTHONPATH; the benchmark puts this
folder there and names a file in `YUJI_BENCH_GC_TRACE`. Every collection is recorded
as (monotonic time, generation, seconds) and the list is written there as JSON when
the process exits, so the benchmark can count the collections of its measured window
(CLOCK_MONOTONIC is one clock for every process of the machine).
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import time
from pathlib import Path
from typing import Any

_path = os.environ.get("YUJI_BENCH_GC_TRACE")
if _path:
    _done: list[tuple[float, int, float]] = []
    _started = [0.0]

    def _trace(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            _started[0] = time.perf_counter()
        else:
            _done.append(
                (time.monotonic(), int(info["generation"]), time.perf_counter() - _started[0])
            )

    gc.callbacks.append(_trace)
    atexit.register(lambda: Path(str(_path)).write_text(json.dumps(_done), "utf-8"))
