"""The store goes away, full size, through real bots on loopback.

    .venv/bin/python -m benchmarks.faults.run_outage [--quick] [--only restart,disk]
        [--runs 1]

- `restart`: two bot processes on one PostgreSQL 18 server, each archiving its own
  group at 200 msg/s for 20 s; the postmaster SIGKILLed 5 s in and started again on
  the same data directory 10 s later.
- `disk`: a bot whose data folder is a 64 MB tmpfs (needs root): 300 messages, the
  disk filled with a file, 300 more, the file removed, 300 more; consolidation on a
  fake model on loopback, backups every 5 s.

Prints a Markdown table per scenario (docs/faults.md shows the latest run) and the
raw figures as JSON. `--quick` runs the sizes the CI tests use. Exit 1 when a message
was lost or doubled, a process died, or the alerts were not one each way.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.faults import outage_scenarios
from tests.faults import tmpfs_full

FULL: dict[str, Any] = {
    "restart": {"processes": 2, "rate": 200, "seconds": 20.0, "kill_at_s": 5.0, "outage_s": 10.0},
    "disk": {"size_mb": 64, "batch": 300, "rate": 200, "backups": True},
}
QUICK: dict[str, Any] = {
    "restart": {"processes": 2, "rate": 50, "seconds": 6.0, "kill_at_s": 2.0, "outage_s": 3.0},
    "disk": {"size_mb": 64, "batch": 100, "rate": 200},
}


async def main(sizes: dict[str, Any], only: set[str], runs: int) -> int:
    failed = False
    raw: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="yuji-outage-") as tmp:
        for run in range(runs):
            if "restart" in only:
                r = await outage_scenarios.pg_restart(Path(tmp) / f"r{run}", **sizes["restart"])
                print(outage_scenarios.table(r))
                raw[f"restart{run}"] = {
                    k: v for k, v in dataclasses.asdict(r).items() if k != "logs"
                }
                failed |= not (
                    r.archived == r.sent
                    and r.duplicates == 0
                    and r.alive
                    and r.leaders == 1
                    and (r.down_alerts, r.up_alerts, len(r.alerts)) == (1, 1, 2)
                )
            if "disk" in only:
                d = await tmpfs_full.disk_full(Path(tmp) / f"d{run}", **sizes["disk"])
                print(tmpfs_full.table(d))
                raw[f"disk{run}"] = {k: v for k, v in dataclasses.asdict(d).items() if k != "logs"}
                failed |= not (
                    d.archived == d.sent and d.duplicates == 0 and d.alive and len(d.alerts) == 2
                )
    print(json.dumps(raw, default=str, ensure_ascii=False))
    return 1 if failed else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="restart,disk")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    sys.exit(asyncio.run(main(QUICK if args.quick else FULL, set(args.only.split(",")), args.runs)))
