"""A copy of a development set with tiers of our own added (issue 34).

    python benchmarks/dev_plus.py DEV.json OUT.json

The development set is kept outside the repository and has no chatter tier: this adds
`benchmarks/data/dev-chatter.json` (phatic wakes we wrote ourselves, addressed to the
dev set's chats by their scope ids) and `benchmarks/data/dev-smalltalk.json` (small talk
that is neither greeting nor laughter, issue 47 item 3) to a copy, both as the chatter
tier, so `yuji eval OUT.json` reports the chatter tier beside the set's own. Nothing of
the dev set is read into the repository.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "data"
EXTRA = ("dev-chatter.json", "dev-smalltalk.json")


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit("usage: python benchmarks/dev_plus.py DEV.json OUT.json")
    source, out = Path(sys.argv[1]), Path(sys.argv[2])
    data = json.loads(source.read_text(encoding="utf-8"))
    scopes = {s["id"] for s in data["scopes"]}
    added = 0
    for name in EXTRA:
        extra = json.loads((HERE / name).read_text(encoding="utf-8"))
        queries = [q for q in extra["queries"] if q["scope"] in scopes]
        data["queries"].extend(queries)
        added += len(queries)
    data["name"] = f"{data.get('name', 'dataset')}+ours"
    out.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    print(f"{out}: {len(data['queries'])} queries ({added} of ours)")


if __name__ == "__main__":
    main()
