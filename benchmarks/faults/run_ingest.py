"""The ingest half of the fault suite, full size, through the real bot on loopback.

    .venv/bin/python -m benchmarks.faults.run_ingest [--quick] [--only flood,fuzz,sigterm]

Prints one Markdown table of figures (docs/benchmarks.md, "可靠性", shows the latest run)
and the raw figures as JSON. Full size: flood = 10,000 at full speed, then 500 msg/s
for 60 s; fuzz = 10,000 bad frames with 2,500 valid messages among them (and one
oversized frame that makes the server close the socket); SIGTERM right after 5,000.
`--quick` runs the sizes the CI test uses. Say how loaded the machine was when you
quote the numbers: the client, the bot and SQLite share its cores.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.faults.ingest_scenarios import flood, fuzz, sigterm

FULL = {"burst": 10_000, "rate": 500, "seconds": 60.0, "fuzzed": 10_000, "sigterm": 5_000}
QUICK = {"burst": 1_000, "rate": 200, "seconds": 1.0, "fuzzed": 300, "sigterm": 1_000}


async def main(sizes: dict[str, Any], only: set[str]) -> None:
    rows: list[tuple[str, str, str]] = []
    raw: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="yuji-faults-") as tmp:
        if "flood" in only:
            f = await flood(
                Path(tmp) / "flood",
                burst=sizes["burst"],
                rate=sizes["rate"],
                seconds=sizes["seconds"],
            )
            raw["flood"] = dataclasses.asdict(f)
            rows += [
                ("flood: burst", f"{f.burst:,} at full speed", f"{f.burst_archived:,} archived"),
                (
                    "flood: burst drain",
                    "first send -> last row committed",
                    f"{f.burst_drain_s:.1f} s",
                ),
                (
                    "flood: sustained",
                    f"{f.rate} msg/s for {f.seconds:g} s",
                    f"{f.paced_archived:,} of {f.paced:,} archived",
                ),
                (
                    "flood: receipt -> archived",
                    "p50 / p99 / max",
                    f"{f.p50_s * 1000:.0f} / {f.p99_s * 1000:.0f} / {f.max_s * 1000:.0f} ms",
                ),
                ("flood: sent -> archived", "p99", f"{f.sent_p99_s * 1000:.0f} ms"),
                ("flood: peak RSS", "bot process (VmHWM)", f"{f.peak_rss_mb:.0f} MB"),
                ("flood: log", "bytes written", f"{f.log_bytes:,}"),
            ]
        if "fuzz" in only:
            z = await fuzz(Path(tmp) / "fuzz", fuzzed=sizes["fuzzed"])
            raw["fuzz"] = dataclasses.asdict(z)
            rows += [
                (
                    "fuzz: valid archived",
                    f"{z.fuzzed:,} bad frames, {z.valid:,} valid",
                    f"{z.valid_archived:,} of {z.valid:,} ({z.reconnects} reconnects)",
                ),
                ("fuzz: bot alive", "archives a message afterwards", "yes" if z.alive else "NO"),
                ("fuzz: log", "bytes written", f"{z.log_bytes:,}"),
            ]
        if "sigterm" in only:
            s = await sigterm(Path(tmp) / "sigterm", messages=sizes["sigterm"])
            raw["sigterm"] = dataclasses.asdict(s)
            rows.append(
                (
                    "SIGTERM with a backlog",
                    f"{s.sent:,} sent, then SIGTERM",
                    f"{s.archived:,} archived, exit {s.exit_code}, {s.stop_s:.1f} s",
                )
            )
    print("| scenario | load | result |")
    print("| --- | --- | --- |")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print(json.dumps(raw, default=str))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="flood,fuzz,sigterm")
    args = parser.parse_args()
    asyncio.run(main(QUICK if args.quick else FULL, set(args.only.split(","))))
