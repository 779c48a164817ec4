"""A rich progress bar behind the core's `Progress` callback (stderr, so stdout stays
the report)."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    TaskID,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.progress import Progress as RichProgress


class RichBar:
    def __init__(self, progress: RichProgress, label: str) -> None:
        self._progress = progress
        self._label = label
        self._task: TaskID | None = None

    def start(self, total: int, done: int) -> None:
        # Shown from here on only: a command refused before its work began prints its
        # one line and nothing else (rich draws even an empty bar on stop).
        if self._task is None:
            self._progress.start()
        self._task = self._progress.add_task(self._label, total=total or None, completed=done)

    def stop(self) -> None:
        if self._task is not None:
            self._progress.stop()

    def advance_to(self, done: int) -> None:
        if self._task is not None:
            self._progress.update(self._task, completed=done)


@contextmanager
def progress_bar(label: str, *, unit_bytes: bool) -> Generator[RichBar]:
    columns = (DownloadColumn(), TransferSpeedColumn()) if unit_bytes else (MofNCompleteColumn(),)
    progress = RichProgress(
        "[progress.description]{task.description}",
        BarColumn(),
        *columns,
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=False,
    )
    bar = RichBar(progress, label)
    try:
        yield bar
    finally:
        bar.stop()
