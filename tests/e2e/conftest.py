"""Fixtures for end-to-end tests; the harness itself is tests/e2e/harness.py."""

from tests.fakes.file_server import file_server as file_server

__all__ = ["file_server"]
