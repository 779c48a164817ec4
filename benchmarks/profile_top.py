"""Where the time went, from a py-spy raw (collapsed stacks) profile.

    .venv/bin/python -m benchmarks.profile_top PROFILE.txt [--top 25]

Prints the functions with the largest share of samples, inclusive (the function or
anything it called was running) and self (the function itself was on top), with the
file they live in shortened to the package path.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

_FRAME = re.compile(r"^(?P<name>.*?) \((?P<file>[^:]*)(?::\d+)?\)$")


def _short(frame: str) -> str:
    match = _FRAME.match(frame)
    if match is None:
        return frame
    path = match["file"]
    for marker in ("site-packages/", "/lib/python3", "/work/"):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{match['name']} ({path})"


def summarise(path: Path, top: int = 25) -> str:
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for line in path.read_text("utf-8", errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        total += n
        frames = [_short(f) for f in stack.split(";")]
        for frame in set(frames):
            inclusive[frame] += n
        own[frames[-1]] += n
    if not total:
        return f"{path}: no samples"
    lines = [f"{path.name}: {total} samples; inclusive:"]
    lines += [f"  {n / total:6.1%}  {f}" for f, n in inclusive.most_common(top)]
    lines.append("self:")
    lines += [f"  {n / total:6.1%}  {f}" for f, n in own.most_common(top)]
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("profile", type=Path)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    print(summarise(args.profile, args.top))
