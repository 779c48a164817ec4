"""SQL expressions that each engine spells its own way (the repositories stay one
statement for both)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import Text, any_, bindparam, cast, func, literal
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, array
from sqlalchemy.sql.elements import ColumnElement


def json_with_key(dialect: str, column: Any, key: str, value: str) -> ColumnElement[Any]:
    """The JSON object held as text in `column` (NULL: an empty one) with `key` set to
    the string `value`, as text."""
    current = func.coalesce(column, literal("{}", Text))
    if dialect == "postgresql":
        return cast(
            func.jsonb_set(
                cast(current, JSONB),
                array([literal(key, Text)]),
                func.to_jsonb(literal(value, Text)),
            ),
            Text,
        )
    return func.json_set(current, f"$.{key}", literal(value, Text))


def utc_hour(dialect: str, column: Any) -> ColumnElement[str]:
    """An instant's UTC hour as "YYYY-MM-DD HH" (SQLite stores instants as UTC text)."""
    if dialect == "postgresql":
        return func.to_char(func.timezone("UTC", column), "YYYY-MM-DD HH24")
    return func.substr(column, 1, 13)


def one_of(dialect: str, column: Any, values: Collection[Any]) -> ColumnElement[bool]:
    """`column IN values`. On PostgreSQL it is `= ANY` of one bound array: the
    statement's text is then the same however many values there are, so the server
    parses and plans it once per connection, where an IN list of each length is a new
    statement of that many parameters to prepare."""
    if dialect == "postgresql":
        return column == any_(bindparam(None, list(values), type_=ARRAY(column.type)))
    return column.in_(values)
