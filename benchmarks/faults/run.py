"""The fault suite with figures: SIGKILLs, SQLite full, a misbehaving model.

    .venv/bin/python benchmarks/faults/run.py [--kills 50] [--seed 17]

1. `--kills` SIGKILLs at random moments across archiving, a consolidation batch (fake
   model on loopback), the nightly run and a backup; after each: integrity_check,
   acknowledged <= delivered <= archived per chat, a restart with the bot's start-up
   reconcile, the same check, and the newest 3,000 messages resent (no new row);
2. SQLite full (`PRAGMA max_page_count`), then room again, nothing restarted;
3. the model hangs, answers 500 / 429, answers garbage.

The work is in tests/faults/ (CI runs a short form of each). Prints the tables the
reliability section of docs/benchmarks.md shows; exit 1 when any kill left a problem.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.faults import disk_full, kills, model_faults


async def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="yuji-faults-") as tmp:
        root = Path(tmp)
        started = time.monotonic()
        cycles = await kills.run_kills(root / "kills", args.kills, seed=args.seed)
        took = time.monotonic() - started
        full = await disk_full.fill_and_heal(root / "full")
        probes = [await model_faults.probe(m, root / m) for m in model_faults.MODES]
    bad = [c for c in cycles if not c.ok]
    print(f"SIGKILL ({len(cycles)} kills, {took:.0f} s):\n")
    print(kills.table(cycles))
    for cycle in bad:
        print(f"FAILED {cycle.workload} after {cycle.delay_s}s: {cycle.problems}")
    print("\nSQLite full:\n")
    print(disk_full.table(full))
    print("\nThe model misbehaves:\n")
    print(model_faults.table(probes))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
