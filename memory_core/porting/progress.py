"""How an import reports progress: a callback the CLI backs with a rich bar."""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def start(self, total: int, done: int) -> None:
        """`total` units (bytes, rows, lines) of which `done` were done by an earlier run."""
        ...

    def advance_to(self, done: int) -> None: ...


class NoProgress:
    def start(self, total: int, done: int) -> None:
        del total, done

    def advance_to(self, done: int) -> None:
        del done
