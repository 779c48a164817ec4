"""Content-addressed files: `<root>/ab/cd/<sha256>`, each written once.

The only name a file ever gets is the hex digest this module computes from its
bytes, so no string from a message or a server can reach the file system.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path

_HEX64 = re.compile(r"[0-9a-f]{64}")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class AttachmentStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path_for(self, sha256: str) -> Path:
        if not _HEX64.fullmatch(sha256):
            raise ValueError("not a SHA-256 hex digest")
        return self.root / sha256[:2] / sha256[2:4] / sha256

    def put(self, data: bytes) -> str:
        """Store `data` (once) and return its SHA-256. Blocking: run it in a thread."""
        digest = sha256_hex(data)
        path = self.path_for(digest)
        if path.is_file() and path.stat().st_size == len(data):
            return digest
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".part-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return digest

    def total_bytes(self) -> int:
        if not self.root.is_dir():
            return 0
        return sum(p.stat().st_size for p in self.root.rglob("*") if p.is_file())
