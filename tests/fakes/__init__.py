"""Fake upstream services on loopback for tests.

- `tests.fakes.openai_server`: `FakeOpenAIServer` (a real OpenAI-compatible HTTP
  server on 127.0.0.1, scripted with `Reply`), and the `openai_server` fixture. Use it
  in a test module or conftest with `from tests.fakes.openai_server import openai_server`.
- In-process fakes of core seams live beside them in memory_core
  (`memory_core.llm.fake.ScriptedLLM`, `memory_core.ops.alerts.RecordingAlertSink`).
"""

from .openai_server import FakeOpenAIServer as FakeOpenAIServer
from .openai_server import RecordedRequest as RecordedRequest
from .openai_server import Reply as Reply
from .openai_server import openai_server as openai_server

__all__ = ["FakeOpenAIServer", "RecordedRequest", "Reply", "openai_server"]
