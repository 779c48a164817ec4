"""The experience archive: group-commit ingest, dedup, attachments."""

from .fakes import FakeFetcher as FakeFetcher
from .fetcher import AttachmentFetcher as AttachmentFetcher
from .fetcher import FetchedFile as FetchedFile
from .fetcher import HttpxFetcher as HttpxFetcher
from .service import ArchiveService as ArchiveService
from .service import ArchiveStats as ArchiveStats
from .store import AttachmentStore as AttachmentStore

__all__ = [
    "ArchiveService",
    "ArchiveStats",
    "AttachmentFetcher",
    "AttachmentStore",
    "FakeFetcher",
    "FetchedFile",
    "HttpxFetcher",
]
