"""One message heard by two of the deployment's accounts is archived once.

OneBot message ids are per account, so `(scope, fingerprint)` cannot see that
account A's message 812 and account B's message 90417 are one message. The rule,
decided inside the archive writer's transaction (writes are serialised across every
process, so two processes never both insert it):

- a live message (one that names its receiving `account`) is a duplicate when a
  message with the same chat, sender, `sent_at` and text was already archived from a
  *different* account of the deployment; the same account hearing two identical
  messages in the same second keeps both (they are two messages);
- our own sends carry the sending process's clock, the copy another account hears
  the server's: for a sender that is one of our accounts `sent_at` may differ by up
  to `OWN_SKEW_S`;
- a message id one account already used for a different message (ids of two
  accounts can collide) is stored as `<id>@<account>`;
- a sender that is one of the deployment's accounts (`bot_accounts`) makes the
  message the bot's own (`is_bot`), whichever account heard it.

With one account (the embedded default) only the last point applies: one small read.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import select, text, true
from sqlalchemy.ext.asyncio import AsyncConnection

from .dialect import one_of
from .schema import bot_accounts, experiences

OWN_SKEW_S = 5.0
CHUNK = 900

Key = tuple[str, str]
_T = TypeVar("_T")


async def heard_once(
    conn: AsyncConnection, rows: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[Key, int], dict[Key, Key]]:
    """The rows to insert; the keys that repeat an archived row (key -> its id); and
    the keys stored under another key (a repeat of a row in this batch, or a
    fingerprint renamed for a collision)."""
    ours = frozenset(str(r[0]) for r in await conn.execute(select(bot_accounts.c.account)))
    for row in rows:
        if row["sender_id"] in ours:
            row["is_bot"] = True
    live = [r for r in rows if r.get("account")]
    if len(ours) < 2 or not live:
        return rows, {}, {}
    nearby, taken = await _archived(conn, live)
    archived = _by_words(nearby)
    batch: dict[Words, list[dict[str, Any]]] = {}
    keep: list[dict[str, Any]] = []
    known: dict[Key, int] = {}
    alias: dict[Key, Key] = {}
    for row in rows:
        key: Key = (row["scope"], row["fingerprint"])
        account = row.get("account")
        if not account:
            keep.append(row)
            continue
        earlier = _same_message(row, archived) or _same_message(row, batch)
        if earlier is not None:
            if "id" in earlier:
                known[key] = int(earlier["id"])
            else:
                alias[key] = (earlier["scope"], earlier["fingerprint"])
            continue
        holder = taken.get(key)
        if holder is not None and holder != account:
            row = {**row, "fingerprint": f"{row['fingerprint']}@{account}"}
            alias[key] = (row["scope"], row["fingerprint"])
        keep.append(row)
        batch.setdefault(_words(row), []).append(row)
    return keep, known, alias


Words = tuple[str, str, str]
"""(chat, sender, text): what two copies of one message share whatever their ids."""


def _words(row: dict[str, Any]) -> Words:
    return (row["scope"], row["sender_id"], row["text"])


def _by_words(rows: Sequence[dict[str, Any]]) -> dict[Words, list[dict[str, Any]]]:
    # A burst can hold thousands of one second's messages: matching through this map
    # keeps a batch's check linear where comparing every pair was quadratic.
    found: dict[Words, list[dict[str, Any]]] = {}
    for row in rows:
        found.setdefault(_words(row), []).append(row)
    return found


def _same_message(
    row: dict[str, Any], others: dict[Words, list[dict[str, Any]]]
) -> dict[str, Any] | None:
    for other in others.get(_words(row), ()):
        if (
            other.get("account")
            and other["account"] != row["account"]
            and _same_instant(row, other)
        ):
            return other
    return None


def _same_instant(row: dict[str, Any], other: dict[str, Any]) -> bool:
    a, b = row["sent_at"], other["sent_at"]
    if row["is_bot"] and other["is_bot"]:
        return abs((a - b).total_seconds()) <= OWN_SKEW_S
    return a == b


async def _archived(
    conn: AsyncConnection, live: Sequence[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[Key, str | None]]:
    """What the archive holds about `live`: rows of other accounts that could be the
    same message as one of them (a superset, `_same_message` decides; one statement for
    a batch of any chats), and the (scope, fingerprint) keys of `live` already taken ->
    the account that heard that row."""
    e = experiences.c
    dialect = conn.dialect.name
    skew = timedelta(seconds=OWN_SKEW_S)
    nearby: list[dict[str, Any]] = []
    for part in _chunks(live, CHUNK // 3):
        instants: list[datetime] = [r["sent_at"] for r in part]
        accounts = {r["account"] for r in part}
        # A copy is another account's: with one account in the batch (a process with
        # one account, the usual case), its own rows are left out first, cheaply, before
        # the lists are compared (a one-second flood puts all of them in the window).
        others = e.account != next(iter(accounts)) if len(accounts) == 1 else true()
        result = await conn.execute(
            select(
                e.id, e.scope, e.fingerprint, e.sender_id, e.sent_at, e.text, e.account, e.is_bot
            ).where(
                one_of(dialect, e.scope, sorted({r["scope"] for r in part})),
                e.sent_at >= min(instants) - skew,
                e.sent_at <= max(instants) + skew,
                e.account.is_not(None),
                others,
                one_of(dialect, e.sender_id, sorted({r["sender_id"] for r in part})),
                one_of(dialect, e.text, sorted({r["text"] for r in part})),
            )
        )
        nearby += [dict(r._mapping) for r in result]  # pyright: ignore[reportPrivateUsage]
    return nearby, await _taken(conn, sorted({(r["scope"], r["fingerprint"]) for r in live}))


async def _taken(conn: AsyncConnection, keys: Sequence[Key]) -> dict[Key, str | None]:
    """Which of these (scope, fingerprint) keys are archived -> the account that
    heard each, found through the unique index on the pair."""
    taken: dict[Key, str | None] = {}
    if conn.dialect.name == "postgresql":
        # One lookup a key, whatever the planner thinks of a young table (an IN list
        # on the second column was read as a filter over the whole chat).
        result = await conn.execute(
            _PG_TAKEN, {"scopes": [k[0] for k in keys], "fingerprints": [k[1] for k in keys]}
        )
        for scope, fingerprint, account in result:
            taken[(str(scope), str(fingerprint))] = None if account is None else str(account)
        return taken
    e = experiences.c
    by_scope: dict[str, list[str]] = {}
    for scope, fingerprint in keys:
        by_scope.setdefault(scope, []).append(fingerprint)
    for scope, fingerprints in by_scope.items():
        for chunk in _chunks(fingerprints):
            result = await conn.execute(
                select(e.fingerprint, e.account).where(e.scope == scope, e.fingerprint.in_(chunk))
            )
            for fingerprint, account in result:
                taken[(scope, str(fingerprint))] = None if account is None else str(account)
    return taken


_PG_TAKEN = text(
    "SELECT e.scope, e.fingerprint, e.account FROM unnest(CAST(:scopes AS text[]), "
    "CAST(:fingerprints AS text[])) AS k(scope, fingerprint) "
    "JOIN experiences AS e ON e.scope = k.scope AND e.fingerprint = k.fingerprint"
)


def _chunks(items: Sequence[_T], size: int = CHUNK) -> list[Sequence[_T]]:
    return [items[i : i + size] for i in range(0, len(items), size)]
