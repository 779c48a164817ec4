"""The one error tree of memory_core.

    YujiError
    ├── ConfigError            a setting is missing or malformed
    ├── StorageError           the database refused or failed an operation
    │   ├── AppendOnlyViolation    an UPDATE/DELETE on archived experience content
    │   ├── StorageBusy            another process held the write lock past the bound
    │   ├── StorageFull            the disk (or the database's page limit) is full
    │   └── ArchiveClosed          the archive writer stopped (shutdown) before the row
    ├── NotFound               an id that does not exist *in this scope*
    ├── ScopeViolation         an id or scope that belongs to another chat
    ├── ValidationError        input that breaks a rule of the write API
    │   └── EvidenceRequired       a memory without evidence
    ├── AttachmentError        a fetch was refused (size, type, timeout, transport)
    ├── LLMError               the model could not be reached or answered garbage
    │   ├── LLMUnavailable         no model configured, or transport failure after retries
    │   │   └── LLMToolsUnsupported    the model refuses requests that carry tools
    │   ├── LLMTimeout             the hard per-call timeout expired
    │   ├── LLMRateLimited         429 after every retry
    │   └── LLMBadResponse         unparseable or schema-violating output
    └── BatchError             a consolidation tool call that the batch refuses

Repositories translate database errors into these; plugins turn them into Chinese
replies in one place. Note that another chat's id is reported to users as NotFound:
ScopeViolation exists so the core can log it, never so a user learns the id exists.
"""

from __future__ import annotations


class YujiError(Exception):
    """Root of every error memory_core raises on purpose."""


class ConfigError(YujiError):
    pass


class StorageError(YujiError):
    pass


class AppendOnlyViolation(StorageError):
    pass


class StorageBusy(StorageError):
    def __str__(self) -> str:
        return f"database busy: {super().__str__()}"


class StorageFull(StorageError):
    def __str__(self) -> str:
        return f"database full: {super().__str__()}"


class ArchiveClosed(StorageError):
    pass


class NotFound(YujiError):
    pass


class ScopeViolation(YujiError):
    pass


class ValidationError(YujiError):
    pass


class EvidenceRequired(ValidationError):
    pass


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
