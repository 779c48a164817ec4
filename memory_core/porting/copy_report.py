"""What `yuji copy-store` found when it compared the two stores, and its table."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Compared:
    """One line of the comparison: a table's rows, or a checksum, on both sides."""

    name: str
    source: str
    target: str

    @property
    def ok(self) -> bool:
        return self.source == self.target


@dataclass(frozen=True, slots=True)
class CopyReport:
    source: str
    target: str
    resumed: bool
    """This run continued an earlier one (`--resume`)."""
    copied: int
    """Rows this run wrote (an earlier run's are not counted)."""
    seconds: float
    indexed: int
    """Memories and messages put into the target's full-text indexes."""
    counts: tuple[Compared, ...]
    checksums: tuple[Compared, ...]
    carried: int = 0
    """Memory vectors carried into the copy (copy_check.py)."""
    recalled: tuple[Compared, ...] = ()
    """Sample questions recalled on both (ids, bands, P)."""

    @property
    def ok(self) -> bool:
        return all(line.ok for line in (*self.counts, *self.checksums, *self.recalled))


def report_lines(report: CopyReport) -> list[str]:
    """The comparison side by side, then one verdict line (Chinese, for `yuji
    copy-store`; the tables' names are the schema's)."""
    lines = [f"源：{report.source}", f"目标：{report.target}", ""]
    rows = [(c.name, c.source, c.target, "" if c.ok else "不一致") for c in report.counts]
    rows += [
        (c.name, c.source[:16], c.target[:16], "" if c.ok else "不一致") for c in report.checksums
    ]
    rows += [(c.name, c.source, c.target, "" if c.ok else "不一致") for c in report.recalled]
    header = ("table", "source", "target", "")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    for name, source, target, verdict in (header, *rows):
        line = f"{name:<{widths[0]}}  {source:>{widths[1]}}  {target:>{widths[2]}}  {verdict}"
        lines.append(line.rstrip())
    how = "接着上次，" if report.resumed else ""
    rate = report.copied / report.seconds if report.seconds > 0 else 0.0
    lines += [
        "",
        f"复制了 {report.copied} 行（{how}{report.seconds:.1f} 秒，每秒 {rate:,.0f} 行）；"
        f"全文索引了 {report.indexed} 行；带过去 {report.carried} 条记忆向量",
        "副本和源一致" if report.ok else "不一致：副本和源不同",
    ]
    return lines
