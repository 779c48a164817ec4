"""What an import did, counted: read, new, duplicate, refused (by reason), and the
lines it could not place. Kept in the checkpoint so a resumed run reports the whole."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_EXAMPLES = 20
"""Unmatched lines named in the report; the rest are counted."""


@dataclass(slots=True)
class ImportCounts:
    read: int = 0
    new: int = 0
    duplicate: int = 0
    refused: dict[str, int] = field(default_factory=dict[str, int])
    unmatched: int = 0
    examples: list[tuple[int, str]] = field(default_factory=list[tuple[int, str]])
    """(line, text) of the first unmatched lines."""
    changed: int = 0
    """Facts and packs: memories superseded by a changed value."""
    line: int = 0
    """Text sources: the line a resumed run continues at."""

    def refuse(self, reason: str) -> None:
        self.refused[reason] = self.refused.get(reason, 0) + 1

    def unmatched_line(self, line_no: int, text: str) -> None:
        self.unmatched += 1
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append((line_no, text[:120]))

    def to_json(self) -> dict[str, Any]:
        return {
            "read": self.read,
            "new": self.new,
            "duplicate": self.duplicate,
            "refused": dict(self.refused),
            "unmatched": self.unmatched,
            "examples": [list(e) for e in self.examples],
            "changed": self.changed,
            "line": self.line,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ImportCounts:
        return cls(
            read=int(data.get("read", 0)),
            new=int(data.get("new", 0)),
            duplicate=int(data.get("duplicate", 0)),
            refused={str(k): int(v) for k, v in dict(data.get("refused", {})).items()},
            unmatched=int(data.get("unmatched", 0)),
            examples=[(int(n), str(t)) for n, t in data.get("examples", [])],
            changed=int(data.get("changed", 0)),
            line=int(data.get("line", 0)),
        )


def render_counts(counts: ImportCounts, *, dry_run: bool = False) -> str:
    """The report `yuji import` prints at the end, in the manual's words (pure); the
    reasons of refusals are the errors' own."""
    head = "试运行，什么也没写：" if dry_run else ""
    new_word = "会新增" if dry_run else "新增"
    lines = [
        f"{head}读到 {counts.read}，{new_word} {counts.new}，重复 {counts.duplicate}，"
        f"拒绝 {sum(counts.refused.values())}"
        + (f"，取代 {counts.changed}" if counts.changed else "")
    ]
    lines += [f"  拒绝 {n}：{reason}" for reason, n in sorted(counts.refused.items())]
    if counts.unmatched:
        lines.append(f"  {counts.unmatched} 行认不出：")
        lines += [f"    第 {n} 行：{text}" for n, text in counts.examples]
        if counts.unmatched > len(counts.examples):
            lines.append(f"    …还有 {counts.unmatched - len(counts.examples)} 行")
    return "\n".join(lines)
