"""QQ text export import throughput, and memory against the file's size.

    .venv/bin/python benchmarks/qq_import_throughput.py [--lines 1000000]

Generates a QQ desktop 导出消息记录 file of about `--lines` lines (header, then
messages of one to three text lines from 300 senders, some multi-line, some with
[图片]/[表情], nicknames with brackets and spaces), then imports it into a fresh
database with `core.porting.import_qq_txt` (the same path as `yuji import qq-txt`,
without the progress bar) and reports lines/s and messages/s. It runs twice, at a
quarter of the size and at the full size, in child processes, and prints each run's
peak RSS: flat memory means the second is not four times the first. Target: >= 20k
lines/s at 1,000,000 lines. On a shared machine the wall-clock rate depends on the
other load; lines per CPU-second (both threads of the process) does much less.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memory_core import Settings, Yuji


def generate(path: Path, lines: int) -> tuple[int, int]:
    """(lines, messages) written."""
    start = datetime(2021, 3, 1, 8, 0, tzinfo=UTC)
    written = messages = 0
    with path.open("w", encoding="utf-8") as out:
        out.write("\ufeff消息记录（此消息记录为文本格式，不支持重新导入）\n\n")
        out.write("=" * 64 + "\n消息分组:我的群聊\n" + "=" * 64 + "\n消息对象:基准群\n")
        out.write("=" * 64 + "\n\n")
        written = 8
        i = 0
        while written < lines:
            at = start + timedelta(seconds=i * 7 // 3)
            sender = 10_000 + (i * 37) % 300
            name = f"【群友】小 鱼{sender % 97}(潜水)" if sender % 5 == 0 else f"群友{sender}"
            head = f"{at:%Y-%m-%d %H:%M:%S} {name}({sender})"
            if sender % 11 == 0:
                head = f"{at:%Y-%m-%d %H:%M:%S} {name}<u{sender}@example.com>"
            body = [f"第{i}条：今天的鱼很好吃，明天去爬山吗？"]
            if i % 4 == 0:
                body.append("[图片][表情]哈哈哈")
            if i % 9 == 0:
                body += ["", "还有一段，隔了一个空行"]
            out.write(head + "\n" + "\n".join(body) + "\n\n")
            written += 2 + len(body)
            messages += 1
            i += 1
    return written, messages


async def run_import(path: Path, data: Path) -> dict[str, float]:
    core = await Yuji.open(Settings(data_dir=data))
    try:
        began, cpu = time.perf_counter(), time.process_time()
        counts, _ = await core.porting.import_qq_txt(path, "group:4242")
        seconds, cpu = time.perf_counter() - began, time.process_time() - cpu
    finally:
        await core.close()
    return {"seconds": seconds, "cpu": cpu, "new": counts.new, "read": counts.read}


def child(lines: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "export.txt"
        written, messages = generate(path, lines)
        result = asyncio.run(run_import(path, Path(tmp) / "data"))
        result.update(
            lines=written,
            messages=messages,
            bytes=path.stat().st_size,
            rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        )
        print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    for lines in (args.lines // 4, args.lines):
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(lines)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        r = json.loads(out.strip().splitlines()[-1])
        assert r["new"] == r["messages"], r
        print(
            f"{r['lines']:>9,} lines ({r['bytes'] / 2**20:.0f} MB, {r['messages']:,} messages): "
            f"{r['seconds']:.1f}s, {r['lines'] / r['seconds']:,.0f} lines/s, "
            f"{r['messages'] / r['seconds']:,.0f} messages/s; "
            f"{r['lines'] / r['cpu']:,.0f} lines per CPU-second; peak RSS {r['rss_mb']:.0f} MB"
        )


if __name__ == "__main__":
    main()
