"""The one error tree of memory_core.

    YujiError
    ├── ConfigError            a setting is missing or malformed
    ├── StorageError           the database failed: I/O, read-only or corrupt file
    │   ├── ConstraintViolation    a write broke a UNIQUE, foreign-key, CHECK, NOT NULL rule
    │   │   └── AppendOnlyViolation    UPDATE/DELETE of archived content (a trigger)
    │   ├── StorageBusy            another process held the write lock past the bound
    │   ├── StorageFull            the disk (or the database's page limit) is full
    │   ├── StorageUnavailable     the server cannot be reached: refused, reset, shutting down
    │   ├── ArchiveClosed          the archive writer stopped (shutdown) before the row
    │   └── StorageClosed          the database was closed (shutdown) before this work
    ├── NotFound               an id that does not exist *in this scope*
    │   └── ScopeViolation         an id that belongs to another chat
    ├── NotPermitted           the sender may not run this command here
    ├── ValidationError        input that breaks a rule of the write API
    │   ├── EvidenceRequired       a memory without evidence
    │   ├── UsageError             wrong command arguments
    │   └── PackError              a file that is not a memory pack this yuji can read
    ├── AttachmentError        a fetch was refused (size, type, timeout, transport)
    ├── LLMError               the model could not be reached or answered garbage
    │   ├── LLMUnavailable         no model configured, or transport failure after retries
    │   │   └── LLMToolsUnsupported    the model refuses requests that carry tools
    │   ├── LLMTimeout             the hard per-call timeout expired
    │   ├── LLMRateLimited         429 after every retry
    │   └── LLMBadResponse         unparseable or schema-violating output
    └── BatchError             a consolidation tool call that the batch refuses
        └── StaleBatchRange        a batch planned from a chat's cursor that moved on since

The database layer translates SQLite's errors into these in one place
(`memory_core.storage.failures`); plugins turn them into Chinese replies in one place
(`memory_core.chat.texts.error_text`). `ScopeViolation` is a `NotFound`: another chat's
id is reported to users exactly like an unknown one, and the subclass exists so the
core can tell (and log) the two apart, never so a user learns the id exists.
"""

from __future__ import annotations


class YujiError(Exception):
    """Root of every error memory_core raises on purpose."""


class ConfigError(YujiError):
    pass


class StorageError(YujiError):
    pass


class ConstraintViolation(StorageError):
    pass


class AppendOnlyViolation(ConstraintViolation):
    pass


class StorageBusy(StorageError):
    def __str__(self) -> str:
        return f"database busy: {super().__str__()}"


class StorageFull(StorageError):
    def __str__(self) -> str:
        return f"database full: {super().__str__()}"


class StorageUnavailable(StorageError):
    """The database server cannot be reached now (connection refused or reset, the
    server shutting down or starting up, too many connections): the work may be tried
    again once it is back."""

    def __str__(self) -> str:
        return f"database unreachable: {super().__str__()}"


class ArchiveClosed(StorageError):
    pass


class StorageClosed(StorageError):
    """Work that reached the database after it was closed (a job finishing during
    shutdown): refused, so no connection outlives the engine."""


class NotFound(YujiError):
    pass


class ScopeViolation(NotFound):
    pass


class NotPermitted(YujiError):
    """The sender may not run this command here; the message is the Chinese line to answer."""


class ValidationError(YujiError):
    pass


class EvidenceRequired(ValidationError):
    pass


class UsageError(ValidationError):
    """Wrong command arguments; the message is the Chinese line to answer with."""


class PackError(ValidationError):
    """A file that is not a memory pack this yuji can read."""


class AttachmentError(YujiError):
    pass


class LLMError(YujiError):
    pass


class LLMUnavailable(LLMError):
    pass


class LLMToolsUnsupported(LLMUnavailable):
    """The provider answered a request with `tools` by refusing tool calling itself."""


class LLMTimeout(LLMError):
    pass


class LLMRateLimited(LLMError):
    pass


class LLMBadResponse(LLMError):
    pass


class BatchError(YujiError):
    pass


class StaleBatchRange(BatchError):
    """A batch planned from a chat's cursor read before a batch of that chat was
    acknowledged (in this process or another): the planner plans it again from the new
    cursor at its next pass."""
