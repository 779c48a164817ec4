"""A prompt's response model as the schema of a structured-output request (pure).

OpenAI's strict `json_schema` mode accepts a subset of JSON Schema: every object
closed (`additionalProperties: false`) and listing every property as required, no
`default`, no string length bounds. `strict_schema` rewrites pydantic's schema into
that subset; nothing is lost, because the reply is still validated against the
pydantic model itself (which keeps the bounds and fills the defaults).
"""

from __future__ import annotations

from typing import Any, cast

from pydantic import BaseModel

from memory_core.llm.base import ResponseSchema

_DROPPED = frozenset({"default", "minLength", "maxLength"})


def response_schema(model: type[BaseModel]) -> ResponseSchema:
    return ResponseSchema(name=model.__name__, schema=strict_schema(model.model_json_schema()))


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    return cast(dict[str, Any], _strict(schema))


def _strict(node: Any) -> Any:
    if isinstance(node, list):
        return [_strict(item) for item in cast(list[Any], node)]
    if not isinstance(node, dict):
        return node
    items = cast(dict[str, Any], node)
    out: dict[str, Any] = {k: _strict(v) for k, v in items.items() if k not in _DROPPED}
    if out.get("type") == "object" or "properties" in out:
        properties = cast(dict[str, Any], out.get("properties", {}))
        out["properties"] = properties
        out["required"] = list(properties)
        out["additionalProperties"] = False
    return out
