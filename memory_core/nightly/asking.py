"""One validated model call: JSON in the paired schema, in character, or retried cooler.

The prompt's response model goes along as a structured-output schema (the client
picks the mode the provider accepts). A reply that is not JSON, does not fit the prompt's response model, fails the
caller's own check (ids it was not given, quotes it made up), or reads like a refusal
("作为一个AI…") is thrown away and the same prompt is asked again at a lower
temperature, up to `retries` more times. Transport errors are the client's business
(it retries them); they propagate and fail the step, which the run retries later.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Generic, TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from memory_core.errors import ConfigError, LLMBadResponse
from memory_core.llm.base import LLMClient
from memory_core.prompts.nightly import Prompt
from memory_core.prompts.structured import response_schema

T = TypeVar("T", bound=BaseModel)

Check = Callable[[T], str | None]
"""Returns why a schema-valid reply is still unacceptable, or None."""

OOC_HEAD_CHARS = 60
"""A refusal opens the text; matching only the head spares diaries that quote one."""


class InvalidReply(LLMBadResponse):
    """Every attempt came back unusable; `reasons` says why, attempt by attempt."""

    def __init__(self, reasons: Sequence[str]) -> None:
        self.reasons = tuple(reasons)
        super().__init__(
            f"{len(reasons)} unusable replies; last: {reasons[-1] if reasons else '-'}"
        )


@dataclass(frozen=True, slots=True)
class Asked(Generic[T]):
    value: T
    attempts: int
    reasons: tuple[str, ...]
    """Why the earlier attempts were refused (empty when the first one was fine)."""


def temperatures(base: float, retries: int) -> list[float]:
    """`1 + retries` temperatures, starting at `base` and falling evenly to 0."""
    base = max(base, 0.0)
    if retries <= 0:
        return [base]
    return [round(base * (retries - i) / retries, 4) for i in range(retries + 1)]


def extract_json(text: str) -> object:
    """The JSON object in a reply, tolerating a code fence or words around it."""
    stripped = text.strip()
    fenced = re.match(r"^```(?:json)?\s*(.*?)\s*```$", stripped, re.S)
    if fenced:
        stripped = fenced.group(1)
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        start, end = stripped.find("{"), stripped.rfind("}")
        if start == -1 or end <= start:
            raise
        return json.loads(stripped[start : end + 1])


@lru_cache(maxsize=8)
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    try:
        return tuple(re.compile(p) for p in patterns)
    except re.error as exc:
        raise ConfigError(f"bad out-of-character pattern: {exc}") from exc


def string_leaves(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():  # pyright: ignore[reportUnknownVariableType]
            yield from string_leaves(item)
    elif isinstance(value, list):
        for item in value:  # pyright: ignore[reportUnknownVariableType]
            yield from string_leaves(item)


def out_of_character(texts: Iterable[str], patterns: tuple[str, ...]) -> str | None:
    """The first text whose opening reads like a refusal or an AI disclaimer, or None."""
    compiled = _compiled(patterns)
    for text in texts:
        head = text.strip()[:OOC_HEAD_CHARS]
        if any(p.search(head) for p in compiled):
            return head
    return None


def judge(
    raw: str | None, response: type[T], patterns: tuple[str, ...], check: Check[T] | None
) -> T | str:
    """The parsed reply, or why it is refused. Pure."""
    if not raw or not raw.strip():
        return "empty reply"
    try:
        data = extract_json(raw)
    except json.JSONDecodeError:
        ooc = out_of_character([raw], patterns)
        return f"out of character: {ooc}" if ooc else f"not JSON: {raw[:80]!r}"
    ooc = out_of_character(string_leaves(data), patterns)
    if ooc:
        return f"out of character: {ooc}"
    try:
        value = response.model_validate(data)
    except PydanticValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"schema: {where}: {first['msg']}"
    problem = check(value) if check else None
    return f"check: {problem}" if problem else value


async def ask(
    llm: LLMClient,
    prompt: Prompt[T],
    *,
    base_temperature: float,
    retries: int,
    ooc_patterns: tuple[str, ...],
    check: Check[T] | None = None,
    scope: str | None = None,
) -> Asked[T]:
    """Ask until a reply passes `judge`, cooling down each time; else InvalidReply."""
    reasons: list[str] = []
    schema = response_schema(prompt.response)
    for attempt, temperature in enumerate(temperatures(base_temperature, retries), start=1):
        try:
            reply = await llm.chat(
                list(prompt.messages), temperature=temperature, schema=schema, scope=scope
            )
        except LLMBadResponse as exc:
            reasons.append(f"bad response: {exc}")
            continue
        verdict = judge(reply.message.content, prompt.response, ooc_patterns, check)
        if isinstance(verdict, str):
            reasons.append(verdict)
            continue
        return Asked(verdict, attempt, tuple(reasons))
    raise InvalidReply(reasons)
